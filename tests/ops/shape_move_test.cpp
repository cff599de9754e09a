// Type inference and kernel tests of the shape family, second file
// (src/ir/ops/shape_move.cpp: Transpose, Concat, Split, Slice, Gather, Tile,
// Pad, DepthToSpace, SpaceToDepth). Expected values were checked with numpy
// (np.transpose, np.pad, np.take, ...) or taken from ONNX's conformance tests.
#include "kernel_test_util.h"

#include <cmath>
#include <limits>

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

Tensor i64v(std::vector<int64_t> v) {
  Tensor t(TensorType{DType::I64, {static_cast<int64_t>(v.size())}});
  for (size_t i = 0; i < v.size(); ++i)
    t.setInt(static_cast<int64_t>(i), v[i]);
  return t;
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

std::vector<double> seq(int64_t from, int64_t to) {
  std::vector<double> v;
  for (int64_t i = from; i < to; ++i)
    v.push_back(static_cast<double>(i));
  return v;
}

AttrMap attrs(std::initializer_list<std::pair<const std::string, AttrValue>> a) {
  return AttrMap(a);
}

} // namespace

// --- Transpose --------------------------------------------------------------

TEST(ShapeMoveOps, Transpose) {
  Tensor x = iota(DType::F32, {2, 3, 4});
  // np.transpose(x, (1, 2, 0)).
  auto r = run(opNode("Transpose", 1, {{"perm", ints({1, 2, 0})}}), {&x});
  EXPECT_EQ(r[0].type(), (TensorType{DType::F32, {3, 4, 2}}));
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{0, 12, 1, 13, 2, 14, 3, 15, 4,  16, 5,  17,
                                                 6, 18, 7, 19, 8, 20, 9, 21, 10, 22, 11, 23}));
  // test_transpose_default: the axes reversed.
  r = run(opNode("Transpose", 1), {&x});
  EXPECT_EQ(r[0].type(), (TensorType{DType::F32, {4, 3, 2}}));
  EXPECT_EQ(r[0].getDouble(1), 12); // x[0, 0, 1] -> y[0, 0, 1] = x[1, 0, 0]
  EXPECT_EQ(r[0].getDouble(2), 4);  // y[0, 1, 0] = x[0, 1, 0]
  // Bits and masks travel: -0, NaN, inf in f16.
  Tensor h = tensorOf(DType::F16, {2, 2}, {-0.0, NAN, -INFINITY, 1});
  h.setUndef(2);
  r = run(opNode("Transpose", 1), {&h});
  EXPECT_TRUE(std::signbit(r[0].getDouble(0)));
  EXPECT_TRUE(std::isnan(r[0].getDouble(2)));
  EXPECT_TRUE(r[0].isUndef(1));
  EXPECT_FALSE(r[0].isUndef(2));
  Tensor s = tensorOf(DType::I64, {}, {4});
  EXPECT_EQ(valuesOf(run(opNode("Transpose", 1), {&s})[0]), (std::vector<double>{4}));
  EXPECT_NE(inferError(opNode("Transpose", 1, {{"perm", ints({0, 0, 1})}}), {x.type()})
                .find("not a permutation"),
            std::string::npos);
  EXPECT_NE(inferError(opNode("Transpose", 1, {{"perm", ints({1, 0})}}), {x.type()}), "");
  EXPECT_NE(inferError(opNode("Transpose", 1, {{"perm", ints({0, 1, 3})}}), {x.type()}), "");
}

// --- Concat, Split ----------------------------------------------------------

