// BatchNormalization, InstanceNormalization, LayerNormalization
// (src/ir/ops/norm.cpp). Exact expectations come from numpy float32 step by
// step in the documented order (bit for bit); others from ONNX's
// conformance data.
#include "nn_test_util.h"

#include <cmath>

using namespace graphvet;
using namespace graphvet::testing;
using namespace graphvet::testing::nn;

namespace {

Node batchNorm(AttrMap a = {}, uint32_t outs = 1) {
  return opNode("BatchNormalization", 5, std::move(a), outs);
}

struct BnInputs {
  Tensor x = tensorOf(DType::F32, {2, 2, 3}, {-1, 0, 1, 2, 3, 4, 0.3, -2.5, 7, 1.25, -0.75, 5.5});
  Tensor s = tensorOf(DType::F32, {2}, {1, 1.5});
  Tensor b = tensorOf(DType::F32, {2}, {0, 1});
  Tensor m = tensorOf(DType::F32, {2}, {0.1, 3});
  Tensor v = tensorOf(DType::F32, {2}, {1, 1.5});
  std::vector<const Tensor *> all() const { return {&x, &s, &b, &m, &v}; }
};

/// Element i as the float32 numpy computed (compared bit for bit).
void expectF32(const Tensor &t, const std::vector<double> &want) {
  ASSERT_EQ(t.size(), static_cast<int64_t>(want.size()));
  for (int64_t i = 0; i < t.size(); ++i)
    EXPECT_EQ(t.getDouble(i), static_cast<double>(static_cast<float>(want[static_cast<size_t>(i)])))
        << "element " << i;
}

} // namespace

TEST(NnNorm, BatchNormInferenceExactOrder) {
  BnInputs in;
  auto y = run(batchNorm(), in.all());
  ASSERT_EQ(y.size(), 1u);
  // ((x - mean) / sqrt(var + eps)) * scale + B, each step an f32 rounding.
  expectF32(y[0],
            {-1.0999945402145386, -0.09999950230121613, 0.8999954462051392, -0.22474074363708496,
             1.0, 2.224740743637085, 0.19999901950359344, -2.5999867916107178, 6.899965763092041,
             -1.143296241760254, -3.592778205871582, 4.061851978302002});
}

TEST(NnNorm, BatchNormEpsilonIsInsideTheSquareRoot) {
  Tensor x = tensorOf(DType::F32, {1, 1, 2}, {1, -3});
  Tensor s = tensorOf(DType::F32, {1}, {1}), b = tensorOf(DType::F32, {1}, {0});
  Tensor m = tensorOf(DType::F32, {1}, {0}), v = tensorOf(DType::F32, {1}, {0});
  auto y = run(batchNorm({{"epsilon", AttrValue::ofFloat(0.25)}}), {&x, &s, &b, &m, &v});
  EXPECT_EQ(valuesOf(y[0]), (std::vector<double>{2, -6})); // / sqrt(0 + 0.25)
}

TEST(NnNorm, BatchNormTrainingMode) {
  BnInputs in;
  auto r = run(batchNorm({{"training_mode", AttrValue::ofInt(1)}}, 3), in.all());
  ASSERT_EQ(r.size(), 3u);
  expectF32(r[0],
            {-0.6027968525886536, -0.2679097354412079, 0.06697742640972137, 0.6240200996398926,
             1.3759799003601074, 2.1279397010803223, -0.16744358837604523, -1.1051275730133057,
             2.0763003826141357, 0.060050249099731445, -1.4438693523406982, 3.2558794021606445});
  // running = input * momentum + batch * (1 - momentum), population variance
  expectF32(r[1], {0.17000001668930054, 2.9499998092651367});
  expectF32(r[2], {1.791666865348816, 1.7479166984558105});
  // ... which is ONNX's f64 reference within float rounding.
  expectNear(r[1], {0.16999999632438023, 2.9499998092651367});
  expectNear(r[2], {1.7916666426261267, 1.747916571299235});
}

