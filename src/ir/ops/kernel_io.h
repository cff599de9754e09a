// Element input and output shared by the kernels' fast loops: converting a
// whole operand to the computation type once, and loading and storing
// elements of dtypes stored as their computation type (f32 as float, f64 as
// double, i64, u64) by copying bytes instead of the per-element dtype
// dispatch of Tensor::getDouble / setDouble. Results are the same bits.
#pragma once

#include "ir/tensor.h"

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace graphvet::ops {

/// Is C the host type dtype `t` is stored as (f32 as float, f64 as double,
/// i64 as int64_t, u64 as uint64_t)?
template <class C> bool isNative(DType t) {
  if constexpr (std::is_same_v<C, float>)
    return t == DType::F32;
  else if constexpr (std::is_same_v<C, double>)
    return t == DType::F64;
  else if constexpr (std::is_same_v<C, int64_t>)
    return t == DType::I64;
  else if constexpr (std::is_same_v<C, uint64_t>)
    return t == DType::U64;
  else
    return false;
}

/// Element k of a tensor stored natively as C (isNative).
template <class C> C loadNative(const Tensor &t, int64_t k) {
  C v;
  std::memcpy(&v, t.bytes().data() + k * static_cast<int64_t>(sizeof(C)), sizeof v);
  return v;
}

/// Element k of float tensor `out` from a float or double result: copied
/// when `out` is stored as R, else rounded once to out's dtype by setDouble.
template <class R> void storeRounded(Tensor &out, int64_t k, R v) {
  static_assert(std::is_floating_point_v<R>);
  if (isNative<R>(out.dtype()))
    std::memcpy(out.bytes().data() + k * static_cast<int64_t>(sizeof(R)), &v, sizeof v);
  else
    out.setDouble(k, static_cast<double>(v));
}

/// Every element of float tensor `t` converted to A (exact for A at least
/// as wide as t's dtype), for kernels that read each element many times.
template <class A> std::vector<A> loadAllAs(const Tensor &t) {
  std::vector<A> v(static_cast<size_t>(t.size()));
  for (int64_t i = 0; i < t.size(); ++i)
    v[static_cast<size_t>(i)] = static_cast<A>(t.getDouble(i));
  return v;
}

} // namespace graphvet::ops
