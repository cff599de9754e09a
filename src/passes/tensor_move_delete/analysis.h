// TensorMoveDeletePass: the one analysis every rule and extension asks. Who
// reads and who writes a buffer, where a buffer really comes from, and who
// runs before whom -- through views, ref outputs, calls and control flow.
// Built once per module (the subgraph-boundary tables, a topological index
// per graph computed on first use) and kept current by the surgery: it
// learns each merge (noteMerge) and each relinked consumer (siblings()).
//
// Three groups of questions (docs/passes/tensor-move-delete.md, "The
// analysis"):
//   buffers   trace, resolveControlFlow, oneBufferOf, tensorMoveUses,
//             bufferFacts, effectiveWriters, accessingNodes, variableWriters,
//             siblings -- built on buffer_analysis.h;
//   order     reaches, addCtrlEdge, orderedWithoutCalls, precedesCopy,
//             calledBefore, isDead -- built on order_index.h;
//   upkeep    noteMerge, startSweep.
// The lower-level answers (exploreUses, traceSource) are pure functions of
// the module; this class adds the pass's bounds, caches and the questions
// that need several of them.
#pragma once

#include "ir/types.h"
#include "passes/buffer_analysis.h"
#include "passes/order_index.h"
#include "passes/tensor_move_delete.h"
#include "passes/tensor_move_delete/siblings.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <vector>

namespace graphvet::tmd {

/// What the whole module does with one buffer (every alias included).
struct BufferFacts {
  bool overBudget = false;
  std::set<uint32_t> rootOutputs;   ///< the graph outputs bound to it
  bool continuous = false;          ///< some continuous-input op reads it
  std::vector<NodeRef> writers;     ///< every node writing or scribbling on it
  std::vector<SlotRef> writerSlots; ///< the slot of each writer
};

class Analysis {
public:
  Analysis(Module &m, const TensorMoveDeleteOptions &options);

  Module &module() { return m_; }
  const Module &module() const { return m_; }
  const TensorMoveDeleteOptions &options() const { return opts_; }
  const ModuleIndex &index() const { return index_; }

  /// The module's TensorMoves in topological order, subgraphs inlined at the
  /// node that holds them (also records each graph's order for the index).
  std::vector<NodeRef> tensorMovesInOrder();

  /// Every port's type (ir/types.h), inferred on first use and then kept:
  /// the pass deletes only copies whose deletion changes no port's type
  /// (rules.cpp, `changesTypes`), so the answers stay true for every port
  /// that remains.
  const ModuleTypes &types();

  // ---- Buffers: where memory comes from, who reads and writes it ----------

  /// The buffer behind output `start` of graph `g`, traced back to its source.
  SourceTrace trace(GraphId g, OutPort start) const;
  /// Forward exploration from `slots` within the analysis budget.
  BufferUses explore(std::span<const SlotRef> slots, std::vector<SlotRef> *visited = nullptr,
                     bool whileResultsCopied = false) const;
  /// True when the memory given to input `slot` of `n` reaches a consumer
  /// through one of n's outputs (passesMemoryOn).
  bool passesOn(GraphId g, NodeId n, uint32_t slot) const;
  /// The possible real sources of a trace that ended at control flow: a
  /// branch Data continues at the holder's input, an If/Case output at every
  /// branch's result, a While output at the While's input (its loop variable
  /// lives there). nullopt when a loop body's Data is involved, a link is
  /// missing or the expansion budget runs out. With `allBindings`, every
  /// binding of the memory plan is followed instead: a loop's Data too, and
  /// a slot left unconnected or unbound ends at the port's own buffer.
  /// `followLoops` follows a loop Data to the While's input (the loop
  /// variable's buffer) without the rest of allBindings.
  std::optional<std::vector<SourceTrace>> resolveControlFlow(const SourceTrace &trace,
                                                             bool allBindings = false,
                                                             bool followLoops = false) const;
  /// The byte size of the buffer a trace really ends at: every buffer
  /// resolveControlFlow(trace, true) finds, when they agree. nullopt when
  /// they differ in size or the walk is cut off.
  std::optional<uint64_t> realBytes(const SourceTrace &trace) const;
  /// The one buffer port `in` of graph `g` is bound to, as the port that
  /// makes it (through views and ref outputs, and control flow that binds
  /// one buffer only); nullopt when it is several or unknown.
  std::optional<std::pair<GraphId, OutPort>> oneBufferOf(GraphId g, OutPort in) const;

