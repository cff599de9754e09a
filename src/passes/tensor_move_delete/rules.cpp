// TensorMoveDeletePass: the reference design, in the order of its spec
// (../shared/docs/tensor-move-delete.md, "How it decides"; the project's
// account, with the departures, is docs/passes/tensor-move-delete.md):
//
//   0. reserved attributes, and copies that are no plain copy
//   1. trace the real source (and the resize and type checks)
//      Rule 1 -- path valid (scenario 4: variables and weights)
//      Rule 2 -- caller memory (scenario 3)
//      Rule 3 -- single path
//      scenario 5 -- siblings of the producer output
//      Rule 4 -- read/write conflict
//      Rule 5 -- layout
//   and the scenario a deletion falls under.
//
// Each step keeps the TensorMove with a reason or passes; the first keep is
// the verdict. Every fact comes from the analysis (analysis.h); scenario 5's
// parts are in scenario5.cpp. The deletion itself is surgery.cpp's.
#include "passes/tensor_move_delete/rules.h"

#include "ir/op_library.h"
#include "ir/printer.h"
#include "passes/tensor_move_delete/layout.h"
#include "passes/tensor_move_delete/naming.h"

#include <map>
#include <set>

namespace graphvet::tmd {
namespace {

std::optional<Verdict> step0Reserved(Analysis &a, NodeRef t);
std::optional<Verdict> notAPlainCopy(Analysis &a, NodeRef t);
std::optional<Verdict> resizes(Analysis &a, NodeRef t, const SourceTrace &trace);
std::optional<Verdict> changesTypes(Analysis &a, NodeRef t);
std::vector<SuccInfo> successorsOf(Analysis &a, NodeRef t);
std::optional<Verdict> relinkingClosesACycle(Analysis &a, NodeRef t,
                                             const std::vector<SuccInfo> &succs);
std::optional<Verdict> rule1PathValid(Analysis &a, NodeRef t, const SourceTrace &trace,
                                      const std::vector<SuccInfo> &succs);
std::optional<Verdict> rule1VariableWriters(Analysis &a, NodeRef t, Verdict &v,
                                            const std::vector<SuccInfo> &succs);
std::optional<Verdict> rule2CallerMemory(Analysis &a, NodeRef t, const SourceTrace &trace);
std::optional<Verdict> rule3SinglePath(Analysis &a, const SourceTrace &trace);
std::optional<Verdict> scenario5Siblings(Analysis &a, const Extensions &extensions, NodeRef t,
                                         Verdict &v, const std::vector<SuccInfo> &succs,
                                         PortSummary &summary);
std::optional<Verdict> rule4ReadWriteConflict(Analysis &a, const SourceTrace &trace, GraphId g,
                                              const std::vector<SuccInfo> &succs);
std::optional<Verdict> rule5Layout(Analysis &a, NodeRef t, const SourceTrace &trace);
std::string scenarioOf(const Verdict &v, bool hasSiblings);

} // namespace

Verdict decideByDesign(Analysis &a, const Extensions &extensions, NodeRef t) {
  if (auto skip = step0Reserved(a, t))
    return *skip;
  if (auto keep = notAPlainCopy(a, t))
    return *keep;
  // 1. Trace the real source.
  Verdict v;
  v.trace = a.trace(t.graph, *a.module().graph(t.graph).node(t.node).inputs[0]);
  const SourceTrace &trace = v.trace;
  if (auto keep = resizes(a, t, trace))
    return *keep;
  if (auto keep = changesTypes(a, t))
    return *keep;
  // The successors, each explored forward once (the effective class of what
  // happens to the memory handed to it, through views and subgraphs).
  std::vector<SuccInfo> succs = successorsOf(a, t);
  if (auto keep = relinkingClosesACycle(a, t, succs))
    return *keep;
  if (auto keep = rule1PathValid(a, t, trace, succs))
    return *keep;
  if (auto keep = rule1VariableWriters(a, t, v, succs))
    return *keep;
  if (auto keep = rule2CallerMemory(a, t, trace))
    return *keep;
  // Siblings: the other consumers of the TensorMove's producer output. A
  // summary only matters when the TensorMove is not the only reader; most
  // are, and building (and keeping current) one per copy costs memory on
  // large graphs. A port left unsummarized is built from the graph when
  // first needed, so skipping it here changes nothing later.
  const TraceStep &producer = trace.steps.front();
  bool hasSiblings = a.module().graph(t.graph).consumers(producer.port).size() > 1;
  PortSummary noSiblings;
  PortSummary &siblings =
      hasSiblings ? a.siblings().summary({producer.graph, producer.port}) : noSiblings;
  if (auto keep = rule3SinglePath(a, trace))
    return *keep;
  if (auto keep = scenario5Siblings(a, extensions, t, v, succs, siblings))
    return *keep;
  if (auto keep = rule4ReadWriteConflict(a, trace, t.graph, succs))
    return *keep;
  if (auto keep = rule5Layout(a, t, trace))
    return *keep;
  // Every rule holds: name the scenario the deletion falls under.
  v.outcome = Outcome::Delete;
  v.rule = scenarioOf(v, hasSiblings);
  return v;
}

namespace {

// ---- 0. Reserved attributes, and copies that are no plain copy ---------------

std::optional<Verdict> step0Reserved(Analysis &a, NodeRef t) {
  const Node &tm = a.module().graph(t.graph).node(t.node);
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
  return std::nullopt;
}

std::optional<Verdict> notAPlainCopy(Analysis &a, NodeRef t) {
  const Graph &g = a.module().graph(t.graph);
  const Node &tm = g.node(t.node);
  if (tm.inputs.size() != 1 || !tm.inputs[0])
    return keepFor("malformed-tensor-move", "it does not have exactly one connected input");
  if (tm.numOutputs == 0)
    return keepFor("malformed-tensor-move", "it has no output");
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
  if (!a.acyclic(t.graph))
    return keepFor("cyclic-graph", "graph " + formatName(g.name) + " has a cycle");
  return std::nullopt;
}

// ---- 1. The source trace ---------------------------------------------------

std::optional<Verdict> resizes(Analysis &a, NodeRef t, const SourceTrace &trace) {
  // A copy whose output has another byte size than the buffer it copies is a
  // resize, not a redundant copy: consumers would read a different number of
  // bytes after relinking. The buffer is the traced source's (a ref or view
  // output declares its own description but shares its input's memory).
  // The reference scope compares with the description where the trace
  // stops; the extensions follow control flow to the buffers really bound
  // (a branch or loop Data declares its own description, but is its
  // holder's input).
  if (trace.steps.empty())
    return std::nullopt;
  const Module &m = a.module();
  const TraceStep &src = trace.steps.back();
  std::optional<uint64_t> bytes =
      a.options().conservative || trace.kind != SourceKind::ControlFlow
          ? outputBytes(m.graph(src.graph).node(src.port.node), src.port.index)
          : a.realBytes(trace);
  if (!sizeFits(a, t, bytes))
    return keepFor("tensor-desc-mismatch",
                   "its output tensor description differs in size from its input's");
  return std::nullopt;
}

/// Typed by inference, not by its port description (ir/types.cpp): a
/// numeric op's output or a valued constant.
bool typedByInference(const Node &n) {
  if (opKind(n) == OpKind::Weight)
    return attrTensor(n, "value") != nullptr;
  return numericDefinition(n) != nullptr;
}

std::optional<Verdict> changesTypes(Analysis &a, NodeRef t) {
  // The copy's consumers read a tensor of the copy's type (its port
  // description, tensor-semantics.md §1); relinked to the producer they read
  // the producer's type. Where the two differ, a numeric consumer would
  // compute another type (or fail to type), and a subgraph Data, a call's or
  // branch's result and an in-place output would change type with it: the
  // copy converts the type of its bytes, which no relinking keeps. Both
  // scopes, whatever the byte sizes (the resize check above compares the
  // buffers' sizes; this compares the ports' types).
  const Module &m = a.module();
  const Graph &g = m.graph(t.graph);
  const Node &tm = g.node(t.node);
  const ModuleTypes &types = a.types();
  const TensorType *copy = types.of(t.graph, t.node, 0);
  const TensorType *input = types.of(t.graph, *tm.inputs[0]);
  if (!copy || !input)
    return keepFor("tensor-type-mismatch", "its type or its input's is not known");
  if (*copy != *input)
    return keepFor("tensor-type-mismatch", "its output type " + copy->str() +
                                               " differs from its input's " + input->str() +
                                               ": its consumers would read another type");
  // Same type. A branch result's kind still counts: an If/Case whose
  // branches return different types is typed by its description while
  // every result is a placeholder buffer (a copy is one), and is a type
  // error once a numeric result takes the copy's place.
  if (g.parentNode == kNoNode || g.parentGraph == kNoGraph ||
      !typedByInference(g.node(tm.inputs[0]->node)))
    return std::nullopt;
  const Node &holder = m.graph(g.parentGraph).node(g.parentNode);
  OpKind hk = opKind(holder);
  if (hk != OpKind::Call && hk != OpKind::If && hk != OpKind::Case)
    return std::nullopt;
  for (InPort c : tm.consumers[0]) {
    const Node &out = g.node(c.node);
    if (opKind(out) != OpKind::NetOutput)
      continue;
    auto j = out.portIntAttr(false, c.index, "_parent_node_index");
    if (!j)
      continue;
    for (GraphId b : holder.subgraphs) {
      const Graph &branch = m.graph(b);
      for (NodeId r : branch.nodesOfType("NetOutput")) {
        const Node &ret = branch.node(r);
        for (uint32_t k = 0; k < ret.inputs.size(); ++k) {
          auto jk = ret.portIntAttr(false, k, "_parent_node_index");
          if (!jk || *jk != *j || !ret.inputs[k])
            continue;
          const TensorType *other = types.of(b, *ret.inputs[k]);
          if (!other || *other != *copy)
            return keepFor("tensor-type-mismatch",
                           "it is result " + std::to_string(*j) + " of " +
                               describe(m, g.parentGraph, holder.id) +
                               ", whose subgraphs return different types: without it a "
                               "numeric op's result would make that a type error");
        }
      }
    }
  }
  return std::nullopt;
}

std::vector<SuccInfo> successorsOf(Analysis &a, NodeRef t) {
  const Node &tm = a.module().graph(t.graph).node(t.node);
  std::vector<SuccInfo> succs;
  std::map<NodeId, size_t> at; // node -> position in succs (first-use order)
  for (InPort c : tm.consumers[0]) {
    auto [it, fresh] = at.emplace(c.node, succs.size());
    if (fresh)
      succs.push_back({c.node, {}, AccessClass::ReadOnly, false});
    succs[it->second].slots.push_back(c.index);
  }
  for (SuccInfo &s : succs)
    for (uint32_t slot : s.slots) {
      SlotRef start{t.graph, {s.node, slot}};
      BufferUses uses = a.explore(std::span<const SlotRef>(&start, 1));
      s.access = combine(s.access, uses.access);
      s.passesOn = s.passesOn || a.passesOn(t.graph, s.node, slot);
    }
  return succs;
}

std::optional<Verdict> relinkingClosesACycle(Analysis &a, NodeRef t,
                                             const std::vector<SuccInfo> &succs) {
  // The reference design checks, for every TensorMove, that relinking its
  // successors to the producer cannot close a cycle: a whole-graph search
  // per successor. In an acyclic graph the producer -> copy -> successor
  // path already makes the answer "no", which is why the index skips it.
  if (!a.options().naiveReachability)
    return std::nullopt;
  const Graph &g = a.module().graph(t.graph);
  const Node &tm = g.node(t.node);
  for (const SuccInfo &s : succs)
    if (g.reaches(s.node, tm.inputs[0]->node))
      return keepFor("cyclic-graph", "successor " + name(a.module(), t.graph, s.node) +
                                         " reaches the producer: relinking would close a "
                                         "cycle");
  return std::nullopt;
}

// ---- Rule 1: a path to a usable source ---------------------------------------

std::optional<Verdict> rule1PathValid(Analysis &a, NodeRef t, const SourceTrace &trace,
                                      const std::vector<SuccInfo> &succs) {
  const Module &m = a.module();
  if (trace.kind == SourceKind::None)
    return keepFor("rule1-no-path", "Rule 1: no path to a source (" + trace.failure + ")");
  if (trace.kind == SourceKind::ControlFlow)
    return keepFor("rule1-control-flow",
                   "Rule 1: the trace ends at control flow " +
                       describe(m, trace.controlFlow.graph, trace.controlFlow.node));
  bool special = trace.kind == SourceKind::Variable || trace.kind == SourceKind::VariableRef ||
                 trace.kind == SourceKind::Weight;
  if (!special)
    return std::nullopt;
  // Scenario 4: only the direct successors are examined; each must only
  // read the memory and keep it to itself.
  std::string what = "Rule 1: source " + sourceName(m, trace) + " is a " +
                     sourceKindName(trace.kind) + " and successor ";
  for (const SuccInfo &s : succs) {
    const Node &n = m.graph(t.graph).node(s.node);
    std::string succ = name(m, t.graph, s.node);
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

std::optional<Verdict> rule1VariableWriters(Analysis &a, NodeRef t, Verdict &v,
                                            const std::vector<SuccInfo> &succs) {
  const Module &m = a.module();
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
  const Node &srcNode = m.graph(src.graph).node(src.port.node);
  std::string var =
      trace.kind == SourceKind::Variable ? srcNode.name : *refVarSrcName(srcNode, src.port.index);
  const std::optional<std::vector<NodeRef>> &writers = a.variableWriters(var);
  if (!writers)
    return keepFor("rule1-variable-writers",
                   "Rule 1: the writers of variable " + var + " exceed the analysis budget");
  std::set<NodeId> seen;
  for (NodeRef w : *writers) {
    // A writer inside a subgraph is ordered through the node holding it in
    // the TensorMove's graph; a writer outside that graph is ordered with the
    // TensorMove's own holder as a whole, and so with all its successors.
    while (w.graph != t.graph && m.graph(w.graph).parentNode != kNoNode)
      w = {m.graph(w.graph).parentGraph, m.graph(w.graph).parentNode};
    if (w.graph != t.graph || !seen.insert(w.node).second || !a.reaches(t.graph, t.node, w.node))
      continue; // elsewhere, seen, or before the copy: before every successor too
    for (const SuccInfo &succ : succs) {
      if (succ.node == w.node || directlyOrdered(m.graph(t.graph), succ.node, w.node))
        continue;
      if (a.reaches(t.graph, w.node, succ.node))
        return keepFor("rule1-variable-writer-order",
                       "Rule 1: " + name(m, t.graph, w.node) + " writes variable " + var +
                           " after the copy and before successor " + name(m, t.graph, succ.node) +
                           " reads it");
      v.pending.push_back({succ.node, w.node});
    }
  }
  return std::nullopt;
}

// ---- Rule 2: caller memory ------------------------------------------------------

std::optional<Verdict> rule2CallerMemory(Analysis &a, NodeRef t, const SourceTrace &trace) {
  const Module &m = a.module();
  if (trace.kind == SourceKind::UnnamedUserInput)
    return keepFor("rule2-no-grant", "Rule 2: source " + sourceName(m, trace) +
                                         " is caller memory without an index, which no option "
                                         "can grant");
  if (trace.kind != SourceKind::UserInput)
    return std::nullopt;
  uint32_t k = trace.userInput;
  std::string input = "user input " + std::to_string(k) + " (" + sourceName(m, trace) + ")";
  if (a.options().grants.reusableInputs.count(k))
    return std::nullopt;
  std::set<uint32_t> outs = a.options().grants.outputsFor(k);
  if (outs.empty())
    return keepFor("rule2-no-grant", "Rule 2: " + input +
                                         " is caller memory and no option "
                                         "grants its reuse");
  // outputReuseInputMemIndexes grants sharing with the named graph outputs
  // only: the memory behind the TensorMove must not reach any other one.
  const BufferUses &uses = a.tensorMoveUses(t);
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

// ---- Rule 3: a single path ---------------------------------------------------

std::optional<Verdict> rule3SinglePath(Analysis &a, const SourceTrace &trace) {
  const Module &m = a.module();
  // A ref or view with two connected outputs aliasing the traced input.
  for (const TraceStep &step : trace.steps) {
    const Node &n = m.graph(step.graph).node(step.port.node);
    auto in = aliasedInput(n, step.port.index);
    if (!in)
      continue;
    for (uint32_t k = 0; k < n.numOutputs; ++k)
      if (k != step.port.index && aliasedInput(n, k) == in && !n.consumers[k].empty())
        return keepFor("rule3-multi-output-ref",
                       "Rule 3: " + describe(m, step.graph, n.id) + " has outputs " +
                           std::to_string(step.port.index) + " and " + std::to_string(k) +
                           " both aliasing its input " + std::to_string(*in));
  }
  // Fan-out above the direct producer, and Data nodes that share a buffer
  // with another Data node (same parent input or same user input).
  for (size_t i = 0; i < trace.steps.size(); ++i) {
    const TraceStep &step = trace.steps[i];
    const Graph &graph = m.graph(step.graph);
    const Node &n = graph.node(step.port.node);
    size_t consumers = graph.consumers(step.port).size();
    if (i > 0 && consumers > 1)
      return keepFor("rule3-fan-out", "Rule 3: " + describe(m, step.graph, n.id) +
                                          " on the path has " + std::to_string(consumers) +
                                          " consumers");
    if (opKind(n) != OpKind::DataSource)
      continue;
    std::span<const NodeId> sharing;
    if (step.graph == 0 && graph.parentNode == kNoNode) {
      if (auto k = n.intAttr("index"); k && *k >= 0 && *k <= INT32_MAX)
        sharing = a.index().rootDataWithIndex(static_cast<uint32_t>(*k));
    } else if (auto p = n.intAttr("_parent_node_index"); p && *p >= 0 && *p <= INT32_MAX) {
      sharing = a.index().dataForParentInput(step.graph, static_cast<uint32_t>(*p));
    }
    for (NodeId other : sharing)
      if (other != n.id && graph.node(other).alive)
        return keepFor("rule3-fan-out", "Rule 3: " + describe(m, step.graph, n.id) +
                                            " shares its memory with " +
                                            describe(m, step.graph, other));
    // The converse of the holder check below: a subgraph Data whose holder
    // also hands that input out through an aliasing output (`outK.reuse_input`
    // on the call) has a second path to the same memory outside the
    // subgraph. Found by the -O3 campaign once dce had removed the body's
    // result (value-scenario2-4aac3eac: the copy's writer then wrote a graph
    // output through the call's view).
    if (step.graph != 0 && graph.parentNode != kNoNode)
      if (auto p = n.intAttr("_parent_node_index"); p && *p >= 0 && *p <= INT32_MAX) {
        const Node &holder = m.graph(graph.parentGraph).node(graph.parentNode);
        for (uint32_t k = 0; k < holder.numOutputs; ++k)
          if (aliasedInput(holder, k) == static_cast<uint32_t>(*p) && !holder.consumers[k].empty())
            return keepFor("rule3-fan-out",
                           "Rule 3: " + describe(m, graph.parentGraph, holder.id) + " output " +
                               std::to_string(k) + " aliases its input " + std::to_string(*p) +
                               ", which " + describe(m, step.graph, n.id) + " reads");
      }
  }
  // A holder whose output aliases its input by attribute hands that input
  // to its subgraphs too (their Data for it): a use there is a path the
  // trace does not walk, and may end at another of the holder's outputs
  // (its subgraph's result) or a graph output. Found by the campaign
  // (fuzz/regressions/tensor_move_delete_fuzzer/rebound-call-second-output-alias.graph).
  for (const TraceStep &step : trace.steps) {
    const Node &n = m.graph(step.graph).node(step.port.node);
    auto in = n.subgraphs.empty() ? std::nullopt : aliasedInput(n, step.port.index);
    if (!in)
      continue;
    for (GraphId b : n.subgraphs)
      for (NodeId d : a.index().dataForParentInput(b, *in)) {
        const Node &data = m.graph(b).node(d);
        for (const std::vector<InPort> &uses : data.consumers)
          if (!uses.empty())
            return keepFor("rule3-fan-out", "Rule 3: " + describe(m, step.graph, n.id) +
                                                " on the path aliases its input " +
                                                std::to_string(*in) + ", which " +
                                                describe(m, b, d) + " also reads");
      }
  }
  return std::nullopt;
}

// ---- Scenario 5: siblings of the producer output -----------------------------

std::optional<Verdict> scenario5Siblings(Analysis &a, const Extensions &extensions, NodeRef t,
                                         Verdict &v, const std::vector<SuccInfo> &succs,
                                         PortSummary &summary) {
  // The TensorMove itself is one of the readers; every check skips it.
  const Siblings siblings{t.node, summary};
  if (NodeId n = siblings.first(SiblingKind::NetOutput); n != kNoNode)
    return keepFor("rule3-sibling-netoutput",
                   "Rule 3: sibling " + name(a.module(), t.graph, n) + " is a NetOutput");
  HolderRoles holders;
  if (auto keep = holderSiblings(a, extensions, t, v, siblings, holders))
    return keep;
  if (NodeId n = siblings.first(SiblingKind::PassesOn); n != kNoNode)
    return keepFor("rule3-sibling-passes-memory",
                   "Rule 3: sibling " + name(a.module(), t.graph, n) + " passes the memory on");
  // The successors that write are few; only they pair with every reader.
  std::vector<const SuccInfo *> writingSuccs;
  for (const SuccInfo &succ : succs)
    if (writes(succ.access))
      writingSuccs.push_back(&succ);
  std::vector<NodeId> writers = siblings.others(SiblingKind::Writer);
  writers.insert(writers.end(), holders.writers.begin(), holders.writers.end());
  if (auto keep = writingSiblings(a, t, v, succs, writers, writingSuccs))
    return keep;
  if (writingSuccs.empty())
    return std::nullopt; // readers only: nothing to order
  size_t readers = summary.of(SiblingKind::Reader).size() -
                   summary.of(SiblingKind::Reader).count(t.node) + // minus the TensorMove
                   holders.readers.size();
  if (readers * writingSuccs.size() > a.options().maxSiblings)
    return keepFor("rule3-sibling-budget",
                   "Rule 3: ordering " + std::to_string(readers) +
                       " reading siblings before the writing successors would take more than " +
                       std::to_string(a.options().maxSiblings) + " control edges");
  std::vector<NodeId> reading = siblings.others(SiblingKind::Reader);
  reading.insert(reading.end(), holders.readers.begin(), holders.readers.end());
  return readingSiblings(a, t, v, reading, writingSuccs);
}

// ---- Rule 4: read/write classes ----------------------------------------------

std::optional<Verdict> rule4ReadWriteConflict(Analysis &a, const SourceTrace &trace, GraphId g,
                                              const std::vector<SuccInfo> &succs) {
  const Module &m = a.module();
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
      out = m.graph(producer.graph).consumers(producer.port).size() > 1 ? OutputClass::ReadOnly
                                                                        : OutputClass::SoftRead;
  }
  for (const SuccInfo &s : succs)
    if (conflicts(out, s.access))
      return keepFor("rule4-conflict", "Rule 4: the producer output " +
                                           name(m, producer.graph, producer.port.node) + ":" +
                                           std::to_string(producer.port.index) + " is " +
                                           outputClassName(out) + " and successor " +
                                           name(m, g, s.node) + " is " + accessClassName(s.access));
  return std::nullopt;
}

// ---- Rule 5: layout ----------------------------------------------------------

/// The exception of semantics.md §6: every input of continuous-input op `c`
/// is the merged buffer (the source port `merged` or the copy's `copyPort`).
bool allInputsMerged(Analysis &a, NodeRef c, PortRef merged, PortRef copyPort) {
  const Node &n = a.module().graph(c.graph).node(c.node);
  for (const auto &in : n.inputs) {
    if (!in)
      return false;
    SourceTrace tr = a.trace(c.graph, *in);
    if (tr.steps.empty())
      return false;
    PortRef end{tr.steps.back().graph, tr.steps.back().port};
    if (end != merged && end != copyPort)
      return false;
  }
  return true;
}

/// Rule 5 from the source's side: its other readers, once the copy's
/// memory is a graph output or the source's is.
std::optional<Verdict> rule5SourceSide(Analysis &a, NodeRef t, const SourceTrace &trace,
                                       const BufferUses &copy) {
  const Module &m = a.module();
  const TraceStep &src = trace.steps.back();
  PortRef merged{src.graph, src.port};
  PortRef copyPort{t.graph, {t.node, 0}};
  // A variable's buffer is shared by every port bound to it, wherever it is.
  std::vector<SlotRef> sourceSlots = consumerSlots(m, {src.graph, src.port});
  if (trace.kind == SourceKind::Variable || trace.kind == SourceKind::VariableRef) {
    const Node &srcNode = m.graph(src.graph).node(src.port.node);
    std::string var =
        trace.kind == SourceKind::Variable ? srcNode.name : *refVarSrcName(srcNode, src.port.index);
    sourceSlots.clear();
    for (const PortRef &p : a.index().variablePorts(var))
      for (const SlotRef &s : consumerSlots(m, p))
        sourceSlots.push_back(s);
  }
  BufferUses source = a.explore(sourceSlots);
  if (source.overBudget)
    return keepFor("rule5-layout", "Rule 5: the layout analysis budget ran out");
  if (!copy.rootOutputs.empty())
    for (NodeRef c : source.continuousUsers)
      if (!(c.graph == t.graph && c.node == t.node) && !allInputsMerged(a, c, merged, copyPort))
        return keepFor("rule5-layout", "Rule 5: " + describe(m, c.graph, c.node) +
                                           " needs continuous inputs and the merged memory "
                                           "would be graph output " +
                                           std::to_string(*copy.rootOutputs.begin()));
  if (!source.rootOutputs.empty())
    for (NodeRef c : copy.continuousUsers)
      if (!allInputsMerged(a, c, merged, copyPort))
        return keepFor("rule5-layout", "Rule 5: " + describe(m, c.graph, c.node) +
                                           " needs continuous inputs and the merged memory "
                                           "would be graph output " +
                                           std::to_string(*source.rootOutputs.begin()));
  return std::nullopt;
}

std::optional<Verdict> rule5Layout(Analysis &a, NodeRef t, const SourceTrace &trace) {
  // Memory classes of semantics.md §6 for the two buffers being merged: the
  // source's (S) and the copy's (B). Only conflicts the merge creates count.
  const BufferUses &copy = a.tensorMoveUses(t);
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
  if (callerInput || weight || variable)
    for (NodeRef c : copy.continuousUsers)
      if (!allInputsMerged(a, c, merged, copyPort))
        return keepFor("rule5-layout", "Rule 5: " + describe(a.module(), c.graph, c.node) +
                                           " needs continuous inputs and would read " +
                                           (weight     ? "a weight"
                                            : variable ? "a variable"
                                                       : "caller memory") +
                                           " directly");
  if (weight && !copy.rootOutputs.empty())
    return keepFor("rule5-layout", "Rule 5: graph output " +
                                       std::to_string(*copy.rootOutputs.begin()) +
                                       " would be a weight");
  // The source side (its other readers) matters only now.
  return rule5SourceSide(a, t, trace, copy);
}

// ---- The scenario a deletion falls under -------------------------------------

std::string scenarioOf(const Verdict &v, bool hasSiblings) {
  const SourceTrace &trace = v.trace;
  if (hasSiblings)
    return v.holderSibling      ? std::string(v.holderSibling->tag())
           : !v.pending.empty() ? "scenario5-read-write"
           : v.writingSibling   ? "scenario5-write-read"
                                : "scenario5-read-read";
  if (trace.kind == SourceKind::UserInput)
    return "scenario3";
  if (trace.kind != SourceKind::Ordinary)
    return "scenario4";
  return trace.steps.size() > 1 ? "scenario2" : "scenario1";
}

} // namespace

} // namespace graphvet::tmd
