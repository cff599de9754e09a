// Type inference and kernel tests of Cast and CastLike
// (src/ir/ops/logic_cast.cpp, tensor-semantics.md §4). Expected values were
// checked with numpy or taken from ONNX's conformance data (test names given).
#include "kernel_test_util.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace graphvet::testing {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Node castTo(DType t) {
  return opNode("Cast", 1, {{"to", AttrValue::ofIdent(std::string(dtypeName(t)))}});
}

Tensor cast(const Tensor &x, DType to) {
  auto r = run(castTo(to), {&x});
  EXPECT_EQ(r.size(), 1u);
  if (r.empty())
    return Tensor();
  EXPECT_EQ(r[0].dtype(), to);
  EXPECT_EQ(r[0].shape(), x.shape());
  return r[0];
}

uint16_t bits16(const Tensor &t, int64_t i) {
  uint16_t b;
  std::memcpy(&b, t.at(i), 2);
  return b;
}

uint64_t u64At(const Tensor &t, int64_t i) {
  return loadUInt(DType::U64, t.at(i));
}

// --- float -> float --------------------------------------------------------

TEST(LogicCast, ConformanceFloatPairs) {
  // test_cast_FLOAT_to_FLOAT16, test_cast_DOUBLE_to_FLOAT16,
  // test_cast_DOUBLE_to_FLOAT, test_cast_FLOAT16_to_FLOAT (first elements).
  Tensor f =
      tensorOf(DType::F32, {4},
               {0.54881352186203, 0.7151893377304077, 0.6027633547782898, 0.5448831915855408});
  EXPECT_EQ(valuesOf(cast(f, DType::F16)),
            (std::vector<double>{0.548828125, 0.71533203125, 0.6025390625, 0.544921875}));
  Tensor d =
      tensorOf(DType::F64, {4},
               {0.15896958364551972, 0.11037514116430513, 0.6563295894652734, 0.1381829513486138});
  EXPECT_EQ(valuesOf(cast(d, DType::F16)),
            (std::vector<double>{0.158935546875, 0.1103515625, 0.65625, 0.13818359375}));
  Tensor d2 = tensorOf(DType::F64, {2}, {0.31542835092418386, 0.3637107709426226});
  EXPECT_EQ(valuesOf(cast(d2, DType::F32)),
            (std::vector<double>{0.31542834639549255, 0.36371076107025146}));
  Tensor h = tensorOf(DType::F16, {2}, {0.1182861328125, 0.64013671875});
  EXPECT_EQ(valuesOf(cast(h, DType::F32)), (std::vector<double>{0.1182861328125, 0.64013671875}));
  EXPECT_EQ(valuesOf(cast(h, DType::F64)), (std::vector<double>{0.1182861328125, 0.64013671875}));
}

TEST(LogicCast, FloatToBFloat16RoundsToNearestEven) {
  // test_cast_FLOAT_to_BFLOAT16: ONNX 1.12's expected output truncates
  // (0x3ef5 for 0.48033667f = 0x3ef5eeb0); tensor-semantics.md §4 rounds to
  // nearest even: 0x3ef6. Ties go to even: 0x3f808000 -> 0x3f80,
  // 0x3f818000 -> 0x3f82.
  Tensor x(TensorType{DType::F32, {6}});
  const uint32_t in[6] = {0x3ef5eeb0u, 0x3effd6b2u, 0x3ef535b8u,
                          0x3f808000u, 0x3f818000u, 0xff800000u};
  std::memcpy(x.at(0), in, sizeof in);
  Tensor y = cast(x, DType::BF16);
  EXPECT_EQ(bits16(y, 0), 0x3ef6);
  EXPECT_EQ(bits16(y, 1), 0x3f00);
  EXPECT_EQ(bits16(y, 2), 0x3ef5);
  EXPECT_EQ(bits16(y, 3), 0x3f80);
  EXPECT_EQ(bits16(y, 4), 0x3f82);
  EXPECT_EQ(bits16(y, 5), 0xff80);
  // bf16 -> f32 is exact (test_cast_BFLOAT16_to_FLOAT: 0x3ef5 -> 0.478515625).
  Tensor b(TensorType{DType::BF16, {1}}, {0xf5, 0x3e});
  EXPECT_EQ(valuesOf(cast(b, DType::F32)), (std::vector<double>{0.478515625}));
}

