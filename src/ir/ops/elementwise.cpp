// Elementwise ops: type inference and reference kernels.
#include "ir/ops/families.h"

namespace graphvet::ops {

std::span<const OpInfo> elementwiseOps() {
  return {};
}

} // namespace graphvet::ops