TEST(NnNorm, BatchNormDtypesAndLayouts) {
  BnInputs in;
  auto ref = run(batchNorm(), in.all());
  // f16 data with f32 statistics (opset 15's T, T1, T2): computed in f32,
  // rounded once to f16.
  Tensor xh(TensorType{DType::F16, in.x.shape()});
  for (int64_t i = 0; i < in.x.size(); ++i)
    xh.setDouble(i, in.x.getDouble(i));
  Tensor xr(TensorType{DType::F32, in.x.shape()}); // the f16 values, in f32
  for (int64_t i = 0; i < in.x.size(); ++i)
    xr.setDouble(i, xh.getDouble(i));
  auto hr = run(batchNorm(), {&xr, &in.s, &in.b, &in.m, &in.v});
  auto h = run(batchNorm(), {&xh, &in.s, &in.b, &in.m, &in.v});
  EXPECT_EQ(h[0].dtype(), DType::F16);
  for (int64_t i = 0; i < h[0].size(); ++i)
    EXPECT_EQ(h[0].getDouble(i), f16ToDouble(f16FromDouble(hr[0].getDouble(i))));
  // bf16 everywhere.
  auto bf = [](const Tensor &t) {
    Tensor o(TensorType{DType::BF16, t.shape()});
    for (int64_t i = 0; i < t.size(); ++i)
      o.setDouble(i, t.getDouble(i));
    return o;
  };
  Tensor xb = bf(in.x), sb = bf(in.s), bb = bf(in.b), mb = bf(in.m), vb = bf(in.v);
  auto b16 = run(batchNorm(), {&xb, &sb, &bb, &mb, &vb});
  EXPECT_EQ(b16[0].dtype(), DType::BF16);
  expectNear(b16[0], valuesOf(ref[0]), 2e-2, 1e-2);
  // f64: the double computation.
  Tensor x = tensorOf(DType::F64, {1, 1, 1}, {0.1});
  Tensor one = tensorOf(DType::F64, {1}, {1}), zero = tensorOf(DType::F64, {1}, {0});
  Tensor var = tensorOf(DType::F64, {1}, {0.3});
  auto d = run(batchNorm(), {&x, &one, &zero, &zero, &var});
  EXPECT_EQ(d[0].getDouble(0),
            (0.1 - 0.0) / std::sqrt(0.3 + static_cast<double>(1e-5f)) * 1.0 + 0.0);
  // NHWC is NCHW between transposes, in training mode too.
  for (int64_t training : {0, 1}) {
    Tensor x4 = randomTensor(DType::F32, {2, 3, 4, 5}, 21);
    x4.setUndef(17);
    Tensor s3 = randomTensor(DType::F32, {3}, 22), b3 = randomTensor(DType::F32, {3}, 23);
    Tensor m3 = randomTensor(DType::F32, {3}, 24), v3 = tensorOf(DType::F32, {3}, {0.5, 1, 2});
    uint32_t outs = training ? 3 : 1;
    AttrMap a = {{"training_mode", AttrValue::ofInt(training)}};
    auto nchw = run(batchNorm(a, outs), {&x4, &s3, &b3, &m3, &v3});
    a["layout"] = str("NHWC");
    Tensor xl = toChannelsLast(x4);
    auto nhwc = run(batchNorm(a, outs), {&xl, &s3, &b3, &m3, &v3});
    ASSERT_EQ(nhwc.size(), nchw.size());
    EXPECT_TRUE(bitIdentical(nhwc[0], toChannelsLast(nchw[0])));
    for (size_t k = 1; k < nchw.size(); ++k)
      EXPECT_TRUE(bitIdentical(nhwc[k], nchw[k]));
  }
}

TEST(NnNorm, BatchNormIndeterminate) {
  BnInputs in;
  in.x.setUndef(1);
  in.v.setUndef(1); // channel 1's variance
  auto y = run(batchNorm(), in.all());
  EXPECT_EQ(undefIndices(y[0]), (std::vector<int64_t>{1, 3, 4, 5, 9, 10, 11}));
  // Training: an indeterminate element spoils its channel's batch
  // statistics, so the whole channel and its running statistics.
  BnInputs t;
  t.x.setUndef(0);
  auto r = run(batchNorm({{"training_mode", AttrValue::ofInt(1)}}, 3), t.all());
  EXPECT_EQ(undefIndices(r[0]), (std::vector<int64_t>{0, 1, 2, 6, 7, 8}));
  EXPECT_EQ(undefIndices(r[1]), (std::vector<int64_t>{0}));
  EXPECT_EQ(undefIndices(r[2]), (std::vector<int64_t>{0}));
}

