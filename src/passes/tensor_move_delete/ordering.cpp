// TensorMoveDeletePass: the analysis's ordering questions (analysis.h): who
// runs before whom, through control edges, data edges between non-calls,
// calls that order their ends and control flow that runs as one step; and
// whether anything a node computes can be observed.
#include "passes/tensor_move_delete/analysis.h"

#include "ir/op_library.h"

#include <algorithm>

namespace graphvet::tmd {
namespace {

constexpr size_t kMaxDepth = 64;        // nesting followed per side (cost bound)
constexpr size_t kMaxOrderSearch = 128; // nodes visited per path question (cost bound)
constexpr size_t kMaxDeadSearch = 256;  // nodes examined per deadness question (cost bound)

/// A node that may be dead (isDead): an ordinary op or a copy that writes
/// nothing in place (no ref output, scribble or variable binding).
bool deadCandidate(const Node &node) {
  OpKind k = opKind(node);
  if ((k != OpKind::Ordinary && k != OpKind::Copy) || isInputMutable(node) ||
      !refWrittenInputs(node).empty())
    return false;
  for (uint32_t out = 0; out < node.numOutputs; ++out)
    if (refVarSrcName(node, out))
      return false;
  return true;
}

/// Some node inside call `call` (at any depth) produces its output `j`: the
/// body's result for j is connected, to a node of the body or to an output
/// of a nested call that is produced in turn. A data edge out of output j
/// orders that producer before the consumer (semantics.md §2), so a control
/// edge into the call orders the consumer too; an unconnected or unmapped
/// result orders nothing (found by the campaign:
/// fuzz/regressions/tensor_move_delete_fuzzer/written-copy-ordered-through-empty-call.graph).
bool callResultProduced(const Module &m, const ModuleIndex &index, const Node &call, uint32_t j) {
  const Node *c = &call;
  for (size_t depth = 0; depth < kMaxDepth; ++depth) {
    if (c->subgraphs.size() != 1)
      return false;
    GraphId sub = c->subgraphs[0];
    const Graph &body = m.graph(sub);
    NodeId out = index.netOutput(sub);
    if (out == kNoNode)
      return false;
    const Node &ret = body.node(out);
    std::optional<OutPort> producer;
    for (uint32_t k : index.resultSlots(sub, j))
      if (k < ret.inputs.size() && ret.inputs[k]) {
        producer = ret.inputs[k];
        break;
      }
    if (!producer)
      return false;
    const Node &p = body.node(producer->node);
    if (opKind(p) != OpKind::Call)
      return true;
    c = &p;
    j = producer->index;
  }
  return false;
}

/// A result of a call, If or Case for an output nobody consumes goes
/// nowhere (a While's result is written back; a root one is observed).
bool isUnusedResult(const Module &m, const Graph &g, InPort c) {
  const Node &out = g.node(c.node);
  if (opKind(out) != OpKind::NetOutput || g.parentNode == kNoNode || g.parentGraph == kNoGraph)
    return false;
  const Node &holder = m.graph(g.parentGraph).node(g.parentNode);
  OpKind hk = opKind(holder);
  if (hk != OpKind::Call && hk != OpKind::If && hk != OpKind::Case)
    return false;
  auto j = out.portIntAttr(false, c.index, "_parent_node_index");
  return !j || *j < 0 || *j >= int64_t(holder.numOutputs) || holder.consumers[size_t(*j)].empty();
}

} // namespace

bool directlyOrdered(const Graph &g, NodeId from, NodeId to) {
  if (g.hasCtrlEdge(from, to))
    return true;
  if (opKind(g.node(from)) == OpKind::Call || opKind(g.node(to)) == OpKind::Call)
    return false;
  for (const auto &in : g.node(to).inputs)
    if (in && in->node == from)
      return true;
  return false;
}

bool Analysis::orderedWithoutCalls(GraphId g, NodeId from, NodeId to) {
  // A path may pass through a call only where the call orders its ends
  // (semantics.md §2): entered by a control edge, every node inside follows,
  // so any edge out of it (control, or data from a result's producer inside)
  // continues the order; entered by a data edge into input i, only the body's
  // Data for i follows, which a control edge out of the call still orders.
  constexpr int kByCtrl = -1;
  const Graph &graph = m_.graph(g);
  if (from == to || opKind(graph.node(from)) == OpKind::Call ||
      opKind(graph.node(to)) == OpKind::Call)
    return false;
  OrderIndex &idx = order(g);
  if (!idx.valid() || idx.position(from) >= idx.position(to))
    return false;
  uint32_t limit = idx.position(to);
  // (node, how it was entered: kByCtrl or the data input); a non-call node
  // is entered once whichever way.
  std::vector<std::pair<NodeId, int>> stack{{from, kByCtrl}}, seen{{from, kByCtrl}};
  while (!stack.empty()) {
    auto [n, via] = stack.back();
    stack.pop_back();
    const Node &node = graph.node(n);
    bool ctrlOnly = false;
    bool isCall = n != from && opKind(node) == OpKind::Call;
    if (isCall) {
      if (node.subgraphs.size() != 1 || m_.graph(node.subgraphs[0]).numLiveNodes() == 0)
        continue;
      if (via != kByCtrl) {
        if (index_.dataForParentInput(node.subgraphs[0], uint32_t(via)).empty())
          continue; // the input reaches nothing inside that an edge out orders
        ctrlOnly = true;
      }
    }
    auto visit = [&](NodeId next, int how) {
      if (next == to)
        return true;
      if (idx.position(next) >= limit)
        return false;
      bool isCall = opKind(graph.node(next)) == OpKind::Call;
      auto key = std::pair{next, isCall ? how : kByCtrl};
      if (std::find(seen.begin(), seen.end(), key) == seen.end()) {
        seen.push_back(key);
        stack.push_back({next, how});
      }
      return false;
    };
    for (NodeId c : node.ctrlOut)
      if (visit(c, kByCtrl))
        return true;
    if (!ctrlOnly)
      for (uint32_t j = 0; j < node.consumers.size(); ++j) {
        if (isCall && !callResultProduced(m_, index_, node, j))
          continue; // no node inside precedes what reads this output
        for (InPort c : node.consumers[j])
          if (visit(c.node, int(c.index)))
            return true;
      }
    if (seen.size() > kMaxOrderSearch)
      return false;
  }
  return false;
}

std::vector<NodeRef> Analysis::controlFlowHolders(NodeRef t) const {
  // The copy and every If/Case/While holding it, innermost first: a holder
  // runs as one step, so whatever is ordered before it runs before the copy.
  // A call is transparent (semantics.md §2): a path through it proves
  // nothing about the nodes inside, so neither side is lifted through one.
  std::vector<NodeRef> holders{t};
  while (holders.size() < kMaxDepth) {
    const Graph &hg = m_.graph(holders.back().graph);
    if (hg.parentNode == kNoNode || hg.parentGraph == kNoGraph)
      break;
    NodeRef up{hg.parentGraph, hg.parentNode};
    if (!isControlFlow(m_.graph(up.graph).node(up.node)))
      break;
    holders.push_back(up);
  }
  return holders;
}

bool Analysis::precedesCopy(NodeRef t, const SourceTrace &trace, NodeRef w,
                            const BufferUses *copy) {
  // A NetOutput reads (a root one: is observed) when its whole graph is
  // done, whatever edges leave it: after the copy whenever the copy runs in
  // that graph or below it (graphvet fuzz --seed 41 --arithmetics 8, case
  // seed 352394: a While condition read the source after a scribble that an
  // edge from the condition's NetOutput seemed to order after it).
  if (opKind(m_.graph(w.graph).node(w.node)) == OpKind::NetOutput && insideGraph(m_, t, w.graph))
    return false;
  std::vector<NodeRef> holders = controlFlowHolders(t);
  // Lift the writer through control-flow holders until it shares a graph
  // with the copy or one of its holders.
  if (beforeEnclosingCall(t, w))
    return true;
  const NodeRef writer = w;
  GraphId liftedFrom = kNoGraph; // the subgraph the writer was last lifted out of
  size_t level = holders.size();
  for (size_t depth = 0; level == holders.size(); ++depth) {
    for (size_t i = 0; i < holders.size() && level == holders.size(); ++i)
      if (holders[i].graph == w.graph)
        level = i;
    if (level != holders.size())
      break;
    const Graph &wg = m_.graph(w.graph);
    if (depth >= kMaxDepth || wg.parentNode == kNoNode || wg.parentGraph == kNoGraph)
      return false;
    liftedFrom = w.graph;
    w = {wg.parentGraph, wg.parentNode};
    if (!isControlFlow(m_.graph(w.graph).node(w.node))) {
      // An edge onto the copy itself orders nothing for readers outside a
      // call it feeds a result of (see precedesInGraph).
      if (feedsCallResult(t))
        holders.erase(holders.begin());
      return calledBefore(w, holders) || onTracePath(trace, writer);
    }
  }
  if (level > 0)
    return precedesHolder(holders[level], w, liftedFrom, copy);
  return precedesInGraph(t, trace, w);
}

bool Analysis::precedesHolder(NodeRef holder, NodeRef w, GraphId liftedFrom,
                              const BufferUses *copy) {
  // Extension ext-readonly-control-flow: the writer is outside the
  // innermost control flow holding the copy.
  if (w == holder) {
    // The writer runs inside the same holder as the copy but in another
    // subgraph of it (the same subgraph would have met at a lower level):
    // another branch of an If/Case, which never runs in the step the copy
    // runs in, or the other one of a While's cond and body, which runs
    // before or after the whole of the copy's subgraph. The copy's memory
    // leaves neither during that time except as a snapshot (a While's
    // write-back) or through the holder's result, read after the step.
    // The holder's own writes (a While's write-back, an If's fallback
    // result) are not excused.
    return liftedFrom != kNoGraph;
  }
  if (directlyOrdered(m_.graph(holder.graph), w.node, holder.node) ||
      orderedWithoutCalls(holder.graph, w.node, holder.node))
    return true;
  // A writer outside the holder runs before or after the whole step. When
  // the copy's memory does not leave the holder (no result of it that
  // anyone reads carries it), every read of it happens inside the step,
  // so such a writer cannot come between the copy and a read.
  return copy && !copy->overBudget && !copy->passedOnBy.count(holder);
}

bool Analysis::precedesInGraph(NodeRef t, const SourceTrace &trace, NodeRef w) {
  if (w.node == t.node)
    return false;
  // A control edge into the copy moves onto its consumers, which then follow
  // the writer; but a subgraph NetOutput consumer stands for readers outside
  // the call, which an edge inside orders nothing before (as in Rule 3). Only
  // the data path from the writer to the producer orders those.
  // (A result of If/Case/While is read only after the whole step, so there
  // the edge does order it.)
  const Graph &tg = m_.graph(t.graph);
  bool resultConsumer = feedsCallResult(t);
  if (!resultConsumer &&
      (directlyOrdered(tg, w.node, t.node) || orderedWithoutCalls(t.graph, w.node, t.node)))
    return true;
  // The readers outside a call follow the node feeding its NetOutput, which
  // after the deletion is the producer: a path to the producer orders them.
  if (resultConsumer && tg.node(t.node).inputs[0] &&
      orderedWithoutCalls(t.graph, w.node, tg.node(t.node).inputs[0]->node))
    return true;
  // On the trace path: each step feeds the next by a data edge, the first
  // feeds the TensorMove.
  return onTracePath(trace, w);
}

bool Analysis::onTracePath(const SourceTrace &trace, NodeRef w) const {
  // Extension: a step inside a call feeds the next through the call's
  // boundary (its result or its input, semantics.md §2), which orders
  // producer before consumer as a data edge does; the call is no step.
  for (const TraceStep &step : trace.steps)
    if (step.graph == w.graph && step.port.node == w.node)
      return opKind(m_.graph(w.graph).node(w.node)) != OpKind::Call;
  return false;
}

bool Analysis::beforeEnclosingCall(NodeRef t, NodeRef w) {
  // A control edge into a call applies to every node inside it (semantics.md
  // §2): a writer ordered before such an edge runs before the copy.
  GraphId g = t.graph;
  for (size_t depth = 0; depth < kMaxDepth; ++depth) {
    const Graph &graph = m_.graph(g);
    if (graph.parentNode == kNoNode || graph.parentGraph == kNoGraph)
      return false;
    NodeRef holder{graph.parentGraph, graph.parentNode};
    const Node &h = m_.graph(holder.graph).node(holder.node);
    if (holder.graph == w.graph) {
      if (opKind(h) != OpKind::Call)
        return false; // control flow: the lifting in precedesCopy decides
      for (NodeId x : h.ctrlIn)
        if (x == w.node || orderedWithoutCalls(w.graph, w.node, x))
          return true;
      return false;
    }
    g = holder.graph;
  }
  return false;
}

bool Analysis::feedsCallResult(NodeRef t) const {
  const Graph &tg = m_.graph(t.graph);
  if (tg.parentNode == kNoNode || isControlFlow(m_.graph(tg.parentGraph).node(tg.parentNode)))
    return false;
  // A result that reaches only the root NetOutput (through the
  // results of enclosing calls) is read when the whole run is done, after
  // every writer: no reader outside needs an order.
  constexpr size_t kMaxResults = 64;            // result slots followed (cost bound)
  std::vector<std::pair<GraphId, InPort>> work; // NetOutput slots carrying the copy
  for (InPort c : tg.node(t.node).consumers[0])
    if (opKind(tg.node(c.node)) == OpKind::NetOutput)
      work.push_back({t.graph, c});
  for (size_t seen = 0; !work.empty(); ++seen) {
    if (seen >= kMaxResults)
      return true;
    auto [g, slot] = work.back();
    work.pop_back();
    const Graph &graph = m_.graph(g);
    if (graph.parentNode == kNoNode || graph.parentGraph == kNoGraph)
      continue; // the root NetOutput: observed at the end
    const Node &holder = m_.graph(graph.parentGraph).node(graph.parentNode);
    if (isControlFlow(holder))
      return true;
    auto j = graph.node(slot.node).portIntAttr(false, slot.index, "_parent_node_index");
    if (!j || *j < 0 || *j >= int64_t(holder.numOutputs))
      continue; // no result: nobody outside reads it
    for (InPort c : holder.consumers[size_t(*j)]) {
      if (opKind(m_.graph(graph.parentGraph).node(c.node)) != OpKind::NetOutput)
        return true;
      work.push_back({graph.parentGraph, c});
    }
  }
  return false;
}

bool Analysis::isDead(NodeRef n) {
  const Graph &g = m_.graph(n.graph);
  if (dead_.size() < m_.numGraphs())
    dead_.resize(m_.numGraphs());
  std::vector<uint8_t> &memo = dead_[n.graph];
  if (memo.size() < g.capacity())
    memo.resize(g.capacity(), 0);
  auto candidate = deadCandidate;
  auto unusedResult = [&](InPort c) { return isUnusedResult(m_, g, c); };
  // Post-order over consumers (the graph is acyclic when this is asked).
  std::vector<std::pair<NodeId, bool>> stack{{n.node, false}};
  size_t examined = 0;
  while (!stack.empty()) {
    auto [x, expanded] = stack.back();
    stack.pop_back();
    if (memo[x] != 0)
      continue;
    const Node &node = g.node(x);
    if (!expanded) {
      if (!candidate(node)) {
        memo[x] = 2;
        continue;
      }
      if (++examined > kMaxDeadSearch) {
        memo[n.node] = 2; // out of budget: live, and not asked again
        return false;
      }
      // A consumer known live, or one that cannot be dead, settles it now.
      bool live = false;
      for (const std::vector<InPort> &outs : node.consumers)
        for (InPort c : outs)
          live = live || (!unusedResult(c) &&
                          (memo[c.node] == 2 || (memo[c.node] == 0 && !candidate(g.node(c.node)))));
      if (live) {
        memo[x] = 2;
        continue;
      }
      stack.push_back({x, true});
      for (const std::vector<InPort> &outs : node.consumers)
        for (InPort c : outs)
          if (memo[c.node] == 0 && !unusedResult(c))
            stack.push_back({c.node, false});
      continue;
    }
    bool dead = true;
    for (const std::vector<InPort> &outs : node.consumers)
      for (InPort c : outs)
        dead = dead && (unusedResult(c) || memo[c.node] == 1);
    memo[x] = dead ? 1 : 2;
  }
  return memo[n.node] == 1;
}

bool Analysis::calledBefore(NodeRef call, const std::vector<NodeRef> &holders) {
  // A writer inside a call (at any depth): a control edge from the call
  // applies to every node inside it (semantics.md §2), so the writer runs
  // before whatever that edge's target runs before.
  for (size_t depth = 0; depth < kMaxDepth; ++depth) {
    const Node &c = m_.graph(call.graph).node(call.node);
    if (opKind(c) != OpKind::Call)
      return false;
    for (const NodeRef &h : holders) {
      if (h.graph != call.graph)
        continue;
      for (NodeId x : c.ctrlOut)
        if (x == h.node || orderedWithoutCalls(h.graph, x, h.node))
          return true;
      return false;
    }
    const Graph &cg = m_.graph(call.graph);
    if (cg.parentNode == kNoNode || cg.parentGraph == kNoGraph)
      return false;
    call = {cg.parentGraph, cg.parentNode};
  }
  return false;
}

bool insideGraph(const Module &m, NodeRef n, GraphId g) {
  for (size_t depth = 0; depth <= m.numGraphs(); ++depth) { // bounded by the nesting
    if (n.graph == g)
      return true;
    const Graph &ng = m.graph(n.graph);
    if (ng.parentNode == kNoNode || ng.parentGraph == kNoGraph)
      return false;
    n = {ng.parentGraph, ng.parentNode};
  }
  return false;
}

bool otherBranch(const Module &m, NodeRef t, NodeRef w) {
  NodeRef h = t;
  for (size_t depth = 0; depth <= m.numGraphs(); ++depth) { // bounded by the nesting
    const Graph &g = m.graph(h.graph);
    if (g.parentNode == kNoNode || g.parentGraph == kNoGraph)
      return false;
    h = {g.parentGraph, g.parentNode};
    const Node &hn = m.graph(h.graph).node(h.node);
    if (opKind(hn) != OpKind::If && opKind(hn) != OpKind::Case)
      continue;
    GraphId wSub = subgraphOf(m, h, w);
    if (wSub != kNoGraph && wSub != g.id)
      return true;
  }
  return false;
}

GraphId subgraphOf(const Module &m, NodeRef holder, NodeRef n) {
  for (size_t depth = 0; depth <= m.numGraphs(); ++depth) { // bounded by the nesting
    const Graph &g = m.graph(n.graph);
    if (g.parentNode == kNoNode || g.parentGraph == kNoGraph)
      return kNoGraph;
    if (NodeRef{g.parentGraph, g.parentNode} == holder)
      return n.graph;
    n = {g.parentGraph, g.parentNode};
  }
  return kNoGraph;
}

} // namespace graphvet::tmd
