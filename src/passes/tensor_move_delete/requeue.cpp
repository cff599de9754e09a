// TensorMoveDeletePass: after a deletion, the kept TensorMoves around it are
// decided again (docs/passes/tensor-move-delete.md, "Order of work" and
// "Refused surgery and re-visits"). The candidates are gathered in a fixed
// order -- the order they are queued in, which decides the order of the
// remarks.
#include "passes/tensor_move_delete/pass.h"

#include "ir/op_library.h"

namespace graphvet::tmd {

void Pass::addKeptAt(PortRef port, std::vector<NodeRef> &candidates) const {
  if (auto it = keptByPort_.find(port); it != keptByPort_.end())
    candidates.insert(candidates.end(), it->second.begin(), it->second.end());
}

void Pass::requeueNeighbours(NodeRef t, OutPort producer, const std::vector<InPort> &consumers,
                             const std::vector<NodeId> &ctrlNeighbours) {
  std::vector<NodeRef> candidates;
  candidates.push_back({t.graph, producer.node});
  for (NodeId n : ctrlNeighbours)
    candidates.push_back({t.graph, n});
  // Kept copies of the same producer output (their siblings changed), and
  // of the deleted TensorMove's output (now reading the producer).
  for (PortRef port : {PortRef{t.graph, producer}, PortRef{t.graph, {t.node, 0}}})
    addKeptAt(port, candidates);
  // A producer whose output nobody reads any more stops passing the memory
  // of its inputs on: kept copies beside it (it is their sibling) may go.
  // (Extensions only: conservative mode keeps the design's fixpoint as is.)
  const Graph &graph = m_.graph(t.graph);
  if (!opts_.conservative && graph.node(producer.node).alive && graph.consumers(producer).empty())
    for (const auto &in : graph.node(producer.node).inputs)
      if (in)
        addKeptAt(PortRef{t.graph, *in}, candidates);
  if (!opts_.conservative)
    upstreamCandidates(t, producer, candidates);
  loopCandidates(t, consumers, candidates);
  resultCandidates(t, producer, candidates);
  // TensorMoves whose trace ran into the deleted one through views or
  // subgraph boundaries now trace further. (Relinking kept each consumer's
  // slot, so the former consumer slots now read the producer.)
  std::vector<SlotRef> slots;
  for (InPort in : consumers)
    slots.push_back({t.graph, in});
  std::vector<SlotRef> reached;
  a_.explore(slots, &reached);
  for (const SlotRef &s : reached)
    candidates.push_back({s.graph, s.slot.node});
  enqueue(candidates);
}

void Pass::upstreamCandidates(NodeRef t, OutPort producer, std::vector<NodeRef> &candidates) {
  // The copy's memory now is the producer's buffer: a kept copy that buffer
  // comes from (through views and subgraph boundaries) has new uses, e.g.
  // a continuous-input op whose inputs are now all one buffer.
  SourceTrace up = a_.trace(t.graph, producer);
  if (!up.steps.empty())
    candidates.push_back({up.steps.back().graph, up.steps.back().port.node});
  // ...and the kept copies of that buffer beside the views on the way
  // (they feed the same continuous-input ops, say)...
  for (const TraceStep &step : up.steps)
    addKeptAt(PortRef{step.graph, step.port}, candidates);
  // ...the kept copies of the other Data bound to the same holder input
  // (the other branches, a loop's cond and body)...
  if (up.kind == SourceKind::ControlFlow && !up.steps.empty()) {
    const TraceStep &end = up.steps.back();
    const Graph &eg = m_.graph(end.graph);
    const Node &data = eg.node(end.port.node);
    auto p = data.intAttr("_parent_node_index");
    if (opKind(data) == OpKind::DataSource && p && *p >= 0 && eg.parentNode != kNoNode &&
        eg.parentGraph != kNoGraph)
      for (GraphId sub : m_.graph(eg.parentGraph).node(eg.parentNode).subgraphs)
        for (NodeId d : a_.index().dataForParentInput(sub, uint32_t(*p)))
          addKeptAt(PortRef{sub, {d, 0}}, candidates);
  }
  // ...through control flow too (a branch Data is its holder's input).
  if (up.kind == SourceKind::ControlFlow)
    if (auto ends = a_.resolveControlFlow(up, /*allBindings=*/false, /*followLoops=*/true))
      for (const SourceTrace &end : *ends)
        if (!end.steps.empty())
          candidates.push_back({end.steps.back().graph, end.steps.back().port.node});
}

void Pass::loopCandidates(NodeRef t, const std::vector<InPort> &consumers,
                          std::vector<NodeRef> &candidates) {
  // A deletion in a While's body can make a result the loop variable itself,
  // which the While then no longer writes back (effectiveWriters): the kept
  // copies its inputs come from may go.
  const Graph &graph = m_.graph(t.graph);
  if (opts_.conservative || graph.parentNode == kNoNode || graph.parentGraph == kNoGraph)
    return;
  const Node &holder = m_.graph(graph.parentGraph).node(graph.parentNode);
  bool resultChanged = false;
  for (InPort c : consumers)
    resultChanged = resultChanged || opKind(graph.node(c.node)) == OpKind::NetOutput;
  if (opKind(holder) == OpKind::While && resultChanged)
    loopResultsChanged_ = true;
  if (opKind(holder) != OpKind::While)
    return;
  for (const auto &in : holder.inputs)
    if (in) {
      SourceTrace up = a_.trace(graph.parentGraph, *in);
      if (!up.steps.empty())
        candidates.push_back({up.steps.back().graph, up.steps.back().port.node});
      // ...and the kept copies beside the While or the views it reads
      // through (it is their sibling, or a sibling's consumer).
      for (const TraceStep &step : up.steps)
        addKeptAt(PortRef{step.graph, step.port}, candidates);
    }
}

void Pass::resultCandidates(NodeRef t, OutPort producer, std::vector<NodeRef> &candidates) {
  // A subgraph result nobody reads any more needs no ordering outside the
  // holder (orderBefore): the kept copies that are that result may go.
  const Graph &graph = m_.graph(t.graph);
  if (opts_.conservative || !graph.node(producer.node).alive ||
      !holdsSubgraphs(graph.node(producer.node)) || !graph.consumers(producer).empty())
    return;
  for (GraphId sub : graph.node(producer.node).subgraphs) {
    NodeId out = a_.index().netOutput(sub);
    if (out == kNoNode)
      continue;
    for (uint32_t slot : a_.index().resultSlots(sub, producer.index)) {
      const Node &netOut = m_.graph(sub).node(out);
      if (slot >= netOut.inputs.size() || !netOut.inputs[slot])
        continue;
      SourceTrace tr = a_.trace(sub, *netOut.inputs[slot]);
      if (!tr.steps.empty())
        candidates.push_back({tr.steps.back().graph, tr.steps.back().port.node});
    }
  }
}

void Pass::enqueue(const std::vector<NodeRef> &candidates) {
  for (const NodeRef &c : candidates) {
    const Node &n = m_.graph(c.graph).node(c.node);
    if (!n.alive || !isTensorMove(n))
      continue;
    TensorMoveState *st = stateOf(c);
    if (!st || st->queued || st->skipped)
      continue;
    if (st->visits == 0)
      continue; // not decided yet: already queued
    if (st->visits >= opts_.maxVisitsPerTensorMove) {
      forgetKept(c); // out of visits: never a candidate again
      continue;
    }
    queue_.push_back(c);
    st->queued = true;
  }
}

Pass::TensorMoveState *Pass::stateOf(NodeRef t) {
  if (t.graph >= ordinal_.size() || t.node >= ordinal_[t.graph].size())
    return nullptr;
  uint32_t i = ordinal_[t.graph][t.node];
  return i == UINT32_MAX ? nullptr : &state_[i];
}

void Pass::forgetKept(NodeRef t) {
  TensorMoveState *st = stateOf(t);
  if (!st || !st->keptPort)
    return;
  auto set = keptByPort_.find(*st->keptPort);
  set->second.erase(t);
  if (set->second.empty())
    keptByPort_.erase(set);
  st->keptPort.reset();
}

} // namespace graphvet::tmd
