// BatchNormalization (opset 15), InstanceNormalization (opset 6) and
// LayerNormalization (opset 17).
//
// Precision: every step is computed in the accumulation type A, f32 for
// f16/bf16/f32 data and f64 for f64 data (LayerNormalization: the stash
// type, see below), one rounding per operation, in exactly the order written
// here; only the final results are rounded to the output dtype. Sums run in
// the canonical order over the reduced logical indices (batch, then spatial
// positions row-major). Float attributes (epsilon, momentum) are ONNX
// float32 values: A(float(attr)).
//
// BatchNormalization, inference (training_mode = 0), per channel c:
//   y = ((x - mean[c]) / sqrt(var[c] + epsilon)) * scale[c] + B[c]
// training_mode = 1: with m = sum(x) / count and v = sum((x - m)^2) / count
// over (n, spatial...) of channel c (the population variance, as ONNX's
// reference), y = ((x - m) / sqrt(v + epsilon)) * scale[c] + B[c],
//   running_mean = mean[c] * momentum + m * (1 - momentum)
//   running_var  = var[c]  * momentum + v * (1 - momentum)
// in the dtype of mean/var. Outputs 1 and 2 exist only in training mode
// (ONNX: "extra outputs are invalid" otherwise).
//
// InstanceNormalization, per (n, c) over the spatial positions, with m and
// v as above: y = (scale[c] * (x - m)) / sqrt(v + epsilon) + B[c] (ONNX's
// formula, in its order).
//
// LayerNormalization follows ONNX's function body step by step in the stash
// type U (stash_type 1 = f32, 16 = bf16; U's intermediates are computed in
// f32 and rounded to U after each step), per row r of X flattened at
// `axis` (n = the row's size):
//   mean = sum(x) / n;  msq = sum(x * x) / n;  var = msq - mean * mean
//   std = sqrt(var + epsilon);  norm = (x - mean) / std  (then rounded to T)
//   y = norm * Scale + B  (in T: f32 math rounded to T, f64 math for f64)
//   Mean = mean, InvStdDev = 1 / std  (dtype U, shape X.shape[:axis] + 1s)
// Scale and B hold one value per element of a row (or a single value),
// indexed by the flat position in the row, as the function's
// Flatten(Scale, 0) broadcast does.
//
// Indeterminate elements: a statistic is indeterminate when any element it
// sums is; an output element when any value it is computed from is.
#include "ir/ops/nn_common.h"

#include <cmath>
#include <fmt/format.h>

