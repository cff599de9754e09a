// TensorMoveDeletePass: The facts the rules and extensions share: buffers, writers and ordering.
#include "passes/tensor_move_delete/deleter.h"

#include "ir/op_library.h"
#include "ir/printer.h"

#include <algorithm>
#include <functional>
#include <set>
#include <string>

namespace graphvet::tmd {

std::optional<std::vector<SourceTrace>>
TensorMoveDeleter::resolveControlFlow(const SourceTrace &trace, bool allBindings,
                                      bool followLoops) {
  // Each expansion follows one control-flow step; the bound keeps a deep or
  // wide nest of branches from costing more than a short walk per copy.
  constexpr size_t kMaxExpansions = 64;
  std::vector<SourceTrace> ends, work{trace};
  size_t expansions = 0;
  // The port `end` bound to a buffer of its own (an unconnected slot, a
  // branch leaving a result unbound): an ordinary source.
  auto own = [&](const TraceStep &end) {
    SourceTrace t;
    t.steps.push_back(end);
    t.kind = SourceKind::Ordinary;
    ends.push_back(std::move(t));
  };
  while (!work.empty()) {
    SourceTrace tr = std::move(work.back());
    work.pop_back();
    if (tr.kind == SourceKind::None || tr.steps.empty())
      return std::nullopt;
    if (tr.kind != SourceKind::ControlFlow) {
      ends.push_back(std::move(tr));
      continue;
    }
    if (++expansions > kMaxExpansions)
      return std::nullopt;
    const TraceStep end = tr.steps.back();
    const Graph &graph = m_.graph(end.graph);
    const Node &n = graph.node(end.port.node);
    if (opKind(n) == OpKind::DataSource) {
      // A branch Data is bound to the holder's input (semantics.md §1); a
      // loop variable is written back by the While itself: not read-only
      // (followed only for allBindings or followLoops).
      if (graph.parentNode == kNoNode)
        return std::nullopt;
      const Node &holder = m_.graph(graph.parentGraph).node(graph.parentNode);
      auto p = n.intAttr("_parent_node_index");
      if ((opKind(holder) == OpKind::While && !allBindings && !followLoops) || !p || *p < 0 ||
          *p >= int64_t(holder.inputs.size()))
        return std::nullopt;
      if (!holder.inputs[size_t(*p)]) {
        // An unconnected input: the Data is bound to a fresh buffer of its
        // own that reads as zero bytes (semantics.md §1-2), so it is an
        // ordinary source, known only inside the subgraph.
        own(end);
        continue;
      }
      work.push_back(
          traceSource(m_, index_, graph.parentGraph, *holder.inputs[size_t(*p)], maxTraceSteps_));
      continue;
    }
    // A While output is the buffer of its input (loop-carried in place; the
    // While is one of its writers). An If/Case output is the taken branch's
    // result: any branch's.
    if (opKind(n) == OpKind::While) {
      if (end.port.index >= n.inputs.size() || !n.inputs[end.port.index]) {
        if (!allBindings)
          return std::nullopt;
        own(end);
        continue;
      }
      work.push_back(traceSource(m_, index_, end.graph, *n.inputs[end.port.index], maxTraceSteps_));
      continue;
    }
    if ((opKind(n) != OpKind::If && opKind(n) != OpKind::Case) || n.subgraphs.empty())
      return std::nullopt;
    for (GraphId sub : n.subgraphs) {
      NodeId out = index_.netOutput(sub);
      auto slots = index_.resultSlots(sub, end.port.index);
      const Node *netOut = out == kNoNode ? nullptr : &m_.graph(sub).node(out);
      if (!netOut || slots.size() != 1 || slots[0] >= netOut->inputs.size() ||
          !netOut->inputs[slots[0]]) {
        if (!allBindings)
          return std::nullopt;
        own(end); // the output's own, zero-filled buffer
        continue;
      }
      work.push_back(traceSource(m_, index_, sub, *netOut->inputs[slots[0]], maxTraceSteps_));
    }
  }
  // Several branches may bind the same port: it is one buffer (the memory
  // plan's candidates are a set), kept once.
  std::vector<SourceTrace> unique;
  for (SourceTrace &e : ends) {
    bool seen = std::any_of(unique.begin(), unique.end(), [&](const SourceTrace &u) {
      return u.kind == e.kind && u.refOnPath == e.refOnPath &&
             u.steps.back().graph == e.steps.back().graph &&
             u.steps.back().port == e.steps.back().port;
    });
    if (!seen)
      unique.push_back(std::move(e));
  }
  return unique;
}

std::optional<uint64_t> TensorMoveDeleter::realBytes(const SourceTrace &trace) {
  std::optional<std::vector<SourceTrace>> ends = resolveControlFlow(trace, true);
  if (!ends || ends->empty())
    return std::nullopt;
  std::optional<uint64_t> size;
  for (const SourceTrace &end : *ends) {
    const TraceStep &e = end.steps.back();
    std::optional<uint64_t> bytes = outputBytes(m_.graph(e.graph).node(e.port.node), e.port.index);
    if (!bytes || (size && *size != *bytes))
      return std::nullopt;
    size = bytes;
  }
  return size;
}

TensorMoveDeleter::BufferKey TensorMoveDeleter::bufferKey(const SourceTrace &trace) const {
  const TraceStep &src = trace.steps.back();
  const Node &n = m_.graph(src.graph).node(src.port.node);
  switch (trace.kind) {
  case SourceKind::UserInput:
    return {1, 0, 0, trace.userInput, ""};
  case SourceKind::Variable:
    return {2, 0, 0, 0, n.name};
  case SourceKind::VariableRef:
    return {2, 0, 0, 0, *refVarSrcName(n, src.port.index)};
  default:
    return {3, src.graph, src.port.node, src.port.index, ""};
  }
}

std::vector<SlotRef> TensorMoveDeleter::bufferSlots(const SourceTrace &trace) const {
  // Every port bound to the buffer directly: the user input's root Data
  // nodes, the variable's ports, or the source port; the exploration finds
  // every alias (views, refs, subgraph boundaries, control-flow results).
  BufferKey key = bufferKey(trace);
  std::vector<SlotRef> slots;
  auto addPort = [&](PortRef p) {
    for (const SlotRef &s : consumerSlots(m_, p))
      slots.push_back(s);
  };
  if (std::get<0>(key) == 1) {
    for (NodeId d : index_.rootDataWithIndex(trace.userInput))
      for (uint32_t k = 0; k < m_.graph(0).node(d).numOutputs; ++k)
        addPort({0, {d, k}});
  } else if (std::get<0>(key) == 2) {
    for (const PortRef &p : index_.variablePorts(std::get<4>(key)))
      addPort(p);
  } else {
    addPort({trace.steps.back().graph, trace.steps.back().port});
  }
  return slots;
}

bool TensorMoveDeleter::anyNonExempt(const std::vector<NodeRef> &users) {
  // Exempt (semantics.md §6): every input is one and the same port of one
  // buffer (no result chosen at run time). Merging buffers only makes
  // inputs more alike, so an exempt op stays exempt. The reference scope
  // counts every such op.
  // Inputs on different ports count as one buffer when each is bound to the
  // same one buffer (oneBufferOf: views, ref outputs, a branch Data, a loop
  // variable).
  auto exempt = [&](NodeRef u) {
    if (opts_.conservative)
      return false;
    const Node &n = m_.graph(u.graph).node(u.node);
    if (n.inputs.empty() || !n.inputs[0])
      return false;
    auto first = oneBufferOf(u.graph, *n.inputs[0]);
    if (!first)
      return false;
    for (const auto &in : n.inputs)
      if (!in || (*in != *n.inputs[0] && oneBufferOf(u.graph, *in) != first))
        return false;
    return true;
  };
  return !std::all_of(users.begin(), users.end(), exempt);
}

const TensorMoveDeleter::BufferFacts &TensorMoveDeleter::bufferFacts(const SourceTrace &trace) {
  BufferKey key = bufferKey(trace);
  if (auto it = facts_.find(key); it != facts_.end())
    return it->second;
  BufferUses uses = exploreUses(m_, index_, bufferSlots(trace), opts_.analysisBudget, nullptr,
                                /*whileResultsCopied=*/true);
  BufferFacts f;
  f.overBudget = uses.overBudget;
  f.rootOutputs = uses.rootOutputs;
  f.continuous = anyNonExempt(uses.continuousUsers);
  f.writers = std::move(uses.writers);
  f.writerSlots = std::move(uses.writerSlots);
  return facts_.emplace(key, std::move(f)).first->second;
}

bool TensorMoveDeleter::orderedWithoutCalls(GraphId g, NodeId from, NodeId to) {
  // A path may pass through a call only where the call orders its ends
  // (semantics.md §2): entered by a control edge, every node inside follows,
  // so any edge out of it (control, or data from a result's producer inside)
  // continues the order; entered by a data edge into input i, only the body's
  // Data for i follows, which a control edge out of the call still orders.
  constexpr size_t kMaxOrderSearch = 128; // nodes visited per question (cost bound)
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
    if (n != from && opKind(node) == OpKind::Call) {
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
      for (const std::vector<InPort> &outs : node.consumers)
        for (InPort c : outs)
          if (visit(c.node, int(c.index)))
            return true;
    if (seen.size() > kMaxOrderSearch)
      return false;
  }
  return false;
}

bool TensorMoveDeleter::precedesCopy(NodeRef t, const SourceTrace &trace, NodeRef w,
                                     const BufferUses *copy) {
  // The copy and every If/Case/While holding it, innermost first: a holder
  // runs as one step, so whatever is ordered before it runs before the copy.
  // A call is transparent (semantics.md §2): a path through it proves
  // nothing about the nodes inside, so neither side is lifted through one.
  constexpr size_t kMaxDepth = 64; // nesting followed per side (cost bound)
  // A NetOutput reads (a root one: is observed) when its whole graph is
  // done, whatever edges leave it: after the copy whenever the copy runs in
  // that graph or below it (graphvet fuzz --seed 41 --arithmetics 8, case
  // seed 352394: a While condition read the source after a scribble that an
  // edge from the condition's NetOutput seemed to order after it).
  if (opKind(m_.graph(w.graph).node(w.node)) == OpKind::NetOutput && insideGraph(t, w.graph))
    return false;
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
      // call it feeds a result of (see below).
      if (feedsCallResult(t))
        holders.erase(holders.begin());
      return calledBefore(w, holders) || onTracePath(trace, writer);
    }
  }
  if (level > 0) {
    // Extension ext-readonly-control-flow: the writer is outside the
    // innermost control flow holding the copy.
    NodeRef holder = holders[level];
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

bool TensorMoveDeleter::onTracePath(const SourceTrace &trace, NodeRef w) const {
  // Extension: a step inside a call feeds the next through the call's
  // boundary (its result or its input, semantics.md §2), which orders
  // producer before consumer as a data edge does; the call is no step.
  for (const TraceStep &step : trace.steps)
    if (step.graph == w.graph && step.port.node == w.node)
      return opKind(m_.graph(w.graph).node(w.node)) != OpKind::Call;
  return false;
}

bool TensorMoveDeleter::onePort(const std::set<uint32_t> &outputs) const {
  NodeId out = index_.netOutput(0);
  if (out == kNoNode || outputs.empty())
    return false;
  const Node &n = m_.graph(0).node(out);
  std::optional<OutPort> port;
  for (uint32_t k : outputs) {
    if (k >= n.inputs.size() || !n.inputs[k] || (port && *port != *n.inputs[k]))
      return false;
    port = n.inputs[k];
  }
  return true;
}

bool TensorMoveDeleter::beforeEnclosingCall(NodeRef t, NodeRef w) {
  // A control edge into a call applies to every node inside it (semantics.md
  // §2): a writer ordered before such an edge runs before the copy.
  constexpr size_t kMaxDepth = 64; // nesting followed (cost bound)
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

bool TensorMoveDeleter::feedsCallResult(NodeRef t) const {
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
    auto j = graph.node(slot.node).intAttr(Node::portKey(false, slot.index, "_parent_node_index"));
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

bool TensorMoveDeleter::isDead(NodeRef n) {
  constexpr size_t kMaxDeadSearch = 256; // nodes examined per question (cost bound)
  const Graph &g = m_.graph(n.graph);
  if (dead_.size() < m_.numGraphs())
    dead_.resize(m_.numGraphs());
  std::vector<uint8_t> &memo = dead_[n.graph];
  if (memo.size() < g.capacity())
    memo.resize(g.capacity(), 0);
  auto candidate = [&](const Node &node) {
    OpKind k = opKind(node);
    if ((k != OpKind::Ordinary && k != OpKind::Copy) || isInputMutable(node) ||
        !refWrittenInputs(node).empty())
      return false;
    for (uint32_t out = 0; out < node.numOutputs; ++out)
      if (refVarSrcName(node, out))
        return false;
    return true;
  };
  // A result of a call, If or Case for an output nobody consumes goes
  // nowhere (a While's result is written back; a root one is observed).
  auto unusedResult = [&](InPort c) {
    const Node &out = g.node(c.node);
    if (opKind(out) != OpKind::NetOutput || g.parentNode == kNoNode || g.parentGraph == kNoGraph)
      return false;
    const Node &holder = m_.graph(g.parentGraph).node(g.parentNode);
    OpKind hk = opKind(holder);
    if (hk != OpKind::Call && hk != OpKind::If && hk != OpKind::Case)
      return false;
    auto j = out.intAttr(Node::portKey(false, c.index, "_parent_node_index"));
    return !j || *j < 0 || *j >= int64_t(holder.numOutputs) || holder.consumers[size_t(*j)].empty();
  };
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

bool TensorMoveDeleter::calledBefore(NodeRef call, const std::vector<NodeRef> &holders) {
  // A writer inside a call (at any depth): a control edge from the call
  // applies to every node inside it (semantics.md §2), so the writer runs
  // before whatever that edge's target runs before.
  constexpr size_t kMaxDepth = 64; // nesting followed (cost bound)
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

void TensorMoveDeleter::noteMerge(const std::vector<SourceTrace> &ends, const BufferUses &copy) {
  for (const SourceTrace &end : ends) {
    if (end.steps.empty() || end.kind == SourceKind::None || end.kind == SourceKind::ControlFlow)
      continue;
    auto it = facts_.find(bufferKey(end));
    if (it == facts_.end())
      continue; // computed from the graph (as it is then) when first needed
    BufferFacts &f = it->second;
    f.overBudget = f.overBudget || copy.overBudget;
    f.rootOutputs.insert(copy.rootOutputs.begin(), copy.rootOutputs.end());
    f.continuous = f.continuous || anyNonExempt(copy.continuousUsers); // (relinked by now)
    f.writers.insert(f.writers.end(), copy.writers.begin(), copy.writers.end());
    f.writerSlots.insert(f.writerSlots.end(), copy.writerSlots.begin(), copy.writerSlots.end());
  }
}

std::vector<NodeRef> TensorMoveDeleter::effectiveWriters(const std::vector<NodeRef> &writers,
                                                         const std::vector<SlotRef> &slots,
                                                         bool excuseWhiles) const {
  std::vector<NodeRef> out;
  for (size_t i = 0; i < writers.size(); ++i) {
    NodeRef w = writers[i];
    const Node &n = m_.graph(w.graph).node(w.node);
    if (excuseWhiles && i < slots.size() && opKind(n) == OpKind::While && !isInputMutable(n) &&
        n.subgraphs.size() == 2) {
      // Loop variable j is written back only from the body's result for j;
      // a result that is the body's Data for j (through views) is skipped.
      uint32_t j = slots[i].slot.index;
      GraphId body = n.subgraphs[1];
      NodeId out_ = index_.netOutput(body);
      if (out_ == kNoNode)
        continue; // nothing is written back into it
      const Node &netOut = m_.graph(body).node(out_);
      // A result slot left unconnected (`_`) writes nothing back either
      // (semantics.md §2; the oracle skips it too).
      std::vector<uint32_t> results;
      for (uint32_t r : index_.resultSlots(body, j))
        if (r < netOut.inputs.size() && netOut.inputs[r])
          results.push_back(r);
      if (results.empty())
        continue;
      // Only a loop variable bound to one buffer is known to be the body's
      // result itself; one that control flow decides at run time is written
      // back (the oracle's race analysis counts it too; found by graphvet
      // fuzz --seed 1, case seed 5047).
      SourceTrace in = j < n.inputs.size() && n.inputs[j]
                           ? traceSource(m_, index_, w.graph, *n.inputs[j], maxTraceSteps_)
                           : SourceTrace{};
      if (in.kind == SourceKind::None || in.kind == SourceKind::ControlFlow) {
        out.push_back(w);
        continue;
      }
      if (results.size() == 1 && results[0] < netOut.inputs.size() && netOut.inputs[results[0]]) {
        SourceTrace r = traceSource(m_, index_, body, *netOut.inputs[results[0]], maxTraceSteps_);
        if (!r.steps.empty() && !r.refOnPath && r.steps.back().graph == body) {
          const Node &d = m_.graph(body).node(r.steps.back().port.node);
          auto p = d.intAttr("_parent_node_index");
          if (opKind(d) == OpKind::DataSource && p && *p == int64_t(j))
            continue; // the result is the loop variable itself
        }
      }
    }
    out.push_back(w);
  }
  return out;
}

bool TensorMoveDeleter::computedFresh(const SourceTrace &end) const {
  if (end.kind != SourceKind::Ordinary || end.steps.empty())
    return false;
  const TraceStep &src = end.steps.back();
  return opKind(m_.graph(src.graph).node(src.port.node)) != OpKind::DataSource;
}

bool TensorMoveDeleter::grantedForCopy(const SourceTrace &end, const BufferUses &copy) const {
  if (end.kind != SourceKind::UserInput)
    return false;
  std::set<uint32_t> allowed = opts_.grants.outputsFor(end.userInput);
  bool anyOutput = opts_.grants.reusableInputs.count(end.userInput) > 0;
  return (anyOutput || !allowed.empty()) &&
         std::all_of(copy.rootOutputs.begin(), copy.rootOutputs.end(),
                     [&](uint32_t j) { return anyOutput || allowed.count(j) > 0; });
}

/// An ordinary op every output of which is a view of an input or lives in a
/// variable's buffer writes nothing (semantics.md §1), so it computes
/// nothing and reads nothing: only its outputs' consumers access memory.
static bool accessesNothing(const Node &n) {
  if (opKind(n) != OpKind::Ordinary || isInputMutable(n) || n.numOutputs == 0)
    return false;
  for (uint32_t k = 0; k < n.numOutputs; ++k)
    if (!refVarSrcName(n, k) && (refInput(n, k) || !viewInput(n, k)))
      return false;
  return true;
}

std::vector<NodeRef>
TensorMoveDeleter::accessingNodes(const std::vector<SlotRef> &visited,
                                  std::initializer_list<NodeRef> except) const {
  std::vector<NodeRef> out;
  for (const SlotRef &s : visited) {
    NodeRef n{s.graph, s.slot.node};
    if (opKind(m_.graph(n.graph).node(n.node)) == OpKind::Call ||
        accessesNothing(m_.graph(n.graph).node(n.node)) ||
        std::find(except.begin(), except.end(), n) != except.end() ||
        std::find(out.begin(), out.end(), n) != out.end())
      continue;
    out.push_back(n);
  }
  return out;
}

bool TensorMoveDeleter::insideGraph(NodeRef n, GraphId g) const {
  for (size_t depth = 0; depth <= m_.numGraphs(); ++depth) { // bounded by the nesting
    if (n.graph == g)
      return true;
    const Graph &ng = m_.graph(n.graph);
    if (ng.parentNode == kNoNode || ng.parentGraph == kNoGraph)
      return false;
    n = {ng.parentGraph, ng.parentNode};
  }
  return false;
}

bool TensorMoveDeleter::otherBranch(NodeRef t, NodeRef w) const {
  NodeRef h = t;
  for (size_t depth = 0; depth <= m_.numGraphs(); ++depth) { // bounded by the nesting
    const Graph &g = m_.graph(h.graph);
    if (g.parentNode == kNoNode || g.parentGraph == kNoGraph)
      return false;
    h = {g.parentGraph, g.parentNode};
    const Node &hn = m_.graph(h.graph).node(h.node);
    if (opKind(hn) != OpKind::If && opKind(hn) != OpKind::Case)
      continue;
    GraphId wSub = subgraphOf(h, w);
    if (wSub != kNoGraph && wSub != g.id)
      return true;
  }
  return false;
}

GraphId TensorMoveDeleter::subgraphOf(NodeRef holder, NodeRef n) const {
  for (size_t depth = 0; depth <= m_.numGraphs(); ++depth) { // bounded by the nesting
    const Graph &g = m_.graph(n.graph);
    if (g.parentNode == kNoNode || g.parentGraph == kNoGraph)
      return kNoGraph;
    if (NodeRef{g.parentGraph, g.parentNode} == holder)
      return n.graph;
    n = {g.parentGraph, g.parentNode};
  }
  return kNoGraph;
}

} // namespace graphvet::tmd
