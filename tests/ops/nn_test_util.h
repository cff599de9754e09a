// Helpers shared by the nn family's tests (conv, pool, norm, resize, lstm):
// attribute shorthands, deterministic random tensors, NCHW <-> NHWC
// transposes and bitwise comparison, for the layout-equivalence checks of
// tensor-semantics.md §5.
#pragma once

#include "kernel_test_util.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace graphvet::testing::nn {

inline AttrValue ints(std::vector<int64_t> v) {
  AttrValue::List l;
  for (int64_t x : v)
    l.push_back(AttrValue::ofInt(x));
  return AttrValue::ofList(std::move(l));
}

inline AttrValue floats(std::vector<double> v) {
  AttrValue::List l;
  for (double x : v)
    l.push_back(AttrValue::ofFloat(x));
  return AttrValue::ofList(std::move(l));
}

inline AttrValue strs(std::vector<std::string> v) {
  AttrValue::List l;
  for (auto &x : v)
    l.push_back(AttrValue::ofString(x));
  return AttrValue::ofList(std::move(l));
}

inline AttrValue str(std::string s) {
  return AttrValue::ofString(std::move(s));
}

/// A tensor of `dtype` and `shape` with deterministic pseudo-random values
/// in [-2, 2) (integers: [-50, 50)).
inline Tensor randomTensor(DType dtype, Shape shape, uint64_t seed) {
  Tensor t(TensorType{dtype, std::move(shape)});
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  for (int64_t i = 0; i < t.size(); ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    double u = static_cast<double>(s >> 11) * 0x1.0p-53;
    if (isFloat(dtype))
      t.setDouble(i, 4 * u - 2);
    else
      t.setInt(i, static_cast<int64_t>(100 * u) - 50);
  }
  return t;
}

/// Moves axis 1 to the end (NCHW -> NHWC; OIHW -> OHWI), with the mask.
inline Tensor toChannelsLast(const Tensor &t) {
  const Shape &s = t.shape();
  size_t r = s.size();
  Shape o{s[0]};
  for (size_t a = 2; a < r; ++a)
    o.push_back(s[a]);
  o.push_back(s[1]);
  Tensor out(TensorType{t.dtype(), o});
  std::vector<int64_t> st = stridesOf(s), ot = stridesOf(o);
  std::vector<int64_t> idx(r, 0);
  for (int64_t i = 0; i < t.size(); ++i) {
    int64_t rem = i;
    for (size_t a = 0; a < r; ++a) {
      idx[a] = rem / st[a];
      rem %= st[a];
    }
    int64_t j = idx[0] * ot[0] + idx[1] * ot[r - 1];
    for (size_t a = 2; a < r; ++a)
      j += idx[a] * ot[a - 1];
    out.copyElement(j, t, i);
  }
  return out;
}

/// Bit-for-bit equality of type, bytes and indeterminate mask.
inline bool bitIdentical(const Tensor &a, const Tensor &b) {
  if (a.type() != b.type())
    return false;
  for (int64_t i = 0; i < a.size(); ++i)
    if (a.isUndef(i) != b.isUndef(i) ||
        (!a.isUndef(i) && std::memcmp(a.at(i), b.at(i), dtypeBytes(a.dtype())) != 0))
      return false;
  return true;
}

/// Expects every element within rtol 1e-6 (f32 results checked against
/// numpy's f64 values rounded to f32, which may differ by an ulp or two).
inline void expectNear(const Tensor &t, const std::vector<double> &want, double rtol = 1e-6,
                       double atol = 1e-7) {
  ASSERT_EQ(t.size(), static_cast<int64_t>(want.size()));
  for (int64_t i = 0; i < t.size(); ++i) {
    double g = t.getDouble(i), w = want[static_cast<size_t>(i)];
    EXPECT_FALSE(t.isUndef(i)) << "element " << i;
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(g)) << "element " << i;
      continue;
    }
    EXPECT_NEAR(g, w, atol + rtol * std::fabs(w)) << "element " << i;
  }
}

/// Indices of the indeterminate elements.
inline std::vector<int64_t> undefIndices(const Tensor &t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.size(); ++i)
    if (t.isUndef(i))
      v.push_back(i);
  return v;
}

} // namespace graphvet::testing::nn
