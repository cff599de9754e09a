// Type inference and kernel tests of the reduce family (src/ir/ops/reduce.cpp,
// softmax.cpp, matmul.cpp). Expected values come from ONNX's conformance data
// (onnx 1.12 backend node tests) or were checked with numpy.
#include "kernel_test_util.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace graphvet::testing {
namespace {

AttrValue ints(std::initializer_list<int64_t> v) {
  AttrValue::List l;
  for (int64_t x : v)
    l.push_back(AttrValue::ofInt(x));
  return AttrValue::ofList(std::move(l));
}

AttrValue i(int64_t v) {
  return AttrValue::ofInt(v);
}

/// ONNX float32 attributes as the importer stores them (the float's value).
AttrValue f(float v) {
  return AttrValue::ofFloat(v);
}

const Tensor data12 = tensorOf(DType::F32, {3, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
const Tensor mixed12 = tensorOf(DType::F32, {3, 2, 2}, {5, 1, 20, 2, 30, 1, 40, 2, 55, 1, 60, 2});

std::vector<int64_t> intsOf(const Tensor &t) {
  std::vector<int64_t> v;
  for (int64_t k = 0; k < t.size(); ++k)
    v.push_back(t.getInt(k));
  return v;
}

std::vector<bool> undefOf(const Tensor &t) {
  std::vector<bool> v;
  for (int64_t k = 0; k < t.size(); ++k)
    v.push_back(t.isUndef(k));
  return v;
}

/// Float results within a relative `rel` of numpy's (which rounds in other places).
void expectClose(const Tensor &t, const std::vector<double> &want, double rel = 1e-6) {
  ASSERT_EQ(t.size(), static_cast<int64_t>(want.size()));
  for (int64_t k = 0; k < t.size(); ++k)
    EXPECT_NEAR(t.getDouble(k), want[k], rel * std::fabs(want[k])) << "element " << k;
}

uint32_t bitsOf(const Tensor &t, int64_t k) {
  uint32_t b;
  std::memcpy(&b, t.at(k), 4);
  return b;
}

// --------------------------------------------------------------- reductions

TEST(ReduceOps, SumWithAxesInputMatchesConformance) {
  Tensor axes = tensorOf(DType::I64, {1}, {1});
  auto out = run(opNode("ReduceSum", 2, {{"keepdims", i(1)}}), {&data12, &axes});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type(), (TensorType{DType::F32, {3, 1, 2}}));
  EXPECT_EQ(valuesOf(out[0]), (std::vector<double>{4, 6, 12, 14, 20, 22}));
  // Negative axis, keepdims = 0.
  Tensor neg = tensorOf(DType::I64, {1}, {-2});
  out = run(opNode("ReduceSum", 2, {{"keepdims", i(0)}}), {&data12, &neg});
  EXPECT_EQ(out[0].type(), (TensorType{DType::F32, {3, 2}}));
  EXPECT_EQ(valuesOf(out[0]), (std::vector<double>{4, 6, 12, 14, 20, 22}));
}

TEST(ReduceOps, SumEmptyAxesReducesAllOrIsANoop) {
  Tensor none(TensorType{DType::I64, {0}});
  auto all = run(opNode("ReduceSum", 2, {}), {&data12, &none});
  EXPECT_EQ(all[0].type(), (TensorType{DType::F32, {1, 1, 1}}));
  EXPECT_EQ(valuesOf(all[0]), (std::vector<double>{78}));
  auto noop = run(opNode("ReduceSum", 2, {{"noop_with_empty_axes", i(1)}}), {&data12, &none});
  EXPECT_EQ(noop[0], data12);
  // Old opsets: no axes input, no attribute: every axis; keepdims = 0 gives a scalar.
  auto scalar = run(opNode("ReduceSum", 1, {{"keepdims", i(0)}}), {&data12});
  EXPECT_EQ(scalar[0].type(), (TensorType{DType::F32, {}}));
  EXPECT_EQ(valuesOf(scalar[0]), (std::vector<double>{78}));
}

TEST(ReduceOps, AxesAttributeOfOldOpsetsEqualsAxesInput) {
  Tensor axes = tensorOf(DType::I64, {2}, {0, 2});
  auto byInput = run(opNode("ReduceMean", 2, {{"keepdims", i(0)}}), {&data12, &axes});
  auto byAttr =
      run(opNode("ReduceMean", 1, {{"keepdims", i(0)}, {"axes", ints({2, 0})}}), {&data12});
  EXPECT_EQ(byInput[0].type(), (TensorType{DType::F32, {2}}));
  EXPECT_EQ(byInput[0], byAttr[0]);
  EXPECT_EQ(valuesOf(byAttr[0]),
            (std::vector<double>{(1 + 2 + 5 + 6 + 9 + 10) / 6.0, (3 + 4 + 7 + 8 + 11 + 12) / 6.0}));
}

TEST(ReduceOps, MeanMaxMinProdMatchConformance) {
  AttrMap a = {{"axes", ints({1})}, {"keepdims", i(1)}};
  EXPECT_EQ(valuesOf(run(opNode("ReduceMean", 1, a), {&mixed12})[0]),
            (std::vector<double>{12.5, 1.5, 35, 1.5, 57.5, 1.5}));
  EXPECT_EQ(valuesOf(run(opNode("ReduceMax", 1, a), {&mixed12})[0]),
            (std::vector<double>{20, 2, 40, 2, 60, 2}));
  EXPECT_EQ(valuesOf(run(opNode("ReduceMin", 1, a), {&mixed12})[0]),
            (std::vector<double>{5, 1, 30, 1, 55, 1}));
  EXPECT_EQ(valuesOf(run(opNode("ReduceProd", 1, a), {&data12})[0]),
            (std::vector<double>{3, 8, 35, 48, 99, 120}));
  EXPECT_EQ(valuesOf(run(opNode("ReduceProd", 1, {}), {&data12})[0]),
            (std::vector<double>{479001600}));
}

TEST(ReduceOps, NormsAndLogsMatchConformance) {
  AttrMap a = {{"axes", ints({2})}, {"keepdims", i(1)}};
  auto l2 = run(opNode("ReduceL2", 1, a), {&data12})[0];
  EXPECT_EQ(l2.type(), (TensorType{DType::F32, {3, 2, 1}}));
  std::vector<double> want = {2.2360680103302,    5.0,
                              7.8102498054504395, 10.630146026611328,
                              13.45362377166748,  16.278820037841797};
  for (int64_t k = 0; k < 6; ++k)
    EXPECT_EQ(l2.getDouble(k), want[k]) << k;
  EXPECT_EQ(valuesOf(run(opNode("ReduceL1", 1, a), {&data12})[0]),
            (std::vector<double>{3, 7, 11, 15, 19, 23}));
  EXPECT_EQ(valuesOf(run(opNode("ReduceSumSquare", 1, {{"axes", ints({1})}, {"keepdims", i(0)}}),
                         {&data12})[0]),
            (std::vector<double>{10, 20, 74, 100, 202, 244}));
  Tensor d = tensorOf(DType::F64, {3, 2, 2}, {5, 1, 20, 2, 30, 1, 40, 2, 55, 1, 60, 2});
  auto lse = run(opNode("ReduceLogSumExp", 1, {{"axes", ints({1})}}), {&d})[0];
  EXPECT_NEAR(lse.getDouble(0), 20.000000305902272, 1e-12);
  EXPECT_NEAR(lse.getDouble(1), 2.3132616875182226, 1e-12);
  EXPECT_NEAR(lse.getDouble(4), 60.00671534848912, 1e-12);
  Tensor three = tensorOf(DType::F32, {3}, {0.5, 1, 1.5});
  EXPECT_EQ(run(opNode("ReduceLogSum", 1, {}), {&three})[0].getDouble(0),
            static_cast<float>(std::log(3.0)));
}

TEST(ReduceOps, FloatSumsAccumulateInF32InCanonicalOrder) {
  // f32: 1e8 + 1 rounds back to 1e8; the order decides the result.
  Tensor a = tensorOf(DType::F32, {3}, {1e8, 1, -1e8});
  Tensor b = tensorOf(DType::F32, {3}, {1e8, -1e8, 1});
  EXPECT_EQ(valuesOf(run(opNode("ReduceSum", 1, {}), {&a})[0]), (std::vector<double>{0}));
  EXPECT_EQ(valuesOf(run(opNode("ReduceSum", 1, {}), {&b})[0]), (std::vector<double>{1}));
  // f16: accumulated in f16, 2048 + 1 + 1 would stay 2048; in f32 it is 2050.
  Tensor h = tensorOf(DType::F16, {3}, {2048, 1, 1});
  auto s = run(opNode("ReduceSum", 1, {}), {&h})[0];
  EXPECT_EQ(s.dtype(), DType::F16);
  EXPECT_EQ(valuesOf(s), (std::vector<double>{2050}));
  Tensor bf = tensorOf(DType::BF16, {2}, {1, 2});
  EXPECT_EQ(valuesOf(run(opNode("ReduceMean", 1, {}), {&bf})[0]), (std::vector<double>{1.5}));
  // f64 accumulates in f64.
  Tensor d = tensorOf(DType::F64, {3}, {1e8, 1, -1e8});
  EXPECT_EQ(valuesOf(run(opNode("ReduceSum", 1, {}), {&d})[0]), (std::vector<double>{1}));
}

TEST(ReduceOps, SizeOneAndEmptyReductions) {
  // A sum starts with its first term: reducing a size-1 axis is the identity, -0 kept.
  Tensor z = tensorOf(DType::F32, {1}, {-0.0});
  auto s = run(opNode("ReduceSum", 1, {}), {&z})[0];
  EXPECT_TRUE(std::signbit(s.getDouble(0)));
  Tensor empty(TensorType{DType::F32, {2, 0}});
  AttrMap a = {{"axes", ints({1})}, {"keepdims", i(0)}};
  auto sum = run(opNode("ReduceSum", 1, a), {&empty})[0];
  EXPECT_EQ(sum.type(), (TensorType{DType::F32, {2}}));
  EXPECT_EQ(valuesOf(sum), (std::vector<double>{0, 0}));
  EXPECT_FALSE(std::signbit(sum.getDouble(0)));
  EXPECT_EQ(valuesOf(run(opNode("ReduceProd", 1, a), {&empty})[0]), (std::vector<double>{1, 1}));
  EXPECT_EQ(run(opNode("ReduceMax", 1, a), {&empty})[0].getDouble(0), -INFINITY);
  EXPECT_EQ(run(opNode("ReduceMin", 1, a), {&empty})[0].getDouble(1), INFINITY);
  EXPECT_EQ(run(opNode("ReduceLogSum", 1, a), {&empty})[0].getDouble(0), -INFINITY);
  EXPECT_TRUE(std::isnan(run(opNode("ReduceMean", 1, a), {&empty})[0].getDouble(0)));
  Tensor emptyInt(TensorType{DType::I32, {2, 0}});
  EXPECT_EQ(intsOf(run(opNode("ReduceMax", 1, a), {&emptyInt})[0]),
            (std::vector<int64_t>{INT32_MIN, INT32_MIN}));
  auto mean = run(opNode("ReduceMean", 1, a), {&emptyInt})[0];
  EXPECT_TRUE(mean.isUndef(0) && mean.isUndef(1)) << "integer division by zero";
}

TEST(ReduceOps, MaxMinPropagateNaNAndOrderSignedZeros) {
  Tensor x = tensorOf(DType::F32, {2, 3}, {1, NAN, 3, -0.0, 0.0, -0.0});
  AttrMap a = {{"axes", ints({1})}, {"keepdims", i(0)}};
  auto mx = run(opNode("ReduceMax", 1, a), {&x})[0];
  auto mn = run(opNode("ReduceMin", 1, a), {&x})[0];
  EXPECT_TRUE(std::isnan(mx.getDouble(0)));
  EXPECT_TRUE(std::isnan(mn.getDouble(0)));
  EXPECT_EQ(mx.getDouble(1), 0.0);
  EXPECT_FALSE(std::signbit(mx.getDouble(1))) << "+0 is above -0";
  EXPECT_TRUE(std::signbit(mn.getDouble(1)));
  // Integers, including the types only ReduceMax/ReduceMin take.
  Tensor u = tensorOf(DType::U8, {3}, {7, 255, 0});
  EXPECT_EQ(intsOf(run(opNode("ReduceMax", 1, {}), {&u})[0]), (std::vector<int64_t>{255}));
  Tensor big(TensorType{DType::U64, {2}});
  big.setInt(0, -1); // 2^64 - 1
  big.setInt(1, 5);
  auto bmax = run(opNode("ReduceMax", 1, {}), {&big})[0];
  EXPECT_EQ(loadUInt(DType::U64, bmax.at(0)), UINT64_MAX);
  EXPECT_EQ(intsOf(run(opNode("ReduceMin", 1, {}), {&big})[0]), (std::vector<int64_t>{5}));
}

TEST(ReduceOps, IntegerReductionsWrapAndTruncate) {
  Tensor x = tensorOf(DType::I32, {2}, {INT32_MAX, 1});
  EXPECT_EQ(intsOf(run(opNode("ReduceSum", 1, {}), {&x})[0]), (std::vector<int64_t>{INT32_MIN}));
  Tensor p = tensorOf(DType::I64, {2}, {4611686018427387904.0, 4}); // 2^62 * 4 wraps to 0
  EXPECT_EQ(intsOf(run(opNode("ReduceProd", 1, {}), {&p})[0]), (std::vector<int64_t>{0}));
  Tensor m = tensorOf(DType::I32, {2, 2}, {-7, 0, INT32_MAX, INT32_MAX});
  AttrMap row = {{"axes", ints({1})}, {"keepdims", i(0)}};
  EXPECT_EQ(intsOf(run(opNode("ReduceMean", 1, row), {&m})[0]),
            (std::vector<int64_t>{-3, INT32_MAX}))
      << "truncated toward zero; the sum is kept in 64 bits";
  Tensor v = tensorOf(DType::I32, {2}, {-3, 4});
  EXPECT_EQ(intsOf(run(opNode("ReduceL1", 1, {}), {&v})[0]), (std::vector<int64_t>{7}));
  EXPECT_EQ(intsOf(run(opNode("ReduceSumSquare", 1, {}), {&v})[0]), (std::vector<int64_t>{25}));
  EXPECT_EQ(intsOf(run(opNode("ReduceL2", 1, {}), {&v})[0]), (std::vector<int64_t>{5}));
  Tensor w = tensorOf(DType::U32, {2}, {1, 2});
  EXPECT_EQ(intsOf(run(opNode("ReduceLogSum", 1, {}), {&w})[0]), (std::vector<int64_t>{1}));
  Tensor zero = tensorOf(DType::I64, {1}, {0});
  EXPECT_TRUE(run(opNode("ReduceLogSum", 1, {}), {&zero})[0].isUndef(0)) << "log 0 = -inf";
}

TEST(ReduceOps, IndeterminateElementsSpoilOnlyTheirOutputs) {
  Tensor x = data12;
  x.setUndef(5); // [1, 0, 1]
  AttrMap a = {{"axes", ints({1})}, {"keepdims", i(0)}};
  for (const char *op : {"ReduceSum", "ReduceMax", "ReduceL2", "ReduceMean"}) {
    auto out = run(opNode(op, 1, a), {&x})[0];
    EXPECT_EQ(undefOf(out), (std::vector<bool>{false, false, false, true, false, false})) << op;
  }
  auto noop =
      run(opNode("ReduceSum", 1, {{"axes", ints({})}, {"noop_with_empty_axes", i(1)}}), {&x});
  EXPECT_TRUE(noop[0].isUndef(5));
  EXPECT_FALSE(noop[0].isUndef(4));
}

TEST(ReduceOps, InferenceErrors) {
  std::optional<TensorType> f32 = TensorType{DType::F32, {3, 2}};
  std::optional<TensorType> axesType = TensorType{DType::I64, {1}};
  Tensor axes = tensorOf(DType::I64, {1}, {0});
  EXPECT_EQ(inferError(opNode("ReduceSum", 2, {}), {f32, axesType}),
            "input 1 (axes) of ReduceSum must be a constant");
  EXPECT_EQ(inferError(opNode("ReduceSum", 2, {}), {f32, axesType}, {nullptr, &axes}), "");
  EXPECT_NE(
      inferError(opNode("ReduceSum", 2, {{"axes", ints({0})}}), {f32, axesType}, {nullptr, &axes}),
      "");
  EXPECT_EQ(inferError(opNode("ReduceMax", 1, {{"axes", ints({0, -2})}}), {f32}),
            "axis -2 appears twice in axes");
  EXPECT_EQ(inferError(opNode("ReduceMin", 1, {{"axes", ints({2})}}), {f32}),
            "axis 2 is out of range for rank 2");
  EXPECT_EQ(inferError(opNode("ReduceProd", 1, {}), {TensorType{DType::Bool, {2}}}),
            "input 0 of ReduceProd has dtype bool; expected one of i32, u32, i64, u64, f16, bf16, "
            "f32, f64");
  EXPECT_NE(inferError(opNode("ReduceSum", 1, {}), {TensorType{DType::I8, {2}}}), "");
  EXPECT_EQ(inferError(opNode("ReduceMax", 1, {}), {TensorType{DType::I8, {2}}}), "");
  EXPECT_NE(inferError(opNode("ReduceMean", 3, {}), {f32, axesType, axesType}), "");
  Tensor f32Axes = tensorOf(DType::F32, {1}, {0});
  EXPECT_NE(inferError(opNode("ReduceSum", 2, {}), {f32, f32Axes.type()}, {nullptr, &f32Axes}), "");
}

TEST(ReduceOps, AxesAreShapeOperands) {
  for (const char *op :
       {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
        "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp", "CumSum"}) {
    EXPECT_EQ(lookupOp(op).shapeOperands, 0b10u) << op;
    EXPECT_TRUE(isNumericOp(op)) << op;
  }
  for (const char *op :
       {"ArgMax", "ArgMin", "Softmax", "LogSoftmax", "Hardmax", "MatMul", "Gemm"}) {
    EXPECT_EQ(lookupOp(op).shapeOperands, 0u) << op;
    EXPECT_TRUE(isNumericOp(op)) << op;
  }
}

// ----------------------------------------------------------- ArgMax, ArgMin

TEST(ReduceArg, MatchesConformanceExamples) {
  Tensor x = tensorOf(DType::F32, {2, 2}, {2, 1, 3, 10});
  auto def = run(opNode("ArgMax", 1, {{"keepdims", i(1)}}), {&x})[0];
  EXPECT_EQ(def.type(), (TensorType{DType::I64, {1, 2}}));
  EXPECT_EQ(intsOf(def), (std::vector<int64_t>{1, 1}));
  auto row = run(opNode("ArgMax", 1, {{"axis", i(1)}, {"keepdims", i(0)}}), {&x})[0];
  EXPECT_EQ(row.type(), (TensorType{DType::I64, {2}}));
  EXPECT_EQ(intsOf(row), (std::vector<int64_t>{0, 1}));
  auto mn = run(opNode("ArgMin", 1, {{"axis", i(-1)}}), {&x})[0];
  EXPECT_EQ(mn.type(), (TensorType{DType::I64, {2, 1}}));
  EXPECT_EQ(intsOf(mn), (std::vector<int64_t>{1, 0}));
}

TEST(ReduceArg, TiesNaNAndSelectLastIndex) {
  Tensor ties = tensorOf(DType::F32, {2, 2}, {2, 2, 3, 10});
  AttrMap last = {{"axis", i(1)}, {"keepdims", i(0)}, {"select_last_index", i(1)}};
  EXPECT_EQ(intsOf(run(opNode("ArgMax", 1, last), {&ties})[0]), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(intsOf(run(opNode("ArgMin", 1, last), {&ties})[0]), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(intsOf(run(opNode("ArgMax", 1, {{"axis", i(1)}}), {&ties})[0]),
            (std::vector<int64_t>{0, 1}));
  // A NaN is the extreme for both (numpy); -0 and +0 tie.
  Tensor n = tensorOf(DType::F64, {5}, {1, NAN, 5, NAN, -7});
  EXPECT_EQ(intsOf(run(opNode("ArgMax", 1, {}), {&n})[0]), (std::vector<int64_t>{1}));
  EXPECT_EQ(intsOf(run(opNode("ArgMin", 1, {}), {&n})[0]), (std::vector<int64_t>{1}));
  EXPECT_EQ(intsOf(run(opNode("ArgMin", 1, {{"select_last_index", i(1)}}), {&n})[0]),
            (std::vector<int64_t>{3}));
  Tensor z = tensorOf(DType::F32, {2}, {-0.0, 0.0});
  EXPECT_EQ(intsOf(run(opNode("ArgMax", 1, {}), {&z})[0]), (std::vector<int64_t>{0}));
  // Integer dtypes, unsigned compare.
  Tensor u(TensorType{DType::U64, {3}});
  u.setInt(0, 3);
  u.setInt(1, -1); // 2^64 - 1
  u.setInt(2, 4);
  EXPECT_EQ(intsOf(run(opNode("ArgMax", 1, {}), {&u})[0]), (std::vector<int64_t>{1}));
  Tensor s = tensorOf(DType::I8, {3}, {3, -128, 4});
  EXPECT_EQ(intsOf(run(opNode("ArgMin", 1, {}), {&s})[0]), (std::vector<int64_t>{1}));
}

TEST(ReduceArg, IndeterminateAndErrors) {
  Tensor x = tensorOf(DType::F32, {2, 2}, {2, 1, 3, 10});
  x.setUndef(2);
  auto out = run(opNode("ArgMax", 1, {{"axis", i(1)}}), {&x})[0];
  EXPECT_EQ(undefOf(out), (std::vector<bool>{false, true}));
  Tensor empty(TensorType{DType::F32, {0, 2}});
  auto e = run(opNode("ArgMax", 1, {}), {&empty})[0];
  EXPECT_EQ(e.type(), (TensorType{DType::I64, {1, 2}}));
  EXPECT_TRUE(e.isUndef(0) && e.isUndef(1));
  EXPECT_EQ(inferError(opNode("ArgMax", 1, {{"axis", i(2)}}), {TensorType{DType::F32, {2, 2}}}),
            "axis 2 is out of range for rank 2");
  EXPECT_NE(inferError(opNode("ArgMin", 1, {}), {TensorType{DType::F32, {}}}), "");
  EXPECT_NE(inferError(opNode("ArgMin", 1, {}), {TensorType{DType::Bool, {2}}}), "");
}

// ----------------------------------------------------------- softmax family

TEST(ReduceSoftmax, MatchesConformanceExamples) {
  Tensor x = tensorOf(DType::F32, {1, 3}, {-1, 0, 1});
  expectClose(run(opNode("Softmax", 1, {}), {&x})[0],
              {0.09003057330846786, 0.2447284609079361, 0.6652409434318542});
  expectClose(run(opNode("LogSoftmax", 1, {}), {&x})[0],
              {-2.4076061248779297, -1.4076060056686401, -0.40760600566864014});
  // Large inputs: the max is subtracted first.
  Tensor big = tensorOf(DType::F32, {2, 4}, {0, 1, 2, 3, 10000, 10001, 10002, 10003});
  std::vector<double> want = {-3.4401895999908447, -2.4401895999908447, -1.4401895999908447,
                              -0.4401896595954895};
  want.insert(want.end(), want.begin(), want.end());
  expectClose(run(opNode("LogSoftmax", 1, {}), {&big})[0], want);
  Tensor h = tensorOf(DType::F32, {4, 4}, {3, 0, 1, 2, 2, 5, 1, 0, 0, 1, 3, 2, 0, 1, 2, 3});
  EXPECT_EQ(valuesOf(run(opNode("Hardmax", 1, {}), {&h})[0]),
            (std::vector<double>{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
  Tensor ties = tensorOf(DType::F32, {1, 4}, {3, 3, 3, 1});
  EXPECT_EQ(valuesOf(run(opNode("Hardmax", 1, {}), {&ties})[0]), (std::vector<double>{1, 0, 0, 0}));
}

TEST(ReduceSoftmax, AxisOfOpset13AndCoercionOfOlderOpsets) {
  Tensor x = tensorOf(DType::F64, {2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  // Opset 13: along axis 1 only: pairs (0, 2), (1, 3), ...
  auto now = valuesOf(run(opNode("Softmax", 1, {{"axis", i(1)}}), {&x})[0]);
  std::vector<double> pair = {0.11920292202211755, 0.8807970779778825};
  EXPECT_NEAR(now[0], pair[0], 1e-15);
  EXPECT_NEAR(now[2], pair[1], 1e-15);
  EXPECT_NEAR(now[5], pair[0], 1e-15);
  // Opset 11: coerced to [2, 4] at axis 1 (the default there).
  auto old = valuesOf(run(opNode("Softmax", 1, {{"onnx_opset", i(11)}}), {&x})[0]);
  std::vector<double> four = {0.03205860328008498, 0.08714431874203256, 0.23688281808991016,
                              0.6439142598879724};
  for (int k = 0; k < 8; ++k)
    EXPECT_NEAR(old[k], four[k % 4], 1e-15) << k;
  // Opset 13's default axis is -1.
  auto last = valuesOf(run(opNode("Softmax", 1, {}), {&x})[0]);
  EXPECT_NEAR(last[0], 0.2689414213699951, 1e-15);
  auto hard = valuesOf(run(opNode("Hardmax", 1, {{"onnx_opset", i(12)}, {"axis", i(0)}}), {&x})[0]);
  EXPECT_EQ(hard, (std::vector<double>{0, 0, 0, 0, 0, 0, 0, 1}));
}

TEST(ReduceSoftmax, EqualsItsOnnxFunctionBodyBitForBitInF32) {
  // ReduceMax, Sub, Exp (f64, rounded once), ReduceSum, Div / Log, Sub.
  std::vector<float> v(24);
  uint32_t seed = 12345;
  for (float &e : v) {
    seed = seed * 1664525u + 1013904223u;
    e = static_cast<float>(static_cast<int32_t>(seed >> 8) % 20000) / 997.0f;
  }
  Tensor x(TensorType{DType::F32, {4, 6}});
  for (int k = 0; k < 24; ++k)
    x.setDouble(k, v[k]);
  auto sm = run(opNode("Softmax", 1, {}), {&x})[0];
  auto lsm = run(opNode("LogSoftmax", 1, {}), {&x})[0];
  for (int r = 0; r < 4; ++r) {
    float m = v[r * 6], s = 0;
    for (int k = 1; k < 6; ++k)
      m = std::max(m, v[r * 6 + k]);
    float d[6], e[6];
    for (int k = 0; k < 6; ++k) {
      d[k] = v[r * 6 + k] - m;
      e[k] = static_cast<float>(std::exp(static_cast<double>(d[k])));
      s = k == 0 ? e[k] : s + e[k];
    }
    float l = static_cast<float>(std::log(static_cast<double>(s)));
    for (int k = 0; k < 6; ++k) {
      float y = e[k] / s, ly = d[k] - l;
      uint32_t yb, lyb;
      std::memcpy(&yb, &y, 4);
      std::memcpy(&lyb, &ly, 4);
      EXPECT_EQ(bitsOf(sm, r * 6 + k), yb) << r << "," << k;
      EXPECT_EQ(bitsOf(lsm, r * 6 + k), lyb) << r << "," << k;
    }
  }
}

TEST(ReduceSoftmax, HalfNaNAndIndeterminate) {
  Tensor h = tensorOf(DType::F16, {4}, {1, 2, 3, 4});
  auto y = run(opNode("Softmax", 1, {}), {&h})[0];
  EXPECT_EQ(y.dtype(), DType::F16);
  EXPECT_EQ(valuesOf(y), (std::vector<double>{0.03204345703125, 0.087158203125, 0.2369384765625,
                                              0.64404296875}));
  Tensor n = tensorOf(DType::F32, {2, 2}, {1, NAN, 1, 2});
  auto sn = run(opNode("Softmax", 1, {}), {&n})[0];
  EXPECT_TRUE(std::isnan(sn.getDouble(0)) && std::isnan(sn.getDouble(1)));
  EXPECT_FALSE(std::isnan(sn.getDouble(2)));
  EXPECT_EQ(valuesOf(run(opNode("Hardmax", 1, {}), {&n})[0]), (std::vector<double>{0, 1, 0, 1}));
  Tensor u = tensorOf(DType::F32, {2, 2}, {1, 2, 3, 4});
  u.setUndef(3);
  for (const char *op : {"Softmax", "LogSoftmax", "Hardmax"})
    EXPECT_EQ(undefOf(run(opNode(op, 1, {}), {&u})[0]),
              (std::vector<bool>{false, false, true, true}))
        << op;
}

TEST(ReduceSoftmax, InferenceErrors) {
  EXPECT_EQ(inferError(opNode("Softmax", 1, {}), {TensorType{DType::I32, {2}}}),
            "input 0 of Softmax has dtype i32; expected one of f16, bf16, f32, f64");
  EXPECT_EQ(
      inferError(opNode("LogSoftmax", 1, {{"axis", i(-3)}}), {TensorType{DType::F32, {2, 2}}}),
      "axis -3 is out of range for rank 2");
  EXPECT_NE(inferError(opNode("Hardmax", 1, {}), {TensorType{DType::F32, {}}}), "");
  EXPECT_NE(inferError(opNode("Softmax", 2, {}),
                       {TensorType{DType::F32, {2}}, TensorType{DType::F32, {2}}}),
            "");
}

// ------------------------------------------------------------------- CumSum

TEST(ReduceCumSum, MatchesConformance) {
  Tensor x = tensorOf(DType::F64, {5}, {1, 2, 3, 4, 5});
  Tensor axis = tensorOf(DType::I32, {}, {0});
  EXPECT_EQ(valuesOf(run(opNode("CumSum", 2, {}), {&x, &axis})[0]),
            (std::vector<double>{1, 3, 6, 10, 15}));
  EXPECT_EQ(valuesOf(run(opNode("CumSum", 2, {{"exclusive", i(1)}}), {&x, &axis})[0]),
            (std::vector<double>{0, 1, 3, 6, 10}));
  EXPECT_EQ(valuesOf(run(opNode("CumSum", 2, {{"reverse", i(1)}}), {&x, &axis})[0]),
            (std::vector<double>{15, 14, 12, 9, 5}));
  EXPECT_EQ(
      valuesOf(run(opNode("CumSum", 2, {{"reverse", i(1)}, {"exclusive", i(1)}}), {&x, &axis})[0]),
      (std::vector<double>{14, 12, 9, 5, 0}));
  Tensor m = tensorOf(DType::F64, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor a0 = tensorOf(DType::I32, {}, {0}), a1 = tensorOf(DType::I64, {1}, {-1});
  EXPECT_EQ(valuesOf(run(opNode("CumSum", 2, {}), {&m, &a0})[0]),
            (std::vector<double>{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(valuesOf(run(opNode("CumSum", 2, {}), {&m, &a1})[0]),
            (std::vector<double>{1, 3, 6, 4, 9, 15}));
}

TEST(ReduceCumSum, AccumulationWrapAndIndeterminate) {
  Tensor axis = tensorOf(DType::I64, {}, {0});
  // The running sum stays in f32; each output is rounded once to f16.
  Tensor h = tensorOf(DType::F16, {3}, {2048, 1, 1});
  EXPECT_EQ(valuesOf(run(opNode("CumSum", 2, {}), {&h, &axis})[0]),
            (std::vector<double>{2048, 2048, 2050}));
  Tensor w = tensorOf(DType::I32, {2}, {INT32_MAX, 1});
  EXPECT_EQ(intsOf(run(opNode("CumSum", 2, {}), {&w, &axis})[0]),
            (std::vector<int64_t>{INT32_MAX, INT32_MIN}));
  Tensor u = tensorOf(DType::F32, {4}, {1, 2, 3, 4});
  u.setUndef(1);
  EXPECT_EQ(undefOf(run(opNode("CumSum", 2, {}), {&u, &axis})[0]),
            (std::vector<bool>{false, true, true, true}));
  EXPECT_EQ(undefOf(run(opNode("CumSum", 2, {{"exclusive", i(1)}}), {&u, &axis})[0]),
            (std::vector<bool>{false, false, true, true}));
  EXPECT_EQ(undefOf(run(opNode("CumSum", 2, {{"reverse", i(1)}}), {&u, &axis})[0]),
            (std::vector<bool>{true, true, false, false}));
}

TEST(ReduceCumSum, InferenceErrors) {
  std::optional<TensorType> x = TensorType{DType::F32, {2, 3}};
  std::optional<TensorType> at = TensorType{DType::I32, {}};
  Tensor bad = tensorOf(DType::I32, {}, {2});
  EXPECT_EQ(inferError(opNode("CumSum", 2, {}), {x, at}),
            "input 1 (axis) of CumSum must be a constant");
  EXPECT_EQ(inferError(opNode("CumSum", 2, {}), {x, at}, {nullptr, &bad}),
            "axis 2 is out of range for rank 2");
  Tensor two = tensorOf(DType::I64, {2}, {0, 1});
  EXPECT_NE(inferError(opNode("CumSum", 2, {}), {x, two.type()}, {nullptr, &two}), "");
  Tensor ok = tensorOf(DType::I32, {}, {1});
  EXPECT_NE(
      inferError(opNode("CumSum", 2, {}), {TensorType{DType::I8, {2, 3}}, at}, {nullptr, &ok}), "");
}

// ------------------------------------------------------------------- MatMul

TEST(ReduceMatMul, MatchesConformance2d) {
  Tensor a =
      tensorOf(DType::F32, {3, 4},
               {1.764052391052246, 0.40015721321105957, 0.978738009929657, 2.2408931255340576,
                1.8675580024719238, -0.9772778749465942, 0.9500884413719177, -0.15135720372200012,
                -0.10321885347366333, 0.4105985164642334, 0.14404356479644775, 1.4542734622955322});
  Tensor b =
      tensorOf(DType::F32, {4, 3},
               {0.7610377073287964, 0.12167501449584961, 0.44386324286460876, 0.3336743414402008,
                1.4940791130065918, -0.2051582634449005, 0.3130677044391632, -0.8540957570075989,
                -2.5529897212982178, 0.653618574142456, 0.8644362092018127, -0.7421650290489197});
  auto c = run(opNode("MatMul", 2), {&a, &b})[0];
  EXPECT_EQ(c.type(), (TensorType{DType::F32, {3, 3}}));
  std::vector<double> want = {3.247133255004883,  1.9136807918548584,  -3.4609179496765137,
                              1.2937016487121582, -2.1752004623413086, -1.283797025680542,
                              1.0540882349014282, 1.7350071668624878,  -1.5771052837371826};
  for (int k = 0; k < 9; ++k)
    EXPECT_NEAR(c.getDouble(k), want[k], 1e-6 * std::fabs(want[k])) << k;
}

TEST(ReduceMatMul, VectorsAndBatchBroadcasting) {
  Tensor v = tensorOf(DType::F32, {3}, {1, 2, 3});
  Tensor m = tensorOf(DType::F32, {3, 2}, {1, 2, 3, 4, 5, 6});
  auto vm = run(opNode("MatMul", 2), {&v, &m})[0];
  EXPECT_EQ(vm.type(), (TensorType{DType::F32, {2}}));
  EXPECT_EQ(valuesOf(vm), (std::vector<double>{22, 28}));
  Tensor mt = tensorOf(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor ones = tensorOf(DType::F32, {3}, {1, 1, 1});
  auto mv = run(opNode("MatMul", 2), {&mt, &ones})[0];
  EXPECT_EQ(mv.type(), (TensorType{DType::F32, {2}}));
  EXPECT_EQ(valuesOf(mv), (std::vector<double>{6, 15}));
  Tensor w = tensorOf(DType::F32, {3}, {4, 5, 6});
  auto dot = run(opNode("MatMul", 2), {&v, &w})[0];
  EXPECT_EQ(dot.type(), (TensorType{DType::F32, {}}));
  EXPECT_EQ(valuesOf(dot), (std::vector<double>{32}));
  Tensor a = tensorOf(DType::F64, {2, 1, 1, 2}, {1, 2, 3, 4});
  Tensor b = tensorOf(DType::F64, {3, 2, 1}, {1, 0, 0, 1, 1, 1});
  auto bc = run(opNode("MatMul", 2), {&a, &b})[0];
  EXPECT_EQ(bc.type(), (TensorType{DType::F64, {2, 3, 1, 1}}));
  EXPECT_EQ(valuesOf(bc), (std::vector<double>{1, 2, 3, 3, 4, 7}));
}

TEST(ReduceMatMul, AccumulationIntegersAndIndeterminate) {
  Tensor a = tensorOf(DType::F32, {1, 3}, {1e8, 1, -1e8});
  Tensor ones = tensorOf(DType::F32, {3, 1}, {1, 1, 1});
  EXPECT_EQ(valuesOf(run(opNode("MatMul", 2), {&a, &ones})[0]), (std::vector<double>{0}))
      << "f32 accumulation over increasing k";
  Tensor h = tensorOf(DType::F16, {1, 3}, {2048, 1, 1});
  Tensor hOnes = tensorOf(DType::F16, {3, 1}, {1, 1, 1});
  EXPECT_EQ(valuesOf(run(opNode("MatMul", 2), {&h, &hOnes})[0]), (std::vector<double>{2050}));
  Tensor i1 = tensorOf(DType::I32, {1}, {65536});
  EXPECT_EQ(intsOf(run(opNode("MatMul", 2), {&i1, &i1})[0]), (std::vector<int64_t>{0}))
      << "2^32 wraps in i32";
  Tensor u1 = tensorOf(DType::U32, {2}, {4000000000.0, 1});
  Tensor u2 = tensorOf(DType::U32, {2}, {1, 1});
  EXPECT_EQ(loadUInt(DType::U32, run(opNode("MatMul", 2), {&u1, &u2})[0].at(0)), 4000000001u);
  Tensor x = tensorOf(DType::F32, {2, 2}, {1, 2, 3, 4});
  x.setUndef(1);
  Tensor y = tensorOf(DType::F32, {2, 2}, {1, 0, 0, 1});
  auto out = run(opNode("MatMul", 2), {&x, &y})[0];
  EXPECT_EQ(undefOf(out), (std::vector<bool>{true, true, false, false}));
  EXPECT_EQ(valuesOf(out)[2], 3);
  Tensor empty(TensorType{DType::F32, {2, 0}}), empty2(TensorType{DType::F32, {0, 2}});
  EXPECT_EQ(valuesOf(run(opNode("MatMul", 2), {&empty, &empty2})[0]),
            (std::vector<double>{0, 0, 0, 0}));
}

TEST(ReduceMatMul, InferenceErrors) {
  std::optional<TensorType> a = TensorType{DType::F32, {2, 3}};
  EXPECT_EQ(inferError(opNode("MatMul", 2), {a, TensorType{DType::F32, {2, 3}}}),
            "MatMul inner dimensions differ: [2, 3] x [2, 3]");
  EXPECT_EQ(inferError(opNode("MatMul", 2), {a, TensorType{DType::F64, {3, 3}}}),
            "input 1 of MatMul has dtype f64, input 0 has f32");
  EXPECT_NE(inferError(opNode("MatMul", 2), {a, TensorType{DType::F32, {}}}), "");
  EXPECT_NE(inferError(opNode("MatMul", 2),
                       {TensorType{DType::F32, {2, 2, 3}}, TensorType{DType::F32, {3, 3, 1}}}),
            "");
  EXPECT_NE(
      inferError(opNode("MatMul", 2), {TensorType{DType::I8, {2}}, TensorType{DType::I8, {2}}}),
      "");
}

// --------------------------------------------------------------------- Gemm

TEST(ReduceGemm, MatchesConformanceScalarBias) {
  Tensor a = tensorOf(DType::F32, {2, 3},
                      {0.54881352186203, 0.7151893377304077, 0.6027633547782898, 0.5448831915855408,
                       0.42365479469299316, 0.6458941102027893});
  Tensor b =
      tensorOf(DType::F32, {3, 4},
               {0.4375872015953064, 0.891772985458374, 0.9636627435684204, 0.3834415078163147,
                0.7917250394821167, 0.5288949012756348, 0.5680445432662964, 0.9255966544151306,
                0.07103605568408966, 0.08712930232286453, 0.020218396559357643, 0.832619845867157});
  Tensor c = tensorOf(DType::F32, {}, {3.140000104904175});
  auto y = run(opNode("Gemm", 3), {&a, &b, &c})[0];
  EXPECT_EQ(y.type(), (TensorType{DType::F32, {2, 4}}));
  std::vector<double> want = {3.9892051219940186, 4.060195446014404,  4.08731746673584,
                              4.51428747177124,   3.7597339153289795, 3.906257390975952,
                              3.918797492980957,  4.278848648071289};
  for (int k = 0; k < 8; ++k)
    EXPECT_NEAR(y.getDouble(k), want[k], 1e-6 * want[k]) << k;
}

TEST(ReduceGemm, TransposesAlphaBetaAndBias) {
  Tensor a = tensorOf(DType::F32, {2, 2}, {1, 2, 3, 4});
  Tensor b = tensorOf(DType::F32, {2, 2}, {5, 6, 7, 8});
  Tensor row = tensorOf(DType::F32, {2}, {1, 2});
  AttrMap ab = {{"alpha", f(0.5f)}, {"beta", f(2.0f)}};
  EXPECT_EQ(valuesOf(run(opNode("Gemm", 3, ab), {&a, &b, &row})[0]),
            (std::vector<double>{11.5, 15, 23.5, 29}));
  EXPECT_EQ(valuesOf(run(opNode("Gemm", 2, {{"transA", i(1)}}), {&a, &b})[0]),
            (std::vector<double>{26, 30, 38, 44}));
  EXPECT_EQ(valuesOf(run(opNode("Gemm", 2, {{"transB", i(1)}}), {&a, &b})[0]),
            (std::vector<double>{17, 23, 39, 53}));
  EXPECT_EQ(valuesOf(run(opNode("Gemm", 2, {{"transA", i(1)}, {"transB", i(1)}}), {&a, &b})[0]),
            (std::vector<double>{23, 31, 34, 46}));
  Tensor col = tensorOf(DType::F32, {2, 1}, {10, 20});
  EXPECT_EQ(valuesOf(run(opNode("Gemm", 3), {&a, &b, &col})[0]),
            (std::vector<double>{29, 32, 63, 70}));
  // A rectangular case: A' [3, 2] from A [2, 3] transposed, B [2, 1].
  Tensor r = tensorOf(DType::F64, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor s = tensorOf(DType::F64, {2, 1}, {1, 10});
  auto rs = run(opNode("Gemm", 2, {{"transA", i(1)}}), {&r, &s})[0];
  EXPECT_EQ(rs.type(), (TensorType{DType::F64, {3, 1}}));
  EXPECT_EQ(valuesOf(rs), (std::vector<double>{41, 52, 63}));
  // beta * C as written: 0 * inf is NaN.
  Tensor inf = tensorOf(DType::F32, {1}, {INFINITY});
  auto nan = run(opNode("Gemm", 3, {{"beta", f(0.0f)}}), {&a, &b, &inf})[0];
  EXPECT_TRUE(std::isnan(nan.getDouble(0)));
}

TEST(ReduceGemm, RoundsOnceIntegersAndIndeterminate) {
  // f16: the f32 dot product 2049 is not rounded to f16 before beta * C is
  // added: 2049 + 0.75 rounds once to 2050 (2049 alone would round to 2048).
  Tensor a = tensorOf(DType::F16, {1, 2}, {2048, 1});
  Tensor b = tensorOf(DType::F16, {2, 1}, {1, 1});
  Tensor c = tensorOf(DType::F16, {1, 1}, {0.75});
  EXPECT_EQ(valuesOf(run(opNode("Gemm", 3), {&a, &b, &c})[0]), (std::vector<double>{2050}));
  EXPECT_EQ(valuesOf(run(opNode("Gemm", 2), {&a, &b})[0]), (std::vector<double>{2048}));
  Tensor ia = tensorOf(DType::I32, {1, 2}, {3, 4});
  Tensor ib = tensorOf(DType::I32, {2, 1}, {5, 6});
  Tensor ic = tensorOf(DType::I32, {1}, {7});
  EXPECT_EQ(
      intsOf(run(opNode("Gemm", 3, {{"alpha", f(2.0f)}, {"beta", f(-1.0f)}}), {&ia, &ib, &ic})[0]),
      (std::vector<int64_t>{2 * 39 - 7}));
  Tensor x = tensorOf(DType::F32, {2, 2}, {1, 2, 3, 4});
  Tensor y = tensorOf(DType::F32, {2, 2}, {1, 0, 0, 1});
  Tensor cm = tensorOf(DType::F32, {2, 2}, {0, 0, 0, 0});
  cm.setUndef(3);
  EXPECT_EQ(undefOf(run(opNode("Gemm", 3), {&x, &y, &cm})[0]),
            (std::vector<bool>{false, false, false, true}));
  Tensor cr = tensorOf(DType::F32, {2}, {0, 0});
  cr.setUndef(0);
  EXPECT_EQ(undefOf(run(opNode("Gemm", 3), {&x, &y, &cr})[0]),
            (std::vector<bool>{true, false, true, false}));
}

TEST(ReduceGemm, InferenceErrors) {
  std::optional<TensorType> a = TensorType{DType::F32, {2, 3}};
  std::optional<TensorType> b = TensorType{DType::F32, {3, 4}};
  EXPECT_EQ(inferError(opNode("Gemm", 3), {a, b, TensorType{DType::F32, {3}}}),
            "Gemm input C [3] does not broadcast to [2, 4]");
  EXPECT_EQ(inferError(opNode("Gemm", 3), {a, b, TensorType{DType::F32, {2, 1}}}), "");
  EXPECT_NE(inferError(opNode("Gemm", 3), {a, b, TensorType{DType::F32, {1, 2, 4}}}), "");
  EXPECT_EQ(inferError(opNode("Gemm", 2, {{"transB", i(1)}}), {a, b}),
            "Gemm inner dimensions differ: 3 and 4");
  EXPECT_NE(inferError(opNode("Gemm", 2), {TensorType{DType::F32, {3}}, b}), "");
  std::optional<TensorType> ia = TensorType{DType::I64, {2, 3}};
  std::optional<TensorType> ib = TensorType{DType::I64, {3, 4}};
  EXPECT_EQ(inferError(opNode("Gemm", 2, {{"alpha", f(0.5f)}}), {ia, ib}),
            "Gemm on integers needs integral alpha and beta");
  EXPECT_EQ(inferError(opNode("Gemm", 2, {{"alpha", f(3.0f)}}), {ia, ib}), "");
  EXPECT_NE(inferError(opNode("Gemm", 1), {a}), "");
}

} // namespace
} // namespace graphvet::testing
