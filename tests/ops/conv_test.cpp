// Conv and ConvTranspose (src/ir/ops/conv.cpp). Expected values are ONNX's
// conformance outputs (test_basic_conv_*, test_conv_*, test_convtranspose_*)
// or numpy references (a direct loop over the definition in f64).
#include "nn_test_util.h"

#include <cmath>

using namespace graphvet;
using namespace graphvet::testing;
using namespace graphvet::testing::nn;

namespace {

Tensor iota(DType t, Shape s, double start = 0) {
  Tensor x(TensorType{t, std::move(s)});
  for (int64_t i = 0; i < x.size(); ++i)
    x.setDouble(i, start + static_cast<double>(i));
  return x;
}

Tensor filled(DType t, Shape s, double v) {
  Tensor x(TensorType{t, std::move(s)});
  for (int64_t i = 0; i < x.size(); ++i)
    x.setDouble(i, v);
  return x;
}

} // namespace

TEST(NnConv, BasicWithAndWithoutPadding) {
  Tensor x = iota(DType::F32, {1, 1, 5, 5}), w = filled(DType::F32, {1, 1, 3, 3}, 1);
  auto padded = run(
      opNode("Conv", 2, {{"kernel_shape", ints({3, 3})}, {"pads", ints({1, 1, 1, 1})}}), {&x, &w});
  ASSERT_EQ(padded.size(), 1u);
  EXPECT_EQ(padded[0].type(), (TensorType{DType::F32, {1, 1, 5, 5}}));
  EXPECT_EQ(valuesOf(padded[0]),
            (std::vector<double>{12,  21, 27, 33,  24,  33,  54,  63, 72,  51,  63,  99, 108,
                                 117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84}));
  auto plain = run(opNode("Conv", 2), {&x, &w});
  EXPECT_EQ(plain[0].shape(), (Shape{1, 1, 3, 3}));
  EXPECT_EQ(valuesOf(plain[0]), (std::vector<double>{54, 63, 72, 99, 108, 117, 144, 153, 162}));
}

TEST(NnConv, StridesAndAsymmetricPadding) {
  Tensor x = iota(DType::F32, {1, 1, 7, 5}), w = filled(DType::F32, {1, 1, 3, 3}, 1);
  auto y =
      run(opNode("Conv", 2, {{"strides", ints({2, 2})}, {"pads", ints({1, 0, 1, 0})}}), {&x, &w});
  EXPECT_EQ(y[0].shape(), (Shape{1, 1, 4, 2}));
  EXPECT_EQ(valuesOf(y[0]), (std::vector<double>{21, 33, 99, 117, 189, 207, 171, 183}));
  auto s =
      run(opNode("Conv", 2, {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}), {&x, &w});
  EXPECT_EQ(valuesOf(s[0]),
            (std::vector<double>{12, 27, 24, 63, 108, 81, 123, 198, 141, 112, 177, 124}));
}

TEST(NnConv, AutoPad) {
  Tensor x5 = iota(DType::F32, {1, 1, 5, 5}), x4 = iota(DType::F32, {1, 1, 4, 4});
  Tensor w = filled(DType::F32, {1, 1, 3, 3}, 1);
  auto same = [&](const Tensor &x, const char *mode) {
    return run(opNode("Conv", 2, {{"auto_pad", str(mode)}, {"strides", ints({2, 2})}}), {&x, &w});
  };
  EXPECT_EQ(valuesOf(same(x5, "SAME_LOWER")[0]),
            (std::vector<double>{12, 27, 24, 63, 108, 81, 72, 117, 84}));
  // An odd total padding: SAME_UPPER puts the extra row/column at the end,
  // SAME_LOWER at the beginning.
  EXPECT_EQ(valuesOf(same(x4, "SAME_UPPER")[0]), (std::vector<double>{45, 39, 66, 50}));
  EXPECT_EQ(valuesOf(same(x4, "SAME_LOWER")[0]), (std::vector<double>{10, 24, 51, 90}));
  EXPECT_EQ(valuesOf(same(x5, "VALID")[0]), (std::vector<double>{54, 72, 144, 162}));
}

