// Conv and ConvTranspose (ONNX opset <= 17, plus graphvet's `layout`).
//
// Numerics (tensor-semantics.md §3): each output element is one dot product
// accumulated in f32 (f16, f32 inputs) or f64 (f64 inputs), in the canonical
// order input channel, then kernel taps in row-major order (kernel row, then
// column, ...), then + bias, and rounded once to the output dtype. Each term
// is x * w rounded to the accumulator, then added (no fused multiply-add).
//
// Conv is ONNX's "pad with zeros, then correlate": a tap that falls in the
// padding contributes the term (+0 * w), so every weight of an output
// channel takes part in each of its outputs (w = inf or NaN there gives NaN,
// as it would on an explicitly padded input). ConvTranspose is the scatter
// y[i*stride + k*dilation - pad] += x[i] * w[k]: an output element sums
// exactly the (i, k) pairs that reach it, gathered in the same canonical
// order (input channel, then kernel taps); positions no pair reaches hold
// the bias alone (or +0).
//
// Indeterminate elements: an output element is indeterminate when any x or
// w element of one of its terms, or its bias, is.
#include "ir/ops/nn_common.h"

#include <fmt/format.h>
#include <functional>
#include <limits>

namespace graphvet::ops::nn {
namespace {

struct ConvCommon {
  Layout layout = Layout::NCHW;
  Shape xs, ws; // logical shapes of X and W
  int64_t group = 1;
};

/// The checks Conv and ConvTranspose share: input count, dtypes, ranks,
/// layout, group, kernel_shape, bias.
bool checkConvInputs(InferContext &ctx, bool transpose, ConvCommon &c) {
  const char *op = transpose ? "ConvTranspose" : "Conv";
  size_t ni = ctx.numInputs();
  if (ni < 2 || ni > 3)
    return ctx.fail(fmt::format("{} takes 2 or 3 inputs (X, W, optional B), got {}", op, ni));
  if (!ctx.has(0) || !ctx.has(1))
    return ctx.fail(fmt::format("inputs 0 (X) and 1 (W) of {} are required", op));
  const TensorType &x = ctx.in(0), &w = ctx.in(1);
  if (!checkDType(ctx, 0, "X", x.dtype, kConvTypes))
    return false;
  if (w.dtype != x.dtype)
    return ctx.fail(fmt::format("input 1 (W) must have X's dtype {}, got {}", dtypeName(x.dtype),
                                dtypeName(w.dtype)));
  if (x.rank() < 3)
    return ctx.fail(
        fmt::format("input 0 (X) must have rank >= 3 (N, C, spatial...), got {}", x.str()));
  if (w.rank() != x.rank())
    return ctx.fail(fmt::format("input 1 (W) must have X's rank {}, got {}", x.rank(), w.str()));
  if (!readLayout(ctx, x.rank(), c.layout))
    return false;
  c.xs = logicalShape(c.layout, x.shape);
  c.ws = logicalShape(c.layout, w.shape);
  c.group = attrInt(ctx.node, "group", 1);
  if (c.group < 1 || c.group > (int64_t{1} << 31))
    return ctx.fail(fmt::format("group must be in [1, 2^31], got {}", c.group));
  int64_t C = c.xs[1];
  if (C % c.group != 0)
    return ctx.fail(fmt::format("X's {} channels are not divisible by group {}", C, c.group));
  if (transpose) {
    if (c.ws[0] != C)
      return ctx.fail(
          fmt::format("W's {} input channels do not match X's {} channels", c.ws[0], C));
  } else {
    if (c.ws[1] != C / c.group)
      return ctx.fail(fmt::format("W has {} input channels per group but X's {} channels in {} "
                                  "group(s) need {}",
                                  c.ws[1], C, c.group, C / c.group));
    if (c.ws[0] % c.group != 0)
      return ctx.fail(
          fmt::format("W's {} output channels are not divisible by group {}", c.ws[0], c.group));
  }
  std::vector<int64_t> kernel(c.ws.begin() + 2, c.ws.end());
  if (ctx.node.attr("kernel_shape")) {
    auto ks = attrInts(ctx.node, "kernel_shape");
    if (!ks || *ks != kernel)
      return ctx.fail(
          fmt::format("kernel_shape must match W's spatial shape {}", shapeStr(kernel)));
  }
  int64_t M = c.ws[0];
  if (transpose && __builtin_mul_overflow(c.ws[1], c.group, &M))
    return ctx.fail("ConvTranspose's output channels overflow");
  if (ctx.has(2)) {
    const TensorType &b = ctx.in(2);
    if (b.dtype != x.dtype)
      return ctx.fail(fmt::format("input 2 (B) must have X's dtype {}, got {}", dtypeName(x.dtype),
                                  dtypeName(b.dtype)));
    if (b.shape != Shape{M})
      return ctx.fail(fmt::format("input 2 (B) must have shape [{}], got {}", M, b.str()));
  }
  return true;
}

std::vector<int64_t> spatial(const Shape &s) {
  return std::vector<int64_t>(s.begin() + 2, s.end());
}

/// Fills, for an output position's spatial multi-index, one entry per
/// kernel tap: the input's spatial offset, or negative when the tap reads no
/// input element.
using TapFn = std::function<void(const std::vector<int64_t> &, std::vector<int64_t> &)>;

/// The index arithmetic both convolution loops share: logical strides of X,
/// W and Y, Y's spatial strides, each kernel tap's offset in W, and the
/// channel counts (N batch, Cg input channels per group, Mg output channels
/// per group, M in all, K taps; with no input channel there is no term, W is
/// empty and K = 0: only the bias remains).
struct ConvGeometry {
  std::vector<int64_t> xst, wst, yst, ysp, woff;
  int64_t N, Cg, Mg, M, K;

