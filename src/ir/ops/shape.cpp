// Shape and data-movement ops: type inference and reference kernels.
#include "ir/ops/families.h"

namespace graphvet::ops {
namespace {

constexpr PortAlias kOut0ViewIn0[] = {{0, 0}};

constexpr OpInfo kShapeOps[] = {
    {"Reshape", OpKind::Ordinary, 1, {}, kOut0ViewIn0, false, "output 0 views input 0"},
};

} // namespace

std::span<const OpInfo> shapeOps() {
  return kShapeOps;
}

} // namespace graphvet::ops
