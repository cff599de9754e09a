// MaxPool, AveragePool, GlobalMaxPool, GlobalAveragePool
// (src/ir/ops/pool.cpp). Expected values are ONNX's conformance outputs
// (test_maxpool_*, test_averagepool_*, test_global*pool*) unless noted.
#include "nn_test_util.h"

#include <cmath>

using namespace graphvet;
using namespace graphvet::testing;
using namespace graphvet::testing::nn;

namespace {

Tensor iota(DType t, Shape s, double start = 1) {
  Tensor x(TensorType{t, std::move(s)});
  for (int64_t i = 0; i < x.size(); ++i)
    x.setDouble(i, start + static_cast<double>(i));
  return x;
}

} // namespace

TEST(NnPool, MaxPoolWithIndicesAndPads) {
  Tensor x = iota(DType::F32, {1, 1, 5, 5});
  auto r =
      run(opNode("MaxPool", 1, {{"kernel_shape", ints({5, 5})}, {"pads", ints({2, 2, 2, 2})}}, 2),
          {&x});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{13, 14, 15, 15, 15, 18, 19, 20, 20, 20, 23, 24, 25,
                                                 25, 25, 23, 24, 25, 25, 25, 23, 24, 25, 25, 25}));
  EXPECT_EQ(r[1].type(), (TensorType{DType::I64, {1, 1, 5, 5}}));
  EXPECT_EQ(valuesOf(r[1]), (std::vector<double>{12, 13, 14, 14, 14, 17, 18, 19, 19, 19, 22, 23, 24,
                                                 24, 24, 22, 23, 24, 24, 24, 22, 23, 24, 24, 24}));
}

TEST(NnPool, MaxPoolStorageOrderStridesDilationsCeil) {
  Tensor x = iota(DType::F32, {1, 1, 5, 5});
  auto r = run(opNode("MaxPool", 1,
                      {{"kernel_shape", ints({2, 2})},
                       {"strides", ints({2, 2})},
                       {"storage_order", AttrValue::ofInt(1)}},
                      2),
               {&x});
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{7, 9, 17, 19}));
  EXPECT_EQ(valuesOf(r[1]), (std::vector<double>{6, 16, 8, 18}));
  Tensor x4 = iota(DType::F32, {1, 1, 4, 4});
  auto d = run(opNode("MaxPool", 1, {{"kernel_shape", ints({2, 2})}, {"dilations", ints({2, 2})}}),
               {&x4});
  EXPECT_EQ(valuesOf(d[0]), (std::vector<double>{11, 12, 15, 16}));
  auto c = run(opNode("MaxPool", 1,
                      {{"kernel_shape", ints({3, 3})},
                       {"strides", ints({2, 2})},
                       {"ceil_mode", AttrValue::ofInt(1)}}),
               {&x4});
  EXPECT_EQ(valuesOf(c[0]), (std::vector<double>{11, 12, 15, 16}));
  // Indices count the batch and channel planes (flat index in N x C x H x W).
  Tensor x2 = iota(DType::F32, {2, 2, 2});
  auto i2 = run(opNode("MaxPool", 1, {{"kernel_shape", ints({2})}}, 2), {&x2});
  EXPECT_EQ(valuesOf(i2[1]), (std::vector<double>{1, 3, 5, 7}));
}

TEST(NnPool, MaxPoolIntegerAndSameAutoPad) {
  Tensor x = tensorOf(DType::U8, {1, 1, 6}, {3, 250, 7, 7, 0, 9});
  auto r =
      run(opNode("MaxPool", 1, {{"kernel_shape", ints({2})}, {"auto_pad", str("SAME_UPPER")}}, 2),
          {&x});
  EXPECT_EQ(r[0].dtype(), DType::U8);
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{250, 250, 7, 7, 9, 9}));
  EXPECT_EQ(valuesOf(r[1]), (std::vector<double>{1, 1, 2, 3, 5, 5})); // first maximum wins
  Tensor xi = tensorOf(DType::I8, {1, 1, 3}, {-128, -5, -7});
  auto s = run(opNode("MaxPool", 1, {{"kernel_shape", ints({2})}, {"auto_pad", str("SAME_LOWER")}}),
               {&xi});
  EXPECT_EQ(valuesOf(s[0]), (std::vector<double>{-128, -5, -5}));
}

