// FoldScaleAxisPass (`fold-scale-axis`): folds a per-channel `Mul` by a
// constant (and, backward, the constant `Add` after it) into the weights and
// bias of the `Conv`, `ConvTranspose`, `Gemm` or `MatMul` before it
// (backward), or into the weights of the one after it, possibly through
// `Relu`/`LeakyRelu`/`MaxPool` when no scale is negative (forward)
// (docs/passes/fold-scale-axis.md). The folded constants are computed at
// compile time in the weights' dtype; results may differ within the derived
// bound of the `approx` contract (docs/numbers.md). One Remark per decision.
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

inline constexpr std::string_view kFoldScaleAxisName = "fold-scale-axis";
inline constexpr std::string_view kFoldScaleAxisBackwardOption = "fold_scale_axis.backward";
inline constexpr std::string_view kFoldScaleAxisForwardOption = "fold_scale_axis.forward";

struct FoldScaleAxisOptions {
  /// Fold a Mul (and its Add) into the producer's output channels (default
  /// true).
  bool backward = true;
  /// Fold a Mul into the consumer's input channels (default true).
  bool forward = true;
  /// The module's types as the pass receives it, when the caller has them
  /// (the pass manager: the verifier's, after the pass before changed the
  /// module); the pass's first inference takes them instead of inferring.
  TypeHandoff *inputTypes = nullptr;
};

struct FoldScaleAxisStats {
  int64_t backwardFolds = 0;              ///< Mul folded into its producer's weights
  int64_t forwardFolds = 0;               ///< Mul folded into its consumer's weights
  int64_t addsAbsorbed = 0;               ///< Add folded into a bias with a backward fold
  int64_t constsCreated = 0;              ///< folded weight and bias constants added
  int64_t constsRemoved = 0;              ///< scale, shift and weight constants left unused
  std::map<std::string, int64_t> refused; ///< by remark tag
};

/// Runs the pass over every live graph of `m`, Mul nodes in topological
/// order. When `remarks` is given, appends one remark per fold and per
/// refused direction.
FoldScaleAxisStats runFoldScaleAxis(Module &m, const FoldScaleAxisOptions &options,
                                    std::vector<Remark> *remarks);

} // namespace graphvet
