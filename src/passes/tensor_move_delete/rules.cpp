// TensorMoveDeletePass: The reference design: the source trace, then Rules 1-5 and scenario 5.
#include "passes/tensor_move_delete/deleter.h"

#include "ir/op_library.h"
#include "ir/printer.h"

#include <algorithm>
#include <functional>
#include <set>
#include <string>

namespace graphvet::tmd {

Verdict TensorMoveDeleter::decideByDesign(NodeRef t) {
  const Graph &g = m_.graph(t.graph);
  const Node &tm = g.node(t.node);

  // 0. Reserved attributes.
  // The boolean true reserves the node; so does the string "true" (a
  // hand-written or converted graph may quote it), erring on keeping.
  const AttrValue *reserved = tm.attr("_cannot_be_deleted");
  if (reserved && ((reserved->isBool() && reserved->asBool()) ||
                   (reserved->isString() && reserved->asString() == "true"))) {
    Verdict v = keepFor("reserved-attr", "reserved attribute _cannot_be_deleted = true");
    v.outcome = Outcome::Skip;
    return v;
  }
  if (tm.attr("no_need_constant_folding")) {
    Verdict v = keepFor("reserved-attr", "reserved attribute no_need_constant_folding");
    v.outcome = Outcome::Skip;
    return v;
  }
  if (tm.inputs.size() != 1 || !tm.inputs[0])
    return keepFor("malformed-tensor-move", "it does not have exactly one connected input");
  for (uint32_t k = 1; k < tm.numOutputs; ++k)
    if (!tm.consumers[k].empty())
      return keepFor("malformed-tensor-move",
                     "its output " + std::to_string(k) + " is used; a TensorMove has one output");
  if (aliasedInput(tm, 0) || isInputMutable(tm))
    return keepFor("malformed-tensor-move",
                   "its attributes make it alias or write its input instead of copying it");
  // An output bound to a variable by ref_var_src_var_name lives in that
  // variable's buffer (semantics.md §1): its consumers read the variable,
  // not a copy of the input, so relinking them to the input changes what
  // they read, and a later copy of it copies the variable. Not a copy at all.
  if (const std::string *var = refVarSrcName(tm, 0))
    return keepFor("variable-bound-copy",
                   "its output is bound to variable " + formatName(*var) +
                       " (ref_var_src_var_name): its consumers read the variable, not a copy");
  if (!order(t.graph).valid())
    return keepFor("cyclic-graph", "graph " + formatName(g.name) + " has a cycle");

  // 1. Trace the real source.
  Verdict v;
  v.trace = traceSource(m_, index_, t.graph, *tm.inputs[0], maxTraceSteps_);
  const SourceTrace &trace = v.trace;

  // A copy whose output has another byte size than the buffer it copies is a
  // resize, not a redundant copy: consumers would read a different number of
  // bytes after relinking. The buffer is the traced source's (a ref or view
  // output declares its own description but shares its input's memory).
  // The reference scope compares with the description where the trace
  // stops; the extensions follow control flow to the buffers really bound
  // (a branch or loop Data declares its own description, but is its
  // holder's input).
  if (!trace.steps.empty()) {
    const TraceStep &src = trace.steps.back();
    std::optional<uint64_t> bytes =
        opts_.conservative || trace.kind != SourceKind::ControlFlow
            ? outputBytes(m_.graph(src.graph).node(src.port.node), src.port.index)
            : realBytes(trace);
    if (!sizeFits(t, bytes))
      return keepFor("tensor-desc-mismatch",
                     "its output tensor description differs in size from its input's");
  }

  // The successors, each explored forward once (the effective class of what
  // happens to the memory handed to it, through views and subgraphs).
  std::vector<SuccInfo> succs;
  {
    std::map<NodeId, size_t> at; // node -> position in succs (first-use order)
    for (InPort c : tm.consumers[0]) {
      auto [it, fresh] = at.emplace(c.node, succs.size());
      if (fresh)
        succs.push_back({c.node, {}, AccessClass::ReadOnly, false});
      succs[it->second].slots.push_back(c.index);
    }
  }
  for (SuccInfo &s : succs)
    for (uint32_t slot : s.slots) {
      SlotRef start{t.graph, {s.node, slot}};
      BufferUses uses =
          exploreUses(m_, index_, std::span<const SlotRef>(&start, 1), opts_.analysisBudget);
      s.access = combine(s.access, uses.access);
      s.passesOn =
          s.passesOn || passesMemoryOn(m_, index_, t.graph, s.node, slot, opts_.analysisBudget);
    }

  // The reference design checks, for every TensorMove, that relinking its
  // successors to the producer cannot close a cycle: a whole-graph search
  // per successor. In an acyclic graph the producer -> copy -> successor
  // path already makes the answer "no", which is why the index skips it.
  if (opts_.naiveReachability)
    for (const SuccInfo &s : succs)
      if (g.reaches(s.node, tm.inputs[0]->node))
        return keepFor("cyclic-graph", "successor " + name(t.graph, s.node) +
                                           " reaches the producer: relinking would close a "
                                           "cycle");

  if (auto keep = checkRule1(t, trace, succs))
    return *keep;
  if (auto keep = checkVariableWriters(t, v, succs))
    return *keep;
  if (auto keep = checkRule2(t, trace))
    return *keep;

  // Siblings: the other consumers of the TensorMove's producer output.
  const TraceStep &producer = trace.steps.front();
  // A summary only matters when the TensorMove is not the only reader; most
  // are, and building (and keeping current) one per copy costs memory on
  // large graphs. A port left unsummarized is built from the graph when
  // first needed, so skipping it here changes nothing later.
  bool hasSiblings = g.consumers(producer.port).size() > 1;
  PortSummary noSiblings;
  PortSummary &siblings = hasSiblings ? summary({producer.graph, producer.port}) : noSiblings;
  if (auto keep = checkRule3(t, v, succs, siblings))
    return *keep;
  if (auto keep = checkRule4(trace, t.graph, succs))
    return *keep;
  if (auto keep = checkRule5(t, trace))
    return *keep;

  // Every rule holds: name the scenario the deletion falls under.
  v.outcome = Outcome::Delete;
  if (hasSiblings) {
    v.rule = v.holderSibling      ? "ext-sibling-holder"
             : !v.pending.empty() ? "scenario5-read-write"
             : v.writingSibling   ? "scenario5-write-read"
                                  : "scenario5-read-read";
  } else if (trace.kind == SourceKind::UserInput) {
    v.rule = "scenario3";
  } else if (trace.kind != SourceKind::Ordinary) {
    v.rule = "scenario4";
  } else {
    v.rule = trace.steps.size() > 1 ? "scenario2" : "scenario1";
  }
  return v;
}

std::optional<Verdict> TensorMoveDeleter::checkRule1(NodeRef t, const SourceTrace &trace,
                                                     const std::vector<SuccInfo> &succs) {
  if (trace.kind == SourceKind::None)
    return keepFor("rule1-no-path", "Rule 1: no path to a source (" + trace.failure + ")");
  if (trace.kind == SourceKind::ControlFlow)
    return keepFor("rule1-control-flow",
                   "Rule 1: the trace ends at control flow " +
                       describe(trace.controlFlow.graph, trace.controlFlow.node));
  bool special = trace.kind == SourceKind::Variable || trace.kind == SourceKind::VariableRef ||
                 trace.kind == SourceKind::Weight;
  if (!special)
    return std::nullopt;
  // Scenario 4: only the direct successors are examined; each must only
  // read the memory and keep it to itself.
  std::string what = "Rule 1: source " + sourceName(trace) + " is a " + sourceKindName(trace.kind) +
                     " and successor ";
  for (const SuccInfo &s : succs) {
    const Node &n = m_.graph(t.graph).node(s.node);
    std::string succ = name(t.graph, s.node);
    if (opKind(n) == OpKind::NetOutput)
      return keepFor("rule1-special-successor-netoutput", what + succ + " is a NetOutput");
    if (holdsSubgraphs(n))
      return keepFor("rule1-special-successor-subgraph", what + succ + " holds subgraphs");
    if (writes(s.access))
      return keepFor("rule1-special-successor-writes", what + succ + " writes it");
    if (s.passesOn)
      return keepFor("rule1-special-successor-passes-memory",
                     what + succ + " passes the memory on");
  }
  return std::nullopt;
}

std::optional<Verdict> TensorMoveDeleter::checkVariableWriters(NodeRef t, Verdict &v,
                                                               const std::vector<SuccInfo> &succs) {
  // A variable's buffer is reachable by name from anywhere, not only through
  // the source's consumers. After the deletion every successor reads the
  // variable where the copy read it, so a writer of the variable ordered
  // after the copy must also come after every successor. With a single
  // successor that already holds (the writer follows it, or follows one of
  // the TensorMove's control successors, which the successor will precede).
  const SourceTrace &trace = v.trace;
  if (trace.kind != SourceKind::Variable && trace.kind != SourceKind::VariableRef)
    return std::nullopt;
  if (succs.size() < 2)
    return std::nullopt;
  const TraceStep &src = trace.steps.back();
  const Node &srcNode = m_.graph(src.graph).node(src.port.node);
  std::string var =
      trace.kind == SourceKind::Variable ? srcNode.name : *refVarSrcName(srcNode, src.port.index);
  auto cached = variableWriters_.find(var);
  if (cached == variableWriters_.end()) {
    std::vector<SlotRef> slots;
    for (const PortRef &p : index_.variablePorts(var))
      for (const SlotRef &s : consumerSlots(m_, p))
        slots.push_back(s);
    BufferUses uses = exploreUses(m_, index_, slots, opts_.analysisBudget);
    cached = variableWriters_
                 .emplace(var, uses.overBudget ? std::nullopt
                                               : std::optional<std::vector<NodeRef>>(uses.writers))
                 .first;
  }
  if (!cached->second)
    return keepFor("rule1-variable-writers",
                   "Rule 1: the writers of variable " + var + " exceed the analysis budget");
  std::set<NodeId> seen;
  for (NodeRef w : *cached->second) {
    // A writer inside a subgraph is ordered through the node holding it in
    // the TensorMove's graph; a writer outside that graph is ordered with the
    // TensorMove's own holder as a whole, and so with all its successors.
    while (w.graph != t.graph && m_.graph(w.graph).parentNode != kNoNode)
      w = {m_.graph(w.graph).parentGraph, m_.graph(w.graph).parentNode};
    if (w.graph != t.graph || !seen.insert(w.node).second || !reaches(t.graph, t.node, w.node))
      continue; // elsewhere, seen, or before the copy: before every successor too
    for (const SuccInfo &succ : succs) {
      if (succ.node == w.node || directlyOrdered(m_.graph(t.graph), succ.node, w.node))
        continue;
      if (reaches(t.graph, w.node, succ.node))
        return keepFor("rule1-variable-writer-order", "Rule 1: " + name(t.graph, w.node) +
                                                          " writes variable " + var +
                                                          " after the copy and before successor " +
                                                          name(t.graph, succ.node) + " reads it");
      v.pending.push_back({succ.node, w.node});
    }
  }
  return std::nullopt;
}

std::optional<Verdict> TensorMoveDeleter::checkRule2(NodeRef t, const SourceTrace &trace) {
  if (trace.kind == SourceKind::UnnamedUserInput)
    return keepFor("rule2-no-grant", "Rule 2: source " + sourceName(trace) +
                                         " is caller memory without an index, which no option "
                                         "can grant");
  if (trace.kind != SourceKind::UserInput)
    return std::nullopt;
  uint32_t k = trace.userInput;
  std::string input = "user input " + std::to_string(k) + " (" + sourceName(trace) + ")";
  if (opts_.grants.reusableInputs.count(k))
    return std::nullopt;
  std::set<uint32_t> outs = opts_.grants.outputsFor(k);
  if (outs.empty())
    return keepFor("rule2-no-grant", "Rule 2: " + input +
                                         " is caller memory and no option "
                                         "grants its reuse");
  // outputReuseInputMemIndexes grants sharing with the named graph outputs
  // only: the memory behind the TensorMove must not reach any other one.
  const BufferUses &uses = tensorMoveUses(t);
  std::vector<std::string> allowed;
  for (uint32_t j : outs)
    allowed.push_back(std::to_string(j));
  if (uses.overBudget)
    return keepFor("rule2-output-index",
                   "Rule 2: " + input + " may share memory only with graph output(s) " +
                       joinLimited(allowed, 8) + ", and the analysis budget ran out");
  for (uint32_t j : uses.rootOutputs)
    if (!outs.count(j))
      return keepFor("rule2-output-index",
                     "Rule 2: " + input + " may share memory only with graph output(s) " +
                         joinLimited(allowed, 8) + ", but the copy reaches graph output " +
                         std::to_string(j));
  return std::nullopt;
}

std::optional<Verdict> TensorMoveDeleter::checkRule3(NodeRef t, Verdict &v,
                                                     const std::vector<SuccInfo> &succs,
                                                     PortSummary &siblings) {
  const SourceTrace &trace = v.trace;
  // A ref or view with two connected outputs aliasing the traced input.
  for (const TraceStep &step : trace.steps) {
    const Node &n = m_.graph(step.graph).node(step.port.node);
    auto in = aliasedInput(n, step.port.index);
    if (!in)
      continue;
    for (uint32_t k = 0; k < n.numOutputs; ++k)
      if (k != step.port.index && aliasedInput(n, k) == in && !n.consumers[k].empty())
        return keepFor("rule3-multi-output-ref",
                       "Rule 3: " + describe(step.graph, n.id) + " has outputs " +
                           std::to_string(step.port.index) + " and " + std::to_string(k) +
                           " both aliasing its input " + std::to_string(*in));
  }
  // Fan-out above the direct producer, and Data nodes that share a buffer
  // with another Data node (same parent input or same user input).
  for (size_t i = 0; i < trace.steps.size(); ++i) {
    const TraceStep &step = trace.steps[i];
    const Graph &graph = m_.graph(step.graph);
    const Node &n = graph.node(step.port.node);
    size_t consumers = graph.consumers(step.port).size();
    if (i > 0 && consumers > 1)
      return keepFor("rule3-fan-out", "Rule 3: " + describe(step.graph, n.id) +
                                          " on the path has " + std::to_string(consumers) +
                                          " consumers");
    if (opKind(n) != OpKind::DataSource)
      continue;
    std::span<const NodeId> sharing;
    if (step.graph == 0 && graph.parentNode == kNoNode) {
      if (auto k = n.intAttr("index"); k && *k >= 0 && *k <= INT32_MAX)
        sharing = index_.rootDataWithIndex(static_cast<uint32_t>(*k));
    } else if (auto p = n.intAttr("_parent_node_index"); p && *p >= 0 && *p <= INT32_MAX) {
      sharing = index_.dataForParentInput(step.graph, static_cast<uint32_t>(*p));
    }
    for (NodeId other : sharing)
      if (other != n.id && graph.node(other).alive)
        return keepFor("rule3-fan-out", "Rule 3: " + describe(step.graph, n.id) +
                                            " shares its memory with " +
                                            describe(step.graph, other));
  }
  // Scenario 5: the producer output also feeds siblings. The TensorMove
  // itself is one of the readers; every check below skips it.
  Graph &g = m_.graph(t.graph);
  auto others = [&](SiblingKind k) {
    std::vector<NodeId> nodes;
    for (const auto &[n, count] : siblings.of(k))
      if (n != t.node)
        nodes.push_back(n);
    return nodes;
  };
  auto first = [&](SiblingKind k) -> NodeId {
    for (const auto &[n, count] : siblings.of(k))
      if (n != t.node)
        return n;
    return kNoNode;
  };
  if (NodeId n = first(SiblingKind::NetOutput); n != kNoNode)
    return keepFor("rule3-sibling-netoutput",
                   "Rule 3: sibling " + name(t.graph, n) + " is a NetOutput");
  // Extension ext-sibling-holder: a holder sibling is classified by what its
  // subgraphs do with the memory, explored now (deleting copies inside can
  // change it, so it is never cached); a control edge to or from the holder
  // orders every node inside (a call's, and a control-flow step), so the
  // scenario-5 rules below then apply to it like to any reader or writer.
  std::vector<NodeId> holderReaders, holderWriters;
  if (NodeId n = first(SiblingKind::Holder); n != kNoNode) {
    constexpr size_t kMaxHolderSiblings = 8; // explorations per copy (cost bound)
    std::vector<NodeId> holders = others(SiblingKind::Holder);
    if (opts_.conservative || holders.size() > kMaxHolderSiblings)
      return keepFor("rule3-sibling-subgraph",
                     "Rule 3: sibling " + name(t.graph, n) + " holds subgraphs");
    OutPort producerPort = trace.steps.front().port;
    for (NodeId h : holders) {
      const Node &hn = g.node(h);
      for (uint32_t i = 0; i < hn.inputs.size(); ++i) {
        if (!hn.inputs[i] || *hn.inputs[i] != producerPort)
          continue;
        if (passesMemoryOn(m_, index_, t.graph, h, i, opts_.analysisBudget))
          return keepFor("rule3-sibling-subgraph",
                         "Rule 3: sibling " + name(t.graph, h) + " holds subgraphs");
        SlotRef slot{t.graph, {h, i}};
        BufferUses uses =
            exploreUses(m_, index_, std::span<const SlotRef>(&slot, 1), opts_.analysisBudget);
        (writes(uses.access) ? holderWriters : holderReaders).push_back(h);
      }
    }
    v.holderSibling = true;
  }
  if (NodeId n = first(SiblingKind::PassesOn); n != kNoNode)
    return keepFor("rule3-sibling-passes-memory",
                   "Rule 3: sibling " + name(t.graph, n) + " passes the memory on");

  // The successors that write are few; only they pair with every reader.
  std::vector<const SuccInfo *> writingSuccs;
  for (const SuccInfo &succ : succs)
    if (writes(succ.access))
      writingSuccs.push_back(&succ);
  std::vector<NodeId> writingSiblings = others(SiblingKind::Writer);
  writingSiblings.insert(writingSiblings.end(), holderWriters.begin(), holderWriters.end());
  v.writingSibling = !writingSiblings.empty();
  for (NodeId sib : writingSiblings) {
    std::string sibName = name(t.graph, sib);
    if (!writingSuccs.empty())
      return keepFor("rule3-both-write", "Rule 3: sibling " + sibName + " and successor " +
                                             name(t.graph, writingSuccs[0]->node) +
                                             " both write the memory");
    for (const SuccInfo &succ : succs) {
      std::string succName = name(t.graph, succ.node);
      if (succ.passesOn)
        return keepFor("rule3-successor-passes-memory", "Rule 3: sibling " + sibName +
                                                            " writes the memory and successor " +
                                                            succName + " passes it on");
      // A NetOutput is not a reader that a control edge can order: the root
      // one is observed after the whole run, a subgraph's hands the memory to
      // the holder's consumers outside. An edge `NetOutput -> sibling` (one
      // the pass itself may have moved there) orders no read before the
      // write (found by graphvet fuzz --seed 1).
      if (opKind(g.node(succ.node)) == OpKind::NetOutput)
        return keepFor("rule3-successor-netoutput",
                       "Rule 3: sibling " + sibName + " writes the memory and successor " +
                           succName + " is a NetOutput, which no control edge orders before it");
      if (!g.hasCtrlEdge(succ.node, sib))
        return keepFor("rule3-no-order", "Rule 3: sibling " + sibName +
                                             " writes the memory and no control edge " + succName +
                                             " -> " + sibName + " orders it");
    }
  }
  if (writingSuccs.empty())
    return std::nullopt; // readers only: nothing to order
  size_t readers = siblings.of(SiblingKind::Reader).size() -
                   siblings.of(SiblingKind::Reader).count(t.node) + // minus the TensorMove
                   holderReaders.size();
  if (readers * writingSuccs.size() > opts_.maxSiblings)
    return keepFor("rule3-sibling-budget",
                   "Rule 3: ordering " + std::to_string(readers) +
                       " reading siblings before the writing successors would take more than " +
                       std::to_string(opts_.maxSiblings) + " control edges");
  std::vector<NodeId> readingSiblings = others(SiblingKind::Reader);
  readingSiblings.insert(readingSiblings.end(), holderReaders.begin(), holderReaders.end());
  for (NodeId sib : readingSiblings) {
    std::string sibName = name(t.graph, sib);
    for (const SuccInfo *succ : writingSuccs) {
      std::string succName = name(t.graph, succ->node);
      if (succ->node == sib)
        return keepFor("rule3-successor-is-sibling",
                       "Rule 3: successor " + succName +
                           " writes the copy and also reads the source directly");
      // A subgraph NetOutput "writes" only because a writer outside the
      // subgraph receives the memory; an edge to the NetOutput orders nothing
      // outside the call (found by tensor_move_delete_fuzzer).
      if (opKind(m_.graph(t.graph).node(succ->node)) == OpKind::NetOutput)
        return keepFor("rule3-writer-outside-subgraph",
                       "Rule 3: sibling " + sibName + " reads the memory and " + succName +
                           " hands it to a writer outside the subgraph");
      if (reaches(t.graph, succ->node, sib))
        return keepFor("rule3-cycle", "Rule 3: the control edge " + sibName + " -> " + succName +
                                          " would close a cycle");
      v.pending.push_back({sib, succ->node});
    }
  }
  return std::nullopt;
}

SiblingKind TensorMoveDeleter::classifySibling(const SlotRef &s) {
  const Node &n = m_.graph(s.graph).node(s.slot.node);
  if (opKind(n) == OpKind::NetOutput)
    return SiblingKind::NetOutput;
  if (holdsSubgraphs(n))
    return SiblingKind::Holder;
  if (passesMemoryOn(m_, index_, s.graph, n.id, s.slot.index, opts_.analysisBudget))
    return SiblingKind::PassesOn;
  if (writes(directAccess(n, s.slot.index)))
    return SiblingKind::Writer;
  return SiblingKind::Reader;
}

PortSummary &TensorMoveDeleter::summary(PortRef p) {
  auto [it, fresh] = summaries_.try_emplace(p);
  if (fresh)
    for (InPort c : m_.graph(p.graph).consumers(p.port)) {
      SlotRef s{p.graph, c};
      SiblingKind k = classifySibling(s);
      slotKinds_[s] = k;
      ++it->second.of(k)[c.node];
    }
  return it->second;
}

void TensorMoveDeleter::summaryAdd(PortRef p, const SlotRef &s) {
  auto it = summaries_.find(p);
  if (it == summaries_.end())
    return; // not summarized yet: built from the graph when first needed
  SiblingKind k = classifySibling(s);
  slotKinds_[s] = k;
  ++it->second.of(k)[s.slot.node];
}

void TensorMoveDeleter::summaryRemove(PortRef p, const SlotRef &s) {
  auto kind = slotKinds_.find(s);
  if (kind == slotKinds_.end())
    return;
  if (auto it = summaries_.find(p); it != summaries_.end()) {
    auto &nodes = it->second.of(kind->second);
    auto n = nodes.find(s.slot.node);
    if (n != nodes.end() && --n->second == 0)
      nodes.erase(n);
  }
  slotKinds_.erase(kind);
}

std::optional<Verdict> TensorMoveDeleter::checkRule4(const SourceTrace &trace, GraphId g,
                                                     const std::vector<SuccInfo> &succs) {
  const TraceStep &producer = trace.steps.front();
  OutputClass out;
  switch (trace.kind) {
  case SourceKind::Weight:
    out = OutputClass::ReadOnlyConst;
    break;
  case SourceKind::Variable:
  case SourceKind::VariableRef:
  case SourceKind::UserInput:
  case SourceKind::UnnamedUserInput:
    out = OutputClass::Writeable;
    break;
  default:
    if (trace.refOnPath)
      out = OutputClass::Writeable;
    else
      out = m_.graph(producer.graph).consumers(producer.port).size() > 1 ? OutputClass::ReadOnly
                                                                         : OutputClass::SoftRead;
  }
  for (const SuccInfo &s : succs)
    if (conflicts(out, s.access))
      return keepFor("rule4-conflict",
                     "Rule 4: the producer output " + name(producer.graph, producer.port.node) +
                         ":" + std::to_string(producer.port.index) + " is " + outputClassName(out) +
                         " and successor " + name(g, s.node) + " is " + accessClassName(s.access));
  return std::nullopt;
}

std::optional<Verdict> TensorMoveDeleter::checkRule5(NodeRef t, const SourceTrace &trace) {
  // Memory classes of semantics.md §6 for the two buffers being merged: the
  // source's (S) and the copy's (B). Only conflicts the merge creates count.
  const BufferUses &copy = tensorMoveUses(t);
  if (copy.overBudget)
    return keepFor("rule5-layout", "Rule 5: the layout analysis budget ran out");
  if (copy.rootOutputs.empty() && copy.continuousUsers.empty())
    return std::nullopt; // B carries no layout class: merging adds nothing
  const TraceStep &src = trace.steps.back();
  bool callerInput =
      trace.kind == SourceKind::UserInput || trace.kind == SourceKind::UnnamedUserInput;
  bool weight = trace.kind == SourceKind::Weight;
  // A variable has a fixed address outside the graph's memory (§6): like a
  // weight, it cannot be placed inside a continuous op's one allocation.
  bool variable = trace.kind == SourceKind::Variable || trace.kind == SourceKind::VariableRef;
  PortRef merged{src.graph, src.port};
  PortRef copyPort{t.graph, {t.node, 0}};
  // The exception of §6: every input of the continuous op is the merged buffer.
  auto allInputsMerged = [&](NodeRef c) {
    const Node &n = m_.graph(c.graph).node(c.node);
    for (const auto &in : n.inputs) {
      if (!in)
        return false;
      SourceTrace tr = traceSource(m_, index_, c.graph, *in, maxTraceSteps_);
      if (tr.steps.empty())
        return false;
      PortRef end{tr.steps.back().graph, tr.steps.back().port};
      if (end != merged && end != copyPort)
        return false;
    }
    return true;
  };
  if (callerInput || weight || variable)
    for (NodeRef c : copy.continuousUsers)
      if (!allInputsMerged(c))
        return keepFor("rule5-layout", "Rule 5: " + describe(c.graph, c.node) +
                                           " needs continuous inputs and would read " +
                                           (weight     ? "a weight"
                                            : variable ? "a variable"
                                                       : "caller memory") +
                                           " directly");
  if (weight && !copy.rootOutputs.empty())
    return keepFor("rule5-layout", "Rule 5: graph output " +
                                       std::to_string(*copy.rootOutputs.begin()) +
                                       " would be a weight");
  // The source side (its other readers) matters only now. A variable's
  // buffer is shared by every port bound to it, wherever it is.
  std::vector<SlotRef> sourceSlots = consumerSlots(m_, {src.graph, src.port});
  if (trace.kind == SourceKind::Variable || trace.kind == SourceKind::VariableRef) {
    const Node &srcNode = m_.graph(src.graph).node(src.port.node);
    std::string var =
        trace.kind == SourceKind::Variable ? srcNode.name : *refVarSrcName(srcNode, src.port.index);
    sourceSlots.clear();
    for (const PortRef &p : index_.variablePorts(var))
      for (const SlotRef &s : consumerSlots(m_, p))
        sourceSlots.push_back(s);
  }
  BufferUses source = exploreUses(m_, index_, sourceSlots, opts_.analysisBudget);
  if (source.overBudget)
    return keepFor("rule5-layout", "Rule 5: the layout analysis budget ran out");
  if (!copy.rootOutputs.empty())
    for (NodeRef c : source.continuousUsers)
      if (!(c.graph == t.graph && c.node == t.node) && !allInputsMerged(c))
        return keepFor("rule5-layout", "Rule 5: " + describe(c.graph, c.node) +
                                           " needs continuous inputs and the merged memory "
                                           "would be graph output " +
                                           std::to_string(*copy.rootOutputs.begin()));
  if (!source.rootOutputs.empty())
    for (NodeRef c : copy.continuousUsers)
      if (!allInputsMerged(c))
        return keepFor("rule5-layout", "Rule 5: " + describe(c.graph, c.node) +
                                           " needs continuous inputs and the merged memory "
                                           "would be graph output " +
                                           std::to_string(*source.rootOutputs.begin()));
  return std::nullopt;
}

} // namespace graphvet::tmd
