// Resize (ONNX opsets 10, 11, 13; modes nearest and linear; cubic is not
// supported), plus graphvet's `layout`.
//
// Inputs: (X, scales) is Resize-10; (X, roi, scales[, sizes]) is Resize-11/13.
// scales (f32) and sizes (i64) are shape operands: one of them, non-empty,
// must be a constant. Output size along axis a: sizes[a], or
// floor(in[a] * scales[a]) computed in f64. With layout NHWC, roi, scales
// and sizes are indexed by logical (N, C, D1...) axes, like every other
// non-data operand (see nn_common.h).
//
// Per axis, output coordinate o maps to an input coordinate x (in f64) by
// coordinate_transformation_mode, with scale = scales[a] and len = in *
// scale (not rounded, as ONNX's reference computes it) when scales are
// given, or scale = out / in and len = out when sizes are (Resize-10:
// asymmetric):
//   half_pixel            (o + 0.5) / scale - 0.5
//   pytorch_half_pixel    len > 1 ? (o + 0.5) / scale - 0.5 : 0
//   align_corners         len == 1 ? 0 : o * (in - 1) / (len - 1)
//   asymmetric            o / scale
//   tf_half_pixel_for_nn  (o + 0.5) / scale
//   tf_crop_and_resize    len > 1 ? o * (end - start) * (in - 1) / (len - 1)
//                                   + start * (in - 1)
//                                 : (start + end) / 2 * (in - 1)
//                         (x outside [0, in - 1] on any axis: the output is
//                         extrapolation_value; a NaN or infinite x, from a
//                         NaN/inf roi, is indeterminate)
// nearest: index round_prefer_floor ceil(x - 0.5), round_prefer_ceil
// floor(x + 0.5), floor, ceil (Resize-10: onnxruntime's rule, floor when
// upsampling and ceil when downsampling), clamped to [0, in - 1]; the
// element is copied bit for bit.
// linear: x clamped to [0, in - 1], i0 = floor(x), r = x - i0, neighbours i0
// with weight 1 - r and min(i0 + 1, in - 1) with weight r (weights in f64,
// then rounded to the accumulator); neighbours of weight 0 are not read, so
// a coordinate on an input sample returns it exactly. The output is the sum
// over the corners of the per-axis neighbours (row-major: axis 0 outermost,
// lower index first) of (product of the corner's weights, axis by axis) *
// x, accumulated in f32 (f16/bf16/f32) or f64 (f64 and integer dtypes).
// Integer outputs round the result to nearest even; a result out of the
// dtype's range is indeterminate. Linear resize of bool is refused.
//
// Indeterminate elements: a nearest output is its source element; a linear
// output is indeterminate when any element it reads is; with
// tf_crop_and_resize an indeterminate roi makes every output indeterminate.
#include "ir/ops/nn_common.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <functional>

