// Shared by the simplify-inference files: what the analysis decides about
// one normalization node (a plan, or a refusal with its remark tag) and the
// surgery that carries a plan out.
#pragma once

#include "ir/graph.h"
#include "ir/tensor.h"
#include "ir/types.h"

#include <optional>
#include <string>
#include <vector>

namespace graphvet::simplify_inference {

/// Why a node is left alone: the stable remark tag and the sentence.
struct Refusal {
  std::string tag;
  std::string why;
};

/// BatchNormalization with constant statistics: y = x * scale + shift, both
/// constants folded at compile time (shaped to broadcast along the channel).
struct BatchNormPlan {
  OutPort x;
  Tensor scale; ///< scale / sqrt(var + eps), in the data's dtype
  Tensor shift; ///< bias - mean * that, in the data's dtype
};

/// Instance or layer normalization as reductions over `axes` and
/// element-wise steps in the data's dtype.
struct NormPlan {
  OutPort x;
  OutPort scale;
  std::optional<OutPort> bias;
  DType dtype = DType::F32;
  std::vector<int64_t> axes; ///< reduced axes, non-negative, ascending
  double epsilon = 1e-5;     ///< the attribute's f32 value
  /// InstanceNormalization in NCHW: scale and bias ([C]) are reshaped to
  /// this shape ([C, 1, ...]) to broadcast along axis 1; empty: used as is.
  std::vector<int64_t> paramShape;
  /// LayerNormalization: the variance as ONNX's function body computes it,
  /// mean(x * x) - mean(x)^2 (the kernel's order), not the mean of the
  /// centred squares InstanceNormalization uses. The two differ far beyond a
  /// few roundings when a row's mean is large against its spread (found by
  /// the campaign's norm motif, issue 29).
  bool varianceFromSquares = false;
  /// LayerNormalization: the stash type U its statistics are computed in
  /// (stash_type: f32 by default, or bf16). When it differs from the data's
  /// dtype the rewrite casts x to U, normalizes in U and casts the result
  /// back before Scale and B, as ONNX's function body does (in the data's
  /// f16 the one-pass variance went negative, and the square root NaN).
  std::optional<DType> stash;
};

/// Refusals every rewrite shares (control edges, reserved or memory
/// attributes, an unknown or non-float data type); nullopt: none applies.
std::optional<Refusal> commonRefusal(const Graph &g, const Node &n, const TensorType *xType);

std::optional<Refusal> planBatchNorm(const Graph &g, const Node &n, const TensorType &xType,
                                     BatchNormPlan &plan);
std::optional<Refusal> planInstanceNorm(const Graph &g, const Node &n, const TensorType &xType,
                                        NormPlan &plan);
std::optional<Refusal> planLayerNorm(const Graph &g, const Node &n, const TensorType &xType,
                                     const TensorType *scaleType, const TensorType *biasType,
                                     NormPlan &plan);

/// The node's `epsilon` as ONNX defines it: an f32 value (default 1e-5).
double epsilonOf(const Node &n);

/// Carries a plan out on node `id` of `g`: the new nodes replace every use
/// of output 0, the node is removed, and the last new node takes its name.
/// Returns the number of nodes created.
int64_t rewriteBatchNorm(Graph &g, NodeId id, BatchNormPlan plan);
int64_t rewriteNorm(Graph &g, NodeId id, const NormPlan &plan);

} // namespace graphvet::simplify_inference
