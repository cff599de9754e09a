// Type inference and kernel tests of the elementwise family's unary math,
// activations and Clip (src/ir/ops/activations.cpp, rows in elementwise.cpp).
// Expected values: numpy (transcendental ops in f64, rounded once to f32) or
// ONNX's conformance tests (test_*).
#include "elementwise_test_util.h"

namespace graphvet::testing {
namespace {

const std::initializer_list<double> kX = {-2, -0.5, 0, 0.5, 2};

Tensor unary(const std::string &op, const Tensor &x, AttrMap attrs = {}) {
  return run1(opNode(op, 1, std::move(attrs)), {&x});
}

AttrMap floats(std::initializer_list<std::pair<const char *, double>> kv) {
  AttrMap m;
  for (auto &[k, v] : kv)
    m[k] = AttrValue::ofFloat(v);
  return m;
}

// ---- Exact unary ops ------------------------------------------------------------

TEST(ElementwiseUnary, AbsNegSign) {
  Tensor i8 = intsOf(DType::I8, {3}, {-128, -5, 5});
  EXPECT_EQ(intsIn(unary("Abs", i8)), (std::vector<int64_t>{-128, 5, 5})); // INT_MIN wraps
  EXPECT_EQ(intsIn(unary("Neg", i8)), (std::vector<int64_t>{-128, 5, -5}));
  Tensor i32 = intsOf(DType::I32, {3}, {INT32_MIN, 5, 0});
  EXPECT_EQ(intsIn(unary("Neg", i32)), (std::vector<int64_t>{INT32_MIN, -5, 0}));
  Tensor u8 = intsOf(DType::U8, {2}, {200, 0});
  EXPECT_EQ(intsIn(unary("Abs", u8)), (std::vector<int64_t>{200, 0}));
  EXPECT_EQ(intsIn(unary("Sign", u8)), (std::vector<int64_t>{1, 0}));
  Tensor f = tensorOf(DType::F32, {4}, {-0.0, -kInf, -2.5, kNaN});
  expectExact(unary("Abs", f), {0, kInf, 2.5, kNaN});
  // test_neg_example; Neg flips the sign of zero.
  Tensor n = tensorOf(DType::F32, {3}, {-4, 2, 0});
  expectExact(unary("Neg", n), {4, -2, -0.0});
  // test_sign; ±0 -> +0 (numpy), NaN -> NaN.
  Tensor s = tensorOf(DType::F32, {6}, {-5, -0.0, 0, 3, kInf, kNaN});
  expectExact(unary("Sign", s), {-1, 0, 0, 1, 1, kNaN});
  Tensor si = intsOf(DType::I64, {3}, {INT64_MIN, 0, 9});
  EXPECT_EQ(intsIn(unary("Sign", si)), (std::vector<int64_t>{-1, 0, 1}));
  Tensor h = tensorOf(DType::BF16, {2}, {-3, 0.5});
  expectExact(unary("Abs", h), {3, 0.5});
}

TEST(ElementwiseUnary, FloorCeilRound) {
  // test_floor_example, test_ceil_example; zeros keep their sign.
  Tensor a = tensorOf(DType::F32, {5}, {-1.5, 1.2, 2, -0.5, -0.0});
  expectExact(unary("Floor", a), {-2, 1, 2, -1, -0.0});
  expectExact(unary("Ceil", a), {-1, 2, 2, -0.0, -0.0});
  // test_round: half to even.
  Tensor r =
      tensorOf(DType::F32, {15},
               {0.1, 0.5, 0.9, 1.2, 1.5, 1.8, 2.3, 2.5, 2.7, -1.1, -1.5, -1.9, -2.2, -2.5, -2.8});
  expectExact(unary("Round", r), {0, 0, 1, 1, 2, 2, 2, 2, 3, -1, -2, -2, -2, -2, -3});
  Tensor e = tensorOf(DType::F32, {6}, {-0.5, 0.49999997, 8388609, 3.5, kInf, kNaN});
  expectExact(unary("Round", e), {-0.0, 0, 8388609, 4, kInf, kNaN});
  Tensor h = tensorOf(DType::F16, {3}, {2.5, -3.5, 1000.5});
  expectExact(unary("Round", h), {2, -4, 1000});
  Tensor d = tensorOf(DType::F64, {2}, {4503599627370497.0, 0.5000000000000001});
  expectExact(unary("Round", d), {4503599627370497.0, 1});
}

// ---- Math -------------------------------------------------------------------------

TEST(ElementwiseUnary, TranscendentalsInF64RoundedOnce) {
  Tensor x = tensorOf(DType::F32, {5}, kX);
  expectNear(unary("Exp", x),
             {0.1353352814912796, 0.6065306663513184, 1.0, 1.6487212181091309, 7.389056205749512});
  expectNear(unary("Tanh", x), {-0.9640275835990906, -0.46211716532707214, 0, 0.46211716532707214,
                                0.9640275835990906});
  expectNear(unary("Erf", x),
             {-0.9953222870826721, -0.5204998850822449, 0, 0.5204998850822449, 0.9953222870826721});
  // test_exp_example, test_log_example, test_tanh_example.
  Tensor l = tensorOf(DType::F32, {6}, {0.5, 1, 2, 10, 0, -1});
  expectNear(unary("Log", l),
             {-0.6931471824645996, 0, 0.6931471824645996, 2.3025851249694824, -kInf, kNaN});
  // f16: one rounding of the f64 value (e^12 overflows, e^-20 underflows).
  Tensor h = tensorOf(DType::F16, {3}, {1, 12, -20});
  expectExact(unary("Exp", h), {2.71875, kInf, 0});
  Tensor d = tensorOf(DType::F64, {2}, {1, -kInf});
  expectExact(unary("Exp", d), {std::exp(1.0), 0});
  // Erf of integers: truncated like a cast (erf(3) = 0.99998 -> 0).
  Tensor i = intsOf(DType::I32, {4}, {-3, 0, 1, 10});
  EXPECT_EQ(intsIn(unary("Erf", i)), (std::vector<int64_t>{0, 0, 0, 1}));
}

TEST(ElementwiseUnary, SqrtAndReciprocalAreBasic) {
  // test_sqrt_example, test_reciprocal_example; subnormal input kept.
  Tensor s = tensorOf(DType::F32, {6}, {1, 4, 9, 2, -0.0, -1});
  expectExact(unary("Sqrt", s), {1, 2, 3, 1.4142135381698608, -0.0, kNaN});
  Tensor sub = tensorOf(DType::F32, {1}, {1e-40});
  expectExact(unary("Sqrt", sub), {9.999973025467516e-21});
  Tensor r = tensorOf(DType::F32, {5}, {-4, 2, 3, 0, -0.0});
  expectExact(unary("Reciprocal", r), {-0.25, 0.5, static_cast<double>(1.0f / 3.0f), kInf, -kInf});
  // f16: computed in f32, rounded once.
  Tensor h = tensorOf(DType::F16, {1}, {3});
  expectExact(unary("Reciprocal", h), {0.333251953125});
  Tensor h2 = tensorOf(DType::F16, {1}, {2});
  expectExact(unary("Sqrt", h2), {1.4140625});
}

TEST(ElementwiseUnary, IndeterminateElementsStayIndeterminate) {
  Tensor x = tensorOf(DType::F32, {3}, {1, 2, 3});
  x.setUndef(1);
  for (const char *op : {"Exp", "Neg", "Relu", "Sqrt", "Round", "HardSwish", "Softplus"})
    EXPECT_EQ(undefIn(unary(op, x)), (std::vector<bool>{false, true, false})) << op;
}

// ---- Activations --------------------------------------------------------------------

TEST(ElementwiseActivation, Relu) {
  // test_relu; -0 stays -0 (x < 0 is false), NaN stays NaN.
  Tensor x = tensorOf(DType::F32, {6}, {-1, -0.0, 0, 2, kNaN, -kInf});
  expectExact(unary("Relu", x), {0, -0.0, 0, 2, kNaN, 0});
  Tensor i = intsOf(DType::I8, {3}, {-128, 0, 7});
  EXPECT_EQ(intsIn(unary("Relu", i)), (std::vector<int64_t>{0, 0, 7}));
  Tensor h = tensorOf(DType::BF16, {2}, {-1, 1.5});
  expectExact(unary("Relu", h), {0, 1.5});
}

TEST(ElementwiseActivation, LeakyReluAndPRelu) {
  // test_leakyrelu_default (alpha 0.01), test_leakyrelu_example (alpha 0.1), in f32.
  Tensor x = tensorOf(DType::F32, {3}, {-1, -3, 2});
  expectExact(unary("LeakyRelu", x), {-0.009999999776482582, -0.029999999329447746, 2});
  Tensor e = tensorOf(DType::F32, {3}, {-1, 0, 1});
  expectExact(unary("LeakyRelu", e, floats({{"alpha", 0.10000000149011612}})),
              {-0.10000000149011612, 0, 1});
  // PRelu: slope broadcast unidirectionally (test_prelu_broadcast's pattern).
  Tensor p = tensorOf(DType::F32, {2, 3}, {-1, 2, -3, 4, -5, 6});
  Tensor s = tensorOf(DType::F32, {3}, {0.5, 2, -1});
  Tensor y = run1(opNode("PRelu", 2), {&p, &s});
  EXPECT_EQ(y.type(), tt(DType::F32, {2, 3}));
  expectExact(y, {-0.5, 2, 3, 4, -10, 6});
  Tensor c = tensorOf(DType::F32, {2, 1}, {0.5, 0.25});
  expectExact(run1(opNode("PRelu", 2), {&p, &c}), {-0.5, 2, -1.5, 4, -1.25, 6});
  Tensor i = intsOf(DType::I32, {2}, {-3, 4});
  Tensor is = intsOf(DType::I32, {1}, {2});
  EXPECT_EQ(intsIn(run1(opNode("PRelu", 2), {&i, &is})), (std::vector<int64_t>{-6, 4}));
  EXPECT_EQ(inferError(opNode("PRelu", 2), {tt(DType::F32, {2, 3}), tt(DType::F32, {2})}),
            "slope shape [2] of PRelu does not broadcast to the input shape [2, 3]");
  EXPECT_EQ(inferError(opNode("PRelu", 2), {tt(DType::F32, {3}), tt(DType::F32, {2, 3})}),
            "slope shape [2, 3] of PRelu does not broadcast to the input shape [3]");
}

TEST(ElementwiseActivation, EluSeluCelu) {
  Tensor x = tensorOf(DType::F32, {5}, kX);
  expectNear(unary("Elu", x),
             {-0.8646647334098816, -0.39346933364868164, 0, 0.5, 2}); // test_elu_default
  expectNear(unary("Selu", x), {-1.5201665163040161, -0.6917582154273987, 0, 0.5253505110740662,
                                2.1014020442962646}); // test_selu_default
  expectNear(unary("Celu", x, floats({{"alpha", 2}})),
             {-1.264241099357605, -0.44239842891693115, 0, 0.5, 2});
  // test_elu_example, test_selu_example (alpha 2, gamma 3).
  Tensor e = tensorOf(DType::F32, {3}, {-1, 0, 1});
  expectNear(unary("Elu", e, floats({{"alpha", 2}})), {-1.2642412, 0, 1}, 1e-7);
  expectNear(unary("Selu", e, floats({{"alpha", 2}, {"gamma", 3}})), {-3.7927237, 0, 3}, 1e-7);
  // Limits: Elu(-inf) = -alpha, Selu(-inf) = -gamma * alpha.
  Tensor inf = tensorOf(DType::F32, {2}, {-kInf, kNaN});
  expectExact(unary("Elu", inf), {-1, kNaN});
  expectExact(unary("Selu", inf), {-1.7580993175506592, kNaN});
  expectExact(unary("Celu", inf), {-1, kNaN});
}

TEST(ElementwiseActivation, SigmoidSoftplusSoftsign) {
  Tensor x = tensorOf(DType::F32, {5}, kX);
  expectNear(unary("Sigmoid", x),
             {0.11920291930437088, 0.3775406777858734, 0.5, 0.622459352016449, 0.8807970881462097});
  expectNear(unary("Softplus", x), {0.12692801654338837, 0.4740769863128662, 0.6931471824645996,
                                    0.9740769863128662, 2.1269280910491943});
  expectNear(unary("Softsign", x),
             {-0.6666666865348816, -0.3333333432674408, 0, 0.3333333432674408, 0.6666666865348816});
  // Extremes: no overflow in Softplus (x + log1p(e^-x)); Softsign(±inf) is
  // ONNX's formula inf / inf = NaN.
  Tensor big = tensorOf(DType::F32, {5}, {1000, -1000, kInf, -kInf, kNaN});
  expectExact(unary("Sigmoid", big), {1, 0, 1, 0, kNaN});
  expectExact(unary("Softplus", big), {1000, 0, kInf, 0, kNaN});
  const double r = static_cast<float>(1000.0 / 1001.0);
  expectExact(unary("Softsign", big), {r, -r, kNaN, kNaN, kNaN});
  Tensor h = tensorOf(DType::F16, {1}, {1});
  expectExact(unary("Sigmoid", h), {0.73095703125}); // f16(0.7310585786...)
}

TEST(ElementwiseActivation, HardSigmoidAndHardSwish) {
  // Defaults alpha 0.2, beta 0.5, in f32.
  Tensor x = tensorOf(DType::F32, {6}, {-3, -1, 0, 1, 2.4, 3});
  expectExact(unary("HardSigmoid", x),
              {0, 0.30000001192092896, 0.5, 0.699999988079071, 0.9800000190734863, 1});
  // test_hardsigmoid_example: alpha 0.5, beta 0.6.
  Tensor e = tensorOf(DType::F32, {3}, {-1, 0, 1});
  expectExact(unary("HardSigmoid", e, floats({{"alpha", 0.5}, {"beta", 0.6000000238418579}})),
              {0.10000002384185791, 0.6000000238418579, 1});
  Tensor s = tensorOf(DType::F32, {6}, {-4, -1, 0, 1, 2.5, 4});
  expectExact(unary("HardSwish", s),
              {-0.0, -0.3333333134651184, 0, 0.6666666865348816, 2.2916667461395264, 4});
  // HardSwish is its ONNX function body, bit for bit: x * HardSigmoid(x, 1/6, 0.5).
  Tensor v = tensorOf(DType::F32, {8}, {-3.1, -2.7, -0.3, 0.7, 1.9, 2.2, 2.9999, 7});
  Tensor hs = unary("HardSigmoid", v, floats({{"alpha", 0.1666666716337204}, {"beta", 0.5}}));
  Tensor body = run1(opNode("Mul", 2), {&v, &hs});
  Tensor fused = unary("HardSwish", v);
  for (int64_t i = 0; i < v.size(); ++i)
    EXPECT_EQ(fused.getDouble(i), body.getDouble(i)) << i;
  // f16: formula in f32, one rounding.
  Tensor h = tensorOf(DType::F16, {3}, {-1, 1.3, 2.9});
  expectExact(unary("HardSwish", h), {-0.333251953125, 0.931640625, 2.8515625});
  Tensor n = tensorOf(DType::F32, {1}, {kNaN});
  expectExact(unary("HardSigmoid", n), {kNaN});
}

// ---- Clip -------------------------------------------------------------------------

TEST(ElementwiseClip, BoundsAsInputs) {
  // test_clip_example, test_clip_splitbounds.
  Tensor x = tensorOf(DType::F32, {3}, {-2, 0, 2});
  Tensor lo = tensorOf(DType::F32, {}, {-1});
  Tensor hi = tensorOf(DType::F32, {}, {1});
  expectExact(run1(opNode("Clip", 3), {&x, &lo, &hi}), {-1, 0, 1});
  // test_clip_default_max / _min: the other bound unconnected.
  Tensor zero = tensorOf(DType::F32, {}, {0});
  expectExact(run1(opNode("Clip", 3), {&x, nullptr, &zero}), {-2, 0, 0});
  expectExact(run1(opNode("Clip", 2), {&x, &zero}), {0, 0, 2});
  expectExact(run1(opNode("Clip", 3), {&x, nullptr, nullptr}), {-2, 0, 2});
  expectExact(run1(opNode("Clip", 1), {&x}), {-2, 0, 2});
  // test_clip_default_int8_min / _max: integers.
  Tensor i = intsOf(DType::I8, {3}, {-1, 0, 1});
  Tensor i0 = intsOf(DType::I8, {}, {0});
  EXPECT_EQ(intsIn(run1(opNode("Clip", 2), {&i, &i0})), (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(intsIn(run1(opNode("Clip", 3), {&i, nullptr, &i0})), (std::vector<int64_t>{-1, 0, 0}));
  Tensor u = intsOf(DType::U64, {2}, {-1, 3});
  Tensor u5 = intsOf(DType::U64, {1}, {5}); // one element of shape [1] is accepted
  EXPECT_EQ(intsIn(run1(opNode("Clip", 3), {&u, nullptr, &u5})), (std::vector<int64_t>{5, 3}));
}

TEST(ElementwiseClip, SpecialCases) {
  // min > max gives max (numpy's clip); NaN in x or in a bound gives NaN.
  Tensor x = tensorOf(DType::F32, {3}, {-5, 0, kNaN});
  Tensor two = tensorOf(DType::F32, {}, {2});
  Tensor one = tensorOf(DType::F32, {}, {1});
  expectExact(run1(opNode("Clip", 3), {&x, &two, &one}), {1, 1, kNaN});
  Tensor nan = tensorOf(DType::F32, {}, {kNaN});
  expectExact(run1(opNode("Clip", 3), {&x, &nan, &one}), {kNaN, kNaN, kNaN});
  // An indeterminate bound: every element; an indeterminate x element: itself.
  Tensor y = tensorOf(DType::F32, {3}, {-5, 0, 5});
  Tensor undefLo = tensorOf(DType::F32, {}, {0});
  undefLo.setUndef(0);
  EXPECT_EQ(undefIn(run1(opNode("Clip", 3), {&y, &undefLo, &one})),
            (std::vector<bool>{true, true, true}));
  y.setUndef(2);
  Tensor r = run1(opNode("Clip", 3), {&y, &two, nullptr});
  EXPECT_EQ(undefIn(r), (std::vector<bool>{false, false, true}));
  EXPECT_EQ(r.getDouble(0), 2);
}

TEST(ElementwiseClip, BoundsAsAttributesBeforeOpset11) {
  Tensor x = tensorOf(DType::F32, {3}, {-2, 0.5, 2});
  expectExact(unary("Clip", x, floats({{"min", -1}, {"max", 1}})), {-1, 0.5, 1});
  expectExact(unary("Clip", x, floats({{"max", 0}})), {-2, 0, 0});
  Tensor h = tensorOf(DType::F16, {2}, {-2, 70000});
  expectExact(unary("Clip", h, floats({{"min", -1}})), {-1, kInf});
}

TEST(ElementwiseClip, InferenceErrors) {
  TensorType f = tt(DType::F32, {3});
  EXPECT_EQ(inferError(opNode("Clip", 3), {f, tt(DType::F32, {2}), std::nullopt}),
            "input 1 (min) of Clip must hold one element, got shape [2]");
  EXPECT_EQ(inferError(opNode("Clip", 2), {f, tt(DType::F16, {})}),
            "inputs 0 and 1 of Clip have different dtypes (f32 and f16)");
  EXPECT_EQ(inferError(opNode("Clip", 2, floats({{"max", 1}})), {f, tt(DType::F32, {})}),
            "Clip takes its bounds either as attributes min/max (opset < 11) or as inputs 1 "
            "and 2, not both");
  EXPECT_EQ(inferError(opNode("Clip", 1, floats({{"max", 1}})), {tt(DType::I32, {3})}),
            "Clip's min/max attributes (opset < 11) apply to float inputs only, not i32; give "
            "the bounds as inputs 1 and 2");
  EXPECT_EQ(inferError(opNode("Clip", 4), {f, f, f, f}), "Clip takes 1 to 3 inputs, got 4");
  EXPECT_EQ(inferError(opNode("Clip", 1), {tt(DType::Bool, {3})}),
            "Clip does not accept bool (input 0); allowed: i8, u8, i16, u16, i32, u32, i64, "
            "u64, f16, bf16, f32, f64");
}

// ---- Inference ---------------------------------------------------------------------

TEST(ElementwiseUnaryInfer, DtypesAndArity) {
  EXPECT_EQ(inferError(opNode("Exp", 1), {tt(DType::I32, {2})}),
            "Exp does not accept i32 (input 0); allowed: f16, bf16, f32, f64");
  EXPECT_EQ(inferError(opNode("Celu", 1), {tt(DType::F64, {2})}),
            "Celu does not accept f64 (input 0); allowed: f32");
  EXPECT_EQ(inferError(opNode("Round", 1), {tt(DType::BF16, {2})}),
            "Round does not accept bf16 (input 0); allowed: f16, f32, f64");
  EXPECT_EQ(inferError(opNode("Neg", 1), {tt(DType::U8, {2})}),
            "Neg does not accept u8 (input 0); allowed: i8, i16, i32, i64, f16, bf16, f32, f64");
  EXPECT_EQ(inferError(opNode("Relu", 1), {tt(DType::U32, {2})}),
            "Relu does not accept u32 (input 0); allowed: i8, i16, i32, i64, f16, bf16, f32, "
            "f64");
  EXPECT_EQ(inferError(opNode("Tanh", 2), {tt(DType::F32, {2}), tt(DType::F32, {2})}),
            "Tanh takes 1 input, got 2");
  EXPECT_EQ(inferError(opNode("Sigmoid", 1), {std::nullopt}),
            "input 0 of Sigmoid is not connected");
  // Every unary op keeps its input's type.
  for (const char *op : {"Abs",         "Neg",       "Sign",     "Exp",      "Log",  "Sqrt",
                         "Reciprocal",  "Tanh",      "Erf",      "Floor",    "Ceil", "Round",
                         "Relu",        "LeakyRelu", "Elu",      "Selu",     "Celu", "Sigmoid",
                         "HardSigmoid", "HardSwish", "Softplus", "Softsign", "Clip"})
    EXPECT_EQ(inferError(opNode(op, 1), {tt(DType::F32, {2, 0, 3})}), "") << op;
}

// ---- Dtype coverage ------------------------------------------------------------------

/// Each float dtype's result agrees with the widest allowed dtype's result.
double tolerance(DType t) {
  switch (t) {
  case DType::F16:
    return 1e-3;
  case DType::BF16:
    return 8e-3;
  case DType::F32:
    return 1e-6;
  default:
    return 0;
  }
}

void expectLikeF64(const Tensor &got, const Tensor &ref, const std::string &what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  for (int64_t i = 0; i < got.size(); ++i) {
    double g = got.getDouble(i), r = ref.getDouble(i);
    if (std::isnan(r))
      EXPECT_TRUE(std::isnan(g)) << what << " element " << i;
    else
      EXPECT_NEAR(g, r, tolerance(got.dtype()) * std::max(1.0, std::fabs(r)))
          << what << " element " << i;
  }
}

const std::vector<DType> kF4 = {DType::F16, DType::BF16, DType::F32, DType::F64};
const std::vector<DType> kF3 = {DType::F16, DType::F32, DType::F64};
const std::vector<DType> kInts = {DType::I8,  DType::U8,  DType::I16, DType::U16,
                                  DType::I32, DType::U32, DType::I64, DType::U64};

TEST(ElementwiseDtypes, UnaryOpsOnEveryFloatDtype) {
  const std::pair<const char *, std::vector<DType>> cases[] = {
      {"Abs", kF4},           {"Neg", kF4},       {"Sign", kF4},        {"Exp", kF4},
      {"Log", kF4},           {"Sqrt", kF4},      {"Reciprocal", kF4},  {"Tanh", kF4},
      {"Erf", kF4},           {"Floor", kF4},     {"Ceil", kF4},        {"Round", kF3},
      {"Relu", kF4},          {"LeakyRelu", kF4}, {"Elu", kF3},         {"Selu", kF3},
      {"Celu", {DType::F32}}, {"Sigmoid", kF4},   {"HardSigmoid", kF3}, {"HardSwish", kF3},
      {"Softplus", kF3},      {"Softsign", kF3},  {"Clip", kF4}};
  for (const auto &[op, types] : cases) {
    Tensor ref = unary(op, tensorOf(types.back(), {4}, {0.5, -1.5, 2, 3.25})); // widest
    for (DType t : types) {
      Tensor y = unary(op, tensorOf(t, {4}, {0.5, -1.5, 2, 3.25}));
      EXPECT_EQ(y.type(), tt(t, {4})) << op;
      expectLikeF64(y, ref, std::string(op) + " " + std::string(dtypeName(t)));
    }
  }
}

TEST(ElementwiseDtypes, BinaryOpsOnEveryDtype) {
  const std::pair<const char *, std::vector<DType>> cases[] = {
      {"Add", kF4}, {"Sub", kF4}, {"Mul", kF4},  {"Div", kF4}, {"Pow", kF4},  {"Max", kF4},
      {"Min", kF4}, {"Sum", kF4}, {"Mean", kF4}, {"Mod", kF4}, {"PRelu", kF4}};
  AttrMap fmod{{"fmod", AttrValue::ofInt(1)}};
  for (const auto &[op, types] : cases) {
    AttrMap attrs = std::string(op) == "Mod" ? fmod : AttrMap{};
    Tensor a = tensorOf(DType::F64, {4}, {0.5, -1.5, 2, 7});
    Tensor b = tensorOf(DType::F64, {4}, {2, 0.25, -3, 2.5});
    Tensor ref = run1(opNode(op, 2, attrs), {&a, &b});
    for (DType t : types) {
      Tensor x = tensorOf(t, {4}, {0.5, -1.5, 2, 7});
      Tensor y = tensorOf(t, {4}, {2, 0.25, -3, 2.5});
      Tensor z = run1(opNode(op, 2, attrs), {&x, &y});
      EXPECT_EQ(z.type(), tt(t, {4})) << op;
      expectLikeF64(z, ref, std::string(op) + " " + std::string(dtypeName(t)));
    }
  }
  // Integer dtypes: exact, against the same values computed in i64.
  const std::pair<const char *, std::vector<DType>> intCases[] = {
      {"Add", kInts},
      {"Sub", kInts},
      {"Mul", kInts},
      {"Div", kInts},
      {"Mod", kInts},
      {"Max", kInts},
      {"Min", kInts},
      {"Pow", {DType::I32, DType::I64}},
      {"PRelu", {DType::I32, DType::I64, DType::U32, DType::U64}}};
  for (const auto &[op, types] : intCases) {
    Tensor a = intsOf(DType::I64, {3}, {9, 7, 2});
    Tensor b = intsOf(DType::I64, {3}, {2, 3, 1});
    std::vector<int64_t> ref = intsIn(run1(opNode(op, 2), {&a, &b}));
    for (DType t : types) {
      Tensor x = intsOf(t, {3}, {9, 7, 2});
      Tensor y = intsOf(t, {3}, {2, 3, 1});
      Tensor z = run1(opNode(op, 2), {&x, &y});
      EXPECT_EQ(z.type(), tt(t, {3})) << op;
      EXPECT_EQ(intsIn(z), ref) << op << " " << dtypeName(t);
    }
  }
}

TEST(ElementwiseDtypes, IntegerUnaryOps) {
  for (DType t : kInts) {
    Tensor x = intsOf(t, {3}, {0, 3, 100});
    EXPECT_EQ(intsIn(unary("Abs", x)), (std::vector<int64_t>{0, 3, 100})) << dtypeName(t);
    EXPECT_EQ(intsIn(unary("Sign", x)), (std::vector<int64_t>{0, 1, 1})) << dtypeName(t);
    EXPECT_EQ(intsIn(unary("Erf", x)), (std::vector<int64_t>{0, 0, 1})) << dtypeName(t);
    EXPECT_EQ(intsIn(unary("Clip", x)), (std::vector<int64_t>{0, 3, 100})) << dtypeName(t);
    if (isSignedInteger(t)) {
      EXPECT_EQ(intsIn(unary("Neg", x)), (std::vector<int64_t>{0, -3, -100})) << dtypeName(t);
      EXPECT_EQ(intsIn(unary("Relu", x)), (std::vector<int64_t>{0, 3, 100})) << dtypeName(t);
    }
  }
}

} // namespace
} // namespace graphvet::testing