TEST(ShapeMoveOps, Concat) {
  Tensor a = iota(DType::I32, {2, 2});
  Tensor b = tensorOf(DType::I32, {2, 3}, {10, 11, 12, 13, 14, 15});
  Tensor e(TensorType{DType::I32, {2, 0}});
  auto r = run(opNode("Concat", 3, {{"axis", AttrValue::ofInt(-1)}}), {&a, &e, &b});
  EXPECT_EQ(r[0].type(), (TensorType{DType::I32, {2, 5}}));
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{0, 1, 10, 11, 12, 2, 3, 13, 14, 15}));
  // test_concat_3d_axis_1.
  Tensor x = iota(DType::F32, {2, 2, 2}), y = iota(DType::F32, {2, 2, 2});
  for (int64_t i = 0; i < 8; ++i)
    y.setDouble(i, 9 + static_cast<double>(i));
  for (int64_t i = 0; i < 8; ++i)
    x.setDouble(i, 1 + static_cast<double>(i));
  r = run(opNode("Concat", 2, {{"axis", AttrValue::ofInt(1)}}), {&x, &y});
  EXPECT_EQ(valuesOf(r[0]),
            (std::vector<double>{1, 2, 3, 4, 9, 10, 11, 12, 5, 6, 7, 8, 13, 14, 15, 16}));
  // One input; the undef mask travels.
  Tensor u = tensorOf(DType::Bool, {3}, {1, 0, 1});
  u.setUndef(1);
  r = run(opNode("Concat", 2, {{"axis", AttrValue::ofInt(0)}}), {&u, &u});
  EXPECT_EQ(r[0].type(), (TensorType{DType::Bool, {6}}));
  EXPECT_TRUE(r[0].isUndef(1) && r[0].isUndef(4) && !r[0].isUndef(3));
  auto err = [](AttrMap at, std::vector<std::optional<TensorType>> in) {
    return inferError(opNode("Concat", in.size(), std::move(at)), std::move(in));
  };
  TensorType t{DType::F32, {2, 2}};
  EXPECT_EQ(err({}, {t, t}), "Concat needs attribute axis");
  EXPECT_NE(err({{"axis", AttrValue::ofInt(2)}}, {t, t}).find("out of range"), std::string::npos);
  EXPECT_NE(err({{"axis", AttrValue::ofInt(0)}}, {t, TensorType{DType::F16, {2, 2}}}), "");
  EXPECT_NE(err({{"axis", AttrValue::ofInt(0)}}, {t, TensorType{DType::F32, {2, 3}}}), "");
  EXPECT_NE(err({{"axis", AttrValue::ofInt(0)}}, {t, TensorType{DType::F32, {2}}}), "");
  EXPECT_NE(err({{"axis", AttrValue::ofInt(0)}}, {TensorType{DType::F32, {}}}), "");
  EXPECT_NE(err({{"axis", AttrValue::ofInt(0)}}, {t, std::nullopt}), "");
}

TEST(ShapeMoveOps, Split) {
  // test_split_equal_parts_1d: three outputs, no split.
  Tensor x = tensorOf(DType::F32, {6}, {1, 2, 3, 4, 5, 6});
  auto r = run(opNode("Split", 1, {{"axis", AttrValue::ofInt(0)}}, 3), {&x});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{1, 2}));
  EXPECT_EQ(valuesOf(r[2]), (std::vector<double>{5, 6}));
  // Opset 13 split input, with an empty piece (np.split(x, [2, 5], axis=1)).
  Tensor y = iota(DType::U8, {2, 5});
  Tensor split = i64s({2, 3, 0});
  r = run(opNode("Split", 2, {{"axis", AttrValue::ofInt(-1)}}, 3), {&y, &split});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{0, 1, 5, 6}));
  EXPECT_EQ(valuesOf(r[1]), (std::vector<double>{2, 3, 4, 7, 8, 9}));
  EXPECT_EQ(r[2].type(), (TensorType{DType::U8, {2, 0}}));
  // Opsets 2-11: attribute split.
  r = run(opNode("Split", 1, {{"split", ints({1, 5})}}, 2), {&x});
  EXPECT_EQ(valuesOf(r[1]), (std::vector<double>{2, 3, 4, 5, 6}));
  // test_split_zero_size_splits.
  Tensor empty(TensorType{DType::F32, {0}});
  Tensor zeros = i64s({0, 0, 0});
  r = run(opNode("Split", 2, {}, 3), {&empty, &zeros});
  EXPECT_EQ(r[2].type(), (TensorType{DType::F32, {0}}));
  // Opset 18's num_outputs: chunks of ceil(5 / 3) = 2, the last smaller.
  Tensor five = iota(DType::I64, {5});
  r = run(opNode("Split", 1, {{"num_outputs", AttrValue::ofInt(3)}}, 3), {&five});
  EXPECT_EQ(r[2].type(), (TensorType{DType::I64, {1}}));
  EXPECT_EQ(valuesOf(r[1]), (std::vector<double>{2, 3}));
  Tensor u = iota(DType::F64, {4});
  u.setUndef(2);
  r = run(opNode("Split", 1, {}, 2), {&u});
  EXPECT_TRUE(r[1].isUndef(0) && !r[1].isUndef(1) && !r[0].anyUndef());
  // Errors: uneven without split (opset <= 17), wrong sum, wrong count.
  EXPECT_NE(inferError(opNode("Split", 1, {}, 3), {five.type()}).find("evenly"), std::string::npos);
  Tensor bad = i64s({2, 2});
  EXPECT_NE(inferError(opNode("Split", 2, {}, 2), {five.type(), bad.type()}, {nullptr, &bad})
                .find("does not sum"),
            std::string::npos);
  EXPECT_NE(inferError(opNode("Split", 2, {}, 3), {five.type(), bad.type()}, {nullptr, &bad}), "");
  Tensor neg = i64s({6, -1});
  EXPECT_NE(inferError(opNode("Split", 2, {}, 2), {five.type(), neg.type()}, {nullptr, &neg}), "");
  EXPECT_EQ(inferError(opNode("Split", 2, {}, 2), {five.type(), bad.type()}),
            "input 1 (split) of Split must be a constant");
  EXPECT_NE(inferError(opNode("Split", 1, {{"axis", AttrValue::ofInt(1)}}, 2), {five.type()}), "");
}

