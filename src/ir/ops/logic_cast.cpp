// Cast and CastLike (tensor-semantics.md §4): type inference and kernels.
//
//   float -> float   round to nearest even once; overflow -> ±inf; NaN -> NaN
//   int   -> float   round to nearest even once, exactly (no detour through
//                    double for 64-bit values above 2^53)
//   float -> int     truncate toward zero; NaN, ±inf, out of range ->
//                    indeterminate
//   int   -> int     keep the low bits (wrap)
//   any   -> bool    nonzero (NaN included) -> 1, ±0 -> 0
//   bool  -> any     0 / 1
//
// ONNX 1.12's conformance data for float -> bfloat16 truncates instead of
// rounding (test_cast_FLOAT_to_BFLOAT16, test_castlike_FLOAT_to_BFLOAT16*);
// tensor-semantics.md §4 rounds to nearest even, and wins.
#include "ir/ops/families.h"
#include "ir/ops/logic_parts.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace graphvet::ops {
namespace {

using logic_detail::checkInputCount;
using logic_detail::checkOutputCount;

/// The integer `m` rounded to `bits` significant bits, nearest even, as a
/// double (exact: the result has at most `bits` <= 53 significant bits).
double roundMagnitude(uint64_t m, int bits) {
  int width = 64 - std::countl_zero(m);
  if (width <= bits)
    return static_cast<double>(m);
  int shift = width - bits;
  uint64_t q = m >> shift;
  uint64_t rem = m & ((uint64_t{1} << shift) - 1);
  uint64_t half = uint64_t{1} << (shift - 1);
  if (rem > half || (rem == half && (q & 1) != 0))
    ++q;
  return std::ldexp(static_cast<double>(q), shift);
}

/// An integer (`negative`, magnitude `m`) stored into the float dtype `to`
/// with one rounding: the rounded value is exact in `to`'s significand, so
/// storeDouble only decides overflow (f16: 65520 and above -> inf).
void storeIntAsFloat(DType to, uint8_t *q, bool negative, uint64_t m) {
  double r = roundMagnitude(m, significandBits(to));
  storeDouble(to, q, negative ? -r : r);
}

/// Converts one element; false when the result is indeterminate (float ->
/// integer of NaN, ±inf or a truncation outside the target's range).
bool castElement(DType from, const uint8_t *p, DType to, uint8_t *q) {
  if (from == to) {
    std::memcpy(q, p, dtypeBytes(to));
    return true;
  }
  if (isFloat(from)) {
    double v = loadDouble(from, p); // exact
    if (to == DType::Bool) {
      storeInt(to, q, v != 0 || std::isnan(v) ? 1 : 0);
      return true;
    }
    if (isFloat(to)) {
      storeDouble(to, q, v); // one rounding, nearest even
      return true;
    }
    if (!std::isfinite(v))
      return false;
    double t = std::trunc(v);
    bool inRange;
    if (to == DType::U64)
      inRange = t >= 0 && t < 0x1p64;
    else if (to == DType::I64)
      inRange = t >= -0x1p63 && t < 0x1p63;
    else // the bounds of narrower integers are exact doubles
      inRange = t >= static_cast<double>(intMin(to)) && t <= static_cast<double>(intMax(to));
    if (!inRange)
      return false;
    if (to == DType::U64)
      storeDouble(to, q, t); // stores static_cast<uint64_t>(t), in range
    else
      storeInt(to, q, static_cast<int64_t>(t));
    return true;
  }
  // Integer or bool source.
  if (to == DType::Bool) {
    storeInt(to, q, loadUInt(from, p) != 0 ? 1 : 0);
    return true;
  }
  if (isFloat(to)) {
    if (from == DType::U64) {
      storeIntAsFloat(to, q, false, loadUInt(from, p));
    } else {
      int64_t v = loadInt(from, p);
      uint64_t m = v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
      storeIntAsFloat(to, q, v < 0, m);
    }
    return true;
  }
  storeInt(to, q, loadInt(from, p)); // wrap; bool reads as 0/1
  return true;
}

void castTensor(const Tensor &x, Tensor &out) {
  DType from = x.dtype(), to = out.dtype();
  for (int64_t i = 0; i < out.size(); ++i) {
    if (x.isUndef(i) || !castElement(from, x.at(i), to, out.at(i)))
      out.setUndef(i);
  }
}

bool inferCast(InferContext &ctx) {
  if (!checkInputCount(ctx, 1, 1) || !checkOutputCount(ctx, 1))
    return false;
  if (!ctx.node.attr("to"))
    return ctx.fail("Cast needs attribute 'to' (the output dtype)");
  auto to = attrDType(ctx.node, "to");
  if (!to)
    return ctx.fail("attribute 'to' of Cast must name a dtype (bool, i8, u8, i16, u16, i32, u32, "
                    "i64, u64, f16, bf16, f32, f64)");
  ctx.outputs = {TensorType{*to, ctx.in(0).shape}};
  return true;
}

bool inferCastLike(InferContext &ctx) {
  if (!checkInputCount(ctx, 2, 2) || !checkOutputCount(ctx, 1))
    return false;
  ctx.outputs = {TensorType{ctx.in(1).dtype, ctx.in(0).shape}};
  return true;
}

/// Cast and CastLike: input 0 converted to the output's dtype (CastLike's
/// input 1 gives only the dtype; its values, determinate or not, are unread).
void castKernel(KernelContext &ctx) {
  castTensor(ctx.in(0), ctx.out(0));
}

constexpr std::span<const PortAlias> kNone{};

constexpr OpInfo kCastOps[] = {
    {"Cast", OpKind::Ordinary, 1, kNone, kNone, false,
     "converts input 0 to dtype `to` (tensor-semantics.md §4)", inferCast, castKernel},
    {"CastLike", OpKind::Ordinary, 1, kNone, kNone, false,
     "converts input 0 to the dtype of input 1 (tensor-semantics.md §4)", inferCastLike,
     castKernel},
};

} // namespace

std::span<const OpInfo> logicCastOps() {
  return kCastOps;
}

} // namespace graphvet::ops