TEST(NnConv, GroupDilationAndBias1D) {
  Tensor x = tensorOf(DType::F32, {1, 4, 6}, {3, -1, 2, 0.5, 4,    -2, 1, 1,  -3, 2, 0, 1.5,
                                              2, -1, 1, 3,   -0.5, 2,  1, -4, 2,  1, 0, 1});
  Tensor w = tensorOf(DType::F32, {2, 2, 2}, {1, -2, 0.5, 1, 2, 1, -1, 0.25});
  Tensor b = tensorOf(DType::F32, {2}, {0.5, -1});
  auto y = run(
      opNode("Conv", 3,
             {{"group", AttrValue::ofInt(2)}, {"dilations", ints({2})}, {"pads", ints({1, 0})}}),
      {&x, &w, &b});
  EXPECT_EQ(y[0].shape(), (Shape{1, 2, 5}));
  EXPECT_EQ(valuesOf(y[0]), (std::vector<double>{3.5, -3, 1, -7, 7.5, -3, 3.5, 4.25, -1.5, 6.25}));
}

TEST(NnConv, ThreeD) {
  Tensor x = iota(DType::F32, {1, 1, 3, 3, 3}), w = filled(DType::F32, {1, 1, 2, 2, 2}, 1);
  auto y = run(opNode("Conv", 2), {&x, &w});
  EXPECT_EQ(y[0].shape(), (Shape{1, 1, 2, 2, 2}));
  EXPECT_EQ(valuesOf(y[0]), (std::vector<double>{52, 60, 76, 84, 124, 132, 148, 156}));
}

TEST(NnConv, AccumulatesInF32ForF16AndF64ForF64) {
  // f16: 2048 + 1 + 1 is 2050 in an f32 accumulator (an f16 accumulator
  // would round 2049 back to 2048 twice); the result is rounded once.
  Tensor x = tensorOf(DType::F16, {1, 3, 1}, {2048, 1, 1});
  Tensor w = tensorOf(DType::F16, {1, 3, 1}, {1, 1, 1});
  auto y = run(opNode("Conv", 2), {&x, &w});
  EXPECT_EQ(y[0].dtype(), DType::F16);
  EXPECT_EQ(y[0].getDouble(0), 2050);
  // f64: the double sum, not a float one.
  Tensor xd = tensorOf(DType::F64, {1, 2, 1}, {0.1, 0.2});
  Tensor wd = tensorOf(DType::F64, {1, 2, 1}, {1, 1});
  auto yd = run(opNode("Conv", 2), {&xd, &wd});
  EXPECT_EQ(yd[0].getDouble(0), 0.1 + 0.2);
  // f32: one float rounding per product and per addition, canonical order.
  Tensor xf = tensorOf(DType::F32, {1, 3, 1}, {1e8, 1, -1e8});
  Tensor wf = tensorOf(DType::F32, {1, 3, 1}, {1, 1, 1});
  EXPECT_EQ(run(opNode("Conv", 2), {&xf, &wf})[0].getDouble(0), 0); // (1e8 + 1) rounds to 1e8
}

TEST(NnConv, PaddingIsZeroTimesWeightAndSignedZeros) {
  // A padded tap contributes +0 * w: an infinite weight there gives NaN.
  Tensor x = tensorOf(DType::F32, {1, 1, 2}, {1, 2});
  Tensor w = tensorOf(DType::F32, {1, 1, 2}, {INFINITY, 1});
  auto y = run(opNode("Conv", 2, {{"pads", ints({1, 0})}}), {&x, &w});
  EXPECT_TRUE(std::isnan(y[0].getDouble(0))); // +0 * inf + 1 * 1
  EXPECT_EQ(y[0].getDouble(1), INFINITY);     // 1 * inf + 2 * 1
  // The sum of -0 terms is -0; adding a +0 bias gives +0.
  Tensor one = tensorOf(DType::F32, {1, 1, 1}, {1});
  Tensor negZero = tensorOf(DType::F32, {1, 1, 1}, {-0.0});
  auto z = run(opNode("Conv", 2), {&one, &negZero});
  EXPECT_TRUE(std::signbit(z[0].getDouble(0)));
  Tensor zeroBias = tensorOf(DType::F32, {1}, {0});
  auto zb = run(opNode("Conv", 3), {&one, &negZero, &zeroBias});
  EXPECT_FALSE(std::signbit(zb[0].getDouble(0)));
}