// --- Slice ------------------------------------------------------------------

TEST(ShapeMoveOps, SliceOfConsecutiveElementsCopiesRunsWithTheirMask) {
  // Step 1 on the innermost axis: the kernel copies each row's run at once;
  // the values and the indeterminate mask are those of the element copies.
  Tensor x = iota(DType::F32, {2, 3, 4});
  x.setUndef(5);
  x.setUndef(18);
  Tensor starts = i64s({0, 1, 1}), ends = i64s({2, 3, 3}), axes = i64s({0, 1, 2});
  auto r = run(opNode("Slice", 4), {&x, &starts, &ends, &axes});
  EXPECT_EQ(r[0].type(), (TensorType{DType::F32, {2, 2, 2}}));
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{5, 6, 9, 10, 17, 18, 21, 22}));
  for (int64_t i = 0; i < 8; ++i)
    EXPECT_EQ(r[0].isUndef(i), i == 0 || i == 5) << i;
}

TEST(ShapeMoveOps, CopyElementsEqualsElementCopies) {
  Tensor src = iota(DType::F16, {6});
  src.setUndef(2);
  Tensor dst = iota(DType::F16, {8}), ref = dst;
  dst.setUndef(4);
  ref.setUndef(4);
  dst.copyElements(3, src, 1, 4);
  for (int64_t k = 0; k < 4; ++k)
    ref.copyElement(3 + k, src, 1 + k);
  EXPECT_EQ(dst, ref);
  EXPECT_TRUE(dst.isUndef(4) && !dst.isUndef(5) && !dst.isUndef(3));
  Tensor plain = iota(DType::I64, {3}), into(TensorType{DType::I64, {3}});
  into.copyElements(0, plain, 0, 3);
  EXPECT_EQ(into, plain);
  EXPECT_FALSE(into.anyUndef());
}

TEST(ShapeMoveOps, Slice) {
  Tensor x = iota(DType::F32, {2, 3, 4});
  // x[1::-1, 2:0:-2, ::3] in numpy: shape [2, 1, 2], values 20 23 8 11.
  Tensor starts = i64v({1, 2, 0}),
         ends = i64v({std::numeric_limits<int64_t>::min(), 0, std::numeric_limits<int64_t>::max()}),
         axes = i64s({0, -2, 2}), steps = i64s({-1, -2, 3});
  auto r = run(opNode("Slice", 5), {&x, &starts, &ends, &axes, &steps});
  EXPECT_EQ(r[0].type(), (TensorType{DType::F32, {2, 1, 2}}));
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{20, 23, 8, 11}));
  // test_slice_neg_steps: starts [20, 10, 4], ends [0, 0, 1], steps [-1, -3, -2].
  Tensor big(TensorType{DType::F32, {20, 10, 5}});
  Tensor s2 = i64s({20, 10, 4}), e2 = i64s({0, 0, 1}), a2 = i64s({0, 1, 2}),
         st2 = i64s({-1, -3, -2});
  EXPECT_EQ(run(opNode("Slice", 5), {&big, &s2, &e2, &a2, &st2})[0].type(),
            (TensorType{DType::F32, {19, 3, 2}}));
  // test_slice_start_out_of_bounds / _end_out_of_bounds / _neg (i32 indices).
  Tensor one = tensorOf(DType::I32, {1}, {1}), k = tensorOf(DType::I32, {1}, {1000}),
         m1 = tensorOf(DType::I32, {1}, {-1}), z = tensorOf(DType::I32, {1}, {0});
  EXPECT_EQ(run(opNode("Slice", 5), {&big, &k, &k, &one, &one})[0].type(),
            (TensorType{DType::F32, {20, 0, 5}}));
  EXPECT_EQ(run(opNode("Slice", 5), {&big, &one, &k, &one, &one})[0].type(),
            (TensorType{DType::F32, {20, 9, 5}}));
  EXPECT_EQ(run(opNode("Slice", 5), {&big, &z, &m1, &one, &one})[0].type(),
            (TensorType{DType::F32, {20, 9, 5}}));
  // test_slice_default_axes: three inputs.
  Tensor s3 = i64s({0, 0, 3}), e3 = i64s({20, 10, 4});
  EXPECT_EQ(run(opNode("Slice", 3), {&big, &s3, &e3})[0].type(),
            (TensorType{DType::F32, {20, 10, 1}}));
  // ONNX clamps a negative-step start into [0, dim - 1]: a start before the
  // axis begins at element 0 (numpy would give an empty slice).
  Tensor v = iota(DType::I16, {3});
  Tensor sm = i64s({-5}), em = i64v({std::numeric_limits<int64_t>::min()}), am = i64s({0}),
         stm = i64s({-1});
  r = run(opNode("Slice", 5), {&v, &sm, &em, &am, &stm});
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{0}));
  // Reversal of a whole axis with a huge negative step reads one element.
  Tensor sr = i64s({-1}), ste = i64v({std::numeric_limits<int64_t>::min()});
  r = run(opNode("Slice", 5), {&v, &sr, &em, &am, &ste});
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{2}));
  Tensor rev = i64s({-1});
  r = run(opNode("Slice", 5), {&v, &sr, &em, &am, &rev});
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{2, 1, 0}));
  // Opset 1: starts/ends/axes attributes; the mask travels.
  Tensor u = iota(DType::U32, {4});
  u.setUndef(2);
  r = run(opNode("Slice", 1, attrs({{"starts", ints({1})}, {"ends", ints({3})}})), {&u});
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{1, 2}));
  EXPECT_TRUE(r[0].isUndef(1) && !r[0].isUndef(0));
}

