// The softmax family (Softmax, LogSoftmax, Hardmax) and CumSum: type
// inference and reference kernels (part of the reduce family, see
// reduce_family.h).
//
// Softmax, LogSoftmax, Hardmax (f16, bf16, f32, f64):
// - Opset >= 13 (the default): along the single axis `axis` (default -1).
//   Opset < 13, selected by the graphvet attribute `onnx_opset` (the ONNX
//   opset the node was imported at, < 13): the input is coerced to 2-D
//   [d0*...*d(axis-1), d(axis)*...*d(r-1)] and the op works along the second
//   dimension; `axis` defaults to 1 there.
// - Softmax, for each slice along the axis, in the accumulation type A (f32
//   for f16/bf16/f32, f64 for f64): m = the maximum of the slice (NaN if any
//   element is NaN); d_i = A(x_i - m); e_i = exp(d_i) computed in f64 and
//   rounded to A; s = sum of e_i in increasing i (starting with e_0);
//   y_i = e_i / s computed in f64 and rounded once to the output dtype.
//   LogSoftmax: same d_i, e_i, s; l = log(s) computed in f64, rounded to A;
//   y_i = d_i - l computed in f64 and rounded once to the output dtype. For
//   f32 and f64 these are bit for bit ONNX's function bodies (ReduceMax, Sub,
//   Exp, ReduceSum, Div / Log, Sub) under graphvet's kernels.
// - Hardmax: 1 at the first maximum of the slice, 0 elsewhere; a NaN counts
//   as the maximum (like ArgMax, numpy's argmax).
// - An indeterminate element makes its whole slice indeterminate.
//
// CumSum (i32, u32, i64, u64, f16, bf16, f32, f64): input 1 `axis` is a
// scalar (or one-element 1-D) i32/i64 constant, a shape operand (its value
// must be known statically, though it does not change the shape). The sum
// runs along the axis in increasing index order (decreasing with
// `reverse` = 1), starting with the first term, in the accumulation type
// (floats) or with 64-bit wrap (integers); each output is the running sum
// rounded once to the output dtype. `exclusive` = 1 leaves the current
// element out (the first output is +0). An output is indeterminate when any
// element it sums is.
#include "ir/ops/reduce_family.h"

#include <cmath>
#include <limits>
#include <vector>

