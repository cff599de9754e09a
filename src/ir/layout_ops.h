// The layout-sensitive ops (tensor-semantics.md §5): the ops whose meaning
// depends on where the channel axis is, which take graphvet's `layout`
// attribute. convert-layout rewrites them; the ONNX exporter writes them back
// in NCHW form.
#pragma once

#include <string_view>

namespace graphvet {

/// Conv, ConvTranspose, the pools, BatchNormalization, InstanceNormalization,
/// Resize, DepthToSpace and SpaceToDepth.
bool isLayoutSensitiveOp(std::string_view type);

} // namespace graphvet
