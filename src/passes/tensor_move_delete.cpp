// TensorMoveDeletePass. Each TensorMove is decided in the module's
// topological order (subgraphs inlined at their holder): reserved attributes,
// then the source trace and Rules 1-5 of the design, then, if every rule
// holds, the deletion. A deletion re-queues the TensorMoves around it, so the
// pass runs to a fixpoint (bounded by maxVisitsPerTensorMove).
// docs/passes/tensor-move-delete.md is the user-facing account of the rules,
// including where this implementation departs from the reference design.
#include "passes/tensor_move_delete.h"

#include "ir/op_library.h"
#include "ir/printer.h"
#include "passes/buffer_analysis.h"
#include "passes/order_index.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>

namespace graphvet {
namespace {

enum class Outcome { Delete, Keep, Skip };

/// Hash of a port or slot reference, for the pass's lookup-only tables.
struct RefHash {
  static size_t mix(uint64_t a, uint64_t b) {
    uint64_t h = (a << 32 | b) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(h ^ (h >> 29));
  }
  size_t operator()(const PortRef &p) const {
    return mix(p.graph, p.port.node) ^ (p.port.index * 0xC2B2AE3D27D4EB4Full);
  }
  size_t operator()(const SlotRef &s) const {
    return mix(s.graph, s.slot.node) ^ (s.slot.index * 0xC2B2AE3D27D4EB4Full);
  }
};

/// A TensorMove's successor (a node consuming its output), with what it does
/// to the memory it gets from the TensorMove.
struct SuccInfo {
  NodeId node = kNoNode;
  std::vector<uint32_t> slots;
  AccessClass access = AccessClass::ReadOnly; ///< effective, through aliases
  bool passesOn = false;
};

/// What a consumer slot of a producer output is, as a sibling of a
/// TensorMove reading the same output (scenario 5), in order of precedence.
enum class SiblingKind : uint8_t { NetOutput, Holder, PassesOn, Writer, Reader };
constexpr size_t kSiblingKinds = 5;

/// The consumers of one producer output grouped by SiblingKind: node ->
/// number of its slots of that kind. Kept up to date while TensorMoves are
/// deleted, so a hub feeding many TensorMoves is summarized once, not once
/// per TensorMove.
struct PortSummary {
  std::array<std::map<NodeId, uint32_t>, kSiblingKinds> byKind;
  std::map<NodeId, uint32_t> &of(SiblingKind k) { return byKind[static_cast<size_t>(k)]; }
};

struct Verdict {
  Outcome outcome = Outcome::Keep;
  std::string rule;
  std::string reason; ///< for Keep/Skip: "Rule 3: sibling out is a NetOutput"
  SourceTrace trace;
  /// Scenario-5 control edges sibling -> successor to add before deleting.
  std::vector<std::pair<NodeId, NodeId>> pending;
  /// Control edges an extension adds before deleting, each in the innermost
  /// graph holding both ends (graph, from, to).
  std::vector<std::tuple<GraphId, NodeId, NodeId>> orderEdges;
  /// Set by the extensions, whose checks already order every writer of the
  /// source against the copy's readers: an edge consumer -> control
  /// successor of the copy that would close a cycle may then be left out
  /// (the successor writes neither the source nor, unordered, the copy);
  /// the copy's control predecessors are ordered before it directly.
  bool looseSuccessors = false;
  /// For an extension: every buffer the source can be (control flow
  /// resolved); empty for the design's rules (the trace's source).
  std::vector<SourceTrace> ends;
  /// Scenario 5 facts for naming the deletion: a sibling writes; a sibling
  /// holds subgraphs (allowed only by the ext-sibling-holder extension).
  bool writingSibling = false;
  bool holderSibling = false;
};

/// The verdict of an extension that deletes the copy the design kept (its
/// rule `kept.rule` is named as the reason).
Verdict extensionDelete(std::string rule, const Verdict &kept, SourceTrace trace,
                        std::vector<SourceTrace> ends,
                        std::vector<std::tuple<GraphId, NodeId, NodeId>> orderEdges = {}) {
  Verdict v;
  v.outcome = Outcome::Delete;
  v.rule = std::move(rule);
  v.looseSuccessors = true;
  v.reason = kept.rule;
  v.orderEdges = std::move(orderEdges);
  v.trace = std::move(trace);
  v.ends = std::move(ends);
  return v;
}

/// True when an edge from `from` to `to` already orders all of `from` before
/// all of `to`: a control edge, or a data edge between two nodes that are not
/// calls. (A call is transparent: a data edge into it orders the producer
/// only before the subgraph's readers of that input, and a data edge out of
/// it only orders what produced that result. A control edge to or from a
/// call covers every node inside.)
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

Verdict keepFor(std::string rule, std::string reason) {
  Verdict v;
  v.outcome = Outcome::Keep;
  v.rule = std::move(rule);
  v.reason = std::move(reason);
  return v;
}

std::string joinLimited(const std::vector<std::string> &items, size_t limit) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < limit; ++i)
    out += (i ? ", " : "") + items[i];
  if (items.size() > limit)
    out += ", +" + std::to_string(items.size() - limit) + " more";
  return out;
}

class TensorMoveDeleter {
public:
  TensorMoveDeleter(Module &m, const TensorMoveDeleteOptions &options)
      : m_(m), opts_(options), index_(m), orders_(m.numGraphs()) {
    for (GraphId g = 0; g < m.numGraphs(); ++g)
      maxTraceSteps_ += m.graph(g).capacity();
    maxTraceSteps_ += 1;
  }

  TensorMoveDeleteStats run(std::vector<Remark> *remarks);

private:
  OrderIndex &order(GraphId g);
  std::vector<NodeRef> tensorMovesInOrder();
  /// Ordering questions, answered by the topological index or, with
  /// naiveReachability, by whole-graph searches (same answers).
  bool reaches(GraphId g, NodeId from, NodeId to);
  bool addCtrlEdge(GraphId g, NodeId from, NodeId to, bool *added);

  std::string name(GraphId g, NodeId n) const;
  std::string describe(GraphId g, NodeId n) const {
    return m_.graph(g).node(n).type + " " + name(g, n);
  }
  std::string describeSource(const SourceTrace &t) const;
  std::string sourceName(const SourceTrace &t) const;

