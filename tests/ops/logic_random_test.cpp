// Type inference and kernel tests of Dropout and the random ops
// (src/ir/ops/logic_random.cpp, tensor-semantics.md §6). Random draws come
// from a RandomStream as the interpreter supplies it; without one every drawn
// element is indeterminate.
#include "kernel_test_util.h"

#include <cmath>
#include <limits>

namespace graphvet::testing {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

/// Runs the node with a random stream keyed by (seed, node name, execution).
std::vector<Tensor> runRandom(const Node &n, std::vector<const Tensor *> inputs, uint64_t seed,
                              uint64_t execution = 0) {
  RandomStream stream(seed, n.name, execution);
  std::string error;
  auto r = evaluateNode(n, inputs, error, &stream);
  EXPECT_TRUE(r.has_value()) << n.type << ": " << error;
  return r ? std::move(*r) : std::vector<Tensor>{};
}

Tensor iota(DType t, Shape shape) {
  Tensor x(TensorType{t, std::move(shape)});
  for (int64_t i = 0; i < x.size(); ++i)
    x.setDouble(i, static_cast<double>(i + 1) * (i % 2 ? -1 : 1));
  return x;
}

Tensor scalar(DType t, double v) {
  return tensorOf(t, {}, {v});
}

// --- Dropout ---------------------------------------------------------------

TEST(LogicDropout, InferenceModeIsIdentity) {
  // test_dropout_default_mask (opset 13): no ratio/training inputs; and
  // test_dropout_default_old / test_dropout_random_old (opset 11, attribute
  // ratio): output = input, mask all true.
  Tensor x = tensorOf(DType::F32, {3}, {-1, kNaN, 1});
  x.setUndef(2);
  auto r = run(opNode("Dropout", 1, {{"seed", AttrValue::ofInt(0)}}, 2), {&x});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].type(), x.type());
  EXPECT_EQ(r[0].getDouble(0), -1);
  EXPECT_TRUE(std::isnan(r[0].getDouble(1)));
  EXPECT_TRUE(r[0].isUndef(2));
  EXPECT_EQ(r[1].type(), (TensorType{DType::Bool, {3}}));
  EXPECT_EQ(valuesOf(r[1]), (std::vector<double>{1, 1, 1}));
  EXPECT_FALSE(r[1].anyUndef());
  r = run(opNode("Dropout", 1, {{"ratio", AttrValue::ofFloat(0.2f)}}), {&x});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].getDouble(0), -1);
  // test_dropout_default_mask_ratio: ratio 0.1 without training_mode.
  Tensor ratio = scalar(DType::F32, 0.1);
  r = run(opNode("Dropout", 2, {}, 2), {&x, &ratio});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].getDouble(0), -1);
  EXPECT_EQ(valuesOf(r[1]), (std::vector<double>{1, 1, 1}));
  // training_mode = false, explicitly; the stream is not needed.
  Tensor no = scalar(DType::Bool, 0);
  Tensor bad = scalar(DType::F32, 7); // ignored outside training
  r = run(opNode("Dropout", 3, {}, 2), {&x, &bad, &no});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].getDouble(0), -1);
  EXPECT_FALSE(r[1].anyUndef());
}

TEST(LogicDropout, TrainingZeroRatioIsIdentity) {
  // test_training_dropout_zero_ratio_mask: deterministic, no stream needed.
  Tensor x = tensorOf(DType::F32, {4}, {1.7640524, 0.4001572, 0.978738, -0.9772779});
  Tensor ratio = scalar(DType::F32, 0);
  Tensor yes = scalar(DType::Bool, 1);
  auto r = run(opNode("Dropout", 3, {}, 2), {&x, &ratio, &yes});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(valuesOf(r[0]), valuesOf(x));
  EXPECT_EQ(valuesOf(r[1]), (std::vector<double>{1, 1, 1, 1}));
  EXPECT_FALSE(r[0].anyUndef() || r[1].anyUndef());
}

TEST(LogicDropout, TrainingWithoutStreamIsIndeterminate) {
  Tensor x = tensorOf(DType::F32, {2}, {1, 2});
  Tensor ratio = scalar(DType::F32, 0.5);
  Tensor yes = scalar(DType::Bool, 1);
  auto r = run(opNode("Dropout", 3, {}, 2), {&x, &ratio, &yes});
  ASSERT_EQ(r.size(), 2u);
  for (int64_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(r[0].isUndef(i));
    EXPECT_TRUE(r[1].isUndef(i));
  }
}