namespace graphvet::ops::nn {
namespace {

struct ResizeParams {
  bool opset10 = false;
  std::string mode, ctm, nearest;
  Layout layout = Layout::NCHW;
  Shape outLogical;
  std::vector<double> scales;  // per logical axis, as the coordinate transform uses them
  std::vector<double> lengths; // the resized length the coordinate transform uses
};

/// Reads and checks everything the output shape depends on; the kernel
/// calls it again on its concrete inputs.
bool resizeParams(const Node &n, size_t numInputs,
                  const std::function<const TensorType *(size_t)> &type,
                  const std::function<const Tensor *(size_t)> &constant, ResizeParams &p,
                  std::string &error) {
  auto fail = [&](std::string m) {
    error = std::move(m);
    return false;
  };
  if (numInputs < 2 || numInputs > 4)
    return fail(fmt::format(
        "Resize takes 2 to 4 inputs (X, scales) or (X, roi, scales, sizes), got {}", numInputs));
  const TensorType *x = type(0);
  if (!x)
    return fail("input 0 (X) of Resize is required");
  p.opset10 = numInputs == 2;
  p.mode = attrString(n, "mode", "nearest");
  if (p.mode == "cubic")
    return fail("Resize mode 'cubic' is not supported");
  if (p.mode != "nearest" && p.mode != "linear")
    return fail(fmt::format("Resize mode must be 'nearest' or 'linear', got '{}'", p.mode));
  if (p.mode == "linear" && x->dtype == DType::Bool)
    return fail("linear Resize of bool is not defined");
  p.ctm = attrString(n, "coordinate_transformation_mode", p.opset10 ? "asymmetric" : "half_pixel");
  static const char *modes[] = {"half_pixel", "pytorch_half_pixel",   "align_corners",
                                "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  if (std::find(std::begin(modes), std::end(modes), p.ctm) == std::end(modes))
    return fail(fmt::format("unknown coordinate_transformation_mode '{}'", p.ctm));
  p.nearest = attrString(n, "nearest_mode", p.opset10 ? "simple" : "round_prefer_floor");
  if (!p.opset10 && p.nearest != "round_prefer_floor" && p.nearest != "round_prefer_ceil" &&
      p.nearest != "floor" && p.nearest != "ceil")
    return fail(fmt::format("unknown nearest_mode '{}'", p.nearest));
  if (x->rank() < 1)
    return fail("input 0 (X) of Resize must have rank >= 1");
  std::string layout = attrString(n, "layout", "NCHW");
  if (layout != "NCHW" && layout != "NHWC")
    return fail(fmt::format("layout must be \"NCHW\" or \"NHWC\", got \"{}\"", layout));
  p.layout = layout == "NHWC" ? Layout::NHWC : Layout::NCHW;
  int64_t r = x->rank();
  Shape xs = logicalShape(p.layout, x->shape);

  size_t scalesSlot = p.opset10 ? 1 : 2, sizesSlot = 3;
  const TensorType *st = type(scalesSlot);
  if (st && st->numElements() == 0 && !p.opset10)
    st = nullptr; // Resize-11: an empty scales tensor stands for "use sizes"
  const TensorType *zt = numInputs > 3 ? type(sizesSlot) : nullptr;
  if (zt && zt->numElements() == 0)
    zt = nullptr;
  if (!p.opset10 && type(1)) {
    const TensorType *roi = type(1);
    if (!isFloat(roi->dtype) || roi->dtype == DType::BF16)
      return fail(
          fmt::format("input 1 (roi) must be f16, f32 or f64, got {}", dtypeName(roi->dtype)));
    if (p.ctm == "tf_crop_and_resize" && roi->numElements() != 2 * r)
      return fail(
          fmt::format("input 1 (roi) must hold 2 * rank = {} values, got {}", 2 * r, roi->str()));
  }
  if (p.ctm == "tf_crop_and_resize" && (p.opset10 || !type(1)))
    return fail("coordinate_transformation_mode tf_crop_and_resize needs input 1 (roi)");
  if (st && zt)
    return fail("Resize takes scales or sizes, not both");
  if (!st && !zt)
    return fail("Resize needs scales (input 2) or sizes (input 3)");
  p.outLogical.assign(static_cast<size_t>(r), 0);
  p.scales.assign(static_cast<size_t>(r), 1.0);
  p.lengths.assign(static_cast<size_t>(r), 0.0);
  if (st) {
    if (st->dtype != DType::F32)
      return fail(
          fmt::format("input {} (scales) must be f32, got {}", scalesSlot, dtypeName(st->dtype)));
    if (st->shape != Shape{r})
      return fail(
          fmt::format("input {} (scales) must have shape [{}], got {}", scalesSlot, r, st->str()));
    const Tensor *c = constant(scalesSlot);
    if (!c)
      return fail(fmt::format("input {} (scales) of Resize must be a constant", scalesSlot));
    if (c->anyUndef())
      return fail(fmt::format("input {} (scales) of Resize is indeterminate", scalesSlot));
    for (int64_t a = 0; a < r; ++a) {
      double s = c->getDouble(a);
      if (!(s > 0) || !std::isfinite(s))
        return fail(fmt::format("scales must be positive and finite, got {}", s));
      double d = std::floor(static_cast<double>(xs[static_cast<size_t>(a)]) * s);
      if (d > 0x1p62)
        return fail(fmt::format("the output of Resize is too large along axis {}", a));
      p.scales[static_cast<size_t>(a)] = s;
      p.lengths[static_cast<size_t>(a)] = static_cast<double>(xs[static_cast<size_t>(a)]) * s;
      p.outLogical[static_cast<size_t>(a)] = static_cast<int64_t>(d);
    }
  } else {
    if (zt->dtype != DType::I64)
      return fail(fmt::format("input 3 (sizes) must be i64, got {}", dtypeName(zt->dtype)));
    if (zt->shape != Shape{r})
      return fail(fmt::format("input 3 (sizes) must have shape [{}], got {}", r, zt->str()));
    const Tensor *c = constant(sizesSlot);
    if (!c)
      return fail("input 3 (sizes) of Resize must be a constant");
    if (c->anyUndef())
      return fail("input 3 (sizes) of Resize is indeterminate");
    for (int64_t a = 0; a < r; ++a) {
      int64_t v = c->getInt(a), in = xs[static_cast<size_t>(a)];
      if (v < 0)
        return fail(fmt::format("sizes must be >= 0, got {}", v));
      p.outLogical[static_cast<size_t>(a)] = v;
      p.scales[static_cast<size_t>(a)] = in > 0 ? static_cast<double>(v) / in : 1.0;
      p.lengths[static_cast<size_t>(a)] = static_cast<double>(v);
    }
  }
  for (int64_t a = 0; a < r; ++a)
    if (xs[static_cast<size_t>(a)] == 0 && p.outLogical[static_cast<size_t>(a)] > 0)
      return fail(fmt::format("Resize cannot fill {} positions from an empty axis {}",
                              p.outLogical[static_cast<size_t>(a)], a));
  TensorType out{x->dtype, physicalShape(p.layout, p.outLogical)};
  if (!out.checkedElements())
    return fail(fmt::format("the output of Resize {} is too large", shapeStr(p.outLogical)));
  return true;
}

/// One axis's sampling of output coordinate o: the input indices read with
/// their weights, or extrapolation, or indeterminate.
struct Sample {
  enum Kind : uint8_t { Read, Extrapolate, Undef } kind = Read;
  int64_t index[2] = {0, 0};
  double weight[2] = {1, 0};
  int count = 1;
};

Sample sampleAxis(const ResizeParams &p, int64_t o, int64_t in, double len, double scale,
                  double start, double end) {
  Sample s;
  double x = 0, od = static_cast<double>(o), ind = static_cast<double>(in);
  const std::string &m = p.ctm;
  if (m == "half_pixel")
    x = (od + 0.5) / scale - 0.5;
  else if (m == "pytorch_half_pixel")
    x = len > 1 ? (od + 0.5) / scale - 0.5 : 0;
  else if (m == "align_corners")
    x = len == 1 ? 0 : od * (ind - 1) / (len - 1);
  else if (m == "asymmetric")
    x = od / scale;
  else if (m == "tf_half_pixel_for_nn")
    x = (od + 0.5) / scale;
  else { // tf_crop_and_resize
    x = len > 1 ? od * (end - start) * (ind - 1) / (len - 1) + start * (ind - 1)
                : (start + end) / 2 * (ind - 1);
    if (!std::isfinite(x)) {
      s.kind = Sample::Undef;
      return s;
    }
    if (x < 0 || x > ind - 1) {
      s.kind = Sample::Extrapolate;
      return s;
    }
  }
  if (!std::isfinite(x)) { // cannot happen with finite positive scales; be safe
    s.kind = Sample::Undef;
    return s;
  }
  x = std::clamp(x, -1.0, ind); // keeps the conversions below in range
  if (p.mode == "nearest") {
    double i;
    if (p.nearest == "round_prefer_floor")
      i = std::ceil(x - 0.5);
    else if (p.nearest == "round_prefer_ceil")
      i = std::floor(x + 0.5);
    else if (p.nearest == "floor")
      i = std::floor(x);
    else if (p.nearest == "ceil")
      i = std::ceil(x);
    else // Resize-10 (onnxruntime's "simple")
      i = scale < 1 ? std::ceil(x) : std::floor(x);
    s.index[0] = std::clamp(static_cast<int64_t>(i), int64_t{0}, in - 1);
    return s;
  }
  x = std::clamp(x, 0.0, ind - 1);
  double f = std::floor(x);
  double r = x - f;
  int64_t i0 = static_cast<int64_t>(f);
  s.count = 0;
  if (1 - r != 0) {
    s.index[s.count] = i0;
    s.weight[s.count++] = 1 - r;
  }
  if (r != 0) {
    s.index[s.count] = std::min(i0 + 1, in - 1);
    s.weight[s.count++] = r;
  }
  return s;
}

template <class A> void resizeKernel(KernelContext &ctx, const ResizeParams &p) {
  const Tensor &x = ctx.in(0);
  Tensor &y = ctx.out(0);
  if (y.size() == 0) // (an axis may still be huge: build no per-axis table)
    return;
  Shape xs = logicalShape(p.layout, x.shape());
  std::vector<int64_t> xst = logicalStrides(p.layout, x.shape());
  std::vector<int64_t> yst = logicalStrides(p.layout, y.shape());
  size_t r = xs.size();
  bool crop = p.ctm == "tf_crop_and_resize";
  const Tensor *roi = crop ? &ctx.in(1) : nullptr;
  bool roiUndef = roi && roi->anyUndef();
  // Per axis, per output coordinate.
  std::vector<std::vector<Sample>> samples(r);
  for (size_t a = 0; a < r; ++a) {
    int64_t out = p.outLogical[a];
    double start = roi ? roi->getDouble(static_cast<int64_t>(a)) : 0;
    double end = roi ? roi->getDouble(static_cast<int64_t>(a + r)) : 1;
    for (int64_t o = 0; o < out; ++o)
      samples[a].push_back(sampleAxis(p, o, xs[a], p.lengths[a], p.scales[a], start, end));
  }
  DType dt = x.dtype();
  bool linear = p.mode == "linear";
  double extrapolation = static_cast<float>(attrFloat(ctx.node, "extrapolation_value", 0.0));
  bool track = x.anyUndef();
  auto store = [&](int64_t yi, A v) {
    if (isFloat(dt)) {
      y.setDouble(yi, static_cast<double>(v));
      return;
    }
    double d = std::nearbyint(static_cast<double>(v));
    // Out of the dtype's range (or NaN): indeterminate, as a float -> int cast.
    bool ok = std::isfinite(d) && d >= static_cast<double>(intMin(dt)) &&
              d < static_cast<double>(intMax(dt)) + 1.0;
    if (ok)
      y.setInt(yi, static_cast<int64_t>(d));
    else
      y.setUndef(yi);
  };
  std::vector<int64_t> o(r, 0);
  std::vector<int> corner(r, 0);
  for (int64_t e = 0; e < y.size(); ++e) {
    int64_t yi = 0;
    bool extrapolate = false, undef = roiUndef;
    for (size_t a = 0; a < r; ++a) {
      yi += o[a] * yst[a];
      const Sample &s = samples[a][static_cast<size_t>(o[a])];
      extrapolate = extrapolate || s.kind == Sample::Extrapolate;
      undef = undef || s.kind == Sample::Undef;
    }
    if (undef) {
      y.setUndef(yi);
    } else if (extrapolate) {
      store(yi, static_cast<A>(extrapolation));
    } else if (!linear) {
      int64_t xi = 0;
      for (size_t a = 0; a < r; ++a)
        xi += samples[a][static_cast<size_t>(o[a])].index[0] * xst[a];
      y.copyElement(yi, x, xi);
    } else {
      A acc = A(-0.0);
      bool u = false;
      std::fill(corner.begin(), corner.end(), 0);
      for (;;) {
        int64_t xi = 0;
        A w = A(1);
        for (size_t a = 0; a < r; ++a) {
          const Sample &s = samples[a][static_cast<size_t>(o[a])];
          xi += s.index[corner[a]] * xst[a];
          A wa = static_cast<A>(s.weight[corner[a]]);
          w = a == 0 ? wa : w * wa;
        }
        acc = acc + w * static_cast<A>(x.getDouble(xi));
        u = u || (track && x.isUndef(xi));
        bool done = true; // odometer over the corners
        for (size_t a = r; a-- > 0;) {
          if (++corner[a] < samples[a][static_cast<size_t>(o[a])].count) {
            done = false;
            break;
          }
          corner[a] = 0;
        }
        if (done)
          break;
      }
      store(yi, acc);
      if (u)
        y.setUndef(yi);
    }
    for (size_t a = r; a-- > 0;)
      if (++o[a] < p.outLogical[a])
        break;
      else
        o[a] = 0;
  }
}

} // namespace

bool inferResize(InferContext &ctx) {
  ResizeParams p;
  std::string error;
  auto type = [&](size_t i) -> const TensorType * { return ctx.has(i) ? &ctx.in(i) : nullptr; };
  auto constant = [&](size_t i) { return ctx.constant(i); };
  if (!resizeParams(ctx.node, ctx.numInputs(), type, constant, p, error))
    return ctx.fail(error);
  ctx.outputs.push_back({ctx.in(0).dtype, physicalShape(p.layout, p.outLogical)});
  return true;
}

void kernelResize(KernelContext &ctx) {
  ResizeParams p;
  std::string error;
  auto type = [&](size_t i) -> const TensorType * {
    return ctx.has(i) ? &ctx.in(i).type() : nullptr;
  };
  auto constant = [&](size_t i) -> const Tensor * { return ctx.has(i) ? &ctx.in(i) : nullptr; };
  resizeParams(ctx.node, ctx.inputs.size(), type, constant, p, error);
  DType t = ctx.in(0).dtype();
  if (t == DType::F16 || t == DType::BF16 || t == DType::F32)
    resizeKernel<float>(ctx, p);
  else
    resizeKernel<double>(ctx, p);
}

} // namespace graphvet::ops::nn
