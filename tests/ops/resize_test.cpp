// Resize (src/ir/ops/resize.cpp). Expected values are ONNX's conformance
// outputs (test_resize_*) unless noted.
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

Tensor scalesOf(std::initializer_list<double> v) {
  return tensorOf(DType::F32, {static_cast<int64_t>(v.size())}, v);
}

Tensor sizesOf(std::initializer_list<double> v) {
  return tensorOf(DType::I64, {static_cast<int64_t>(v.size())}, v);
}

/// Resize(X, roi = _, scales) with the given attributes.
std::vector<Tensor> withScales(const Tensor &x, const Tensor &scales, AttrMap a = {}) {
  Node n = opNode("Resize", 3, std::move(a));
  n.inputs[1] = std::nullopt;
  return run(n, {&x, nullptr, &scales});
}

/// Resize(X, roi = _, scales = _, sizes).
std::vector<Tensor> withSizes(const Tensor &x, const Tensor &sizes, AttrMap a = {}) {
  Node n = opNode("Resize", 4, std::move(a));
  n.inputs[1] = n.inputs[2] = std::nullopt;
  return run(n, {&x, nullptr, nullptr, &sizes});
}

} // namespace

TEST(NnResize, NearestWithScalesAndSizes) {
  Tensor x = iota(DType::F32, {1, 1, 2, 2});
  auto up = withScales(x, scalesOf({1, 1, 2, 3}), {{"mode", str("nearest")}});
  EXPECT_EQ(up[0].shape(), (Shape{1, 1, 4, 6}));
  EXPECT_EQ(valuesOf(up[0]), (std::vector<double>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2,
                                                  3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}));
  Tensor x8 = iota(DType::F32, {1, 1, 2, 4});
  EXPECT_EQ(valuesOf(withScales(x8, scalesOf({1, 1, 0.6, 0.6}))[0]), (std::vector<double>{1, 3}));
  EXPECT_EQ(valuesOf(withSizes(x8, sizesOf({1, 1, 1, 3}))[0]), (std::vector<double>{1, 2, 4}));
  auto s = withSizes(x, sizesOf({1, 1, 7, 8}));
  std::vector<double> r1 = {1, 1, 1, 1, 2, 2, 2, 2}, r2 = {3, 3, 3, 3, 4, 4, 4, 4}, want;
  for (int i = 0; i < 7; ++i)
    want.insert(want.end(), (i < 4 ? r1 : r2).begin(), (i < 4 ? r1 : r2).end());
  EXPECT_EQ(valuesOf(s[0]), want);
}

TEST(NnResize, NearestModes) {
  Tensor x = iota(DType::F32, {1, 1, 4, 4});
  std::vector<double> ceilRows = {1, 2, 2, 3, 3, 4, 4, 4};
  auto rows = [](std::vector<double> cols, std::vector<int> rowIdx) {
    std::vector<double> v;
    for (int r : rowIdx)
      for (double c : cols)
        v.push_back(c + 4 * r);
    return v;
  };
  auto c = withSizes(
      x, sizesOf({1, 1, 8, 8}),
      {{"coordinate_transformation_mode", str("half_pixel")}, {"nearest_mode", str("ceil")}});
  EXPECT_EQ(valuesOf(c[0]), rows(ceilRows, {0, 1, 1, 2, 2, 3, 3, 3}));
  auto f = withSizes(
      x, sizesOf({1, 1, 8, 8}),
      {{"coordinate_transformation_mode", str("align_corners")}, {"nearest_mode", str("floor")}});
  EXPECT_EQ(valuesOf(f[0]), rows({1, 1, 1, 2, 2, 3, 3, 4}, {0, 0, 0, 1, 1, 2, 2, 3}));
  auto rc = withSizes(x, sizesOf({1, 1, 8, 8}),
                      {{"coordinate_transformation_mode", str("asymmetric")},
                       {"nearest_mode", str("round_prefer_ceil")}});
  EXPECT_EQ(valuesOf(rc[0]), rows(ceilRows, {0, 1, 1, 2, 2, 3, 3, 3}));
  // round_prefer_floor (the default) on a .5 coordinate: asymmetric x = o / 2.
  Tensor x2 = iota(DType::F32, {1, 1, 1, 3});
  EXPECT_EQ(valuesOf(withScales(x2, scalesOf({1, 1, 1, 2}),
                                {{"coordinate_transformation_mode", str("asymmetric")}})[0]),
            (std::vector<double>{1, 1, 2, 2, 3, 3}));
  // tf_half_pixel_for_nn: x = (o + 0.5) / scale, then the nearest mode.
  EXPECT_EQ(valuesOf(withScales(x2, scalesOf({1, 1, 1, 2}),
                                {{"coordinate_transformation_mode", str("tf_half_pixel_for_nn")},
                                 {"nearest_mode", str("floor")}})[0]),
            (std::vector<double>{1, 1, 2, 2, 3, 3}));
}

