// LSTM (src/ir/ops/lstm.cpp). Expected values are ONNX's conformance
// outputs (test_lstm_*) or a numpy reference of the equations.
#include "nn_test_util.h"

#include <cmath>

using namespace graphvet;
using namespace graphvet::testing;
using namespace graphvet::testing::nn;

namespace {

Tensor filled(DType t, Shape s, double v) {
  Tensor x(TensorType{t, std::move(s)});
  for (int64_t i = 0; i < x.size(); ++i)
    x.setDouble(i, v);
  return x;
}

Tensor iota(DType t, Shape s, double start = 1) {
  Tensor x(TensorType{t, std::move(s)});
  for (int64_t i = 0; i < x.size(); ++i)
    x.setDouble(i, start + static_cast<double>(i));
  return x;
}

/// An LSTM node with `inputs` slots of which the null ones are unconnected.
std::vector<Tensor> runLstm(std::vector<const Tensor *> inputs, AttrMap a = {}) {
  Node n = opNode("LSTM", inputs.size(), std::move(a), 3);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i])
      n.inputs[i] = std::nullopt;
  return run(n, inputs);
}

/// Direction d's slice [d] of a [D, ...] tensor.
Tensor slice0(const Tensor &t, int64_t d) {
  Shape s = t.shape();
  int64_t inner = t.size() / s[0];
  s[0] = 1;
  Tensor o(TensorType{t.dtype(), s});
  for (int64_t i = 0; i < inner; ++i)
    o.copyElement(i, t, d * inner + i);
  return o;
}

} // namespace

TEST(NnLstm, ConformanceDefaultsBiasPeepholes) {
  Tensor x = iota(DType::F32, {1, 3, 2});
  Tensor w = filled(DType::F32, {1, 12, 2}, 0.1f), r = filled(DType::F32, {1, 12, 3}, 0.1f);
  auto d = runLstm({&x, &w, &r}, {{"hidden_size", AttrValue::ofInt(3)}});
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].shape(), (Shape{1, 1, 3, 3}));
  EXPECT_EQ(d[1].shape(), (Shape{1, 3, 3}));
  expectNear(d[1], {0.09524120390415192, 0.09524120390415192, 0.09524120390415192,
                    0.2560644745826721, 0.2560644745826721, 0.2560644745826721, 0.4032377600669861,
                    0.4032377600669861, 0.4032377600669861});
  for (int64_t i = 0; i < 9; ++i) // Y's only step is Y_h
    EXPECT_EQ(d[0].getDouble(i), d[1].getDouble(i));

  Tensor x3 = iota(DType::F32, {1, 3, 3});
  Tensor w3 = filled(DType::F32, {1, 16, 3}, 0.1f), r3 = filled(DType::F32, {1, 16, 4}, 0.1f);
  Tensor b(TensorType{DType::F32, {1, 32}});
  for (int64_t i = 0; i < 16; ++i)
    b.setDouble(i, 0.1f);
  auto ib = runLstm({&x3, &w3, &r3, &b});
  expectNear(ib[1],
             {0.2560644745826721, 0.2560644745826721, 0.2560644745826721, 0.2560644745826721,
              0.536727786064148, 0.536727786064148, 0.536727786064148, 0.536727786064148,
              0.6672132015228271, 0.6672132015228271, 0.6672132015228271, 0.6672132015228271});

  Tensor xp = iota(DType::F32, {1, 2, 4});
  Tensor wp = filled(DType::F32, {1, 12, 4}, 0.1f), rp = filled(DType::F32, {1, 12, 3}, 0.1f);
  Tensor bp = filled(DType::F32, {1, 24}, 0), lens = tensorOf(DType::I32, {2}, {1, 1});
  Tensor h0 = filled(DType::F32, {1, 2, 3}, 0), c0 = filled(DType::F32, {1, 2, 3}, 0);
  Tensor p = filled(DType::F32, {1, 9}, 0.1f);
  auto pp = runLstm({&xp, &wp, &rp, &bp, &lens, &h0, &c0, &p});
  expectNear(pp[1], {0.37506911158561707, 0.37506911158561707, 0.37506911158561707,
                     0.6801308989524841, 0.6801308989524841, 0.6801308989524841});
}