TEST(NnNorm, BatchNormInferenceErrors) {
  TensorType x{DType::F32, {2, 3, 4}}, c{DType::F32, {3}};
  EXPECT_EQ(inferError(batchNorm(), {x, c, c, c, TensorType{DType::F32, {4}}}),
            "input 4 (input_var) must have shape [3] (one value per channel), got f32[4]");
  EXPECT_EQ(inferError(batchNorm({}, 3), {x, c, c, c, c}),
            "outputs 1 and 2 (running_mean, running_var) of BatchNormalization exist only with "
            "training_mode = 1");
  EXPECT_EQ(inferError(batchNorm(), {TensorType{DType::I32, {2, 3}}, c, c, c, c}),
            "input 0 (X) must be f16, bf16, f32 or f64, got i32");
  EXPECT_EQ(inferError(opNode("BatchNormalization", 3), {x, c, c}),
            "BatchNormalization takes 5 inputs (X, scale, B, input_mean, input_var), got 3");
  EXPECT_EQ(inferError(batchNorm(), {x, c, TensorType{DType::F16, {3}}, c, c}),
            "input 2 (B) must have scale's dtype f32, got f16");
  // NHWC: the channel axis is the last one.
  EXPECT_EQ(inferError(batchNorm({{"layout", str("NHWC")}}), {x, c, c, c, c}),
            "input 1 (scale) must have shape [4] (one value per channel), got f32[3]");
}

TEST(NnNorm, InstanceNormalization) {
  Tensor x = tensorOf(DType::F32, {1, 2, 1, 3}, {-1, 0, 1, 2, 3, 4});
  Tensor s = tensorOf(DType::F32, {2}, {1, 1.5}), b = tensorOf(DType::F32, {2}, {0, 1});
  auto y = run(opNode("InstanceNormalization", 3), {&x, &s, &b});
  expectNear(y[0], {-1.2247356, 0, 1.2247356, -0.8371035, 1, 2.8371034});
  auto e =
      run(opNode("InstanceNormalization", 3, {{"epsilon", AttrValue::ofFloat(0.5)}}), {&x, &s, &b});
  // var = 2/3 per instance: y = scale * (x - mean) / sqrt(2/3 + 0.5) + B
  double k = 1 / std::sqrt(2.0 / 3 + 0.5);
  expectNear(e[0], {-k, 0, k, 1 - 1.5 * k, 1, 1 + 1.5 * k});
  // f64 and f16
  for (DType t : {DType::F64, DType::F16}) {
    Tensor xt(TensorType{t, x.shape()}), st(TensorType{t, {2}}), bt(TensorType{t, {2}});
    for (int64_t i = 0; i < 6; ++i)
      xt.setDouble(i, x.getDouble(i));
    for (int64_t i = 0; i < 2; ++i) {
      st.setDouble(i, s.getDouble(i));
      bt.setDouble(i, b.getDouble(i));
    }
    auto yt = run(opNode("InstanceNormalization", 3), {&xt, &st, &bt});
    EXPECT_EQ(yt[0].dtype(), t);
    expectNear(yt[0], {-1.2247356, 0, 1.2247356, -0.8371035, 1, 2.8371034},
               t == DType::F16 ? 1e-3 : 1e-6);
  }
  // Indeterminate: the instance (n, c) of the element.
  Tensor xu = x;
  xu.setUndef(4);
  EXPECT_EQ(undefIndices(run(opNode("InstanceNormalization", 3), {&xu, &s, &b})[0]),
            (std::vector<int64_t>{3, 4, 5}));
  // NHWC
  Tensor x4 = randomTensor(DType::F32, {2, 3, 4, 2}, 31);
  Tensor s3 = randomTensor(DType::F32, {3}, 32), b3 = randomTensor(DType::F32, {3}, 33);
  auto ref = run(opNode("InstanceNormalization", 3), {&x4, &s3, &b3});
  Tensor xl = toChannelsLast(x4);
  auto got = run(opNode("InstanceNormalization", 3, {{"layout", str("NHWC")}}), {&xl, &s3, &b3});
  EXPECT_TRUE(bitIdentical(got[0], toChannelsLast(ref[0])));
  // Errors
  EXPECT_EQ(inferError(opNode("InstanceNormalization", 3),
                       {TensorType{DType::F32, {2, 3}}, TensorType{DType::F32, {3}},
                        TensorType{DType::F32, {3}}}),
            "input 0 (input) must have rank >= 3 (N, C, spatial...), got f32[2, 3]");
  EXPECT_EQ(inferError(opNode("InstanceNormalization", 3),
                       {TensorType{DType::F32, {2, 3, 4}}, TensorType{DType::F32, {3}},
                        TensorType{DType::F64, {3}}}),
            "input 2 (B) must have the input's dtype f32, got f64");
}