TEST(NnPool, MaxPoolNaNAndSignedZeros) {
  Tensor x = tensorOf(DType::F32, {1, 1, 4}, {1, NAN, 3, 2});
  auto r = run(opNode("MaxPool", 1, {{"kernel_shape", ints({2})}}, 2), {&x});
  EXPECT_TRUE(std::isnan(r[0].getDouble(0)));
  EXPECT_TRUE(std::isnan(r[0].getDouble(1)));
  EXPECT_EQ(r[0].getDouble(2), 3);
  EXPECT_EQ(valuesOf(r[1]), (std::vector<double>{1, 1, 2}));
  auto g = run(opNode("GlobalMaxPool", 1), {&x});
  EXPECT_TRUE(std::isnan(g[0].getDouble(0)));
  // Of equal values the first one is kept, bit for bit.
  Tensor z = tensorOf(DType::F32, {1, 1, 3}, {-0.0, 0.0, -0.0});
  auto m = run(opNode("MaxPool", 1, {{"kernel_shape", ints({2})}}), {&z});
  EXPECT_TRUE(std::signbit(m[0].getDouble(0)));
  EXPECT_FALSE(std::signbit(m[0].getDouble(1)));
  Tensor inf = tensorOf(DType::F32, {1, 1, 2}, {-INFINITY, -INFINITY});
  EXPECT_EQ(run(opNode("GlobalMaxPool", 1), {&inf})[0].getDouble(0), -INFINITY);
}

TEST(NnPool, AveragePoolPadsAndCountIncludePad) {
  Tensor x = iota(DType::F32, {1, 1, 5, 5});
  auto ex =
      run(opNode("AveragePool", 1, {{"kernel_shape", ints({5, 5})}, {"pads", ints({2, 2, 2, 2})}}),
          {&x});
  expectNear(ex[0], {7,    7.5, 8,    8.5, 9,    9.5, 10,   10.5, 11,   11.5, 12,   12.5, 13,
                     13.5, 14,  14.5, 15,  15.5, 16,  16.5, 17,   17.5, 18,   18.5, 19});
  auto in = run(opNode("AveragePool", 1,
                       {{"kernel_shape", ints({5, 5})},
                        {"pads", ints({2, 2, 2, 2})},
                        {"count_include_pad", AttrValue::ofInt(1)}}),
                {&x});
  expectNear(in[0], {2.52, 3.6, 4.8,  4.08, 3.24, 4.56,  6.4,  8.4,  7.04, 5.52, 7.2,  10,  13,
                     10.8, 8.4, 6.96, 9.6,  12.4, 10.24, 7.92, 6.12, 8.4,  10.8, 8.88, 6.84});
  auto same = run(opNode("AveragePool", 1,
                         {{"kernel_shape", ints({3, 3})},
                          {"strides", ints({2, 2})},
                          {"auto_pad", str("SAME_UPPER")}}),
                  {&x});
  expectNear(same[0], {4, 5.5, 7, 11.5, 13, 14.5, 19, 20.5, 22});
  Tensor x4 = iota(DType::F32, {1, 1, 4, 4});
  auto ceil = run(opNode("AveragePool", 1,
                         {{"kernel_shape", ints({3, 3})},
                          {"strides", ints({2, 2})},
                          {"ceil_mode", AttrValue::ofInt(1)}}),
                  {&x4});
  expectNear(ceil[0], {6, 7.5, 12, 13.5});
}

TEST(NnPool, AveragePoolAccumulatesInF32AndF64) {
  // f16: (2048 + 1 + 1 + 0) / 4 = 512.5 with an f32 sum (an f16 sum gives 512).
  Tensor h = tensorOf(DType::F16, {1, 1, 4}, {2048, 1, 1, 0});
  auto r = run(opNode("AveragePool", 1, {{"kernel_shape", ints({4})}}), {&h});
  EXPECT_EQ(r[0].dtype(), DType::F16);
  EXPECT_EQ(r[0].getDouble(0), 512.5);
  Tensor d = tensorOf(DType::F64, {1, 1, 3}, {0.1, 0.2, 0.3});
  EXPECT_EQ(run(opNode("GlobalAveragePool", 1), {&d})[0].getDouble(0), (0.1 + 0.2 + 0.3) / 3);
  Tensor f = tensorOf(DType::F32, {1, 1, 3}, {0.1, 0.2, 0.3});
  EXPECT_EQ(run(opNode("GlobalAveragePool", 1), {&f})[0].getDouble(0),
            static_cast<double>((0.1f + 0.2f + 0.3f) / 3.0f));
}

