// ConvInteger (opset 10) and QLinearConv (opset 10): integer convolutions.
// Window attributes as Conv's (auto_pad, dilations, group, kernel_shape,
// pads, strides); NCHW only (no `layout`).
//
// Each output element is, over the group's input channels c and the kernel
// taps (canonical order), the sum of (x - x_zero_point) * (w - w_zero_point)
// in exact integer arithmetic wrapped to i32 (tensor-semantics.md §3:
// integers wrap); a tap in the padding reads x_zero_point, so it adds 0 (as
// onnxruntime pads). w_zero_point (and QLinearConv's w_scale) may hold one
// value per output channel.
//
// ConvInteger's output is that i32 sum. QLinearConv adds the optional i32
// bias (wrapping), then requantizes as onnxruntime does, in f32:
//   multiplier = (x_scale * w_scale[m]) / y_scale
//   y = saturate(round_half_even(float(acc) * multiplier) + y_zero_point)
// to y_zero_point's dtype; a NaN result (NaN or infinite scales) is
// indeterminate.
//
// Indeterminate elements: an output is indeterminate when an x or w element
// of one of its terms, or a zero point, scale or bias it uses, is.
#include "ir/ops/nn_common.h"

#include <cmath>
#include <fmt/format.h>

namespace graphvet::ops::nn {
namespace {

constexpr std::initializer_list<DType> kQTypes = {DType::I8, DType::U8};

/// Checks the shape of an optional per-tensor or per-output-channel operand.
bool checkPerChannel(InferContext &ctx, size_t i, const char *name, int64_t M, DType want) {
  if (!ctx.has(i))
    return true;
  const TensorType &t = ctx.in(i);
  if (t.dtype != want)
    return ctx.fail(fmt::format("input {} ({}) must be {}, got {}", i, name, dtypeName(want),
                                dtypeName(t.dtype)));
  if (t.numElements() != 1 && t.shape != Shape{M})
    return ctx.fail(fmt::format("input {} ({}) must be a scalar or have shape [{}], got {}", i,
                                name, M, t.str()));
  return true;
}

bool checkScalar(InferContext &ctx, size_t i, const char *name, std::optional<DType> want) {
  if (!ctx.has(i))
    return true;
  const TensorType &t = ctx.in(i);
  if (want && t.dtype != *want)
    return ctx.fail(fmt::format("input {} ({}) must be {}, got {}", i, name, dtypeName(*want),
                                dtypeName(t.dtype)));
  if (t.numElements() != 1)
    return ctx.fail(fmt::format("input {} ({}) must be a scalar, got {}", i, name, t.str()));
  return true;
}

/// X, W and the window: the checks both ops share. `xi`/`wi` are X's and
/// W's slots; fills the output shape.
bool inferIntegerConv(InferContext &ctx, size_t xi, size_t wi, Shape &out) {
  if (!ctx.has(xi) || !ctx.has(wi))
    return ctx.fail(
        fmt::format("inputs {} (x) and {} (w) of {} are required", xi, wi, ctx.node.type));
  const TensorType &x = ctx.in(xi), &w = ctx.in(wi);
  if (!checkDType(ctx, xi, "x", x.dtype, kQTypes) || !checkDType(ctx, wi, "w", w.dtype, kQTypes))
    return false;
  if (x.rank() < 3 || w.rank() != x.rank())
    return ctx.fail(
        fmt::format("x must have rank >= 3 and w the same rank, got {} and {}", x.str(), w.str()));
  int64_t group = attrInt(ctx.node, "group", 1);
  if (group < 1 || group > (int64_t{1} << 31))
    return ctx.fail(fmt::format("group must be in [1, 2^31], got {}", group));
  if (x.shape[1] % group != 0 || w.shape[1] * group != x.shape[1] || w.shape[0] % group != 0)
    return ctx.fail(fmt::format("w {} does not fit x {} with group {}", w.str(), x.str(), group));
  std::vector<int64_t> in(x.shape.begin() + 2, x.shape.end());
  std::vector<int64_t> kernel(w.shape.begin() + 2, w.shape.end());
  if (ctx.node.attr("kernel_shape") && attrInts(ctx.node, "kernel_shape") != kernel)
    return ctx.fail(fmt::format("kernel_shape must match w's spatial shape {}", shapeStr(kernel)));
  std::string error;
  auto win = windowOf(ctx.node, in, kernel, {}, error);
  if (!win)
    return ctx.fail(error);
  out = {x.shape[0], w.shape[0]};
  out.insert(out.end(), win->out.begin(), win->out.end());
  return true;
}

/// The exact sums (wrapped to i32) of every output element, and whether
/// each is indeterminate.
void integerConv(const KernelContext &ctx, size_t xi, size_t wi, const Tensor *xzp,
                 const Tensor *wzp, std::vector<int32_t> &sums, std::vector<uint8_t> &undef) {
  const Tensor &x = ctx.in(xi), &w = ctx.in(wi);
  int64_t group = attrInt(ctx.node, "group", 1);
  int64_t N = x.shape()[0], C = x.shape()[1], Cg = C / group, M = w.shape()[0], Mg = M / group;
  std::vector<int64_t> in(x.shape().begin() + 2, x.shape().end());
  std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  std::string error;
  Window win = *windowOf(ctx.node, in, kernel, {}, error);
  std::vector<int64_t> xst = stridesOf(x.shape()), wst = stridesOf(w.shape());
  std::vector<int64_t> xsp(xst.begin() + 2, xst.end());
  int64_t K = Cg > 0 ? product(kernel) : 0, P = product(win.out);
  int64_t xz = xzp ? xzp->getInt(0) : 0;
  bool zpUndef = (xzp && xzp->isUndef(0));
  std::vector<int64_t> taps;
  std::vector<int64_t> o(win.rank(), 0);
  sums.assign(static_cast<size_t>(N * M * P), 0);
  undef.assign(sums.size(), 0);
  if (sums.empty())
    return;
  int64_t p = 0;
  do {
    if (Cg > 0)
      windowTapsAt(win, o, xsp, taps);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t m = 0; m < M; ++m) {
        int64_t g = m / Mg;
        int64_t wz = wzp ? wzp->getInt(wzp->size() == 1 ? 0 : m) : 0;
        bool u = zpUndef || (wzp && wzp->isUndef(wzp->size() == 1 ? 0 : m));
        uint64_t acc = 0; // modular: the i32 wrap of the exact sum
        for (int64_t c = 0; c < Cg; ++c) {
          int64_t xbase = n * xst[0] + (g * Cg + c) * xst[1];
          int64_t wbase = m * wst[0] + c * wst[1];
          for (int64_t kf = 0; kf < K; ++kf) {
            int64_t off = taps[static_cast<size_t>(kf)];
            if (off < 0)
              continue; // padding reads x_zero_point: a zero term
            int64_t xi2 = xbase + off, wi2 = wbase;
            // The weight of tap kf: W's spatial offsets are row-major.
            wi2 += kf;
            u = u || x.isUndef(xi2) || w.isUndef(wi2);
            acc += static_cast<uint64_t>((x.getInt(xi2) - xz) * (w.getInt(wi2) - wz));
          }
        }
        size_t yi = static_cast<size_t>((n * M + m) * P + p);
        sums[yi] = static_cast<int32_t>(static_cast<uint32_t>(acc));
        undef[yi] = u;
      }
    ++p;
  } while (nextIndex(o, win.out));
}

} // namespace

