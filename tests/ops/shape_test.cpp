// Type inference and kernel tests of the shape family, first file
// (src/ir/ops/shape.cpp: Shape, Size, ConstantOfShape, Range, Reshape,
// Flatten, Squeeze, Unsqueeze, Expand). Expected values were checked with
// numpy or taken from ONNX's conformance tests (test_reshape_*, ...).
#include "kernel_test_util.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

using namespace graphvet;
using namespace graphvet::testing;

namespace {

AttrValue ints(std::initializer_list<int64_t> v) {
  AttrValue::List l;
  for (int64_t x : v)
    l.push_back(AttrValue::ofInt(x));
  return AttrValue::ofList(l);
}

Tensor i64s(std::initializer_list<double> v) {
  return tensorOf(DType::I64, {static_cast<int64_t>(v.size())}, v);
}

/// 0, 1, 2, ... in the dtype.
Tensor iota(DType dt, Shape s) {
  Tensor t(TensorType{dt, std::move(s)});
  for (int64_t i = 0; i < t.size(); ++i) {
    if (isFloat(dt))
      t.setDouble(i, static_cast<double>(i));
    else
      t.setInt(i, i);
  }
  return t;
}

std::vector<double> seq(int64_t n) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i)
    v.push_back(static_cast<double>(i));
  return v;
}

} // namespace

// --- Shape, Size ------------------------------------------------------------

TEST(ShapeOps, ShapeWithStartAndEnd) {
  Tensor x(TensorType{DType::F16, {3, 4, 5}});
  x.setUndef(7); // values never matter to Shape
  auto r = run(opNode("Shape", 1), {&x});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].type(), (TensorType{DType::I64, {3}}));
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{3, 4, 5}));
  EXPECT_FALSE(r[0].anyUndef());
  // test_shape_start_1_end_negative_1, _clip_start, _clip_end, _start_negative_1.
  EXPECT_EQ(valuesOf(run(
                opNode("Shape", 1, {{"start", AttrValue::ofInt(1)}, {"end", AttrValue::ofInt(-1)}}),
                {&x})[0]),
            (std::vector<double>{4}));
  EXPECT_EQ(valuesOf(run(opNode("Shape", 1, {{"start", AttrValue::ofInt(-10)}}), {&x})[0]),
            (std::vector<double>{3, 4, 5}));
  EXPECT_EQ(valuesOf(run(opNode("Shape", 1, {{"end", AttrValue::ofInt(10)}}), {&x})[0]),
            (std::vector<double>{3, 4, 5}));
  EXPECT_EQ(valuesOf(run(opNode("Shape", 1, {{"start", AttrValue::ofInt(-1)}}), {&x})[0]),
            (std::vector<double>{5}));
  // start after end: an empty shape vector.
  auto e =
      run(opNode("Shape", 1, {{"start", AttrValue::ofInt(2)}, {"end", AttrValue::ofInt(1)}}), {&x});
  EXPECT_EQ(e[0].type(), (TensorType{DType::I64, {0}}));
  Tensor s = tensorOf(DType::Bool, {}, {1});
  EXPECT_EQ(run(opNode("Shape", 1), {&s})[0].type(), (TensorType{DType::I64, {0}}));
  EXPECT_NE(inferError(opNode("Shape", 2), {x.type(), x.type()}), "");
}

TEST(ShapeOps, Size) {
  Tensor x(TensorType{DType::F32, {3, 4, 5}});
  auto r = run(opNode("Size", 1), {&x});
  EXPECT_EQ(r[0].type(), (TensorType{DType::I64, {}}));
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{60}));
  Tensor empty(TensorType{DType::Bool, {0, 3}});
  EXPECT_EQ(valuesOf(run(opNode("Size", 1), {&empty})[0]), (std::vector<double>{0}));
  Tensor scalar = tensorOf(DType::U64, {}, {9});
  EXPECT_EQ(valuesOf(run(opNode("Size", 1), {&scalar})[0]), (std::vector<double>{1}));
  EXPECT_NE(inferError(opNode("Size", 0), {}), "");
}

// --- ConstantOfShape --------------------------------------------------------