TEST(LogicDropout, TrainingDropsAndScales) {
  // ONNX: output = scale * data * mask, scale = 1 / (1 - ratio); checked as
  // test_training_dropout_mask's values would be (ratio 0.75: kept elements
  // times 4, dropped ones ±0).
  Tensor x = iota(DType::F32, {3, 4, 5});
  for (double ratio : {0.5, 0.75}) {
    Tensor rt = scalar(DType::F32, ratio);
    Tensor yes = scalar(DType::Bool, 1);
    Node n = opNode("Dropout", 3, {{"seed", AttrValue::ofInt(0)}}, 2);
    auto r = runRandom(n, {&x, &rt, &yes}, 42);
    ASSERT_EQ(r.size(), 2u);
    int kept = 0;
    for (int64_t i = 0; i < x.size(); ++i) {
      ASSERT_FALSE(r[0].isUndef(i) || r[1].isUndef(i));
      double v = x.getDouble(i), y = r[0].getDouble(i);
      if (r[1].getBool(i)) {
        ++kept;
        EXPECT_EQ(y, v / (1 - ratio)) << i;
      } else {
        EXPECT_EQ(y, 0) << i;
        EXPECT_EQ(std::signbit(y), std::signbit(v)) << i; // data * 0
      }
    }
    // 60 draws: the kept fraction is near 1 - ratio.
    EXPECT_GT(kept, 60 * (1 - ratio) - 20);
    EXPECT_LT(kept, 60 * (1 - ratio) + 20);
    // The same stream gives the same draw; another execution another one.
    auto again = runRandom(n, {&x, &rt, &yes}, 42);
    auto other = runRandom(n, {&x, &rt, &yes}, 42, 1);
    ASSERT_EQ(again.size(), 2u);
    ASSERT_EQ(other.size(), 2u);
    EXPECT_EQ(valuesOf(again[1]), valuesOf(r[1]));
    EXPECT_NE(valuesOf(other[1]), valuesOf(r[1]));
  }
}

TEST(LogicDropout, TrainingF16ComputesInF32) {
  Tensor x =
      tensorOf(DType::F16, {16},
               {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 65504});
  x.setUndef(0);
  Tensor rt = scalar(DType::F32, 0.1);
  Tensor yes = scalar(DType::Bool, 1);
  auto r = runRandom(opNode("Dropout", 3), {&x, &rt, &yes}, 7);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].isUndef(0));
  float scale = 1.0f / (1.0f - 0.1f);
  bool anyKept = false;
  for (int64_t i = 1; i < 16; ++i) {
    double y = r[0].getDouble(i);
    if (y == 0)
      continue;
    anyKept = true;
    Tensor expect(TensorType{DType::F16, {1}});
    expect.setDouble(0, static_cast<double>(static_cast<float>(x.getDouble(i)) * scale));
    EXPECT_EQ(y, expect.getDouble(0)) << i; // 65504 * 1.11 -> inf
  }
  EXPECT_TRUE(anyKept);
}

TEST(LogicDropout, UndefinedCombinationsAreIndeterminate) {
  Tensor x = tensorOf(DType::F32, {2}, {1, 2});
  Tensor yes = scalar(DType::Bool, 1);
  for (double ratio : {1.0, -0.1, kNaN, kInf}) {
    Tensor rt = scalar(DType::F64, ratio);
    auto r = runRandom(opNode("Dropout", 3, {}, 2), {&x, &rt, &yes}, 1);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_TRUE(r[0].isUndef(0) && r[0].isUndef(1) && r[1].isUndef(0)) << ratio;
  }
  Tensor rt = scalar(DType::F32, 0.5);
  Tensor t = scalar(DType::Bool, 1);
  t.setUndef(0);
  auto r = runRandom(opNode("Dropout", 3, {}, 2), {&x, &rt, &t}, 1);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_TRUE(r[0].isUndef(1) && r[1].isUndef(1));
  rt.setUndef(0);
  r = runRandom(opNode("Dropout", 3, {}, 2), {&x, &rt, &yes}, 1);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_TRUE(r[0].isUndef(1) && r[1].isUndef(1));
}