TEST(NnResize, LinearCoordinateModes) {
  Tensor x = iota(DType::F32, {1, 1, 2, 2});
  auto up = withScales(x, scalesOf({1, 1, 2, 2}), {{"mode", str("linear")}});
  EXPECT_EQ(valuesOf(up[0]), (std::vector<double>{1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75,
                                                  3.25, 3.5, 3, 3.25, 3.75, 4}));
  auto ac = withScales(
      x, scalesOf({1, 1, 2, 2}),
      {{"mode", str("linear")}, {"coordinate_transformation_mode", str("align_corners")}});
  expectNear(ac[0], {1, 1.3333334, 1.6666666, 2, 1.6666666, 2, 2.3333333, 2.6666667, 2.3333333,
                     2.6666667, 3, 3.3333333, 3, 3.3333333, 3.6666667, 4});
  Tensor x8 = iota(DType::F32, {1, 1, 2, 4});
  expectNear(withScales(x8, scalesOf({1, 1, 0.6, 0.6}), {{"mode", str("linear")}})[0],
             {2.6666665, 4.333333});
  // align_corners with scales uses the unrounded resized length in * scale
  // (2.4 here), as ONNX's reference does.
  expectNear(withScales(x8, scalesOf({1, 1, 0.6, 0.6}),
                        {{"mode", str("linear")},
                         {"coordinate_transformation_mode", str("align_corners")}})[0],
             {1, 3.142857});
  Tensor x16 = iota(DType::F32, {1, 1, 4, 4});
  expectNear(withSizes(x16, sizesOf({1, 1, 3, 1}),
                       {{"mode", str("linear")},
                        {"coordinate_transformation_mode", str("pytorch_half_pixel")}})[0],
             {1.6666666, 7, 12.333333});
}

TEST(NnResize, TfCropAndResize) {
  Tensor x = iota(DType::F32, {1, 1, 4, 4});
  Tensor sizes = sizesOf({1, 1, 3, 3});
  AttrMap a = {{"mode", str("linear")},
               {"coordinate_transformation_mode", str("tf_crop_and_resize")}};
  Tensor roi = tensorOf(DType::F32, {8}, {0, 0, 0.4, 0.6, 1, 1, 0.6, 0.8});
  Node n = opNode("Resize", 4, a);
  n.inputs[2] = std::nullopt;
  expectNear(run(n, {&x, &roi, nullptr, &sizes})[0],
             {7.6000004, 7.9, 8.2, 8.8, 9.1, 9.400001, 10, 10.3, 10.6});
  Tensor roi2 = tensorOf(DType::F32, {8}, {0, 0, 0.4, 0.6, 1, 1, 1.2, 1.7});
  a["extrapolation_value"] = AttrValue::ofFloat(10);
  Node e = opNode("Resize", 4, a);
  e.inputs[2] = std::nullopt;
  expectNear(run(e, {&x, &roi2, nullptr, &sizes})[0],
             {7.6000004, 10, 10, 12.400001, 10, 10, 10, 10, 10});
  // Integer outputs: the extrapolation value is rounded; out of range it is
  // indeterminate.
  Tensor xu = iota(DType::U8, {1, 1, 4, 4});
  a["extrapolation_value"] = AttrValue::ofFloat(300);
  Node u = opNode("Resize", 4, a);
  u.inputs[2] = std::nullopt;
  auto r = run(u, {&xu, &roi2, nullptr, &sizes});
  EXPECT_EQ(undefIndices(r[0]), (std::vector<int64_t>{1, 2, 4, 5, 6, 7, 8}));
  EXPECT_EQ(r[0].getInt(0), 8); // 7.6 rounded
}