TEST(ShapeOps, ConstantOfShape) {
  // Default value: f32 zero.
  Tensor shape = i64s({2, 3});
  auto r = run(opNode("ConstantOfShape", 1), {&shape});
  EXPECT_EQ(r[0].type(), (TensorType{DType::F32, {2, 3}}));
  EXPECT_EQ(valuesOf(r[0]), std::vector<double>(6, 0.0));
  // test_constantofshape_float_ones / _int_zeros / _int_shape_zero.
  auto one = std::make_shared<Tensor>(tensorOf(DType::F32, {1}, {1}));
  Tensor s3 = i64s({4, 3, 2});
  r = run(opNode("ConstantOfShape", 1, {{"value", AttrValue::ofTensor(one)}}), {&s3});
  EXPECT_EQ(r[0].type(), (TensorType{DType::F32, {4, 3, 2}}));
  EXPECT_EQ(valuesOf(r[0]), std::vector<double>(24, 1.0));
  auto seven = std::make_shared<Tensor>(tensorOf(DType::I32, {1}, {-7}));
  Tensor zero = i64s({0});
  r = run(opNode("ConstantOfShape", 1, {{"value", AttrValue::ofTensor(seven)}}), {&zero});
  EXPECT_EQ(r[0].type(), (TensorType{DType::I32, {0}}));
  Tensor noDims(TensorType{DType::I64, {0}}); // shape [] -> a scalar
  r = run(opNode("ConstantOfShape", 1, {{"value", AttrValue::ofTensor(seven)}}), {&noDims});
  EXPECT_EQ(r[0].type(), (TensorType{DType::I32, {}}));
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{-7}));
  // -0.0 keeps its sign; an indeterminate value fills indeterminate elements.
  auto negZero = std::make_shared<Tensor>(tensorOf(DType::F16, {1}, {-0.0}));
  r = run(opNode("ConstantOfShape", 1, {{"value", AttrValue::ofTensor(negZero)}}), {&shape});
  EXPECT_TRUE(std::signbit(r[0].getDouble(5)));
  auto undef = std::make_shared<Tensor>(tensorOf(DType::BF16, {1}, {0}));
  const_cast<Tensor &>(*undef).setUndef(0);
  r = run(opNode("ConstantOfShape", 1, {{"value", AttrValue::ofTensor(undef)}}), {&shape});
  EXPECT_EQ(r[0].dtype(), DType::BF16);
  for (int64_t i = 0; i < 6; ++i)
    EXPECT_TRUE(r[0].isUndef(i));
}

TEST(ShapeOps, ConstantOfShapeErrors) {
  Node n = opNode("ConstantOfShape", 1);
  TensorType t{DType::I64, {2}};
  EXPECT_EQ(inferError(n, {t}), "input 0 (input) of ConstantOfShape must be a constant");
  Tensor neg = i64s({2, -1});
  EXPECT_NE(inferError(n, {t}, {&neg}).find("negative"), std::string::npos);
  Tensor i32 = tensorOf(DType::I32, {1}, {2});
  EXPECT_NE(inferError(n, {i32.type()}, {&i32}).find("must be i64"), std::string::npos);
  Tensor ok = i64s({2});
  auto two = std::make_shared<Tensor>(tensorOf(DType::F32, {2}, {1, 2}));
  EXPECT_NE(
      inferError(opNode("ConstantOfShape", 1, {{"value", AttrValue::ofTensor(two)}}), {t}, {&ok}),
      "");
  Tensor undef = i64s({2, 2});
  undef.setUndef(1);
  EXPECT_NE(inferError(n, {t}, {&undef}).find("indeterminate"), std::string::npos);
  Tensor huge = i64s({int64_t{1} << 31, int64_t{1} << 31});
  EXPECT_NE(inferError(n, {t}, {&huge}).find("too large"), std::string::npos);
}

// --- Range ------------------------------------------------------------------