namespace graphvet::ops::nn {
namespace {

constexpr std::initializer_list<DType> kNormTypes = {DType::F16, DType::BF16, DType::F32,
                                                     DType::F64};

/// Offsets (in the physical buffer) of the spatial positions of a plane,
/// in logical row-major order.
std::vector<int64_t> spatialOffsets(const Shape &xs, const std::vector<int64_t> &xst) {
  return positionOffsets(std::vector<int64_t>(xs.begin() + 2, xs.end()),
                         std::vector<int64_t>(xst.begin() + 2, xst.end()));
}

template <class A> A epsilonOf(const Node &n) {
  return static_cast<A>(static_cast<float>(attrFloat(n, "epsilon", 1e-5)));
}

// ---- BatchNormalization

template <class A> void batchNorm(KernelContext &ctx) {
  const Node &node = ctx.node;
  Layout L = layoutOf(node);
  const Tensor &x = ctx.in(0), &scale = ctx.in(1), &bias = ctx.in(2), &mean = ctx.in(3),
               &var = ctx.in(4);
  Tensor &y = ctx.out(0);
  Shape xs = logicalShape(L, x.shape());
  std::vector<int64_t> xst = logicalStrides(L, x.shape());
  std::vector<int64_t> soff = spatialOffsets(xs, xst);
  int64_t N = xs[0], C = xs[1], P = static_cast<int64_t>(soff.size());
  A eps = epsilonOf<A>(node);
  bool training = attrInt(node, "training_mode", 0) == 1;
  bool track = x.anyUndef();
  A count = static_cast<A>(N * P);
  for (int64_t c = 0; c < C; ++c) {
    A m = static_cast<A>(mean.getDouble(c)), v = static_cast<A>(var.getDouble(c));
    A s = static_cast<A>(scale.getDouble(c)), b = static_cast<A>(bias.getDouble(c));
    bool chanUndef = scale.isUndef(c) || bias.isUndef(c);
    bool statUndef = mean.isUndef(c) || var.isUndef(c);
    A bm = A(0), bv = A(0);
    if (training) {
      bool xUndef = false;
      A sum = A(-0.0);
      for (int64_t n = 0; n < N; ++n)
        for (int64_t p = 0; p < P; ++p) {
          int64_t i = n * xst[0] + c * xst[1] + soff[static_cast<size_t>(p)];
          sum = sum + static_cast<A>(x.getDouble(i));
          xUndef = xUndef || (track && x.isUndef(i));
        }
      bm = sum / count;
      A sq = A(-0.0);
      for (int64_t n = 0; n < N; ++n)
        for (int64_t p = 0; p < P; ++p) {
          int64_t i = n * xst[0] + c * xst[1] + soff[static_cast<size_t>(p)];
          A d = static_cast<A>(x.getDouble(i)) - bm;
          sq = sq + d * d;
        }
      bv = sq / count;
      A mom = static_cast<A>(static_cast<float>(attrFloat(node, "momentum", 0.9)));
      A rest = A(1) - mom;
      A rm = m * mom + bm * rest;
      A rv = v * mom + bv * rest;
      ctx.out(1).setDouble(c, static_cast<double>(rm));
      ctx.out(2).setDouble(c, static_cast<double>(rv));
      // With no element in the channel the batch statistics are means of
      // nothing: indeterminate.
      xUndef = xUndef || N * P == 0;
      if (xUndef || mean.isUndef(c))
        ctx.out(1).setUndef(c);
      if (xUndef || var.isUndef(c))
        ctx.out(2).setUndef(c);
      // y uses the batch statistics only.
      m = bm;
      v = bv;
      statUndef = xUndef;
    }
    A denom = std::sqrt(v + eps);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t p = 0; p < P; ++p) {
        int64_t i = n * xst[0] + c * xst[1] + soff[static_cast<size_t>(p)];
        A t = (static_cast<A>(x.getDouble(i)) - m) / denom;
        A r = t * s + b;
        y.setDouble(i, static_cast<double>(r));
        if (chanUndef || statUndef || (track && x.isUndef(i)))
          y.setUndef(i);
      }
  }
}

// ---- InstanceNormalization

template <class A> void instanceNorm(KernelContext &ctx) {
  const Node &node = ctx.node;
  Layout L = layoutOf(node);
  const Tensor &x = ctx.in(0), &scale = ctx.in(1), &bias = ctx.in(2);
  Tensor &y = ctx.out(0);
  if (y.size() == 0)
    return;
  Shape xs = logicalShape(L, x.shape());
  std::vector<int64_t> xst = logicalStrides(L, x.shape());
  std::vector<int64_t> soff = spatialOffsets(xs, xst);
  int64_t N = xs[0], C = xs[1], P = static_cast<int64_t>(soff.size());
  A eps = epsilonOf<A>(node);
  A count = static_cast<A>(P);
  bool track = x.anyUndef();
  std::vector<A> xv(static_cast<size_t>(P));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      int64_t base = n * xst[0] + c * xst[1];
      bool undef = scale.isUndef(c) || bias.isUndef(c);
      A sum = A(-0.0);
      for (int64_t p = 0; p < P; ++p) {
        int64_t i = base + soff[static_cast<size_t>(p)];
        xv[static_cast<size_t>(p)] = static_cast<A>(x.getDouble(i));
        sum = sum + xv[static_cast<size_t>(p)];
        undef = undef || (track && x.isUndef(i));
      }
      A m = sum / count;
      A sq = A(-0.0);
      for (int64_t p = 0; p < P; ++p) {
        A d = xv[static_cast<size_t>(p)] - m;
        sq = sq + d * d;
      }
      A v = sq / count;
      A s = static_cast<A>(scale.getDouble(c)), b = static_cast<A>(bias.getDouble(c));
      A denom = std::sqrt(v + eps);
      for (int64_t p = 0; p < P; ++p) {
        int64_t i = base + soff[static_cast<size_t>(p)];
        A r = s * (xv[static_cast<size_t>(p)] - m) / denom + b;
        y.setDouble(i, static_cast<double>(r));
        if (undef)
          y.setUndef(i);
      }
    }
}

