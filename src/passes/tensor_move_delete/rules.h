// TensorMoveDeletePass: the reference design's decision (rules.cpp) and the
// parts of its scenario 5 (scenario5.cpp).
#pragma once

#include "passes/tensor_move_delete/analysis.h"
#include "passes/tensor_move_delete/extension.h"
#include "passes/tensor_move_delete/verdict.h"

#include <optional>
#include <vector>

namespace graphvet::tmd {

/// The reference design's verdict on TensorMove `t`: step 0, the source
/// trace, Rules 1-5 with scenario 5 (docs/passes/tensor-move-delete.md,
/// "How one TensorMove is decided"). `extensions` is asked only where it
/// widens a rule (ext-sibling-holder, in scenario 5).
Verdict decideByDesign(Analysis &a, const Extensions &extensions, NodeRef t);

/// The siblings of TensorMove `tm`: the other consumers of the producer
/// output it copies, by kind (the summary counts `tm` itself as a reader).
struct Siblings {
  NodeId tm;
  PortSummary &summary;
  /// The siblings of kind `k` other than the TensorMove, in id order.
  std::vector<NodeId> others(SiblingKind k) const;
  /// The first of them, or kNoNode.
  NodeId first(SiblingKind k) const;
};

// Scenario 5's parts (scenario5.cpp), in the order scenario5Siblings asks.

/// Siblings that hold subgraphs: the design keeps the copy; an extension
/// that widens scenario 5 (ext-sibling-holder) may sort them into readers
/// and writers (`roles`) instead.
std::optional<Verdict> holderSiblings(Analysis &a, const Extensions &extensions, NodeRef t,
                                      Verdict &v, const Siblings &siblings, HolderRoles &roles);
/// A writing sibling: no successor may write, and each successor must be
/// ordered before it by a control edge already.
std::optional<Verdict> writingSiblings(Analysis &a, NodeRef t, Verdict &v,
                                       const std::vector<SuccInfo> &succs,
                                       const std::vector<NodeId> &writers,
                                       const std::vector<const SuccInfo *> &writingSuccs);
/// A reading sibling and a writing successor: the pending edge sibling ->
/// successor, unless it would close a cycle or cannot order the write.
std::optional<Verdict> readingSiblings(Analysis &a, NodeRef t, Verdict &v,
                                       const std::vector<NodeId> &readers,
                                       const std::vector<const SuccInfo *> &writingSuccs);

} // namespace graphvet::tmd