namespace graphvet::ops::reduce_detail {
namespace {

/// A slice decomposition: `outer` slices of `n` elements `post` apart; slice
/// s starts at (s / post) * n * post + s % post.
struct Slices {
  int64_t outer = 1, n = 1, post = 1;
  int64_t count() const { return outer * post; }
  int64_t start(int64_t s) const { return (s / post) * n * post + s % post; }
};

bool legacySoftmax(const Node &n) {
  return attrInt(n, "onnx_opset", 13) < 13;
}

/// The axis of a softmax-family node, normalized, or nullopt when out of range.
std::optional<int64_t> softmaxAxis(const Node &n, int64_t rank) {
  return normalizeAxis(attrInt(n, "axis", legacySoftmax(n) ? 1 : -1), rank);
}

Slices slicesAlong(const Shape &shape, int64_t axis, bool toEnd) {
  Slices s;
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i) {
    if (i < axis)
      s.outer *= shape[i];
    else if (i == axis || toEnd)
      s.n *= shape[i];
    else
      s.post *= shape[i];
  }
  return s;
}

bool inferSoftmax(InferContext &ctx) {
  if (!checkInputCount(ctx, 1, 1) || !checkDType(ctx, 0, kFloatTypes))
    return false;
  int64_t rank = ctx.in(0).rank();
  if (!softmaxAxis(ctx.node, rank))
    return ctx.fail("axis " + std::to_string(attrInt(ctx.node, "axis", 0)) +
                    " is out of range for rank " + std::to_string(rank));
  ctx.outputs = {ctx.in(0)};
  return true;
}

enum class SKind { Softmax, LogSoftmax, Hardmax };

/// Marks the slice indeterminate when any of its elements is; true if so.
bool undefSlice(const Tensor &in, Tensor &out, const Slices &sl, int64_t base) {
  if (!in.anyUndef())
    return false;
  bool any = false;
  for (int64_t k = 0; k < sl.n && !any; ++k)
    any = in.isUndef(base + k * sl.post);
  if (any)
    for (int64_t k = 0; k < sl.n; ++k)
      out.setUndef(base + k * sl.post);
  return any;
}

template <SKind K, class A>
void softmaxSlice(const Tensor &in, Tensor &out, const Slices &sl, int64_t base) {
  std::vector<A> d(static_cast<size_t>(sl.n));
  A m = 0;
  bool seen = false, nan = false;
  for (int64_t k = 0; k < sl.n; ++k) {
    A x = static_cast<A>(in.getDouble(base + k * sl.post));
    d[k] = x;
    nan = nan || std::isnan(x);
    if (!std::isnan(x) && (!seen || x > m))
      m = x;
    seen = seen || !std::isnan(x);
  }
  if (nan)
    m = std::numeric_limits<A>::quiet_NaN();
  if constexpr (K == SKind::Hardmax) {
    int64_t best = 0;
    for (int64_t k = 1; k < sl.n; ++k)
      if (!std::isnan(d[best]) && (std::isnan(d[k]) || d[k] > d[best]))
        best = k;
    for (int64_t k = 0; k < sl.n; ++k)
      out.setDouble(base + k * sl.post, k == best ? 1.0 : 0.0);
  } else {
    std::vector<A> e(d.size());
    A s = 0;
    for (size_t k = 0; k < d.size(); ++k) {
      d[k] = d[k] - m;
      e[k] = static_cast<A>(std::exp(static_cast<double>(d[k])));
      s = k == 0 ? e[k] : s + e[k];
    }
    A l = static_cast<A>(std::log(static_cast<double>(s)));
    for (int64_t k = 0; k < sl.n; ++k) {
      double y = K == SKind::Softmax ? static_cast<double>(e[k]) / static_cast<double>(s)
                                     : static_cast<double>(d[k]) - static_cast<double>(l);
      out.setDouble(base + k * sl.post, y);
    }
  }
}

template <SKind K> void softmaxKernel(KernelContext &ctx) {
  const Tensor &in = ctx.in(0);
  Tensor &out = ctx.out(0);
  bool legacy = legacySoftmax(ctx.node);
  int64_t axis = *softmaxAxis(ctx.node, static_cast<int64_t>(in.shape().size()));
  Slices sl = slicesAlong(in.shape(), axis, legacy);
  for (int64_t s = 0; s < sl.count(); ++s) {
    int64_t base = sl.start(s);
    if (undefSlice(in, out, sl, base))
      continue;
    if (accumulatesInDouble(in.dtype()))
      softmaxSlice<K, double>(in, out, sl, base);
    else
      softmaxSlice<K, float>(in, out, sl, base);
  }
}

// ------------------------------------------------------------------- CumSum

bool inferCumSum(InferContext &ctx) {
  if (!checkInputCount(ctx, 2, 2) || !checkDType(ctx, 0, kNumericTypes))
    return false;
  std::vector<int64_t> axis;
  if (!constantInts(ctx, 1, "axis", axis))
    return false;
  if (axis.size() != 1)
    return ctx.fail("input 1 (axis) of CumSum must hold one value, not " +
                    std::to_string(axis.size()));
  int64_t rank = ctx.in(0).rank();
  if (!normalizeAxis(axis[0], rank))
    return ctx.fail("axis " + std::to_string(axis[0]) + " is out of range for rank " +
                    std::to_string(rank));
  ctx.outputs = {ctx.in(0)};
  return true;
}

/// Positions of a slice in scan order.
int64_t scanPos(const Slices &sl, int64_t j, bool reverse) {
  return reverse ? sl.n - 1 - j : j;
}

template <class A>
void cumSumFloat(const Tensor &in, Tensor &out, const Slices &sl, bool excl, bool rev) {
  for (int64_t s = 0; s < sl.count(); ++s) {
    int64_t base = sl.start(s);
    A acc = 0;
    bool undef = false;
    for (int64_t j = 0; j < sl.n; ++j) {
      int64_t i = base + scanPos(sl, j, rev) * sl.post;
      A x = static_cast<A>(in.getDouble(i));
      bool xUndef = in.isUndef(i);
      if (!excl) {
        acc = j == 0 ? x : acc + x;
        undef = undef || xUndef;
      }
      if (undef)
        out.setUndef(i);
      else
        out.setDouble(i, static_cast<double>(acc));
      if (excl) {
        acc = j == 0 ? x : acc + x;
        undef = undef || xUndef;
      }
    }
  }
}

void cumSumInt(const Tensor &in, Tensor &out, const Slices &sl, bool excl, bool rev) {
  bool isSigned = isSignedInteger(in.dtype());
  for (int64_t s = 0; s < sl.count(); ++s) {
    int64_t base = sl.start(s);
    uint64_t acc = 0; // wraps mod 2^64, narrowed on store
    bool undef = false;
    for (int64_t j = 0; j < sl.n; ++j) {
      int64_t i = base + scanPos(sl, j, rev) * sl.post;
      uint64_t x = isSigned ? static_cast<uint64_t>(in.getInt(i)) : loadUInt(in.dtype(), in.at(i));
      if (!excl) {
        acc += x;
        undef = undef || in.isUndef(i);
      }
      if (undef)
        out.setUndef(i);
      else
        out.setInt(i, static_cast<int64_t>(acc));
      if (excl) {
        acc += x;
        undef = undef || in.isUndef(i);
      }
    }
  }
}

void cumSumKernel(KernelContext &ctx) {
  const Tensor &in = ctx.in(0);
  Tensor &out = ctx.out(0);
  int64_t axis = *normalizeAxis(ctx.in(1).getInt(0), static_cast<int64_t>(in.shape().size()));
  Slices sl = slicesAlong(in.shape(), axis, false);
  bool excl = attrInt(ctx.node, "exclusive", 0) != 0;
  bool rev = attrInt(ctx.node, "reverse", 0) != 0;
  if (!isFloat(in.dtype()))
    cumSumInt(in, out, sl, excl, rev);
  else if (accumulatesInDouble(in.dtype()))
    cumSumFloat<double>(in, out, sl, excl, rev);
  else
    cumSumFloat<float>(in, out, sl, excl, rev);
}

constexpr OpInfo kSoftmaxOps[] = {
    {"Softmax",
     OpKind::Ordinary,
     1,
     {},
     {},
     false,
     "exp(x - max) / sum along an axis",
     inferSoftmax,
     softmaxKernel<SKind::Softmax>},
    {"LogSoftmax",
     OpKind::Ordinary,
     1,
     {},
     {},
     false,
     "log of Softmax along an axis",
     inferSoftmax,
     softmaxKernel<SKind::LogSoftmax>},
    {"Hardmax",
     OpKind::Ordinary,
     1,
     {},
     {},
     false,
     "one-hot of the first maximum along an axis",
     inferSoftmax,
     softmaxKernel<SKind::Hardmax>},
    {"CumSum",
     OpKind::Ordinary,
     1,
     {},
     {},
     false,
     "running sum along an axis",
     inferCumSum,
     cumSumKernel,
     false,
     0b10},
};

} // namespace

std::span<const OpInfo> softmaxOps() {
  return kSoftmaxOps;
}

} // namespace graphvet::ops::reduce_detail
