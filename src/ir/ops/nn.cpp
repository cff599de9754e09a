// Convolution, pooling, normalization, Resize and LSTM: the family's table,
// and the helpers its files share (layout, window geometry, dtype checks).
// The ops themselves live in conv.cpp, pool.cpp, norm.cpp, resize.cpp and
// lstm.cpp.
#include "ir/ops/families.h"
#include "ir/ops/nn_common.h"

#include <algorithm>
#include <fmt/format.h>

namespace graphvet::ops {
namespace nn {

namespace {

// Attribute values past this are rejected, so that window arithmetic on
// int64 cannot overflow (dimensions are at most 2^62, see checkedElements).
constexpr int64_t kMaxAttr = int64_t{1} << 31;

} // namespace

bool readLayout(InferContext &ctx, int64_t rank, Layout &layout) {
  std::string s = attrString(ctx.node, "layout", "NCHW");
  if (s == "NCHW")
    layout = Layout::NCHW;
  else if (s == "NHWC")
    layout = Layout::NHWC;
  else
    return ctx.fail(fmt::format("layout must be \"NCHW\" or \"NHWC\", got \"{}\"", s));
  if (layout == Layout::NHWC && rank < 2)
    return ctx.fail(fmt::format("layout \"NHWC\" needs a tensor of rank >= 2, got rank {}", rank));
  return true;
}

Layout layoutOf(const Node &n) {
  return attrString(n, "layout", "NCHW") == "NHWC" ? Layout::NHWC : Layout::NCHW;
}

int64_t physicalAxis(Layout l, int64_t a, int64_t rank) {
  if (l == Layout::NCHW || rank < 2 || a == 0)
    return a;
  return a == 1 ? rank - 1 : a - 1;
}

Shape logicalShape(Layout l, const Shape &physical) {
  int64_t r = static_cast<int64_t>(physical.size());
  Shape s(physical.size());
  for (int64_t a = 0; a < r; ++a)
    s[a] = physical[physicalAxis(l, a, r)];
  return s;
}

Shape physicalShape(Layout l, const Shape &logical) {
  int64_t r = static_cast<int64_t>(logical.size());
  Shape s(logical.size());
  for (int64_t a = 0; a < r; ++a)
    s[physicalAxis(l, a, r)] = logical[a];
  return s;
}

std::vector<int64_t> logicalStrides(Layout l, const Shape &physical) {
  std::vector<int64_t> phys = stridesOf(physical);
  int64_t r = static_cast<int64_t>(physical.size());
  std::vector<int64_t> s(physical.size());
  for (int64_t a = 0; a < r; ++a)
    s[a] = phys[physicalAxis(l, a, r)];
  return s;
}

std::string dtypeList(std::initializer_list<DType> allowed) {
  std::string s;
  size_t i = 0;
  for (DType t : allowed) {
    if (i > 0)
      s += i + 1 == allowed.size() ? " or " : ", ";
    s += dtypeName(t);
    ++i;
  }
  return s;
}

bool checkDType(InferContext &ctx, size_t input, const char *name, DType t,
                std::initializer_list<DType> allowed) {
  for (DType a : allowed)
    if (a == t)
      return true;
  return ctx.fail(fmt::format("input {} ({}) must be {}, got {}", input, name, dtypeList(allowed),
                              dtypeName(t)));
}

bool intsAttr(const Node &n, const std::string &key, size_t count, int64_t def,
              std::vector<int64_t> &out, std::string &error) {
  if (!n.attr(key)) {
    out.assign(count, def);
    return true;
  }
  auto v = attrInts(n, key);
  if (!v) {
    error = fmt::format("{} must be a list of integers", key);
    return false;
  }
  if (v->size() != count) {
    error = fmt::format("{} must have {} entries, got {}", key, count, v->size());
    return false;
  }
  out = std::move(*v);
  return true;
}

int64_t product(const std::vector<int64_t> &v, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < v.size() && i < to; ++i)
    p *= v[i];
  return p;
}

std::optional<Window> windowOf(const Node &n, const std::vector<int64_t> &in,
                               const std::vector<int64_t> &kernel, const WindowOptions &opts,
                               std::string &error) {
  size_t k = kernel.size();
  Window w;
  w.in = in;
  w.kernel = kernel;
  if (!intsAttr(n, "strides", k, 1, w.strides, error) ||
      !intsAttr(n, "dilations", k, 1, w.dilations, error))
    return std::nullopt;
  for (size_t i = 0; i < k; ++i) {
    if (kernel[i] < 1 || kernel[i] > kMaxAttr) {
      error = fmt::format("kernel size {} along spatial axis {} is out of range [1, 2^31]",
                          kernel[i], i);
      return std::nullopt;
    }
    if (w.strides[i] < 1 || w.strides[i] > kMaxAttr) {
      error = fmt::format("strides must be in [1, 2^31], got {}", w.strides[i]);
      return std::nullopt;
    }
    if (w.dilations[i] < 1 || w.dilations[i] > kMaxAttr) {
      error = fmt::format("dilations must be in [1, 2^31], got {}", w.dilations[i]);
      return std::nullopt;
    }
  }
  std::string autoPad = attrString(n, "auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER" &&
      autoPad != "VALID") {
    error = fmt::format("auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got \"{}\"",
                        autoPad);
    return std::nullopt;
  }
  std::vector<int64_t> pads;
  if (autoPad == "NOTSET") {
    if (!intsAttr(n, "pads", 2 * k, 0, pads, error))
      return std::nullopt;
    for (int64_t p : pads)
      if (p < 0 || p > kMaxAttr) {
        error = fmt::format("pads must be in [0, 2^31], got {}", p);
        return std::nullopt;
      }
  } else {
    pads.assign(2 * k, 0);
  }
  w.padBegin.resize(k);
  w.padEnd.resize(k);
  w.out.resize(k);
  for (size_t i = 0; i < k; ++i) {
    int64_t ek = (kernel[i] - 1) * w.dilations[i] + 1; // < 2^62
    int64_t s = w.strides[i];
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t out = (in[i] + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (out - 1) * s + ek - in[i]);
      int64_t small = total / 2;
      w.padBegin[i] = autoPad == "SAME_UPPER" ? small : total - small;
      w.padEnd[i] = total - w.padBegin[i];
      w.out[i] = out;
      continue;
    }
    w.padBegin[i] = pads[i];
    w.padEnd[i] = pads[i + k];
    int64_t span = in[i] + w.padBegin[i] + w.padEnd[i] - ek;
    if (span < 0) {
      error = fmt::format("the window ({} with dilation) is larger than the padded input ({}) "
                          "along spatial axis {}",
                          ek, in[i] + w.padBegin[i] + w.padEnd[i], i);
      return std::nullopt;
    }
    w.out[i] = (opts.ceilMode ? (span + s - 1) / s : span / s) + 1;
  }
  return w;
}

