// Elementwise ops: arithmetic, math and activations. This file holds the
// family's one table (every row: memory behaviour, type inference, kernel),
// the type inference of every op and the kernels of the binary and variadic
// arithmetic; activations.cpp has the unary kernels and Clip.
//
// Semantics (tensor-semantics.md §3, ONNX opset <= 17 where it is silent):
// - Add, Sub, Mul, Div: numpy broadcasting; floats compute in f32 for
//   f16/bf16/f32 (f64 for f64) and round once; integers wrap, division
//   truncates toward zero, x / 0 and INT_MIN / -1 are indeterminate.
// - Pow: base and exponent may have different dtypes (ONNX T, T1); the output
//   has the base's dtype. Float base: pow in f64, rounded once. Integer base,
//   float exponent: pow in f64, then converted as a cast would (truncated;
//   NaN, inf, out of range -> indeterminate). Integer base, integer exponent:
//   exact, wrapping; a negative exponent gives the truncated true value
//   (1, ±1 for base -1, 0 for |base| > 1), indeterminate for base 0 (ONNX
//   leaves integer powers with negative exponents undefined; 0^-n is a
//   division by zero).
// - Mod: fmod = 0 (integers only): remainder with the divisor's sign (Python);
//   fmod = 1: C fmod, the dividend's sign. x mod 0 is indeterminate (NaN for
//   floats); INT_MIN mod -1 is 0 (the contract makes only INT_MIN / -1
//   indeterminate; every x mod -1 is 0).
// - Max, Min, Sum, Mean: variadic (>= 1 input) with numpy broadcasting over
//   all inputs; Max/Min follow IEEE 754-2019 maximum/minimum (NaN wins,
//   +0 > -0); Sum/Mean add in input order in f32 for f16/bf16/f32 (f64 for
//   f64), Mean divides the sum by the input count, then one rounding.
#include "ir/ops/elementwise_util.h"
#include "ir/ops/families.h"

#include <fmt/format.h>

#include <string>

namespace graphvet::ops {
namespace {

using namespace ew;

// ---- Dtype sets (ONNX type constraints of opset <= 17, on graphvet dtypes) --

using DTypeSet = uint32_t;
constexpr DTypeSet bit(DType t) {
  return 1u << static_cast<unsigned>(t);
}
constexpr DTypeSet kFloat3 = bit(DType::F16) | bit(DType::F32) | bit(DType::F64);
constexpr DTypeSet kFloat = kFloat3 | bit(DType::BF16);
constexpr DTypeSet kSigned = bit(DType::I8) | bit(DType::I16) | bit(DType::I32) | bit(DType::I64);
constexpr DTypeSet kUnsigned = bit(DType::U8) | bit(DType::U16) | bit(DType::U32) | bit(DType::U64);
constexpr DTypeSet kNumeric = kFloat | kSigned | kUnsigned;
constexpr DTypeSet kSignedNumeric = kFloat | kSigned;
constexpr DTypeSet kF32 = bit(DType::F32);
constexpr DTypeSet kPowBase = kFloat | bit(DType::I32) | bit(DType::I64);
constexpr DTypeSet kPRelu =
    kFloat | bit(DType::I32) | bit(DType::I64) | bit(DType::U32) | bit(DType::U64);

std::string dtypeList(DTypeSet s) {
  std::string out;
  for (int i = 0; i < kNumDTypes; ++i)
    if (s & (1u << i))
      out += (out.empty() ? "" : ", ") + std::string(dtypeName(static_cast<DType>(i)));
  return out;
}

// ---- Inference helpers ------------------------------------------------------

/// Between lo and hi inputs, the first lo of them connected.
bool checkArity(InferContext &ctx, size_t lo, size_t hi) {
  const std::string &op = ctx.node.type;
  size_t n = ctx.numInputs();
  if (n < lo || n > hi) {
    if (lo == hi)
      return ctx.fail(fmt::format("{} takes {} input{}, got {}", op, lo, lo == 1 ? "" : "s", n));
    if (hi == SIZE_MAX)
      return ctx.fail(
          fmt::format("{} takes at least {} input{}, got {}", op, lo, lo == 1 ? "" : "s", n));
    return ctx.fail(fmt::format("{} takes {} to {} inputs, got {}", op, lo, hi, n));
  }
  for (size_t i = 0; i < lo; ++i)
    if (!ctx.has(i))
      return ctx.fail(fmt::format("input {} of {} is not connected", i, op));
  return true;
}

bool checkDType(InferContext &ctx, size_t i, DTypeSet allowed) {
  DType t = ctx.in(i).dtype;
  if (allowed & bit(t))
    return true;
  return ctx.fail(fmt::format("{} does not accept {} (input {}); allowed: {}", ctx.node.type,
                              dtypeName(t), i, dtypeList(allowed)));
}

bool checkSameDType(InferContext &ctx, size_t i, size_t j) {
  if (ctx.in(i).dtype == ctx.in(j).dtype)
    return true;
  return ctx.fail(fmt::format("inputs {} and {} of {} have different dtypes ({} and {})", j, i,
                              ctx.node.type, dtypeName(ctx.in(j).dtype),
                              dtypeName(ctx.in(i).dtype)));
}

/// The numpy broadcast of the shapes of every connected input.
bool broadcastInputs(InferContext &ctx, Shape &out) {
  bool first = true;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    if (!ctx.has(i))
      continue;
    const Shape &s = ctx.in(i).shape;
    if (first) {
      out = s;
      first = false;
      continue;
    }
    auto b = broadcastShapes(out, s);
    if (!b)
      return ctx.fail(fmt::format("input shapes of {} do not broadcast: {} and {} (input {})",
                                  ctx.node.type, shapeStr(out), shapeStr(s), i));
    out = std::move(*b);
  }
  return true;
}

/// Every input connected, of one dtype in `allowed`, broadcasting together;
/// the output has that dtype and the broadcast shape.
bool inferSameTypeBroadcast(InferContext &ctx, DTypeSet allowed) {
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    if (!ctx.has(i))
      return ctx.fail(fmt::format("input {} of {} is not connected", i, ctx.node.type));
    if (!checkDType(ctx, i, allowed) || !checkSameDType(ctx, i, 0))
      return false;
  }
  Shape shape;
  if (!broadcastInputs(ctx, shape))
    return false;
  ctx.outputs.push_back(TensorType{ctx.in(0).dtype, std::move(shape)});
  return true;
}

