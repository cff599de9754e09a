// TensorMoveDeletePass: the driver -- TensorMoves decided one at a time in
// the module's topological order (the rules, then the extensions), each
// deletion done by the surgery, neighbours re-queued until nothing changes,
// one remark per TensorMove (docs/passes/tensor-move-delete.md, "Order of
// work"). runTensorMoveDelete (tensor_move_delete.h) runs one Pass.
#pragma once

#include "passes/tensor_move_delete.h"
#include "passes/tensor_move_delete/analysis.h"
#include "passes/tensor_move_delete/extension.h"
#include "passes/tensor_move_delete/siblings.h"
#include "passes/tensor_move_delete/verdict.h"

#include <deque>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace graphvet::tmd {

class Pass {
public:
  Pass(Module &m, const TensorMoveDeleteOptions &options)
      : m_(m), opts_(options), a_(m, options), extensions_(extensionsFor(options)) {}

  TensorMoveDeleteStats run(std::vector<Remark> *remarks);

private:
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
  /// One remark per TensorMove: a re-decision replaces the earlier one and
  /// moves it to the end (remarks come out in the order of final decisions).
  using Log = std::vector<std::optional<Remark>>;

  /// The rules' verdict, or an extension's when the rules keep the copy.
  Verdict decide(NodeRef t);
  /// Decides `t` (deleting it when the verdict says so) and logs its remark.
  void visit(NodeRef t, Log &log);
  /// Deletes `t` as `v` says; false (v then keeps) when the surgery refuses.
  bool tryDelete(NodeRef t, Verdict &v, Remark &remark);
  /// A refused surgery (ctrl-order-cycle) of the design's verdict: an
  /// extension's verdict, which may leave such an edge out, instead.
  bool retryWithExtensions(NodeRef t, Verdict &v, bool fromExtension);
  void record(TensorMoveState &st, NodeRef t, Remark remark, Log &log);
  /// Queues every kept copy once more (after deletions, or when a loop's
  /// result changed); false when nothing needs deciding again.
  bool sweep(const std::vector<NodeRef> &all);

  // requeue.cpp: the kept TensorMoves a deletion may change.
  void requeueNeighbours(NodeRef t, OutPort producer, const std::vector<InPort> &consumers,
                         const std::vector<NodeId> &ctrlNeighbours);
  void addKeptAt(PortRef port, std::vector<NodeRef> &candidates) const;
  void upstreamCandidates(NodeRef t, OutPort producer, std::vector<NodeRef> &candidates);
  void loopCandidates(NodeRef t, const std::vector<InPort> &consumers,
                      std::vector<NodeRef> &candidates);
  void resultCandidates(NodeRef t, OutPort producer, std::vector<NodeRef> &candidates);
  void enqueue(const std::vector<NodeRef> &candidates);

  TensorMoveState *stateOf(NodeRef t);
  void forgetKept(NodeRef t);

  Module &m_;
  const TensorMoveDeleteOptions &opts_;
  Analysis a_;
  const Extensions &extensions_;
  TensorMoveDeleteStats stats_;
  std::deque<NodeRef> queue_;
  std::vector<TensorMoveState> state_;
  /// Per graph, node id -> ordinal (UINT32_MAX for other nodes).
  std::vector<std::vector<uint32_t>> ordinal_;
  /// Kept TensorMoves by the port they read, so a deletion finds the kept
  /// copies of the same producer without scanning its consumers.
  std::unordered_map<PortRef, std::set<NodeRef>, RefHash> keptByPort_;
  /// A deletion made a While body's result the copy's source: the While may
  /// no longer write a loop variable back, which any alias of that buffer
  /// can see, so run() decides the kept copies once more.
  bool loopResultsChanged_ = false;
  /// Deletions since the kept copies were last all decided (extensions).
  size_t deletedSinceSweep_ = 0;
};

} // namespace graphvet::tmd
