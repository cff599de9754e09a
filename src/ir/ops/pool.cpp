// MaxPool, AveragePool, GlobalMaxPool, GlobalAveragePool (ONNX opset <= 17,
// plus graphvet's `layout`) and MaxUnpool (opset 11, NCHW).
//
// Windows: output o along an axis reads the input at o*stride - pad_begin +
// k*dilation for k in [0, kernel); the output size is ONNX's
// floor (or ceil with ceil_mode) of (in + pads - effective kernel) / stride
// + 1, or ceil(in / stride) with SAME_UPPER/SAME_LOWER (see nn.cpp). A tap
// is an input element, padding (inside pads) or, with ceil_mode, past the
// padding.
//
// MaxPool: the maximum over the window's input elements (padding never
// wins). Comparisons are IEEE; a NaN in the window makes the result NaN
// (tensor-semantics.md §3: Max with a NaN operand is NaN), the first NaN in
// window order; otherwise the first element of the window that no later
// element exceeds (so of -0 and +0 the first one). The result is that
// element's bits. Indices (i64) is the flat index of that element in the
// logical N x C x D1 x ... x Dk input: row-major, or with storage_order = 1
// the spatial part column-major (n and c still outermost, as onnxruntime
// does). With layout NHWC the indices keep this logical meaning (the NHWC
// op is the NCHW op between transposes).
//
// AveragePool: sum of the window's input elements, accumulated in f32 (f16,
// f32) or f64 in window order, divided by the count: the number of input
// elements, or with count_include_pad = 1 the number of taps inside the
// padded input (the padding taps add +0 to the sum, as ONNX's
// "pad with zeros" does); taps past the padding (ceil_mode) never count.
//
// A MaxPool window without any input element, or an AveragePool window
// with nothing to count (possible only when pads exceed the kernel, or with
// ceil_mode) gives an indeterminate output: ONNX leaves it undefined. (With
// count_include_pad = 1 a window of padding alone averages to +0.) An
// output is indeterminate when any input element of its window is.
//
// MaxUnpool(X, I[, output_shape]): the unpooled shape is N, C and
// (in - 1) * stride + kernel - pads per spatial axis; a zero tensor of that
// shape gets X[j] at flat index I[j], in row-major order of j (the last of
// equal indices wins). With output_shape (a shape operand, at least the
// unpooled shape) that tensor sits at the origin of a zero tensor of
// output_shape, as ONNX's reference places it. An index that is
// indeterminate or outside the unpooled tensor is undefined in ONNX: the
// whole output is then indeterminate.
#include "ir/ops/nn_common.h"

#include <cmath>
#include <fmt/format.h>