bool nextIndex(std::vector<int64_t> &idx, const std::vector<int64_t> &dims) {
  for (size_t a = idx.size(); a-- > 0;) {
    if (++idx[a] < dims[a])
      return true;
    idx[a] = 0;
  }
  return false;
}

void windowTapsAt(const Window &w, const std::vector<int64_t> &o,
                  const std::vector<int64_t> &strides, std::vector<int64_t> &taps) {
  size_t r = w.rank();
  // Per axis, the input coordinate of each tap (or -1 / -2).
  std::vector<std::vector<int64_t>> coords(r);
  for (size_t a = 0; a < r; ++a) {
    coords[a].resize(static_cast<size_t>(w.kernel[a]));
    for (int64_t k = 0; k < w.kernel[a]; ++k) {
      int64_t c = o[a] * w.strides[a] - w.padBegin[a] + k * w.dilations[a];
      int64_t &t = coords[a][static_cast<size_t>(k)];
      if (c >= 0 && c < w.in[a])
        t = c;
      else if (c >= -w.padBegin[a] && c < w.in[a] + w.padEnd[a])
        t = -1; // padding
      else
        t = -2; // past the padding (ceil_mode)
    }
  }
  taps.resize(static_cast<size_t>(product(w.kernel)));
  if (taps.empty())
    return;
  std::vector<int64_t> k(r, 0);
  size_t kf = 0;
  do {
    int64_t off = 0;
    bool pad = false, past = false;
    for (size_t a = 0; a < r; ++a) {
      int64_t c = coords[a][static_cast<size_t>(k[a])];
      if (c == -2)
        past = true;
      else if (c < 0)
        pad = true;
      else
        off += c * strides[a];
    }
    taps[kf++] = past ? -2 : pad ? -1 : off;
  } while (kf < taps.size() && nextIndex(k, w.kernel));
}