  ConvGeometry(const KernelContext &ctx, bool transpose, const std::vector<int64_t> &kernel) {
    const Layout L = layoutOf(ctx.node);
    const Shape xs = logicalShape(L, ctx.in(0).shape()), ws = logicalShape(L, ctx.in(1).shape());
    xst = logicalStrides(L, ctx.in(0).shape());
    wst = logicalStrides(L, ctx.in(1).shape());
    yst = logicalStrides(L, ctx.out(0).shape());
    ysp.assign(yst.begin() + 2, yst.end());
    const int64_t group = attrInt(ctx.node, "group", 1);
    N = xs[0];
    Cg = xs[1] / group;
    Mg = transpose ? ws[1] : ws[0] / group;
    M = Mg * group;
    K = Cg > 0 ? product(kernel) : 0;
    if (Cg > 0)
      woff = positionOffsets(kernel, std::vector<int64_t>(wst.begin() + 2, wst.end()));
  }
};

/// Bounds of the tap table convolveByPlane keeps: one int32 input offset per
/// (kernel tap, output position).
constexpr int64_t kMaxTapTable = int64_t{1} << 24;

/// What convolve computes, for the operands without indeterminate elements,
/// organised for the cache: for each batch entry and output channel, one
/// accumulator per output position of the plane, and the loops over the
/// input channels and kernel taps outside the loop over positions. Each
/// output element still sums its terms in the canonical order (input
/// channel, then taps, then + bias) with the same roundings, so the bits are
/// convolve's; only the order in which different elements advance changes.
/// The taps of every position are computed once into a table of input
/// offsets (-1: the tap reads no input element). False (nothing written)
/// when that table would exceed kMaxTapTable entries or an offset int32.
template <class A>
bool convolveByPlane(KernelContext &ctx, bool transpose, const std::vector<int64_t> &outSpatial,
                     const std::vector<int64_t> &kernel, const TapFn &tapsAt) {
  const Tensor &x = ctx.in(0), &w = ctx.in(1);
  const Tensor *b = ctx.has(2) ? &ctx.in(2) : nullptr;
  Tensor &y = ctx.out(0);
  const ConvGeometry geo(ctx, transpose, kernel);
  const auto &[xst, wst, yst, ysp, woff, N, Cg, Mg, M, K] = geo;
  int64_t P = product(outSpatial);
  if (x.size() > std::numeric_limits<int32_t>::max() || K > kMaxTapTable ||
      (K > 0 && P > kMaxTapTable / K))
    return false;

  // The tap table (tap-major), each position's output offset, and whether
  // any tap of a position reads an input element (ConvTranspose skips the
  // others; a Conv tap in the padding is a +0 term).
  const auto up = static_cast<size_t>(P);
  std::vector<int32_t> tap(static_cast<size_t>(K) * up);
  std::vector<int64_t> yoff(up);
  std::vector<uint8_t> anyTerm(up, 0);
  std::vector<int64_t> o(outSpatial.size(), 0), taps;
  size_t p = 0;
  do {
    if (K > 0)
      tapsAt(o, taps);
    int64_t off = 0;
    for (size_t a = 0; a < o.size(); ++a)
      off += o[a] * ysp[a];
    yoff[p] = off;
    for (int64_t kf = 0; kf < K; ++kf) {
      const int64_t xo = taps[static_cast<size_t>(kf)];
      tap[static_cast<size_t>(kf) * up + p] = static_cast<int32_t>(xo >= 0 ? xo : -1);
      anyTerm[p] = anyTerm[p] || xo >= 0 || !transpose;
    }
    ++p;
  } while (nextIndex(o, outSpatial));

  const std::vector<A> xv = loadAllAs<A>(x), wv = loadAllAs<A>(w);
  const std::vector<A> bv = b ? loadAllAs<A>(*b) : std::vector<A>();
  std::vector<A> acc(up);
  for (int64_t in = 0; in < N; ++in)
    for (int64_t m = 0; m < M; ++m) {
      const int64_t g = m / Mg;
      std::fill(acc.begin(), acc.end(), A(-0.0)); // -0 + t == t: the sum starts at the first term
      for (int64_t c = 0; c < Cg; ++c) {
        const int64_t cin = g * Cg + c;
        const A *xp = xv.data() + (in * xst[0] + cin * xst[1]);
        const int64_t wbase =
            transpose ? cin * wst[0] + (m - g * Mg) * wst[1] : m * wst[0] + c * wst[1];
        for (int64_t kf = 0; kf < K; ++kf) {
          const A wk = wv[static_cast<size_t>(wbase + woff[static_cast<size_t>(kf)])];
          const int32_t *t = tap.data() + static_cast<size_t>(kf) * up;
          if (transpose) {
            for (size_t q = 0; q < up; ++q)
              if (t[q] >= 0) {
                const A term = xp[t[q]] * wk;
                acc[q] = acc[q] + term;
              }
          } else {
            for (size_t q = 0; q < up; ++q) {
              const A term = (t[q] >= 0 ? xp[t[q]] : A(0)) * wk; // zero padding
              acc[q] = acc[q] + term;
            }
          }
        }
      }
      const int64_t ybase = in * yst[0] + m * yst[1];
      for (size_t q = 0; q < up; ++q) {
        A r = anyTerm[q] && K > 0 ? acc[q] : A(0);
        if (b)
          r = r + bv[static_cast<size_t>(m)];
        storeRounded(y, ybase + yoff[q], r);
      }
    }
  return true;
}

/// The dot-product loop both ops share: for every output position (taps
/// computed once), batch entry n and output channel m, the sum over the
/// group's input channels c and the kernel taps of x * w, then + bias.
/// Operands without indeterminate elements take convolveByPlane, the same
/// sums organised for the cache; this loop tracks indeterminacy.
template <class A>
void convolve(KernelContext &ctx, bool transpose, const std::vector<int64_t> &outSpatial,
              const std::vector<int64_t> &kernel, const TapFn &tapsAt) {
  const Tensor &x = ctx.in(0), &w = ctx.in(1);
  const Tensor *b = ctx.has(2) ? &ctx.in(2) : nullptr;
  Tensor &y = ctx.out(0);
  if (y.size() == 0)
    return;
  bool track = x.anyUndef() || w.anyUndef() || anyUndef(b);
  if (!track && !ctx.referenceLoops &&
      convolveByPlane<A>(ctx, transpose, outSpatial, kernel, tapsAt))
    return;
  const ConvGeometry geo(ctx, transpose, kernel);
  const auto &[xst, wst, yst, ysp, woff, N, Cg, Mg, M, K] = geo;

  std::vector<A> xv = loadAllAs<A>(x), wv = loadAllAs<A>(w);
  std::vector<A> bv = b ? loadAllAs<A>(*b) : std::vector<A>();
  std::vector<uint8_t> xu = track ? undefFlags(x) : std::vector<uint8_t>();
  std::vector<uint8_t> wu = track ? undefFlags(w) : std::vector<uint8_t>();

  std::vector<int64_t> o(outSpatial.size(), 0), taps;
  do {
    if (Cg > 0)
      tapsAt(o, taps);
    int64_t yoff = 0;
    for (size_t a = 0; a < o.size(); ++a)
      yoff += o[a] * ysp[a];
    for (int64_t in = 0; in < N; ++in)
      for (int64_t m = 0; m < M; ++m) {
        int64_t g = m / Mg;
        A acc = A(-0.0); // -0 + t == t for every t: the sum starts at the first term
        bool any = false, undef = false;
        for (int64_t c = 0; c < Cg; ++c) {
          int64_t cin = g * Cg + c;
          int64_t xbase = in * xst[0] + cin * xst[1];
          int64_t wbase =
              transpose ? cin * wst[0] + (m - g * Mg) * wst[1] : m * wst[0] + c * wst[1];
          for (int64_t kf = 0; kf < K; ++kf) {
            int64_t xo = taps[static_cast<size_t>(kf)];
            int64_t wi = wbase + woff[static_cast<size_t>(kf)];
            A xval;
            if (xo >= 0) {
              xval = xv[static_cast<size_t>(xbase + xo)];
              if (track)
                undef = undef || xu[static_cast<size_t>(xbase + xo)];
            } else if (transpose) {
              continue; // no (i, k) pair reaches this output through tap kf
            } else {
              xval = A(0); // Conv's zero padding
            }
            if (track)
              undef = undef || wu[static_cast<size_t>(wi)];
            A t = xval * wv[static_cast<size_t>(wi)];
            acc = acc + t;
            any = true;
          }
        }
        if (!any)
          acc = A(0);
        if (b) {
          acc = acc + bv[static_cast<size_t>(m)];
          undef = undef || b->isUndef(m);
        }
        int64_t yi = in * yst[0] + m * yst[1] + yoff;
        y.setDouble(yi, static_cast<double>(acc));
        if (undef)
          y.setUndef(yi);
      }
  } while (nextIndex(o, outSpatial));
}

// ---- Conv

template <class A> void convKernel(KernelContext &ctx) {
  const Node &n = ctx.node;
  Layout L = layoutOf(n);
  Shape xs = logicalShape(L, ctx.in(0).shape()), ws = logicalShape(L, ctx.in(1).shape());
  std::string error;
  Window win = *windowOf(n, spatial(xs), spatial(ws), {}, error);
  std::vector<int64_t> xst = logicalStrides(L, ctx.in(0).shape());
  std::vector<int64_t> xsp(xst.begin() + 2, xst.end());
  convolve<A>(ctx, false, win.out, win.kernel,
              [&](const std::vector<int64_t> &o, std::vector<int64_t> &taps) {
                windowTapsAt(win, o, xsp, taps);
              });
}

// ---- ConvTranspose geometry (ONNX 1.12 ConvTranspose-11):
//   full[i]  = stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1
//   out      = full - pad_begin - pad_end, or output_shape when given, or
//              in * stride for SAME_UPPER / SAME_LOWER;
//   when output_shape or SAME_* fixes out, total = full - out is split
//   SAME_UPPER: begin = floor(total / 2), end = total - begin; otherwise
//   begin = total - floor(total / 2), end = floor(total / 2) (the spec's
//   formulas, with floor division so that a negative total, an output larger
//   than `full`, adds positions at the end that only the bias reaches).
struct TransposeGeometry {
  std::vector<int64_t> in, kernel, strides, dilations, padBegin, out;
};

// Sizes and attributes past 2^30 are rejected so that `full` cannot overflow.
constexpr int64_t kMaxAttr = int64_t{1} << 30;

int64_t floorDiv2(int64_t v) {
  return v >= 0 ? v / 2 : -((-v + 1) / 2);
}

std::optional<TransposeGeometry> transposeGeometry(const Node &n, const Shape &xs, const Shape &ws,
                                                   std::string &error) {
  TransposeGeometry t;
  t.in = spatial(xs);
  t.kernel = spatial(ws);
  size_t k = t.in.size();
  std::vector<int64_t> outputPadding, pads;
  if (!intsAttr(n, "strides", k, 1, t.strides, error) ||
      !intsAttr(n, "dilations", k, 1, t.dilations, error) ||
      !intsAttr(n, "output_padding", k, 0, outputPadding, error) ||
      !intsAttr(n, "pads", 2 * k, 0, pads, error))
    return std::nullopt;
  auto inRange = [&](const char *what, int64_t v, int64_t lo) {
    if (v >= lo && v <= kMaxAttr)
      return true;
    error = fmt::format("{} must be in [{}, 2^30], got {}", what, lo, v);
    return false;
  };
  for (size_t i = 0; i < k; ++i)
    if (!inRange("kernel size", t.kernel[i], 1) || !inRange("strides", t.strides[i], 1) ||
        !inRange("dilations", t.dilations[i], 1) ||
        !inRange("output_padding", outputPadding[i], 0) || !inRange("pads", pads[i], 0) ||
        !inRange("pads", pads[i + k], 0))
      return std::nullopt;
  std::string autoPad = attrString(n, "auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER" &&
      autoPad != "VALID") {
    error = fmt::format("auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got \"{}\"",
                        autoPad);
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> outputShape;
  if (n.attr("output_shape")) {
    outputShape = attrInts(n, "output_shape");
    if (!outputShape || (outputShape->size() != k && outputShape->size() != k + 2)) {
      error = fmt::format("output_shape must list the {} spatial sizes", k);
      return std::nullopt;
    }
    if (outputShape->size() == k + 2)
      outputShape->erase(outputShape->begin(), outputShape->begin() + 2);
    for (int64_t v : *outputShape)
      if (!inRange("output_shape", v, 0))
        return std::nullopt;
  }
  t.padBegin.resize(k);
  t.out.resize(k);
  for (size_t i = 0; i < k; ++i) {
    if (t.in[i] > kMaxAttr) {
      error = fmt::format("spatial size {} of X is too large for ConvTranspose", t.in[i]);
      return std::nullopt;
    }
    int64_t full =
        t.strides[i] * (t.in[i] - 1) + outputPadding[i] + (t.kernel[i] - 1) * t.dilations[i] + 1;
    bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
    if (outputShape || same) {
      int64_t out = outputShape ? (*outputShape)[i] : t.in[i] * t.strides[i];
      int64_t total = full - out;
      int64_t half = floorDiv2(total);
      t.padBegin[i] = autoPad == "SAME_UPPER" ? half : total - half;
      t.out[i] = out;
    } else if (autoPad == "VALID") {
      t.padBegin[i] = 0;
      t.out[i] = full;
    } else {
      t.padBegin[i] = pads[i];
      t.out[i] = full - pads[i] - pads[i + k];
    }
    if (t.out[i] < 0) {
      error = fmt::format("the output of ConvTranspose would have size {} along spatial axis {}",
                          t.out[i], i);
      return std::nullopt;
    }
  }
  return t;
}

template <class A> void convTransposeKernel(KernelContext &ctx) {
  const Node &n = ctx.node;
  Layout L = layoutOf(n);
  Shape xs = logicalShape(L, ctx.in(0).shape()), ws = logicalShape(L, ctx.in(1).shape());
  std::string error;
  TransposeGeometry t = *transposeGeometry(n, xs, ws, error);
  // Output coordinate o and tap k read input i along an axis when
  // o + padBegin - k * dilation == i * stride with 0 <= i < in.
  std::vector<int64_t> xst = logicalStrides(L, ctx.in(0).shape());
  std::vector<int64_t> xsp(xst.begin() + 2, xst.end());
  size_t r = t.in.size();
  auto tapsAt = [&](const std::vector<int64_t> &o, std::vector<int64_t> &taps) {
    taps.resize(static_cast<size_t>(product(t.kernel)));
    std::vector<int64_t> k(r, 0);
    size_t kf = 0;
    do {
      int64_t off = 0;
      for (size_t a = 0; a < r && off >= 0; ++a) {
        int64_t v = o[a] + t.padBegin[a] - k[a] * t.dilations[a];
        int64_t i = v >= 0 && v % t.strides[a] == 0 ? v / t.strides[a] : -1;
        off = i >= 0 && i < t.in[a] ? off + i * xsp[a] : -1;
      }
      taps[kf++] = off;
    } while (kf < taps.size() && nextIndex(k, t.kernel));
  };
  convolve<A>(ctx, true, t.out, t.kernel, tapsAt);
}

} // namespace

bool inferConv(InferContext &ctx) {
  ConvCommon c;
  if (!checkConvInputs(ctx, false, c))
    return false;
  std::string error;
  auto win = windowOf(ctx.node, spatial(c.xs), spatial(c.ws), {}, error);
  if (!win)
    return ctx.fail(error);
  Shape out{c.xs[0], c.ws[0]};
  out.insert(out.end(), win->out.begin(), win->out.end());
  TensorType type{ctx.in(0).dtype, physicalShape(c.layout, out)};
  if (!type.checkedElements())
    return ctx.fail(fmt::format("the output of Conv {} is too large", shapeStr(out)));
  ctx.outputs.push_back(std::move(type));
  return true;
}

void kernelConv(KernelContext &ctx) {
  if (ctx.in(0).dtype() == DType::F64)
    convKernel<double>(ctx);
  else
    convKernel<float>(ctx);
}

bool inferConvTranspose(InferContext &ctx) {
  ConvCommon c;
  if (!checkConvInputs(ctx, true, c))
    return false;
  std::string error;
  auto t = transposeGeometry(ctx.node, c.xs, c.ws, error);
  if (!t)
    return ctx.fail(error);
  Shape out{c.xs[0], c.ws[1] * c.group};
  out.insert(out.end(), t->out.begin(), t->out.end());
  TensorType type{ctx.in(0).dtype, physicalShape(c.layout, out)};
  if (!type.checkedElements())
    return ctx.fail(fmt::format("the output of ConvTranspose {} is too large", shapeStr(out)));
  ctx.outputs.push_back(std::move(type));
  return true;
}

void kernelConvTranspose(KernelContext &ctx) {
  if (ctx.in(0).dtype() == DType::F64)
    convTransposeKernel<double>(ctx);
  else
    convTransposeKernel<float>(ctx);
}

} // namespace graphvet::ops::nn