TEST(NnLstm, BatchFirstLayout) {
  Tensor x = iota(DType::F32, {3, 1, 2});
  Tensor w = filled(DType::F32, {1, 28, 2}, 0.3f), r = filled(DType::F32, {1, 28, 7}, 0.3f);
  auto y = runLstm({&x, &w, &r},
                   {{"hidden_size", AttrValue::ofInt(7)}, {"layout", AttrValue::ofInt(1)}});
  EXPECT_EQ(y[0].shape(), (Shape{3, 1, 1, 7}));
  EXPECT_EQ(y[1].shape(), (Shape{3, 1, 7}));
  std::vector<double> want;
  for (double v : {0.33369261026382446, 0.6223931908607483, 0.7185789942741394})
    want.insert(want.end(), 7, v);
  expectNear(y[0], want);
  expectNear(y[1], want);
  // layout 1 is layout 0 with batch and sequence axes swapped.
  Tensor xs = iota(DType::F32, {1, 3, 2});
  auto y0 = runLstm({&xs, &w, &r});
  for (int64_t i = 0; i < 21; ++i)
    EXPECT_EQ(y0[1].getDouble(i), y[1].getDouble(i));
}

TEST(NnLstm, ClipInputForgetAndActivations) {
  Tensor x = tensorOf(DType::F32, {2, 1, 2}, {0.5, -1, 2, 0.25});
  Tensor w = tensorOf(
      DType::F32, {1, 8, 2},
      {0.1, -0.2, 0.3, 0.4, -0.5, 0.6, 0.7, -0.8, 0.9, 1.0, -1.1, 0.2, 0.3, 0.5, -0.4, 0.1});
  Tensor r = tensorOf(
      DType::F32, {1, 8, 2},
      {0.2, 0.1, -0.3, 0.5, 0.4, -0.6, 0.1, 0.2, -0.2, 0.3, 0.6, -0.1, 0.05, 0.7, -0.5, 0.25});
  Tensor b(TensorType{DType::F32, {1, 16}});
  for (int64_t i = 0; i < 16; ++i)
    b.setDouble(i, -0.4 + 0.8 * static_cast<double>(i) / 15);
  auto y = runLstm({&x, &w, &r, &b}, {{"clip", AttrValue::ofFloat(0.5)},
                                      {"input_forget", AttrValue::ofInt(1)},
                                      {"activations", strs({"HardSigmoid", "Tanh", "Relu"})},
                                      {"activation_alpha", floats({0.3})},
                                      {"activation_beta", floats({0.4})}});
  expectNear(y[0], {0.0, 0.010065297040396878, 0.03347587359489098, 0.0}, 1e-5, 1e-7);
  expectNear(y[1], {0.03347587359489098, 0.0}, 1e-5, 1e-7);
  expectNear(y[2], {0.13390349437956392, -0.19298644341774288}, 1e-5, 1e-7);
  // A clip no pre-activation reaches changes nothing.
  auto a = runLstm({&x, &w, &r, &b});
  auto c = runLstm({&x, &w, &r, &b}, {{"clip", AttrValue::ofFloat(1e9)}});
  for (size_t k = 0; k < 3; ++k)
    EXPECT_TRUE(bitIdentical(a[k], c[k]));
}