  /// What happens to the memory of TensorMove `t`'s output (cached for the
  /// decision under way; see setWhileResultsCopied).
  const BufferUses &tensorMoveUses(NodeRef t);
  /// A new decision (or a new look at one): tensorMoveUses explores again.
  void forgetTensorMoveUses() { tmUses_.reset(); }
  /// tensorMoveUses treats a While's results as copied into its loop
  /// variables (the extensions' view) or as the While's outputs (the design's).
  void setWhileResultsCopied(bool copied) { preciseWhileResults_ = copied; }

  /// Cached per buffer; deletions keep the cache current through noteMerge.
  const BufferFacts &bufferFacts(const SourceTrace &trace);
  /// The input slots that read the buffer a trace ends at directly.
  std::vector<SlotRef> bufferSlots(const SourceTrace &trace) const;
  /// Some op of `users` (continuous-input ops) is not exempt from §6.
  bool anyNonExempt(const std::vector<NodeRef> &users) const;
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
  /// The nodes of `visited` slots, each once in visiting order, without
  /// calls (which access nothing themselves: their bodies' nodes are
  /// visited in their own right), without ops that access nothing (every
  /// output a view or variable-bound: their outputs' consumers are visited
  /// or read another buffer) and without `except`.
  std::vector<NodeRef> accessingNodes(const std::vector<SlotRef> &visited,
                                      std::initializer_list<NodeRef> except) const;
  /// Writers of variable `var`'s buffer anywhere in the module (nullopt when
  /// the exploration ran out of budget). Deleting TensorMoves never creates
  /// a writer of a variable, so the cache stays valid.
  const std::optional<std::vector<NodeRef>> &variableWriters(const std::string &var);
  /// The siblings of TensorMoves by producer output (scenario 5).
  SiblingSummaries &siblings() { return siblings_; }

  // ---- Order: who runs before whom -----------------------------------------

  /// Graph `g` is acyclic (its topological index exists).
  bool acyclic(GraphId g) { return order(g).valid(); }
  /// A non-empty path of data or control edges leads from `from` to `to`.
  /// Answered by the topological index or, with naiveReachability, by a
  /// whole-graph search (same answers).
  bool reaches(GraphId g, NodeId from, NodeId to);
  /// Adds control edge from -> to unless it would close a cycle (returns
  /// false, changing nothing, then or when from == to); true when the edge
  /// exists afterwards (`added`: it is new). Keeps the index valid.
  bool addCtrlEdge(GraphId g, NodeId from, NodeId to, bool *added);
  /// A path of data or control edges leads from `from` to `to` in graph `g`
  /// on which every step runs before the next: an If/Case/While runs as one
  /// step, and a call is passed only where it orders its ends (entered by a
  /// control edge; or by a data edge into an input its body reads, and left
  /// by a control edge). Searches at most 128 nodes placed between the two
  /// ends; false when the budget runs out.
  bool orderedWithoutCalls(GraphId g, NodeId from, NodeId to);
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
  bool precedesCopy(NodeRef t, const SourceTrace &trace, NodeRef w,
                    const BufferUses *copy = nullptr);
  /// For a writer inside call `call` (nested at any depth): a control edge
  /// from a call holding it leads to one of `holders` (by a path without
  /// calls), which orders every node inside before it.
  bool calledBefore(NodeRef call, const std::vector<NodeRef> &holders);
  /// Nothing `n` computes can be observed: it writes nothing in place (no
  /// ref output, scribble or variable binding), is an ordinary op or a copy,
  /// and every consumer of its outputs is dead too (a NetOutput, call or
  /// control-flow consumer is not, except the result of a call, If or Case
  /// for an output of the holder that nobody consumes). Searches at most
  /// 256 nodes; false when the budget runs out. Deleting copies changes an
  /// answer only from live to dead (the memo keeps "live"): a deleted copy's
  /// consumers move to its producer, and both were dead or both live, except
  /// that a holder output may lose its last consumer.
  bool isDead(NodeRef n);

  // ---- Upkeep ----------------------------------------------------------------