template <DTypeSet S> bool inferUnary(InferContext &ctx) {
  return checkArity(ctx, 1, 1) && inferSameTypeBroadcast(ctx, S);
}

template <DTypeSet S> bool inferBinary(InferContext &ctx) {
  return checkArity(ctx, 2, 2) && inferSameTypeBroadcast(ctx, S);
}

template <DTypeSet S> bool inferVariadic(InferContext &ctx) {
  return checkArity(ctx, 1, SIZE_MAX) && inferSameTypeBroadcast(ctx, S);
}

bool inferPow(InferContext &ctx) {
  if (!checkArity(ctx, 2, 2) || !checkDType(ctx, 0, kPowBase) || !checkDType(ctx, 1, kNumeric))
    return false;
  Shape shape;
  if (!broadcastInputs(ctx, shape))
    return false;
  ctx.outputs.push_back(TensorType{ctx.in(0).dtype, std::move(shape)});
  return true;
}

bool inferMod(InferContext &ctx) {
  int64_t fmod = attrInt(ctx.node, "fmod", 0);
  if (fmod != 0 && fmod != 1)
    return ctx.fail(fmt::format("fmod of Mod must be 0 or 1, got {}", fmod));
  if (!inferBinary<kNumeric>(ctx))
    return false;
  if (fmod == 0 && isFloat(ctx.in(0).dtype))
    return ctx.fail(fmt::format("Mod of {} needs fmod = 1 (fmod = 0 is for integers)",
                                dtypeName(ctx.in(0).dtype)));
  return true;
}

// PRelu: slope broadcasts unidirectionally to X; the output is X's type.
bool inferPRelu(InferContext &ctx) {
  if (!checkArity(ctx, 2, 2) || !checkDType(ctx, 0, kPRelu) || !checkSameDType(ctx, 1, 0))
    return false;
  const Shape &x = ctx.in(0).shape, &slope = ctx.in(1).shape;
  auto b = broadcastShapes(x, slope);
  if (!b || *b != x)
    return ctx.fail(fmt::format("slope shape {} of PRelu does not broadcast to the input shape {}",
                                shapeStr(slope), shapeStr(x)));
  ctx.outputs.push_back(ctx.in(0));
  return true;
}