TEST(NnLstm, BidirectionalIsForwardAndReverse) {
  Tensor x = randomTensor(DType::F32, {4, 2, 3}, 51);
  Tensor w = randomTensor(DType::F32, {2, 8, 3}, 52), r = randomTensor(DType::F32, {2, 8, 2}, 53);
  Tensor b = randomTensor(DType::F32, {2, 16}, 54), p = randomTensor(DType::F32, {2, 6}, 55);
  Tensor h0 = randomTensor(DType::F32, {2, 2, 2}, 56), c0 = randomTensor(DType::F32, {2, 2, 2}, 57);
  Tensor lens = tensorOf(DType::I32, {2}, {4, 2});
  auto bi = runLstm({&x, &w, &r, &b, &lens, &h0, &c0, &p}, {{"direction", str("bidirectional")}});
  EXPECT_EQ(bi[0].shape(), (Shape{4, 2, 2, 2}));
  for (int64_t d = 0; d < 2; ++d) {
    Tensor wd = slice0(w, d), rd = slice0(r, d), bd = slice0(b, d), pd = slice0(p, d);
    Tensor hd = slice0(h0, d), cd = slice0(c0, d);
    auto one = runLstm({&x, &wd, &rd, &bd, &lens, &hd, &cd, &pd},
                       {{"direction", str(d == 0 ? "forward" : "reverse")}});
    for (int64_t t = 0; t < 4; ++t)
      for (int64_t i = 0; i < 4; ++i) // [batch, hidden]
        EXPECT_EQ(bi[0].getDouble((t * 2 + d) * 4 + i), one[0].getDouble(t * 4 + i));
    for (int64_t i = 0; i < 4; ++i) {
      EXPECT_EQ(bi[1].getDouble(d * 4 + i), one[1].getDouble(i));
      EXPECT_EQ(bi[2].getDouble(d * 4 + i), one[2].getDouble(i));
    }
  }
}

TEST(NnLstm, SequenceLengths) {
  Tensor x = randomTensor(DType::F32, {3, 2, 2}, 61);
  Tensor w = randomTensor(DType::F32, {1, 8, 2}, 62), r = randomTensor(DType::F32, {1, 8, 2}, 63);
  Tensor lens = tensorOf(DType::I32, {2}, {2, 0});
  for (const char *dir : {"forward", "reverse"}) {
    auto y = runLstm({&x, &w, &r, nullptr, &lens}, {{"direction", str(dir)}});
    // Steps past the length are 0; an empty sequence gives zero states.
    for (int64_t i = 0; i < 2; ++i) {
      EXPECT_EQ(y[0].getDouble((2 * 2 + 0) * 2 + i), 0); // t = 2, batch 0
      for (int64_t t = 0; t < 3; ++t)
        EXPECT_EQ(y[0].getDouble((t * 2 + 1) * 2 + i), 0); // batch 1
      EXPECT_EQ(y[1].getDouble(2 + i), 0);
      EXPECT_EQ(y[2].getDouble(2 + i), 0);
    }
    // Batch 0 equals a run on its first two steps alone.
    Tensor x0(TensorType{DType::F32, {2, 1, 2}});
    for (int64_t t = 0; t < 2; ++t)
      for (int64_t i = 0; i < 2; ++i)
        x0.setDouble(t * 2 + i, x.getDouble((t * 2 + 0) * 2 + i));
    auto alone = runLstm({&x0, &w, &r}, {{"direction", str(dir)}});
    for (int64_t t = 0; t < 2; ++t)
      for (int64_t i = 0; i < 2; ++i)
        EXPECT_EQ(y[0].getDouble((t * 2 + 0) * 2 + i), alone[0].getDouble(t * 2 + i));
    for (int64_t i = 0; i < 2; ++i)
      EXPECT_EQ(y[1].getDouble(i), alone[1].getDouble(i));
  }
}