TEST(ShapeMoveOps, SliceErrors) {
  TensorType x{DType::F32, {4, 4}};
  auto err = [&](Tensor s, Tensor e, Tensor a, Tensor st) {
    return inferError(opNode("Slice", 5), {x, s.type(), e.type(), a.type(), st.type()},
                      {nullptr, &s, &e, &a, &st});
  };
  EXPECT_NE(err(i64s({0}), i64s({2}), i64s({0}), i64s({0})).find("step must not be zero"),
            std::string::npos);
  EXPECT_NE(err(i64s({0, 0}), i64s({2, 2}), i64s({1, -1}), i64s({1, 1})).find("repeated"),
            std::string::npos);
  EXPECT_NE(err(i64s({0, 0}), i64s({2}), i64s({0}), i64s({1})).find("differ"), std::string::npos);
  EXPECT_NE(err(i64s({0}), i64s({2}), i64s({2}), i64s({1})).find("out of range"),
            std::string::npos);
  Tensor f = tensorOf(DType::F32, {1}, {0});
  EXPECT_NE(err(f, i64s({2}), i64s({0}), i64s({1})).find("i32 or i64"), std::string::npos);
  Tensor s = i64s({0});
  EXPECT_EQ(inferError(opNode("Slice", 3), {x, s.type(), s.type()}, {nullptr, &s, nullptr}),
            "input 2 (ends) of Slice must be a constant");
  EXPECT_NE(inferError(opNode("Slice", 2), {x, s.type()}, {nullptr, &s}), "");
}

// --- Gather -----------------------------------------------------------------

TEST(ShapeMoveOps, Gather) {
  // np.take(arange(12).reshape(3, 4), [[2, -1], [0, 1]], axis=1).
  Tensor x = iota(DType::I64, {3, 4});
  Tensor idx = tensorOf(DType::I64, {2, 2}, {2, -1, 0, 1});
  auto r = run(opNode("Gather", 2, {{"axis", AttrValue::ofInt(1)}}), {&x, &idx});
  EXPECT_EQ(r[0].type(), (TensorType{DType::I64, {3, 2, 2}}));
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9}));
  // test_gather_negative_indices (i32 indices here), and a scalar index.
  Tensor d = iota(DType::F32, {10});
  Tensor ni = tensorOf(DType::I32, {3}, {0, -9, -10});
  EXPECT_EQ(valuesOf(run(opNode("Gather", 2), {&d, &ni})[0]), (std::vector<double>{0, 1, 0}));
  Tensor si = tensorOf(DType::I64, {}, {1});
  r = run(opNode("Gather", 2), {&x, &si});
  EXPECT_EQ(r[0].type(), (TensorType{DType::I64, {4}}));
  EXPECT_EQ(valuesOf(r[0]), seq(4, 8));
  // An out-of-range index (ONNX: an error) or an indeterminate index makes
  // the elements it selects indeterminate; other elements are exact.
  Tensor bad = tensorOf(DType::I64, {4}, {1, 3, -4, 0});
  bad.setUndef(3);
  r = run(opNode("Gather", 2), {&x, &bad});
  ASSERT_EQ(r[0].type(), (TensorType{DType::I64, {4, 4}}));
  for (int64_t i = 0; i < 16; ++i)
    EXPECT_EQ(r[0].isUndef(i), i >= 4) << i;
  EXPECT_EQ(valuesOf(r[0])[0], 4);
  // An indeterminate data element travels to where it is picked.
  Tensor du = iota(DType::BF16, {3});
  du.setUndef(1);
  Tensor twice = tensorOf(DType::I32, {3}, {1, 0, 1});
  r = run(opNode("Gather", 2), {&du, &twice});
  EXPECT_TRUE(r[0].isUndef(0) && !r[0].isUndef(1) && r[0].isUndef(2));
  EXPECT_NE(
      inferError(opNode("Gather", 2), {x.type(), TensorType{DType::F32, {1}}}).find("i32 or i64"),
      std::string::npos);
  EXPECT_NE(inferError(opNode("Gather", 2, {{"axis", AttrValue::ofInt(2)}}), {x.type(), idx.type()})
                .find("out of range"),
            std::string::npos);
  EXPECT_NE(inferError(opNode("Gather", 2), {TensorType{DType::F32, {}}, idx.type()}), "");
}

