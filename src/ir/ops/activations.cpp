// Unary math and activations of the elementwise family: reference kernels.
// Their rows (memory behaviour, type inference) are in elementwise.cpp's
// table; inference has checked every dtype and shape a kernel relies on.
//
// Precision (tensor-semantics.md §3), one rounding to the output dtype:
// - exact ops (Abs, Neg, Sign, Relu, Floor, Ceil, Round, Clip) and the basic
//   ops Sqrt and Reciprocal compute in f32 for f16/bf16/f32, f64 for f64
//   (Prec::Basic);
// - LeakyRelu, PRelu, HardSigmoid and HardSwish follow ONNX's formulas in the
//   same precision (Prec::Basic: f32 for f16/bf16/f32, each operation of the
//   formula rounded as C++ float arithmetic does, f64 for f64), so that
//   HardSwish equals its ONNX function body HardSigmoid + Mul bit for bit;
// - transcendental ops (Exp, Log, Tanh, Erf, Sigmoid, Softplus, Softsign,
//   Elu, Selu, Celu) compute the whole formula in f64 from the input value
//   and round once (Prec::Wide).
// Float attributes (alpha, beta, gamma) hold ONNX's float32 values exactly;
// Basic-precision f32 formulas use them as float, f64 ones as double.
#include "ir/ops/elementwise_util.h"