TEST(NnNorm, LayerNormalizationFollowsTheFunctionBody) {
  Tensor x = tensorOf(DType::F32, {2, 3}, {1, 2, 4, -3, 0.5, 2});
  Tensor w = tensorOf(DType::F32, {3}, {1, -1, 0.5}), b = tensorOf(DType::F32, {3}, {0.25, 0, -1});
  auto r = run(opNode("LayerNormalization", 3, {}, 3), {&x, &w, &b});
  ASSERT_EQ(r.size(), 3u);
  expectF32(r[0], {-0.81904137134552, 0.26726028323173523, -0.3318490982055664, -1.1024457216262817,
                   -0.3182225525379181, -0.4828883409500122});
  EXPECT_EQ(r[1].type(), (TensorType{DType::F32, {2, 1}}));
  expectF32(r[1], {2.3333332538604736, -0.1666666716337204});
  expectF32(r[2], {0.8017810583114624, 0.47733381390571594});
  // axis 0 normalizes everything; Scale and B hold one value per element.
  Tensor w6 = tensorOf(DType::F32, {2, 3}, {0, 0.5, 1, 1.5, 2, 2.5});
  Tensor b6 = tensorOf(DType::F32, {2, 3}, {0.5, 0.5, 0.5, 0.5, 0.5, 0.5});
  auto a0 =
      run(opNode("LayerNormalization", 3, {{"axis", AttrValue::ofInt(-2)}}, 3), {&x, &w6, &b6});
  expectF32(a0[0], {0.5, 0.7152314186096191, 1.8696542978286743, -2.3762741088867188,
                    -0.04786175489425659, 1.5761569738388062});
  EXPECT_EQ(a0[1].shape(), (Shape{1, 1}));
  expectF32(a0[1], {1.0833333730697632});
  expectF32(a0[2], {0.4695957601070404});
  // Without B.
  auto nb = run(opNode("LayerNormalization", 2, {}, 3), {&x, &w});
  EXPECT_NEAR(nb[0].getDouble(0), r[0].getDouble(0) - 0.25, 1e-7);
}

