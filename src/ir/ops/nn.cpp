// Convolution, pooling, normalization, Resize and LSTM: type inference and reference kernels.
#include "ir/ops/families.h"

namespace graphvet::ops {

std::span<const OpInfo> nnOps() {
  return {};
}

} // namespace graphvet::ops