TEST(NnPool, GlobalPools) {
  Tensor x = iota(DType::F32, {1, 1, 3, 3});
  EXPECT_EQ(valuesOf(run(opNode("GlobalAveragePool", 1), {&x})[0]), (std::vector<double>{5}));
  auto m = run(opNode("GlobalMaxPool", 1), {&x});
  EXPECT_EQ(m[0].shape(), (Shape{1, 1, 1, 1}));
  EXPECT_EQ(valuesOf(m[0]), (std::vector<double>{9}));
  Tensor x3 = iota(DType::F64, {2, 2, 2, 1, 2});
  auto a = run(opNode("GlobalAveragePool", 1), {&x3});
  EXPECT_EQ(a[0].shape(), (Shape{2, 2, 1, 1, 1}));
  EXPECT_EQ(valuesOf(a[0]), (std::vector<double>{2.5, 6.5, 10.5, 14.5}));
}

TEST(NnPool, IndeterminateWindowsAndEmptyWindows) {
  Tensor x = tensorOf(DType::F32, {1, 1, 4}, {1, 5, 2, 3});
  x.setUndef(0);
  auto m = run(opNode("MaxPool", 1, {{"kernel_shape", ints({2})}}, 2), {&x});
  // The window [x0, x1] holds an indeterminate element: even though x1 is
  // the larger, the result (and its index) is indeterminate.
  EXPECT_EQ(undefIndices(m[0]), (std::vector<int64_t>{0}));
  EXPECT_EQ(undefIndices(m[1]), (std::vector<int64_t>{0}));
  auto a = run(opNode("AveragePool", 1, {{"kernel_shape", ints({2})}}), {&x});
  EXPECT_EQ(undefIndices(a[0]), (std::vector<int64_t>{0}));
  // ceil_mode with VALID: the last window (at 5) lies past the input.
  Tensor y = iota(DType::F32, {1, 1, 4});
  AttrMap past = {{"kernel_shape", ints({1})},
                  {"strides", ints({5})},
                  {"auto_pad", str("VALID")},
                  {"ceil_mode", AttrValue::ofInt(1)}};
  auto e = run(opNode("MaxPool", 1, past), {&y});
  EXPECT_EQ(e[0].shape(), (Shape{1, 1, 2}));
  EXPECT_EQ(undefIndices(e[0]), (std::vector<int64_t>{1}));
  EXPECT_EQ(undefIndices(run(opNode("AveragePool", 1, past), {&y})[0]), (std::vector<int64_t>{1}));
  // A window of padding only averages to +0 with count_include_pad.
  AttrMap padOnly = {{"kernel_shape", ints({2})},
                     {"strides", ints({2})},
                     {"pads", ints({0, 2})},
                     {"count_include_pad", AttrValue::ofInt(1)}};
  auto p = run(opNode("AveragePool", 1, padOnly), {&y});
  EXPECT_EQ(valuesOf(p[0]), (std::vector<double>{1.5, 3.5, 0}));
  padOnly.erase("count_include_pad");
  EXPECT_EQ(undefIndices(run(opNode("AveragePool", 1, padOnly), {&y})[0]),
            (std::vector<int64_t>{2}));
}

TEST(NnPool, NhwcIsBitIdenticalToNchwBetweenTransposes) {
  Tensor x = randomTensor(DType::F32, {2, 3, 7, 6}, 5);
  x.setUndef(9);
  std::vector<std::pair<std::string, AttrMap>> cases = {
      {"MaxPool",
       {{"kernel_shape", ints({3, 2})},
        {"strides", ints({2, 1})},
        {"pads", ints({1, 0, 1, 1})},
        {"dilations", ints({1, 2})},
        {"ceil_mode", AttrValue::ofInt(1)}}},
      {"AveragePool",
       {{"kernel_shape", ints({3, 3})},
        {"strides", ints({2, 2})},
        {"pads", ints({1, 1, 0, 1})},
        {"count_include_pad", AttrValue::ofInt(1)}}},
      {"AveragePool", {{"kernel_shape", ints({2, 3})}, {"auto_pad", str("SAME_LOWER")}}},
      {"GlobalAveragePool", {}},
      {"GlobalMaxPool", {}},
  };
  Tensor xl = toChannelsLast(x);
  for (auto &[op, attrs] : cases) {
    uint32_t outs = op == "MaxPool" ? 2 : 1;
    auto ref = run(opNode(op, 1, attrs, outs), {&x});
    AttrMap nhwc = attrs;
    nhwc["layout"] = str("NHWC");
    auto got = run(opNode(op, 1, nhwc, outs), {&xl});
    ASSERT_EQ(got.size(), ref.size());
    for (size_t k = 0; k < ref.size(); ++k) // Indices keep their logical NCHW values
      EXPECT_TRUE(bitIdentical(got[k], toChannelsLast(ref[k]))) << op << " output " << k;
  }
}