// --- Tile -------------------------------------------------------------------

TEST(ShapeMoveOps, Tile) {
  // np.tile([[1, 2], [3, 4]], (2, 3)).
  Tensor x = tensorOf(DType::I8, {2, 2}, {1, 2, 3, 4});
  Tensor reps = i64s({2, 3});
  auto r = run(opNode("Tile", 2), {&x, &reps});
  EXPECT_EQ(r[0].type(), (TensorType{DType::I8, {4, 6}}));
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4,
                                                 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
  // test_tile: shapes multiply; a zero repeat empties the axis.
  Tensor big(TensorType{DType::F32, {2, 3, 4, 5}});
  Tensor r4 = i64s({7, 6, 4, 2});
  EXPECT_EQ(run(opNode("Tile", 2), {&big, &r4})[0].type(),
            (TensorType{DType::F32, {14, 18, 16, 10}}));
  Tensor r0 = i64s({0, 2});
  EXPECT_EQ(run(opNode("Tile", 2), {&x, &r0})[0].type(), (TensorType{DType::I8, {0, 4}}));
  x.setUndef(1);
  Tensor r12 = i64s({1, 2});
  r = run(opNode("Tile", 2), {&x, &r12});
  EXPECT_TRUE(r[0].isUndef(1) && r[0].isUndef(3) && !r[0].isUndef(2));
  auto err = [&](std::initializer_list<double> v) {
    Tensor t = i64s(v);
    return inferError(opNode("Tile", 2), {x.type(), t.type()}, {nullptr, &t});
  };
  EXPECT_NE(err({2}).find("one entry per axis"), std::string::npos);
  EXPECT_NE(err({-1, 2}).find("negative"), std::string::npos);
  EXPECT_NE(err({int64_t{1} << 40, int64_t{1} << 40}).find("too large"), std::string::npos);
  EXPECT_EQ(inferError(opNode("Tile", 2), {x.type(), reps.type()}),
            "input 1 (repeats) of Tile must be a constant");
}

// --- Pad --------------------------------------------------------------------

TEST(ShapeMoveOps, PadModes) {
  Tensor x = iota(DType::I32, {2, 3});
  // np.pad(x, ((1, 1), (2, 3)), mode='reflect').
  Tensor pads = i64s({1, 2, 1, 3});
  auto r = run(opNode("Pad", 2, {{"mode", AttrValue::ofString("reflect")}}), {&x, &pads});
  EXPECT_EQ(r[0].type(), (TensorType{DType::I32, {4, 8}}));
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{5, 4, 3, 4, 5, 4, 3, 4, 2, 1, 0, 1, 2, 1, 0, 1,
                                                 5, 4, 3, 4, 5, 4, 3, 4, 2, 1, 0, 1, 2, 1, 0, 1}));
  // np.pad(x, ((0, 1), (1, 0)), mode='edge').
  Tensor pe = i64s({0, 1, 1, 0});
  r = run(opNode("Pad", 2, {{"mode", AttrValue::ofString("edge")}}), {&x, &pe});
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{0, 0, 1, 2, 3, 3, 4, 5, 3, 3, 4, 5}));
  // Reflect past the axis length mirrors again: np.pad(arange(3), (5, 4), 'reflect').
  Tensor v = iota(DType::F64, {3});
  Tensor p54 = i64s({5, 4});
  r = run(opNode("Pad", 2, {{"mode", AttrValue::ofString("reflect")}}), {&v, &p54});
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{1, 0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2}));
  // Constant with constant_value (test_constant_pad shape), negative pads crop.
  Tensor big(TensorType{DType::F32, {1, 3, 4, 5}});
  Tensor pc = i64s({0, 0, 1, 3, 0, 0, 2, 4}), cv = tensorOf(DType::F32, {}, {1.2});
  r = run(opNode("Pad", 3, {{"mode", AttrValue::ofString("constant")}}), {&big, &pc, &cv});
  EXPECT_EQ(r[0].type(), (TensorType{DType::F32, {1, 3, 7, 12}}));
  EXPECT_EQ(r[0].getDouble(0), static_cast<double>(1.2f));
  EXPECT_EQ(r[0].getDouble(12 + 3), 0); // first input element
  Tensor crop = i64s({-1, 1, 0, -2});
  r = run(opNode("Pad", 2), {&x, &crop});
  EXPECT_EQ(r[0].type(), (TensorType{DType::I32, {1, 2}}));
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{0, 3})); // [pad, x[1, 0]]
  // Opset 2: pads and value as attributes (value is a float32 attribute).
  r = run(
      opNode("Pad", 1, attrs({{"pads", ints({0, 1, 0, 0})}, {"value", AttrValue::ofFloat(-7)}})),
      {&x});
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{-7, 0, 1, 2, -7, 3, 4, 5}));
  // Opset 18 wrap mode and axes input.
  Tensor pw = i64s({1, 2}), ax = i64s({-1});
  r = run(opNode("Pad", 4, {{"mode", AttrValue::ofString("wrap")}}), {&x, &pw, nullptr, &ax});
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{2, 0, 1, 2, 0, 1, 5, 3, 4, 5, 3, 4}));
}

