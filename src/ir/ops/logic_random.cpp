// Dropout, RandomUniformLike, RandomNormalLike and Bernoulli: type inference
// and kernels.
//
// The random ops are nondeterministic (tensor-semantics.md §6): they draw
// from the RandomStream the interpreter keys by the run's seed, the node's
// qualified name and its execution count (KernelContext::random), never from
// the ONNX `seed` attribute, which is ignored. Without a stream (constant
// folding, a kernel evaluated outside a run) every drawn element is
// indeterminate. Draws are made one per output element in row-major order
// (Box-Muller takes two uniforms per normal draw).
#include "ir/ops/families.h"
#include "ir/ops/logic_parts.h"

#include <cmath>

namespace graphvet::ops {
namespace {

using logic_detail::checkDType;
using logic_detail::checkInputCount;
using logic_detail::checkOutputCount;

void setAllUndef(Tensor &t) {
  for (int64_t i = 0; i < t.size(); ++i)
    t.setUndef(i);
}

// ---------------------------------------------------------------------------
// Dropout.
//
// Opset 12 and later: inputs (data, ratio?, training_mode?), attribute
// `seed` (ignored). Opsets 7-11: input data and attribute `ratio`; those
// opsets have no training mode, so the op is the identity. With
// training_mode false or absent (or a ratio of exactly 0) output 0 is the
// input and the mask is all true (§6). With training_mode true each element
// is kept when a uniform draw u in [0, 1) has u >= ratio (ONNX's reference
// `np.random.uniform(0, 1) >= ratio`), and output = (data * mask) * scale
// with scale = 1 / (1 - ratio), as ONNX's formula `scale * data * mask` and
// its reference compute it: in f32 for f16/bf16/f32 data (rounded once to
// the data dtype), in f64 for f64 data. A dropped element is therefore
// data * 0 = ±0 (NaN for a NaN or infinite element), like the reference.
// Undefined by ONNX, so indeterminate (both outputs, whole tensors): a
// ratio outside [0, 1) or NaN in training mode, an indeterminate ratio in
// training mode, an indeterminate training_mode.
// The mask output is bool (opset 10 and later; opset 7's float mask is not
// modelled).

bool inferDropout(InferContext &ctx) {
  if (!checkInputCount(ctx, 1, 3) || !checkOutputCount(ctx, 2) ||
      !checkDType(ctx, "input 0 (data)", ctx.in(0).dtype,
                  {DType::F16, DType::BF16, DType::F32, DType::F64}))
    return false;
  if (ctx.has(1)) {
    if (!checkDType(ctx, "input 1 (ratio)", ctx.in(1).dtype, {DType::F16, DType::F32, DType::F64}))
      return false;
    if (ctx.in(1).rank() != 0)
      return ctx.fail(fmt::format("input 1 (ratio) of Dropout must be a scalar, got shape {}",
                                  shapeStr(ctx.in(1).shape)));
  }
  if (ctx.has(2)) {
    if (!checkDType(ctx, "input 2 (training_mode)", ctx.in(2).dtype, {DType::Bool}))
      return false;
    if (ctx.in(2).rank() != 0)
      return ctx.fail(
          fmt::format("input 2 (training_mode) of Dropout must be a scalar, got shape {}",
                      shapeStr(ctx.in(2).shape)));
  }
  ctx.outputs = {ctx.in(0)};
  if (ctx.node.numOutputs >= 2)
    ctx.outputs.push_back(TensorType{DType::Bool, ctx.in(0).shape});
  return true;
}

template <typename F> void dropoutTraining(KernelContext &ctx, double ratio) {
  const Tensor &x = ctx.in(0);
  Tensor &y = ctx.out(0);
  Tensor *mask = ctx.outputs.size() > 1 ? &ctx.out(1) : nullptr;
  F scale = F(1) / (F(1) - static_cast<F>(ratio));
  for (int64_t i = 0; i < y.size(); ++i) {
    bool keep = ctx.random->uniform() >= ratio;
    if (mask)
      mask->setInt(i, keep ? 1 : 0);
    if (x.isUndef(i)) {
      y.setUndef(i);
      continue;
    }
    F v = static_cast<F>(x.getDouble(i));
    F r = (v * (keep ? F(1) : F(0))) * scale;
    y.setDouble(i, static_cast<double>(r));
  }
}

void dropoutKernel(KernelContext &ctx) {
  const Tensor &x = ctx.in(0);
  Tensor &y = ctx.out(0);
  Tensor *mask = ctx.outputs.size() > 1 ? &ctx.out(1) : nullptr;
  bool training = false, undefined = false;
  double ratio = attrFloat(ctx.node, "ratio", 0.5);
  if (ctx.has(2)) {
    if (ctx.in(2).isUndef(0))
      undefined = true;
    else
      training = ctx.in(2).getBool(0);
  }
  if (training && ctx.has(1)) {
    if (ctx.in(1).isUndef(0))
      undefined = true;
    else
      ratio = ctx.in(1).getDouble(0);
  }
  if (training && !undefined) {
    if (!(ratio >= 0 && ratio < 1)) // ONNX: ratio in [0, 1)
      undefined = true;
    else if (ratio == 0) // keeps every element: the identity
      training = false;
    else if (!ctx.random) // a draw outside an interpreter run
      undefined = true;
  }
  if (undefined) {
    setAllUndef(y);
    if (mask)
      setAllUndef(*mask);
    return;
  }
  if (!training) {
    for (int64_t i = 0; i < y.size(); ++i) {
      y.copyElement(i, x, i);
      if (mask)
        mask->setInt(i, 1);
    }
    return;
  }
  if (x.dtype() == DType::F64)
    dropoutTraining<double>(ctx, ratio);
  else
    dropoutTraining<float>(ctx, ratio);
}

// ---------------------------------------------------------------------------
// RandomUniformLike, RandomNormalLike, Bernoulli.

/// The output dtype of a *Like op or Bernoulli: attribute `dtype` when set,
/// else the input's dtype.
bool outputDType(InferContext &ctx, DType &out) {
  if (ctx.node.attr("dtype")) {
    auto d = attrDType(ctx.node, "dtype");
    if (!d)
      return ctx.fail(fmt::format("attribute 'dtype' of {} must name a dtype", ctx.node.type));
    out = *d;
  } else {
    out = ctx.in(0).dtype;
  }
  return true;
}

/// RandomUniformLike, RandomNormalLike: any input; output of the input's
/// shape, dtype f16, f32 or f64 (ONNX's T2 up to opset 17).
bool inferRandomLike(InferContext &ctx) {
  DType d;
  if (!checkInputCount(ctx, 1, 1) || !checkOutputCount(ctx, 1) || !outputDType(ctx, d) ||
      !checkDType(ctx, "the output dtype", d, {DType::F16, DType::F32, DType::F64}))
    return false;
  ctx.outputs = {TensorType{d, ctx.in(0).shape}};
  return true;
}

/// low + (high - low) * u with u uniform in [0, 1), in f64, rounded once to
/// the output dtype (that rounding may give exactly `high`).
void randomUniformLikeKernel(KernelContext &ctx) {
  Tensor &out = ctx.out(0);
  if (!ctx.random)
    return setAllUndef(out);
  double low = attrFloat(ctx.node, "low", 0.0), high = attrFloat(ctx.node, "high", 1.0);
  for (int64_t i = 0; i < out.size(); ++i)
    out.setDouble(i, low + (high - low) * ctx.random->uniform());
}

/// mean + scale * n with n standard normal, in f64, rounded once.
void randomNormalLikeKernel(KernelContext &ctx) {
  Tensor &out = ctx.out(0);
  if (!ctx.random)
    return setAllUndef(out);
  double mean = attrFloat(ctx.node, "mean", 0.0), scale = attrFloat(ctx.node, "scale", 1.0);
  for (int64_t i = 0; i < out.size(); ++i)
    out.setDouble(i, mean + scale * ctx.random->normal());
}

/// Bernoulli-15: probabilities f16, f32 or f64; output any numeric dtype or
/// bool (attribute `dtype`, default the input's).
bool inferBernoulli(InferContext &ctx) {
  DType d;
  if (!checkInputCount(ctx, 1, 1) || !checkOutputCount(ctx, 1) ||
      !checkDType(ctx, "input 0", ctx.in(0).dtype, {DType::F16, DType::F32, DType::F64}) ||
      !outputDType(ctx, d))
    return false;
  ctx.outputs = {TensorType{d, ctx.in(0).shape}};
  return true;
}

/// 1 where a uniform draw u in [0, 1) has u < p, else 0 (ONNX's function
/// body: Greater(p, RandomUniformLike(p))). A probability outside [0, 1] or
/// NaN is undefined by ONNX: indeterminate, like an indeterminate p. One
/// draw per element whatever its p, so the stream's use does not depend on
/// the values.
void bernoulliKernel(KernelContext &ctx) {
  const Tensor &p = ctx.in(0);
  Tensor &out = ctx.out(0);
  if (!ctx.random)
    return setAllUndef(out);
  bool isFloatOut = isFloat(out.dtype());
  for (int64_t i = 0; i < out.size(); ++i) {
    double u = ctx.random->uniform();
    double prob = p.getDouble(i);
    if (p.isUndef(i) || !(prob >= 0 && prob <= 1)) {
      out.setUndef(i);
      continue;
    }
    int bit = u < prob ? 1 : 0;
    if (isFloatOut)
      out.setDouble(i, bit);
    else
      out.setInt(i, bit);
  }
}

constexpr std::span<const PortAlias> kNone{};

constexpr OpInfo kRandomOps[] = {
    {"Dropout", OpKind::Ordinary, 1, kNone, kNone, false,
     "identity (mask all true) unless training_mode: random dropout scaled by 1/(1-ratio)",
     inferDropout, dropoutKernel, true},
    {"RandomUniformLike", OpKind::Ordinary, 1, kNone, kNone, false,
     "uniform draws in [low, high) of input 0's shape", inferRandomLike, randomUniformLikeKernel,
     true},
    {"RandomNormalLike", OpKind::Ordinary, 1, kNone, kNone, false,
     "normal draws (mean, scale) of input 0's shape", inferRandomLike, randomNormalLikeKernel,
     true},
    {"Bernoulli", OpKind::Ordinary, 1, kNone, kNone, false,
     "1 with probability input 0, else 0 (random draws)", inferBernoulli, bernoulliKernel, true},
};

} // namespace

std::span<const OpInfo> logicRandomOps() {
  return kRandomOps;
}

} // namespace graphvet::ops
