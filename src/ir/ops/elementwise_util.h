// Private to the elementwise family (elementwise.cpp, activations.cpp): the
// broadcasting element loop, the computation types of tensor-semantics.md §3
// and the kernels that activations.cpp defines for the one op table in
// elementwise.cpp.
#pragma once

#include "ir/op_def.h"
#include "ir/ops/kernel_io.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

namespace graphvet::ops::ew {

// ---- Computation types --------------------------------------------------

/// How a float op computes (tensor-semantics.md §3). Basic: f16, bf16 and
/// f32 in float (f16/bf16 are exact in f32; the float result is rounded once
/// to the output dtype), f64 in double. Wide: every float dtype in double
/// (transcendental ops), rounded once to the output dtype.
enum class Prec { Basic, Wide };

template <class T> struct IsOptional : std::false_type {};
template <class T> struct IsOptional<std::optional<T>> : std::true_type {};

/// An element of `t` as the computation type C: float or double for float
/// dtypes (exact), int64_t for signed integers, uint64_t for unsigned ones.
template <class C> C loadAs(DType t, const uint8_t *p) {
  if constexpr (std::is_floating_point_v<C>)
    return static_cast<C>(loadDouble(t, p));
  else if constexpr (std::is_signed_v<C>)
    return loadInt(t, p);
  else
    return loadUInt(t, p);
}

/// Stores a result into element k of `out`: a float rounded once to the
/// output's float dtype, an integer wrapped to the output's integer dtype,
/// an empty optional as an indeterminate element.
template <class R> void put(Tensor &out, int64_t k, R v) {
  if constexpr (IsOptional<R>::value) {
    if (!v)
      out.setUndef(k);
    else
      put(out, k, *v);
  } else if constexpr (std::is_floating_point_v<R>) {
    storeRounded(out, k, v);
  } else {
    out.setInt(k, static_cast<int64_t>(v));
  }
}

/// Calls fn(C{}) with C the computation type of float dtype `t`.
template <class Fn> void withFloatType(DType t, Prec prec, Fn &&fn) {
  if (t == DType::F64 || prec == Prec::Wide)
    fn(double{});
  else
    fn(float{});
}

/// Calls fn(C{}) with C the computation type of numeric dtype `t`.
template <class Fn> void withNumericType(DType t, Prec prec, Fn &&fn) {
  if (isFloat(t))
    withFloatType(t, prec, fn);
  else if (isSignedInteger(t))
    fn(int64_t{});
  else
    fn(uint64_t{});
}

// ---- Integer helpers (two's-complement wrap, no UB) ----------------------

template <class C> C wrapAdd(C a, C b) {
  return static_cast<C>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
template <class C> C wrapSub(C a, C b) {
  return static_cast<C>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
template <class C> C wrapMul(C a, C b) {
  return static_cast<C>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// ---- Element loops --------------------------------------------------------

/// Calls body(k, idx) for every element k of `outShape` in row-major order,
/// idx[i] being the element of input i (numpy-broadcast to outShape) that
/// feeds it. Inputs must broadcast to outShape (inference checked it).
template <class Body>
void forEachBroadcast(const Shape &outShape, std::span<const Tensor *const> ins, Body &&body) {
  const size_t rank = outShape.size(), n = ins.size();
  int64_t total = 1;
  for (int64_t d : outShape)
    total *= d;
  if (total == 0)
    return;
  // strides[i][d]: step of input i when output axis d advances (0 when broadcast).
  std::vector<std::vector<int64_t>> strides(n, std::vector<int64_t>(rank, 0));
  for (size_t i = 0; i < n; ++i) {
    const Shape &s = ins[i]->shape();
    int64_t stride = 1;
    for (size_t j = s.size(); j-- > 0;) {
      size_t d = rank - s.size() + j;
      if (s[j] != 1)
        strides[i][d] = stride;
      stride *= s[j];
    }
  }
  std::vector<int64_t> coord(rank, 0), idx(n, 0);
  for (int64_t k = 0; k < total; ++k) {
    body(k, idx.data());
    for (size_t d = rank; d-- > 0;) {
      if (++coord[d] < outShape[d]) {
        for (size_t i = 0; i < n; ++i)
          idx[i] += strides[i][d];
        break;
      }
      coord[d] = 0;
      for (size_t i = 0; i < n; ++i)
        idx[i] -= strides[i][d] * (outShape[d] - 1);
    }
  }
}

/// True when any input element feeding output element k is indeterminate.
inline bool anyUndef(std::span<const Tensor *const> ins, const int64_t *idx) {
  for (size_t i = 0; i < ins.size(); ++i)
    if (ins[i]->isUndef(idx[i]))
      return true;
  return false;
}

/// out[k] = f(x[k]) for a unary op over float dtypes; f is generic over the
/// computation type (float or double, see Prec) and returns it (or an
/// optional of it: empty = indeterminate).
template <class F> void mapUnaryFloat(KernelContext &ctx, Prec prec, F f) {
  const Tensor &x = ctx.in(0);
  Tensor &out = ctx.out(0);
  const DType t = x.dtype();
  withFloatType(t, prec, [&]<class C>(C) {
    if (isNative<C>(t) && !x.anyUndef()) {
      for (int64_t k = 0; k < x.size(); ++k)
        put(out, k, f(loadNative<C>(x, k)));
      return;
    }
    for (int64_t k = 0; k < x.size(); ++k) {
      if (x.isUndef(k))
        out.setUndef(k);
      else
        put(out, k, f(loadAs<C>(t, x.at(k))));
    }
  });
}

/// Like mapUnaryFloat over any numeric dtype; f is generic over float,
/// double, int64_t and uint64_t.
template <class F> void mapUnaryNumeric(KernelContext &ctx, Prec prec, F f) {
  const Tensor &x = ctx.in(0);
  Tensor &out = ctx.out(0);
  const DType t = x.dtype();
  withNumericType(t, prec, [&]<class C>(C) {
    if (isNative<C>(t) && !x.anyUndef()) {
      for (int64_t k = 0; k < x.size(); ++k)
        put(out, k, f(loadNative<C>(x, k)));
      return;
    }
    for (int64_t k = 0; k < x.size(); ++k) {
      if (x.isUndef(k))
        out.setUndef(k);
      else
        put(out, k, f(loadAs<C>(t, x.at(k))));
    }
  });
}

/// out = f(a, b) with numpy broadcasting, a and b of one numeric dtype; f is
/// generic over the computation types (see mapUnaryNumeric).
template <class F> void mapBinaryNumeric(KernelContext &ctx, Prec prec, F f) {
  const Tensor &a = ctx.in(0), &b = ctx.in(1);
  Tensor &out = ctx.out(0);
  const DType t = a.dtype();
  const Tensor *ins[] = {&a, &b};
  withNumericType(t, prec, [&]<class C>(C) {
    if (isNative<C>(t) && !a.anyUndef() && !b.anyUndef()) {
      forEachBroadcast(out.shape(), ins, [&](int64_t k, const int64_t *idx) {
        put(out, k, f(loadNative<C>(a, idx[0]), loadNative<C>(b, idx[1])));
      });
      return;
    }
    forEachBroadcast(out.shape(), ins, [&](int64_t k, const int64_t *idx) {
      if (anyUndef(ins, idx))
        out.setUndef(k);
      else
        put(out, k, f(loadAs<C>(t, a.at(idx[0])), loadAs<C>(t, b.at(idx[1]))));
    });
  });
}

// ---- Shared float semantics ----------------------------------------------

/// IEEE 754-2019 maximum/minimum: NaN if either operand is NaN, and
/// +0 > -0, so the result does not depend on the operand order.
template <class C> C maxOf(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a) || std::isnan(b))
      return std::isnan(a) ? a : b;
    if (a == b)
      return std::signbit(a) ? b : a;
  }
  return a < b ? b : a;
}
template <class C> C minOf(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a) || std::isnan(b))
      return std::isnan(a) ? a : b;
    if (a == b)
      return std::signbit(a) ? a : b;
  }
  return b < a ? b : a;
}

// ---- Kernels of activations.cpp (unary math and activations) -------------

void absKernel(KernelContext &ctx);
void negKernel(KernelContext &ctx);
void signKernel(KernelContext &ctx);
void reluKernel(KernelContext &ctx);
void leakyReluKernel(KernelContext &ctx);
void preluKernel(KernelContext &ctx);
void eluKernel(KernelContext &ctx);
void seluKernel(KernelContext &ctx);
void celuKernel(KernelContext &ctx);
void sigmoidKernel(KernelContext &ctx);
void hardSigmoidKernel(KernelContext &ctx);
void hardSwishKernel(KernelContext &ctx);
void softplusKernel(KernelContext &ctx);
void softsignKernel(KernelContext &ctx);
void tanhKernel(KernelContext &ctx);
void expKernel(KernelContext &ctx);
void logKernel(KernelContext &ctx);
void sqrtKernel(KernelContext &ctx);
void reciprocalKernel(KernelContext &ctx);
void erfKernel(KernelContext &ctx);
void floorKernel(KernelContext &ctx);
void ceilKernel(KernelContext &ctx);
void roundKernel(KernelContext &ctx);
void clipKernel(KernelContext &ctx);

} // namespace graphvet::ops::ew