TEST(NnConv, IndeterminatePropagatesThroughWindowsWeightsAndBias) {
  Tensor x = iota(DType::F32, {1, 1, 5}), w = filled(DType::F32, {2, 1, 2}, 1);
  Tensor b = tensorOf(DType::F32, {2}, {0, 0});
  x.setUndef(0);
  auto y = run(opNode("Conv", 3), {&x, &w, &b});
  // Output position 0 of both channels reads x[0].
  EXPECT_EQ(undefIndices(y[0]), (std::vector<int64_t>{0, 4}));
  Tensor x2 = iota(DType::F32, {1, 1, 5});
  Tensor w2 = w;
  w2.setUndef(3); // a weight of output channel 1: all of its outputs
  EXPECT_EQ(undefIndices(run(opNode("Conv", 3), {&x2, &w2, &b})[0]),
            (std::vector<int64_t>{4, 5, 6, 7}));
  Tensor b2 = b;
  b2.setUndef(0);
  EXPECT_EQ(undefIndices(run(opNode("Conv", 3), {&x2, &w, &b2})[0]),
            (std::vector<int64_t>{0, 1, 2, 3}));
}

TEST(NnConv, NhwcIsBitIdenticalToNchwBetweenTransposes) {
  struct Case {
    Shape x, w;
    AttrMap attrs;
    bool bias;
  };
  std::vector<Case> cases = {
      {{2, 4, 7, 6},
       {6, 2, 3, 2},
       {{"group", AttrValue::ofInt(2)},
        {"strides", ints({2, 1})},
        {"pads", ints({1, 0, 2, 1})},
        {"dilations", ints({1, 2})}},
       true},
      {{1, 3, 9}, {2, 3, 3}, {{"auto_pad", str("SAME_UPPER")}, {"strides", ints({2})}}, false},
      {{1, 2, 4, 3, 5}, {3, 2, 2, 2, 3}, {{"pads", ints({1, 0, 1, 0, 1, 1})}}, true},
  };
  uint64_t seed = 1;
  for (Case &c : cases) {
    for (DType t : {DType::F32, DType::F16, DType::F64}) {
      Tensor x = randomTensor(t, c.x, seed++), w = randomTensor(t, c.w, seed++);
      Tensor b = randomTensor(t, {c.w[0]}, seed++);
      x.setUndef(5);
      AttrMap nhwc = c.attrs;
      nhwc["layout"] = str("NHWC");
      size_t nin = c.bias ? 3 : 2;
      Tensor xl = toChannelsLast(x), wl = toChannelsLast(w);
      std::vector<const Tensor *> refIn = {&x, &w}, gotIn = {&xl, &wl};
      if (c.bias) {
        refIn.push_back(&b);
        gotIn.push_back(&b);
      }
      auto ref = run(opNode("Conv", nin, c.attrs), refIn);
      auto got = run(opNode("Conv", nin, nhwc), gotIn);
      ASSERT_EQ(ref.size(), 1u);
      ASSERT_EQ(got.size(), 1u);
      EXPECT_TRUE(bitIdentical(got[0], toChannelsLast(ref[0])))
          << shapeStr(c.x) << " " << dtypeName(t);
    }
  }
}