// ---- LayerNormalization

std::optional<DType> stashType(int64_t v) {
  if (v == 1)
    return DType::F32;
  if (v == 16)
    return DType::BF16;
  return std::nullopt;
}

/// Rounds a step's f32 result to the stash type U.
float toStash(DType u, float v) {
  return u == DType::BF16 ? static_cast<float>(bf16ToDouble(bf16FromDouble(v))) : v;
}

/// Result of an element-wise step in the data type T (rounded once).
template <class A> A toData(DType t, A v) {
  if (t == DType::F16)
    return static_cast<A>(f16ToDouble(f16FromDouble(static_cast<double>(v))));
  if (t == DType::BF16)
    return static_cast<A>(bf16ToDouble(bf16FromDouble(static_cast<double>(v))));
  return v;
}

/// The last steps (norm * Scale + B) in T's arithmetic: f64 for f64, else
/// f32 rounded to T after each step.
template <class A>
void scaleAndShift(KernelContext &ctx, int64_t rows, int64_t cols, const std::vector<float> &norm,
                   const std::vector<uint8_t> &rowUndef) {
  const Tensor &x = ctx.in(0), &scale = ctx.in(1);
  const Tensor *bias = ctx.has(2) ? &ctx.in(2) : nullptr;
  Tensor &y = ctx.out(0);
  DType t = x.dtype();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j) {
      int64_t i = r * cols + j;
      int64_t si = scale.size() == 1 ? 0 : j;
      A v = toData<A>(t, static_cast<A>(norm[static_cast<size_t>(i)]));
      v = toData<A>(t, v * static_cast<A>(scale.getDouble(si)));
      bool undef = rowUndef[static_cast<size_t>(r)] || scale.isUndef(si);
      if (bias) {
        int64_t bi = bias->size() == 1 ? 0 : j;
        v = toData<A>(t, v + static_cast<A>(bias->getDouble(bi)));
        undef = undef || bias->isUndef(bi);
      }
      y.setDouble(i, static_cast<double>(v));
      if (undef)
        y.setUndef(i);
    }
}

} // namespace

bool inferBatchNormalization(InferContext &ctx) {
  if (ctx.numInputs() != 5)
    return ctx.fail(fmt::format(
        "BatchNormalization takes 5 inputs (X, scale, B, input_mean, input_var), got {}",
        ctx.numInputs()));
  static const char *names[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 0; i < 5; ++i) {
    if (!ctx.has(i))
      return ctx.fail(fmt::format("input {} ({}) of BatchNormalization is required", i, names[i]));
    if (!checkDType(ctx, i, names[i], ctx.in(i).dtype, kNormTypes))
      return false;
  }
  const TensorType &x = ctx.in(0);
  if (ctx.in(2).dtype != ctx.in(1).dtype)
    return ctx.fail(fmt::format("input 2 (B) must have scale's dtype {}, got {}",
                                dtypeName(ctx.in(1).dtype), dtypeName(ctx.in(2).dtype)));
  if (ctx.in(4).dtype != ctx.in(3).dtype)
    return ctx.fail(fmt::format("input 4 (input_var) must have input_mean's dtype {}, got {}",
                                dtypeName(ctx.in(3).dtype), dtypeName(ctx.in(4).dtype)));
  if (x.rank() < 2)
    return ctx.fail(fmt::format("input 0 (X) must have rank >= 2 (N, C, ...), got {}", x.str()));
  Layout layout;
  if (!readLayout(ctx, x.rank(), layout))
    return false;
  int64_t C = logicalShape(layout, x.shape)[1];
  for (size_t i = 1; i < 5; ++i)
    if (ctx.in(i).shape != Shape{C})
      return ctx.fail(fmt::format("input {} ({}) must have shape [{}] (one value per channel), "
                                  "got {}",
                                  i, names[i], C, ctx.in(i).str()));
  int64_t training = attrInt(ctx.node, "training_mode", 0);
  if (training != 0 && training != 1)
    return ctx.fail(fmt::format("training_mode must be 0 or 1, got {}", training));
  ctx.outputs.push_back(x);
  if (training == 1) {
    ctx.outputs.push_back(ctx.in(3));
    ctx.outputs.push_back(ctx.in(4));
  } else if (ctx.node.numOutputs > 1) {
    return ctx.fail("outputs 1 and 2 (running_mean, running_var) of BatchNormalization exist "
                    "only with training_mode = 1");
  }
  return true;
}

