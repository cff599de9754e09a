// TensorMoveDeletePass: removes every TensorMove whose copy is provably
// redundant (docs/passes/tensor-move-delete.md explains how it decides).
// MLIR-style entry point: an options struct and one run function returning
// statistics; every decision is explained by one Remark per TensorMove.
#pragma once

#include "ir/graph.h"
#include "passes/remark.h"
#include "passes/reuse_options.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace graphvet {

inline constexpr std::string_view kTensorMoveDeleteName = "tensor-move-delete";
/// Module option selecting conservative mode ("true" / "false"); a pass
/// option, so `--option tensor_move_delete.conservative=true` sets it too.
inline constexpr std::string_view kTensorMoveDeleteConservativeOption =
    "tensor_move_delete.conservative";

struct TensorMoveDeleteOptions {
  /// What the memory-reuse options grant for root Data sources (Rule 2).
  /// Default: nothing, so a TensorMove of caller memory is always kept.
  ReuseGrants grants;
  /// Most input slots one forward exploration of a buffer may visit; beyond
  /// it the analysis answers "unknown" and the TensorMove is kept.
  size_t analysisBudget = size_t{1} << 16;
  /// Most scenario-5 control edges (reading siblings x writing successors)
  /// one deletion may add; beyond it the TensorMove is kept
  /// (rule3-sibling-budget). Siblings themselves are summarized per producer
  /// output and kept current, so a hub costs its size once, not per copy.
  size_t maxSiblings = size_t{1} << 14;
  /// How many times one TensorMove may be decided (the first visit plus
  /// re-visits after a neighbour was deleted). Bounds the fixpoint.
  unsigned maxVisitsPerTensorMove = 4;
  /// The reference design's way of answering ordering questions, kept as a
  /// baseline for `graphvet bench --compare` and for decision-equality
  /// tests: every "does a path lead from a to b?" (Rule 3, variable writers)
  /// and every cycle check of a candidate control edge is a whole-graph
  /// search (Graph::reaches), and each TensorMove gets one more whole-graph
  /// search (does a successor reach the producer?). Decisions are identical
  /// to the default, which answers the same questions with a dynamic
  /// topological index and searches bounded to the nodes ordered between
  /// the two ends; only the cost differs (quadratic on large graphs).
  bool naiveReachability = false;
  /// The reference design's scope (with every soundness fix): only Rules
  /// 1-5 decide, no extension (`ext-*` tags) is tried. Set by
  /// `graphvet opt --tm-conservative`, PipelineOptions::conservative or the
  /// module option `tensor_move_delete.conservative = "true"`. The default
  /// (false) also deletes copies the extensions prove redundant
  /// (docs/passes/tensor-move-delete.md, "Extensions").
  bool conservative = false;
};

struct TensorMoveDeleteStats {
  int64_t tensorMoves = 0;    ///< TensorMoves in the module before the pass
  int64_t deleted = 0;        ///< removed
  int64_t kept = 0;           ///< left in place (skipped ones included)
  int64_t skipped = 0;        ///< left in place because of a reserved attribute
  int64_t ctrlEdgesAdded = 0; ///< control edges the pass added (scenario 5 and moved ones)
};

/// Runs the pass over every graph of `m`. When `remarks` is given, appends
/// exactly one remark per TensorMove (its final decision), in the order the
/// final decisions were taken.
TensorMoveDeleteStats runTensorMoveDelete(Module &m, const TensorMoveDeleteOptions &options,
                                          std::vector<Remark> *remarks);

} // namespace graphvet