namespace {

int64_t floorDiv(int64_t a, int64_t b) { // b > 0
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/// The taps k in [0, kernel) of one axis whose coordinate base + k * d lies
/// in [lo, hi): [first, last] (empty when first > last).
std::pair<int64_t, int64_t> tapRange(int64_t base, int64_t d, int64_t kernel, int64_t lo,
                                     int64_t hi) {
  int64_t first = std::max<int64_t>(0, -floorDiv(base - lo, d)); // ceil((lo - base) / d)
  int64_t last = std::min<int64_t>(kernel - 1, floorDiv(hi - 1 - base, d));
  return {first, last};
}

} // namespace

int64_t windowInputTaps(const Window &w, const std::vector<int64_t> &o,
                        const std::vector<int64_t> &strides, std::vector<int64_t> &offsets,
                        const std::vector<int64_t> *strides2, std::vector<int64_t> *offsets2) {
  size_t r = w.rank();
  int64_t padded = 1;
  std::vector<std::vector<int64_t>> coords(r);
  for (size_t a = 0; a < r; ++a) {
    int64_t base = o[a] * w.strides[a] - w.padBegin[a];
    auto [pf, pl] =
        tapRange(base, w.dilations[a], w.kernel[a], -w.padBegin[a], w.in[a] + w.padEnd[a]);
    if (__builtin_mul_overflow(padded, std::max<int64_t>(0, pl - pf + 1), &padded))
      padded = INT64_MAX; // absurd kernels and pads: saturate
    auto [f, l] = tapRange(base, w.dilations[a], w.kernel[a], 0, w.in[a]);
    for (int64_t k = f; k <= l; ++k)
      coords[a].push_back(base + k * w.dilations[a]);
  }
  offsets.clear();
  if (offsets2)
    offsets2->clear();
  std::vector<int64_t> sizes(r), idx(r, 0);
  for (size_t a = 0; a < r; ++a) {
    sizes[a] = static_cast<int64_t>(coords[a].size());
    if (sizes[a] == 0)
      return padded;
  }
  do {
    int64_t off = 0, off2 = 0;
    for (size_t a = 0; a < r; ++a) {
      int64_t c = coords[a][static_cast<size_t>(idx[a])];
      off += c * strides[a];
      if (strides2)
        off2 += c * (*strides2)[a];
    }
    offsets.push_back(off);
    if (offsets2)
      offsets2->push_back(off2);
  } while (nextIndex(idx, sizes));
  return padded;
}

/// Offsets of each position of `dims` (row-major) via `strides`.
std::vector<int64_t> positionOffsets(const std::vector<int64_t> &dims,
                                     const std::vector<int64_t> &strides) {
  size_t r = dims.size();
  int64_t P = product(dims);
  std::vector<int64_t> offs(static_cast<size_t>(P));
  std::vector<int64_t> o(r, 0);
  for (int64_t p = 0; p < P; ++p) {
    int64_t off = 0;
    for (size_t a = 0; a < r; ++a)
      off += o[a] * strides[a];
    offs[static_cast<size_t>(p)] = off;
    for (size_t a = r; a-- > 0;)
      if (++o[a] < dims[a])
        break;
      else
        o[a] = 0;
  }
  return offs;
}

/// Undefined flags of a tensor as a vector (all false when it has no mask).
std::vector<uint8_t> undefFlags(const Tensor &t) {
  std::vector<uint8_t> f(static_cast<size_t>(t.size()), 0);
  if (t.anyUndef())
    for (int64_t i = 0; i < t.size(); ++i)
      f[static_cast<size_t>(i)] = t.isUndef(i);
  return f;
}

} // namespace nn

