// Helpers shared by the elementwise family's tests (elementwise_test.cpp,
// activations_test.cpp).
#pragma once

#include "kernel_test_util.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace graphvet::testing {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

/// An integer tensor from int64 values (stored with wrap, so -1 in u64 is
/// 2^64 - 1).
inline Tensor intsOf(DType dtype, Shape shape, std::initializer_list<int64_t> values) {
  Tensor t(TensorType{dtype, std::move(shape)});
  int64_t i = 0;
  for (int64_t v : values)
    t.setInt(i++, v);
  EXPECT_EQ(i, t.size());
  return t;
}

/// Exact comparison of float results: same value, same sign of zero, NaN
/// where NaN is expected.
inline void expectExact(const Tensor &t, std::vector<double> want) {
  ASSERT_EQ(t.size(), static_cast<int64_t>(want.size()));
  for (int64_t i = 0; i < t.size(); ++i) {
    double g = t.getDouble(i), w = want[static_cast<size_t>(i)];
    EXPECT_FALSE(t.isUndef(i)) << "element " << i;
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(g)) << "element " << i << ": " << g;
    } else {
      EXPECT_EQ(g, w) << "element " << i;
      EXPECT_EQ(std::signbit(g), std::signbit(w)) << "element " << i << " sign of zero";
    }
  }
}

/// Results within `rtol` relative error (transcendental ops: f64 results
/// rounded once; numpy's f64 functions and libm may differ by an ulp), with
/// NaN, infinities and zeros matched exactly.
inline void expectNear(const Tensor &t, std::vector<double> want, double rtol = 2.5e-7) {
  ASSERT_EQ(t.size(), static_cast<int64_t>(want.size()));
  for (int64_t i = 0; i < t.size(); ++i) {
    double g = t.getDouble(i), w = want[static_cast<size_t>(i)];
    EXPECT_FALSE(t.isUndef(i)) << "element " << i;
    if (std::isnan(w) || std::isinf(w) || w == 0)
      EXPECT_TRUE(std::isnan(w) ? std::isnan(g) : g == w) << "element " << i << ": " << g;
    else
      EXPECT_NEAR(g, w, rtol * std::fabs(w)) << "element " << i;
  }
}

inline std::vector<int64_t> intsIn(const Tensor &t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.size(); ++i)
    v.push_back(t.getInt(i));
  return v;
}

inline std::vector<bool> undefIn(const Tensor &t) {
  std::vector<bool> v;
  for (int64_t i = 0; i < t.size(); ++i)
    v.push_back(t.isUndef(i));
  return v;
}

inline Tensor run1(const Node &n, std::vector<const Tensor *> inputs) {
  auto r = run(n, std::move(inputs));
  return r.empty() ? Tensor() : std::move(r[0]);
}

inline TensorType tt(DType d, Shape s) {
  return TensorType{d, std::move(s)};
}

} // namespace graphvet::testing