TEST(ShapeOps, Range) {
  // test_range_int32_type_negative_delta, test_range_float_type_positive_delta.
  Tensor s = tensorOf(DType::I32, {}, {10}), l = tensorOf(DType::I32, {}, {6}),
         d = tensorOf(DType::I32, {}, {-3});
  auto r = run(opNode("Range", 3), {&s, &l, &d});
  EXPECT_EQ(r[0].type(), (TensorType{DType::I32, {2}}));
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{10, 7}));
  Tensor fs = tensorOf(DType::F32, {}, {1}), fl = tensorOf(DType::F32, {}, {5}),
         fd = tensorOf(DType::F32, {}, {2});
  EXPECT_EQ(valuesOf(run(opNode("Range", 3), {&fs, &fl, &fd})[0]), (std::vector<double>{1, 3}));
  // The count is computed in f32: (0.8f - 0.6f) / 0.1f is 1.9999999 and
  // gives 2 elements (in f64 the same numbers give 3); elements are
  // start + i * delta in f32.
  Tensor a = tensorOf(DType::F32, {}, {0.6}), b = tensorOf(DType::F32, {}, {0.8}),
         c = tensorOf(DType::F32, {}, {0.1});
  r = run(opNode("Range", 3), {&a, &b, &c});
  ASSERT_EQ(r[0].type(), (TensorType{DType::F32, {2}}));
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{0.6f, 0.6f + 0.1f}));
  Tensor a64 = tensorOf(DType::F64, {}, {0.6}), b64 = tensorOf(DType::F64, {}, {0.8}),
         c64 = tensorOf(DType::F64, {}, {0.1});
  r = run(opNode("Range", 3), {&a64, &b64, &c64});
  ASSERT_EQ(r[0].type(), (TensorType{DType::F64, {3}}));
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{0.6, 0.6 + 0.1, 0.6 + 2.0 * 0.1}));
  // Empty when the limit lies behind the start; exact counts near i64 limits.
  Tensor i0 = tensorOf(DType::I64, {}, {5}), i1 = tensorOf(DType::I64, {}, {0}),
         i2 = tensorOf(DType::I64, {}, {1});
  EXPECT_EQ(run(opNode("Range", 3), {&i0, &i1, &i2})[0].type(), (TensorType{DType::I64, {0}}));
  Tensor big0(TensorType{DType::I64, {}}), big1(TensorType{DType::I64, {}}),
      bigd(TensorType{DType::I64, {}});
  big0.setInt(0, std::numeric_limits<int64_t>::max() - 5);
  big1.setInt(0, std::numeric_limits<int64_t>::max());
  bigd.setInt(0, 2);
  r = run(opNode("Range", 3), {&big0, &big1, &bigd});
  ASSERT_EQ(r[0].type(), (TensorType{DType::I64, {3}}));
  EXPECT_EQ(r[0].getInt(2), std::numeric_limits<int64_t>::max() - 1);
  Tensor h0 = tensorOf(DType::I16, {}, {-3}), h1 = tensorOf(DType::I16, {}, {4}),
         h2 = tensorOf(DType::I16, {}, {3});
  EXPECT_EQ(valuesOf(run(opNode("Range", 3), {&h0, &h1, &h2})[0]), (std::vector<double>{-3, 0, 3}));
}

TEST(ShapeOps, RangeErrors) {
  Node n = opNode("Range", 3);
  Tensor s = tensorOf(DType::I32, {}, {0}), l = tensorOf(DType::I32, {}, {4}),
         z = tensorOf(DType::I32, {}, {0});
  TensorType t = s.type();
  EXPECT_EQ(inferError(n, {t, t, t}, {&s, &l, nullptr}),
            "input 2 (delta) of Range must be a constant");
  EXPECT_NE(inferError(n, {t, t, t}, {&s, &l, &z}).find("zero"), std::string::npos);
  Tensor f = tensorOf(DType::F32, {}, {1});
  EXPECT_NE(inferError(n, {t, f.type(), t}, {&s, &f, &l}).find("must be i32"), std::string::npos);
  Tensor v = tensorOf(DType::I32, {1}, {4});
  EXPECT_NE(inferError(n, {t, v.type(), t}, {&s, &v, &l}).find("scalar"), std::string::npos);
  Tensor u = tensorOf(DType::U8, {}, {1});
  EXPECT_NE(inferError(n, {u.type(), u.type(), u.type()}, {&u, &u, &u}).find("dtype"),
            std::string::npos);
  Tensor nan = tensorOf(DType::F32, {}, {NAN}), one = tensorOf(DType::F32, {}, {1});
  EXPECT_NE(inferError(n, {f.type(), f.type(), f.type()}, {&one, &nan, &one}), "");
  Tensor inf = tensorOf(DType::F64, {}, {INFINITY}), d1 = tensorOf(DType::F64, {}, {1});
  EXPECT_NE(inferError(n, {d1.type(), d1.type(), d1.type()}, {&d1, &inf, &d1}), "");
}

