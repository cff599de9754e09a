// Dtypes of typed random graphs: the sets of dtypes ops accept (the ONNX
// type constraints of the op catalogue, on graphvet's dtypes), the choice of
// one dtype of a set, and the RapidCheck generator of source dtypes (f32
// mostly, every other dtype too).
#pragma once

#include "ir/dtype.h"

#include <rapidcheck.h>

#include <cstdint>

namespace graphvet::props {

using DTypeSet = uint32_t;

constexpr DTypeSet dtypeBit(DType t) {
  return DTypeSet{1} << static_cast<unsigned>(t);
}
constexpr bool inSet(DTypeSet s, DType t) {
  return (s & dtypeBit(t)) != 0;
}

inline constexpr DTypeSet kFloat3DTypes =
    dtypeBit(DType::F16) | dtypeBit(DType::F32) | dtypeBit(DType::F64);
inline constexpr DTypeSet kFloatDTypes = kFloat3DTypes | dtypeBit(DType::BF16);
inline constexpr DTypeSet kSignedIntDTypes =
    dtypeBit(DType::I8) | dtypeBit(DType::I16) | dtypeBit(DType::I32) | dtypeBit(DType::I64);
inline constexpr DTypeSet kUnsignedIntDTypes =
    dtypeBit(DType::U8) | dtypeBit(DType::U16) | dtypeBit(DType::U32) | dtypeBit(DType::U64);
inline constexpr DTypeSet kIntDTypes = kSignedIntDTypes | kUnsignedIntDTypes;
/// Every dtype but bool.
inline constexpr DTypeSet kNumericDTypes = kFloatDTypes | kIntDTypes;
inline constexpr DTypeSet kAllDTypes = kNumericDTypes | dtypeBit(DType::Bool);
/// Reductions, MatMul, Gemm, CumSum: i32, u32, i64, u64 and the floats.
inline constexpr DTypeSet kWideNumericDTypes = kFloatDTypes | dtypeBit(DType::I32) |
                                               dtypeBit(DType::U32) | dtypeBit(DType::I64) |
                                               dtypeBit(DType::U64);

/// A dtype of `s` (not empty) for choice `c`: f32 for c = 0 when f32 is in
/// the set (the plainest), else the members in turn.
DType pickDType(DTypeSet s, unsigned c);
/// Number of dtypes in `s`.
unsigned dtypeCount(DTypeSet s);

/// Source dtypes: f32 about half the time, then f16, bf16, f64, i64, i32,
/// bool and the narrow and unsigned integers; shrinks towards f32.
rc::Gen<DType> genDType();

} // namespace graphvet::props