  /// After a deletion merged a copy into the buffer(s) `ends`: the copy's
  /// accesses become the source's.
  void noteMerge(const std::vector<SourceTrace> &ends, const BufferUses &copy);
  /// Before the kept copies are all decided once more: facts cached per
  /// buffer only grow with merges, but a merge can also make a
  /// continuous-input op exempt, which only a fresh look sees; deadness,
  /// too, only grows (a result may lose its last consumer).
  void startSweep();

private:
  OrderIndex &order(GraphId g);
  /// resolveControlFlow's step at a trace `end` at control flow: pushes the
  /// traces it continues with onto `work` and the buffers it ends at onto
  /// `ends`; false when the step cannot be resolved.
  bool expandControlFlow(const TraceStep end, bool allBindings, bool followLoops,
                         std::vector<SourceTrace> &work, std::vector<SourceTrace> &ends) const;
  /// Identity of the buffer a (non-control-flow) trace ends at.
  using BufferKey = std::tuple<int, GraphId, NodeId, uint32_t, std::string>;
  BufferKey bufferKey(const SourceTrace &trace) const;
  /// precedesCopy's parts: the copy and each If/Case/While holding it,
  /// innermost first; the verdict for a writer lifted to one of them.
  std::vector<NodeRef> controlFlowHolders(NodeRef t) const;
  bool precedesHolder(NodeRef holder, NodeRef w, GraphId liftedFrom, const BufferUses *copy);
  bool precedesInGraph(NodeRef t, const SourceTrace &trace, NodeRef w);
  /// `w` is a node of the copy's trace path (through call boundaries too).
  bool onTracePath(const SourceTrace &trace, NodeRef w) const;
  /// The copy feeds its subgraph's NetOutput, and that subgraph is a call
  /// body: the result stands for readers outside the call.
  bool feedsCallResult(NodeRef t) const;
  /// A call holding the copy (at any depth) has a control edge from the
  /// writer, or from a node the writer is ordered before (a path without
  /// calls), in the writer's graph.
  bool beforeEnclosingCall(NodeRef t, NodeRef w);

  Module &m_;
  const TensorMoveDeleteOptions &opts_;
  ModuleIndex index_;
  size_t maxTraceSteps_ = 0;
  std::vector<std::unique_ptr<OrderIndex>> orders_;
  std::vector<std::optional<std::vector<NodeId>>> topo_;
  /// Per graph and node: 0 not known yet, 1 dead, 2 live (see isDead).
  std::vector<std::vector<uint8_t>> dead_;
  // Per-decision cache of the forward exploration from the TensorMove.
  std::optional<BufferUses> tmUses_;
  /// tmUses_ treats a While's results as copied (set for the extensions).
  bool preciseWhileResults_ = false;
  /// bufferFacts' cache. Monotone: a buffer only ever gains accesses
  /// (deletions merge copies into it), so facts are only ever added.
  std::map<BufferKey, BufferFacts> facts_;
  std::map<std::string, std::optional<std::vector<NodeRef>>> variableWriters_;
  SiblingSummaries siblings_;
  std::optional<ModuleTypes> types_;
};

/// True when an edge from `from` to `to` already orders all of `from` before
/// all of `to`: a control edge, or a data edge between two nodes that are not
/// calls. (A call is transparent: a data edge into it orders the producer
/// only before the subgraph's readers of that input, and a data edge out of
/// it only orders what produced that result. A control edge to or from a
/// call covers every node inside.)
bool directlyOrdered(const Graph &g, NodeId from, NodeId to);
/// True when `n` lies in graph `g` or in a subgraph nested in it.
bool insideGraph(const Module &m, NodeRef n, GraphId g);
/// The subgraph of `holder` that holds `n` (at any depth), or kNoGraph.
GraphId subgraphOf(const Module &m, NodeRef holder, NodeRef n);
/// True when the copy `t` and the node `w` are in two different branches
/// of one If/Case: in a run (or loop iteration) where the copy runs, `w`
/// does not, and the copy's readers read its buffer only in that run or
/// iteration. A writer of the source there never runs between the copy
/// and its readers. (Not for writers of the copy: the source persists
/// across loop iterations, the copy does not.)
bool otherBranch(const Module &m, NodeRef t, NodeRef w);

} // namespace graphvet::tmd