TEST(LogicDropout, InferenceErrors) {
  Node d = opNode("Dropout", 3, {}, 2);
  TensorType x{DType::F32, {3, 4}}, ratio{DType::F32, {}}, train{DType::Bool, {}};
  EXPECT_EQ(inferError(d, {x, ratio, train}), "");
  EXPECT_EQ(inferError(d, {x, std::nullopt, train}), "");
  EXPECT_NE(inferError(d, {TensorType{DType::I32, {3}}, ratio, train}).find("input 0 (data)"),
            std::string::npos);
  EXPECT_NE(inferError(d, {x, TensorType{DType::F32, {1}}, train}).find("must be a scalar"),
            std::string::npos);
  EXPECT_NE(inferError(d, {x, TensorType{DType::BF16, {}}, train}).find("input 1 (ratio)"),
            std::string::npos);
  EXPECT_NE(inferError(d, {x, ratio, TensorType{DType::F32, {}}}).find("training_mode"),
            std::string::npos);
  EXPECT_NE(inferError(opNode("Dropout", 1, {}, 3), {x}).find("at most 2 outputs"),
            std::string::npos);
  EXPECT_NE(inferError(opNode("Dropout", 4), {x, ratio, train, train}).find("1 to 3 inputs"),
            std::string::npos);
}

// --- RandomUniformLike, RandomNormalLike -----------------------------------

TEST(LogicRandom, UniformLikeRangeAndDType) {
  Tensor like(TensorType{DType::I32, {4, 25}});
  like.setUndef(3); // the input's values (and indeterminacy) are unread
  Node n = opNode("RandomUniformLike", 1,
                  {{"low", AttrValue::ofFloat(-2.0)},
                   {"high", AttrValue::ofFloat(3.0)},
                   {"dtype", AttrValue::ofIdent("f32")},
                   {"seed", AttrValue::ofFloat(0.0)}});
  auto r = runRandom(n, {&like}, 5);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].type(), (TensorType{DType::F32, {4, 25}}));
  double sum = 0;
  for (int64_t i = 0; i < r[0].size(); ++i) {
    ASSERT_FALSE(r[0].isUndef(i));
    double v = r[0].getDouble(i);
    EXPECT_GE(v, -2.0);
    EXPECT_LE(v, 3.0);
    sum += v;
  }
  EXPECT_NEAR(sum / 100, 0.5, 0.5); // mean 0.5, sd of the mean ~0.14
  // Default dtype: the input's; default range [0, 1).
  Tensor h(TensorType{DType::F16, {8}});
  r = runRandom(opNode("RandomUniformLike", 1), {&h}, 5);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].dtype(), DType::F16);
  for (int64_t i = 0; i < 8; ++i) {
    EXPECT_GE(r[0].getDouble(i), 0.0);
    EXPECT_LE(r[0].getDouble(i), 1.0);
  }
  // Without a stream: indeterminate.
  auto u = run(n, {&like});
  ASSERT_EQ(u.size(), 1u);
  EXPECT_TRUE(u[0].isUndef(0) && u[0].isUndef(99));
}

TEST(LogicRandom, NormalLikeMeanAndScale) {
  Tensor like(TensorType{DType::F64, {400}});
  Node n = opNode("RandomNormalLike", 1,
                  {{"mean", AttrValue::ofFloat(10.0)}, {"scale", AttrValue::ofFloat(0.5)}});
  auto r = runRandom(n, {&like}, 9);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].type(), like.type());
  double sum = 0, sq = 0;
  for (int64_t i = 0; i < 400; ++i) {
    double v = r[0].getDouble(i);
    ASSERT_TRUE(std::isfinite(v));
    sum += v;
    sq += (v - 10) * (v - 10);
  }
  EXPECT_NEAR(sum / 400, 10.0, 0.15);         // sd of the mean 0.025
  EXPECT_NEAR(std::sqrt(sq / 400), 0.5, 0.1); // sample sd
  auto u = run(n, {&like});
  ASSERT_EQ(u.size(), 1u);
  EXPECT_TRUE(u[0].isUndef(0));
}