TEST(NnResize, DtypesAndSpecialValues) {
  // Integers: linear results rounded to nearest even.
  Tensor xi = tensorOf(DType::I32, {1, 1, 1, 2}, {0, 10});
  auto li = withScales(xi, scalesOf({1, 1, 1, 2}), {{"mode", str("linear")}});
  EXPECT_EQ(li[0].dtype(), DType::I32);
  EXPECT_EQ(valuesOf(li[0]), (std::vector<double>{0, 2, 8, 10})); // 2.5 -> 2, 7.5 -> 8
  // Nearest copies any dtype bit for bit.
  Tensor xb = tensorOf(DType::Bool, {1, 2}, {1, 0});
  EXPECT_EQ(valuesOf(withScales(xb, scalesOf({1, 2}))[0]), (std::vector<double>{1, 1, 0, 0}));
  Tensor xh = tensorOf(DType::F16, {1, 2}, {NAN, -0.0});
  auto h = withScales(xh, scalesOf({1, 2}));
  EXPECT_TRUE(std::isnan(h[0].getDouble(0)));
  EXPECT_TRUE(std::signbit(h[0].getDouble(3)));
  // f64 linear in double: (0.1 * 0.75 + 0.3 * 0.25).
  Tensor xd = tensorOf(DType::F64, {2}, {0.1, 0.3});
  auto d = withScales(xd, scalesOf({2}), {{"mode", str("linear")}});
  EXPECT_EQ(d[0].getDouble(1), -0.0 + 0.75 * 0.1 + 0.25 * 0.3);
  // A coordinate on a sample reads it alone: an infinite neighbour of
  // weight 0 does not turn it into NaN.
  Tensor xf = tensorOf(DType::F32, {2}, {INFINITY, 1});
  EXPECT_EQ(valuesOf(withScales(xf, scalesOf({2}), {{"mode", str("linear")}})[0]),
            (std::vector<double>{INFINITY, INFINITY, INFINITY, 1}));
}

TEST(NnResize, Opset10Form) {
  // (X, scales): asymmetric coordinates; nearest floors when upsampling and
  // takes the ceiling when downsampling (onnxruntime's rule).
  Tensor x = iota(DType::F32, {1, 4});
  Tensor up = scalesOf({1, 2}), down = scalesOf({1, 0.5});
  EXPECT_EQ(valuesOf(run(opNode("Resize", 2), {&x, &up})[0]),
            (std::vector<double>{1, 1, 2, 2, 3, 3, 4, 4}));
  EXPECT_EQ(valuesOf(run(opNode("Resize", 2), {&x, &down})[0]), (std::vector<double>{1, 3}));
  EXPECT_EQ(valuesOf(run(opNode("Resize", 2, {{"mode", str("linear")}}), {&x, &up})[0]),
            (std::vector<double>{1, 1.5, 2, 2.5, 3, 3.5, 4, 4}));
}

