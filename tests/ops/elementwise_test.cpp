// Type inference and kernel tests of the elementwise family's arithmetic
// (src/ir/ops/elementwise.cpp): Add, Sub, Mul, Div, Pow, Mod and the variadic
// Max, Min, Sum, Mean. Expected values were computed with numpy (floats
// rounded as tensor-semantics.md §3 says) or taken from ONNX's conformance
// tests (test_*). Unary math and activations are in activations_test.cpp.
#include "elementwise_test_util.h"

#include <cmath>

namespace graphvet::testing {
namespace {

// ---- Add / Sub / Mul / Div --------------------------------------------------

TEST(ElementwiseArith, AddBroadcastsLikeNumpy) {
  // test_add_bcast's pattern: [2, 3] + [3].
  Tensor a = tensorOf(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = tensorOf(DType::F32, {3}, {10, 20, 30});
  Tensor y = run1(opNode("Add", 2), {&a, &b});
  EXPECT_EQ(y.type(), tt(DType::F32, {2, 3}));
  expectExact(y, {11, 22, 33, 14, 25, 36});
  // Bidirectional: [2, 1] - [1, 3] -> [2, 3].
  Tensor c = tensorOf(DType::F32, {2, 1}, {1, 2});
  Tensor d = tensorOf(DType::F32, {1, 3}, {1, 2, 3});
  Tensor z = run1(opNode("Sub", 2), {&c, &d});
  EXPECT_EQ(z.type(), tt(DType::F32, {2, 3}));
  expectExact(z, {0, -1, -2, 1, 0, -1});
  // A scalar broadcasts everywhere; a 0-sized dimension gives an empty output.
  Tensor s = tensorOf(DType::F32, {}, {0.5});
  expectExact(run1(opNode("Mul", 2), {&s, &a}), {0.5, 1, 1.5, 2, 2.5, 3});
  Tensor e(TensorType{DType::F32, {0, 3}});
  EXPECT_EQ(run1(opNode("Add", 2), {&e, &b}).type(), tt(DType::F32, {0, 3}));
}

TEST(ElementwiseArith, ConformanceValues) {
  // test_add / test_sub / test_mul / test_div: first elements.
  Tensor x = tensorOf(DType::F32, {3}, {1.7640524, 0.4001572, 0.978738});
  Tensor y = tensorOf(DType::F32, {3}, {-0.67246044, -0.35955316, -0.8131463});
  Tensor d = tensorOf(DType::F32, {3}, {1.2961402, 1.1187277, 1.3179832});
  auto close = [](const Tensor &t, std::vector<double> want) {
    for (int64_t i = 0; i < t.size(); ++i)
      EXPECT_NEAR(t.getDouble(i), want[static_cast<size_t>(i)], 1e-6);
  };
  close(run1(opNode("Add", 2), {&x, &y}), {1.091592, 0.040604055, 0.16559172});
  close(run1(opNode("Sub", 2), {&x, &y}), {2.436513, 0.7597104, 1.7918843});
  close(run1(opNode("Mul", 2), {&x, &y}), {-1.1862555, -0.14387779, -0.7958572});
  close(run1(opNode("Div", 2), {&x, &d}), {1.3610044, 0.35768956, 0.7426028});
}

TEST(ElementwiseArith, FloatsRoundOnceFromF32) {
  // f32: one IEEE rounding per op.
  Tensor a = tensorOf(DType::F32, {2}, {0.1, 3e38});
  Tensor b = tensorOf(DType::F32, {2}, {0.2, 3e38});
  expectExact(run1(opNode("Add", 2), {&a, &b}),
              {static_cast<double>(0.1f + 0.2f), kInf}); // overflow to inf
  // f16: computed in f32, rounded once: 2048 + 1 is a tie -> 2048 (even).
  Tensor h = tensorOf(DType::F16, {2}, {2048, 0.1});
  Tensor k = tensorOf(DType::F16, {2}, {1, 0.2});
  Tensor hs = run1(opNode("Add", 2), {&h, &k});
  EXPECT_EQ(hs.dtype(), DType::F16);
  expectExact(hs, {2048, 0.2998046875});
  // bf16 (8 significant bits): 1 + 2^-8 is a tie -> 1; 256 + 1.5 -> 258; 256 * 1.5 exact.
  Tensor p = tensorOf(DType::BF16, {2}, {1, 256});
  Tensor q = tensorOf(DType::BF16, {2}, {0.00390625, 1.5});
  expectExact(run1(opNode("Add", 2), {&p, &q}), {1, 258});
  expectExact(run1(opNode("Mul", 2), {&p, &q}), {0.00390625, 384});
  // f64 in double.
  Tensor u = tensorOf(DType::F64, {1}, {0.1});
  Tensor v = tensorOf(DType::F64, {1}, {0.2});
  expectExact(run1(opNode("Add", 2), {&u, &v}), {0.1 + 0.2});
}

TEST(ElementwiseArith, FloatSpecials) {
  Tensor a = tensorOf(DType::F32, {5}, {1, -1, 0, kInf, -0.0});
  Tensor b = tensorOf(DType::F32, {5}, {0, 0, 0, kInf, 1});
  expectExact(run1(opNode("Div", 2), {&a, &b}), {kInf, -kInf, kNaN, kNaN, -0.0});
  expectExact(run1(opNode("Sub", 2), {&a, &b}), {1, -1, 0, kNaN, -1});
  expectExact(run1(opNode("Mul", 2), {&a, &b}), {0, -0.0, 0, kInf, -0.0});
  Tensor nz = tensorOf(DType::F32, {1}, {-0.0});
  expectExact(run1(opNode("Add", 2), {&nz, &nz}), {-0.0});
}

TEST(ElementwiseArith, IntegersWrap) {
  // test_add_uint8 etc. use small values; the wrap is graphvet's rule.
  Tensor a = intsOf(DType::U8, {3}, {250, 12, 16});
  Tensor b = intsOf(DType::U8, {3}, {10, 6, 16});
  EXPECT_EQ(intsIn(run1(opNode("Add", 2), {&a, &b})), (std::vector<int64_t>{4, 18, 32}));
  EXPECT_EQ(intsIn(run1(opNode("Sub", 2), {&b, &a})), (std::vector<int64_t>{16, 250, 0}));
  EXPECT_EQ(intsIn(run1(opNode("Mul", 2), {&a, &b})), (std::vector<int64_t>{196, 72, 0}));
  Tensor i8a = intsOf(DType::I8, {2}, {-128, 127});
  Tensor i8b = intsOf(DType::I8, {2}, {1, 1});
  EXPECT_EQ(intsIn(run1(opNode("Sub", 2), {&i8a, &i8b})), (std::vector<int64_t>{127, 126}));
  EXPECT_EQ(intsIn(run1(opNode("Add", 2), {&i8a, &i8b})), (std::vector<int64_t>{-127, -128}));
  Tensor i64 = intsOf(DType::I64, {2}, {INT64_MAX, INT64_MIN});
  Tensor two = intsOf(DType::I64, {}, {2});
  EXPECT_EQ(intsIn(run1(opNode("Add", 2), {&i64, &two})),
            (std::vector<int64_t>{INT64_MIN + 1, INT64_MIN + 2}));
  EXPECT_EQ(intsIn(run1(opNode("Mul", 2), {&i64, &two})), (std::vector<int64_t>{-2, 0}));
  Tensor u64 = intsOf(DType::U64, {1}, {-1}); // 2^64 - 1
  Tensor one = intsOf(DType::U64, {1}, {1});
  EXPECT_EQ(intsIn(run1(opNode("Add", 2), {&u64, &one})), (std::vector<int64_t>{0}));
}

TEST(ElementwiseArith, IntegerDivisionTruncatesAndZeroIsIndeterminate) {
  Tensor a = intsOf(DType::I32, {6}, {7, -7, 7, -7, 5, INT32_MIN});
  Tensor b = intsOf(DType::I32, {6}, {2, 2, -2, -2, 0, -1});
  Tensor q = run1(opNode("Div", 2), {&a, &b});
  EXPECT_EQ(undefIn(q), (std::vector<bool>{false, false, false, false, true, true}));
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(q.getInt(i), (std::vector<int64_t>{3, -3, -3, 3})[static_cast<size_t>(i)]);
  // INT_MIN / -1 of the dtype, not of int64.
  Tensor c = intsOf(DType::I8, {2}, {-128, -127});
  Tensor m1 = intsOf(DType::I8, {}, {-1});
  Tensor r = run1(opNode("Div", 2), {&c, &m1});
  EXPECT_EQ(undefIn(r), (std::vector<bool>{true, false}));
  EXPECT_EQ(r.getInt(1), 127);
  // Unsigned: full 64-bit range; test_div_uint8.
  Tensor u = intsOf(DType::U64, {2}, {-1, -1});
  Tensor v = intsOf(DType::U64, {2}, {3, 0});
  Tensor w = run1(opNode("Div", 2), {&u, &v});
  EXPECT_EQ(loadUInt(DType::U64, w.at(0)), 6148914691236517205ull);
  EXPECT_TRUE(w.isUndef(1));
  Tensor x8 = intsOf(DType::U8, {3}, {16, 6, 0});
  Tensor y8 = intsOf(DType::U8, {3}, {11, 5, 23});
  EXPECT_EQ(intsIn(run1(opNode("Div", 2), {&x8, &y8})), (std::vector<int64_t>{1, 1, 0}));
}

TEST(ElementwiseArith, IndeterminateInputsPropagateThroughBroadcast) {
  Tensor a = tensorOf(DType::F32, {2, 2}, {1, 2, 3, 4});
  Tensor b = tensorOf(DType::F32, {2}, {10, 20});
  b.setUndef(1); // feeds column 1 of every row
  a.setUndef(0);
  Tensor y = run1(opNode("Add", 2), {&a, &b});
  EXPECT_EQ(undefIn(y), (std::vector<bool>{true, true, false, true}));
  EXPECT_EQ(y.getDouble(2), 13);
}

// ---- Pow --------------------------------------------------------------------

TEST(ElementwisePow, FloatBaseComputesInF64) {
  // test_pow_example, test_pow_bcast_scalar.
  Tensor x = tensorOf(DType::F32, {3}, {1, 2, 3});
  Tensor y = tensorOf(DType::F32, {3}, {4, 5, 6});
  expectExact(run1(opNode("Pow", 2), {&x, &y}), {1, 32, 729});
  Tensor two = tensorOf(DType::F32, {}, {2});
  expectExact(run1(opNode("Pow", 2), {&x, &two}), {1, 4, 9});
  // Non-integer exponents: pow in f64, rounded once; a negative base gives NaN.
  Tensor b = tensorOf(DType::F32, {5}, {2, 10, 1.5, -8, 0});
  Tensor e = tensorOf(DType::F32, {5}, {0.5, -2, 3, 1.0 / 3, -1});
  expectExact(run1(opNode("Pow", 2), {&b, &e}),
              {1.4142135381698608, 0.009999999776482582, 3.375, kNaN, kInf});
  // test_pow first elements: 0^1.764 = 0, 2^0.978738 = 1.9707408.
  Tensor p = tensorOf(DType::F32, {2}, {0, 2});
  Tensor q = tensorOf(DType::F32, {2}, {1.7640524, 0.978738});
  Tensor r = run1(opNode("Pow", 2), {&p, &q});
  EXPECT_EQ(r.getDouble(0), 0);
  EXPECT_NEAR(r.getDouble(1), 1.9707408, 1e-6);
}

TEST(ElementwisePow, MixedTypesTakeTheBaseDtype) {
  // test_pow_types_float32_{int32,int64,uint32,uint64}, test_pow_types_int*.
  Tensor x = tensorOf(DType::F32, {3}, {1, 2, 3});
  for (DType t : {DType::I32, DType::I64, DType::U32, DType::U64}) {
    Tensor y = intsOf(t, {3}, {4, 5, 6});
    Tensor z = run1(opNode("Pow", 2), {&x, &y});
    EXPECT_EQ(z.type(), tt(DType::F32, {3}));
    expectExact(z, {1, 32, 729});
  }
  Tensor xi = intsOf(DType::I32, {3}, {1, 2, 3});
  Tensor yf = tensorOf(DType::F32, {3}, {4, 5, 6});
  Tensor zi = run1(opNode("Pow", 2), {&xi, &yf});
  EXPECT_EQ(zi.type(), tt(DType::I32, {3}));
  EXPECT_EQ(intsIn(zi), (std::vector<int64_t>{1, 32, 729}));
  Tensor x64 = intsOf(DType::I64, {3}, {1, 2, 3});
  Tensor y64 = intsOf(DType::I64, {3}, {4, 5, 6});
  EXPECT_EQ(intsIn(run1(opNode("Pow", 2), {&x64, &y64})), (std::vector<int64_t>{1, 32, 729}));
  // f16 base: rounded once to f16 (3^11 = 177147 overflows).
  Tensor h = tensorOf(DType::F16, {2}, {2, 3});
  Tensor n = intsOf(DType::U64, {2}, {10, 11});
  expectExact(run1(opNode("Pow", 2), {&h, &n}), {1024, kInf});
}

TEST(ElementwisePow, IntegerBaseRules) {
  // Integer exponent: exact, wrapping; negative exponent: truncated true value,
  // 0^-n indeterminate.
  Tensor b = intsOf(DType::I64, {7}, {3, 2, 0, 1, -1, 2, 0});
  Tensor e = intsOf(DType::I64, {7}, {40, -1, -1, -5, -3, 0, 0});
  Tensor r = run1(opNode("Pow", 2), {&b, &e});
  EXPECT_EQ(undefIn(r), (std::vector<bool>{false, false, true, false, false, false, false}));
  EXPECT_EQ(r.getInt(0), -6289078614652622815); // 3^40 mod 2^64
  EXPECT_EQ(r.getInt(1), 0);
  EXPECT_EQ(r.getInt(3), 1);
  EXPECT_EQ(r.getInt(4), -1);
  EXPECT_EQ(r.getInt(5), 1);
  EXPECT_EQ(r.getInt(6), 1);
  Tensor b32 = intsOf(DType::I32, {1}, {3});
  Tensor e32 = intsOf(DType::I32, {1}, {21});
  EXPECT_EQ(run1(opNode("Pow", 2), {&b32, &e32}).getInt(0), 1870418611); // 3^21 mod 2^32
  // Float exponent: f64 pow converted as a cast: truncated, NaN/out of range
  // indeterminate.
  Tensor bi = intsOf(DType::I32, {4}, {2, 5, 3, -8});
  Tensor ef = tensorOf(DType::F32, {4}, {0.5, 1.5, 40, 0.5});
  Tensor ri = run1(opNode("Pow", 2), {&bi, &ef});
  EXPECT_EQ(undefIn(ri), (std::vector<bool>{false, false, true, true}));
  EXPECT_EQ(ri.getInt(0), 1);
  EXPECT_EQ(ri.getInt(1), 11);
}

// ---- Mod ----------------------------------------------------------------------

TEST(ElementwiseMod, IntegerModTakesTheDivisorsSign) {
  // test_mod_mixed_sign_int{8,16,32,64}: fmod = 0.
  for (DType t : {DType::I8, DType::I16, DType::I32, DType::I64}) {
    Tensor x = intsOf(t, {6}, {-4, 7, 5, 4, -7, 8});
    Tensor y = intsOf(t, {6}, {2, -3, 8, -2, 3, 5});
    EXPECT_EQ(intsIn(run1(opNode("Mod", 2), {&x, &y})), (std::vector<int64_t>{0, -2, 5, 0, 2, 3}));
  }
  // test_mod_int64_fmod: fmod = 1 takes the dividend's sign.
  Tensor x = intsOf(DType::I64, {6}, {-4, 7, 5, 4, -7, 8});
  Tensor y = intsOf(DType::I64, {6}, {2, -3, 8, -2, 3, 5});
  EXPECT_EQ(intsIn(run1(opNode("Mod", 2, {{"fmod", AttrValue::ofInt(1)}}), {&x, &y})),
            (std::vector<int64_t>{0, 1, 5, 0, -1, 3}));
  // test_mod_broadcast: [3, 2, 5] mod [1].
  Tensor r = intsOf(DType::I32, {1, 2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor seven = intsOf(DType::I32, {1}, {7});
  EXPECT_EQ(intsIn(run1(opNode("Mod", 2), {&r, &seven})),
            (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 0, 1, 2}));
}

TEST(ElementwiseMod, ZeroDivisorAndIntMin) {
  Tensor x = intsOf(DType::I32, {3}, {5, INT32_MIN, INT32_MIN});
  Tensor y = intsOf(DType::I32, {3}, {0, -1, 3});
  Tensor r = run1(opNode("Mod", 2), {&x, &y});
  EXPECT_EQ(undefIn(r), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(r.getInt(1), 0); // every x mod -1 is 0
  EXPECT_EQ(r.getInt(2), 1); // -2147483648 = 3 * -715827883 + 1
  Tensor i64 = intsOf(DType::I64, {1}, {INT64_MIN});
  Tensor m1 = intsOf(DType::I64, {1}, {-1});
  EXPECT_EQ(run1(opNode("Mod", 2, {{"fmod", AttrValue::ofInt(1)}}), {&i64, &m1}).getInt(0), 0);
  // test_mod_uint{8,16,32,64}; u64 above 2^63.
  Tensor u = intsOf(DType::U64, {4}, {4, 7, 5, -1});
  Tensor v = intsOf(DType::U64, {4}, {2, 3, 8, 10});
  EXPECT_EQ(intsIn(run1(opNode("Mod", 2), {&u, &v})), (std::vector<int64_t>{0, 1, 5, 5}));
}

TEST(ElementwiseMod, FloatsNeedFmod) {
  // test_mod_mixed_sign_float{16,32,64} (fmod = 1): exact remainders.
  AttrMap fm{{"fmod", AttrValue::ofInt(1)}};
  Tensor x = tensorOf(DType::F64, {6}, {-4.3, 7.2, 5, 4.3, -7.2, 8});
  Tensor y = tensorOf(DType::F64, {6}, {2.1, -3.4, 8, -2.1, 3.4, 5});
  Tensor r = run1(opNode("Mod", 2, fm), {&x, &y});
  for (int64_t i = 0; i < 6; ++i)
    EXPECT_EQ(r.getDouble(i), std::fmod(x.getDouble(i), y.getDouble(i)));
  Tensor h = tensorOf(DType::F16, {2}, {-4.3, 7.2});
  Tensor k = tensorOf(DType::F16, {2}, {2.1, -3.4});
  expectExact(run1(opNode("Mod", 2, fm), {&h, &k}), {-0.1015625, 0.3984375});
  Tensor f = tensorOf(DType::F32, {5}, {5.5, -5.5, 5.5, 1e10, 1});
  Tensor g = tensorOf(DType::F32, {5}, {2, 2, -2, 3, 0});
  expectExact(run1(opNode("Mod", 2, fm), {&f, &g}), {1.5, -1.5, 1.5, 1, kNaN});
  EXPECT_EQ(inferError(opNode("Mod", 2), {tt(DType::F32, {2}), tt(DType::F32, {2})}),
            "Mod of f32 needs fmod = 1 (fmod = 0 is for integers)");
  EXPECT_EQ(inferError(opNode("Mod", 2, {{"fmod", AttrValue::ofInt(2)}}),
                       {tt(DType::I32, {2}), tt(DType::I32, {2})}),
            "fmod of Mod must be 0 or 1, got 2");
}

// ---- Max / Min / Sum / Mean ---------------------------------------------------

TEST(ElementwiseVariadic, MaxMinOfSeveralInputs) {
  // test_max_example, test_min_example, test_*_one_input.
  Tensor a = tensorOf(DType::F32, {3}, {3, 2, 1});
  Tensor b = tensorOf(DType::F32, {3}, {1, 4, 4});
  Tensor c = tensorOf(DType::F32, {3}, {2, 5, 3});
  Tensor c0 = tensorOf(DType::F32, {3}, {2, 5, 0});
  expectExact(run1(opNode("Max", 3), {&a, &b, &c}), {3, 5, 4});
  expectExact(run1(opNode("Min", 3), {&a, &b, &c0}), {1, 2, 0});
  expectExact(run1(opNode("Max", 1), {&a}), {3, 2, 1});
  // Broadcasting over all inputs: [2, 1], [3], [] -> [2, 3].
  Tensor p = tensorOf(DType::F32, {2, 1}, {0, 10});
  Tensor q = tensorOf(DType::F32, {3}, {-1, 5, 20});
  Tensor s = tensorOf(DType::F32, {}, {4});
  Tensor m = run1(opNode("Max", 3), {&p, &q, &s});
  EXPECT_EQ(m.type(), tt(DType::F32, {2, 3}));
  expectExact(m, {4, 5, 20, 10, 10, 20});
}

TEST(ElementwiseVariadic, MaxMinEveryDtype) {
  // test_max_{int8..uint64,float16..float64}, test_min_*.
  for (DType t : {DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::U16, DType::U32,
                  DType::U64}) {
    Tensor a = intsOf(t, {3}, {3, 2, 1});
    Tensor b = intsOf(t, {3}, {1, 4, 4});
    EXPECT_EQ(intsIn(run1(opNode("Max", 2), {&a, &b})), (std::vector<int64_t>{3, 4, 4}));
    EXPECT_EQ(intsIn(run1(opNode("Min", 2), {&a, &b})), (std::vector<int64_t>{1, 2, 1}));
  }
  for (DType t : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    Tensor a = tensorOf(t, {3}, {3, 2, 1});
    Tensor b = tensorOf(t, {3}, {1, 4, 4});
    expectExact(run1(opNode("Max", 2), {&a, &b}), {3, 4, 4});
    expectExact(run1(opNode("Min", 2), {&a, &b}), {1, 2, 1});
  }
  // Unsigned compare above 2^63; signed extremes.
  Tensor u = intsOf(DType::U64, {2}, {INT64_MIN + 5, 1});
  Tensor v = intsOf(DType::U64, {2}, {7, 2});
  Tensor mu = run1(opNode("Max", 2), {&u, &v});
  EXPECT_EQ(loadUInt(DType::U64, mu.at(0)), (1ull << 63) + 5);
  EXPECT_EQ(intsIn(run1(opNode("Min", 2), {&u, &v})), (std::vector<int64_t>{7, 1}));
  Tensor i = intsOf(DType::I64, {2}, {INT64_MIN, INT64_MAX});
  Tensor j = intsOf(DType::I64, {2}, {0, 0});
  EXPECT_EQ(intsIn(run1(opNode("Min", 2), {&i, &j})), (std::vector<int64_t>{INT64_MIN, 0}));
}

TEST(ElementwiseVariadic, MaxMinNaNAndSignedZero) {
  // NaN wins whatever its position; +0 > -0 in either order.
  Tensor a = tensorOf(DType::F32, {4}, {kNaN, 1, 0, -0.0});
  Tensor b = tensorOf(DType::F32, {4}, {1, kNaN, -0.0, 0});
  expectExact(run1(opNode("Max", 2), {&a, &b}), {kNaN, kNaN, 0, 0});
  expectExact(run1(opNode("Min", 2), {&a, &b}), {kNaN, kNaN, -0.0, -0.0});
  Tensor c = tensorOf(DType::F32, {4}, {2, 2, kInf, -kInf});
  expectExact(run1(opNode("Max", 3), {&a, &b, &c}), {kNaN, kNaN, kInf, 0});
}

TEST(ElementwiseVariadic, SumAndMean) {
  // test_sum_example, test_mean_example, test_mean_two_inputs.
  Tensor a = tensorOf(DType::F32, {3}, {3, 0, 2});
  Tensor b = tensorOf(DType::F32, {3}, {1, 3, 4});
  Tensor c = tensorOf(DType::F32, {3}, {2, 6, 6});
  expectExact(run1(opNode("Sum", 3), {&a, &b, &c}), {6, 9, 12});
  expectExact(run1(opNode("Mean", 3), {&a, &b, &c}), {2, 3, 4});
  expectExact(run1(opNode("Mean", 2), {&a, &b}), {2, 1.5, 3});
  expectExact(run1(opNode("Sum", 1), {&a}), {3, 0, 2});
  // f32 adds in input order: (0.1 + 0.2) + 0.3.
  Tensor x = tensorOf(DType::F32, {}, {0.1});
  Tensor y = tensorOf(DType::F32, {}, {0.2});
  Tensor z = tensorOf(DType::F32, {}, {0.3});
  expectExact(run1(opNode("Sum", 3), {&x, &y, &z}), {static_cast<double>((0.1f + 0.2f) + 0.3f)});
  // f16: the sum and the division in f32, one rounding: (1 + 2 + 4) / 3.
  Tensor h1 = tensorOf(DType::F16, {}, {1});
  Tensor h2 = tensorOf(DType::F16, {}, {2});
  Tensor h4 = tensorOf(DType::F16, {1}, {4});
  Tensor hm = run1(opNode("Mean", 3), {&h1, &h2, &h4});
  EXPECT_EQ(hm.type(), tt(DType::F16, {1}));
  expectExact(hm, {2.333984375});
  // Broadcast and indeterminate propagation.
  Tensor p = tensorOf(DType::F64, {2, 1}, {1, 2});
  Tensor q = tensorOf(DType::F64, {2}, {10, 20});
  q.setUndef(0);
  Tensor s = run1(opNode("Sum", 2), {&p, &q});
  EXPECT_EQ(undefIn(s), (std::vector<bool>{true, false, true, false}));
  EXPECT_EQ(s.getDouble(1), 21);
  EXPECT_EQ(s.getDouble(3), 22);
}

// ---- Inference errors ----------------------------------------------------------

TEST(ElementwiseInfer, Errors) {
  EXPECT_EQ(inferError(opNode("Add", 2), {tt(DType::F32, {2}), tt(DType::F16, {2})}),
            "inputs 0 and 1 of Add have different dtypes (f32 and f16)");
  EXPECT_EQ(inferError(opNode("Mul", 2), {tt(DType::F32, {2, 3}), tt(DType::F32, {2})}),
            "input shapes of Mul do not broadcast: [2, 3] and [2] (input 1)");
  EXPECT_EQ(
      inferError(opNode("Sub", 3), {tt(DType::F32, {2}), tt(DType::F32, {2}), tt(DType::F32, {2})}),
      "Sub takes 2 inputs, got 3");
  EXPECT_EQ(inferError(opNode("Div", 2), {tt(DType::Bool, {2}), tt(DType::Bool, {2})}),
            "Div does not accept bool (input 0); allowed: i8, u8, i16, u16, i32, u32, i64, u64, "
            "f16, bf16, f32, f64");
  EXPECT_EQ(inferError(opNode("Add", 2), {tt(DType::F32, {2}), std::nullopt}),
            "input 1 of Add is not connected");
  EXPECT_EQ(inferError(opNode("Max", 0), {}), "Max takes at least 1 input, got 0");
  EXPECT_EQ(inferError(opNode("Sum", 2), {tt(DType::I32, {2}), tt(DType::I32, {2})}),
            "Sum does not accept i32 (input 0); allowed: f16, bf16, f32, f64");
  EXPECT_EQ(
      inferError(opNode("Min", 3), {tt(DType::F32, {2}), tt(DType::F32, {3}), tt(DType::F32, {1})}),
      "input shapes of Min do not broadcast: [2] and [3] (input 1)");
  EXPECT_EQ(inferError(opNode("Pow", 2), {tt(DType::U8, {2}), tt(DType::F32, {2})}),
            "Pow does not accept u8 (input 0); allowed: i32, i64, f16, bf16, f32, f64");
  EXPECT_EQ(inferError(opNode("Pow", 2), {tt(DType::F32, {2}), tt(DType::Bool, {2})}),
            "Pow does not accept bool (input 1); allowed: i8, u8, i16, u16, i32, u32, i64, "
            "u64, f16, bf16, f32, f64");
  // Success: output types.
  std::string error;
  std::vector<std::optional<TensorType>> ins{tt(DType::I64, {4, 1}), tt(DType::F32, {3})};
  std::vector<const Tensor *> none(2, nullptr);
  auto out = inferNodeTypes(opNode("Pow", 2), ins, none, error);
  ASSERT_TRUE(out) << error;
  EXPECT_EQ((*out)[0], tt(DType::I64, {4, 3}));
}

} // namespace
} // namespace graphvet::testing