bool inferConvInteger(InferContext &ctx) {
  if (ctx.numInputs() < 2 || ctx.numInputs() > 4)
    return ctx.fail(
        fmt::format("ConvInteger takes 2 to 4 inputs (x, w, x_zero_point, w_zero_point), got {}",
                    ctx.numInputs()));
  Shape out;
  if (!inferIntegerConv(ctx, 0, 1, out))
    return false;
  if (!checkScalar(ctx, 2, "x_zero_point", ctx.in(0).dtype) ||
      !checkPerChannel(ctx, 3, "w_zero_point", ctx.in(1).shape[0], ctx.in(1).dtype))
    return false;
  ctx.outputs.push_back({DType::I32, out});
  return true;
}

void kernelConvInteger(KernelContext &ctx) {
  std::vector<int32_t> sums;
  std::vector<uint8_t> undef;
  const Tensor *xzp = ctx.has(2) ? &ctx.in(2) : nullptr, *wzp = ctx.has(3) ? &ctx.in(3) : nullptr;
  Tensor &y = ctx.out(0);
  integerConv(ctx, 0, 1, xzp, wzp, sums, undef);
  for (int64_t i = 0; i < y.size(); ++i) {
    y.setInt(i, sums[static_cast<size_t>(i)]);
    if (undef[static_cast<size_t>(i)])
      y.setUndef(i);
  }
}

