// TensorMoveDeletePass, private to src/passes/tensor_move_delete/: the
// decision state shared by the pass's units (one class, split by concern
// over the files of this folder).
#pragma once

#include "passes/buffer_analysis.h"
#include "passes/order_index.h"
#include "passes/tensor_move_delete.h"

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

namespace graphvet::tmd {

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
                        std::vector<std::tuple<GraphId, NodeId, NodeId>> orderEdges = {});
/// True when an edge from `from` to `to` already orders all of `from` before
/// all of `to`: a control edge, or a data edge between two nodes that are not
/// calls. (A call is transparent: a data edge into it orders the producer
/// only before the subgraph's readers of that input, and a data edge out of
/// it only orders what produced that result. A control edge to or from a
/// call covers every node inside.)
bool directlyOrdered(const Graph &g, NodeId from, NodeId to);
Verdict keepFor(std::string rule, std::string reason);
std::string joinLimited(const std::vector<std::string> &items, size_t limit);

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

} // namespace graphvet::tmd