TEST(LogicCast, FloatSpecials) {
  // Overflow to ±inf, subnormals kept or flushed by rounding, -0 and NaN kept.
  Tensor f = tensorOf(DType::F32, {8}, {65519, 65520, -70000, 1e-8, 1e-7, -0.0, kNaN, -kInf});
  Tensor h = cast(f, DType::F16);
  auto v = valuesOf(h);
  EXPECT_EQ(v[0], 65504);
  EXPECT_EQ(v[1], kInf);
  EXPECT_EQ(v[2], -kInf);
  EXPECT_EQ(v[3], 0);
  EXPECT_EQ(v[4], 0x1p-23); // 1e-7 -> 2 * 2^-24 (subnormal)
  EXPECT_TRUE(std::signbit(v[5]) && v[5] == 0);
  EXPECT_TRUE(std::isnan(v[6]));
  EXPECT_EQ(v[7], -kInf);
  Tensor d = tensorOf(DType::F64, {3}, {3.4028235e38, 3.5e38, 0x1p-150});
  auto w = valuesOf(cast(d, DType::F32));
  EXPECT_EQ(w[0], static_cast<double>(std::numeric_limits<float>::max()));
  EXPECT_EQ(w[1], kInf);
  EXPECT_EQ(w[2], 0); // exactly half the smallest subnormal: ties to even (0)
}

TEST(LogicCast, RoundTrips) {
  // §4: Cast(Cast(x:f32, f16), f32) is not x; Cast(Cast(x:f16, f32), f16) is.
  Tensor x = tensorOf(DType::F32, {3}, {1.0001, 70000, 1e-8});
  Tensor back = cast(cast(x, DType::F16), DType::F32);
  EXPECT_EQ(valuesOf(back), (std::vector<double>{1, kInf, 0}));
  Tensor h = tensorOf(DType::F16, {4}, {0.1, 65504, 0x1p-24, -3.5});
  Tensor h2 = cast(cast(h, DType::F32), DType::F16);
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(bits16(h2, i), bits16(h, i));
}

// --- integer -> float ------------------------------------------------------

TEST(LogicCast, IntToFloatRoundsOnce) {
  Tensor i = tensorOf(DType::I32, {4}, {16777217, 16777219, -16777217, 2147483647});
  EXPECT_EQ(valuesOf(cast(i, DType::F32)),
            (std::vector<double>{16777216, 16777220, -16777216, 2147483648.0}));
  // f16: 2049 -> 2048 (tie, even), 2051 -> 2052, 65519 -> 65504, 65520 -> inf.
  Tensor j = tensorOf(DType::I32, {5}, {2049, 2051, 65519, 65520, -65520});
  EXPECT_EQ(valuesOf(cast(j, DType::F16)), (std::vector<double>{2048, 2052, 65504, kInf, -kInf}));
  // bf16: 257 -> 256 (tie, even), 259 -> 260.
  Tensor k = tensorOf(DType::I16, {2}, {257, 259});
  EXPECT_EQ(valuesOf(cast(k, DType::BF16)), (std::vector<double>{256, 260}));
}

TEST(LogicCast, Int64AboveTwoTo53RoundsOnce) {
  // 2^62 + 2^38 + 1: through double it would become 2^62 + 2^38, a tie that
  // f32 rounds to 2^62; rounded once it is 2^62 + 2^39.
  Tensor i(TensorType{DType::I64, {4}});
  i.setInt(0, (int64_t{1} << 62) + (int64_t{1} << 38) + 1);
  i.setInt(1, -((int64_t{1} << 62) + (int64_t{1} << 38) + 1));
  i.setInt(2, INT64_MIN);
  i.setInt(3, (int64_t{1} << 53) + 1);
  auto f = valuesOf(cast(i, DType::F32));
  EXPECT_EQ(f[0], 0x1p62 + 0x1p39);
  EXPECT_EQ(f[1], -(0x1p62 + 0x1p39));
  EXPECT_EQ(f[2], -0x1p63);
  EXPECT_EQ(f[3], 0x1p53);
  auto d = valuesOf(cast(i, DType::F64));
  EXPECT_EQ(d[3], 0x1p53); // tie, even
  // bf16 (8 bits): 2^62 + 2^54 + 1 -> 2^62 + 2^55 (via double: tie -> 2^62).
  Tensor b(TensorType{DType::I64, {1}});
  b.setInt(0, (int64_t{1} << 62) + (int64_t{1} << 54) + 1);
  EXPECT_EQ(valuesOf(cast(b, DType::BF16))[0], 0x1p62 + 0x1p55);
  // f16 (11 bits) overflows: 2^40 -> inf.
  Tensor h(TensorType{DType::I64, {1}});
  h.setInt(0, int64_t{1} << 40);
  EXPECT_EQ(valuesOf(cast(h, DType::F16))[0], kInf);
}

