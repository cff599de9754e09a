// Type inference and kernel tests of the logic family (src/ir/ops/logic.cpp):
// comparisons, boolean ops, Where, IsNaN and IsInf. Casts are tested in
// logic_cast_test.cpp, Dropout and the random ops in logic_random_test.cpp.
// Expected values were checked with numpy or taken from ONNX's conformance
// data (test names given).
#include "kernel_test_util.h"

#include <cmath>
#include <limits>

namespace graphvet::testing {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<double> bools(const Tensor &t) {
  EXPECT_EQ(t.dtype(), DType::Bool);
  return valuesOf(t);
}

Tensor binary(const std::string &op, const Tensor &a, const Tensor &b) {
  auto out = run(opNode(op, 2), {&a, &b});
  return out.empty() ? Tensor() : out[0];
}

// --- Comparisons -----------------------------------------------------------

TEST(LogicCompare, Int32BroadcastAllFive) {
  // numpy: a = [[1,-2,3],[4,5,-6]], b = [1,5,-6] (int32).
  Tensor a = tensorOf(DType::I32, {2, 3}, {1, -2, 3, 4, 5, -6});
  Tensor b = tensorOf(DType::I32, {3}, {1, 5, -6});
  Tensor eq = binary("Equal", a, b);
  EXPECT_EQ(eq.shape(), (Shape{2, 3}));
  EXPECT_EQ(bools(eq), (std::vector<double>{1, 0, 0, 0, 1, 1}));
  EXPECT_EQ(bools(binary("Less", a, b)), (std::vector<double>{0, 1, 0, 0, 0, 0}));
  EXPECT_EQ(bools(binary("Greater", a, b)), (std::vector<double>{0, 0, 1, 1, 0, 0}));
  EXPECT_EQ(bools(binary("LessOrEqual", a, b)), (std::vector<double>{1, 1, 0, 0, 1, 1}));
  EXPECT_EQ(bools(binary("GreaterOrEqual", a, b)), (std::vector<double>{1, 0, 1, 1, 1, 1}));
}

TEST(LogicCompare, ConformanceGreaterBcastPrefix) {
  // test_greater_bcast: the first row of x (3,4,5) against y (5,).
  Tensor x = tensorOf(DType::F32, {1, 5}, {1.7640524, 0.4001572, 0.978738, 2.2408931, 1.867558});
  Tensor y =
      tensorOf(DType::F32, {5}, {-0.67246044, -0.35955316, -0.8131463, -1.7262826, 0.17742614});
  EXPECT_EQ(bools(binary("Greater", x, y)), (std::vector<double>{1, 1, 1, 1, 1}));
  EXPECT_EQ(bools(binary("Less", x, y)), (std::vector<double>{0, 0, 0, 0, 0}));
}

TEST(LogicCompare, FloatIEEE) {
  // NaN compares false (Equal too); -0 == +0; infinities are ordered.
  Tensor a = tensorOf(DType::F32, {5}, {kNaN, -0.0, -kInf, kInf, 1.0});
  Tensor b = tensorOf(DType::F32, {5}, {kNaN, 0.0, -kInf, 1e38, kNaN});
  EXPECT_EQ(bools(binary("Equal", a, b)), (std::vector<double>{0, 1, 1, 0, 0}));
  EXPECT_EQ(bools(binary("Less", a, b)), (std::vector<double>{0, 0, 0, 0, 0}));
  EXPECT_EQ(bools(binary("Greater", a, b)), (std::vector<double>{0, 0, 0, 1, 0}));
  EXPECT_EQ(bools(binary("LessOrEqual", a, b)), (std::vector<double>{0, 1, 1, 0, 0}));
  EXPECT_EQ(bools(binary("GreaterOrEqual", a, b)), (std::vector<double>{0, 1, 1, 1, 0}));
}

TEST(LogicCompare, SixteenBitFloatsAndF64) {
  for (DType t : {DType::F16, DType::BF16, DType::F64}) {
    Tensor a = tensorOf(t, {3}, {1.5, -2.0, kNaN});
    Tensor b = tensorOf(t, {3}, {1.5, 3.0, 0.0});
    EXPECT_EQ(bools(binary("Equal", a, b)), (std::vector<double>{1, 0, 0})) << dtypeName(t);
    EXPECT_EQ(bools(binary("Less", a, b)), (std::vector<double>{0, 1, 0})) << dtypeName(t);
  }
}

TEST(LogicCompare, IntegerExtremes) {
  // u64 compares unsigned (2^63 > 1), i64 signed (INT64_MIN < 1).
  Tensor a(TensorType{DType::U64, {2}});
  storeInt(DType::U64, a.at(0), INT64_MIN); // 2^63
  storeInt(DType::U64, a.at(1), -1);        // 2^64 - 1
  Tensor b = tensorOf(DType::U64, {2}, {1, 1});
  EXPECT_EQ(bools(binary("Greater", a, b)), (std::vector<double>{1, 1}));
  Tensor c(TensorType{DType::I64, {2}});
  c.setInt(0, INT64_MIN);
  c.setInt(1, INT64_MAX);
  Tensor d = tensorOf(DType::I64, {2}, {1, 1});
  EXPECT_EQ(bools(binary("Less", c, d)), (std::vector<double>{1, 0}));
  Tensor e = tensorOf(DType::U8, {2}, {255, 0});
  Tensor f = tensorOf(DType::U8, {2}, {1, 0});
  EXPECT_EQ(bools(binary("GreaterOrEqual", e, f)), (std::vector<double>{1, 1}));
}

TEST(LogicCompare, EqualOnBools) {
  Tensor a = tensorOf(DType::Bool, {4}, {0, 0, 1, 1});
  Tensor b = tensorOf(DType::Bool, {4}, {0, 1, 0, 1});
  EXPECT_EQ(bools(binary("Equal", a, b)), (std::vector<double>{1, 0, 0, 1}));
}

TEST(LogicCompare, IndeterminatePropagates) {
  Tensor a = tensorOf(DType::F32, {2, 2}, {1, 2, 3, 4});
  Tensor b = tensorOf(DType::F32, {2}, {1, 5});
  b.setUndef(1);
  a.setUndef(2);
  Tensor eq = binary("Equal", a, b);
  EXPECT_FALSE(eq.isUndef(0));
  EXPECT_TRUE(eq.isUndef(1)); // reads b[1]
  EXPECT_TRUE(eq.isUndef(2)); // reads a[2]
  EXPECT_TRUE(eq.isUndef(3)); // reads b[1]
  EXPECT_EQ(eq.getInt(0), 1);
}

TEST(LogicCompare, InferenceErrors) {
  Node eq = opNode("Equal", 2);
  EXPECT_EQ(inferError(eq, {TensorType{DType::F32, {2}}, TensorType{DType::F32, {2}}}), "");
  EXPECT_NE(inferError(eq, {TensorType{DType::F32, {2}}, TensorType{DType::I32, {2}}})
                .find("must have one dtype"),
            std::string::npos);
  EXPECT_NE(inferError(eq, {TensorType{DType::F32, {2, 3}}, TensorType{DType::F32, {2}}})
                .find("do not broadcast"),
            std::string::npos);
  EXPECT_NE(
      inferError(opNode("Less", 2), {TensorType{DType::Bool, {2}}, TensorType{DType::Bool, {2}}})
          .find("bool"),
      std::string::npos);
  EXPECT_NE(inferError(opNode("Greater", 1), {TensorType{DType::F32, {2}}}).find("2 inputs"),
            std::string::npos);
  EXPECT_NE(inferError(opNode("Greater", 2), {TensorType{DType::F32, {2}}, std::nullopt})
                .find("must be connected"),
            std::string::npos);
}

// --- Boolean ops -----------------------------------------------------------

TEST(LogicBool, TruthTablesBroadcast) {
  // numpy: x (2,1) = [[T],[F]], y (1,3) = [[T,F,T]].
  Tensor x = tensorOf(DType::Bool, {2, 1}, {1, 0});
  Tensor y = tensorOf(DType::Bool, {1, 3}, {1, 0, 1});
  Tensor a = binary("And", x, y);
  EXPECT_EQ(a.shape(), (Shape{2, 3}));
  EXPECT_EQ(bools(a), (std::vector<double>{1, 0, 1, 0, 0, 0}));
  EXPECT_EQ(bools(binary("Or", x, y)), (std::vector<double>{1, 1, 1, 1, 0, 1}));
  EXPECT_EQ(bools(binary("Xor", x, y)), (std::vector<double>{0, 1, 0, 1, 0, 1}));
}

TEST(LogicBool, ConformanceXor2dAndNot2d) {
  // test_xor2d and test_not_2d (3x4).
  Tensor x = tensorOf(DType::Bool, {3, 4}, {1, 1, 1, 1, 1, 0, 1, 0, 0, 1, 1, 1});
  Tensor y = tensorOf(DType::Bool, {3, 4}, {1, 1, 1, 1, 1, 0, 1, 0, 0, 1, 1, 0});
  EXPECT_EQ(bools(binary("Xor", x, y)), (std::vector<double>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}));
  auto n = run(opNode("Not", 1), {&x});
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(bools(n[0]), (std::vector<double>{0, 0, 0, 0, 0, 1, 0, 1, 1, 0, 0, 0}));
}