TEST(NnLstm, DtypesAndIndeterminate) {
  Tensor w = filled(DType::F64, {1, 12, 2}, 0.1), r = filled(DType::F64, {1, 12, 3}, 0.1);
  Tensor x = iota(DType::F64, {1, 3, 2});
  auto d = runLstm({&x, &w, &r});
  EXPECT_EQ(d[1].dtype(), DType::F64);
  expectNear(d[1],
             {0.0952412, 0.0952412, 0.0952412, 0.2560645, 0.2560645, 0.2560645, 0.4032378,
              0.4032378, 0.4032378},
             1e-5);
  Tensor wh = filled(DType::F16, {1, 12, 2}, 0.1), rh = filled(DType::F16, {1, 12, 3}, 0.1);
  Tensor xh = iota(DType::F16, {1, 3, 2});
  auto h = runLstm({&xh, &wh, &rh});
  EXPECT_EQ(h[1].dtype(), DType::F16);
  expectNear(h[1], valuesOf(d[1]), 2e-3);
  // An indeterminate x_t of batch 0 spoils batch 0 from step t on.
  Tensor xs = randomTensor(DType::F32, {3, 2, 2}, 71);
  Tensor ws = randomTensor(DType::F32, {1, 8, 2}, 72), rs = randomTensor(DType::F32, {1, 8, 2}, 73);
  xs.setUndef((1 * 2 + 0) * 2 + 1);
  auto u = runLstm({&xs, &ws, &rs});
  EXPECT_EQ(undefIndices(u[0]), (std::vector<int64_t>{4, 5, 8, 9}));
  EXPECT_EQ(undefIndices(u[1]), (std::vector<int64_t>{0, 1}));
  // A length outside [0, seq_length] is undefined: the batch entry is indeterminate.
  Tensor xs2 = randomTensor(DType::F32, {3, 2, 2}, 71);
  Tensor lens = tensorOf(DType::I32, {2}, {3, 4});
  auto l = runLstm({&xs2, &ws, &rs, nullptr, &lens});
  EXPECT_EQ(undefIndices(l[0]), (std::vector<int64_t>{2, 3, 6, 7, 10, 11}));
  EXPECT_EQ(undefIndices(l[2]), (std::vector<int64_t>{2, 3}));
}

TEST(NnLstm, InferenceErrors) {
  TensorType x{DType::F32, {3, 2, 4}}, w{DType::F32, {1, 12, 4}}, r{DType::F32, {1, 12, 3}};
  Node n = opNode("LSTM", 3);
  EXPECT_EQ(inferError(n, {x, TensorType{DType::F32, {1, 12, 5}}, r}),
            "input 1 (W) must have shape [1, 12, 4], got f32[1, 12, 5]");
  EXPECT_EQ(inferError(opNode("LSTM", 3, {{"direction", str("bidirectional")}}), {x, w, r}),
            "input 1 (W) must have shape [2, 12, 4], got f32[1, 12, 4]");
  EXPECT_EQ(inferError(opNode("LSTM", 3, {{"direction", str("backward")}}), {x, w, r}),
            "direction must be forward, reverse or bidirectional, got \"backward\"");
  EXPECT_EQ(inferError(opNode("LSTM", 3, {{"activations", strs({"Sigmoid", "Tanh"})}}), {x, w, r}),
            "activations must name 3 functions (f, g, h per direction), got 2");
  EXPECT_EQ(inferError(opNode("LSTM", 3, {{"activations", strs({"Sigmoid", "Tanh", "Gelu"})}}),
                       {x, w, r}),
            "unknown LSTM activation \"Gelu\"");
  EXPECT_EQ(inferError(opNode("LSTM", 3, {{"hidden_size", AttrValue::ofInt(4)}}), {x, w, r}),
            "hidden_size 4 does not match R's f32[1, 12, 3]");
  EXPECT_EQ(inferError(opNode("LSTM", 5), {x, w, r, std::nullopt, TensorType{DType::I64, {2}}}),
            "input 4 (sequence_lens) must be i32, got i64");
  EXPECT_EQ(inferError(opNode("LSTM", 3), {TensorType{DType::I32, {3, 2, 4}}, w, r}),
            "input 0 (X) must be f16, f32 or f64, got i32");
  EXPECT_EQ(inferError(opNode("LSTM", 3, {{"layout", AttrValue::ofInt(2)}}), {x, w, r}),
            "layout of LSTM must be 0 or 1, got 2");
  // Output types: Y, Y_h, Y_c.
  std::string error;
  std::vector<std::optional<TensorType>> in = {x, w, r};
  std::vector<const Tensor *> none(3, nullptr);
  auto t = inferNodeTypes(n, in, none, error);
  ASSERT_TRUE(t.has_value()) << error;
  ASSERT_EQ(t->size(), 3u);
  EXPECT_EQ((*t)[0], (TensorType{DType::F32, {3, 1, 2, 3}}));
  EXPECT_EQ((*t)[1], (TensorType{DType::F32, {1, 2, 3}}));
  EXPECT_EQ((*t)[2], (TensorType{DType::F32, {1, 2, 3}}));
}