namespace graphvet::ops::ew {
namespace {

template <class C> constexpr bool kIsFloat = std::is_floating_point_v<C>;

/// A float attribute with ONNX's float32 default.
double attrF(const Node &n, const char *key, float def) {
  return attrFloat(n, key, static_cast<double>(def));
}

/// max(0, min(1, v)) keeping NaN (ONNX HardSigmoid's clamp).
template <class C> C clamp01(C v) {
  if (std::isnan(v))
    return v;
  return v < 0 ? C(0) : (v > 1 ? C(1) : v);
}

/// Round half to even, independent of the current rounding mode.
template <class C> C roundHalfEven(C x) {
  C r = std::round(x); // half away from zero
  if (std::fabs(x - r) == C(0.5))
    r = C(2) * std::round(x / C(2));
  return r;
}

} // namespace

// Abs of INT_MIN wraps to INT_MIN (two's complement); -0 -> +0.
void absKernel(KernelContext &ctx) {
  mapUnaryNumeric(ctx, Prec::Basic, []<class C>(C x) -> C {
    if constexpr (kIsFloat<C>)
      return std::fabs(x);
    else if constexpr (std::is_signed_v<C>)
      return x < 0 ? wrapSub(C(0), x) : x;
    else
      return x;
  });
}

// Neg of INT_MIN wraps to INT_MIN; floats flip the sign (0 -> -0).
void negKernel(KernelContext &ctx) {
  mapUnaryNumeric(ctx, Prec::Basic, []<class C>(C x) -> C {
    if constexpr (kIsFloat<C>)
      return -x;
    else
      return wrapSub(C(0), x);
  });
}

// Sign: -1, 0, 1; ±0 -> +0 (numpy), NaN -> NaN.
void signKernel(KernelContext &ctx) {
  mapUnaryNumeric(ctx, Prec::Basic, []<class C>(C x) -> C {
    if constexpr (kIsFloat<C>)
      if (std::isnan(x))
        return x;
    return x > C(0) ? C(1) : (x < C(0) ? static_cast<C>(-1) : C(0));
  });
}

// Relu: x < 0 -> +0, else x (so -0 stays -0, as numpy's maximum(x, 0), and
// NaN stays NaN).
void reluKernel(KernelContext &ctx) {
  mapUnaryNumeric(ctx, Prec::Basic, []<class C>(C x) -> C { return x < C(0) ? C(0) : x; });
}

// LeakyRelu: x < 0 ? alpha * x : x, in f32 for f16/bf16/f32 (Prec::Basic).
void leakyReluKernel(KernelContext &ctx) {
  const double alpha = attrF(ctx.node, "alpha", 0.01f);
  mapUnaryFloat(ctx, Prec::Basic,
                [alpha]<class C>(C x) -> C { return x < C(0) ? static_cast<C>(alpha) * x : x; });
}

// PRelu: x < 0 ? slope * x : x, slope broadcast unidirectionally to x; in
// f32 for f16/bf16/f32; integer products wrap.
void preluKernel(KernelContext &ctx) {
  mapBinaryNumeric(ctx, Prec::Basic, []<class C>(C x, C slope) -> C {
    if (!(x < C(0)))
      return x;
    if constexpr (kIsFloat<C>)
      return slope * x;
    else
      return wrapMul(slope, x);
  });
}

// Elu: x < 0 ? alpha * (exp(x) - 1) : x, in f64 (expm1).
void eluKernel(KernelContext &ctx) {
  const double alpha = attrF(ctx.node, "alpha", 1.0f);
  mapUnaryFloat(ctx, Prec::Wide, [alpha](double x) { return x < 0 ? alpha * std::expm1(x) : x; });
}

// Selu: x > 0 ? gamma * x : gamma * (alpha * exp(x) - alpha), in f64.
void seluKernel(KernelContext &ctx) {
  const double alpha = attrF(ctx.node, "alpha", 1.67326319217681884765625f);
  const double gamma = attrF(ctx.node, "gamma", 1.05070102214813232421875f);
  mapUnaryFloat(ctx, Prec::Wide, [alpha, gamma](double x) {
    return x > 0 ? gamma * x : gamma * (alpha * std::expm1(x));
  });
}

// Celu: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)), in f64.
void celuKernel(KernelContext &ctx) {
  const double alpha = attrF(ctx.node, "alpha", 1.0f);
  mapUnaryFloat(ctx, Prec::Wide, [alpha](double x) {
    if (x > 0)
      return x;
    double neg = alpha * std::expm1(x / alpha); // NaN for a NaN x (or alpha = x = 0)
    return neg < 0 || std::isnan(neg) ? neg : 0.0;
  });
}

// Sigmoid: 1 / (1 + exp(-x)), in f64.
void sigmoidKernel(KernelContext &ctx) {
  mapUnaryFloat(ctx, Prec::Wide, [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
}

// HardSigmoid: max(0, min(1, alpha * x + beta)), in f32 for f16/bf16/f32.
void hardSigmoidKernel(KernelContext &ctx) {
  const double alpha = attrF(ctx.node, "alpha", 0.2f);
  const double beta = attrF(ctx.node, "beta", 0.5f);
  mapUnaryFloat(ctx, Prec::Basic, [alpha, beta]<class C>(C x) -> C {
    return clamp01(static_cast<C>(alpha) * x + static_cast<C>(beta));
  });
}

// HardSwish: x * max(0, min(1, x / 6 + 0.5)) with alpha = 1/6 rounded to the
// computation type (f32 for f16/bf16/f32, as ONNX's function body
// HardSigmoid(alpha = 1/6 as float32) then Mul computes).
void hardSwishKernel(KernelContext &ctx) {
  mapUnaryFloat(ctx, Prec::Basic, []<class C>(C x) -> C {
    return x * clamp01(static_cast<C>(1.0 / 6.0) * x + C(0.5));
  });
}

// Softplus: log(exp(x) + 1), in f64, in the form that neither overflows nor
// cancels: x + log1p(exp(-x)) for x > 0.
void softplusKernel(KernelContext &ctx) {
  mapUnaryFloat(ctx, Prec::Wide, [](double x) {
    return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  });
}

// Softsign: x / (1 + |x|), in f64. ONNX's formula as written: ±inf gives NaN
// (inf / inf), as ONNX's reference and onnxruntime compute it.
void softsignKernel(KernelContext &ctx) {
  mapUnaryFloat(ctx, Prec::Wide, [](double x) { return x / (1.0 + std::fabs(x)); });
}

void tanhKernel(KernelContext &ctx) {
  mapUnaryFloat(ctx, Prec::Wide, [](double x) { return std::tanh(x); });
}

void expKernel(KernelContext &ctx) {
  mapUnaryFloat(ctx, Prec::Wide, [](double x) { return std::exp(x); });
}

// Log: log(0) = -inf, log(x < 0) = NaN (IEEE).
void logKernel(KernelContext &ctx) {
  mapUnaryFloat(ctx, Prec::Wide, [](double x) { return std::log(x); });
}

// Sqrt: basic op, correctly rounded in f32 (f64 for f64); sqrt(-0) = -0,
// sqrt(x < 0) = NaN.
void sqrtKernel(KernelContext &ctx) {
  mapUnaryFloat(ctx, Prec::Basic, []<class C>(C x) -> C { return std::sqrt(x); });
}

// Reciprocal: basic op 1 / x; 1 / ±0 = ±inf.
void reciprocalKernel(KernelContext &ctx) {
  mapUnaryFloat(ctx, Prec::Basic, []<class C>(C x) -> C { return C(1) / x; });
}

// Erf: in f64. ONNX allows integer inputs: erf of the value, truncated
// toward zero as a cast would (ONNX's reference: erf(x).astype(x.dtype)),
// so -1, 0 or 1.
void erfKernel(KernelContext &ctx) {
  mapUnaryNumeric(ctx, Prec::Wide, []<class C>(C x) -> C {
    double e = std::erf(static_cast<double>(x));
    if constexpr (kIsFloat<C>)
      return e;
    else
      return static_cast<C>(std::trunc(e));
  });
}

// Floor/Ceil/Round keep ±0, ±inf and NaN; Round is half to even.
void floorKernel(KernelContext &ctx) {
  mapUnaryFloat(ctx, Prec::Basic, []<class C>(C x) -> C { return std::floor(x); });
}

void ceilKernel(KernelContext &ctx) {
  mapUnaryFloat(ctx, Prec::Basic, []<class C>(C x) -> C { return std::ceil(x); });
}

void roundKernel(KernelContext &ctx) {
  mapUnaryFloat(ctx, Prec::Basic, []<class C>(C x) -> C { return roundHalfEven(x); });
}

// Clip: min(max(x, lo), hi) with IEEE 754-2019 max/min (a NaN operand or
// bound gives NaN), so lo > hi gives hi, as numpy's clip. The bounds are
// inputs 1 and 2 (opset >= 11, each optional) or, for float inputs, the
// attributes `min` and `max` (opset < 11); an absent bound does not clip.
// An indeterminate bound makes every output element indeterminate.
void clipKernel(KernelContext &ctx) {
  const Tensor &x = ctx.in(0);
  Tensor &out = ctx.out(0);
  const DType t = x.dtype();
  withNumericType(t, Prec::Basic, [&]<class C>(C) {
    bool undefBound = false;
    auto bound = [&](size_t i, const char *attr) -> std::optional<C> {
      if (ctx.has(i)) {
        const Tensor &b = ctx.in(i);
        undefBound = undefBound || b.isUndef(0);
        return loadAs<C>(t, b.at(0));
      }
      if constexpr (kIsFloat<C>)
        if (ctx.node.attr(attr))
          return static_cast<C>(attrFloat(ctx.node, attr, 0));
      return std::nullopt;
    };
    const std::optional<C> lo = bound(1, "min"), hi = bound(2, "max");
    for (int64_t k = 0; k < x.size(); ++k) {
      if (undefBound || x.isUndef(k)) {
        out.setUndef(k);
        continue;
      }
      C v = loadAs<C>(t, x.at(k));
      if (lo)
        v = maxOf(v, *lo);
      if (hi)
        v = minOf(v, *hi);
      put(out, k, v);
    }
  });
}

} // namespace graphvet::ops::ew
