// The layout-sensitive ops (see layout_ops.h).
#include "ir/layout_ops.h"

#include <algorithm>
#include <array>

namespace graphvet {

bool isLayoutSensitiveOp(std::string_view type) {
  static constexpr std::array<std::string_view, 11> kOps = {"Conv",
                                                            "ConvTranspose",
                                                            "MaxPool",
                                                            "AveragePool",
                                                            "GlobalAveragePool",
                                                            "GlobalMaxPool",
                                                            "BatchNormalization",
                                                            "InstanceNormalization",
                                                            "Resize",
                                                            "DepthToSpace",
                                                            "SpaceToDepth"};
  return std::find(kOps.begin(), kOps.end(), type) != kOps.end();
}

} // namespace graphvet
