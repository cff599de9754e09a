// Element conversions: binary16/bfloat16 rounding, shortest printing that
// reads back bit for bit, correctly rounded parsing, NaN-equality.
#include "ir/dtype.h"
#include "ir/tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace graphvet {
namespace {

TEST(DType, NamesAndSizesRoundTrip) {
  for (int i = 0; i < kNumDTypes; ++i) {
    auto t = static_cast<DType>(i);
    EXPECT_EQ(parseDType(dtypeName(t)), t);
  }
  EXPECT_EQ(dtypeBytes(DType::BF16), 2u);
  EXPECT_EQ(dtypeBytes(DType::U64), 8u);
  EXPECT_FALSE(parseDType("f8").has_value());
}

TEST(DType, HalfRoundsToNearestEvenAndOverflowsToInf) {
  EXPECT_EQ(f16FromDouble(1.0), 0x3c00);
  EXPECT_EQ(f16FromDouble(65504.0), 0x7bff);
  EXPECT_EQ(f16FromDouble(65519.99), 0x7bff) << "below the midpoint to 65536";
  EXPECT_EQ(f16FromDouble(65520.0), 0x7c00) << "the tie goes to even, which overflows";
  EXPECT_EQ(f16FromDouble(-0.0), 0x8000);
  EXPECT_EQ(f16FromDouble(std::ldexp(1.0, -24)), 0x0001) << "smallest subnormal";
  EXPECT_EQ(f16FromDouble(std::ldexp(1.0, -25)), 0x0000) << "tie to even rounds to zero";
  EXPECT_EQ(f16FromDouble(std::ldexp(1.5, -25)), 0x0001);
  EXPECT_EQ(f16FromDouble(1.0 + std::ldexp(1.0, -11)), 0x3c00) << "tie to even";
  EXPECT_EQ(f16FromDouble(1.0 + 3 * std::ldexp(1.0, -11)), 0x3c02) << "tie to even, up";
  for (uint32_t h = 0; h < 0x10000; ++h) {
    double d = f16ToDouble(static_cast<uint16_t>(h));
    if (!std::isnan(d)) {
      ASSERT_EQ(f16FromDouble(d), h) << std::hex << h;
    }
  }
}

TEST(DType, BFloat16MatchesTheTopHalfOfFloat) {
  EXPECT_EQ(bf16FromDouble(1.0), 0x3f80);
  EXPECT_EQ(bf16FromDouble(1.00390625), 0x3f80) << "tie to even";
  EXPECT_EQ(bf16FromDouble(1.01171875), 0x3f82) << "tie to even, up";
  for (uint32_t h = 0; h < 0x10000; ++h) {
    double d = bf16ToDouble(static_cast<uint16_t>(h));
    if (!std::isnan(d)) {
      ASSERT_EQ(bf16FromDouble(d), h) << std::hex << h;
    }
  }
}

TEST(DType, ShortestTextReadsBackBitForBit) {
  for (DType t : {DType::F16, DType::BF16}) {
    for (uint32_t h = 0; h < 0x10000; h += 7) {
      uint8_t bytes[2] = {static_cast<uint8_t>(h), static_cast<uint8_t>(h >> 8)};
      auto text = formatElement(t, bytes);
      if (!text)
        continue; // a NaN with a payload needs hex
      uint8_t back[2] = {};
      std::string err;
      ASSERT_TRUE(parseElement(t, *text, back, err)) << *text << ": " << err;
      ASSERT_EQ(std::memcmp(bytes, back, 2), 0) << dtypeName(t) << " " << *text;
    }
  }
  float f = 0.1f;
  uint8_t b[4];
  std::memcpy(b, &f, 4);
  EXPECT_EQ(formatElement(DType::F32, b), "0.1");
  float negZero = -0.0f;
  std::memcpy(b, &negZero, 4);
  EXPECT_EQ(formatElement(DType::F32, b), "-0");
}

TEST(DType, HalfParsingIsCorrectlyRoundedNearTies) {
  uint8_t b[2];
  std::string err;
  // 1 + 2^-11 is the tie between 1 and 1 + 2^-10; a hair above rounds up.
  ASSERT_TRUE(parseElement(DType::F16, "1.00048828125000000000000000001", b, err));
  EXPECT_EQ(b[0] | b[1] << 8, 0x3c01);
  ASSERT_TRUE(parseElement(DType::F16, "1.00048828125", b, err));
  EXPECT_EQ(b[0] | b[1] << 8, 0x3c00);
  ASSERT_TRUE(parseElement(DType::F16, "1.00048828124999999999999999999", b, err));
  EXPECT_EQ(b[0] | b[1] << 8, 0x3c00);
}

TEST(DType, IntegersAreRangeChecked) {
  uint8_t b[8];
  std::string err;
  EXPECT_TRUE(parseElement(DType::I8, "-128", b, err));
  EXPECT_FALSE(parseElement(DType::I8, "128", b, err));
  EXPECT_FALSE(parseElement(DType::U8, "-1", b, err));
  EXPECT_TRUE(parseElement(DType::U64, "18446744073709551615", b, err));
  EXPECT_EQ(loadUInt(DType::U64, b), UINT64_MAX);
  EXPECT_FALSE(parseElement(DType::I32, "1.5", b, err));
}

TEST(DType, NaNsAreEqualToEachOtherOnly) {
  uint32_t n1 = 0x7fc00000, n2 = 0xffc00001, one = 0x3f800000;
  uint8_t a[4], c[4], o[4];
  std::memcpy(a, &n1, 4);
  std::memcpy(c, &n2, 4);
  std::memcpy(o, &one, 4);
  EXPECT_TRUE(elementsEqual(DType::F32, a, c));
  EXPECT_FALSE(elementsEqual(DType::F32, a, o));
  EXPECT_EQ(ulpDistance(DType::F32, a, c), 0u);
  EXPECT_EQ(ulpDistance(DType::F32, a, o), UINT64_MAX);
  float x = 1.0f, y = std::nextafter(1.0f, 2.0f);
  std::memcpy(a, &x, 4);
  std::memcpy(c, &y, 4);
  EXPECT_EQ(ulpDistance(DType::F32, a, c), 1u);
}

TEST(Tensor, UndefMaskIsPerElementAndLazy) {
  Tensor t(TensorType{DType::F32, {2, 3}});
  EXPECT_EQ(t.size(), 6);
  EXPECT_FALSE(t.anyUndef());
  EXPECT_TRUE(t.undefMask().empty());
  t.setUndef(4);
  EXPECT_TRUE(t.isUndef(4));
  EXPECT_FALSE(t.isUndef(3));
  EXPECT_EQ(t.type().str(), "f32[2, 3]");
  EXPECT_EQ(stridesOf(t.shape()), (std::vector<int64_t>{3, 1}));
}

} // namespace
} // namespace graphvet