bool inferQLinearConv(InferContext &ctx) {
  if (ctx.numInputs() < 8 || ctx.numInputs() > 9)
    return ctx.fail(fmt::format("QLinearConv takes 8 or 9 inputs (x, x_scale, x_zero_point, w, "
                                "w_scale, w_zero_point, y_scale, y_zero_point, B), got {}",
                                ctx.numInputs()));
  static const char *names[] = {"x",       "x_scale",      "x_zero_point", "w",
                                "w_scale", "w_zero_point", "y_scale",      "y_zero_point"};
  for (size_t i = 0; i < 8; ++i)
    if (!ctx.has(i))
      return ctx.fail(fmt::format("input {} ({}) of QLinearConv is required", i, names[i]));
  Shape out;
  if (!inferIntegerConv(ctx, 0, 3, out))
    return false;
  int64_t M = ctx.in(3).shape[0];
  if (!checkScalar(ctx, 1, "x_scale", DType::F32) ||
      !checkScalar(ctx, 2, "x_zero_point", ctx.in(0).dtype) ||
      !checkPerChannel(ctx, 4, "w_scale", M, DType::F32) ||
      !checkPerChannel(ctx, 5, "w_zero_point", M, ctx.in(3).dtype) ||
      !checkScalar(ctx, 6, "y_scale", DType::F32) || !checkScalar(ctx, 7, "y_zero_point", {}))
    return false;
  if (!checkDType(ctx, 7, "y_zero_point", ctx.in(7).dtype, kQTypes))
    return false;
  if (ctx.has(8) && (ctx.in(8).dtype != DType::I32 || ctx.in(8).shape != Shape{M}))
    return ctx.fail(fmt::format("input 8 (B) must be i32[{}], got {}", M, ctx.in(8).str()));
  ctx.outputs.push_back({ctx.in(7).dtype, out});
  return true;
}

void kernelQLinearConv(KernelContext &ctx) {
  std::vector<int32_t> sums;
  std::vector<uint8_t> undef;
  Tensor &y = ctx.out(0);
  integerConv(ctx, 0, 3, &ctx.in(2), &ctx.in(5), sums, undef);
  const Tensor &ws = ctx.in(4);
  const Tensor *b = ctx.has(8) ? &ctx.in(8) : nullptr;
  float xs = static_cast<float>(ctx.in(1).getDouble(0)),
        ys = static_cast<float>(ctx.in(6).getDouble(0));
  int64_t yz = ctx.in(7).getInt(0);
  bool scalarsUndef = ctx.in(1).isUndef(0) || ctx.in(6).isUndef(0) || ctx.in(7).isUndef(0);
  DType t = y.dtype();
  int64_t M = y.shape()[1], P = y.size() / std::max<int64_t>(1, y.shape()[0] * M);
  for (int64_t i = 0; i < y.size(); ++i) {
    int64_t m = (i / P) % M;
    int64_t wi = ws.size() == 1 ? 0 : m;
    uint32_t acc = static_cast<uint32_t>(sums[static_cast<size_t>(i)]);
    bool u = undef[static_cast<size_t>(i)] || scalarsUndef || ws.isUndef(wi);
    if (b) {
      acc += static_cast<uint32_t>(b->getInt(m));
      u = u || b->isUndef(m);
    }
    float multiplier = (xs * static_cast<float>(ws.getDouble(wi))) / ys;
    float v = std::nearbyint(static_cast<float>(static_cast<int32_t>(acc)) * multiplier);
    if (std::isnan(v)) {
      y.setUndef(i);
      continue;
    }
    double q = static_cast<double>(v) + static_cast<double>(yz);
    q = std::min(std::max(q, static_cast<double>(intMin(t))), static_cast<double>(intMax(t)));
    y.setInt(i, static_cast<int64_t>(q));
    if (u)
      y.setUndef(i);
  }
}

} // namespace graphvet::ops::nn