  Verdict decide(NodeRef t);
  Verdict decideByDesign(NodeRef t);
  /// Extensions beyond the design (not in conservative mode): a TensorMove
  /// the rules kept is deleted when every buffer its source can be is written
  /// only before the copy, the copy is never written, and merging adds no
  /// observable alias or layout class (ext-readonly-source,
  /// ext-readonly-control-flow).
  std::optional<Verdict> tryReadOnlyMemory(NodeRef t, const Verdict &kept);
  /// The writers that really write: a While writes a loop variable back
  /// only when the body's result for it is not that variable itself
  /// (semantics.md §2; the design counts every While input as written).
  /// `excuseWhiles` is false for the uses of a copy whose source control
  /// flow decides at run time: once merged, the loop variable is that
  /// run-time choice, which is written back.
  std::vector<NodeRef> effectiveWriters(const std::vector<NodeRef> &writers,
                                        const std::vector<SlotRef> &slots,
                                        bool excuseWhiles = true) const;
  std::vector<NodeRef> effectiveWriters(const BufferUses &u, bool excuseWhiles = true) const {
    return effectiveWriters(u.writers, u.writerSlots, excuseWhiles);
  }
  /// True when `n` lies in graph `g` or in a subgraph nested in it.
  bool insideGraph(NodeRef n, GraphId g) const;
  /// The buffer a trace ends at is made afresh by a node: an ordinary
  /// output, not a branch Data on an unconnected input (whose buffer keeps
  /// what is written there for the next run: graphvet fuzz --seed 2938).
  bool computedFresh(const SourceTrace &end) const;
  /// The source is a user input whose content after the run the options
  /// leave unspecified (semantics.md §4), and every graph output the copy
  /// reaches may share it.
  bool grantedForCopy(const SourceTrace &end, const BufferUses &copy) const;
  /// The nodes of `visited` slots, each once in visiting order, without
  /// calls (which access nothing themselves: their bodies' nodes are
  /// visited in their own right), without ops that access nothing (every
  /// output a view or variable-bound: their outputs' consumers are visited
  /// or read another buffer) and without `except`.
  std::vector<NodeRef> accessingNodes(const std::vector<SlotRef> &visited,
                                      std::initializer_list<NodeRef> except) const;
  /// True when the copy's continuous-input consumers may read the source
  /// instead: no end is caller memory, a weight or a graph output.
  bool continuousMergeAllowed(NodeRef t, const std::vector<SourceTrace> &ends,
                              const BufferUses &copy);
  /// After the copy's deletion every input of continuous-input op `user` is
  /// on one buffer (semantics.md §6 exempts it): each is the copy or the very
  /// port the copy reads (in the copy's graph), or a port bound to the
  /// copy's buffer or to the source's one buffer (oneBufferOf). The caller
  /// checks that the port the copy reads is one buffer.
  bool exemptAfterMerge(NodeRef t, NodeRef user);
  /// The one buffer port `in` of graph `g` is bound to, as the port that
  /// makes it (through views and ref outputs, and control flow that binds
  /// one buffer only); nullopt when it is several or unknown.
  std::optional<std::pair<GraphId, OutPort>> oneBufferOf(GraphId g, OutPort in);
  /// The merged buffer, a graph output wherever the copy is one, would
  /// conflict (semantics.md §6) with a continuous-input op reading the
  /// source that the original does not have that conflict with.
  bool sourceLayoutAddsConflict(NodeRef t, const SourceTrace &end, const BufferUses &copy,
                                bool oneBuffer);
  /// Extension ext-loop-variable: a copy of a While's loop variable inside
  /// the loop, when nothing in the loop writes that variable.
  std::optional<Verdict> tryLoopVariable(NodeRef t, const Verdict &kept, SourceTrace trace);
  /// Extension ext-loop-write-back: a copy of a While body's loop variable
  /// that the body returns as that same loop variable, written in place of
  /// the variable when nothing else in the body needs its old bytes; and
  /// ext-loop-overwritten: the same when the body returns, as that loop
  /// variable, another buffer made in the body (the write-back overwrites
  /// whatever the copy's writes left in the variable).
  std::optional<Verdict> tryLoopWriteBack(NodeRef t, const Verdict &kept, SourceTrace trace);
  /// Extension ext-readers-before-writers: the control edges (reader ->
  /// writer, in the TensorMove's graph) that put every reader of the copy's
  /// memory before each writer in `late`, which may run after the copy;
  /// nullopt when some reader or writer is outside the TensorMove's graph,
  /// an edge would close a cycle, or more than a few edges would be needed.
  struct Ordering {
    std::vector<std::tuple<GraphId, NodeId, NodeId>> edges; ///< (graph, from, to)
  };
  std::optional<Ordering> orderReadersBeforeWriters(NodeRef t, const std::vector<NodeRef> &late);
  /// The control edges that put every node of `firsts` before every node of
  /// `seconds`: for each pair, in the innermost graph holding both, each
  /// taken at the node of that graph holding it; nullopt when a pair shares
  /// that node, an edge would close a cycle or more than a few edges would
  /// be needed.
  /// `excused(first, second)` names pairs that need no ordering. A pair in
  /// two different branches of one If/Case needs none either when that
  /// holder runs at most once per run of the copy `t` (no loop around it
  /// that is not around `t`): only one branch runs.
  std::optional<Ordering>
  orderBefore(NodeRef t, const std::vector<NodeRef> &firsts, const std::vector<NodeRef> &seconds,
              const std::function<bool(NodeRef, NodeRef)> &excused = nullptr);
  /// True when the copy `t` and the node `w` are in two different branches
  /// of one If/Case: in a run (or loop iteration) where the copy runs, `w`
  /// does not, and the copy's readers read its buffer only in that run or
  /// iteration. A writer of the source there never runs between the copy
  /// and its readers. (Not for writers of the copy: the source persists
  /// across loop iterations, the copy does not.)
  bool otherBranch(NodeRef t, NodeRef w) const;
  /// The subgraph of `holder` that holds `n` (at any depth), or kNoGraph.
  GraphId subgraphOf(NodeRef holder, NodeRef n) const;
  /// Extension ext-written-copy: a copy that is written, of a fresh buffer
  /// nothing else needs once the copy's writes begin.
  std::optional<Verdict> tryWrittenCopy(NodeRef t, const Verdict &kept, SourceTrace trace,
                                        std::vector<SourceTrace> ends);
  /// Extension ext-scribbled-pair: a copy written only by a scribbler that
  /// takes the source too; whichever of the two it takes later is accessed
  /// only before it (and, for the source, seen by nobody afterwards).
  std::optional<Verdict> tryScribbledPair(NodeRef t, const Verdict &kept, SourceTrace trace,
                                          std::vector<SourceTrace> ends, bool sourceFirstOnly);
  /// Extension ext-dead-loop-pair: a copy written only by a While that also
  /// takes the (fresh) source, reads neither inside and hands neither on.
  std::optional<Verdict> tryDeadLoopPair(NodeRef t, const Verdict &kept, SourceTrace trace,
                                         std::vector<SourceTrace> ends);
  /// Extension ext-loop-mirror: a copy written only by a While that takes
  /// the source too and keeps every loop variable bound to either equal.
  std::optional<Verdict> tryLoopMirror(NodeRef t, const Verdict &kept, SourceTrace trace,
                                       std::vector<SourceTrace> ends);
  /// The possible real sources of a trace that ended at control flow: a
  /// branch Data continues at the holder's input, an If/Case output at every
  /// branch's result, a While output at the While's input (its loop variable
  /// lives there). nullopt when a loop body's Data is involved, a link is
  /// missing or the expansion budget runs out. With `allBindings`, every
  /// binding of the memory plan is followed instead: a loop's Data too, and
  /// a slot left unconnected or unbound ends at the port's own buffer.
  /// `followLoops` follows a loop Data to the While's input (the loop
  /// variable's buffer) without the rest of allBindings.
  std::optional<std::vector<SourceTrace>>
  resolveControlFlow(const SourceTrace &trace, bool allBindings = false, bool followLoops = false);
  /// The byte size of the buffer a trace really ends at: every buffer
  /// resolveControlFlow(trace, true) finds, when they agree. nullopt when
  /// they differ in size or the walk is cut off.
  std::optional<uint64_t> realBytes(const SourceTrace &trace);
  /// True when the copy `t` may stand for a source of `sourceBytes` bytes:
  /// the sizes agree, or (extensions) every reader of the copy would read
  /// the same bytes from the source (readersIgnoreResize).
  bool sizeFits(NodeRef t, std::optional<uint64_t> sourceBytes);
  /// Every reader of a copy of `copyBytes` bytes from a source of
  /// `sourceBytes` bytes takes r bytes of it with copyBytes >= min(
  /// sourceBytes, r): a loop condition (the cond's result 0, r = 1), an
  /// If/Case condition (r = 1), a copy (TensorMove, Identity, MemcpyAsync)
  /// of r bytes, a While write-back into a loop variable of r bytes. Views
  /// of the copy, the Data of calls and branches that take it and the
  /// outputs of calls and branches that return it are its buffer too: their
  /// readers count instead. Each such reader gets the source's first
  /// min(sourceBytes, r) bytes either way and, past the source's end, the
  /// padding of a copy (Departure 13).
  bool readersIgnoreResize(NodeRef t, uint64_t copyBytes, uint64_t sourceBytes);
  /// The trace stopped at a call body's Data whose slot in the call is left
  /// `_`, or at a view of an unconnected input: the memory plan gives that
  /// port a fresh buffer of its own, reading zero bytes (semantics.md §2).
  bool unconnectedOwnBuffer(const SourceTrace &trace) const;
  /// The copy's writes may land in the buffer `end` ends at: nobody
  /// observes it (a fresh buffer, or a user input granted for the copy's
  /// graph outputs; no graph output itself, no new §6 conflict).
  bool writesMayLandIn(NodeRef t, const SourceTrace &end, const BufferUses &copy, bool oneBuffer);
  /// Every node accessing the buffer `end` ends at that may run after the
  /// copy `t` (calls and `t` left out: a call's body nodes come in their own
  /// right). nullopt when the exploration runs out of budget or finds more
  /// than 64 accesses.
  std::optional<std::vector<NodeRef>> sourceAccessesAfterCopy(NodeRef t, const SourceTrace &trace,
                                                              const SourceTrace &end);
  /// Identity of the buffer a (non-control-flow) trace ends at.
  using BufferKey = std::tuple<int, GraphId, NodeId, uint32_t, std::string>;
  BufferKey bufferKey(const SourceTrace &trace) const;
  /// What the whole module does with one buffer (every alias included).
  struct BufferFacts {
    bool overBudget = false;
    std::set<uint32_t> rootOutputs;   ///< the graph outputs bound to it
    bool continuous = false;          ///< some continuous-input op reads it
    std::vector<NodeRef> writers;     ///< every node writing or scribbling on it
    std::vector<SlotRef> writerSlots; ///< the slot of each writer
  };
  /// The copy's only writer (every entry of copy.writers), when it is a
  /// While in the copy's graph with a cond and a body that does not
  /// scribble its inputs (ext-dead-loop-pair, ext-loop-mirror).
  std::optional<NodeRef> onlyLoopWriter(NodeRef t, const BufferUses &copy) const;
  /// `w` is a While in graph `g` with a cond and a body that does not
  /// scribble its inputs.
  bool plainLoopIn(NodeRef w, GraphId g) const;
  /// The module holds a rebound holder (ModuleIndex::isRebound): the
  /// extensions stay out of it.
  bool touchesReboundControlFlow() const;
  /// The inputs of the While `w` through which it takes the source's or the
  /// copy's memory (its loop variables bound to either).
  std::set<uint32_t> loopVariablesOf(NodeRef w, const BufferFacts &source,
                                     const BufferUses &copy) const;
  /// Cached per buffer; deletions keep the cache current through noteMerge.
  const BufferFacts &bufferFacts(const SourceTrace &trace);
  /// Some op of `users` (continuous-input ops) is not exempt from §6.
  bool anyNonExempt(const std::vector<NodeRef> &users);
  /// The input slots that read the buffer a trace ends at directly.
  std::vector<SlotRef> bufferSlots(const SourceTrace &trace) const;
  /// True when writer `w` cannot change the source between the TensorMove
  /// and any read of the copy's memory (`copy`, when given): it is ordered
  /// before the copy (an edge, or a path that orders, see
  /// orderedWithoutCalls) or on its trace path (through call boundaries
  /// too), after lifting a writer inside a control-flow holder to the holder
  /// (which runs as one step); it is inside a call with a control edge to
  /// the copy or a holder, or before a call holding the copy by a control
  /// edge; or, for a copy inside If/Case/While holders, it is ordered before
  /// the holder, runs in another subgraph of it, or is outside a holder the
  /// copy's memory never leaves. (Used by the extensions only.)
  /// A path of data or control edges leads from `from` to `to` in graph `g`
  /// on which every step runs before the next: an If/Case/While runs as one
  /// step, and a call is passed only where it orders its ends (entered by a
  /// control edge; or by a data edge into an input its body reads, and left
  /// by a control edge). Searches at most kMaxOrderSearch nodes placed
  /// between the two ends; false when the budget runs out.
  bool orderedWithoutCalls(GraphId g, NodeId from, NodeId to);
  /// For a writer inside call `call` (nested at any depth): a control edge
  /// from a call holding it leads to one of `holders` (by a path without
  /// calls), which orders every node inside before it.
  bool calledBefore(NodeRef call, const std::vector<NodeRef> &holders);
  /// Nothing `n` computes can be observed: it writes nothing in place (no
  /// ref output, scribble or variable binding), is an ordinary op or a copy,
  /// and every consumer of its outputs is dead too (a NetOutput, call or
  /// control-flow consumer is not, except the result of a call, If or Case
  /// for an output of the holder that nobody consumes). Searches at most
  /// kMaxDeadSearch nodes; false when the budget runs out. Deleting copies
  /// changes an answer only from live to dead (the memo keeps "live"): a
  /// deleted copy's consumers move to its producer, and both were dead or
  /// both live, except that a holder output may lose its last consumer.
  bool isDead(NodeRef n);
  /// `w` is a node of the copy's trace path (through call boundaries too).
  bool onTracePath(const SourceTrace &trace, NodeRef w) const;
  /// The copy feeds its subgraph's NetOutput, and that subgraph is a call
  /// body: the result stands for readers outside the call.
  bool feedsCallResult(NodeRef t) const;
  /// A call holding the copy (at any depth) has a control edge from the
  /// writer, or from a node the writer is ordered before (a path without
  /// calls), in the writer's graph.
  bool beforeEnclosingCall(NodeRef t, NodeRef w);
  /// Every graph output in `outputs` takes the same port of the root graph.
  bool onePort(const std::set<uint32_t> &outputs) const;
  bool precedesCopy(NodeRef t, const SourceTrace &trace, NodeRef w,
                    const BufferUses *copy = nullptr);
  /// After a deletion merged a copy into the buffer(s) `ends`: the copy's
  /// accesses become the source's.
  void noteMerge(const std::vector<SourceTrace> &ends, const BufferUses &copy);
  std::optional<Verdict> checkRule1(NodeRef t, const SourceTrace &trace,
                                    const std::vector<SuccInfo> &succs);
  std::optional<Verdict> checkVariableWriters(NodeRef t, Verdict &v,
                                              const std::vector<SuccInfo> &succs);
  std::optional<Verdict> checkRule2(NodeRef t, const SourceTrace &trace);
  std::optional<Verdict> checkRule3(NodeRef t, Verdict &v, const std::vector<SuccInfo> &succs,
                                    PortSummary &siblings);
  std::optional<Verdict> checkRule4(const SourceTrace &trace, GraphId g,
                                    const std::vector<SuccInfo> &succs);
  std::optional<Verdict> checkRule5(NodeRef t, const SourceTrace &trace);
  const BufferUses &tensorMoveUses(NodeRef t);

  /// Adds the pending and moved control edges and removes the TensorMove.
  /// Returns false (with the graph unchanged) when an edge would close a
  /// cycle; `v` then becomes the keep verdict.
  bool apply(NodeRef t, Verdict &v, std::vector<std::string> &added,
             std::vector<std::string> &moved);
  void requeueNeighbours(NodeRef t, OutPort producer, const std::vector<InPort> &consumers,
                         const std::vector<NodeId> &ctrlNeighbours);

  Module &m_;
  const TensorMoveDeleteOptions &opts_;
  ModuleIndex index_;
  std::vector<std::unique_ptr<OrderIndex>> orders_;
  /// Per graph and node: 0 not known yet, 1 dead, 2 live (see isDead).
  std::vector<std::vector<uint8_t>> dead_;
  std::vector<std::optional<std::vector<NodeId>>> topo_;
  size_t maxTraceSteps_ = 0;
  TensorMoveDeleteStats stats_;

