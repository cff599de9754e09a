// The `approx` contract's shadow evaluation (oracle/magnitude.h): each rule
// family on hand-computed magnitudes, the bound's formula, and the
// interpreter carrying tolerances to observations only when asked.
#include "ir/op_library.h"
#include "ir/parser.h"
#include "oracle/inlined.h"
#include "oracle/interpreter.h"
#include "oracle/magnitude.h"
#include "oracle/memory_plan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace graphvet::oracle {
namespace {

Tensor f32(Shape shape, std::vector<double> values) {
  Tensor t(TensorType{DType::F32, std::move(shape)});
  for (size_t i = 0; i < values.size(); ++i)
    t.setDouble(static_cast<int64_t>(i), values[i]);
  return t;
}

Node node(const std::string &type) {
  Node n;
  n.type = type;
  n.name = "n";
  return n;
}

std::vector<Magnitude> propagate(const Node &n, const std::vector<const Tensor *> &in,
                                 const std::vector<const Magnitude *> &shadows, const Tensor &out) {
  std::vector<Tensor> outs{out};
  return propagateMagnitudes(n, lookupOp(n.type), in, shadows, outs);
}

TEST(Magnitude, SubAddsTheOperandsMagnitudes) {
  Tensor a = f32({2}, {3, -1}), b = f32({2}, {5, 2}), out = f32({2}, {-2, -3});
  auto m = propagate(node("Sub"), {&a, &b}, {nullptr, nullptr}, out);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].m, (std::vector<double>{8, 3}));
  EXPECT_EQ(m[0].unit, std::ldexp(1.0, -24));
  EXPECT_GE(m[0].depth, 1u);
}

TEST(Magnitude, MatMulSumsAbsoluteProductsAndCountsTheTerms) {
  Tensor a = f32({1, 2}, {1, -2}), b = f32({2, 1}, {-3, 4}), out = f32({1, 1}, {-11});
  auto m = propagate(node("MatMul"), {&a, &b}, {nullptr, nullptr}, out);
  EXPECT_EQ(m[0].m, (std::vector<double>{11})); // |1*-3| + |-2*4|
  // Two terms summed, plus the product and slack: longer than an element-wise op.
  auto e = propagate(node("Relu"), {&a}, {nullptr}, f32({1, 2}, {1, 0}));
  EXPECT_GT(m[0].depth, e[0].depth);
}

TEST(Magnitude, IncomingMagnitudesPropagateThroughKernels) {
  Tensor a = f32({2}, {1, 1}), b = f32({2}, {1, 1}), out = f32({2}, {2, 2});
  Magnitude ma{{10, 20}, 5, std::ldexp(1.0, -24)};
  auto m = propagate(node("Add"), {&a, &b}, {&ma, nullptr}, out);
  EXPECT_EQ(m[0].m, (std::vector<double>{11, 21}));
  EXPECT_GT(m[0].depth, 5u);
}

TEST(Magnitude, MinUsesTheLargerMagnitude) {
  Tensor a = f32({1}, {-100}), b = f32({1}, {1}), out = f32({1}, {-100});
  auto m = propagate(node("Min"), {&a, &b}, {nullptr, nullptr}, out);
  EXPECT_EQ(m[0].m, (std::vector<double>{100}));
}

TEST(Magnitude, SigmoidScalesByItsLipschitzConstantAndAddsItsOwnRounding) {
  Tensor x = f32({1}, {0}), out = f32({1}, {0.5});
  Magnitude mx{{8}, 3, std::ldexp(1.0, -24)};
  auto m = propagate(node("Sigmoid"), {&x}, {&mx}, out);
  EXPECT_EQ(m[0].m, (std::vector<double>{0.25 * 8 + 0.5}));
}

TEST(Magnitude, LayerNormalizationFollowsTheDerivedStatisticsBound) {
  // One row {1, 3}: mu = 2, var = 1, eps = 0 so s = 1, z = {-1, 1}; exact
  // input (Mx = |x|), scale {2, 2}, no bias. Per docs/numbers.md:
  // V = var + eps + 8 mean(Mx^2) = 1 + 8 * 5 = 41 (the f32 tiny term is
  // negligible), D = Mx + mean(Mx) = {3, 5}, N = D / s + |z| (V / 2 + 2),
  // M = 2 (N + 2 |z|).
  Node ln = node("LayerNormalization");
  ln.attrs["epsilon"] = AttrValue::ofFloat(0);
  Tensor x = f32({1, 2}, {1, 3}), scale = f32({2}, {2, 2}), out = f32({1, 2}, {-2, 2});
  auto m = propagate(ln, {&x, &scale}, {nullptr, nullptr}, out);
  ASSERT_EQ(m[0].m.size(), 2u);
  EXPECT_NEAR(m[0].m[0], 2 * (3 + 22.5 + 2), 1e-9);
  EXPECT_NEAR(m[0].m[1], 2 * (5 + 22.5 + 2), 1e-9);
  // Two sums of the row's 2 elements and ten element-wise steps.
  EXPECT_GE(m[0].depth, 14u);
  EXPECT_EQ(m[0].unit, std::ldexp(1.0, -24));
}

