// Model-like numeric graphs for benchmarking the mid-end (issue 30): a stack
// of small CNN and transformer blocks with real ONNX ops, static shapes and
// constant weights, in which every pattern a mid-end pass acts on is planted
// on purpose (shape arithmetic, duplicate subexpressions, cast chains,
// Conv->BatchNormalization->Relu, per-channel scales, parallel MatMuls,
// transpose pairs, dead branches, fusable element-wise chains). Built
// directly in the IR, deterministic for a seed, any size from ~50 nodes to
// millions; tensors are tiny (64 elements) so the interpreter can run small
// instances. The builder counts every pattern it planted, so tests can say
// what -O3 must do with them.
#pragma once

#include "ir/graph.h"

#include <cstddef>
#include <cstdint>

namespace graphvet::props {

struct NumericModelOptions {
  /// Live nodes of the module. Sizes below the smallest model are raised to
  /// it; any larger size is met exactly (a fusable element-wise tail pads).
  size_t nodes = 10000;
  uint64_t seed = 1;
  /// Probability (percent) that a block is a CNN block (else transformer).
  unsigned cnnPercent = 50;
};

/// Planted pattern instances, by what the passes should do with them.
struct NumericModelInfo {
  size_t nodes = 0; ///< live nodes
  size_t cnnBlocks = 0, transformerBlocks = 0;
  /// Shape -> Gather -> Concat feeding a Reshape: 3 nodes fold-constant folds
  /// into one constant per instance (the Reshape stays).
  size_t shapeArithmetic = 0;
  /// Pairs of identical nodes on the same inputs; cse merges one of each.
  size_t duplicatePairs = 0;
  /// f16 -> f32 -> f16 round trips (simplify removes both casts) and casts
  /// to the value's own type (simplify removes the cast).
  size_t castRoundTrips = 0, castNoOps = 0;
  /// f32 -> f16 -> f32 round trips: lossy, every correct pass keeps them.
  size_t lossyCastChains = 0;
  /// Conv -> BatchNormalization -> Relu (simplify-inference rewrites the
  /// BN, fold-scale-axis folds its Mul into the Conv).
  size_t convBnRelu = 0;
  /// Per-channel Mul by a positive constant before a Conv (forward fold).
  size_t channelScales = 0;
  /// LayerNormalization ops (simplify-inference rewrites them).
  size_t layerNorms = 0;
  /// Groups of three MatMuls on one input with constant weights.
  size_t parallelMatMulGroups = 0;
  /// Transpose followed by its inverse (simplify removes both).
  size_t transposePairs = 0;
  /// Transposes that are needed (attention's K^T); no pass removes them.
  size_t neededTransposes = 0;
  /// Nodes whose results reach no output (dce removes them all).
  size_t deadNodes = 0;
  /// Element-wise chains of at least two ops (fuse-ops groups them).
  size_t fusableChains = 0;
  /// Nodes of the padding tail (a fusable element-wise chain).
  size_t paddingNodes = 0;

  /// Live nodes after the -O3 clean-up passes (-O3 without fuse-ops), by
  /// construction: a CNN block of 28 nodes keeps 13 (dead branch, three
  /// casts, the transpose pair, the duplicate, the BN's constants and its
  /// Mul and Add, and the channel scale go; the folded weights and bias
  /// replace the originals), a transformer block of 46 becomes 52 (the two
  /// layer norms expand from 3 to 12 nodes each: ONNX's one-pass variance
  /// takes mean(x * x) and mean^2 apart; Q/K/V become one MatMul on
  /// concatenated weights and a Split, the shape arithmetic becomes one
  /// constant, dead branch and duplicate go), and the constants equal in
  /// every transformer block (the softmax scale, the folded Reshape
  /// targets, the layer norms' epsilon) are merged into one each. An upper
  /// bound: random weights that happen to be equal merge too.
  size_t predictedNodesAfterCleanup() const;
};

/// Builds the model: user input 0 is f32[1, 4, 4, 4], one graph output of
/// the same type.
Module buildNumericModelGraph(const NumericModelOptions &opts, NumericModelInfo *info = nullptr);

} // namespace graphvet::props