TEST(NnConv, InferenceErrors) {
  TensorType x{DType::F32, {1, 3, 5, 5}}, w{DType::F32, {2, 3, 3, 3}};
  EXPECT_EQ(inferError(opNode("Conv", 2), {x, TensorType{DType::F32, {2, 2, 3, 3}}}),
            "W has 2 input channels per group but X's 3 channels in 1 group(s) need 3");
  EXPECT_EQ(inferError(opNode("Conv", 2), {TensorType{DType::I32, {1, 3, 5, 5}}, w}),
            "input 0 (X) must be f16, f32 or f64, got i32");
  EXPECT_EQ(inferError(opNode("Conv", 2, {{"auto_pad", str("SAME")}}), {x, w}),
            "auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got \"SAME\"");
  EXPECT_EQ(inferError(opNode("Conv", 2, {{"dilations", ints({3, 3})}}), {x, w}),
            "the window (7 with dilation) is larger than the padded input (5) along spatial "
            "axis 0");
  EXPECT_EQ(inferError(opNode("Conv", 2, {{"group", AttrValue::ofInt(2)}}), {x, w}),
            "X's 3 channels are not divisible by group 2");
  EXPECT_EQ(inferError(opNode("Conv", 2, {{"kernel_shape", ints({2, 2})}}), {x, w}),
            "kernel_shape must match W's spatial shape [3, 3]");
  EXPECT_EQ(inferError(opNode("Conv", 3), {x, w, TensorType{DType::F32, {3}}}),
            "input 2 (B) must have shape [2], got f32[3]");
  EXPECT_EQ(inferError(opNode("Conv", 2, {{"layout", str("NCWH")}}), {x, w}),
            "layout must be \"NCHW\" or \"NHWC\", got \"NCWH\"");
  EXPECT_EQ(inferError(opNode("Conv", 2, {{"pads", ints({1, 1})}}), {x, w}),
            "pads must have 4 entries, got 2");
  EXPECT_EQ(inferError(opNode("Conv", 1), {x}),
            "Conv takes 2 or 3 inputs (X, W, optional B), got 1");
  // NHWC: W is OHWI, so its last axis is the input channels.
  EXPECT_EQ(
      inferError(opNode("Conv", 2, {{"layout", str("NHWC")}}),
                 {TensorType{DType::F32, {1, 5, 5, 3}}, TensorType{DType::F32, {2, 3, 3, 3}}}),
      "");
}

// ---- ConvTranspose

TEST(NnConvTranspose, DefaultAttributes) {
  Tensor x = iota(DType::F32, {1, 1, 3, 3}), w = filled(DType::F32, {1, 2, 3, 3}, 1);
  auto y = run(opNode("ConvTranspose", 2), {&x, &w});
  EXPECT_EQ(y[0].shape(), (Shape{1, 2, 5, 5}));
  std::vector<double> plane = {0,  1,  3, 3,  2,  3,  8,  15, 12, 7,  9,  21, 36,
                               27, 15, 9, 20, 33, 24, 13, 6,  13, 21, 15, 8};
  std::vector<double> want = plane;
  want.insert(want.end(), plane.begin(), plane.end());
  EXPECT_EQ(valuesOf(y[0]), want);
  Tensor x1 = iota(DType::F32, {1, 1, 3}), w1 = filled(DType::F32, {1, 2, 3}, 1);
  EXPECT_EQ(valuesOf(run(opNode("ConvTranspose", 2), {&x1, &w1})[0]),
            (std::vector<double>{0, 1, 3, 3, 2, 0, 1, 3, 3, 2}));
}