TEST(LogicBool, NonCanonicalBoolBytesReadAsTrue) {
  Tensor x(TensorType{DType::Bool, {2}}, {2, 0});
  auto n = run(opNode("Not", 1), {&x});
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(bools(n[0]), (std::vector<double>{0, 1}));
}

TEST(LogicBool, IndeterminatePropagates) {
  Tensor x = tensorOf(DType::Bool, {3}, {0, 1, 1});
  Tensor y = tensorOf(DType::Bool, {3}, {1, 1, 0});
  x.setUndef(0);
  Tensor a = binary("And", x, y);
  EXPECT_TRUE(a.isUndef(0));
  EXPECT_FALSE(a.isUndef(1));
  EXPECT_EQ(a.getInt(1), 1);
  auto n = run(opNode("Not", 1), {&x});
  ASSERT_EQ(n.size(), 1u);
  EXPECT_TRUE(n[0].isUndef(0));
  EXPECT_EQ(n[0].getInt(2), 0);
}

TEST(LogicBool, InferenceErrors) {
  EXPECT_NE(
      inferError(opNode("And", 2), {TensorType{DType::I32, {2}}, TensorType{DType::Bool, {2}}})
          .find("input 0 of And must be one of bool, got i32"),
      std::string::npos);
  EXPECT_NE(inferError(opNode("Not", 1), {TensorType{DType::F32, {2}}}).find("bool"),
            std::string::npos);
  EXPECT_NE(
      inferError(opNode("Or", 2), {TensorType{DType::Bool, {3}}, TensorType{DType::Bool, {2}}})
          .find("do not broadcast"),
      std::string::npos);
}

