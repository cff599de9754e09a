// Model-like graphs for benchmarks and scale tests: a stack of
// transformer-block-like layers (layer norms, attention with a KV-cache
// variable updated in place, an all-reduce that scribbles on its input, an
// MLP that is sometimes a PartitionedCall, sometimes an If) with residual
// fan-out and about 10% TensorMoves, some removable and some necessary. Built
// directly in the IR (no text), deterministic for a seed, race-free by
// construction, at any size from a few dozen nodes to millions.
#pragma once

#include "ir/graph.h"

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace graphvet::props {

struct ModelOptions {
  /// Live nodes over every graph of the module. Sizes below the smallest
  /// model (a few nodes) are raised to it; any larger size is met exactly.
  size_t nodes = 10000;
  uint64_t seed = 1;
  /// Probability (percent) of each optional TensorMove pattern per layer;
  /// the default gives about 10% TensorMoves.
  unsigned patternPercent = 55;
  /// Probability (percent) that a layer's MLP is a PartitionedCall, and that
  /// a layer ends with an If.
  unsigned callPercent = 35;
  unsigned ifPercent = 12;
};

/// What deleting a TensorMove of the model means, by construction.
enum class TensorMoveRole : uint8_t {
  /// Removable, and the reference design removes it (scenarios 1, 2, 4, 5).
  Removable,
  /// Deleting it would be unsound (a write would reach memory someone else
  /// reads, a variable or a weight); every correct pass keeps it.
  Necessary,
  /// Sound to delete, but the reference design keeps it (caller memory
  /// without a grant, the output of control flow).
  Conservative,
};

std::string_view tensorMoveRoleName(TensorMoveRole r);

struct ModelTensorMove {
  GraphId graph = kNoGraph;
  NodeId node = kNoNode;
  TensorMoveRole role = TensorMoveRole::Removable;
  std::string_view pattern; ///< short tag, e.g. "ln-direct", "kv-variable-write"
};

struct ModelInfo {
  size_t nodes = 0;  ///< live nodes over every graph
  size_t layers = 0; ///< transformer-like layers
  size_t subgraphs = 0;
  size_t controlEdges = 0;
  /// Every TensorMove with its role, in creation order.
  std::vector<ModelTensorMove> tensorMoves;
  size_t count(TensorMoveRole r) const;
};

/// Builds the model. The root graph has user inputs 0 (token ids) and 1 (an
/// attention mask shared by every layer) and one graph output.
Module buildModelGraph(const ModelOptions &opts, ModelInfo *info = nullptr);

} // namespace graphvet::props