// Clip: bounds as optional inputs 1, 2 (opset >= 11: one element each, X's
// dtype) or as float attributes min, max (opset < 11, float inputs only).
bool inferClip(InferContext &ctx) {
  if (!checkArity(ctx, 1, 3) || !checkDType(ctx, 0, kNumeric))
    return false;
  bool inputBounds = false;
  for (size_t i = 1; i < 3; ++i) {
    if (!ctx.has(i))
      continue;
    inputBounds = true;
    if (!checkSameDType(ctx, i, 0))
      return false;
    if (ctx.in(i).numElements() != 1)
      return ctx.fail(fmt::format("input {} ({}) of Clip must hold one element, got shape {}", i,
                                  i == 1 ? "min" : "max", shapeStr(ctx.in(i).shape)));
  }
  bool attrBounds = ctx.node.attr("min") || ctx.node.attr("max");
  if (attrBounds && inputBounds)
    return ctx.fail("Clip takes its bounds either as attributes min/max (opset < 11) or as "
                    "inputs 1 and 2, not both");
  if (attrBounds && !isFloat(ctx.in(0).dtype))
    return ctx.fail(fmt::format("Clip's min/max attributes (opset < 11) apply to float inputs "
                                "only, not {}; give the bounds as inputs 1 and 2",
                                dtypeName(ctx.in(0).dtype)));
  ctx.outputs.push_back(ctx.in(0));
  return true;
}

// ---- Binary arithmetic kernels -----------------------------------------------

template <class C> constexpr bool kIsFloat = std::is_floating_point_v<C>;

void addKernel(KernelContext &ctx) {
  mapBinaryNumeric(ctx, Prec::Basic, []<class C>(C a, C b) -> C {
    if constexpr (kIsFloat<C>)
      return a + b;
    else
      return wrapAdd(a, b);
  });
}

void subKernel(KernelContext &ctx) {
  mapBinaryNumeric(ctx, Prec::Basic, []<class C>(C a, C b) -> C {
    if constexpr (kIsFloat<C>)
      return a - b;
    else
      return wrapSub(a, b);
  });
}

void mulKernel(KernelContext &ctx) {
  mapBinaryNumeric(ctx, Prec::Basic, []<class C>(C a, C b) -> C {
    if constexpr (kIsFloat<C>)
      return a * b;
    else
      return wrapMul(a, b);
  });
}

void divKernel(KernelContext &ctx) {
  const DType t = ctx.in(0).dtype();
  mapBinaryNumeric(ctx, Prec::Basic, [t]<class C>(C a, C b) -> std::optional<C> {
    if constexpr (!kIsFloat<C>) {
      if (b == 0)
        return std::nullopt; // integer division by zero
      if constexpr (std::is_signed_v<C>)
        if (b == -1 && a == intMin(t))
          return std::nullopt; // INT_MIN / -1 overflows
    }
    return a / b;
  });
}

void modKernel(KernelContext &ctx) {
  const bool cFmod = attrInt(ctx.node, "fmod", 0) == 1;
  mapBinaryNumeric(ctx, Prec::Basic, [cFmod]<class C>(C a, C b) -> std::optional<C> {
    if constexpr (kIsFloat<C>) {
      return std::fmod(a, b); // exact; fmod(x, 0) = NaN
    } else {
      if (b == 0)
        return std::nullopt; // integer modulo by zero
      if constexpr (std::is_signed_v<C>) {
        if (b == -1)
          return C(0); // also INT_MIN mod -1, without the overflow of a % b
        C r = a % b;
        if (!cFmod && r != 0 && ((r < 0) != (b < 0)))
          r += b; // Python's mod: the divisor's sign
        return r;
      } else {
        return a % b;
      }
    }
  });
}

/// A double converted to the integer dtype `t` as a cast would: truncated;
/// NaN, ±inf and out of range are indeterminate.
std::optional<int64_t> castToInt(DType t, double d) {
  if (!std::isfinite(d))
    return std::nullopt;
  double r = std::trunc(d);
  if (r < static_cast<double>(intMin(t)) || r >= static_cast<double>(intMax(t)) + 1.0)
    return std::nullopt;
  return static_cast<int64_t>(r);
}

