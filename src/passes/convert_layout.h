// ConvertLayoutPass (`convert-layout`, TVM's ConvertLayout): rewrites every
// layout-sensitive op (tensor-semantics.md §5) to a target layout (NHWC or
// NCHW), with its constant weights transposed at compile time, then carries
// the new layout through layout-agnostic ops (element-wise, Concat, Softmax,
// Split, Slice, Pad, reductions, Transpose...) so that the transposes meet and
// cancel; graph inputs and outputs keep their layout. Bit-exact: the kernels
// compute on logical indices (docs/passes/convert-layout.md).
#pragma once

#include "ir/graph.h"
#include "passes/remark.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace graphvet {

inline constexpr std::string_view kConvertLayoutName = "convert-layout";
/// The module option naming the target layout: "NHWC" or "NCHW".
inline constexpr std::string_view kConvertLayoutTargetOption = "convert_layout.target";

enum class TargetLayout { NCHW, NHWC };

struct ConvertLayoutOptions {
  /// The layout every layout-sensitive op is rewritten to; nullopt (the
  /// default: no option given) makes the pass do nothing.
  std::optional<TargetLayout> target;
};

struct ConvertLayoutStats {
  int64_t opsConverted = 0;        ///< layout-sensitive ops rewritten to the target
  int64_t opsPropagated = 0;       ///< layout-agnostic ops now computing in a permuted layout
  int64_t transposesInserted = 0;  ///< Transpose nodes created
  int64_t transposesCancelled = 0; ///< Transpose nodes removed (composed away or cancelled)
  int64_t constsTransposed = 0;    ///< constants permuted at compile time (new Const)
  int64_t reshapesInserted = 0;    ///< Reshapes raising a broadcast operand's rank
  int64_t transposesLeft = 0;      ///< Transpose nodes in the rewritten graphs afterwards
  std::map<std::string, int64_t> refused; ///< by remark tag
};

/// Runs the pass over every live graph of `m`; with `remarks`, appends one
/// remark per decision.
ConvertLayoutStats runConvertLayout(Module &m, const ConvertLayoutOptions &options,
                                    std::vector<Remark> *remarks);

} // namespace graphvet