TEST(LogicCast, UInt64ToFloat) {
  Tensor u(TensorType{DType::U64, {3}});
  storeInt(DType::U64, u.at(0), -1); // 2^64 - 1
  storeInt(DType::U64, u.at(1),
           static_cast<int64_t>((uint64_t{1} << 63) + (uint64_t{1} << 39) + 1));
  storeInt(DType::U64, u.at(2), 0);
  auto f = valuesOf(cast(u, DType::F32));
  EXPECT_EQ(f[0], 0x1p64);
  EXPECT_EQ(f[1], 0x1p63 + 0x1p40);
  EXPECT_EQ(f[2], 0);
  EXPECT_FALSE(std::signbit(f[2]));
  EXPECT_EQ(valuesOf(cast(u, DType::BF16))[0], 0x1p64);
  EXPECT_EQ(valuesOf(cast(u, DType::F64))[0], 0x1p64);
}

// --- float -> integer ------------------------------------------------------

TEST(LogicCast, FloatToIntTruncatesOrIsIndeterminate) {
  Tensor x =
      tensorOf(DType::F32, {10}, {2.7, -2.7, 127.9, 128, -128.9, -129, kNaN, kInf, -0.5, -0.0});
  Tensor y = cast(x, DType::I8);
  EXPECT_EQ(y.getInt(0), 2);
  EXPECT_EQ(y.getInt(1), -2);
  EXPECT_EQ(y.getInt(2), 127);
  EXPECT_TRUE(y.isUndef(3));
  EXPECT_EQ(y.getInt(4), -128);
  EXPECT_TRUE(y.isUndef(5));
  EXPECT_TRUE(y.isUndef(6));
  EXPECT_TRUE(y.isUndef(7));
  EXPECT_EQ(y.getInt(8), 0);
  EXPECT_EQ(y.getInt(9), 0);
  for (int64_t i : {0, 1, 2, 4, 8, 9})
    EXPECT_FALSE(y.isUndef(i)) << i;
  // Unsigned: -0.5 truncates to 0 (in range), -1 is out of range.
  Tensor u = cast(tensorOf(DType::F64, {4}, {-0.5, -1, 255.99, 256}), DType::U8);
  EXPECT_EQ(u.getInt(0), 0);
  EXPECT_TRUE(u.isUndef(1));
  EXPECT_EQ(u.getInt(2), 255);
  EXPECT_TRUE(u.isUndef(3));
}

TEST(LogicCast, FloatToSixtyFourBitBounds) {
  Tensor x = tensorOf(DType::F64, {4}, {0x1p63, -0x1p63, 0x1p64, 0x1p64 - 2048});
  Tensor i = cast(x, DType::I64);
  EXPECT_TRUE(i.isUndef(0));
  EXPECT_EQ(i.getInt(1), INT64_MIN);
  EXPECT_TRUE(i.isUndef(2));
  EXPECT_TRUE(i.isUndef(3));
  Tensor u = cast(x, DType::U64);
  EXPECT_EQ(u64At(u, 0), uint64_t{1} << 63);
  EXPECT_TRUE(u.isUndef(1));
  EXPECT_TRUE(u.isUndef(2));
  EXPECT_EQ(u64At(u, 3), ~uint64_t{0} - 2047);
  // f16 65504 fits u16 but not i16; bf16 -> i32 of 2^31 is out of range.
  Tensor h = tensorOf(DType::F16, {1}, {65504});
  EXPECT_EQ(cast(h, DType::U16).getInt(0), 65504);
  EXPECT_TRUE(cast(h, DType::I16).isUndef(0));
  Tensor b = tensorOf(DType::BF16, {2}, {0x1p31, -0x1p31});
  Tensor bi = cast(b, DType::I32);
  EXPECT_TRUE(bi.isUndef(0));
  EXPECT_EQ(bi.getInt(1), INT32_MIN);
}

// --- integer -> integer, bool ----------------------------------------------

TEST(LogicCast, IntToIntWraps) {
  Tensor x = tensorOf(DType::I32, {3}, {300, -1, -129});
  EXPECT_EQ(valuesOf(cast(x, DType::U8)), (std::vector<double>{44, 255, 127}));
  EXPECT_EQ(valuesOf(cast(x, DType::I8)), (std::vector<double>{44, -1, 127}));
  EXPECT_EQ(valuesOf(cast(x, DType::U32)), (std::vector<double>{300, 4294967295.0, 4294967167.0}));
  Tensor u(TensorType{DType::U64, {1}});
  storeInt(DType::U64, u.at(0), -1);
  EXPECT_EQ(cast(u, DType::I64).getInt(0), -1);
  EXPECT_EQ(cast(u, DType::I16).getInt(0), -1);
  EXPECT_EQ(cast(u, DType::U16).getInt(0), 65535);
}

