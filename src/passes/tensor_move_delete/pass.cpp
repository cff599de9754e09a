// TensorMoveDeletePass: the driver (pass.h). Each TensorMove is decided in
// the module's topological order (subgraphs inlined at their holder): the
// rules of the reference design (rules.cpp), then, if they keep it, the
// extensions (extension.h); a deletion is done by the surgery (surgery.cpp)
// and re-queues the TensorMoves around it (requeue.cpp), so the pass runs to
// a fixpoint (bounded by maxVisitsPerTensorMove).
#include "passes/tensor_move_delete/pass.h"

#include "ir/op_library.h"
#include "passes/tensor_move_delete/naming.h"
#include "passes/tensor_move_delete/rules.h"
#include "passes/tensor_move_delete/surgery.h"

namespace graphvet::tmd {

Verdict Pass::decide(NodeRef t) {
  a_.forgetTensorMoveUses();
  a_.setWhileResultsCopied(false);
  Verdict v = decideByDesign(a_, extensions_, t);
  if (extensions_.empty() || v.outcome != Outcome::Keep)
    return v;
  // Keeps that no extension may lift: the TensorMove is not a plain copy,
  // or the graph is broken. (Of the traces without a source, the
  // extensions take only one that ends at a buffer of its own reading zero
  // bytes: unconnectedOwnBuffer.)
  static const std::set<std::string, std::less<>> kFinal = {
      "malformed-tensor-move", "variable-bound-copy", "cyclic-graph", "tensor-desc-mismatch",
      "tensor-type-mismatch"};
  // Nor in a module holding a rebound holder (ModuleIndex::isRebound): the
  // extensions' call, loop and branch reasoning assumes a While's output j
  // is its input j and a holder's output is its subgraph's result, and the
  // variables such a holder writes reach copies anywhere (by name, through
  // branches and loops). Rare, so little is lost (found by the generator's
  // coverage, issue 21).
  if (kFinal.count(v.rule) || a_.index().anyRebound())
    return v;
  // The extensions see that a While copies its results into its loop
  // variables: a copy returned by a cond or body goes nowhere else.
  a_.forgetTensorMoveUses();
  a_.setWhileResultsCopied(true);
  if (auto ext = tryExtensions(a_, extensions_, t, v))
    return *ext;
  return v;
}

bool Pass::tryDelete(NodeRef t, Verdict &v, Remark &remark) {
  Graph &g = m_.graph(t.graph);
  OutPort producer = *g.node(t.node).inputs[0];
  std::vector<InPort> consumers = g.node(t.node).consumers[0];
  std::vector<NodeId> ctrlNeighbours = g.node(t.node).ctrlIn;
  for (NodeId n : g.node(t.node).ctrlOut)
    ctrlNeighbours.push_back(n);
  std::vector<std::string> added, moved;
  std::string tmName = name(m_, t.graph, t.node);
  std::string source = describeSource(m_, v.trace);
  std::string rule = v.rule;
  std::string lifted = v.reason; // for an extension: the rule that kept it
  std::string argument = v.plannedBy ? std::string(v.plannedBy->argument()) : "";
  std::vector<SourceTrace> ends = v.ends.empty() ? std::vector<SourceTrace>{v.trace} : v.ends;
  BufferUses copyUses = a_.tensorMoveUses(t);
  bool resizing = false; // deleted because its readers ignore the resize
  if (!opts_.conservative && !v.trace.steps.empty()) {
    const TraceStep &e = v.trace.steps.back();
    resizing = outputBytes(g.node(t.node), 0) !=
               (v.trace.kind == SourceKind::ControlFlow
                    ? a_.realBytes(v.trace)
                    : outputBytes(m_.graph(e.graph).node(e.port.node), e.port.index));
  }
  if (!deleteTensorMove(a_, t, v, added, moved))
    return false;
  stats_.ctrlEdgesAdded += static_cast<int64_t>(added.size() + moved.size());
  a_.noteMerge(ends, copyUses);
  std::string msg = "deleted " + tmName + " (" + source;
  if (!lifted.empty()) // an extension that lifted a rule's keep
    msg += argument + " (the design keeps it: " + lifted + ")";
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
  ++deletedSinceSweep_;
  return true;
}

bool Pass::retryWithExtensions(NodeRef t, Verdict &v, bool fromExtension) {
  // The surgery was refused (v now keeps): a design verdict whose control
  // successors cannot follow the consumers may still be an extension's,
  // which needs no such edge where it would close a cycle.
  if (fromExtension || extensions_.empty() || v.rule != "ctrl-order-cycle")
    return false;
  // (The copy's uses are explored afresh, but with the design's view of a
  // While's results, which decide() left set: as the pass always did.)
  a_.forgetTensorMoveUses();
  std::optional<Verdict> ext = tryExtensions(a_, extensions_, t, v);
  if (!ext)
    return false;
  v = std::move(*ext);
  return true;
}

void Pass::visit(NodeRef t, Log &log) {
  TensorMoveState &st = *stateOf(t);
  const Graph &g = m_.graph(t.graph);
  Remark remark;
  remark.pass = std::string(kTensorMoveDeleteName);
  remark.node = g.node(t.node).name;
  remark.graph = g.name;
  remark.loc = g.node(t.node).loc;
  Verdict v = decide(t);
  for (int attempt = 0; attempt < 2 && v.outcome == Outcome::Delete; ++attempt) {
    bool fromExtension = v.looseSuccessors;
    if (tryDelete(t, v, remark) || attempt > 0 || !retryWithExtensions(t, v, fromExtension))
      break;
  }
  if (v.outcome != Outcome::Delete) {
    remark.decision = v.outcome == Outcome::Skip ? "skipped" : "kept";
    remark.rule = v.rule;
    remark.message = remark.decision + " " + name(m_, t.graph, t.node) + ": " + v.reason;
  }
  record(st, t, std::move(remark), log);
}

void Pass::record(TensorMoveState &st, NodeRef t, Remark remark, Log &log) {
  const Graph &g = m_.graph(t.graph);
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
      return;
    log[st.logIndex].reset();
  }
  st.logIndex = log.size();
  log.push_back(std::move(remark));
}

