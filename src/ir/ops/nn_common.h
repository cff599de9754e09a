// Shared pieces of the nn family (nn.cpp holds the table; conv.cpp, pool.cpp,
// norm.cpp, resize.cpp and lstm.cpp the ops): graphvet's `layout` attribute
// (tensor-semantics.md §5), sliding-window geometry (kernel, strides,
// dilations, pads, auto_pad, ceil_mode) and dtype checks. Private to the
// family: nothing outside src/ir/ops/ includes it.
#pragma once

#include "ir/op_def.h"
#include "ir/ops/kernel_io.h"

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace graphvet::ops::nn {

// ---- The ops' entry points (one infer and one kernel per row of nnOps()).

bool inferConv(InferContext &ctx);
void kernelConv(KernelContext &ctx);
bool inferConvTranspose(InferContext &ctx);
void kernelConvTranspose(KernelContext &ctx);
bool inferConvInteger(InferContext &ctx);
void kernelConvInteger(KernelContext &ctx);
bool inferQLinearConv(InferContext &ctx);
void kernelQLinearConv(KernelContext &ctx);

bool inferMaxPool(InferContext &ctx);
void kernelMaxPool(KernelContext &ctx);
bool inferAveragePool(InferContext &ctx);
void kernelAveragePool(KernelContext &ctx);
bool inferGlobalPool(InferContext &ctx);
void kernelGlobalAveragePool(KernelContext &ctx);
void kernelGlobalMaxPool(KernelContext &ctx);
bool inferMaxUnpool(InferContext &ctx);
void kernelMaxUnpool(KernelContext &ctx);

bool inferBatchNormalization(InferContext &ctx);
void kernelBatchNormalization(KernelContext &ctx);
bool inferInstanceNormalization(InferContext &ctx);
void kernelInstanceNormalization(KernelContext &ctx);
bool inferLayerNormalization(InferContext &ctx);
void kernelLayerNormalization(KernelContext &ctx);

bool inferResize(InferContext &ctx);
void kernelResize(KernelContext &ctx);

bool inferLSTM(InferContext &ctx);
void kernelLSTM(KernelContext &ctx);

// ---- Layout (tensor-semantics.md §5).
//
// A layout-sensitive op computes on LOGICAL indices [N, C, D1, ..., Dk]
// (ONNX's NCHW order). With `layout = "NHWC"` the data tensors are stored
// [N, D1, ..., Dk, C] (the channel axis moved last) and so is the output; a
// Conv's weights are OHWI ([M, kH, kW, C/group]) and a ConvTranspose's
// weights [C, kH, kW, M/group] (the same move of axis 1 to the end). Every
// other operand and attribute (pads, strides, kernel_shape, scale/bias
// vectors, Resize's roi/scales/sizes, MaxPool's Indices values) keeps its
// ONNX meaning on logical axes. Kernels walk the logical indices through
// logical strides, so an NHWC op is bit for bit the NCHW op between two
// transposes (the canonical order of §3 is on logical indices).

enum class Layout { NCHW, NHWC };

/// Reads and validates `layout`; fails with a clear message on another value
/// or when NHWC is asked of a tensor of rank < 2.
bool readLayout(InferContext &ctx, int64_t rank, Layout &layout);
/// The layout of a node whose inference succeeded (kernels).
Layout layoutOf(const Node &n);
/// The physical axis holding logical axis `a` of a rank-`rank` tensor.
int64_t physicalAxis(Layout l, int64_t a, int64_t rank);
/// The logical shape of a physically stored shape, and back.
Shape logicalShape(Layout l, const Shape &physical);
Shape physicalShape(Layout l, const Shape &logical);
/// Strides (in elements) of the logical axes in the physical buffer.
std::vector<int64_t> logicalStrides(Layout l, const Shape &physical);

// ---- Dtypes.

/// "f16, f32 or f64".
std::string dtypeList(std::initializer_list<DType> allowed);
/// Fails with "input I (NAME) must be ..., got ..." unless `t` is allowed.
bool checkDType(InferContext &ctx, size_t input, const char *name, DType t,
                std::initializer_list<DType> allowed);
inline constexpr std::initializer_list<DType> kConvTypes = {DType::F16, DType::F32, DType::F64};

/// True when any element of the tensor (or of a present optional input) is
/// indeterminate.
inline bool anyUndef(const Tensor *t) {
  return t && t->anyUndef();
}

// ---- Sliding windows (Conv, pools).
//
// For each spatial axis i: output size out[i]; the window of output o reads
// input coordinates o*stride - padBegin + k*dilation for k in [0, kernel).
struct Window {
  std::vector<int64_t> kernel, strides, dilations, padBegin, padEnd, in, out;
  size_t rank() const { return kernel.size(); }
};

struct WindowOptions {
  bool ceilMode = false; ///< pools' ceil_mode
  bool allowDilations = true;
};

/// Geometry of a window op from the node's attributes (`strides`,
/// `dilations`, `pads`, `auto_pad`) for input spatial sizes `in` and kernel
/// spatial sizes `kernel`; nullopt with `error` set when an attribute is
/// malformed or the window does not fit.
std::optional<Window> windowOf(const Node &n, const std::vector<int64_t> &in,
                               const std::vector<int64_t> &kernel, const WindowOptions &opts,
                               std::string &error);

/// Advances a row-major multi-index over `dims`; false (and all zeros)
/// after the last one.
bool nextIndex(std::vector<int64_t> &idx, const std::vector<int64_t> &dims);
/// For the output position with spatial multi-index `o`, one entry per
/// kernel tap (row-major over the kernel): the offset of the input element
/// via the spatial `strides`, -1 when the tap falls in the padding, -2 when
/// it lies past the padding (ceil_mode) on some axis.
void windowTapsAt(const Window &w, const std::vector<int64_t> &o,
                  const std::vector<int64_t> &strides, std::vector<int64_t> &taps);
/// The taps of the window at output position `o` that read an input
/// element, in row-major kernel order: their offsets via the spatial
/// `strides` (and via `strides2` into `offsets2` when given). Returns how
/// many taps lie inside the padded input (padding included, ceil_mode's
/// overhang excluded). Work and memory are bounded by the window's input
/// elements, however large the kernel and the padding are.
int64_t windowInputTaps(const Window &w, const std::vector<int64_t> &o,
                        const std::vector<int64_t> &strides, std::vector<int64_t> &offsets,
                        const std::vector<int64_t> *strides2 = nullptr,
                        std::vector<int64_t> *offsets2 = nullptr);
/// Offsets of each position of `dims` (row-major) via `strides`.
std::vector<int64_t> positionOffsets(const std::vector<int64_t> &dims,
                                     const std::vector<int64_t> &strides);
/// Indeterminate flags of a tensor's elements (all 0 when it has no mask).
std::vector<uint8_t> undefFlags(const Tensor &t);

/// Reads a list-of-ints attribute of exactly `count` entries (default
/// `def` when absent); false with `error` set otherwise.
bool intsAttr(const Node &n, const std::string &key, size_t count, int64_t def,
              std::vector<int64_t> &out, std::string &error);

/// Product of a range of dimensions.
int64_t product(const std::vector<int64_t> &v, size_t from = 0, size_t to = SIZE_MAX);

} // namespace graphvet::ops::nn