void kernelBatchNormalization(KernelContext &ctx) {
  if (ctx.in(0).dtype() == DType::F64)
    batchNorm<double>(ctx);
  else
    batchNorm<float>(ctx);
}

bool inferInstanceNormalization(InferContext &ctx) {
  if (ctx.numInputs() != 3)
    return ctx.fail(fmt::format("InstanceNormalization takes 3 inputs (input, scale, B), got {}",
                                ctx.numInputs()));
  static const char *names[] = {"input", "scale", "B"};
  for (size_t i = 0; i < 3; ++i)
    if (!ctx.has(i))
      return ctx.fail(
          fmt::format("input {} ({}) of InstanceNormalization is required", i, names[i]));
  const TensorType &x = ctx.in(0);
  if (!checkDType(ctx, 0, "input", x.dtype, kConvTypes))
    return false;
  if (x.rank() < 3)
    return ctx.fail(
        fmt::format("input 0 (input) must have rank >= 3 (N, C, spatial...), got {}", x.str()));
  Layout layout;
  if (!readLayout(ctx, x.rank(), layout))
    return false;
  int64_t C = logicalShape(layout, x.shape)[1];
  for (size_t i = 1; i < 3; ++i) {
    if (ctx.in(i).dtype != x.dtype)
      return ctx.fail(fmt::format("input {} ({}) must have the input's dtype {}, got {}", i,
                                  names[i], dtypeName(x.dtype), dtypeName(ctx.in(i).dtype)));
    if (ctx.in(i).shape != Shape{C})
      return ctx.fail(fmt::format("input {} ({}) must have shape [{}] (one value per channel), "
                                  "got {}",
                                  i, names[i], C, ctx.in(i).str()));
  }
  ctx.outputs.push_back(x);
  return true;
}

void kernelInstanceNormalization(KernelContext &ctx) {
  if (ctx.in(0).dtype() == DType::F64)
    instanceNorm<double>(ctx);
  else
    instanceNorm<float>(ctx);
}

bool inferLayerNormalization(InferContext &ctx) {
  size_t ni = ctx.numInputs();
  if (ni < 2 || ni > 3)
    return ctx.fail(
        fmt::format("LayerNormalization takes 2 or 3 inputs (X, Scale, optional B), got {}", ni));
  if (!ctx.has(0) || !ctx.has(1))
    return ctx.fail("inputs 0 (X) and 1 (Scale) of LayerNormalization are required");
  const TensorType &x = ctx.in(0);
  if (!checkDType(ctx, 0, "X", x.dtype, kNormTypes))
    return false;
  if (x.rank() < 1)
    return ctx.fail("input 0 (X) of LayerNormalization must have rank >= 1");
  auto axis = normalizeAxis(attrInt(ctx.node, "axis", -1), x.rank());
  if (!axis)
    return ctx.fail(fmt::format("axis {} is out of range for rank {}",
                                attrInt(ctx.node, "axis", -1), x.rank()));
  auto u = stashType(attrInt(ctx.node, "stash_type", 1));
  if (!u)
    return ctx.fail(fmt::format("stash_type must be 1 (float) or 16 (bfloat16), got {}",
                                attrInt(ctx.node, "stash_type", 1)));
  int64_t cols = 1;
  for (int64_t a = *axis; a < x.rank(); ++a)
    cols *= x.shape[static_cast<size_t>(a)];
  static const char *names[] = {"X", "Scale", "B"};
  for (size_t i = 1; i < ni; ++i) {
    if (!ctx.has(i))
      continue;
    const TensorType &t = ctx.in(i);
    if (t.dtype != x.dtype)
      return ctx.fail(fmt::format("input {} ({}) must have X's dtype {}, got {}", i, names[i],
                                  dtypeName(x.dtype), dtypeName(t.dtype)));
    if (t.numElements() != cols && t.numElements() != 1)
      return ctx.fail(fmt::format("input {} ({}) must hold one value per normalized element "
                                  "({}, the size of {} from axis {}), got {}",
                                  i, names[i], cols, x.str(), *axis, t.str()));
  }
  Shape reduced = x.shape;
  for (int64_t a = *axis; a < x.rank(); ++a)
    reduced[static_cast<size_t>(a)] = 1;
  ctx.outputs.push_back(x);
  ctx.outputs.push_back({*u, reduced});
  ctx.outputs.push_back({*u, reduced});
  return true;
}