// --- Reshape ----------------------------------------------------------------

TEST(ShapeOps, Reshape) {
  Tensor x = iota(DType::F32, {2, 3, 4});
  // test_reshape_negative_dim, _zero_and_negative_dim, _zero_dim,
  // _negative_extended_dims.
  struct Case {
    std::initializer_list<double> spec;
    Shape out;
  } cases[] = {{{2, -1, 2}, {2, 6, 2}},
               {{2, 0, 1, -1}, {2, 3, 1, 4}},
               {{2, 0, 4, 1}, {2, 3, 4, 1}},
               {{-1, 2, 3, 4}, {1, 2, 3, 4}},
               {{24}, {24}}};
  for (const Case &c : cases) {
    Tensor shape = i64s(c.spec);
    auto r = run(opNode("Reshape", 2), {&x, &shape});
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].type(), (TensorType{DType::F32, c.out}));
    EXPECT_EQ(valuesOf(r[0]), seq(24));
  }
  // test_reshape_allowzero_reordered: a 0 is a real 0 with allowzero = 1.
  Tensor empty(TensorType{DType::F32, {0, 3, 4}});
  Tensor spec = i64s({3, 4, 0});
  auto r = run(opNode("Reshape", 2, {{"allowzero", AttrValue::ofInt(1)}}), {&empty, &spec});
  EXPECT_EQ(r[0].type(), (TensorType{DType::F32, {3, 4, 0}}));
  // Opset 1-4: the shape as an attribute.
  r = run(opNode("Reshape", 1, {{"shape", ints({4, -1})}}), {&x});
  EXPECT_EQ(r[0].type(), (TensorType{DType::F32, {4, 6}}));
  // Elements move with their masks and exact bits (-0, NaN payloads).
  Tensor h = tensorOf(DType::F16, {2, 2}, {-0.0, NAN, INFINITY, 1});
  h.setUndef(3);
  Tensor flat = i64s({4});
  r = run(opNode("Reshape", 2), {&h, &flat});
  EXPECT_TRUE(std::equal(h.bytes().begin(), h.bytes().end(), r[0].bytes().begin()));
  EXPECT_FALSE(r[0].isUndef(0));
  EXPECT_TRUE(r[0].isUndef(3));
}

TEST(ShapeOps, ReshapeRowKeepsItsViewAndShapeOperand) {
  const OpInfo &op = lookupOp("Reshape");
  ASSERT_EQ(op.viewOutputs.size(), 1u);
  EXPECT_EQ(op.viewOutputs[0].output, 0u);
  EXPECT_EQ(op.viewOutputs[0].input, 0u);
  EXPECT_EQ(op.shapeOperands, 0b10u);
  EXPECT_TRUE(isNumericOp("Reshape"));
  Node n = opNode("Reshape", 2);
  EXPECT_EQ(viewInput(n, 0), std::optional<uint32_t>(0));
}