/// base^e over integers, wrapping; `negative` means the exponent is -e.
std::optional<int64_t> intPow(int64_t base, bool negative, uint64_t e) {
  if (negative) {
    if (base == 0)
      return std::nullopt; // 0^-n = 1/0
    if (base == 1 || base == -1)
      return base == -1 && (e & 1) ? -1 : 1;
    return 0; // |1 / base^n| < 1, truncated
  }
  uint64_t r = 1, b = static_cast<uint64_t>(base);
  for (; e != 0; e >>= 1, b *= b)
    if (e & 1)
      r *= b;
  return static_cast<int64_t>(r);
}

void powKernel(KernelContext &ctx) {
  const Tensor &a = ctx.in(0), &b = ctx.in(1);
  Tensor &out = ctx.out(0);
  const DType ta = a.dtype(), tb = b.dtype();
  const Tensor *ins[] = {&a, &b};
  forEachBroadcast(out.shape(), ins, [&](int64_t k, const int64_t *idx) {
    if (anyUndef(ins, idx))
      return out.setUndef(k);
    const uint8_t *pa = a.at(idx[0]), *pb = b.at(idx[1]);
    if (isFloat(ta))
      return put(out, k, std::pow(loadDouble(ta, pa), loadDouble(tb, pb)));
    const int64_t base = loadInt(ta, pa);
    if (isFloat(tb))
      return put(out, k, castToInt(ta, std::pow(static_cast<double>(base), loadDouble(tb, pb))));
    if (isSignedInteger(tb)) {
      int64_t e = loadInt(tb, pb);
      return put(out, k, intPow(base, e < 0, e < 0 ? 0 - static_cast<uint64_t>(e) : e));
    }
    put(out, k, intPow(base, false, loadUInt(tb, pb)));
  });
}

// ---- Variadic kernels -----------------------------------------------------------

/// out = finish(step(...step(step(x0, x1), x2)..., xn-1)) over every input,
/// numpy-broadcast, in the computation type of the dtype (Prec::Basic).
template <class Step, class Finish> void foldInputs(KernelContext &ctx, Step step, Finish finish) {
  Tensor &out = ctx.out(0);
  const DType t = out.dtype();
  const auto ins = ctx.inputs;
  withNumericType(t, Prec::Basic, [&]<class C>(C) {
    forEachBroadcast(out.shape(), ins, [&](int64_t k, const int64_t *idx) {
      if (anyUndef(ins, idx))
        return out.setUndef(k);
      C acc = loadAs<C>(t, ins[0]->at(idx[0]));
      for (size_t i = 1; i < ins.size(); ++i)
        acc = step(acc, loadAs<C>(t, ins[i]->at(idx[i])));
      put(out, k, finish(acc));
    });
  });
}

constexpr auto kIdentity = [](auto v) { return v; };

void maxKernel(KernelContext &ctx) {
  foldInputs(
      ctx, []<class C>(C a, C b) { return maxOf(a, b); }, kIdentity);
}

void minKernel(KernelContext &ctx) {
  foldInputs(
      ctx, []<class C>(C a, C b) { return minOf(a, b); }, kIdentity);
}

// Sum and Mean are float-only (inference); the integer branch only compiles.
constexpr auto kAdd = []<class C>(C a, C b) -> C {
  if constexpr (kIsFloat<C>)
    return a + b;
  else
    return wrapAdd(a, b);
};

void sumKernel(KernelContext &ctx) {
  foldInputs(ctx, kAdd, kIdentity);
}

void meanKernel(KernelContext &ctx) {
  const size_t n = ctx.inputs.size();
  foldInputs(ctx, kAdd, [n]<class C>(C s) -> C {
    if constexpr (kIsFloat<C>)
      return s / static_cast<C>(n);
    else
      return s;
  });
}

// ---- The table ------------------------------------------------------------------

constexpr std::span<const PortAlias> kNone{};

/// An ordinary op with one fresh output.
constexpr OpInfo row(std::string_view type, std::string_view summary, InferFn infer,
                     KernelFn kernel) {
  return {type, OpKind::Ordinary, 1, kNone, kNone, false, summary, infer, kernel};
}