TEST(NnPool, InferenceErrors) {
  TensorType x{DType::F32, {1, 1, 4, 4}};
  EXPECT_EQ(inferError(opNode("MaxPool", 1), {x}),
            "MaxPool needs kernel_shape (a list of 2 sizes)");
  EXPECT_EQ(inferError(opNode("MaxPool", 1, {{"kernel_shape", ints({2})}}), {x}),
            "kernel_shape must have 2 entries (one per spatial axis), got 1");
  EXPECT_EQ(inferError(opNode("AveragePool", 1, {{"kernel_shape", ints({2, 2})}}),
                       {TensorType{DType::U8, {1, 1, 4, 4}}}),
            "input 0 (X) must be f16, f32 or f64, got u8");
  EXPECT_EQ(inferError(opNode("MaxPool", 1, {{"kernel_shape", ints({2, 2})}}),
                       {TensorType{DType::I32, {1, 1, 4, 4}}}),
            "input 0 (X) must be f16, f32, f64, i8 or u8, got i32");
  EXPECT_EQ(inferError(opNode("MaxPool", 1,
                              {{"kernel_shape", ints({2, 2})}, {"ceil_mode", AttrValue::ofInt(2)}}),
                       {x}),
            "ceil_mode must be 0 or 1, got 2");
  EXPECT_EQ(
      inferError(opNode("AveragePool", 1, {{"kernel_shape", ints({5, 1})}}), {x}),
      "the window (5 with dilation) is larger than the padded input (4) along spatial axis 0");
  EXPECT_EQ(inferError(opNode("MaxPool", 1, {{"kernel_shape", ints({0, 1})}}), {x}),
            "kernel size 0 along spatial axis 0 is out of range [1, 2^31]");
  EXPECT_EQ(inferError(opNode("GlobalMaxPool", 1), {TensorType{DType::F32, {1, 4}}}),
            "input 0 (X) must have rank >= 3 (N, C, spatial...), got f32[1, 4]");
  EXPECT_EQ(inferError(opNode("GlobalAveragePool", 1, {{"layout", str("NHWC")}}),
                       {TensorType{DType::F32, {2, 5, 5, 3}}}),
            "");
}

TEST(NnPool, MaxUnpool) {
  Tensor x = tensorOf(DType::F32, {1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor i = tensorOf(DType::I64, {1, 1, 2, 2}, {5, 7, 13, 15});
  AttrMap a = {{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}};
  auto y = run(opNode("MaxUnpool", 2, a), {&x, &i});
  EXPECT_EQ(y[0].shape(), (Shape{1, 1, 4, 4}));
  EXPECT_EQ(valuesOf(y[0]), (std::vector<double>{0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4}));
  // output_shape: the unpooled tensor at the origin of a larger zero tensor.
  Tensor s = tensorOf(DType::I64, {4}, {1, 1, 5, 5});
  auto z = run(opNode("MaxUnpool", 3, a), {&x, &i, &s});
  EXPECT_EQ(valuesOf(z[0]), (std::vector<double>{0, 0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0,
                                                 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0, 0}));
  // MaxPool's indices round-trip.
  Tensor src = tensorOf(DType::F32, {1, 1, 2, 4}, {1, 9, 3, 2, 5, 0, 7, 8});
  auto pooled = run(opNode("MaxPool", 1, a, 2), {&src});
  auto back = run(opNode("MaxUnpool", 2, a), {&pooled[0], &pooled[1]});
  EXPECT_EQ(valuesOf(back[0]), (std::vector<double>{0, 9, 0, 0, 0, 0, 0, 8}));
  // An index outside the unpooled tensor is undefined: all indeterminate.
  Tensor bad = tensorOf(DType::I64, {1, 1, 2, 2}, {5, 7, 13, 16});
  EXPECT_EQ(undefIndices(run(opNode("MaxUnpool", 2, a), {&x, &bad})[0]).size(), 16u);
  TensorType xt{DType::F32, {1, 1, 2, 2}}, it{DType::I64, {1, 1, 2, 2}}, st{DType::I64, {4}};
  EXPECT_EQ(inferError(opNode("MaxUnpool", 3, a), {xt, it, st}),
            "input 2 (output_shape) of MaxUnpool must be a constant");
  Tensor small = tensorOf(DType::I64, {4}, {1, 1, 3, 4});
  EXPECT_EQ(inferError(opNode("MaxUnpool", 3, a), {xt, it, st}, {nullptr, nullptr, &small}),
            "output_shape [1, 1, 3, 4] must keep N and C and hold the unpooled shape [1, 1, 4, 4]");
}