TEST(ShapeMoveOps, PadIndeterminate) {
  // An indeterminate constant_value makes exactly the padded elements
  // indeterminate; indeterminate inputs travel with reflect.
  Tensor x = tensorOf(DType::F16, {2}, {1, 2});
  Tensor p = i64s({1, 1}), cv = tensorOf(DType::F16, {}, {0});
  cv.setUndef(0);
  auto r = run(opNode("Pad", 3), {&x, &p, &cv});
  EXPECT_TRUE(r[0].isUndef(0) && !r[0].isUndef(1) && !r[0].isUndef(2) && r[0].isUndef(3));
  x.setUndef(1);
  r = run(opNode("Pad", 2, {{"mode", AttrValue::ofString("reflect")}}), {&x, &p});
  EXPECT_TRUE(r[0].isUndef(0) && !r[0].isUndef(1) && r[0].isUndef(2) && !r[0].isUndef(3));
  // -0 and NaN keep their bits as the padding value.
  Tensor nz = tensorOf(DType::F16, {}, {-0.0});
  r = run(opNode("Pad", 3), {&x, &p, &nz});
  EXPECT_TRUE(std::signbit(r[0].getDouble(3)));
}

TEST(ShapeMoveOps, PadErrors) {
  TensorType x{DType::I32, {2, 3}};
  auto err = [&](std::initializer_list<double> v, AttrMap at = {}) {
    Tensor t = i64s(v);
    return inferError(opNode("Pad", 2, std::move(at)), {x, t.type()}, {nullptr, &t});
  };
  EXPECT_NE(err({1, 1}).find("2 entries per padded axis"), std::string::npos);
  EXPECT_NE(err({0, -4, 0, 0}).find("invalid"), std::string::npos);
  EXPECT_NE(err({0, 0, 0, 0}, {{"mode", AttrValue::ofString("mirror")}}).find("unknown mode"),
            std::string::npos);
  TensorType e{DType::I32, {0, 3}};
  Tensor p = i64s({1, 0, 0, 0});
  EXPECT_NE(inferError(opNode("Pad", 2, {{"mode", AttrValue::ofString("edge")}}), {e, p.type()},
                       {nullptr, &p})
                .find("empty axis"),
            std::string::npos);
  EXPECT_EQ(inferError(opNode("Pad", 2), {x, p.type()}),
            "input 1 (pads) of Pad must be a constant");
  EXPECT_NE(inferError(opNode("Pad", 3), {x, p.type(), TensorType{DType::F32, {}}},
                       {nullptr, &p, nullptr})
                .find("constant_value"),
            std::string::npos);
  EXPECT_NE(
      inferError(opNode("Pad", 1,
                        attrs({{"pads", ints({0, 0, 0, 0})}, {"value", AttrValue::ofFloat(0.5)}})),
                 {x}),
      "");
  EXPECT_NE(inferError(opNode("Pad", 1), {x}).find("needs pads"), std::string::npos);
}

// --- DepthToSpace, SpaceToDepth ---------------------------------------------

