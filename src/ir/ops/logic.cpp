// Comparisons, logic, Where, NaN tests, casts, Dropout and random ops: type
// inference and reference kernels.
#include "ir/ops/families.h"

namespace graphvet::ops {

std::span<const OpInfo> logicOps() {
  return {};
}

} // namespace graphvet::ops
