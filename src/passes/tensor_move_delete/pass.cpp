// TensorMoveDeletePass: The fixpoint driver: TensorMoves in topological order, decide (the design,
// then the extensions), the deletion, re-queueing, remarks.
#include "passes/tensor_move_delete/deleter.h"

#include "ir/op_library.h"
#include "ir/printer.h"

#include <algorithm>
#include <functional>
#include <set>
#include <string>

namespace graphvet::tmd {

OrderIndex &TensorMoveDeleter::order(GraphId g) {
  if (!orders_[g]) {
    if (topo_.size() <= g || !topo_[g])
      orders_[g] = std::make_unique<OrderIndex>(m_.graph(g), stableTopoOrder(m_.graph(g)));
    else
      orders_[g] = std::make_unique<OrderIndex>(m_.graph(g), topo_[g]);
  }
  return *orders_[g];
}

std::vector<NodeRef> TensorMoveDeleter::tensorMovesInOrder() {
  // Depth-first over the graph nesting: a subgraph's nodes take the place of
  // the node holding it, so "topological order" spans the whole module.
  std::vector<NodeRef> out;
  topo_.assign(m_.numGraphs(), std::nullopt);
  std::vector<bool> seen(m_.numGraphs(), false);
  // Per graph only the nodes that matter here: TensorMoves and holders of
  // subgraphs, picked out while the order is computed (one scan per graph).
  struct Frame {
    GraphId g;
    std::vector<NodeId> nodes;
    size_t next = 0;
  };
  std::vector<Frame> stack;
  auto enter = [&](GraphId g) {
    if (g >= m_.numGraphs() || seen[g] || !m_.graph(g).alive)
      return;
    seen[g] = true;
    std::vector<NodeId> picked;
    topo_[g] = stableTopoOrder(
        m_.graph(g), [](const Node &n) { return isTensorMove(n) || !n.subgraphs.empty(); }, picked);
    stack.push_back({g, std::move(picked), 0});
  };
  if (m_.numGraphs() > 0)
    enter(0);
  while (!stack.empty()) {
    Frame &f = stack.back();
    if (f.next == f.nodes.size()) {
      stack.pop_back();
      continue;
    }
    GraphId g = f.g;
    const Node &n = m_.graph(g).node(f.nodes[f.next++]);
    if (isTensorMove(n))
      out.push_back({g, n.id});
    for (auto it = n.subgraphs.rbegin(); it != n.subgraphs.rend(); ++it)
      enter(*it); // pushed in reverse: the first subgraph runs first
  }
  return out;
}

bool TensorMoveDeleter::reaches(GraphId g, NodeId from, NodeId to) {
  if (opts_.naiveReachability)
    return from != to && m_.graph(g).reaches(from, to);
  return order(g).reaches(from, to);
}

bool TensorMoveDeleter::addCtrlEdge(GraphId g, NodeId from, NodeId to, bool *added) {
  if (!opts_.naiveReachability)
    return order(g).addCtrlEdge(from, to, added);
  // OrderIndex::addCtrlEdge's contract, with a whole-graph cycle check.
  *added = false;
  Graph &graph = m_.graph(g);
  if (from == to)
    return false;
  if (graph.hasCtrlEdge(from, to))
    return true;
  if (graph.reaches(to, from))
    return false;
  graph.addCtrlEdge(from, to);
  *added = true;
  return true;
}

std::string TensorMoveDeleter::name(GraphId g, NodeId n) const {
  const std::string &node = formatName(m_.graph(g).node(n).name);
  if (g == 0)
    return node;
  return formatName(m_.graph(g).name) + "/" + node;
}

std::string TensorMoveDeleter::sourceName(const SourceTrace &t) const {
  const TraceStep &src = t.steps.back();
  std::string s = name(src.graph, src.port.node);
  if (m_.graph(src.graph).node(src.port.node).numOutputs > 1)
    s += ":" + std::to_string(src.port.index);
  return s;
}

std::string TensorMoveDeleter::describeSource(const SourceTrace &t) const {
  std::string s = "source " + sourceName(t);
  switch (t.kind) {
  case SourceKind::UserInput:
    s += " (user input " + std::to_string(t.userInput) + ")";
    break;
  case SourceKind::Variable:
    s += " (variable)";
    break;
  case SourceKind::VariableRef:
    s += " (variable reference)";
    break;
  case SourceKind::Weight:
    s += " (weight)";
    break;
  default:
    break;
  }
  if (t.steps.size() > 1) {
    std::vector<std::string> via;
    for (size_t i = 0; i + 1 < t.steps.size(); ++i) {
      const TraceStep &step = t.steps[i];
      via.push_back(describe(step.graph, step.port.node));
      if (m_.graph(step.graph).node(step.port.node).numOutputs > 1)
        via.back().append(":").append(std::to_string(step.port.index));
    }
    s += " via " + joinLimited(via, 8);
  }
  return s;
}

const BufferUses &TensorMoveDeleter::tensorMoveUses(NodeRef t) {
  if (!tmUses_) {
    std::vector<SlotRef> slots = consumerSlots(m_, {t.graph, {t.node, 0}});
    tmUses_ = exploreUses(m_, index_, slots, opts_.analysisBudget, nullptr,
                          /*whileResultsCopied=*/preciseWhileResults_);
  }
  return *tmUses_;
}

Verdict TensorMoveDeleter::decide(NodeRef t) {
  tmUses_.reset();
  preciseWhileResults_ = false;
  Verdict v = decideByDesign(t);
  if (opts_.conservative || v.outcome != Outcome::Keep)
    return v;
  // Keeps that no extension may lift: the TensorMove is not a plain copy,
  // or the graph is broken. (Of the traces without a source, the
  // extensions take only one that ends at a buffer of its own reading zero
  // bytes: unconnectedOwnBuffer.)
  static const std::set<std::string, std::less<>> kFinal = {
      "malformed-tensor-move", "variable-bound-copy", "cyclic-graph", "tensor-desc-mismatch"};
  if (kFinal.count(v.rule))
    return v;
  // The extensions see that a While copies its results into its loop
  // variables: a copy returned by a cond or body goes nowhere else.
  tmUses_.reset();
  preciseWhileResults_ = true;
  if (auto ext = tryReadOnlyMemory(t, v))
    return *ext;
  return v;
}

TensorMoveDeleter::TensorMoveState *TensorMoveDeleter::stateOf(NodeRef t) {
  if (t.graph >= ordinal_.size() || t.node >= ordinal_[t.graph].size())
    return nullptr;
  uint32_t i = ordinal_[t.graph][t.node];
  return i == UINT32_MAX ? nullptr : &state_[i];
}

void TensorMoveDeleter::forgetKept(NodeRef t) {
  TensorMoveState *st = stateOf(t);
  if (!st || !st->keptPort)
    return;
  auto set = keptByPort_.find(*st->keptPort);
  set->second.erase(t);
  if (set->second.empty())
    keptByPort_.erase(set);
  st->keptPort.reset();
}

void TensorMoveDeleter::requeueNeighbours(NodeRef t, OutPort producer,
                                          const std::vector<InPort> &consumers,
                                          const std::vector<NodeId> &ctrlNeighbours) {
  std::vector<NodeRef> candidates;
  candidates.push_back({t.graph, producer.node});
  for (NodeId n : ctrlNeighbours)
    candidates.push_back({t.graph, n});
  // Kept copies of the same producer output (their siblings changed), and
  // of the deleted TensorMove's output (now reading the producer).
  for (PortRef port : {PortRef{t.graph, producer}, PortRef{t.graph, {t.node, 0}}})
    if (auto it = keptByPort_.find(port); it != keptByPort_.end())
      candidates.insert(candidates.end(), it->second.begin(), it->second.end());
  // A producer whose output nobody reads any more stops passing the memory
  // of its inputs on: kept copies beside it (it is their sibling) may go.
  // (Extensions only: conservative mode keeps the design's fixpoint as is.)
  const Graph &graph = m_.graph(t.graph);
  if (!opts_.conservative && graph.node(producer.node).alive && graph.consumers(producer).empty())
    for (const auto &in : graph.node(producer.node).inputs)
      if (in)
        if (auto it = keptByPort_.find(PortRef{t.graph, *in}); it != keptByPort_.end())
          candidates.insert(candidates.end(), it->second.begin(), it->second.end());
  // The copy's memory now is the producer's buffer: a kept copy that buffer
  // comes from (through views and subgraph boundaries) has new uses, e.g.
  // a continuous-input op whose inputs are now all one buffer.
  if (!opts_.conservative) {
    SourceTrace up = traceSource(m_, index_, t.graph, producer, maxTraceSteps_);
    if (!up.steps.empty())
      candidates.push_back({up.steps.back().graph, up.steps.back().port.node});
    // ...and the kept copies of that buffer beside the views on the way
    // (they feed the same continuous-input ops, say)...
    for (const TraceStep &step : up.steps)
      if (auto it = keptByPort_.find(PortRef{step.graph, step.port}); it != keptByPort_.end())
        candidates.insert(candidates.end(), it->second.begin(), it->second.end());
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
          for (NodeId d : index_.dataForParentInput(sub, uint32_t(*p)))
            if (auto it = keptByPort_.find(PortRef{sub, {d, 0}}); it != keptByPort_.end())
              candidates.insert(candidates.end(), it->second.begin(), it->second.end());
    }
    // ...through control flow too (a branch Data is its holder's input).
    if (up.kind == SourceKind::ControlFlow)
      if (auto ends = resolveControlFlow(up, /*allBindings=*/false, /*followLoops=*/true))
        for (const SourceTrace &end : *ends)
          if (!end.steps.empty())
            candidates.push_back({end.steps.back().graph, end.steps.back().port.node});
  }
  // A deletion in a While's body can make a result the loop variable itself,
  // which the While then no longer writes back (effectiveWriters): the kept
  // copies its inputs come from may go.
  if (!opts_.conservative && graph.parentNode != kNoNode && graph.parentGraph != kNoGraph) {
    const Node &holder = m_.graph(graph.parentGraph).node(graph.parentNode);
    bool resultChanged = false;
    for (InPort c : consumers)
      resultChanged = resultChanged || opKind(graph.node(c.node)) == OpKind::NetOutput;
    if (opKind(holder) == OpKind::While && resultChanged)
      loopResultsChanged_ = true;
    if (opKind(holder) == OpKind::While)
      for (const auto &in : holder.inputs)
        if (in) {
          SourceTrace up = traceSource(m_, index_, graph.parentGraph, *in, maxTraceSteps_);
          if (!up.steps.empty())
            candidates.push_back({up.steps.back().graph, up.steps.back().port.node});
          // ...and the kept copies beside the While or the views it reads
          // through (it is their sibling, or a sibling's consumer).
          for (const TraceStep &step : up.steps)
            if (auto it = keptByPort_.find(PortRef{step.graph, step.port}); it != keptByPort_.end())
              candidates.insert(candidates.end(), it->second.begin(), it->second.end());
        }
  }
  // A subgraph result nobody reads any more needs no ordering outside the
  // holder (orderBefore): the kept copies that are that result may go.
  if (!opts_.conservative && graph.node(producer.node).alive &&
      holdsSubgraphs(graph.node(producer.node)) && graph.consumers(producer).empty())
    for (GraphId sub : graph.node(producer.node).subgraphs) {
      NodeId out = index_.netOutput(sub);
      if (out == kNoNode)
        continue;
      for (uint32_t slot : index_.resultSlots(sub, producer.index)) {
        const Node &netOut = m_.graph(sub).node(out);
        if (slot >= netOut.inputs.size() || !netOut.inputs[slot])
          continue;
        SourceTrace tr = traceSource(m_, index_, sub, *netOut.inputs[slot], maxTraceSteps_);
        if (!tr.steps.empty())
          candidates.push_back({tr.steps.back().graph, tr.steps.back().port.node});
      }
    }
  // TensorMoves whose trace ran into the deleted one through views or
  // subgraph boundaries now trace further. (Relinking kept each consumer's
  // slot, so the former consumer slots now read the producer.)
  std::vector<SlotRef> slots;
  for (InPort in : consumers)
    slots.push_back({t.graph, in});
  std::vector<SlotRef> reached;
  exploreUses(m_, index_, slots, opts_.analysisBudget, &reached);
  for (const SlotRef &s : reached)
    candidates.push_back({s.graph, s.slot.node});
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

TensorMoveDeleteStats TensorMoveDeleter::run(std::vector<Remark> *remarks) {
  std::vector<NodeRef> all = tensorMovesInOrder();
  stats_.tensorMoves = static_cast<int64_t>(all.size());
  state_.assign(all.size(), TensorMoveState{});
  ordinal_.assign(m_.numGraphs(), {});
  for (uint32_t i = 0; i < all.size(); ++i) {
    auto &ids = ordinal_[all[i].graph];
    if (ids.empty())
      ids.assign(m_.graph(all[i].graph).capacity(), UINT32_MAX);
    ids[all[i].node] = i;
    queue_.push_back(all[i]);
    state_[i].queued = true;
  }
  // One remark per TensorMove: a re-decision replaces the earlier one and
  // moves it to the end (remarks come out in the order of final decisions).
  std::vector<std::optional<Remark>> log;
  log.reserve(all.size());

  // Deletions since the kept copies were last all decided (extensions).
  size_t deletedSinceSweep = 0;
  for (;;) {
    while (!queue_.empty()) {
      NodeRef t = queue_.front();
      queue_.pop_front();
      TensorMoveState &st = *stateOf(t);
      st.queued = false;
      Graph &g = m_.graph(t.graph);
      if (!g.node(t.node).alive)
        continue;
      ++st.visits;
      forgetKept(t);
      Remark remark;
      remark.pass = std::string(kTensorMoveDeleteName);
      remark.node = g.node(t.node).name;
      remark.graph = g.name;
      remark.loc = g.node(t.node).loc;
      std::string tmName = name(t.graph, t.node);

      Verdict v = decide(t);
      for (int attempt = 0; attempt < 2; ++attempt) {
        if (v.outcome != Outcome::Delete)
          break;
        OutPort producer = *g.node(t.node).inputs[0];
        std::vector<InPort> consumers = g.node(t.node).consumers[0];
        std::vector<NodeId> ctrlNeighbours = g.node(t.node).ctrlIn;
        for (NodeId n : g.node(t.node).ctrlOut)
          ctrlNeighbours.push_back(n);
        std::vector<std::string> added, moved;
        std::string source = describeSource(v.trace);
        std::string rule = v.rule;
        std::string lifted = v.reason; // for an extension: the rule that kept it
        std::vector<SourceTrace> ends = v.ends.empty() ? std::vector<SourceTrace>{v.trace} : v.ends;
        BufferUses copyUses = tensorMoveUses(t);
        bool fromExtension = v.looseSuccessors;
        bool resizing = false; // deleted because its readers ignore the resize
        if (!opts_.conservative && !v.trace.steps.empty()) {
          const TraceStep &e = v.trace.steps.back();
          resizing = outputBytes(g.node(t.node), 0) !=
                     (v.trace.kind == SourceKind::ControlFlow
                          ? realBytes(v.trace)
                          : outputBytes(m_.graph(e.graph).node(e.port.node), e.port.index));
        }
        if (apply(t, v, added, moved)) {
          noteMerge(ends, copyUses);
          std::string msg = "deleted " + tmName + " (" + source;
          if (!lifted.empty()) // an extension that lifted a rule's keep
            msg +=
                (rule == "ext-readers-before-writers"
                     ? "; later writers of the source follow every reader of the copy"
                 : rule == "ext-written-copy"
                     ? "; nothing else needs the source once the copy's writes begin"
                 : rule == "ext-loop-write-back"
                     ? "; the body returns it as the loop variable it copies"
                 : rule == "ext-loop-overwritten"
                     ? "; the body overwrites the loop variable it copies at its end"
                 : rule == "ext-loop-mirror"
                     ? "; the source's only later writer is a loop that keeps the copy equal to it"
                 : rule == "ext-dead-loop-pair" ? "; a loop that reads neither writes both last"
                 : rule == "ext-scribbled-pair"
                     ? "; its only writer scribbles the source too, after every access of "
                       "the one whose scribble is lost"
                     : "; nothing writes the source after the copy, nor the copy") +
                std::string(" (the design keeps it: ") + lifted + ")";
          if (resizing)
            msg += "; it resizes, but each reader takes only bytes it keeps";
          if (!added.empty())
            msg += "; added ctrl " + joinLimited(added, 4);
          if (!moved.empty())
            msg += "; moved ctrl " + joinLimited(moved, 4);
          msg += ")";
          remark.decision = "deleted";
          remark.rule = rule;
          remark.message = msg;
          requeueNeighbours(t, producer, consumers, ctrlNeighbours);
          ++deletedSinceSweep;
          break;
        }
        // The surgery was refused (v now keeps): a design verdict whose
        // control successors cannot follow the consumers may still be an
        // extension's, which needs no such edge where it would close a cycle.
        if (attempt > 0 || fromExtension || opts_.conservative || v.rule != "ctrl-order-cycle")
          break;
        tmUses_.reset();
        std::optional<Verdict> ext = tryReadOnlyMemory(t, v);
        if (!ext)
          break;
        v = std::move(*ext);
      }
      if (v.outcome != Outcome::Delete) {
        remark.decision = v.outcome == Outcome::Skip ? "skipped" : "kept";
        remark.rule = v.rule;
        remark.message = remark.decision + " " + tmName + ": " + v.reason;
      }
      st.decided = true;
      st.outcome = remark.decision == "deleted"   ? Outcome::Delete
                   : remark.decision == "skipped" ? Outcome::Skip
                                                  : Outcome::Keep;
      if (st.outcome == Outcome::Skip)
        st.skipped = true;
      if (st.outcome == Outcome::Keep && g.node(t.node).inputs.size() == 1 &&
          g.node(t.node).inputs[0]) {
        PortRef port{t.graph, *g.node(t.node).inputs[0]};
        keptByPort_[port].insert(t);
        st.keptPort = port;
      }
      // A re-visit that reaches the same conclusion keeps the remark where it
      // was; a changed decision moves to the end (the order of final decisions).
      if (st.logIndex != SIZE_MAX) {
        if (log[st.logIndex]->message == remark.message)
          continue;
        log[st.logIndex].reset();
      }
      st.logIndex = log.size();
      log.push_back(std::move(remark));
    }
    // A While body's result became its loop variable (loopResultsChanged_),
    // or, with the extensions, some copy went since the kept ones were last
    // all decided: decide them once more, so that the result is a fixpoint
    // (a second run changes nothing). The extensions see one buffer through
    // views, ref outputs and control flow, so a deletion can lift a keep far
    // from its neighbours (requeueNeighbours covers the near ones; found by
    // PassProps.ASecondRunChangesNothing, RC seeds 320, 327, 352, 378).
    // Bounded: each decision spends one of a copy's visits, and a sweep
    // that deletes nothing ends the loop.
    bool sweep = loopResultsChanged_ || (!opts_.conservative && deletedSinceSweep > 0);
    if (!sweep)
      break;
    loopResultsChanged_ = false;
    deletedSinceSweep = 0;
    // Facts cached per buffer only grow with merges; a merge can also make
    // a continuous-input op exempt (all inputs one buffer now), which only a
    // fresh look sees. Deadness, too, only grows (a result may lose its
    // last consumer).
    facts_.clear();
    if (!opts_.conservative)
      dead_.clear();
    for (NodeRef t : all) {
      TensorMoveState *st = stateOf(t);
      if (!m_.graph(t.graph).node(t.node).alive || !st || !st->decided || st->queued ||
          st->skipped || st->outcome != Outcome::Keep || st->visits >= opts_.maxVisitsPerTensorMove)
        continue;
      queue_.push_back(t);
      st->queued = true;
    }
  }
  for (const TensorMoveState &st : state_) {
    if (!st.decided)
      continue;
    if (st.outcome == Outcome::Delete)
      ++stats_.deleted;
    else if (st.outcome == Outcome::Skip)
      ++stats_.skipped;
  }
  stats_.kept = stats_.tensorMoves - stats_.deleted;
  if (remarks) {
    remarks->reserve(remarks->size() + log.size());
    for (auto &r : log)
      if (r)
        remarks->push_back(std::move(*r));
  }
  return stats_;
}

} // namespace graphvet::tmd

namespace graphvet {

TensorMoveDeleteStats runTensorMoveDelete(Module &m, const TensorMoveDeleteOptions &options,
                                          std::vector<Remark> *remarks) {
  if (m.numGraphs() == 0)
    return {};
  tmd::TensorMoveDeleter pass(m, options);
  return pass.run(remarks);
}

} // namespace graphvet