TEST(NnConvTranspose, OutputShapeOutputPaddingAndPads) {
  Tensor x = iota(DType::F32, {1, 1, 3, 3}), w = filled(DType::F32, {1, 2, 3, 3}, 1);
  std::vector<double> plane = {0,  0, 1, 1, 3, 2, 2,  0, 0,  0, 1,  1, 3,  2, 2, 0, 0, 0, 1,  1,
                               3,  2, 2, 0, 3, 3, 7,  4, 9,  5, 5,  0, 3,  3, 7, 4, 9, 5, 5,  0,
                               3,  3, 7, 4, 9, 5, 5,  0, 6,  6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7,
                               15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8,  0, 0,  0, 0, 0, 0, 0, 0,  0};
  std::vector<double> want = plane;
  want.insert(want.end(), plane.begin(), plane.end());
  for (AttrMap a : {AttrMap{{"strides", ints({3, 2})}, {"output_shape", ints({10, 8})}},
                    AttrMap{{"strides", ints({3, 2})}, {"output_padding", ints({1, 1})}},
                    AttrMap{{"strides", ints({3, 2})},
                            {"output_shape", ints({10, 8})},
                            {"kernel_shape", ints({3, 3})},
                            {"output_padding", ints({1, 1})}}}) {
    auto y = run(opNode("ConvTranspose", 2, a), {&x, &w});
    EXPECT_EQ(y[0].shape(), (Shape{1, 2, 10, 8}));
    EXPECT_EQ(valuesOf(y[0]), want);
  }
  auto p =
      run(opNode("ConvTranspose", 2, {{"strides", ints({3, 2})}, {"pads", ints({1, 2, 1, 2})}}),
          {&x, &w});
  EXPECT_EQ(p[0].shape(), (Shape{1, 2, 7, 3}));
  std::vector<double> pp = {1, 1, 3, 1, 1, 3, 7, 4, 9, 7, 4, 9, 7, 4, 9, 13, 7, 15, 13, 7, 15};
  std::vector<double> pw = pp;
  pw.insert(pw.end(), pp.begin(), pp.end());
  EXPECT_EQ(valuesOf(p[0]), pw);
}

TEST(NnConvTranspose, DilationsAndAutoPad) {
  Tensor x = tensorOf(DType::F32, {1, 1, 3, 3}, {3, 8, 1, 9, 5, 7, 3, 2, 6});
  Tensor w = tensorOf(DType::F32, {1, 1, 2, 2}, {7, 2, 1, 9});
  auto y = run(opNode("ConvTranspose", 2, {{"dilations", ints({2, 2})}}), {&x, &w});
  EXPECT_EQ(valuesOf(y[0]), (std::vector<double>{21, 56, 13, 16, 2,  63, 35, 67, 10, 14, 24, 22, 76,
                                                 76, 21, 9,  5,  88, 45, 63, 3,  2,  33, 18, 54}));
  Tensor xi = iota(DType::F32, {1, 1, 3, 3}), wo = filled(DType::F32, {1, 2, 3, 3}, 1);
  auto s =
      run(opNode("ConvTranspose", 2, {{"auto_pad", str("SAME_UPPER")}, {"strides", ints({2, 2})}}),
          {&xi, &wo});
  EXPECT_EQ(s[0].shape(), (Shape{1, 2, 6, 6}));
  std::vector<double> plane = {0, 0, 1, 1, 3, 2, 0, 0, 1,  1,  3,  2,  3, 3, 8,  5, 12, 7,
                               3, 3, 7, 4, 9, 5, 9, 9, 20, 11, 24, 13, 6, 6, 13, 7, 15, 8};
  std::vector<double> want = plane;
  want.insert(want.end(), plane.begin(), plane.end());
  EXPECT_EQ(valuesOf(s[0]), want);
}

TEST(NnConvTranspose, GroupsBiasAndDtypes) {
  Tensor x = tensorOf(DType::F32, {1, 2, 2}, {1, 2, -1, 3});
  Tensor w = tensorOf(DType::F32, {2, 1, 2}, {1, -2, 0.5, 4});
  Tensor b = tensorOf(DType::F32, {2}, {1, -1});
  auto y = run(opNode("ConvTranspose", 3, {{"group", AttrValue::ofInt(2)}, {"strides", ints({2})}}),
               {&x, &w, &b});
  EXPECT_EQ(y[0].shape(), (Shape{1, 2, 4}));
  EXPECT_EQ(valuesOf(y[0]), (std::vector<double>{2, -1, 3, -3, -1.5, -5, 0.5, 11}));
  for (DType t : {DType::F16, DType::F64}) {
    Tensor xt = tensorOf(t, {1, 2, 2}, {1, 2, -1, 3}), wt = tensorOf(t, {2, 1, 2}, {1, -2, 0.5, 4});
    Tensor bt = tensorOf(t, {2}, {1, -1});
    auto yt =
        run(opNode("ConvTranspose", 3, {{"group", AttrValue::ofInt(2)}, {"strides", ints({2})}}),
            {&xt, &wt, &bt});
    EXPECT_EQ(yt[0].dtype(), t);
    EXPECT_EQ(valuesOf(yt[0]), (std::vector<double>{2, -1, 3, -3, -1.5, -5, 0.5, 11}));
  }
  // A position no (input, tap) pair reaches holds the bias alone.
  Tensor x1 = tensorOf(DType::F32, {1, 1, 1}, {5});
  Tensor w1 = tensorOf(DType::F32, {1, 1, 1}, {2});
  Tensor b1 = tensorOf(DType::F32, {1}, {0.5});
  auto z = run(opNode("ConvTranspose", 3, {{"output_shape", ints({3})}}), {&x1, &w1, &b1});
  // total padding 1 - 3 = -2 splits as begin = -2 - floor(-2 / 2) = -1, end = -1.
  EXPECT_EQ(valuesOf(z[0]), (std::vector<double>{0.5, 10.5, 0.5}));
}