void kernelLayerNormalization(KernelContext &ctx) {
  const Node &node = ctx.node;
  const Tensor &x = ctx.in(0);
  int64_t axis = *normalizeAxis(attrInt(node, "axis", -1), x.type().rank());
  DType u = *stashType(attrInt(node, "stash_type", 1));
  int64_t cols = 1;
  for (int64_t a = axis; a < x.type().rank(); ++a)
    cols *= x.shape()[static_cast<size_t>(a)];
  int64_t rows = cols == 0 ? 0 : x.size() / cols;
  if (cols == 0) // no element to normalize: the statistics are means of nothing
    for (int64_t r = 0; r < ctx.out(1).size(); ++r) {
      ctx.out(1).setUndef(r);
      ctx.out(2).setUndef(r);
    }
  float eps = toStash(u, static_cast<float>(attrFloat(node, "epsilon", 1e-5)));
  float n = static_cast<float>(cols); // ReduceMean's count
  bool track = x.anyUndef();
  std::vector<float> norm(static_cast<size_t>(x.size()));
  std::vector<uint8_t> rowUndef(static_cast<size_t>(rows), 0);
  std::vector<float> xu(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    bool undef = false;
    float sum = -0.0f, sumSq = -0.0f;
    for (int64_t j = 0; j < cols; ++j) {
      int64_t i = r * cols + j;
      float v = toStash(u, static_cast<float>(x.getDouble(i)));
      xu[static_cast<size_t>(j)] = v;
      undef = undef || (track && x.isUndef(i));
    }
    for (int64_t j = 0; j < cols; ++j)
      sum = sum + xu[static_cast<size_t>(j)];
    for (int64_t j = 0; j < cols; ++j)
      sumSq = sumSq + toStash(u, xu[static_cast<size_t>(j)] * xu[static_cast<size_t>(j)]);
    float mean = toStash(u, sum / n); // ReduceMean: f32 sum and division, one rounding to U
    float msq = toStash(u, sumSq / n);
    float var = toStash(u, msq - toStash(u, mean * mean));
    float sd = toStash(u, std::sqrt(toStash(u, var + eps)));
    for (int64_t j = 0; j < cols; ++j)
      norm[static_cast<size_t>(r * cols + j)] =
          toStash(u, toStash(u, xu[static_cast<size_t>(j)] - mean) / sd);
    ctx.out(1).setDouble(r, mean);
    ctx.out(2).setDouble(r, toStash(u, 1.0f / sd));
    rowUndef[static_cast<size_t>(r)] = undef;
    if (undef) {
      ctx.out(1).setUndef(r);
      ctx.out(2).setUndef(r);
    }
  }
  if (x.dtype() == DType::F64)
    scaleAndShift<double>(ctx, rows, cols, norm, rowUndef);
  else
    scaleAndShift<float>(ctx, rows, cols, norm, rowUndef);
}

} // namespace graphvet::ops::nn
