// SimplifyInferencePass (`simplify-inference`): rewrites the inference forms
// of BatchNormalization, InstanceNormalization and LayerNormalization into
// element-wise arithmetic (docs/passes/simplify-inference.md). Inference
// Dropout is left to the `simplify` pass, whose rule table already forwards
// it. The results may differ from the original's within the derived bound of
// the `approx` contract (docs/numbers.md). One Remark per decision.
#pragma once

#include "ir/graph.h"
#include "ir/types.h"
#include "passes/remark.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace graphvet {

inline constexpr std::string_view kSimplifyInferenceName = "simplify-inference";
/// Module options (`--option KEY=true|false`) switching the three rewrites.
inline constexpr std::string_view kSimplifyInferenceBatchNormOption =
    "simplify_inference.batch_norm";
inline constexpr std::string_view kSimplifyInferenceInstanceNormOption =
    "simplify_inference.instance_norm";
inline constexpr std::string_view kSimplifyInferenceLayerNormOption =
    "simplify_inference.layer_norm";

struct SimplifyInferenceOptions {
  /// Rewrite BatchNormalization with constant statistics into x * s + b'
  /// with s and b' folded at compile time (default true).
  bool batchNorm = true;
  /// Rewrite InstanceNormalization into reductions and arithmetic (default
  /// true).
  bool instanceNorm = true;
  /// Rewrite LayerNormalization into reductions and arithmetic (default
  /// true).
  bool layerNorm = true;
  /// The module's types as the pass receives it, when the caller has them
  /// (the pass manager: the verifier's, after the pass before changed the
  /// module); the pass's first inference takes them instead of inferring.
  TypeHandoff *inputTypes = nullptr;
};

struct SimplifyInferenceStats {
  int64_t batchNorms = 0;                 ///< BatchNormalization rewritten to Mul + Add
  int64_t instanceNorms = 0;              ///< InstanceNormalization rewritten
  int64_t layerNorms = 0;                 ///< LayerNormalization rewritten
  int64_t nodesCreated = 0;               ///< nodes added (constants included)
  int64_t constsRemoved = 0;              ///< statistics constants left unused and removed
  std::map<std::string, int64_t> refused; ///< by remark tag
};

/// Runs the pass over every live graph of `m`. When `remarks` is given,
/// appends one remark per rewrite and per refusal, in topological order of
/// each graph.
SimplifyInferenceStats runSimplifyInference(Module &m, const SimplifyInferenceOptions &options,
                                            std::vector<Remark> *remarks);

} // namespace graphvet