TEST(NnResize, IndeterminateAndLayout) {
  Tensor x = iota(DType::F32, {1, 1, 1, 3});
  x.setUndef(0);
  // nearest: the copies of x0.
  EXPECT_EQ(undefIndices(withScales(x, scalesOf({1, 1, 1, 2}))[0]), (std::vector<int64_t>{0, 1}));
  // linear (half_pixel, scale 2): outputs 0..2 read x0.
  EXPECT_EQ(undefIndices(withScales(x, scalesOf({1, 1, 1, 2}), {{"mode", str("linear")}})[0]),
            (std::vector<int64_t>{0, 1, 2}));
  // NHWC: scales and sizes stay in logical (N, C, H, W) order.
  Tensor x4 = randomTensor(DType::F32, {2, 3, 4, 5}, 41);
  x4.setUndef(13);
  Tensor xl = toChannelsLast(x4);
  for (AttrMap a : {AttrMap{{"mode", str("linear")}}, AttrMap{{"mode", str("nearest")}},
                    AttrMap{{"mode", str("linear")},
                            {"coordinate_transformation_mode", str("align_corners")}}}) {
    auto ref = withScales(x4, scalesOf({1, 1, 1.5, 0.6}), a);
    auto refS = withSizes(x4, sizesOf({2, 3, 7, 2}), a);
    a["layout"] = str("NHWC");
    auto got = withScales(xl, scalesOf({1, 1, 1.5, 0.6}), a);
    ASSERT_EQ(got[0].shape(), (Shape{2, 6, 3, 3}));
    EXPECT_TRUE(bitIdentical(got[0], toChannelsLast(ref[0])));
    auto gotS = withSizes(xl, sizesOf({2, 3, 7, 2}), a);
    EXPECT_TRUE(bitIdentical(gotS[0], toChannelsLast(refS[0])));
  }
}

TEST(NnResize, InferenceErrors) {
  TensorType x{DType::F32, {1, 1, 2, 2}}, s{DType::F32, {4}}, z{DType::I64, {4}};
  Tensor sc = scalesOf({1, 1, 2, 2}), sz = sizesOf({1, 1, 4, 4});
  Node cubic = opNode("Resize", 3, {{"mode", str("cubic")}});
  EXPECT_EQ(inferError(cubic, {x, std::nullopt, s}, {nullptr, nullptr, &sc}),
            "Resize mode 'cubic' is not supported");
  Node n3 = opNode("Resize", 3);
  EXPECT_EQ(inferError(n3, {x, std::nullopt, s}), "input 2 (scales) of Resize must be a constant");
  Node n4 = opNode("Resize", 4);
  EXPECT_EQ(inferError(n4, {x, std::nullopt, std::nullopt, z}),
            "input 3 (sizes) of Resize must be a constant");
  EXPECT_EQ(inferError(n4, {x, std::nullopt, s, z}, {nullptr, nullptr, &sc, &sz}),
            "Resize takes scales or sizes, not both");
  EXPECT_EQ(inferError(n4, {x, std::nullopt, std::nullopt, std::nullopt}),
            "Resize needs scales (input 2) or sizes (input 3)");
  Tensor bad = scalesOf({1, 1, 0, 2});
  EXPECT_EQ(inferError(n3, {x, std::nullopt, s}, {nullptr, nullptr, &bad}),
            "scales must be positive and finite, got 0");
  Tensor three = scalesOf({1, 2, 2});
  EXPECT_EQ(
      inferError(n3, {x, std::nullopt, TensorType{DType::F32, {3}}}, {nullptr, nullptr, &three}),
      "input 2 (scales) must have shape [4], got f32[3]");
  Node crop = opNode("Resize", 3, {{"coordinate_transformation_mode", str("tf_crop_and_resize")}});
  EXPECT_EQ(inferError(crop, {x, std::nullopt, s}, {nullptr, nullptr, &sc}),
            "coordinate_transformation_mode tf_crop_and_resize needs input 1 (roi)");
  Node lin = opNode("Resize", 3, {{"mode", str("linear")}});
  EXPECT_EQ(inferError(lin, {TensorType{DType::Bool, {1, 1, 2, 2}}, std::nullopt, s},
                       {nullptr, nullptr, &sc}),
            "linear Resize of bool is not defined");
  // The output shape from constant scales and sizes.
  std::string error;
  std::vector<std::optional<TensorType>> in = {x, std::nullopt, std::nullopt, z};
  std::vector<const Tensor *> cs = {nullptr, nullptr, nullptr, &sz};
  auto t = inferNodeTypes(n4, in, cs, error);
  ASSERT_TRUE(t.has_value()) << error;
  EXPECT_EQ((*t)[0], (TensorType{DType::F32, {1, 1, 4, 4}}));
  EXPECT_NE(lookupOp("Resize").shapeOperands & (1u << 2), 0u);
  EXPECT_NE(lookupOp("Resize").shapeOperands & (1u << 3), 0u);
}