  // Fixpoint bookkeeping, in arrays indexed by each TensorMove's position in
  // the initial order (its ordinal): constant time per access and no tree
  // walks over 10^5 entries on large graphs.
  struct TensorMoveState {
    unsigned visits = 0;
    bool queued = false;
    bool skipped = false;
    bool decided = false;
    Outcome outcome = Outcome::Keep;
    size_t logIndex = SIZE_MAX; ///< position of its remark in the log
    std::optional<PortRef> keptPort;
  };
  std::deque<NodeRef> queue_;
  /// A deletion made a While body's result the copy's source: the While may
  /// no longer write a loop variable back, which any alias of that buffer
  /// can see, so run() decides the kept copies once more.
  bool loopResultsChanged_ = false;
  std::vector<TensorMoveState> state_;
  /// Per graph, node id -> ordinal (UINT32_MAX for other nodes).
  std::vector<std::vector<uint32_t>> ordinal_;
  TensorMoveState *stateOf(NodeRef t);
  /// Kept TensorMoves by the port they read, so a deletion finds the kept
  /// copies of the same producer without scanning its consumers.
  std::unordered_map<PortRef, std::set<NodeRef>, RefHash> keptByPort_;
  void forgetKept(NodeRef t);

  // Sibling summaries by producer port, and the kind each summarized slot
  // was counted as (to take it out again).
  // (Hash maps: only ever looked up, never iterated, so their order cannot
  // leak into decisions; a tree of 10^5 ports costs a cache miss per level.)
  std::unordered_map<PortRef, PortSummary, RefHash> summaries_;
  std::unordered_map<SlotRef, SiblingKind, RefHash> slotKinds_;
  /// Writers of each variable's buffer anywhere in the module (nullopt when
  /// the exploration ran out of budget). Deleting TensorMoves never creates
  /// a writer of a variable, so the cache stays valid.
  std::map<std::string, std::optional<std::vector<NodeRef>>> variableWriters_;
  SiblingKind classifySibling(const SlotRef &s);
  PortSummary &summary(PortRef p);
  void summaryAdd(PortRef p, const SlotRef &s);
  void summaryRemove(PortRef p, const SlotRef &s);

  // Per-decision cache of the forward exploration from the TensorMove.
  std::optional<BufferUses> tmUses_;
  /// tmUses_ treats a While's results as copied (set for the extensions).
  bool preciseWhileResults_ = false;
  /// bufferFacts' cache. Monotone: a buffer only ever gains accesses
  /// (deletions merge copies into it), so facts are only ever added.
  std::map<BufferKey, BufferFacts> facts_;
};

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
  if (kFinal.count(v.rule) || touchesReboundControlFlow())
    return v;
  // The extensions see that a While copies its results into its loop
  // variables: a copy returned by a cond or body goes nowhere else.
  tmUses_.reset();
  preciseWhileResults_ = true;
  if (auto ext = tryReadOnlyMemory(t, v))
    return *ext;
  return v;
}

bool TensorMoveDeleter::touchesReboundControlFlow() const {
  // The extensions' call, loop and branch reasoning assumes a While's output
  // j is its input j and a holder's output is its subgraph's result; a
  // rebound holder (ModuleIndex::isRebound) breaks that, and the variables
  // it writes reach copies anywhere (by name, through branches and loops).
  // Such modules are left to the design's rules (found by the generator's
  // coverage, issue 21): rare, so little is lost.
  return index_.anyRebound();
}

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

bool TensorMoveDeleter::sizeFits(NodeRef t, std::optional<uint64_t> sourceBytes) {
  std::optional<uint64_t> copyBytes = outputBytes(m_.graph(t.graph).node(t.node), 0);
  if (copyBytes == sourceBytes)
    return true;
  if (opts_.conservative || !copyBytes || !sourceBytes)
    return false;
  return *copyBytes > 0 && *sourceBytes > 0 && readersIgnoreResize(t, *copyBytes, *sourceBytes);
}

bool TensorMoveDeleter::readersIgnoreResize(NodeRef t, uint64_t copyBytes, uint64_t sourceBytes) {
  // A reader of r bytes sees the same bytes through the copy as from the
  // source when the copy keeps every source byte the reader takes.
  constexpr size_t kMaxPorts = 64; // ports bound to the copy examined (cost bound)
  auto fits = [&](uint64_t r) { return copyBytes >= std::min(sourceBytes, r); };
  // Every port bound to the copy's buffer: the copy, its views, and the
  // outputs of the calls, Ifs and Cases that return it.
  std::vector<std::pair<GraphId, OutPort>> ports{{t.graph, OutPort{t.node, 0}}};
  for (size_t next = 0; next < ports.size(); ++next) {
    if (ports.size() > kMaxPorts)
      return false;
    auto [gid, port] = ports[next];
    const Graph &g = m_.graph(gid);
    for (InPort c : g.node(port.node).consumers[port.index]) {
      const Node &n = g.node(c.node);
      if (isDead({gid, c.node}))
        continue; // what it reads reaches nothing observed
      if (isCopy(n)) {
        // A copy reads its input 0 only and writes the common prefix.
        // (Output 1 on is computed from every input byte: issue 21.)
        if (c.index != 0 || n.inputs.size() != 1 || isInputMutable(n) || n.numOutputs != 1)
          return false;
        for (uint32_t k = 0; k < n.numOutputs; ++k)
          if (auto b = outputBytes(n, k); !b || !fits(*b))
            return false;
        continue;
      }
      OpKind kind = opKind(n);
      if (index_.isRebound(gid, c.node))
        return false; // an output may view or write the copy itself
      if ((kind == OpKind::Call || kind == OpKind::If || kind == OpKind::Case) &&
          !isInputMutable(n)) {
        // The subgraphs' Data for this input are the copy's buffer; an
        // If/Case reads the first byte of input 0 (the branch index) itself.
        for (GraphId b : n.subgraphs)
          for (NodeId d : index_.dataForParentInput(b, c.index))
            for (uint32_t k = 0; k < m_.graph(b).node(d).numOutputs; ++k)
              ports.push_back({b, OutPort{d, k}});
        continue;
      }
      if (kind == OpKind::Ordinary && !isInputMutable(n) && n.numOutputs > 0) {
        // A view reads nothing; its readers count (an op with any other
        // output reads the whole input).
        for (uint32_t k = 0; k < n.numOutputs; ++k)
          if (viewInput(n, k) != c.index || refInput(n, k))
            return false;
        for (uint32_t k = 0; k < n.numOutputs; ++k)
          ports.push_back({gid, OutPort{c.node, k}});
        continue;
      }
      if (kind != OpKind::NetOutput || g.parentNode == kNoNode)
        return false;
      const Node &holder = m_.graph(g.parentGraph).node(g.parentNode);
      auto j = n.intAttr(Node::portKey(false, c.index, "_parent_node_index"));
      OpKind hk = opKind(holder);
      if (hk == OpKind::Call || hk == OpKind::If || hk == OpKind::Case) {
        // The holder's output j is this buffer (when this branch ran).
        if (j && *j >= 0 && *j < int64_t(holder.numOutputs))
          ports.push_back({g.parentGraph, OutPort{holder.id, uint32_t(*j)}});
        continue;
      }
      if (hk != OpKind::While || holder.subgraphs.size() != 2)
        return false;
      if (gid == holder.subgraphs[0] && holder.subgraphs[1] != gid)
        continue; // the condition reads result 0's first byte; the others go nowhere
      if (gid != holder.subgraphs[1] || holder.subgraphs[0] == gid)
        return false;
      // A body result is copied into its loop variable (common prefix).
      if (!j || *j < 0 || *j >= int64_t(holder.inputs.size()) || !holder.inputs[size_t(*j)])
        return false;
      auto var = oneBufferOf(g.parentGraph, *holder.inputs[size_t(*j)]);
      if (!var)
        return false;
      auto b = outputBytes(m_.graph(var->first).node(var->second.node), var->second.index);
      if (!b || !fits(*b))
        return false;
    }
  }
  return true;
}

bool TensorMoveDeleter::unconnectedOwnBuffer(const SourceTrace &trace) const {
  if (trace.steps.empty())
    return false;
  const TraceStep &last = trace.steps.back();
  const Graph &g = m_.graph(last.graph);
  const Node &n = g.node(last.port.node);
  if (opKind(n) == OpKind::DataSource) {
    if (g.parentNode == kNoNode || g.parentGraph == kNoGraph)
      return false;
    const Node &holder = m_.graph(g.parentGraph).node(g.parentNode);
    auto p = n.intAttr("_parent_node_index");
    return opKind(holder) == OpKind::Call && p && *p >= 0 &&
           (*p >= int64_t(holder.inputs.size()) || !holder.inputs[size_t(*p)]);
  }
  auto in = aliasedInput(n, last.port.index);
  return opKind(n) == OpKind::Ordinary && in && !refInput(n, last.port.index) &&
         (*in >= n.inputs.size() || !n.inputs[*in]);
}

bool TensorMoveDeleter::writesMayLandIn(NodeRef t, const SourceTrace &end, const BufferUses &copy,
                                        bool oneBuffer) {
  if (!computedFresh(end) && !grantedForCopy(end, copy))
    return false;
  const BufferFacts &f = bufferFacts(end);
  return !f.overBudget && f.rootOutputs.empty() &&
         !sourceLayoutAddsConflict(t, end, copy, oneBuffer);
}