TEST(ShapeOps, ReshapeErrors) {
  Node n = opNode("Reshape", 2);
  TensorType x{DType::F32, {2, 3, 4}}, s{DType::I64, {2}};
  EXPECT_EQ(inferError(n, {x, s}), "input 1 (shape) of Reshape must be a constant");
  auto err = [&](std::initializer_list<double> v, AttrMap attrs = {}) {
    Tensor t = i64s(v);
    return inferError(opNode("Reshape", 2, std::move(attrs)), {x, t.type()}, {nullptr, &t});
  };
  EXPECT_NE(err({-1, -1}).find("more than one -1"), std::string::npos);
  EXPECT_NE(err({5, 5}).find("does not hold"), std::string::npos);
  EXPECT_NE(err({5, -1}).find("cannot infer"), std::string::npos);
  EXPECT_NE(err({2, 3, 4, 0}).find("does not have"), std::string::npos);
  EXPECT_NE(err({-2, 12}).find("invalid dimension"), std::string::npos);
  EXPECT_NE(err({0, -1}, {{"allowzero", AttrValue::ofInt(1)}}).find("allowzero"),
            std::string::npos);
  Tensor i32 = tensorOf(DType::I32, {1}, {24});
  EXPECT_NE(inferError(n, {x, i32.type()}, {nullptr, &i32}).find("must be i64"), std::string::npos);
  Tensor undef = i64s({24});
  undef.setUndef(0);
  EXPECT_NE(inferError(n, {x, undef.type()}, {nullptr, &undef}).find("indeterminate"),
            std::string::npos);
  EXPECT_NE(inferError(opNode("Reshape", 1), {x}), "");
}

// --- Flatten, Squeeze, Unsqueeze --------------------------------------------

TEST(ShapeOps, Flatten) {
  Tensor x = iota(DType::I8, {2, 3, 4, 5});
  // test_flatten_axis0..3, _default_axis, _negative_axis1..4.
  struct Case {
    int64_t axis;
    Shape out;
  } cases[] = {{0, {1, 120}}, {1, {2, 60}},  {2, {6, 20}},  {3, {24, 5}},  {4, {120, 1}},
               {-1, {24, 5}}, {-2, {6, 20}}, {-3, {2, 60}}, {-4, {1, 120}}};
  for (const Case &c : cases) {
    auto r = run(opNode("Flatten", 1, {{"axis", AttrValue::ofInt(c.axis)}}), {&x});
    EXPECT_EQ(r[0].type(), (TensorType{DType::I8, c.out})) << c.axis;
    EXPECT_TRUE(std::equal(x.bytes().begin(), x.bytes().end(), r[0].bytes().begin()));
  }
  EXPECT_EQ(run(opNode("Flatten", 1), {&x})[0].type(), (TensorType{DType::I8, {2, 60}}));
  EXPECT_NE(inferError(opNode("Flatten", 1, {{"axis", AttrValue::ofInt(5)}}), {x.type()}), "");
  EXPECT_NE(inferError(opNode("Flatten", 1, {{"axis", AttrValue::ofInt(-5)}}), {x.type()}), "");
  Tensor s = tensorOf(DType::F32, {}, {1}); // scalar: only axis 0 is valid
  EXPECT_EQ(run(opNode("Flatten", 1, {{"axis", AttrValue::ofInt(0)}}), {&s})[0].type(),
            (TensorType{DType::F32, {1, 1}}));
  EXPECT_NE(inferError(opNode("Flatten", 1), {s.type()}), "");
}

TEST(ShapeOps, Squeeze) {
  // test_squeeze_negative_axes: axes as input 1 (opset 13).
  Tensor x = iota(DType::F32, {1, 3, 1, 5});
  Tensor axes = i64s({-2});
  auto r = run(opNode("Squeeze", 2), {&x, &axes});
  EXPECT_EQ(r[0].type(), (TensorType{DType::F32, {1, 3, 5}}));
  EXPECT_EQ(valuesOf(r[0]), seq(15));
  // No axes: every size-1 axis goes; an empty axes list removes none.
  EXPECT_EQ(run(opNode("Squeeze", 1), {&x})[0].type(), (TensorType{DType::F32, {3, 5}}));
  Tensor none(TensorType{DType::I64, {0}});
  EXPECT_EQ(run(opNode("Squeeze", 2), {&x, &none})[0].type(), x.type());
  // Opset 11: attribute axes; bool data (as in the nllloss expansions).
  Tensor b = tensorOf(DType::Bool, {2, 1}, {1, 0});
  r = run(opNode("Squeeze", 1, {{"axes", ints({1})}}), {&b});
  EXPECT_EQ(r[0].type(), (TensorType{DType::Bool, {2}}));
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{1, 0}));
  // An unconnected axes slot means no axes.
  Node unconnected = opNode("Squeeze", 2);
  unconnected.inputs[1] = std::nullopt;
  EXPECT_EQ(run(unconnected, {&x, nullptr})[0].type(), (TensorType{DType::F32, {3, 5}}));
  auto err = [&](std::initializer_list<double> v) {
    Tensor t = i64s(v);
    return inferError(opNode("Squeeze", 2), {x.type(), t.type()}, {nullptr, &t});
  };
  EXPECT_NE(err({1}).find("does not have size 1"), std::string::npos);
  EXPECT_NE(err({0, -4}).find("repeated"), std::string::npos);
  EXPECT_NE(err({4}).find("out of range"), std::string::npos);
  EXPECT_EQ(inferError(opNode("Squeeze", 2), {x.type(), axes.type()}),
            "input 1 (axes) of Squeeze must be a constant");
}

