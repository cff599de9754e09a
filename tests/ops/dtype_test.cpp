// Element conversions: binary16/bfloat16 rounding, shortest printing that
// reads back bit for bit, correctly rounded parsing, NaN-equality.
#include "ir/dtype.h"
#include "ir/tensor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

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

// The conversions of f16 and bf16 work on the double's bits (they run for
// every element the interpreter stores); the reference here is the
// straightforward ldexp/nearbyint formulation they replaced. Every half and
// bfloat16 value converts back identically, and every double near a value,
// a midpoint (ties to even), the overflow threshold and the subnormal range
// rounds identically.
namespace reference {

double roundToGrid(double a, int mantBits, int minQuantumExp) {
  int e = std::ilogb(a);
  int qe = std::max(e - mantBits, minQuantumExp);
  return std::ldexp(std::nearbyint(std::ldexp(a, -qe)), qe);
}

uint16_t f16FromDouble(double d) {
  uint16_t sign = std::signbit(d) ? 0x8000 : 0;
  if (std::isnan(d))
    return static_cast<uint16_t>(sign | 0x7e00 | ((std::bit_cast<uint64_t>(d) >> 42) & 0x1ff));
  double a = std::fabs(d);
  if (std::isinf(a))
    return sign | 0x7c00;
  if (a == 0)
    return sign;
  double r = roundToGrid(a, 10, -24);
  if (r >= 65536.0)
    return sign | 0x7c00;
  if (r < std::ldexp(1.0, -14))
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::ldexp(r, 24)));
  int e = std::ilogb(r);
  auto mant = static_cast<uint16_t>(std::ldexp(r, 10 - e) - 1024.0);
  return static_cast<uint16_t>(sign | ((e + 15) << 10) | mant);
}

double f16ToDouble(uint16_t h) {
  double sign = (h & 0x8000) ? -1.0 : 1.0;
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e == 0)
    return sign * std::ldexp(m, -24);
  if (e == 31) {
    if (m == 0)
      return sign * std::numeric_limits<double>::infinity();
    return std::bit_cast<double>((h & 0x8000 ? 0x8000000000000000ull : 0) | 0x7ff0000000000000ull |
                                 (static_cast<uint64_t>(m) << 42));
  }
  return sign * std::ldexp(1024 + m, e - 25);
}

uint16_t bf16FromDouble(double d) {
  uint16_t sign = std::signbit(d) ? 0x8000 : 0;
  if (std::isnan(d))
    return static_cast<uint16_t>(sign | 0x7fc0 | ((std::bit_cast<uint64_t>(d) >> 45) & 0x3f));
  double a = std::fabs(d);
  if (std::isinf(a))
    return sign | 0x7f80;
  if (a == 0)
    return sign;
  double r = roundToGrid(a, 7, -133);
  if (r >= std::ldexp(1.0, 128))
    return sign | 0x7f80;
  return static_cast<uint16_t>(sign | (std::bit_cast<uint32_t>(static_cast<float>(r)) >> 16));
}

} // namespace reference

/// Doubles around every value of a 16-bit format: the value, its neighbours
/// one double ulp away, and the midpoint to the next value with its
/// neighbours (decoded by `toDouble`).
template <typename ToDouble> std::vector<double> probes(ToDouble toDouble) {
  std::vector<double> out;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    double v = toDouble(static_cast<uint16_t>(h));
    double next = toDouble(static_cast<uint16_t>((h & 0x7fff) == 0x7fff ? h : h + 1));
    if (!std::isfinite(v))
      continue;
    for (double x : {v, (v + next) / 2})
      for (double y : {x, std::nextafter(x, -INFINITY), std::nextafter(x, INFINITY)})
        out.push_back(y);
  }
  for (double x : {1e-300, -1e-300, 5e-324, 1e300, 65520.0, 65519.99, 3.4e38, 3.4028235e38})
    out.push_back(x);
  return out;
}

TEST(DType, HalfConversionsMatchTheReferenceExactly) {
  for (uint32_t h = 0; h < 0x10000; ++h)
    ASSERT_EQ(std::bit_cast<uint64_t>(f16ToDouble(static_cast<uint16_t>(h))),
              std::bit_cast<uint64_t>(reference::f16ToDouble(static_cast<uint16_t>(h))))
        << std::hex << h;
  std::vector<double> ds = probes(reference::f16ToDouble);
  ASSERT_GT(ds.size(), 300000u);
  for (double d : ds)
    ASSERT_EQ(f16FromDouble(d), reference::f16FromDouble(d)) << std::hexfloat << d;
}

TEST(DType, BFloat16ConversionsMatchTheReferenceExactly) {
  std::vector<double> ds = probes(bf16ToDouble);
  ASSERT_GT(ds.size(), 300000u);
  for (double d : ds)
    ASSERT_EQ(bf16FromDouble(d), reference::bf16FromDouble(d)) << std::hexfloat << d;
  // NaNs keep their sign and top payload bits.
  double nan = std::bit_cast<double>(0xfff4000000000123ull);
  EXPECT_EQ(f16FromDouble(nan), reference::f16FromDouble(nan));
  EXPECT_EQ(bf16FromDouble(nan), reference::bf16FromDouble(nan));
}

} // namespace
} // namespace graphvet