TEST(NnConvTranspose, IndeterminateOnlyWhereTermsReach) {
  Tensor x = tensorOf(DType::F32, {1, 1, 3}, {1, 2, 3});
  Tensor w = tensorOf(DType::F32, {1, 1, 2}, {1, 1});
  x.setUndef(1);
  auto y = run(opNode("ConvTranspose", 2, {{"strides", ints({2})}}), {&x, &w});
  // y[2], y[3] come from x[1].
  EXPECT_EQ(undefIndices(y[0]), (std::vector<int64_t>{2, 3}));
  Tensor x2 = tensorOf(DType::F32, {1, 1, 3}, {1, 2, 3});
  Tensor w2 = w;
  w2.setUndef(1); // tap 1 reaches odd positions only
  EXPECT_EQ(undefIndices(run(opNode("ConvTranspose", 2, {{"strides", ints({2})}}), {&x2, &w2})[0]),
            (std::vector<int64_t>{1, 3, 5}));
}

TEST(NnConvTranspose, NhwcIsBitIdenticalToNchwBetweenTransposes) {
  AttrMap a = {{"group", AttrValue::ofInt(2)},
               {"strides", ints({2, 3})},
               {"dilations", ints({1, 2})},
               {"pads", ints({1, 0, 0, 2})},
               {"output_padding", ints({1, 0})}};
  Tensor x = randomTensor(DType::F32, {2, 4, 3, 4}, 11),
         w = randomTensor(DType::F32, {4, 3, 2, 3}, 12);
  Tensor b = randomTensor(DType::F32, {6}, 13);
  x.setUndef(7);
  auto ref = run(opNode("ConvTranspose", 3, a), {&x, &w, &b});
  a["layout"] = str("NHWC");
  Tensor xl = toChannelsLast(x), wl = toChannelsLast(w);
  auto got = run(opNode("ConvTranspose", 3, a), {&xl, &wl, &b});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(bitIdentical(got[0], toChannelsLast(ref[0])));
}

TEST(NnConvTranspose, InferenceErrors) {
  TensorType x{DType::F32, {1, 2, 3, 3}}, w{DType::F32, {2, 1, 3, 3}};
  EXPECT_EQ(inferError(opNode("ConvTranspose", 2), {x, TensorType{DType::F32, {3, 1, 3, 3}}}),
            "W's 3 input channels do not match X's 2 channels");
  EXPECT_EQ(inferError(opNode("ConvTranspose", 2, {{"output_shape", ints({4})}}), {x, w}),
            "output_shape must list the 2 spatial sizes");
  EXPECT_EQ(inferError(opNode("ConvTranspose", 2, {{"pads", ints({3, 3, 3, 3})}}), {x, w}),
            "the output of ConvTranspose would have size -1 along spatial axis 0");
  EXPECT_EQ(inferError(opNode("ConvTranspose", 2), {x, TensorType{DType::F16, {2, 1, 3, 3}}}),
            "input 1 (W) must have X's dtype f32, got f16");
  // output_shape may also be given with N and C.
  EXPECT_EQ(inferError(opNode("ConvTranspose", 2, {{"output_shape", ints({1, 1, 6, 6})}}), {x, w}),
            "");
}