TEST(ShapeOps, Unsqueeze) {
  Tensor x = iota(DType::U16, {3, 4, 5});
  // test_unsqueeze_unsorted_axes, _two_axes, _axis_1, _negative_axes.
  struct Case {
    std::initializer_list<double> axes;
    Shape out;
  } cases[] = {{{5, 4, 2}, {3, 4, 1, 5, 1, 1}},
               {{1, 4}, {3, 1, 4, 5, 1}},
               {{1}, {3, 1, 4, 5}},
               {{-1}, {3, 4, 5, 1}},
               {{0, -1}, {1, 3, 4, 5, 1}}};
  for (const Case &c : cases) {
    Tensor axes = i64s(c.axes);
    auto r = run(opNode("Unsqueeze", 2), {&x, &axes});
    EXPECT_EQ(r[0].type(), (TensorType{DType::U16, c.out}));
    EXPECT_EQ(valuesOf(r[0]), seq(60));
  }
  Tensor y = iota(DType::F32, {1, 3, 1, 5});
  Tensor neg = i64s({-2});
  EXPECT_EQ(run(opNode("Unsqueeze", 2), {&y, &neg})[0].type(),
            (TensorType{DType::F32, {1, 3, 1, 1, 5}}));
  // Opset 11 (test_loop11): attribute axes on a scalar.
  Tensor s = tensorOf(DType::I64, {}, {7});
  auto r = run(opNode("Unsqueeze", 1, {{"axes", ints({0})}}), {&s});
  EXPECT_EQ(r[0].type(), (TensorType{DType::I64, {1}}));
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{7}));
  EXPECT_NE(inferError(opNode("Unsqueeze", 1), {x.type()}).find("needs axes"), std::string::npos);
  auto err = [&](std::initializer_list<double> v) {
    Tensor t = i64s(v);
    return inferError(opNode("Unsqueeze", 2), {x.type(), t.type()}, {nullptr, &t});
  };
  EXPECT_NE(err({1, 1}).find("repeated"), std::string::npos);
  EXPECT_NE(err({1, -4}).find("repeated"), std::string::npos);
  EXPECT_NE(err({4}).find("out of range"), std::string::npos);
}

// --- Expand -----------------------------------------------------------------