// --- Where -----------------------------------------------------------------

TEST(LogicWhere, ConformanceExamples) {
  // test_where_example (f32) and test_where_long_example (i64).
  Tensor c = tensorOf(DType::Bool, {2, 2}, {1, 0, 1, 1});
  Tensor x = tensorOf(DType::F32, {2, 2}, {1, 2, 3, 4});
  Tensor y = tensorOf(DType::F32, {2, 2}, {9, 8, 7, 6});
  auto r = run(opNode("Where", 3), {&c, &x, &y});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].dtype(), DType::F32);
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{1, 8, 3, 4}));
  Tensor xl = tensorOf(DType::I64, {2, 2}, {1, 2, 3, 4});
  Tensor yl = tensorOf(DType::I64, {2, 2}, {9, 8, 7, 6});
  r = run(opNode("Where", 3), {&c, &xl, &yl});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].dtype(), DType::I64);
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{1, 8, 3, 4}));
}

TEST(LogicWhere, ThreeWayBroadcast) {
  // numpy: np.where([[T],[F]], f32[1,2,3], f32(-1)) -> (2,3).
  Tensor c = tensorOf(DType::Bool, {2, 1}, {1, 0});
  Tensor x = tensorOf(DType::F32, {3}, {1, 2, 3});
  Tensor y = tensorOf(DType::F32, {}, {-1});
  auto r = run(opNode("Where", 3), {&c, &x, &y});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{1, 2, 3, -1, -1, -1}));
}

TEST(LogicWhere, Indeterminate) {
  Tensor c = tensorOf(DType::Bool, {3}, {1, 0, 1});
  Tensor x = tensorOf(DType::F32, {3}, {1, 2, 3});
  Tensor y = tensorOf(DType::F32, {3}, {4, 5, 6});
  c.setUndef(2); // an indeterminate condition: indeterminate
  x.setUndef(1); // not selected: no effect
  y.setUndef(1); // selected: indeterminate
  y.setUndef(0); // not selected
  auto r = run(opNode("Where", 3), {&c, &x, &y});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FALSE(r[0].isUndef(0));
  EXPECT_EQ(r[0].getDouble(0), 1);
  EXPECT_TRUE(r[0].isUndef(1));
  EXPECT_TRUE(r[0].isUndef(2));
}

TEST(LogicWhere, KeepsNaNAndNegativeZeroBits) {
  Tensor c = tensorOf(DType::Bool, {2}, {1, 0});
  Tensor x = tensorOf(DType::F32, {2}, {-0.0, 0});
  Tensor y = tensorOf(DType::F32, {2}, {0, kNaN});
  auto r = run(opNode("Where", 3), {&c, &x, &y});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(std::signbit(r[0].getDouble(0)));
  EXPECT_TRUE(std::isnan(r[0].getDouble(1)));
}