constexpr OpInfo kElementwiseOps[] = {
    // Binary arithmetic (numpy broadcasting).
    row("Add", "a + b (broadcast; integers wrap)", inferBinary<kNumeric>, addKernel),
    row("Sub", "a - b (broadcast; integers wrap)", inferBinary<kNumeric>, subKernel),
    row("Mul", "a * b (broadcast; integers wrap)", inferBinary<kNumeric>, mulKernel),
    row("Div", "a / b (broadcast; integers truncate, x/0 indeterminate)", inferBinary<kNumeric>,
        divKernel),
    row("Pow", "base ^ exponent (broadcast; output has the base's dtype)", inferPow, powKernel),
    row("Mod", "remainder (fmod = 0: divisor's sign, integers; fmod = 1: C fmod)", inferMod,
        modKernel),
    // Variadic (broadcast over all inputs).
    row("Max", "elementwise maximum of the inputs (NaN wins)", inferVariadic<kNumeric>, maxKernel),
    row("Min", "elementwise minimum of the inputs (NaN wins)", inferVariadic<kNumeric>, minKernel),
    row("Sum", "elementwise sum of the inputs", inferVariadic<kFloat>, sumKernel),
    row("Mean", "elementwise mean of the inputs", inferVariadic<kFloat>, meanKernel),
    // Unary math (activations.cpp).
    row("Abs", "|x| (INT_MIN wraps)", inferUnary<kNumeric>, absKernel),
    row("Neg", "-x (INT_MIN wraps)", inferUnary<kSignedNumeric>, negKernel),
    row("Sign", "-1, 0 or 1 by the sign of x", inferUnary<kNumeric>, signKernel),
    row("Exp", "e^x", inferUnary<kFloat>, expKernel),
    row("Log", "natural logarithm", inferUnary<kFloat>, logKernel),
    row("Sqrt", "square root", inferUnary<kFloat>, sqrtKernel),
    row("Reciprocal", "1 / x", inferUnary<kFloat>, reciprocalKernel),
    row("Tanh", "hyperbolic tangent", inferUnary<kFloat>, tanhKernel),
    row("Erf", "error function", inferUnary<kNumeric>, erfKernel),
    row("Floor", "round toward -inf", inferUnary<kFloat>, floorKernel),
    row("Ceil", "round toward +inf", inferUnary<kFloat>, ceilKernel),
    row("Round", "round half to even", inferUnary<kFloat3>, roundKernel),
    row("Clip", "min(max(x, min), max); bounds as inputs 1, 2 or attributes (opset < 11)",
        inferClip, clipKernel),
    // Activations (activations.cpp).
    row("Relu", "max(x, 0)", inferUnary<kSignedNumeric>, reluKernel),
    row("LeakyRelu", "x < 0 ? alpha * x : x", inferUnary<kFloat>, leakyReluKernel),
    row("PRelu", "x < 0 ? slope * x : x (slope broadcast to x)", inferPRelu, preluKernel),
    row("Elu", "x < 0 ? alpha * (e^x - 1) : x", inferUnary<kFloat3>, eluKernel),
    row("Selu", "gamma * (x > 0 ? x : alpha * (e^x - 1))", inferUnary<kFloat3>, seluKernel),
    row("Celu", "max(0, x) + min(0, alpha * (e^(x / alpha) - 1))", inferUnary<kF32>, celuKernel),
    row("Sigmoid", "1 / (1 + e^-x)", inferUnary<kFloat>, sigmoidKernel),
    row("HardSigmoid", "max(0, min(1, alpha * x + beta))", inferUnary<kFloat3>, hardSigmoidKernel),
    row("HardSwish", "x * max(0, min(1, x / 6 + 1 / 2))", inferUnary<kFloat3>, hardSwishKernel),
    row("Softplus", "log(e^x + 1)", inferUnary<kFloat3>, softplusKernel),
    row("Softsign", "x / (1 + |x|)", inferUnary<kFloat3>, softsignKernel),
};

} // namespace

std::span<const OpInfo> elementwiseOps() {
  return kElementwiseOps;
}

} // namespace graphvet::ops