TEST(ShapeMoveOps, DepthToSpace) {
  // x = arange(16).reshape(1, 8, 1, 2), blocksize 2 (ONNX's reshape/transpose
  // definitions computed with numpy).
  Tensor x = iota(DType::F32, {1, 8, 1, 2});
  auto r = run(opNode("DepthToSpace", 1, {{"blocksize", AttrValue::ofInt(2)}}), {&x});
  EXPECT_EQ(r[0].type(), (TensorType{DType::F32, {1, 2, 2, 4}}));
  EXPECT_EQ(valuesOf(r[0]),
            (std::vector<double>{0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15}));
  r = run(opNode("DepthToSpace", 1,
                 attrs({{"blocksize", AttrValue::ofInt(2)}, {"mode", AttrValue::ofString("CRD")}})),
          {&x});
  EXPECT_EQ(valuesOf(r[0]),
            (std::vector<double>{0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15}));
  // NHWC: the same op between transposes. Input x transposed to [1, 1, 2, 8].
  Tensor xn =
      tensorOf(DType::F32, {1, 1, 2, 8}, {0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15});
  r = run(
      opNode("DepthToSpace", 1,
             attrs({{"blocksize", AttrValue::ofInt(2)}, {"layout", AttrValue::ofString("NHWC")}})),
      {&xn});
  EXPECT_EQ(r[0].type(), (TensorType{DType::F32, {1, 2, 4, 2}}));
  EXPECT_EQ(valuesOf(r[0]),
            (std::vector<double>{0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15}));
  TensorType bad{DType::F32, {1, 6, 2, 2}};
  EXPECT_NE(inferError(opNode("DepthToSpace", 1, {{"blocksize", AttrValue::ofInt(2)}}), {bad})
                .find("multiple"),
            std::string::npos);
  EXPECT_NE(inferError(opNode("DepthToSpace", 1), {x.type()}).find("blocksize"), std::string::npos);
  EXPECT_NE(inferError(opNode("DepthToSpace", 1,
                              attrs({{"blocksize", AttrValue::ofInt(2)},
                                     {"mode", AttrValue::ofString("XYZ")}})),
                       {x.type()}),
            "");
  EXPECT_NE(inferError(opNode("DepthToSpace", 1, {{"blocksize", AttrValue::ofInt(2)}}),
                       {TensorType{DType::F32, {8, 1, 2}}})
                .find("rank 4"),
            std::string::npos);
}

TEST(ShapeMoveOps, SpaceToDepth) {
  // x = arange(16).reshape(1, 1, 4, 4).
  Tensor x = iota(DType::U64, {1, 1, 4, 4});
  auto r = run(opNode("SpaceToDepth", 1, {{"blocksize", AttrValue::ofInt(2)}}), {&x});
  EXPECT_EQ(r[0].type(), (TensorType{DType::U64, {1, 4, 2, 2}}));
  EXPECT_EQ(valuesOf(r[0]),
            (std::vector<double>{0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15}));
  // It inverts DepthToSpace (DCR).
  Tensor y = iota(DType::I16, {2, 8, 3, 2});
  auto d = run(opNode("DepthToSpace", 1, {{"blocksize", AttrValue::ofInt(2)}}), {&y});
  auto back = run(opNode("SpaceToDepth", 1, {{"blocksize", AttrValue::ofInt(2)}}), {&d[0]});
  EXPECT_EQ(back[0].type(), y.type());
  EXPECT_EQ(valuesOf(back[0]), valuesOf(y));
  // NHWC: arange(32).reshape(1, 2, 4, 4) seen as NHWC [1, 4, 4, 2].
  Tensor xn(TensorType{DType::I32, {1, 4, 4, 2}});
  for (int64_t i = 0; i < 32; ++i)
    xn.setInt(i, (i % 2) * 16 + i / 2);
  r = run(
      opNode("SpaceToDepth", 1,
             attrs({{"blocksize", AttrValue::ofInt(2)}, {"layout", AttrValue::ofString("NHWC")}})),
      {&xn});
  EXPECT_EQ(r[0].type(), (TensorType{DType::I32, {1, 2, 2, 8}}));
  EXPECT_EQ(valuesOf(r[0]),
            (std::vector<double>{0, 16, 1, 17, 4,  20, 5,  21, 2,  18, 3,  19, 6,  22, 7,  23,
                                 8, 24, 9, 25, 12, 28, 13, 29, 10, 26, 11, 27, 14, 30, 15, 31}));
  EXPECT_NE(inferError(opNode("SpaceToDepth", 1, {{"blocksize", AttrValue::ofInt(3)}}), {x.type()})
                .find("multiples"),
            std::string::npos);
  EXPECT_NE(inferError(opNode("SpaceToDepth", 1,
                              attrs({{"blocksize", AttrValue::ofInt(2)},
                                     {"layout", AttrValue::ofString("NCWH")}})),
                       {x.type()})
                .find("layout"),
            std::string::npos);
  EXPECT_NE(inferError(opNode("SpaceToDepth", 1, {{"blocksize", AttrValue::ofInt(0)}}), {x.type()}),
            "");
}