TEST(LogicWhere, InferenceErrors) {
  Node w = opNode("Where", 3);
  EXPECT_NE(inferError(w, {TensorType{DType::F32, {2}}, TensorType{DType::F32, {2}},
                           TensorType{DType::F32, {2}}})
                .find("condition"),
            std::string::npos);
  EXPECT_NE(inferError(w, {TensorType{DType::Bool, {2}}, TensorType{DType::F32, {2}},
                           TensorType{DType::F16, {2}}})
                .find("one dtype"),
            std::string::npos);
  EXPECT_NE(inferError(w, {TensorType{DType::Bool, {2}}, TensorType{DType::F32, {2}},
                           TensorType{DType::F32, {3}}})
                .find("do not broadcast"),
            std::string::npos);
  EXPECT_NE(
      inferError(opNode("Where", 2), {TensorType{DType::Bool, {2}}, TensorType{DType::F32, {2}}})
          .find("3 inputs"),
      std::string::npos);
}

// --- IsNaN, IsInf ----------------------------------------------------------

TEST(LogicIsNaN, ConformanceAndDTypes) {
  // test_isnan: [3, nan, 4, nan] -> [F, T, F, T].
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64}) {
    Tensor x = tensorOf(t, {4}, {3, kNaN, 4, kNaN});
    auto r = run(opNode("IsNaN", 1), {&x});
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(bools(r[0]), (std::vector<double>{0, 1, 0, 1})) << dtypeName(t);
  }
  Tensor x = tensorOf(DType::F32, {3}, {kInf, -0.0, kNaN});
  x.setUndef(2);
  auto r = run(opNode("IsNaN", 1), {&x});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].getInt(0), 0);
  EXPECT_EQ(r[0].getInt(1), 0);
  EXPECT_TRUE(r[0].isUndef(2));
  EXPECT_NE(inferError(opNode("IsNaN", 1), {TensorType{DType::I32, {2}}}).find("must be one of"),
            std::string::npos);
}

TEST(LogicIsInf, ConformanceDetectAttributes) {
  // test_isinf, test_isinf_negative (detect_positive = 0),
  // test_isinf_positive (detect_negative = 0).
  Tensor x = tensorOf(DType::F32, {6}, {-1.2, kNaN, kInf, 2.8, -kInf, kInf});
  auto r = run(opNode("IsInf", 1), {&x});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(bools(r[0]), (std::vector<double>{0, 0, 1, 0, 1, 1}));
  r = run(opNode("IsInf", 1, {{"detect_positive", AttrValue::ofInt(0)}}), {&x});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(bools(r[0]), (std::vector<double>{0, 0, 0, 0, 1, 0}));
  r = run(opNode("IsInf", 1, {{"detect_negative", AttrValue::ofInt(0)}}), {&x});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(bools(r[0]), (std::vector<double>{0, 0, 1, 0, 0, 1}));
  Tensor d = tensorOf(DType::F64, {3}, {1e308, -kInf, 0});
  d.setUndef(0);
  r = run(opNode("IsInf", 1), {&d});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].isUndef(0));
  EXPECT_EQ(r[0].getInt(1), 1);
  EXPECT_EQ(r[0].getInt(2), 0);
  // ONNX IsInf-10 takes float and double only.
  EXPECT_NE(inferError(opNode("IsInf", 1), {TensorType{DType::F16, {2}}}).find("f32, f64"),
            std::string::npos);
}

TEST(LogicRows, FamilyRowsHaveKernels) {
  for (const char *op : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not", "And",
                         "Or", "Xor", "Where", "IsNaN", "IsInf", "Cast", "CastLike", "Dropout",
                         "RandomUniformLike", "RandomNormalLike", "Bernoulli"}) {
    EXPECT_TRUE(isNumericOp(op)) << op;
    EXPECT_EQ(lookupOp(op).shapeOperands, 0u) << op;
  }
  for (const char *op : {"Dropout", "RandomUniformLike", "RandomNormalLike", "Bernoulli"})
    EXPECT_TRUE(lookupOp(op).nondeterministic) << op;
  for (const char *op : {"Equal", "Where", "Cast", "CastLike"})
    EXPECT_FALSE(lookupOp(op).nondeterministic) << op;
  // Identity stays the copy row of the memory table.
  EXPECT_EQ(lookupOp("Identity").kind, OpKind::Copy);
}

} // namespace
} // namespace graphvet::testing