TEST(LogicCast, ToAndFromBool) {
  Tensor f = tensorOf(DType::F32, {5}, {kNaN, -0.0, 0.0, 0.5, -kInf});
  EXPECT_EQ(valuesOf(cast(f, DType::Bool)), (std::vector<double>{1, 0, 0, 1, 1}));
  Tensor i = tensorOf(DType::I32, {3}, {-3, 0, 256});
  EXPECT_EQ(valuesOf(cast(i, DType::Bool)), (std::vector<double>{1, 0, 1}));
  Tensor u(TensorType{DType::U64, {1}});
  storeInt(DType::U64, u.at(0), INT64_MIN); // 2^63: nonzero
  EXPECT_EQ(cast(u, DType::Bool).getInt(0), 1);
  Tensor b(TensorType{DType::Bool, {3}}, {1, 0, 7}); // any nonzero byte is true
  EXPECT_EQ(valuesOf(cast(b, DType::F32)), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(valuesOf(cast(b, DType::BF16)), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(valuesOf(cast(b, DType::I64)), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(valuesOf(cast(b, DType::U8)), (std::vector<double>{1, 0, 1}));
}

TEST(LogicCast, SameDTypeKeepsBits) {
  Tensor x(TensorType{DType::F32, {1}});
  uint32_t payload = 0x7fa00001u; // a signalling NaN with a payload
  std::memcpy(x.at(0), &payload, 4);
  Tensor y = cast(x, DType::F32);
  uint32_t out;
  std::memcpy(&out, y.at(0), 4);
  EXPECT_EQ(out, payload);
}

TEST(LogicCast, IndeterminatePropagates) {
  Tensor x = tensorOf(DType::F32, {3}, {1, 2, 3});
  x.setUndef(1);
  for (DType t : {DType::F16, DType::I32, DType::Bool, DType::F32}) {
    Tensor y = cast(x, t);
    EXPECT_FALSE(y.isUndef(0)) << dtypeName(t);
    EXPECT_TRUE(y.isUndef(1)) << dtypeName(t);
    EXPECT_FALSE(y.isUndef(2)) << dtypeName(t);
  }
}

// --- CastLike --------------------------------------------------------------

TEST(LogicCastLike, TakesTheDTypeOfInputOne) {
  // test_castlike_FLOAT_to_FLOAT16 (first element) and its target's values
  // and indeterminacy are unread.
  Tensor x = tensorOf(DType::F32, {2}, {0.54881352186203, 300});
  Tensor like = tensorOf(DType::F16, {3}, {0, 0, 0});
  like.setUndef(0);
  auto r = run(opNode("CastLike", 2), {&x, &like});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].type(), (TensorType{DType::F16, {2}}));
  EXPECT_EQ(valuesOf(r[0]), (std::vector<double>{0.548828125, 300}));
  EXPECT_FALSE(r[0].anyUndef());
  Tensor likeI = tensorOf(DType::U8, {}, {0});
  r = run(opNode("CastLike", 2), {&x, &likeI});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].type(), (TensorType{DType::U8, {2}}));
  EXPECT_EQ(r[0].getInt(0), 0);
  EXPECT_TRUE(r[0].isUndef(1)); // 300 is out of u8's range
}

TEST(LogicCast, InferenceErrors) {
  EXPECT_NE(inferError(opNode("Cast", 1), {TensorType{DType::F32, {2}}}).find("attribute 'to'"),
            std::string::npos);
  Node bad = opNode("Cast", 1, {{"to", AttrValue::ofIdent("f8")}});
  EXPECT_NE(inferError(bad, {TensorType{DType::F32, {2}}}).find("must name a dtype"),
            std::string::npos);
  EXPECT_EQ(inferError(castTo(DType::I8), {TensorType{DType::F32, {2}}}), "");
  // `to` as a string also names a dtype.
  Node str = opNode("Cast", 1, {{"to", AttrValue::ofString("bf16")}});
  std::string error;
  std::vector<std::optional<TensorType>> in = {TensorType{DType::F32, {2, 1}}};
  std::vector<const Tensor *> consts = {nullptr};
  auto t = inferNodeTypes(str, in, consts, error);
  ASSERT_TRUE(t.has_value()) << error;
  EXPECT_EQ((*t)[0], (TensorType{DType::BF16, {2, 1}}));
  EXPECT_NE(
      inferError(opNode("Cast", 2), {TensorType{DType::F32, {2}}, TensorType{DType::F32, {2}}})
          .find("1 input"),
      std::string::npos);
  EXPECT_NE(inferError(opNode("CastLike", 1), {TensorType{DType::F32, {2}}}).find("2 inputs"),
            std::string::npos);
  EXPECT_NE(inferError(opNode("CastLike", 2), {TensorType{DType::F32, {2}}, std::nullopt})
                .find("must be connected"),
            std::string::npos);
}

} // namespace
} // namespace graphvet::testing