TEST(Magnitude, InstanceNormalizationGroupsByPlaneAndIsUnboundedNearF16Overflow) {
  Node in = node("InstanceNormalization");
  auto f16 = [](Shape shape, std::vector<double> values) {
    Tensor t(TensorType{DType::F16, std::move(shape)});
    for (size_t i = 0; i < values.size(); ++i)
      t.setDouble(static_cast<int64_t>(i), values[i]);
    return t;
  };
  // Channel 0 small values, channel 1 values whose squares overflow f16.
  Tensor x = f16({1, 2, 2}, {1, -1, 300, -300}), scale = f16({2}, {1, 1}), bias = f16({2}, {0, 0});
  Tensor out = f16({1, 2, 2}, {1, -1, 1, -1});
  auto m = propagate(in, {&x, &scale, &bias}, {nullptr, nullptr, nullptr}, out);
  ASSERT_EQ(m[0].m.size(), 4u);
  EXPECT_TRUE(std::isfinite(m[0].m[0]) && std::isfinite(m[0].m[1]));
  EXPECT_TRUE(std::isinf(m[0].m[2]) && std::isinf(m[0].m[3]));
  EXPECT_EQ(m[0].unit, std::ldexp(1.0, -11));
}

TEST(Magnitude, BatchNormalizationCountsTheMeanAsAddedMagnitude) {
  Node bn = node("BatchNormalization");
  bn.attrs["epsilon"] = AttrValue::ofFloat(0);
  Tensor x = f32({1, 1}, {1}), scale = f32({1}, {-2}), bias = f32({1}, {-3}), mean = f32({1}, {4}),
         var = f32({1}, {1}), out = f32({1, 1}, {3});
  auto m = propagate(bn, {&x, &scale, &bias, &mean, &var}, {}, out);
  // (|x| + |mean|) * |scale| / sqrt(var) + |bias| = (1 + 4) * 2 + 3
  EXPECT_EQ(m[0].m, (std::vector<double>{13}));
}

TEST(Magnitude, AnOpWithoutARuleIsUnbounded) {
  Tensor x = f32({1}, {2}), y = f32({1}, {3}), out = f32({1}, {8});
  auto m = propagate(node("Pow"), {&x, &y}, {nullptr, nullptr}, out);
  EXPECT_TRUE(std::isinf(m[0].m[0]));
  EXPECT_TRUE(std::isinf(allowedDistance(m[0], 0, DType::F32)));
}

TEST(Magnitude, ComparisonsOfExactValuesStayExact) {
  Tensor a = f32({1}, {1}), b = f32({1}, {2});
  Tensor out(TensorType{DType::Bool, {1}});
  auto m = propagate(node("Less"), {&a, &b}, {nullptr, nullptr}, out);
  EXPECT_EQ(m[0].unit, 0.0);
  EXPECT_EQ(allowedDistance(m[0], 0, DType::Bool), 0.0);
  // ...but a comparison of rounded values may flip: unbounded.
  Magnitude ma{{1}, 2, std::ldexp(1.0, -24)};
  auto r = propagate(node("Less"), {&a, &b}, {&ma, nullptr}, out);
  EXPECT_TRUE(std::isinf(allowedDistance(r[0], 0, DType::Bool)));
}

TEST(Magnitude, AnOverflowInTheOriginalUnboundsTheElement) {
  Tensor a = f32({2}, {1, 1}), b = f32({2}, {1, 1});
  Tensor out = f32({2}, {2, std::numeric_limits<double>::infinity()});
  auto m = propagate(node("Add"), {&a, &b}, {nullptr, nullptr}, out);
  EXPECT_EQ(m[0].m[0], 2.0);
  EXPECT_TRUE(std::isinf(m[0].m[1]));
}

TEST(Magnitude, TheBoundIsTwiceGammaOfTheChainTimesTheMagnitude) {
  Magnitude s{{4}, 10, std::ldexp(1.0, -24)};
  double nu = (10 + kRewriteSlack) * std::ldexp(1.0, -24);
  double expected = 2 * (nu / (1 - nu) * 4 + (10 + kRewriteSlack) * std::ldexp(1.0, -149));
  EXPECT_DOUBLE_EQ(allowedDistance(s, 0, DType::F32), expected);
  EXPECT_EQ(allowedDistance(exactMagnitude(f32({1}, {4})), 0, DType::F32), 0.0);
}

TEST(Magnitude, TheInterpreterReportsTolerancesOnlyWhenAsked) {
  ParseResult pr = parseModule(R"(graph root {
  x = Data() {index = 0, out0.dtype = f32, out0.shape = [4]}
  c = Const() {value = f32[4] {1, -2, 3, -4}}
  m = Mul(x, c)
  out = NetOutput(m)
})");
  ASSERT_TRUE(pr.module);
  const Module &mod = *pr.module;
  MemoryPlan plan = MemoryPlan::build(mod);
  InlinedModule inl = InlinedModule::build(mod, plan);
  Interpreter interp(mod, plan, inl);
  ExperimentResult plain = interp.experiment(1);
  ASSERT_FALSE(plain.crashed());
  EXPECT_TRUE(plain.run1.observation.outputViews[0].tolerance.empty());
  interp.setShadow(true);
  ExperimentResult shadowed = interp.experiment(1);
  const std::vector<double> &tol = shadowed.run1.observation.outputViews[0].tolerance;
  ASSERT_EQ(tol.size(), 4u);
  EXPECT_GT(tol[2], 0.0); // |x * 3| rounded once
  EXPECT_EQ(plain.run1.observation.outputs, shadowed.run1.observation.outputs);
}

} // namespace
} // namespace graphvet::oracle