namespace {

constexpr std::span<const PortAlias> kNone{};
using namespace nn;

// Resize: roi (1) is read by the kernel only; scales (2) and sizes (3) fix
// the output shape.
// MaxUnpool: output_shape (2) fixes the output shape.
constexpr uint64_t kMaxUnpoolShapeOperands = uint64_t{1} << 2;
constexpr uint64_t kResizeShapeOperands = (uint64_t{1} << 2) | (uint64_t{1} << 3);

constexpr OpInfo kNnOps[] = {
    {"Conv", OpKind::Ordinary, 1, kNone, kNone, false,
     "N-d convolution (group, dilations, strides, pads, auto_pad, layout), f32/f64 accumulation",
     inferConv, kernelConv},
    {"ConvTranspose", OpKind::Ordinary, 1, kNone, kNone, false,
     "N-d transposed convolution (output_padding, output_shape, auto_pad, group, layout)",
     inferConvTranspose, kernelConvTranspose},
    {"ConvInteger", OpKind::Ordinary, 1, kNone, kNone, false,
     "integer convolution of (x - x_zero_point) and (w - w_zero_point) into i32", inferConvInteger,
     kernelConvInteger},
    {"QLinearConv", OpKind::Ordinary, 1, kNone, kNone, false,
     "quantized convolution: integer sum + bias, requantized to y_scale/y_zero_point",
     inferQLinearConv, kernelQLinearConv},
    {"MaxPool", OpKind::Ordinary, 1, kNone, kNone, false,
     "max over windows (ceil_mode, dilations, pads, layout); optional i64 Indices", inferMaxPool,
     kernelMaxPool},
    {"AveragePool", OpKind::Ordinary, 1, kNone, kNone, false,
     "mean over windows (count_include_pad, ceil_mode, pads, layout)", inferAveragePool,
     kernelAveragePool},
    {"GlobalAveragePool", OpKind::Ordinary, 1, kNone, kNone, false,
     "mean over all spatial positions (layout)", inferGlobalPool, kernelGlobalAveragePool},
    {"GlobalMaxPool", OpKind::Ordinary, 1, kNone, kNone, false,
     "max over all spatial positions (layout)", inferGlobalPool, kernelGlobalMaxPool},
    {"MaxUnpool", OpKind::Ordinary, 1, kNone, kNone, false,
     "scatters X to the flat positions I of a zero tensor (MaxPool's inverse)", inferMaxUnpool,
     kernelMaxUnpool, false, kMaxUnpoolShapeOperands},
    {"BatchNormalization", OpKind::Ordinary, 1, kNone, kNone, false,
     "(x - mean) / sqrt(var + epsilon) * scale + B per channel; training_mode statistics",
     inferBatchNormalization, kernelBatchNormalization},
    {"InstanceNormalization", OpKind::Ordinary, 1, kNone, kNone, false,
     "per-instance, per-channel normalization over the spatial axes (layout)",
     inferInstanceNormalization, kernelInstanceNormalization},
    {"LayerNormalization", OpKind::Ordinary, 1, kNone, kNone, false,
     "normalization over the axes from `axis` on; optional Mean and InvStdDev",
     inferLayerNormalization, kernelLayerNormalization},
    {"Resize", OpKind::Ordinary, 1, kNone, kNone, false,
     "nearest or N-d linear resampling (roi, scales or sizes; layout)", inferResize, kernelResize,
     false, kResizeShapeOperands},
    {"LSTM", OpKind::Ordinary, 1, kNone, kNone, false,
     "LSTM over a sequence (forward/reverse/bidirectional, peepholes, clip); Y, Y_h, Y_c",
     inferLSTM, kernelLSTM},
};

} // namespace

std::span<const OpInfo> nnOps() {
  return kNnOps;
}

} // namespace graphvet::ops
