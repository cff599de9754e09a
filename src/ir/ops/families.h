// The numeric op families: each family file defines its ops' rows (memory
// behaviour, type inference, kernel) and hands them to the op library here.
#pragma once

#include "ir/op_library.h"

#include <array>
#include <span>

namespace graphvet::ops {

// elementwise.cpp: arithmetic, math and activations.
std::span<const OpInfo> elementwiseOps();
// logic.cpp: comparisons, logic, Where, casts, Dropout and random ops.
std::span<const OpInfo> logicOps();
// shape.cpp: data movement and shape ops.
std::span<const OpInfo> shapeOps();
// reduce.cpp: reductions, the softmax family, MatMul and Gemm.
std::span<const OpInfo> reduceOps();
// nn.cpp: convolution, pooling, normalization, Resize and LSTM.
std::span<const OpInfo> nnOps();
// state.cpp: the Assign family (in-place writes with a value).
std::span<const OpInfo> stateOps();

inline std::array<std::span<const OpInfo>, 6> numericFamilies() {
  return {elementwiseOps(), logicOps(), shapeOps(), reduceOps(), nnOps(), stateOps()};
}

} // namespace graphvet::ops
