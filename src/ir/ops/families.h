// The numeric op families: each family file defines its ops' rows (memory
// behaviour, type inference, kernel) and hands them to the op library here.
#pragma once

#include "ir/op_library.h"

#include <array>
#include <span>

namespace graphvet::ops {

std::span<const OpInfo>
elementwiseOps();                    ///< elementwise.cpp: arithmetic, math, logic, casts, random
std::span<const OpInfo> shapeOps();  ///< shape.cpp: data movement and shape ops
std::span<const OpInfo> reduceOps(); ///< reduce.cpp: reductions, softmax, MatMul, Gemm
std::span<const OpInfo> nnOps();     ///< nn.cpp: convolution, pooling, norms, Resize, LSTM

inline std::array<std::span<const OpInfo>, 5> numericFamilies() {
  return {elementwiseOps(), logicOps(), shapeOps(), reduceOps(), nnOps()};
}

} // namespace graphvet::ops