bool Pass::sweep(const std::vector<NodeRef> &all) {
  // A While body's result became its loop variable (loopResultsChanged_),
  // or, with the extensions, some copy went since the kept ones were last
  // all decided: decide them once more, so that the result is a fixpoint
  // (a second run changes nothing). The extensions see one buffer through
  // views, ref outputs and control flow, so a deletion can lift a keep far
  // from its neighbours (requeueNeighbours covers the near ones; found by
  // PassProps.ASecondRunChangesNothing, RC seeds 320, 327, 352, 378).
  // Bounded: each decision spends one of a copy's visits, and a sweep
  // that deletes nothing ends the loop.
  bool again = loopResultsChanged_ || (!opts_.conservative && deletedSinceSweep_ > 0);
  if (!again)
    return false;
  loopResultsChanged_ = false;
  deletedSinceSweep_ = 0;
  a_.startSweep();
  for (NodeRef t : all) {
    TensorMoveState *st = stateOf(t);
    if (!m_.graph(t.graph).node(t.node).alive || !st || !st->decided || st->queued || st->skipped ||
        st->outcome != Outcome::Keep || st->visits >= opts_.maxVisitsPerTensorMove)
      continue;
    queue_.push_back(t);
    st->queued = true;
  }
  return true;
}

TensorMoveDeleteStats Pass::run(std::vector<Remark> *remarks) {
  std::vector<NodeRef> all = a_.tensorMovesInOrder();
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
  Log log;
  log.reserve(all.size());
  do {
    while (!queue_.empty()) {
      NodeRef t = queue_.front();
      queue_.pop_front();
      TensorMoveState &st = *stateOf(t);
      st.queued = false;
      if (!m_.graph(t.graph).node(t.node).alive)
        continue;
      ++st.visits;
      forgetKept(t);
      visit(t, log);
    }
  } while (sweep(all));
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
  tmd::Pass pass(m, options);
  return pass.run(remarks);
}

} // namespace graphvet