TEST(LogicRandom, LikeInferenceErrors) {
  // Output dtype f16, f32 or f64 (ONNX T2): an integer input needs `dtype`.
  EXPECT_NE(inferError(opNode("RandomUniformLike", 1), {TensorType{DType::I32, {2}}})
                .find("output dtype of RandomUniformLike must be one of f16, f32, f64, got i32"),
            std::string::npos);
  EXPECT_EQ(inferError(opNode("RandomNormalLike", 1, {{"dtype", AttrValue::ofIdent("f64")}}),
                       {TensorType{DType::I32, {2}}}),
            "");
  EXPECT_NE(inferError(opNode("RandomNormalLike", 1, {{"dtype", AttrValue::ofIdent("x")}}),
                       {TensorType{DType::F32, {2}}})
                .find("must name a dtype"),
            std::string::npos);
  EXPECT_NE(inferError(opNode("RandomNormalLike", 0), {}).find("1 input"), std::string::npos);
}

// --- Bernoulli -------------------------------------------------------------

TEST(LogicBernoulli, ValuesAreZeroOrOne) {
  // test_bernoulli_double's input (f32 probabilities, dtype = f64): every
  // output is 0 or 1; p = 0 gives 0 and p = 1 gives 1.
  Tensor p = tensorOf(DType::F32, {12},
                      {0.5488135, 0.71518934, 0.60276335, 0.5448832, 0.4236548, 0.6458941,
                       0.4375872, 0.891773, 0.96366274, 0.3834415, 0, 1});
  Node n = opNode("Bernoulli", 1, {{"dtype", AttrValue::ofIdent("f64")}});
  auto r = runRandom(n, {&p}, 3);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].type(), (TensorType{DType::F64, {12}}));
  for (int64_t i = 0; i < 12; ++i) {
    ASSERT_FALSE(r[0].isUndef(i));
    double v = r[0].getDouble(i);
    EXPECT_TRUE(v == 0 || v == 1) << v;
  }
  EXPECT_EQ(r[0].getDouble(10), 0);
  EXPECT_EQ(r[0].getDouble(11), 1);
  // Frequency over many draws of p = 0.25 (as bool and i32 outputs).
  Tensor q(TensorType{DType::F64, {400}});
  for (int64_t i = 0; i < 400; ++i)
    q.setDouble(i, 0.25);
  for (DType t : {DType::Bool, DType::I32}) {
    Node m = opNode("Bernoulli", 1, {{"dtype", AttrValue::ofIdent(std::string(dtypeName(t)))}});
    auto s = runRandom(m, {&q}, 11);
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(s[0].dtype(), t);
    double ones = 0;
    for (double v : valuesOf(s[0]))
      ones += v;
    EXPECT_NEAR(ones / 400, 0.25, 0.08);
  }
}

TEST(LogicBernoulli, IndeterminateCases) {
  Tensor p = tensorOf(DType::F16, {5}, {0.5, 1.5, -0.25, kNaN, 0.5});
  p.setUndef(4);
  auto r = runRandom(opNode("Bernoulli", 1), {&p}, 3);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].dtype(), DType::F16);
  EXPECT_FALSE(r[0].isUndef(0));
  for (int64_t i = 1; i < 5; ++i) // out of [0, 1], NaN, indeterminate
    EXPECT_TRUE(r[0].isUndef(i)) << i;
  auto u = run(opNode("Bernoulli", 1), {&p});
  ASSERT_EQ(u.size(), 1u);
  EXPECT_TRUE(u[0].isUndef(0)); // no stream
}

TEST(LogicBernoulli, InferenceErrors) {
  EXPECT_NE(inferError(opNode("Bernoulli", 1), {TensorType{DType::I32, {2}}})
                .find("input 0 of Bernoulli must be one of f16, f32, f64"),
            std::string::npos);
  EXPECT_NE(inferError(opNode("Bernoulli", 1, {{"dtype", AttrValue::ofIdent("f8")}}),
                       {TensorType{DType::F32, {2}}})
                .find("must name a dtype"),
            std::string::npos);
  EXPECT_EQ(inferError(opNode("Bernoulli", 1, {{"dtype", AttrValue::ofIdent("u8")}}),
                       {TensorType{DType::F32, {2}}}),
            "");
}

} // namespace
} // namespace graphvet::testing