TEST(ShapeOps, Expand) {
  // test_expand_dim_changed / _dim_unchanged.
  Tensor x = tensorOf(DType::F32, {3, 1}, {1, 2, 3});
  Tensor s1 = i64s({2, 1, 6});
  auto r = run(opNode("Expand", 2), {&x, &s1});
  ASSERT_EQ(r[0].type(), (TensorType{DType::F32, {2, 3, 6}}));
  std::vector<double> want;
  for (int rep = 0; rep < 2; ++rep)
    for (double v : {1.0, 2.0, 3.0})
      want.insert(want.end(), 6, v);
  EXPECT_EQ(valuesOf(r[0]), want);
  Tensor s2 = i64s({3, 4});
  EXPECT_EQ(run(opNode("Expand", 2), {&x, &s2})[0].type(), (TensorType{DType::F32, {3, 4}}));
  // Bidirectional: a 1 in the shape keeps the input's dimension; a shorter
  // shape is right-aligned.
  Tensor s3 = i64s({1});
  EXPECT_EQ(run(opNode("Expand", 2), {&x, &s3})[0].type(), x.type());
  Tensor s4 = i64s({2, 1, 1});
  EXPECT_EQ(run(opNode("Expand", 2), {&x, &s4})[0].type(), (TensorType{DType::F32, {2, 3, 1}}));
  // An indeterminate element is copied (indeterminate) wherever it lands.
  Tensor u = tensorOf(DType::I64, {2, 1}, {5, 6});
  u.setUndef(1);
  Tensor s5 = i64s({2, 3});
  r = run(opNode("Expand", 2), {&u, &s5});
  for (int64_t i = 0; i < 6; ++i)
    EXPECT_EQ(r[0].isUndef(i), i >= 3) << i;
  EXPECT_EQ(r[0].getInt(0), 5);
  Tensor bad = i64s({4, 1});
  EXPECT_NE(inferError(opNode("Expand", 2), {x.type(), bad.type()}, {nullptr, &bad})
                .find("does not broadcast"),
            std::string::npos);
  Tensor neg = i64s({-1, 1});
  EXPECT_NE(inferError(opNode("Expand", 2), {x.type(), neg.type()}, {nullptr, &neg}), "");
  EXPECT_EQ(inferError(opNode("Expand", 2), {x.type(), bad.type()}),
            "input 1 (shape) of Expand must be a constant");
}

// --- Every op of the family -------------------------------------------------

TEST(ShapeOps, ShapeOperandsDeclared) {
  struct Row {
    const char *op;
    uint64_t mask;
  } rows[] = {{"Reshape", 0b10},   {"ConstantOfShape", 0b1}, {"Squeeze", 0b10}, {"Unsqueeze", 0b10},
              {"Split", 0b10},     {"Slice", 0b11110},       {"Expand", 0b10},  {"Tile", 0b10},
              {"Pad", 0b1010},     {"Range", 0b111},         {"Shape", 0},      {"Size", 0},
              {"Flatten", 0},      {"Transpose", 0},         {"Concat", 0},     {"Gather", 0},
              {"DepthToSpace", 0}, {"SpaceToDepth", 0}};
  for (const Row &r : rows) {
    EXPECT_TRUE(isNumericOp(r.op)) << r.op;
    EXPECT_EQ(lookupOp(r.op).shapeOperands, r.mask) << r.op;
  }
  EXPECT_FALSE(lookupOp("Identity").infer); // a copy op of the memory table
}

TEST(ShapeOps, ReshapingOpsMoveEveryDtypeBitExactly) {
  for (int d = 0; d < kNumDTypes; ++d) {
    DType dt = static_cast<DType>(d);
    Tensor x(TensorType{dt, {2, 1, 3}});
    for (size_t i = 0; i < x.bytes().size(); ++i)
      x.bytes()[i] = static_cast<uint8_t>(i * 37 + 11);
    if (dt == DType::Bool)
      for (auto &b : x.bytes())
        b &= 1;
    x.setUndef(4);
    Tensor shape = i64s({3, 2}), axes = i64s({1}), ex = i64s({2, 1, 3});
    std::vector<Tensor> outs;
    outs.push_back(run(opNode("Reshape", 2), {&x, &shape})[0]);
    outs.push_back(run(opNode("Flatten", 1), {&x})[0]);
    outs.push_back(run(opNode("Squeeze", 2), {&x, &axes})[0]);
    outs.push_back(run(opNode("Unsqueeze", 2), {&x, &axes})[0]);
    outs.push_back(run(opNode("Expand", 2), {&x, &ex})[0]);
    for (const Tensor &o : outs) {
      EXPECT_EQ(o.dtype(), dt);
      EXPECT_TRUE(
          std::equal(x.bytes().begin(), x.bytes().end(), o.bytes().begin(), o.bytes().end()))
          << dtypeName(dt);
      for (int64_t i = 0; i < 6; ++i)
        EXPECT_EQ(o.isUndef(i), i == 4);
    }
  }
}