TEST(NnNorm, LayerNormalizationDtypesAndIndeterminate) {
  // f64 data with the default stash type (f32): statistics in f32, the
  // scale and shift in f64.
  Tensor x = tensorOf(DType::F64, {2, 3}, {1, 2, 4, -3, 0.5, 2});
  Tensor w = tensorOf(DType::F64, {3}, {1, -1, 0.5}), b = tensorOf(DType::F64, {3}, {0.25, 0, -1});
  auto d = run(opNode("LayerNormalization", 3, {}, 3), {&x, &w, &b});
  EXPECT_EQ(d[0].dtype(), DType::F64);
  EXPECT_EQ(d[1].dtype(), DType::F32);
  expectNear(d[0], {-0.81904137134552, 0.26726028323173523, -0.3318490982055664,
                    -1.1024457216262817, -0.3182225525379181, -0.4828883409500122});
  // f16 data: the normalized value rounded to f16, then * Scale + B in f16.
  Tensor xh = tensorOf(DType::F16, {1, 4}, {1, 2, 3, 4});
  Tensor wh = tensorOf(DType::F16, {4}, {1, 1, 1, 1}), bh = tensorOf(DType::F16, {4}, {0, 0, 0, 0});
  auto h = run(opNode("LayerNormalization", 3), {&xh, &wh, &bh});
  EXPECT_EQ(h[0].dtype(), DType::F16);
  float inv = 1.0f / std::sqrt(1.25f + 1e-5f);
  EXPECT_EQ(h[0].getDouble(0), f16ToDouble(f16FromDouble(-1.5f / std::sqrt(1.25f + 1e-5f))));
  expectNear(h[0], {-1.5 * inv, -0.5 * inv, 0.5 * inv, 1.5 * inv}, 1e-3);
  // bf16 stash type: bf16 statistics.
  Tensor xf = tensorOf(DType::F32, {1, 4}, {1, 2, 3, 4});
  Tensor wf = tensorOf(DType::F32, {4}, {1, 1, 1, 1});
  auto s16 =
      run(opNode("LayerNormalization", 2, {{"stash_type", AttrValue::ofInt(16)}}, 3), {&xf, &wf});
  EXPECT_EQ(s16[1].dtype(), DType::BF16);
  EXPECT_EQ(s16[1].getDouble(0), 2.5);
  expectNear(s16[0], {-1.5 * inv, -0.5 * inv, 0.5 * inv, 1.5 * inv}, 1e-2);
  // An indeterminate element spoils its row (Y, Mean, InvStdDev) only; an
  // indeterminate Scale element its column.
  Tensor xu = tensorOf(DType::F32, {2, 3}, {1, 2, 4, -3, 0.5, 2});
  xu.setUndef(4);
  Tensor wf3 = tensorOf(DType::F32, {3}, {1, -1, 0.5});
  wf3.setUndef(0);
  auto u = run(opNode("LayerNormalization", 2, {}, 3), {&xu, &wf3});
  EXPECT_EQ(undefIndices(u[0]), (std::vector<int64_t>{0, 3, 4, 5}));
  EXPECT_EQ(undefIndices(u[1]), (std::vector<int64_t>{1}));
  EXPECT_EQ(undefIndices(u[2]), (std::vector<int64_t>{1}));
  // A constant row: variance 0, epsilon keeps it finite.
  Tensor c = tensorOf(DType::F32, {1, 2}, {3, 3});
  Tensor w2 = tensorOf(DType::F32, {2}, {1, 1});
  auto cz = run(opNode("LayerNormalization", 2, {}, 3), {&c, &w2});
  EXPECT_EQ(valuesOf(cz[0]), (std::vector<double>{0, 0}));
  EXPECT_EQ(cz[2].getDouble(0), static_cast<double>(1.0f / std::sqrt(1e-5f)));
}

TEST(NnNorm, LayerNormalizationInferenceErrors) {
  TensorType x{DType::F32, {2, 3, 4}};
  EXPECT_EQ(inferError(opNode("LayerNormalization", 2, {{"axis", AttrValue::ofInt(3)}}),
                       {x, TensorType{DType::F32, {4}}}),
            "axis 3 is out of range for rank 3");
  EXPECT_EQ(inferError(opNode("LayerNormalization", 2), {x, TensorType{DType::F32, {3}}}),
            "input 1 (Scale) must hold one value per normalized element (4, the size of "
            "f32[2, 3, 4] from axis 2), got f32[3]");
  EXPECT_EQ(inferError(opNode("LayerNormalization", 2, {{"stash_type", AttrValue::ofInt(11)}}),
                       {x, TensorType{DType::F32, {4}}}),
            "stash_type must be 1 (float) or 16 (bfloat16), got 11");
  EXPECT_EQ(inferError(opNode("LayerNormalization", 2),
                       {TensorType{DType::I64, {2, 3}}, TensorType{DType::I64, {3}}}),
            "input 0 (X) must be f16, bf16, f32 or f64, got i64");
  EXPECT_EQ(inferError(opNode("LayerNormalization", 2, {{"axis", AttrValue::ofInt(1)}}),
                       {x, TensorType{DType::F32, {3, 4}}}),
            "");
}