namespace graphvet::ops::nn {
namespace {

constexpr std::initializer_list<DType> kMaxPoolTypes = {DType::F16, DType::F32, DType::F64,
                                                        DType::I8, DType::U8};

std::vector<int64_t> spatialOf(const Shape &s) {
  return std::vector<int64_t>(s.begin() + 2, s.end());
}

/// Checks shared by the windowed pools; fills the logical input shape and
/// the window.
bool checkPool(InferContext &ctx, const char *op, std::initializer_list<DType> types,
               Layout &layout, Shape &xs, Window &win) {
  if (ctx.numInputs() != 1 || !ctx.has(0))
    return ctx.fail(fmt::format("{} takes 1 input (X), got {}", op, ctx.numInputs()));
  const TensorType &x = ctx.in(0);
  if (!checkDType(ctx, 0, "X", x.dtype, types))
    return false;
  if (x.rank() < 3)
    return ctx.fail(
        fmt::format("input 0 (X) must have rank >= 3 (N, C, spatial...), got {}", x.str()));
  if (!readLayout(ctx, x.rank(), layout))
    return false;
  xs = logicalShape(layout, x.shape);
  size_t k = static_cast<size_t>(x.rank() - 2);
  auto kernel = attrInts(ctx.node, "kernel_shape");
  if (!kernel)
    return ctx.fail(fmt::format("{} needs kernel_shape (a list of {} sizes)", op, k));
  if (kernel->size() != k)
    return ctx.fail(fmt::format("kernel_shape must have {} entries (one per spatial axis), got {}",
                                k, kernel->size()));
  int64_t ceilMode = attrInt(ctx.node, "ceil_mode", 0);
  if (ceilMode != 0 && ceilMode != 1)
    return ctx.fail(fmt::format("ceil_mode must be 0 or 1, got {}", ceilMode));
  std::string error;
  auto w = windowOf(ctx.node, spatialOf(xs), *kernel, {ceilMode == 1}, error);
  if (!w)
    return ctx.fail(error);
  win = std::move(*w);
  return true;
}

Shape pooledShape(Layout layout, const Shape &xs, const std::vector<int64_t> &out) {
  Shape s{xs[0], xs[1]};
  s.insert(s.end(), out.begin(), out.end());
  return physicalShape(layout, s);
}

/// The window of a node whose inference succeeded (global pools: the whole
/// spatial extent, one output per plane).
Window kernelWindow(const Node &n, const Shape &xs, bool global) {
  if (global) {
    Window w;
    w.in = spatialOf(xs);
    w.kernel = w.in;
    size_t k = w.in.size();
    w.strides.assign(k, 1);
    w.dilations.assign(k, 1);
    w.padBegin.assign(k, 0);
    w.padEnd.assign(k, 0);
    w.out.assign(k, 1);
    return w;
  }
  std::string error;
  bool ceilMode = attrInt(n, "ceil_mode", 0) == 1;
  return *windowOf(n, spatialOf(xs), *attrInts(n, "kernel_shape"), {ceilMode}, error);
}

/// What a pool kernel walks: the logical shapes and strides and the window.
struct PoolPlan {
  Layout layout;
  Shape xs;
  std::vector<int64_t> xst, yst;
  Window win;
};

PoolPlan planOf(const KernelContext &ctx, bool global) {
  PoolPlan plan;
  plan.layout = layoutOf(ctx.node);
  plan.xs = logicalShape(plan.layout, ctx.in(0).shape());
  plan.xst = logicalStrides(plan.layout, ctx.in(0).shape());
  plan.yst = logicalStrides(plan.layout, ctx.out(0).shape());
  plan.win = kernelWindow(ctx.node, plan.xs, global);
  return plan;
}

/// Calls fn(o, taps, padded, yoff) for each output position: its spatial
/// multi-index, the plane offsets of the input elements its window reads
/// (in window order), how many of its taps lie inside the padded input, and
/// its offset in an output plane.
template <class F> void forEachWindow(const PoolPlan &plan, F fn) {
  std::vector<int64_t> xsp = spatialOf(plan.xst), ysp = spatialOf(plan.yst);
  std::vector<int64_t> o(plan.win.rank(), 0), taps;
  do {
    int64_t padded = windowInputTaps(plan.win, o, xsp, taps);
    int64_t yoff = 0;
    for (size_t a = 0; a < o.size(); ++a)
      yoff += o[a] * ysp[a];
    fn(o, taps, padded, yoff);
  } while (nextIndex(o, plan.win.out));
}

template <class A> void averagePool(KernelContext &ctx, bool global) {
  const Tensor &x = ctx.in(0);
  Tensor &y = ctx.out(0);
  if (y.size() == 0)
    return;
  PoolPlan plan = planOf(ctx, global);
  bool includePad = !global && attrInt(ctx.node, "count_include_pad", 0) == 1;
  std::vector<A> xv = loadAllAs<A>(x);
  bool track = x.anyUndef();
  forEachWindow(plan, [&](const std::vector<int64_t> &, const std::vector<int64_t> &taps,
                          int64_t padded, int64_t yoff) {
    int64_t inputs = static_cast<int64_t>(taps.size());
    int64_t count = includePad ? padded : inputs;
    for (int64_t n = 0; n < plan.xs[0]; ++n)
      for (int64_t c = 0; c < plan.xs[1]; ++c) {
        int64_t xbase = n * plan.xst[0] + c * plan.xst[1];
        int64_t yi = n * plan.yst[0] + c * plan.yst[1] + yoff;
        if (count == 0) {
          y.setUndef(yi); // no element to average (0 / 0): undefined in ONNX
          continue;
        }
        A acc = A(-0.0);
        bool undef = false;
        for (int64_t off : taps) {
          acc = acc + xv[static_cast<size_t>(xbase + off)];
          undef = undef || (track && x.isUndef(xbase + off));
        }
        // The padding's +0 terms: wherever they fall in the window order,
        // they only turn a -0 sum into +0.
        if (count > inputs)
          acc = acc + A(0);
        y.setDouble(yi, static_cast<double>(acc / static_cast<A>(count)));
        if (undef)
          y.setUndef(yi);
      }
  });
}

/// True when `v` replaces `best` as the window's maximum (floats: a NaN
/// wins and stays; ints: strictly greater).
bool beats(bool isFloatType, double v, double best, int64_t vi, int64_t besti) {
  if (!isFloatType)
    return vi > besti;
  if (std::isnan(best))
    return false;
  return std::isnan(v) || v > best;
}

void maxPool(KernelContext &ctx, bool global) {
  const Tensor &x = ctx.in(0);
  Tensor &y = ctx.out(0);
  if (y.size() == 0)
    return;
  PoolPlan plan = planOf(ctx, global);
  Tensor *indices = !global && ctx.outputs.size() > 1 ? &ctx.out(1) : nullptr;
  bool columnMajor = !global && attrInt(ctx.node, "storage_order", 0) == 1;
  bool fl = isFloat(x.dtype());
  bool track = x.anyUndef();
  size_t k = plan.win.rank();
  // The logical flat index of each tap (within a plane), row- or column-major.
  std::vector<int64_t> idxStrides(k);
  int64_t s = 1;
  for (size_t a = 0; a < k; ++a) {
    size_t axis = columnMajor ? a : k - 1 - a;
    idxStrides[axis] = s;
    s *= plan.win.in[axis];
  }
  int64_t planeSize = s;
  std::vector<int64_t> xsp = spatialOf(plan.xst), idxTaps, scratch;
  forEachWindow(plan, [&](const std::vector<int64_t> &o, const std::vector<int64_t> &taps, int64_t,
                          int64_t yoff) {
    if (indices)
      windowInputTaps(plan.win, o, xsp, scratch, &idxStrides, &idxTaps);
    for (int64_t n = 0; n < plan.xs[0]; ++n)
      for (int64_t c = 0; c < plan.xs[1]; ++c) {
        int64_t xbase = n * plan.xst[0] + c * plan.xst[1];
        int64_t bestTap = -1, bestI = 0;
        double best = 0;
        bool undef = false;
        for (size_t kf = 0; kf < taps.size(); ++kf) {
          int64_t xi = xbase + taps[kf];
          undef = undef || (track && x.isUndef(xi));
          double v = fl ? x.getDouble(xi) : 0;
          int64_t vi = fl ? 0 : x.getInt(xi);
          if (bestTap < 0 || beats(fl, v, best, vi, bestI)) {
            bestTap = static_cast<int64_t>(kf);
            best = v;
            bestI = vi;
          }
        }
        int64_t yi = n * plan.yst[0] + c * plan.yst[1] + yoff;
        if (bestTap < 0) { // no input element in the window: undefined in ONNX
          y.setUndef(yi);
          if (indices)
            indices->setUndef(yi);
          continue;
        }
        y.copyElement(yi, x, xbase + taps[static_cast<size_t>(bestTap)]);
        if (undef)
          y.setUndef(yi);
        if (indices) {
          int64_t flat = (n * plan.xs[1] + c) * planeSize + idxTaps[static_cast<size_t>(bestTap)];
          indices->setInt(yi, flat);
          if (undef)
            indices->setUndef(yi);
        }
      }
  });
}

} // namespace

bool inferMaxPool(InferContext &ctx) {
  Layout layout;
  Shape xs;
  Window win;
  if (!checkPool(ctx, "MaxPool", kMaxPoolTypes, layout, xs, win))
    return false;
  int64_t storageOrder = attrInt(ctx.node, "storage_order", 0);
  if (storageOrder != 0 && storageOrder != 1)
    return ctx.fail(fmt::format("storage_order must be 0 or 1, got {}", storageOrder));
  Shape out = pooledShape(layout, xs, win.out);
  ctx.outputs.push_back({ctx.in(0).dtype, out});
  ctx.outputs.push_back({DType::I64, out});
  return true;
}

void kernelMaxPool(KernelContext &ctx) {
  maxPool(ctx, false);
}

bool inferAveragePool(InferContext &ctx) {
  Layout layout;
  Shape xs;
  Window win;
  if (!checkPool(ctx, "AveragePool", kConvTypes, layout, xs, win))
    return false;
  int64_t cip = attrInt(ctx.node, "count_include_pad", 0);
  if (cip != 0 && cip != 1)
    return ctx.fail(fmt::format("count_include_pad must be 0 or 1, got {}", cip));
  ctx.outputs.push_back({ctx.in(0).dtype, pooledShape(layout, xs, win.out)});
  return true;
}

void kernelAveragePool(KernelContext &ctx) {
  if (ctx.in(0).dtype() == DType::F64)
    averagePool<double>(ctx, false);
  else
    averagePool<float>(ctx, false);
}

bool inferGlobalPool(InferContext &ctx) {
  if (ctx.numInputs() != 1 || !ctx.has(0))
    return ctx.fail(fmt::format("{} takes 1 input (X), got {}", ctx.node.type, ctx.numInputs()));
  const TensorType &x = ctx.in(0);
  if (!checkDType(ctx, 0, "X", x.dtype, kConvTypes))
    return false;
  if (x.rank() < 3)
    return ctx.fail(
        fmt::format("input 0 (X) must have rank >= 3 (N, C, spatial...), got {}", x.str()));
  Layout layout;
  if (!readLayout(ctx, x.rank(), layout))
    return false;
  Shape xs = logicalShape(layout, x.shape);
  ctx.outputs.push_back({x.dtype, pooledShape(layout, xs, std::vector<int64_t>(xs.size() - 2, 1))});
  return true;
}

void kernelGlobalAveragePool(KernelContext &ctx) {
  if (ctx.in(0).dtype() == DType::F64)
    averagePool<double>(ctx, true);
  else
    averagePool<float>(ctx, true);
}

bool inferMaxUnpool(InferContext &ctx) {
  size_t ni = ctx.numInputs();
  if (ni < 2 || ni > 3 || !ctx.has(0) || !ctx.has(1))
    return ctx.fail(
        fmt::format("MaxUnpool takes 2 or 3 inputs (X, I, optional output_shape), got {}", ni));
  const TensorType &x = ctx.in(0), &i = ctx.in(1);
  if (!checkDType(ctx, 0, "X", x.dtype, kConvTypes))
    return false;
  if (i.dtype != DType::I64 || i.shape != x.shape)
    return ctx.fail(
        fmt::format("input 1 (I) must be i64 of X's shape {}, got {}", shapeStr(x.shape), i.str()));
  if (x.rank() < 3)
    return ctx.fail(
        fmt::format("input 0 (X) must have rank >= 3 (N, C, spatial...), got {}", x.str()));
  size_t k = static_cast<size_t>(x.rank() - 2);
  auto kernel = attrInts(ctx.node, "kernel_shape");
  if (!kernel || kernel->size() != k)
    return ctx.fail(fmt::format("MaxUnpool needs kernel_shape (a list of {} sizes)", k));
  std::vector<int64_t> strides, pads;
  std::string error;
  if (!intsAttr(ctx.node, "strides", k, 1, strides, error) ||
      !intsAttr(ctx.node, "pads", 2 * k, 0, pads, error))
    return ctx.fail(error);
  Shape out{x.shape[0], x.shape[1]};
  constexpr int64_t kMax = int64_t{1} << 30;
  for (size_t a = 0; a < k; ++a) {
    int64_t in = x.shape[a + 2], kk = (*kernel)[a], s = strides[a];
    if (kk < 1 || kk > kMax || s < 1 || s > kMax || in > kMax || pads[a] < 0 || pads[a] > kMax ||
        pads[a + k] < 0 || pads[a + k] > kMax)
      return ctx.fail("kernel_shape, strides, pads and X's spatial sizes of MaxUnpool must be "
                      "in range (kernel and strides >= 1, pads >= 0, all <= 2^30)");
    out.push_back(std::max<int64_t>(0, (in - 1) * s + kk - pads[a] - pads[a + k]));
  }
  if (ctx.has(2)) {
    const TensorType &st = ctx.in(2);
    if (st.dtype != DType::I64 || st.shape != Shape{x.rank()})
      return ctx.fail(
          fmt::format("input 2 (output_shape) must be i64[{}], got {}", x.rank(), st.str()));
    const Tensor *c = ctx.constant(2);
    if (!c)
      return ctx.fail("input 2 (output_shape) of MaxUnpool must be a constant");
    if (c->anyUndef())
      return ctx.fail("input 2 (output_shape) of MaxUnpool is indeterminate");
    Shape given(out.size());
    for (int64_t a = 0; a < x.rank(); ++a)
      given[static_cast<size_t>(a)] = c->getInt(a);
    for (size_t a = 0; a < out.size(); ++a)
      if (a < 2 ? given[a] != out[a] : given[a] < out[a])
        return ctx.fail(fmt::format("output_shape {} must keep N and C and hold the unpooled "
                                    "shape {}",
                                    shapeStr(given), shapeStr(out)));
    out = given;
  }
  TensorType type{x.dtype, out};
  if (!type.checkedElements())
    return ctx.fail(fmt::format("the output of MaxUnpool {} is too large", shapeStr(out)));
  ctx.outputs.push_back(std::move(type));
  return true;
}

void kernelMaxUnpool(KernelContext &ctx) {
  const Tensor &x = ctx.in(0), &idx = ctx.in(1);
  Tensor &y = ctx.out(0);
  if (x.size() == 0)
    return;
  // The unpooled shape (the output's when output_shape is absent).
  size_t r = x.shape().size(), k = r - 2;
  std::vector<int64_t> kernel = *attrInts(ctx.node, "kernel_shape"), strides, pads;
  std::string error;
  intsAttr(ctx.node, "strides", k, 1, strides, error);
  intsAttr(ctx.node, "pads", 2 * k, 0, pads, error);
  Shape unpooled{x.shape()[0], x.shape()[1]};
  for (size_t a = 0; a < k; ++a)
    unpooled.push_back(std::max<int64_t>(0, (x.shape()[a + 2] - 1) * strides[a] + kernel[a] -
                                                pads[a] - pads[a + k]));
  std::vector<int64_t> ust = stridesOf(unpooled), yst = stridesOf(y.shape());
  int64_t total = product(unpooled);
  for (int64_t j = 0; j < x.size(); ++j) {
    int64_t i = idx.getInt(j);
    if (idx.isUndef(j) || i < 0 || i >= total) { // undefined in ONNX
      for (int64_t e = 0; e < y.size(); ++e)
        y.setUndef(e);
      return;
    }
    int64_t yi = 0;
    for (size_t a = 0; a < r; ++a) {
      yi += (i / ust[a]) * yst[a];
      i %= ust[a];
    }
    y.copyElement(yi, x, j);
  }
}

void kernelGlobalMaxPool(KernelContext &ctx) {
  maxPool(ctx, true);
}

} // namespace graphvet::ops::nn