// ---- ConvInteger and QLinearConv (src/ir/ops/qconv.cpp)

TEST(NnConvInteger, ZeroPointsPaddingAndWrap) {
  Tensor x = tensorOf(DType::U8, {1, 1, 3, 3}, {2, 3, 4, 5, 6, 7, 8, 9, 10});
  Tensor w = tensorOf(DType::U8, {1, 1, 2, 2}, {1, 1, 1, 1});
  Tensor zp = tensorOf(DType::U8, {}, {1});
  auto plain = run(opNode("ConvInteger", 3), {&x, &w, &zp});
  EXPECT_EQ(plain[0].type(), (TensorType{DType::I32, {1, 1, 2, 2}}));
  EXPECT_EQ(valuesOf(plain[0]), (std::vector<double>{12, 16, 24, 28}));
  // Padding reads x_zero_point: it adds nothing.
  auto padded = run(opNode("ConvInteger", 3, {{"pads", ints({1, 1, 1, 1})}}), {&x, &w, &zp});
  EXPECT_EQ(valuesOf(padded[0]),
            (std::vector<double>{1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9}));
  // Per-output-channel w_zero_point; i8 data.
  Tensor xi = tensorOf(DType::I8, {1, 1, 2}, {-128, 127});
  Tensor wi = tensorOf(DType::I8, {2, 1, 1}, {-128, 3});
  Tensor wz = tensorOf(DType::I8, {2}, {0, 1});
  auto pc = run(opNode("ConvInteger", 4), {&xi, &wi, nullptr, &wz});
  EXPECT_EQ(valuesOf(pc[0]), (std::vector<double>{16384, -16256, -256, 254}));
  // Indeterminate x element: the outputs whose window reads it.
  Tensor xu = x;
  xu.setUndef(0);
  EXPECT_EQ(undefIndices(run(opNode("ConvInteger", 3), {&xu, &w, &zp})[0]),
            (std::vector<int64_t>{0}));
  EXPECT_EQ(inferError(opNode("ConvInteger", 2),
                       {TensorType{DType::F32, {1, 1, 3, 3}}, TensorType{DType::U8, {1, 1, 2, 2}}}),
            "input 0 (x) must be i8 or u8, got f32");
}

TEST(NnConvInteger, QLinearConvConformance) {
  Tensor x =
      tensorOf(DType::U8, {1, 1, 7, 7},
               {255, 174, 162, 25,  203, 168, 58,  15,  59,  237, 95,  129, 0,  64,  56, 242, 153,
                221, 168, 12,  166, 232, 178, 186, 195, 237, 162, 237, 188, 39, 124, 77, 80,  102,
                43,  127, 230, 21,  83,  41,  40,  134, 255, 154, 92,  141, 42, 148, 247});
  Tensor xs = tensorOf(DType::F32, {}, {0.00369204697});
  Tensor xz = tensorOf(DType::U8, {}, {132});
  Tensor w = tensorOf(DType::U8, {1, 1, 1, 1}, {0});
  Tensor ws = tensorOf(DType::F32, {1}, {0.00172794575});
  Tensor wz = tensorOf(DType::U8, {1}, {255});
  Tensor ys = tensorOf(DType::F32, {}, {0.00162681262});
  Tensor yz = tensorOf(DType::U8, {}, {123});
  auto y = run(opNode("QLinearConv", 8), {&x, &xs, &xz, &w, &ws, &wz, &ys, &yz});
  EXPECT_EQ(y[0].type(), (TensorType{DType::U8, {1, 1, 7, 7}}));
  EXPECT_EQ(valuesOf(y[0]),
            (std::vector<double>{0,   81,  93,  230, 52,  87,  197, 240, 196, 18,  160, 126, 255,
                                 191, 199, 13,  102, 34,  87,  243, 89,  23,  77,  69,  60,  18,
                                 93,  18,  67,  216, 131, 178, 175, 153, 212, 128, 25,  234, 172,
                                 214, 215, 121, 0,   101, 163, 114, 213, 107, 8}));
}