std::optional<std::vector<NodeRef>>
TensorMoveDeleter::sourceAccessesAfterCopy(NodeRef t, const SourceTrace &trace,
                                           const SourceTrace &end) {
  constexpr size_t kMaxUses = 64; // accesses examined per copy (cost bound)
  std::vector<SlotRef> visited;
  BufferUses uses = exploreUses(m_, index_, bufferSlots(end), opts_.analysisBudget, &visited,
                                /*whileResultsCopied=*/true);
  if (uses.overBudget || visited.size() > kMaxUses)
    return std::nullopt;
  std::vector<NodeRef> after;
  for (NodeRef n : accessingNodes(visited, {t}))
    if (!precedesCopy(t, trace, n))
      after.push_back(n);
  return after;
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

bool TensorMoveDeleter::continuousMergeAllowed(NodeRef t, const std::vector<SourceTrace> &ends,
                                               const BufferUses &copy) {
  // semantics.md §6: an input of a continuous op conflicts only with a
  // caller-owned user input, a weight, a variable or a graph output. A fresh
  // buffer that is no graph output may become one; merging buffers can only
  // make a continuous op's inputs more alike, never lose its exemption.
  auto fresh = [&] {
    if (!copy.rootOutputs.empty())
      return false;
    for (const SourceTrace &end : ends) {
      if (end.kind != SourceKind::Ordinary)
        return false;
      const BufferFacts &f = bufferFacts(end);
      if (f.overBudget || !f.rootOutputs.empty())
        return false;
    }
    return true;
  };
  if (fresh())
    return true;
  // A copy that is a graph output and feeds continuous-input ops conflicts
  // with each of them in the original already (§6: graph output and input
  // of a continuous op); a fresh source that feeds no continuous-input op
  // itself brings no conflict of its own (its graph outputs are checked by
  // the caller).
  // One source buffer: an op exempt for having all inputs on the copy stays
  // exempt (a source chosen at run time is several buffers, and loses it:
  // found by graphvet fuzz --seed 1 --missed during development).
  auto alreadyConflicting = [&] {
    if (copy.rootOutputs.empty() || ends.size() != 1)
      return false;
    for (const SourceTrace &end : ends) {
      if (end.kind != SourceKind::Ordinary)
        return false;
      const BufferFacts &f = bufferFacts(end);
      if (f.overBudget || f.continuous)
        return false;
    }
    return true;
  };
  if (alreadyConflicting())
    return true;
  // Otherwise only when the merge leaves each continuous op with every input
  // on one and the same buffer, which §6 exempts: each input is the copy or
  // the very port the copy reads, in the copy's graph, and that port is one
  // buffer (not a result chosen at run time).
  if (ends.size() != 1 || copy.continuousUsers.empty())
    return false;
  // Or the op already takes the copy's source port itself: whatever layout
  // conflict that buffer has with the op, the original has it too (the
  // conflict is per buffer and op; the copy's own buffer was fresh).
  const Node &tm = m_.graph(t.graph).node(t.node);
  auto alreadyReadsSource = [&](NodeRef user) {
    if (user.graph != t.graph)
      return false;
    const Node &n = m_.graph(user.graph).node(user.node);
    return std::any_of(n.inputs.begin(), n.inputs.end(), [&](const std::optional<OutPort> &in) {
      return in && *in == *tm.inputs[0];
    });
  };
  return std::all_of(copy.continuousUsers.begin(), copy.continuousUsers.end(), [&](NodeRef user) {
    return exemptAfterMerge(t, user) || alreadyReadsSource(user);
  });
}

bool TensorMoveDeleter::sourceLayoutAddsConflict(NodeRef t, const SourceTrace &end,
                                                 const BufferUses &copy, bool oneBuffer) {
  // A continuous-input op U reading the source conflicts with each graph
  // output the copy is, once the two are one buffer. The original has that
  // conflict already when the copy is those graph outputs itself (the root
  // NetOutput takes its port) and U, not exempt, takes the copy's port too.
  // (The buffer exploration over-approximates what reaches an op: a While's
  // write-back copies bytes, not the buffer; found by graphvet fuzz
  // --seed 17 during development.) An op exempt in the original, or after
  // the merge with one source buffer, brings none.
  const BufferFacts &f = bufferFacts(end);
  if (!f.continuous || copy.rootOutputs.empty())
    return false;
  if (opts_.conservative)
    return true;
  auto takesCopy = [&](NodeRef n) {
    const Node &node = m_.graph(n.graph).node(n.node);
    return n.graph == t.graph && std::any_of(node.inputs.begin(), node.inputs.end(),
                                             [&](const std::optional<OutPort> &in) {
                                               return in && *in == OutPort{t.node, 0};
                                             });
  };
  NodeId netOut = index_.netOutput(0);
  bool copyIsTheOutputs =
      t.graph == 0 && netOut != kNoNode &&
      std::all_of(copy.rootOutputs.begin(), copy.rootOutputs.end(), [&](uint32_t j) {
        const Node &ret = m_.graph(0).node(netOut);
        return j < ret.inputs.size() && ret.inputs[j] && *ret.inputs[j] == OutPort{t.node, 0};
      });
  BufferUses uses = exploreUses(m_, index_, bufferSlots(end), opts_.analysisBudget, nullptr,
                                /*whileResultsCopied=*/true);
  if (uses.overBudget)
    return true;
  return std::any_of(uses.continuousUsers.begin(), uses.continuousUsers.end(), [&](NodeRef u) {
    return anyNonExempt({u}) && !(oneBuffer && exemptAfterMerge(t, u)) &&
           !(copyIsTheOutputs && takesCopy(u));
  });
}

std::optional<std::pair<GraphId, OutPort>> TensorMoveDeleter::oneBufferOf(GraphId g, OutPort in) {
  SourceTrace tr = traceSource(m_, index_, g, in, maxTraceSteps_);
  if (tr.kind == SourceKind::ControlFlow) {
    std::optional<std::vector<SourceTrace>> ends =
        resolveControlFlow(tr, /*allBindings=*/false, /*followLoops=*/true);
    if (!ends || ends->size() != 1 || (*ends)[0].steps.empty())
      return std::nullopt;
    return std::pair{(*ends)[0].steps.back().graph, (*ends)[0].steps.back().port};
  }
  if (tr.kind == SourceKind::None || tr.steps.empty())
    return std::nullopt;
  return std::pair{tr.steps.back().graph, tr.steps.back().port};
}

bool TensorMoveDeleter::exemptAfterMerge(NodeRef t, NodeRef user) {
  // Each input is the copy or the port it reads (in the copy's graph), or,
  // anywhere, a port bound to the copy's buffer or to the source's one
  // buffer (through views, ref outputs, a branch Data, a loop variable).
  const Node &n = m_.graph(user.graph).node(user.node);
  const Node &tm = m_.graph(t.graph).node(t.node);
  const std::pair<GraphId, OutPort> copyBuffer{t.graph, OutPort{t.node, 0}};
  auto sameAsSource = [&](GraphId g, OutPort in) {
    if (opts_.conservative)
      return false;
    auto b = oneBufferOf(g, in);
    if (!b)
      return false;
    if (*b == copyBuffer)
      return true;
    auto source = oneBufferOf(t.graph, *tm.inputs[0]);
    return source && *b == *source;
  };
  for (const auto &in : n.inputs)
    if (!in || (!(user.graph == t.graph && (*in == OutPort{t.node, 0} || *in == *tm.inputs[0])) &&
                !sameAsSource(user.graph, *in)))
      return false;
  return !n.inputs.empty();
}

std::optional<Verdict> TensorMoveDeleter::tryReadOnlyMemory(NodeRef t, const Verdict &kept) {
  // Sound because nothing can tell the two buffers apart: every buffer the
  // source can be is written only by nodes that run before the copy, and the
  // copy is never written, so every successor reads at its own time exactly
  // the bytes the copy took, in both runs. The copy reaches no op demanding
  // continuous inputs (no new layout class); when it reaches a graph output,
  // the source is a fresh buffer that is no graph output, user input,
  // variable or weight and feeds no continuous-input op, so the caller sees
  // no new alias and §6 no new conflict. No ordering is needed beyond the
  // control edges apply() moves.
  constexpr size_t kMaxWriters = 64; // writers checked per copy (cost bound)
  const Node &tm = m_.graph(t.graph).node(t.node);
  SourceTrace trace = traceSource(m_, index_, t.graph, *tm.inputs[0], maxTraceSteps_);
  if (trace.kind == SourceKind::None && unconnectedOwnBuffer(trace)) {
    // A buffer of its own that reads zero bytes and keeps whatever is
    // written into it across runs: an unwritten copy that reaches no graph
    // output (which the caller could overwrite) may read it directly.
    const BufferUses &copy = tensorMoveUses(t);
    if (copy.overBudget || !copy.rootOutputs.empty() || !effectiveWriters(copy).empty())
      return std::nullopt;
    trace.kind = SourceKind::Ordinary;
    trace.failure.clear();
  }
  bool viaControlFlow = trace.kind == SourceKind::ControlFlow;
  std::optional<std::vector<SourceTrace>> ends;
  bool viaLoopVariable = false;
  if (viaControlFlow)
    ends = resolveControlFlow(trace);
  else if (trace.kind != SourceKind::None && !trace.steps.empty())
    ends = std::vector<SourceTrace>{trace};
  if (viaControlFlow && !ends) {
    if (auto v = tryLoopVariable(t, kept, trace))
      return v;
    if (auto v = tryLoopWriteBack(t, kept, trace))
      return v;
    // The loop variables themselves, as any source of a copy nobody writes:
    // the While is one of their writers (its write-back), ordered below
    // like the others. (A written copy would carry its writes into the
    // variable, and so into the next iteration's reads.)
    ends = resolveControlFlow(trace, /*allBindings=*/false, /*followLoops=*/true);
    viaLoopVariable = true;
  }
  if (!ends || ends->empty())
    return std::nullopt;
  for (const SourceTrace &end : *ends) {
    const TraceStep &src = end.steps.back();
    if (!sizeFits(t, outputBytes(m_.graph(src.graph).node(src.port.node), src.port.index)))
      return std::nullopt;
  }
  const BufferUses &copy = tensorMoveUses(t);
  if (!copy.overBudget && !effectiveWriters(copy, ends->size() == 1).empty()) {
    // A written copy of a loop variable would carry its writes into the
    // variable, and so into the next iteration, unless the merged buffer
    // ends each scribble exactly like the variable (the source first).
    if (viaLoopVariable)
      return tryScribbledPair(t, kept, std::move(trace), std::move(*ends), true);
    if (auto v = tryWrittenCopy(t, kept, trace, *ends))
      return v;
    if (auto v = tryScribbledPair(t, kept, trace, *ends, false))
      return v;
    if (auto v = tryDeadLoopPair(t, kept, trace, *ends))
      return v;
    return tryLoopMirror(t, kept, std::move(trace), std::move(*ends));
  }
  if (copy.overBudget || (!copy.continuousUsers.empty() && !continuousMergeAllowed(t, *ends, copy)))
    return std::nullopt;
  // A copy reaching graph outputs may merge into a fresh buffer nobody can
  // observe, or into a user input whose sharing with those outputs the
  // options grant: inputReuseMemIndexes lets any output share it (and so
  // each other); an outputReuseInputMemIndexes pair "j,k" only output j, so
  // the input must not be another graph output already (the merge would
  // make the two outputs alias: found by graphvet fuzz --seed 1).
  bool grantedOutputs = false;
  auto outputsGranted = [&](const SourceTrace &end) {
    if (end.kind != SourceKind::UserInput)
      return false;
    if (opts_.grants.reusableInputs.count(end.userInput))
      return true;
    if (!bufferFacts(end).rootOutputs.empty())
      return false;
    std::set<uint32_t> allowed = opts_.grants.outputsFor(end.userInput);
    return std::all_of(copy.rootOutputs.begin(), copy.rootOutputs.end(),
                       [&](uint32_t j) { return allowed.count(j) > 0; });
  };
  std::vector<NodeRef> late; // writers that may run after the copy
  for (const SourceTrace &end : *ends) {
    bool granted = !copy.rootOutputs.empty() && outputsGranted(end);
    grantedOutputs = grantedOutputs || granted;
    if (!copy.rootOutputs.empty() && end.kind != SourceKind::Ordinary && !granted)
      return std::nullopt;
    const BufferFacts &f = bufferFacts(end);
    if (f.overBudget || f.writers.size() > kMaxWriters)
      return std::nullopt;
    std::vector<NodeRef> fWriters = effectiveWriters(f.writers, f.writerSlots);
    // A fresh source already bound to the same single graph output as the
    // copy (one branch returns the copy, another the source) gains no alias.
    std::set<uint32_t> both = f.rootOutputs;
    both.insert(copy.rootOutputs.begin(), copy.rootOutputs.end());
    // So are several graph outputs that all take the same port: they are one
    // buffer in every run already.
    bool sameOutput = end.kind == SourceKind::Ordinary && (both.size() == 1 || onePort(both));
    if (!copy.rootOutputs.empty() && ((!f.rootOutputs.empty() && !granted && !sameOutput) ||
                                      sourceLayoutAddsConflict(t, end, copy, ends->size() == 1)))
      return std::nullopt;
    for (NodeRef w : fWriters)
      if (!precedesCopy(t, trace, w, &copy) && !otherBranch(t, w) &&
          std::find(late.begin(), late.end(), w) == late.end())
        late.push_back(w);
  }
  Verdict v;
  if (!late.empty()) {
    // A graph output is read after every writer: no edge can help. Nor
    // can one inside a While that takes both; such a loop may keep the two
    // equal, though (ext-loop-mirror).
    auto edges = copy.rootOutputs.empty() ? orderReadersBeforeWriters(t, late) : std::nullopt;
    if (!edges)
      return late.size() == 1 ? tryLoopMirror(t, kept, std::move(trace), std::move(*ends))
                              : std::nullopt;
    v.orderEdges = std::move(edges->edges);
  }
  v.outcome = Outcome::Delete;
  v.looseSuccessors = true;
  v.rule = !late.empty()    ? "ext-readers-before-writers"
           : viaControlFlow ? "ext-readonly-control-flow"
           : grantedOutputs ? "ext-readonly-granted-output"
                            : "ext-readonly-source";
  v.reason = kept.rule;
  v.trace = std::move(trace);
  v.ends = std::move(*ends);
  return v;
}

std::optional<Verdict> TensorMoveDeleter::tryLoopVariable(NodeRef t, const Verdict &kept,
                                                          SourceTrace trace) {
  // The trace ended at a Data of a While's cond or body: the loop variable L
  // (the buffer of the While's input p). Within one iteration the copy takes
  // L, its readers read it, and the body's results are written back into the
  // loop variables at the end. When nothing in the While's subgraphs (nor
  // anything the memory reaches from them) writes L, L holds the copy's bytes
  // from the copy until the write-back, so readers of L see what they saw in
  // the copy, and writing back L (instead of the copy) into a loop variable
  // writes the same bytes. Everything outside the While runs before or after
  // the whole loop (one step), so accesses there do not matter. The copy
  // itself must be unwritten and reach no graph output or continuous-input
  // op, as for ext-readonly-source.
  const TraceStep &end = trace.steps.back();
  const Graph &bodyGraph = m_.graph(end.graph);
  const Node &data = bodyGraph.node(end.port.node);
  if (opKind(data) != OpKind::DataSource || bodyGraph.parentNode == kNoNode)
    return std::nullopt;
  const Node &loop = m_.graph(bodyGraph.parentGraph).node(bodyGraph.parentNode);
  auto p = data.intAttr("_parent_node_index");
  if (opKind(loop) != OpKind::While || !p || *p < 0 || *p >= int64_t(loop.inputs.size()) ||
      !loop.inputs[size_t(*p)])
    return std::nullopt;
  // The copy must not resize: compare with the buffer really bound to the
  // loop variable (the While input's source; the Data's own description
  // does not size anything, semantics.md §1).
  SourceTrace outer =
      traceSource(m_, index_, bodyGraph.parentGraph, *loop.inputs[size_t(*p)], maxTraceSteps_);
  // The loop's input may itself come out of control flow: every buffer it
  // can be (as for ext-readonly-control-flow), an enclosing loop's variable
  // included (that loop writes it back only around this one, a step of its
  // cond or body).
  std::optional<std::vector<SourceTrace>> reals;
  if (outer.kind == SourceKind::ControlFlow)
    reals = resolveControlFlow(outer, /*allBindings=*/false, /*followLoops=*/true);
  else if (outer.kind != SourceKind::None && !outer.steps.empty())
    reals = std::vector<SourceTrace>{outer};
  if (!reals || reals->empty())
    return std::nullopt;
  for (const SourceTrace &r : *reals) {
    const TraceStep &real = r.steps.back();
    if (!sizeFits(t, outputBytes(m_.graph(real.graph).node(real.port.node), real.port.index)))
      return std::nullopt;
  }
  NodeRef loopRef{bodyGraph.parentGraph, bodyGraph.parentNode};
  // Inside the copy's own subgraph (cond or body), nested ones included.
  auto inSubgraph = [&](NodeRef n) { return insideGraph(n, end.graph); };
  // The copy's memory leaves its subgraph only as a result, which the loop
  // copies into a loop variable (the While's outputs are its inputs): graph
  // outputs, writers and continuous ops reached that way see the loop
  // variables, the same in both graphs. Inside, it must be read only.
  const BufferUses &copy = tensorMoveUses(t);
  std::vector<NodeRef> copyWriters = effectiveWriters(copy, reals->size() == 1);
  // (A continuous-input op all of whose inputs become L, one buffer, is
  // exempt: semantics.md §6.)
  if (copy.overBudget || std::any_of(copyWriters.begin(), copyWriters.end(), inSubgraph) ||
      std::any_of(copy.continuousUsers.begin(), copy.continuousUsers.end(), [&](NodeRef n) {
        return inSubgraph(n) && !(reals->size() == 1 && exemptAfterMerge(t, n));
      }))
    return std::nullopt;
  // Only the copy's own subgraph (cond or body) matters: the other one runs
  // before or after the whole of it, and the copy's memory leaves it only as
  // a snapshot (the condition, or the write-back).
  constexpr size_t kMaxWriters = 64; // writers checked per copy (cost bound)
  std::vector<SlotRef> slots;
  for (NodeId d : index_.dataForParentInput(end.graph, uint32_t(*p)))
    for (uint32_t k = 0; k < bodyGraph.node(d).numOutputs; ++k)
      for (const SlotRef &s : consumerSlots(m_, {end.graph, {d, k}}))
        slots.push_back(s);
  BufferUses inside = exploreUses(m_, index_, slots, opts_.analysisBudget, nullptr,
                                  /*whileResultsCopied=*/true);
  if (inside.overBudget || inside.writers.size() > kMaxWriters ||
      (writes(inside.access) && inside.writers.empty()))
    return std::nullopt;
  // The loop variable's buffer may also be reached inside the loop by other
  // routes: a variable by name (a reference to it inside the body), or the
  // same buffer bound to another loop variable (found by graphvet fuzz
  // --seed 424242). Every writer of the real buffer inside the loop must run
  // before the copy in its subgraph, or in the loop's other subgraph; the
  // While's own write-back comes after every reader of the iteration.
  std::vector<NodeRef> realWriters;
  for (const SourceTrace &r : *reals) {
    const BufferFacts &facts = bufferFacts(r);
    if (facts.overBudget || realWriters.size() + facts.writers.size() > kMaxWriters)
      return std::nullopt;
    std::vector<NodeRef> w = effectiveWriters(facts.writers, facts.writerSlots);
    realWriters.insert(realWriters.end(), w.begin(), w.end());
  }
  auto insideLoop = [&](NodeRef w) {
    return w == loopRef || std::any_of(loop.subgraphs.begin(), loop.subgraphs.end(),
                                       [&](GraphId sub) { return insideGraph(w, sub); });
  };
  std::vector<NodeRef> insideWriters = effectiveWriters(inside);
  for (const std::vector<NodeRef> *writers :
       std::initializer_list<const std::vector<NodeRef> *>{&insideWriters, &realWriters})
    for (NodeRef w : *writers)
      if (w != loopRef && insideLoop(w) && !precedesCopy(t, trace, w, &copy))
        return std::nullopt;
  // The copy's accesses become L's.
  return extensionDelete("ext-loop-variable", kept, std::move(trace), std::move(*reals));
}

std::optional<TensorMoveDeleter::Ordering>
TensorMoveDeleter::orderBefore(NodeRef t, const std::vector<NodeRef> &firsts,
                               const std::vector<NodeRef> &seconds,
                               const std::function<bool(NodeRef, NodeRef)> &excused) {
  // Each pair is ordered in the innermost graph holding both. A control
  // edge to or from a call or an If/Case/While covers every node inside it
  // (semantics.md §2), so a nested node is ordered through the node holding
  // it there.
  constexpr size_t kMaxEdges = 16; // edges added per copy (output size bound)
  auto chainOf = [&](NodeRef n) {
    std::vector<NodeRef> chain{n}; // n, then each node holding it
    while (chain.size() <= m_.numGraphs()) {
      const Graph &ng = m_.graph(chain.back().graph);
      if (ng.parentNode == kNoNode || ng.parentGraph == kNoGraph)
        break;
      chain.push_back({ng.parentGraph, ng.parentNode});
    }
    return chain;
  };
  // Two branches of one If/Case never both run while the holder runs once
  // per run of the copy: every loop around the holder is around the copy
  // too. (A loop around the holder alone could take one branch in an
  // iteration and the other in the next, both after the copy.)
  const std::vector<NodeRef> copyChain = chainOf(t);
  auto exclusiveBranches = [&](GraphId gid, NodeId holder, GraphId inA, GraphId inB) {
    const Node &h = m_.graph(gid).node(holder);
    if ((opKind(h) != OpKind::If && opKind(h) != OpKind::Case) || inA == inB)
      return false;
    for (NodeRef up : chainOf({gid, holder}))
      if (opKind(m_.graph(up.graph).node(up.node)) == OpKind::While &&
          std::find(copyChain.begin(), copyChain.end(), up) == copyChain.end())
        return false;
    return true;
  };
  Ordering out;
  for (NodeRef second : seconds) {
    std::vector<NodeRef> bChain = chainOf(second);
    for (NodeRef first : firsts) {
      if (excused && excused(first, second))
        continue;
      std::vector<NodeRef> aChain = chainOf(first);
      // The innermost graph on both chains.
      std::optional<std::pair<size_t, size_t>> meet;
      for (size_t i = 0; i < aChain.size() && !meet; ++i)
        for (size_t j = 0; j < bChain.size() && !meet; ++j)
          if (aChain[i].graph == bChain[j].graph)
            meet = std::pair{i, j};
      if (!meet)
        return std::nullopt;
      auto [i, j] = *meet;
      GraphId gid = aChain[i].graph;
      NodeId a = aChain[i].node, b = bChain[j].node;
      const Graph &g = m_.graph(gid);
      if (opKind(m_.graph(first.graph).node(first.node)) == OpKind::NetOutput) {
        // A NetOutput reads when its whole graph is done (a graph output,
        // a While's write-back or condition), which no edge can move. A
        // result of an If/Case or a call stands for the holder's consumers,
        // which are among `firsts` themselves when anybody reads it; the
        // NetOutput itself accesses nothing (semantics.md §2), at whatever
        // depth it sits below the graph where the pair meets.
        const Graph &fg = m_.graph(first.graph);
        OpKind hk = fg.parentNode == kNoNode || fg.parentGraph == kNoGraph
                        ? OpKind::NetOutput
                        : opKind(m_.graph(fg.parentGraph).node(fg.parentNode));
        if (hk == OpKind::Call || hk == OpKind::If || hk == OpKind::Case)
          continue;
        if (i == 0)
          return std::nullopt;
      }
      if (a == b) {
        // A node reads its inputs before it writes (semantics.md §2); two
        // nodes inside one holder cannot be ordered from outside it, unless
        // they are in branches that never both run.
        if (i > 0 && j > 0 && exclusiveBranches(gid, a, aChain[i - 1].graph, bChain[j - 1].graph))
          continue;
        // An If/Case reads its condition before a branch runs; its other
        // inputs are read by its branches' nodes, which come separately.
        if (i == 0 && (opKind(g.node(a)) == OpKind::If || opKind(g.node(a)) == OpKind::Case))
          continue;
        if (i > 0 || j > 0)
          return std::nullopt;
        continue;
      }
      if (reaches(gid, b, a)) {
        // Already the other way round: the reader sees the writer's bytes
        // after the deletion, which matters unless nobody can observe what
        // it computes. (A path from a call orders nothing inside it before
        // the reader: then the two would race.)
        if (i == 0 && isDead({gid, a}) &&
            (opKind(g.node(b)) == OpKind::Call
                 ? j > 0 && calledBefore({gid, b}, {{gid, a}})
                 : directlyOrdered(g, b, a) || orderedWithoutCalls(gid, b, a)))
          continue;
        return std::nullopt;
      }
      std::tuple<GraphId, NodeId, NodeId> e{gid, a, b};
      if (directlyOrdered(g, a, b) || orderedWithoutCalls(gid, a, b) ||
          std::find(out.edges.begin(), out.edges.end(), e) != out.edges.end())
        continue;
      if (out.edges.size() == kMaxEdges)
        return std::nullopt;
      out.edges.push_back(e);
    }
  }
  return out;
}

std::optional<TensorMoveDeleter::Ordering>
TensorMoveDeleter::orderReadersBeforeWriters(NodeRef t, const std::vector<NodeRef> &late) {
  // After the deletion the copy's readers read the source itself. A writer
  // that may run after the copy (it cannot run between the producer and the
  // copy: the original is race-free and the copy reads the source, so it is
  // ordered with the copy, and precedesCopy could not show "before") keeps
  // the bytes each reader saw when every reader runs before it.
  constexpr size_t kMaxReaders = 64; // readers examined per copy (cost bound)
  // A subgraph NetOutput among them stands for the holder's consumers,
  // which the exploration visits too (in the enclosing graph).
  std::vector<SlotRef> visited;
  std::vector<SlotRef> start = consumerSlots(m_, {t.graph, {t.node, 0}});
  BufferUses uses = exploreUses(m_, index_, start, opts_.analysisBudget, &visited,
                                /*whileResultsCopied=*/true);
  if (uses.overBudget || !uses.rootOutputs.empty() || visited.size() > kMaxReaders)
    return std::nullopt;
  std::vector<NodeRef> readers = accessingNodes(visited, {});
  // A While holding the copy writes its loop variables back only between
  // two runs of its body (semantics.md §2), never while its cond or body
  // runs: a reader in the same subgraph of it as the copy reads the copy's
  // bytes of that same run (it follows the copy), with no write-back
  // between the two.
  auto excused = [&](NodeRef reader, NodeRef writer) {
    if (opKind(m_.graph(writer.graph).node(writer.node)) != OpKind::While)
      return false;
    GraphId sub = subgraphOf(writer, t);
    return sub != kNoGraph && subgraphOf(writer, reader) == sub;
  };
  return orderBefore(t, readers, late, excused);
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

std::optional<Verdict> TensorMoveDeleter::tryWrittenCopy(NodeRef t, const Verdict &kept,
                                                         SourceTrace trace,
                                                         std::vector<SourceTrace> ends) {
  // The copy's memory is written. After the deletion those writes land in
  // the source S. That is unobservable when S is a fresh buffer that no
  // graph output or caller can see (nor, if the copy is a graph output, a
  // continuous-input op), and after the copy
  // nothing else uses S once the copy's writes begin: every writer of S
  // precedes the copy (so S holds the copy's bytes from the copy on, and
  // then changes exactly as the copy did), and every other access of S that
  // may follow the copy is ordered before each writer of the copy's memory
  // (it still reads the bytes the copy took). The copy itself may then be a
  // graph output: S merges into it as into a fresh buffer nobody observes.
  constexpr size_t kMaxWriters = 64; // writers checked per copy (cost bound)
  const BufferUses &copy = tensorMoveUses(t);
  std::vector<NodeRef> copyWriters = effectiveWriters(copy, ends.size() == 1);
  if (copy.overBudget || copyWriters.empty() || copyWriters.size() > kMaxWriters ||
      (!copy.continuousUsers.empty() && !continuousMergeAllowed(t, ends, copy)))
    return std::nullopt;
  std::vector<NodeRef> others; // accesses of S that may follow the copy
  for (const SourceTrace &end : ends) {
    // A granted user input may take the copy's writes: it is refilled
    // before the next run. S feeding a continuous-input op matters only when
    // the merged buffer becomes a graph output (semantics.md §6); a fresh S
    // stays fresh.
    if (!writesMayLandIn(t, end, copy, ends.size() == 1))
      return std::nullopt;
    const BufferFacts &f = bufferFacts(end);
    if (f.writers.size() > kMaxWriters)
      return std::nullopt;
    for (NodeRef w : effectiveWriters(f.writers, f.writerSlots))
      if (!precedesCopy(t, trace, w))
        return std::nullopt;
    auto after = sourceAccessesAfterCopy(t, trace, end);
    if (!after)
      return std::nullopt;
    for (NodeRef n : *after)
      if (std::find(others.begin(), others.end(), n) == others.end())
        others.push_back(n);
  }
  auto edges = orderBefore(t, others, copyWriters);
  if (!edges)
    return std::nullopt;
  return extensionDelete("ext-written-copy", kept, std::move(trace), std::move(ends),
                         std::move(edges->edges));
}

std::optional<Verdict> TensorMoveDeleter::tryScribbledPair(NodeRef t, const Verdict &kept,
                                                           SourceTrace trace,
                                                           std::vector<SourceTrace> ends,
                                                           bool sourceFirstOnly) {
  // The copy C of S is written only by H, an op scribbling on its inputs
  // (semantics.md §1), which takes S too. Until H runs, C holds S's bytes
  // in both graphs (every other writer of S precedes the copy), so H reads
  // the same bytes. H scribbles each input buffer once, as a function of
  // its old content (the oracle also mixes in the first input position
  // taking the buffer): after the deletion the one buffer gets the scribble
  // of whichever of S and C H takes first, and the other's is lost.
  // - S first: whoever sees S later sees what it saw before; C's scribble
  //   goes unnoticed when every reader of C runs before H and C is no graph
  //   output. S may be anything H may scribble (no weight).
  // - C first: whoever reads C later (a graph output included) reads what
  //   it read before; S's scribble goes unnoticed when every other access
  //   of S runs before H and nobody sees S afterwards: S is a fresh buffer
  //   that is no graph output, or a user input whose content after the run
  //   the options leave unspecified (and that C's graph outputs may share).
  constexpr size_t kMaxWriters = 64; // writers checked per copy (cost bound)
  constexpr size_t kMaxUses = 64;    // accesses examined per copy (cost bound)
  const BufferUses &copy = tensorMoveUses(t);
  if (ends.size() != 1 || copy.overBudget ||
      (!copy.continuousUsers.empty() && !continuousMergeAllowed(t, ends, copy)))
    return std::nullopt;
  const SourceTrace &end = ends[0];
  if (end.kind == SourceKind::Weight || end.kind == SourceKind::None ||
      end.kind == SourceKind::ControlFlow || end.steps.empty())
    return std::nullopt;
  std::vector<NodeRef> copyWriters = effectiveWriters(copy, true);
  if (copyWriters.empty() || std::any_of(copyWriters.begin(), copyWriters.end(),
                                         [&](NodeRef w) { return w != copyWriters[0]; }))
    return std::nullopt;
  const NodeRef h = copyWriters[0];
  const Node &hn = m_.graph(h.graph).node(h.node);
  // H runs once per run of the copy: in a loop around H alone, its second
  // run would read C's scribbled bytes.
  if (h.graph != t.graph || opKind(hn) != OpKind::Ordinary || !isInputMutable(hn))
    return std::nullopt;
  for (uint32_t k = 0; k < hn.numOutputs; ++k)
    if (aliasedInput(hn, k))
      return std::nullopt; // (its ref writes and views would see the merge)
  // The first input of H on each buffer, traced straight to it (an If/Case
  // result may be another buffer at run time).
  auto firstSlot = [&](const std::vector<NodeRef> &writers, const std::vector<SlotRef> &slots) {
    std::optional<uint32_t> first;
    for (size_t i = 0; i < writers.size() && i < slots.size(); ++i)
      if (writers[i] == h && slots[i].graph == h.graph && slots[i].slot.node == h.node &&
          (!first || slots[i].slot.index < *first))
        first = slots[i].slot.index;
    return first;
  };
  auto tracesTo = [&](uint32_t slot, PortRef port) {
    if (slot >= hn.inputs.size() || !hn.inputs[slot])
      return false;
    auto b = oneBufferOf(h.graph, *hn.inputs[slot]);
    return b && b->first == port.graph && b->second == port.port;
  };
  const BufferFacts &f = bufferFacts(end);
  if (f.overBudget || f.writers.size() > kMaxWriters)
    return std::nullopt;
  std::optional<uint32_t> sFirst = firstSlot(f.writers, f.writerSlots);
  std::optional<uint32_t> cFirst = firstSlot(copy.writers, copy.writerSlots);
  if (!sFirst || !cFirst || *sFirst == *cFirst)
    return std::nullopt;
  const bool sourceFirst = *sFirst < *cFirst;
  if (!sourceFirst && sourceFirstOnly)
    return std::nullopt;
  const PortRef sourcePort{end.steps.back().graph, end.steps.back().port};
  const PortRef copyPort{t.graph, {t.node, 0}};
  if (sourceFirst ? !tracesTo(*sFirst, sourcePort) : !tracesTo(*cFirst, copyPort))
    return std::nullopt;
  // No other input before the later of the two may turn out to be either:
  // each is bound to one known buffer.
  const uint32_t first = std::min(*sFirst, *cFirst), second = std::max(*sFirst, *cFirst);
  for (uint32_t i = 0; i < second; ++i)
    if (i != first && hn.inputs.size() > i && hn.inputs[i] && !oneBufferOf(h.graph, *hn.inputs[i]))
      return std::nullopt;
  // (A While holding the copy, and so H, writes back only between runs of
  // that subgraph: never between the copy and H.)
  for (NodeRef w : effectiveWriters(f.writers, f.writerSlots))
    if (w != h && !precedesCopy(t, trace, w) &&
        !(opKind(m_.graph(w.graph).node(w.node)) == OpKind::While && subgraphOf(w, t) != kNoGraph))
      return std::nullopt;
  // The buffer whose scribble is lost: every other access of it runs before H.
  std::vector<SlotRef> visited;
  std::vector<SlotRef> start =
      sourceFirst ? consumerSlots(m_, {t.graph, {t.node, 0}}) : bufferSlots(end);
  BufferUses uses = exploreUses(m_, index_, start, opts_.analysisBudget, &visited,
                                /*whileResultsCopied=*/true);
  if (uses.overBudget || visited.size() > kMaxUses)
    return std::nullopt;
  if (sourceFirst) {
    if (!copy.rootOutputs.empty())
      return std::nullopt;
  } else {
    if (!writesMayLandIn(t, end, copy, true))
      return std::nullopt;
  }
  auto edges = orderBefore(t, accessingNodes(visited, {h, t}), {h});
  if (!edges)
    return std::nullopt;
  return extensionDelete("ext-scribbled-pair", kept, std::move(trace), std::move(ends),
                         std::move(edges->edges));
}

std::optional<NodeRef> TensorMoveDeleter::onlyLoopWriter(NodeRef t, const BufferUses &copy) const {
  if (copy.writers.empty())
    return std::nullopt;
  const NodeRef w = copy.writers[0];
  if (!plainLoopIn(w, t.graph) ||
      std::any_of(copy.writers.begin(), copy.writers.end(), [&](NodeRef n) { return n != w; }))
    return std::nullopt;
  return w;
}

bool TensorMoveDeleter::plainLoopIn(NodeRef w, GraphId g) const {
  const Node &wn = m_.graph(w.graph).node(w.node);
  return w.graph == g && opKind(wn) == OpKind::While && !isInputMutable(wn) &&
         wn.subgraphs.size() == 2;
}

std::set<uint32_t> TensorMoveDeleter::loopVariablesOf(NodeRef w, const BufferFacts &source,
                                                      const BufferUses &copy) const {
  std::set<uint32_t> vars;
  for (const auto *u : {&source.writerSlots, &copy.writerSlots})
    for (const SlotRef &slot : *u)
      if (slot.graph == w.graph && slot.slot.node == w.node)
        vars.insert(slot.slot.index);
  return vars;
}

std::optional<Verdict> TensorMoveDeleter::tryDeadLoopPair(NodeRef t, const Verdict &kept,
                                                          SourceTrace trace,
                                                          std::vector<SourceTrace> ends) {
  // The copy C of a fresh S is written only by W, a While (its write-backs)
  // that takes S too. When neither W's cond nor its body reads a loop
  // variable bound to S or C, W's outputs for them have no consumers, and
  // every other access of S or C runs before W, the buffers are dead from W
  // on: until then C holds S's bytes in both graphs (every other writer of
  // S precedes the copy), and what W's write-backs leave in the one merged
  // buffer nobody reads. S must be fresh and neither may be a graph output
  // (the caller would see the last write-back).
  constexpr size_t kMaxWriters = 64; // writers checked per copy (cost bound)
  constexpr size_t kMaxUses = 64;    // accesses examined per copy
  const BufferUses &copy = tensorMoveUses(t);
  if (ends.size() != 1 || copy.overBudget || !copy.rootOutputs.empty() ||
      !copy.continuousUsers.empty() || copy.writers.empty())
    return std::nullopt;
  const SourceTrace &end = ends[0];
  // S is made afresh, and W runs, once per run of the copy: in a loop
  // around them the next run would find the write-backs' bytes.
  if (!computedFresh(end) || end.steps.back().graph != t.graph)
    return std::nullopt;
  const std::optional<NodeRef> loop = onlyLoopWriter(t, copy);
  if (!loop)
    return std::nullopt;
  const NodeRef w = *loop;
  const Node &wn = m_.graph(w.graph).node(w.node);
  const BufferFacts &f = bufferFacts(end);
  if (f.overBudget || !f.rootOutputs.empty() || f.continuous || f.writers.size() > kMaxWriters)
    return std::nullopt;
  // The loop variables bound to S or C: never read inside, never handed on.
  std::set<uint32_t> vars = loopVariablesOf(w, f, copy);
  if (vars.empty())
    return std::nullopt;
  for (uint32_t j : vars) {
    if (j < wn.numOutputs && !wn.consumers[j].empty())
      return std::nullopt;
    for (GraphId sub : wn.subgraphs)
      for (NodeId d : index_.dataForParentInput(sub, j)) {
        const Node &data = m_.graph(sub).node(d);
        for (uint32_t k = 0; k < data.numOutputs; ++k)
          if (!data.consumers[k].empty())
            return std::nullopt;
      }
  }
  bool sawW = false;
  for (NodeRef x : effectiveWriters(f.writers, f.writerSlots)) {
    sawW = sawW || x == w;
    if (x != w && !precedesCopy(t, trace, x))
      return std::nullopt;
  }
  if (!sawW && std::find(f.writers.begin(), f.writers.end(), w) == f.writers.end())
    return std::nullopt; // (W does not take S: tryWrittenCopy's case)
  // Every other access of S or C runs before W.
  std::vector<NodeRef> others;
  std::vector<SlotRef> startC = consumerSlots(m_, {t.graph, {t.node, 0}});
  std::vector<SlotRef> startS = bufferSlots(end);
  for (const std::vector<SlotRef> *start : {&startC, &startS}) {
    std::vector<SlotRef> visited;
    BufferUses uses = exploreUses(m_, index_, *start, opts_.analysisBudget, &visited,
                                  /*whileResultsCopied=*/true);
    if (uses.overBudget || visited.size() > kMaxUses)
      return std::nullopt;
    for (NodeRef n : accessingNodes(visited, {w, t}))
      if (std::find(others.begin(), others.end(), n) == others.end())
        others.push_back(n);
  }
  auto edges = orderBefore(t, others, {w});
  if (!edges)
    return std::nullopt;
  return extensionDelete("ext-dead-loop-pair", kept, std::move(trace), std::move(ends),
                         std::move(edges->edges));
}

std::optional<Verdict> TensorMoveDeleter::tryLoopMirror(NodeRef t, const Verdict &kept,
                                                        SourceTrace trace,
                                                        std::vector<SourceTrace> ends) {
  // The copy C of S is written only by W, a While in the copy's graph that
  // takes S too (or C is not written and W is the one writer of S that may
  // follow the copy). When every loop variable bound to S or C gets back, at
  // each write-back, the same bytes (one and the same body port for all,
  // or each one of these variables itself or another of them), and nothing
  // inside the loop writes them in place, the variables hold equal bytes
  // throughout: they start equal (every other writer of S precedes the
  // copy) and W writes the same into both. S and C then hold equal bytes at
  // all times from the copy on, which one buffer does as well.
  constexpr size_t kMaxWriters = 64; // writers checked per copy (cost bound)
  const BufferUses &copy = tensorMoveUses(t);
  if (ends.size() != 1 || copy.overBudget || copy.writers.empty() ||
      (!copy.continuousUsers.empty() && !continuousMergeAllowed(t, ends, copy)))
    return std::nullopt;
  const SourceTrace &end = ends[0];
  if (end.steps.empty() || (end.kind != SourceKind::Ordinary && end.kind != SourceKind::UserInput &&
                            end.kind != SourceKind::UnnamedUserInput))
    return std::nullopt;
  const BufferFacts &f = bufferFacts(end);
  if (f.overBudget || f.writers.size() > kMaxWriters || copy.writers.size() > kMaxWriters)
    return std::nullopt;
  std::optional<NodeRef> loop = onlyLoopWriter(t, copy);
  std::vector<NodeRef> later; // C's writers after W (ext-written-copy from W on)
  if (!loop) {
    for (NodeRef x : copy.writers) {
      if (!plainLoopIn(x, t.graph) ||
          std::find(f.writers.begin(), f.writers.end(), x) == f.writers.end())
        continue;
      if (loop && *loop != x)
        return std::nullopt; // two loops take both
      loop = x;
    }
    if (!loop)
      return std::nullopt;
    for (NodeRef x : copy.writers)
      if (x != *loop && std::find(later.begin(), later.end(), x) == later.end())
        later.push_back(x);
  }
  const NodeRef w = *loop;
  const Node &wn = m_.graph(w.graph).node(w.node);
  for (NodeRef x : effectiveWriters(f.writers, f.writerSlots))
    if (x != w && !precedesCopy(t, trace, x))
      return std::nullopt;
  // The loop variables bound to S (P) and to C (Q), each bound statically.
  const std::pair<GraphId, OutPort> sBuffer{end.steps.back().graph, end.steps.back().port};
  const std::pair<GraphId, OutPort> cBuffer{t.graph, OutPort{t.node, 0}};
  std::set<uint32_t> vars = loopVariablesOf(w, f, copy);
  bool takesS = false, takesC = false;
  for (uint32_t j : vars) {
    auto b =
        j < wn.inputs.size() && wn.inputs[j] ? oneBufferOf(w.graph, *wn.inputs[j]) : std::nullopt;
    if (!b || (*b != sBuffer && *b != cBuffer))
      return std::nullopt;
    takesS = takesS || *b == sBuffer;
    takesC = takesC || *b == cBuffer;
  }
  if (!takesS || !takesC)
    return std::nullopt;
  // The write-back: the same port for all, or these variables themselves.
  GraphId body = wn.subgraphs[1];
  NodeId netOut = index_.netOutput(body);
  if (netOut == kNoNode)
    return std::nullopt;
  const Node &ret = m_.graph(body).node(netOut);
  std::optional<OutPort> common;
  bool anyPort = false, anyVariable = false;
  for (uint32_t j : vars) {
    auto slots = index_.resultSlots(body, j);
    if (slots.empty()) {
      anyVariable = true; // not written back: keeps its bytes
      continue;
    }
    if (slots.size() != 1 || slots[0] >= ret.inputs.size() || !ret.inputs[slots[0]])
      return std::nullopt;
    OutPort r = *ret.inputs[slots[0]];
    SourceTrace rt = traceSource(m_, index_, body, r, maxTraceSteps_);
    if (!rt.steps.empty() && !rt.refOnPath && rt.steps.back().graph == body) {
      const Node &d = m_.graph(body).node(rt.steps.back().port.node);
      auto p = d.intAttr("_parent_node_index");
      if (opKind(d) == OpKind::DataSource && p && *p >= 0 && vars.count(uint32_t(*p))) {
        anyVariable = true;
        continue;
      }
    }
    if (common && *common != r)
      return std::nullopt;
    common = r;
    anyPort = true;
  }
  if (anyPort && anyVariable)
    return std::nullopt;
  // Nothing inside the loop writes these variables in place.
  for (GraphId sub : wn.subgraphs)
    for (uint32_t j : vars) {
      std::vector<SlotRef> slots;
      for (NodeId d : index_.dataForParentInput(sub, j))
        for (uint32_t k = 0; k < m_.graph(sub).node(d).numOutputs; ++k)
          for (const SlotRef &sl : consumerSlots(m_, {sub, {d, k}}))
            slots.push_back(sl);
      BufferUses inside = exploreUses(m_, index_, slots, opts_.analysisBudget, nullptr,
                                      /*whileResultsCopied=*/true);
      if (inside.overBudget || !inside.writers.empty() || writes(inside.access))
        return std::nullopt;
    }
  // Graph outputs: the merged buffer may become one only if S is fresh and
  // no graph output itself (no new alias, no new layout conflict).
  if (!copy.rootOutputs.empty()) {
    if (!computedFresh(end) || !f.rootOutputs.empty() ||
        sourceLayoutAddsConflict(t, end, copy, true))
      return std::nullopt;
  }
  if (later.empty())
    return extensionDelete("ext-loop-mirror", kept, std::move(trace), std::move(ends));
  // C is written again after W. From W's end on, S and C hold equal bytes
  // and S has no writer left, so this is ext-written-copy's case with W in
  // the copy's place: the later writes land in S, which nobody may observe
  // (fresh, or a granted user input, and no graph output), and every other
  // access of S runs before each later writer (W runs before them all
  // already: both write C, and the original is race-free).
  if (!writesMayLandIn(t, end, copy, true))
    return std::nullopt;
  auto afterLoop = orderBefore(t, {w}, later);
  if (!afterLoop || !afterLoop->edges.empty())
    return std::nullopt;
  auto others = sourceAccessesAfterCopy(t, trace, end);
  if (!others)
    return std::nullopt;
  auto edges = orderBefore(t, *others, later);
  if (!edges)
    return std::nullopt;
  return extensionDelete("ext-loop-mirror", kept, std::move(trace), std::move(ends),
                         std::move(edges->edges));
}

std::optional<Verdict> TensorMoveDeleter::tryLoopWriteBack(NodeRef t, const Verdict &kept,
                                                           SourceTrace trace) {
  // The copy C of loop variable L (the buffer of the While's input p), in the
  // body, is the body's result for p: at the end of each iteration L takes
  // C's final bytes. Writing C's writes into L directly ends the iteration
  // with the same L (the write-back then finds L already there). When the
  // body's result for p is another buffer made in the body, the write-back
  // overwrites all of L with it instead, in both graphs
  // (ext-loop-overwritten). Inside the iteration L must look unchanged to
  // everything else either way: every other writer of L in the body runs
  // before the copy, and every other access of L in the body that may
  // follow the copy runs before each of C's writers (a NetOutput reads at
  // the end of the body, so it may not read L itself).
  // Outside the loop (one step) and in the cond (between iterations) only
  // the iteration's final L is seen, the same in both graphs.
  constexpr size_t kMaxWriters = 64; // writers checked per copy (cost bound)
  constexpr size_t kMaxUses = 64;    // accesses examined per copy
  const TraceStep &end = trace.steps.back();
  if (end.graph != t.graph)
    return std::nullopt;
  const Graph &body = m_.graph(t.graph);
  const Node &data = body.node(end.port.node);
  if (opKind(data) != OpKind::DataSource || body.parentNode == kNoNode)
    return std::nullopt;
  NodeRef loopRef{body.parentGraph, body.parentNode};
  const Node &loop = m_.graph(loopRef.graph).node(loopRef.node);
  auto p = data.intAttr("_parent_node_index");
  if (opKind(loop) != OpKind::While || loop.subgraphs.size() != 2 || loop.subgraphs[1] != t.graph ||
      !p || *p < 0 || *p >= int64_t(loop.inputs.size()) || !loop.inputs[size_t(*p)])
    return std::nullopt;
  // The body returns the copy (through views only) as loop variable p.
  NodeId netOut = index_.netOutput(t.graph);
  auto slots = index_.resultSlots(t.graph, uint32_t(*p));
  if (netOut == kNoNode || slots.size() != 1 || slots[0] >= body.node(netOut).inputs.size() ||
      !body.node(netOut).inputs[slots[0]])
    return std::nullopt;
  SourceTrace result =
      traceSource(m_, index_, t.graph, *body.node(netOut).inputs[slots[0]], maxTraceSteps_);
  // (A ref output on the way writes the copy's memory: one of its writers.)
  if (result.kind != SourceKind::Ordinary || result.steps.empty() ||
      result.steps.back().graph != t.graph)
    return std::nullopt;
  // Or the body returns another buffer made in the body (no Data: not L):
  // the write-back then overwrites the whole of L at the end of each
  // iteration, so what the copy's writes left in L is gone by then.
  const OutPort resultPort = result.steps.back().port;
  const bool returnsCopy = resultPort == OutPort{t.node, 0};
  if (!returnsCopy && opKind(body.node(resultPort.node)) == OpKind::DataSource)
    return std::nullopt;
  SourceTrace outer =
      traceSource(m_, index_, loopRef.graph, *loop.inputs[size_t(*p)], maxTraceSteps_);
  if (outer.kind == SourceKind::None || outer.kind == SourceKind::ControlFlow ||
      outer.steps.empty())
    return std::nullopt;
  const TraceStep &real = outer.steps.back();
  if (!sizeFits(t, outputBytes(m_.graph(real.graph).node(real.port.node), real.port.index)))
    return std::nullopt; // (the Data's own description sizes nothing: semantics.md §1)
  auto inBody = [&](NodeRef n) { return insideGraph(n, t.graph); };
  // The copy's memory leaves the body only as results, which the
  // write-back copies into loop variables (the While's outputs are its
  // inputs): graph outputs and accesses reached that way see the loop
  // variables, the same in both graphs. In the body it must feed no
  // continuous-input op (L may be caller memory or a graph output), unless
  // all of that op's inputs become L (one buffer: `outer` is no control
  // flow), which §6 exempts.
  const BufferUses &copy = tensorMoveUses(t);
  if (copy.overBudget ||
      std::any_of(copy.continuousUsers.begin(), copy.continuousUsers.end(),
                  [&](NodeRef n) { return inBody(n) && !exemptAfterMerge(t, n); }))
    return std::nullopt;
  std::vector<NodeRef> copyWriters;
  for (NodeRef w : effectiveWriters(copy))
    if (inBody(w))
      copyWriters.push_back(w);
  if (copyWriters.size() > kMaxWriters)
    return std::nullopt;
  // Every access of L in the body: through its Data and through any other
  // route (a variable by name, the same buffer bound to another loop
  // variable).
  std::vector<SlotRef> start = bufferSlots(outer);
  for (NodeId d : index_.dataForParentInput(t.graph, uint32_t(*p)))
    for (uint32_t k = 0; k < body.node(d).numOutputs; ++k)
      for (const SlotRef &sl : consumerSlots(m_, {t.graph, {d, k}}))
        start.push_back(sl);
  std::vector<SlotRef> visited;
  BufferUses uses = exploreUses(m_, index_, start, opts_.analysisBudget, &visited,
                                /*whileResultsCopied=*/true);
  if (uses.overBudget || uses.writers.size() > kMaxWriters || visited.size() > 4 * kMaxUses)
    return std::nullopt;
  for (NodeRef w : effectiveWriters(uses))
    if (w != loopRef && inBody(w) && !precedesCopy(t, trace, w))
      return std::nullopt;
  // L bound to a second loop variable too would take two results at the
  // write-back, in an order the deletion would change.
  for (const SlotRef &sl : visited)
    if (sl.graph == loopRef.graph && sl.slot.node == loopRef.node && sl.slot.index != uint32_t(*p))
      return std::nullopt;
  std::vector<NodeRef> others;
  for (const SlotRef &sl : visited) {
    NodeRef n{sl.graph, sl.slot.node};
    if (n == t || !inBody(n) || precedesCopy(t, trace, n))
      continue;
    if (std::find(others.begin(), others.end(), n) == others.end())
      others.push_back(n);
  }
  if (others.size() > kMaxUses)
    return std::nullopt;
  Verdict v;
  if (!copyWriters.empty()) {
    auto edges = orderBefore(t, others, copyWriters);
    if (!edges)
      return std::nullopt;
    v.orderEdges = std::move(edges->edges);
  } else if (!returnsCopy) {
    return std::nullopt; // (an unwritten copy: the read-only rules' case)
  } else {
    // Unwritten: L keeps the copy's bytes through the iteration when the
    // other accesses do not write (their writers were checked above).
  }
  v.outcome = Outcome::Delete;
  v.rule = returnsCopy ? "ext-loop-write-back" : "ext-loop-overwritten";
  v.looseSuccessors = true;
  v.reason = kept.rule;
  v.trace = std::move(trace);
  // The copy's writers now write L: its cached facts must learn them (found
  // by graphvet fuzz --seed 191: a later copy of L's source passed the
  // read-only test on stale facts).
  v.ends = {outer};
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
    // A control-flow node binding an output to the variable writes it (a
    // While writes each iteration's result there).
    for (const PortRef &p : index_.variableReboundBy(var))
      uses.writers.push_back({p.graph, p.port.node});
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

bool TensorMoveDeleter::apply(NodeRef t, Verdict &v, std::vector<std::string> &added,
                              std::vector<std::string> &moved) {
  Graph &g = m_.graph(t.graph);
  const Node &tm = g.node(t.node);
  OutPort producer = *tm.inputs[0];
  std::vector<NodeId> consumers;
  for (InPort c : tm.consumers[0])
    if (std::find(consumers.begin(), consumers.end(), c.node) == consumers.end())
      consumers.push_back(c.node);
  std::vector<NodeId> ctrlPreds = tm.ctrlIn, ctrlSuccs = tm.ctrlOut;

  auto ordered = [&](NodeId from, NodeId to) { return directlyOrdered(g, from, to); };
  auto edgeText = [&](NodeId a, NodeId b) { return name(t.graph, a) + " -> " + name(t.graph, b); };

  // Phase A, with the TensorMove still in place so that nothing is lost if
  // an edge would close a cycle: the scenario-5 edges, and the edges that
  // keep the TensorMove's control successors after every reader of the
  // memory (the consumers now read the source where the copy used to).
  std::vector<std::tuple<GraphId, NodeId, NodeId>> phaseA;
  auto rollback = [&] {
    for (auto [pg, a, b] : phaseA)
      m_.graph(pg).removeCtrlEdge(a, b);
  };
  std::vector<std::tuple<GraphId, NodeId, NodeId>> wanted;
  for (auto [sib, succ] : v.pending)
    wanted.push_back({t.graph, sib, succ});
  wanted.insert(wanted.end(), v.orderEdges.begin(), v.orderEdges.end());
  for (auto [pg, sib, succ] : wanted) {
    if (directlyOrdered(m_.graph(pg), sib, succ))
      continue; // already ordered directly
    bool isNew = false;
    std::string text = name(pg, sib) + " -> " + name(pg, succ);
    if (!addCtrlEdge(pg, sib, succ, &isNew)) {
      rollback();
      v = keepFor("rule3-cycle", "Rule 3: the control edge " + text + " would close a cycle");
      return false;
    }
    if (isNew) {
      phaseA.push_back({pg, sib, succ});
      added.push_back(text);
    }
  }
  std::vector<std::string> movedA;
  std::vector<NodeId> looseSuccs; // successors left unordered with a consumer
  for (NodeId cs : ctrlSuccs)
    for (NodeId c : consumers) {
      if (c == cs || ordered(c, cs))
        continue;
      bool isNew = false;
      if (!addCtrlEdge(t.graph, c, cs, &isNew)) {
        if (v.looseSuccessors) {
          if (std::find(looseSuccs.begin(), looseSuccs.end(), cs) == looseSuccs.end())
            looseSuccs.push_back(cs);
          continue;
        }
        rollback();
        v = keepFor("ctrl-order-cycle", "moving the control edge " + edgeText(t.node, cs) +
                                            " onto consumer " + name(t.graph, c) +
                                            " would close a cycle");
        return false;
      }
      if (isNew) {
        phaseA.push_back({t.graph, c, cs});
        movedA.push_back(edgeText(c, cs));
      }
    }

  // Phase B: the consumers read the producer; the TensorMove goes; its
  // remaining orderings (pred -> consumer, producer -> succ, and pred -> succ
  // when nothing consumed the copy) are re-made directly. Each of these was
  // implied by a path through the TensorMove, so none can close a cycle and
  // the topological index stays valid without re-numbering.
  // The sibling summaries follow the surgery: the TensorMove leaves the
  // producer's consumers and its own consumers join them.
  PortRef producerPort{t.graph, producer}, copyPort{t.graph, {t.node, 0}};
  std::vector<InPort> moving = tm.consumers[0];
  summaryRemove(producerPort, {t.graph, {t.node, 0}});
  for (InPort c : moving)
    summaryRemove(copyPort, {t.graph, c});
  summaries_.erase(copyPort);
  g.replaceAllUses({t.node, 0}, producer);
  g.removeNode(t.node);
  for (InPort c : moving)
    summaryAdd(producerPort, {t.graph, c});
  if (g.consumers(producer).empty()) {
    // An aliasing output nobody reads any more stops passing memory on:
    // re-classify the producer where it is itself a sibling.
    const Node &pn = g.node(producer.node);
    for (uint32_t i = 0; i < pn.inputs.size(); ++i) {
      SlotRef slot{t.graph, {pn.id, i}};
      if (!pn.inputs[i] || !slotKinds_.count(slot))
        continue;
      PortRef feeding{t.graph, *pn.inputs[i]};
      summaryRemove(feeding, slot);
      summaryAdd(feeding, slot);
    }
  }
  auto addMoved = [&](NodeId a, NodeId b) {
    if (a == b || ordered(a, b))
      return;
    bool isNew = false;
    addCtrlEdge(t.graph, a, b, &isNew);
    if (isNew)
      moved.push_back(edgeText(a, b));
  };
  for (NodeId cp : ctrlPreds)
    for (NodeId c : consumers)
      addMoved(cp, c);
  for (NodeId cs : ctrlSuccs)
    addMoved(producer.node, cs);
  if (consumers.empty())
    for (NodeId cp : ctrlPreds)
      for (NodeId cs : ctrlSuccs)
        addMoved(cp, cs);
  else
    for (NodeId cp : ctrlPreds)
      for (NodeId cs : looseSuccs)
        addMoved(cp, cs);
  moved.insert(moved.begin(), movedA.begin(), movedA.end());
  stats_.ctrlEdgesAdded += static_cast<int64_t>(added.size() + moved.size());
  return true;
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

} // namespace

TensorMoveDeleteStats runTensorMoveDelete(Module &m, const TensorMoveDeleteOptions &options,
                                          std::vector<Remark> *remarks) {
  if (m.numGraphs() == 0)
    return {};
  TensorMoveDeleter pass(m, options);
  return pass.run(remarks);
}

} // namespace graphvet