// --- Every dtype ------------------------------------------------------------

TEST(ShapeMoveOps, MoveEveryDtypeBitExactly) {
  for (int d = 0; d < kNumDTypes; ++d) {
    DType dt = static_cast<DType>(d);
    Tensor x(TensorType{dt, {1, 4, 2, 2}});
    for (size_t i = 0; i < x.bytes().size(); ++i)
      x.bytes()[i] = static_cast<uint8_t>(i * 37 + 11);
    if (dt == DType::Bool)
      for (auto &b : x.bytes())
        b &= 1;
    x.setUndef(5);
    uint32_t w = dtypeBytes(dt);
    // Each op paired with the input element each output element must hold.
    auto check = [&](const Tensor &out, std::vector<int64_t> from, const char *what) {
      ASSERT_EQ(out.size(), static_cast<int64_t>(from.size())) << what;
      for (size_t i = 0; i < from.size(); ++i) {
        EXPECT_TRUE(std::equal(out.at(static_cast<int64_t>(i)), out.at(static_cast<int64_t>(i)) + w,
                               x.at(from[i])))
            << what << " " << dtypeName(dt) << " element " << i;
        EXPECT_EQ(out.isUndef(static_cast<int64_t>(i)), from[i] == 5) << what;
      }
    };
    check(run(opNode("Transpose", 1, {{"perm", ints({0, 2, 3, 1})}}), {&x})[0],
          {0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15}, "Transpose");
    Tensor s = i64s({1}), e = i64s({3}), a = i64s({1});
    check(run(opNode("Slice", 4), {&x, &s, &e, &a})[0], {4, 5, 6, 7, 8, 9, 10, 11}, "Slice");
    Tensor idx = tensorOf(DType::I64, {1}, {1});
    check(run(opNode("Gather", 2, {{"axis", AttrValue::ofInt(1)}}), {&x, &idx})[0], {4, 5, 6, 7},
          "Gather");
    auto parts = run(opNode("Split", 1, {{"axis", AttrValue::ofInt(1)}}, 2), {&x});
    check(parts[1], {8, 9, 10, 11, 12, 13, 14, 15}, "Split");
    check(run(opNode("Concat", 2, {{"axis", AttrValue::ofInt(1)}}), {&parts[1], &parts[0]})[0],
          {8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7}, "Concat");
    check(run(opNode("DepthToSpace", 1, {{"blocksize", AttrValue::ofInt(2)}}), {&x})[0],
          {0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15}, "DepthToSpace");
    Tensor reps = i64s({1, 1, 1, 2});
    auto t = run(opNode("Tile", 2), {&x, &reps});
    EXPECT_EQ(t[0].type(), (TensorType{dt, {1, 4, 2, 4}}));
    Tensor pads = i64s({0, 0, 0, 0, 0, 0, 0, 0});
    check(run(opNode("Pad", 2, {{"mode", AttrValue::ofString("edge")}}), {&x, &pads})[0],
          {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, "Pad");
  }
}

TEST(ShapeMoveOps, EmptyOutputsWithHugeDimensionsCostNothing) {
  // A zero-element tensor may have huge dimensions; kernels must not walk or
  // tabulate them.
  Tensor x(TensorType{DType::F32, {0, 3}});
  Tensor reps = i64v({1, int64_t{1} << 40});
  auto r = run(opNode("Tile", 2), {&x, &reps});
  EXPECT_EQ(r[0].type(), (TensorType{DType::F32, {0, 3 * (int64_t{1} << 40)}}));
  Tensor wide(TensorType{DType::I8, {int64_t{1} << 40, 0}});
  Tensor none(TensorType{DType::I64, {0}});
  r = run(opNode("Gather", 2, {{"axis", AttrValue::ofInt(1)}}), {&wide, &none});
  EXPECT_EQ(r[0].type(), (TensorType{DType::I8, {int64_t{1} << 40, 0}}));
  r = run(opNode("Concat", 2, {{"axis", AttrValue::ofInt(1)}}), {&wide, &wide});
  EXPECT_EQ(r[0].size(), 0);
  Tensor pads = i64v({0, int64_t{1} << 40, 0, 0});
  r = run(opNode("Pad", 2), {&x, &pads});
  EXPECT_EQ(r[0].type(), (TensorType{DType::F32, {0, 3 + (int64_t{1} << 40)}}));
  // A non-empty output past the bound is an inference error.
  Tensor one(TensorType{DType::F32, {1, 1}});
  Tensor many = i64v({1, int64_t{1} << 30});
  EXPECT_NE(
      inferError(opNode("Tile", 2), {one.type(), many.type()}, {nullptr, &many}).find("too large"),
      std::string::npos);
}
