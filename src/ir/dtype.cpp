// Element types: names, sizes, exact conversions, shortest printing and
// correctly rounded parsing.
#include "ir/dtype.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cfenv>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace graphvet {
namespace {

struct DTypeRow {
  std::string_view name;
  uint32_t bytes;
};
constexpr std::array<DTypeRow, kNumDTypes> kRows = {{{"bool", 1},
                                                     {"i8", 1},
                                                     {"u8", 1},
                                                     {"i16", 2},
                                                     {"u16", 2},
                                                     {"i32", 4},
                                                     {"u32", 4},
                                                     {"i64", 8},
                                                     {"u64", 8},
                                                     {"f16", 2},
                                                     {"bf16", 2},
                                                     {"f32", 4},
                                                     {"f64", 8}}};

template <typename T> T loadRaw(const uint8_t *p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T> void storeRaw(uint8_t *p, T v) {
  std::memcpy(p, &v, sizeof v);
}

// The canonical quiet NaNs that print as `nan`.
constexpr uint16_t kF16NaN = 0x7e00;
constexpr uint16_t kBF16NaN = 0x7fc0;
constexpr uint32_t kF32NaN = 0x7fc00000u;
constexpr uint64_t kF64NaN = 0x7ff8000000000000ull;

/// Is `d` exactly halfway between two adjacent values of the 16-bit dtype?
bool isMidpoint16(DType t, double d) {
  if (!std::isfinite(d) || d == 0)
    return false;
  int mant = t == DType::F16 ? 10 : 7;
  int minq = t == DType::F16 ? -24 : -133;
  double a = std::fabs(d);
  int qe = std::max(std::ilogb(a) - mant, minq);
  double scaled = std::ldexp(a, -qe); // exact
  return scaled - std::floor(scaled) == 0.5;
}

uint16_t to16(DType t, double d) {
  return t == DType::F16 ? f16FromDouble(d) : bf16FromDouble(d);
}

/// Decimal text to a 16-bit float with one rounding: strtod rounds to double
/// first, which could create a false tie; reading the text rounded down and
/// up tells which side of a tie the exact value lies on.
uint16_t parse16(DType t, const char *text) {
  double nearest = std::strtod(text, nullptr);
  int saved = std::fegetround();
  std::fesetround(FE_DOWNWARD);
  double lo = std::strtod(text, nullptr);
  std::fesetround(FE_UPWARD);
  double hi = std::strtod(text, nullptr);
  std::fesetround(saved);
  if (lo == hi)
    return to16(t, nearest);
  if (isMidpoint16(t, lo)) // exact value lies just above a tie
    return to16(t, hi);
  if (isMidpoint16(t, hi)) // exact value lies just below a tie
    return to16(t, lo);
  return to16(t, nearest);
}

} // namespace

std::string_view dtypeName(DType t) {
  return kRows[static_cast<int>(t)].name;
}

std::optional<DType> parseDType(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (kRows[i].name == name)
      return static_cast<DType>(i);
  return std::nullopt;
}

uint32_t dtypeBytes(DType t) {
  return kRows[static_cast<int>(t)].bytes;
}

bool isFloat(DType t) {
  return t == DType::F16 || t == DType::BF16 || t == DType::F32 || t == DType::F64;
}
double smallestNormal(DType t) {
  switch (t) {
  case DType::F16:
    return 0x1p-14;
  case DType::BF16:
  case DType::F32:
    return 0x1p-126;
  case DType::F64:
    return 0x1p-1022;
  default:
    return 0;
  }
}

int significandBits(DType t) {
  switch (t) {
  case DType::F16:
    return 11;
  case DType::BF16:
    return 8;
  case DType::F32:
    return 24;
  case DType::F64:
    return 53;
  default:
    return 0;
  }
}
bool isInteger(DType t) {
  return t != DType::Bool && !isFloat(t);
}
bool isSignedInteger(DType t) {
  return t == DType::I8 || t == DType::I16 || t == DType::I32 || t == DType::I64;
}

int64_t intMin(DType t) {
  switch (t) {
  case DType::I8:
    return INT8_MIN;
  case DType::I16:
    return INT16_MIN;
  case DType::I32:
    return INT32_MIN;
  case DType::I64:
    return INT64_MIN;
  default:
    return 0;
  }
}

uint64_t intMax(DType t) {
  switch (t) {
  case DType::Bool:
    return 1;
  case DType::I8:
    return INT8_MAX;
  case DType::U8:
    return UINT8_MAX;
  case DType::I16:
    return INT16_MAX;
  case DType::U16:
    return UINT16_MAX;
  case DType::I32:
    return INT32_MAX;
  case DType::U32:
    return UINT32_MAX;
  case DType::I64:
    return INT64_MAX;
  case DType::U64:
    return UINT64_MAX;
  default:
    return 0;
  }
}

namespace {

/// The magnitude bits (exponent and stored mantissa fields) of |d| rounded
/// once, to nearest even, to a binary format of `man` stored mantissa bits
/// and exponent bias `bias`, subnormals kept; the infinity pattern on
/// overflow. `absBits` is a finite, nonzero double's bits without the sign.
/// Straight from the double's bits: the interpreter converts every f16 and
/// bf16 element through here (the ldexp/ilogb route cost ~40 ns each).
uint32_t roundMagnitude(uint64_t absBits, int man, int bias) {
  const int biased = static_cast<int>(absBits >> 52);
  if (biased == 0)
    return 0; // a double subnormal is below half of either format's smallest value
  const uint64_t mant = (absBits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1} << 52);
  const int exp = biased - 1023, minExp = 1 - bias;
  const int shift = 52 - man + (exp < minExp ? minExp - exp : 0);
  if (shift >= 64)
    return 0;
  uint64_t q = mant >> shift;
  const uint64_t rem = mant & ((uint64_t{1} << shift) - 1), half = uint64_t{1} << (shift - 1);
  if (rem > half || (rem == half && (q & 1)))
    ++q;
  // A subnormal that rounds up to 2^man is the smallest normal's encoding;
  // a normal whose mantissa rounds up to 2^(man+1) carries into the exponent.
  const uint32_t bits = exp < minExp ? static_cast<uint32_t>(q)
                                     : (static_cast<uint32_t>(exp + bias) << man) +
                                           static_cast<uint32_t>(q - (uint64_t{1} << man));
  const uint32_t inf = static_cast<uint32_t>(2 * bias + 1) << man;
  return std::min(bits, inf);
}

} // namespace

uint16_t f16FromDouble(double d) {
  const uint64_t b = std::bit_cast<uint64_t>(d);
  const uint16_t sign = static_cast<uint16_t>((b >> 48) & 0x8000);
  const uint64_t abs = b & 0x7fffffffffffffffull;
  if (abs > 0x7ff0000000000000ull) // NaN: quiet, with the top payload bits
    return static_cast<uint16_t>(sign | 0x7e00 | ((b >> 42) & 0x1ff));
  if (abs == 0x7ff0000000000000ull)
    return sign | 0x7c00;
  if (abs == 0)
    return sign;
  return static_cast<uint16_t>(sign | roundMagnitude(abs, 10, 15));
}

double f16ToDouble(uint16_t h) {
  const uint64_t sign = static_cast<uint64_t>(h & 0x8000) << 48;
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e == 0) {
    double v = static_cast<double>(m) * 0x1p-24; // exact
    return sign ? -v : v;
  }
  if (e == 31)
    return std::bit_cast<double>(sign | 0x7ff0000000000000ull | (static_cast<uint64_t>(m) << 42));
  return std::bit_cast<double>(sign | (static_cast<uint64_t>(e - 15 + 1023) << 52) |
                               (static_cast<uint64_t>(m) << 42));
}

uint16_t bf16FromDouble(double d) {
  const uint64_t b = std::bit_cast<uint64_t>(d);
  const uint16_t sign = static_cast<uint16_t>((b >> 48) & 0x8000);
  const uint64_t abs = b & 0x7fffffffffffffffull;
  if (abs > 0x7ff0000000000000ull)
    return static_cast<uint16_t>(sign | 0x7fc0 | ((b >> 45) & 0x3f));
  if (abs == 0x7ff0000000000000ull)
    return sign | 0x7f80;
  if (abs == 0)
    return sign;
  return static_cast<uint16_t>(sign | roundMagnitude(abs, 7, 127));
}

double bf16ToDouble(uint16_t h) {
  return static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(h) << 16));
}

double loadDouble(DType t, const uint8_t *p) {
  switch (t) {
  case DType::F16:
    return f16ToDouble(loadRaw<uint16_t>(p));
  case DType::BF16:
    return bf16ToDouble(loadRaw<uint16_t>(p));
  case DType::F32:
    return static_cast<double>(loadRaw<float>(p));
  case DType::F64:
    return loadRaw<double>(p);
  case DType::Bool:
    return loadBool(p) ? 1.0 : 0.0;
  case DType::U64:
    return static_cast<double>(loadRaw<uint64_t>(p));
  default:
    return static_cast<double>(loadInt(t, p));
  }
}

void storeDouble(DType t, uint8_t *p, double d) {
  switch (t) {
  case DType::F16:
    storeRaw(p, f16FromDouble(d));
    return;
  case DType::BF16:
    storeRaw(p, bf16FromDouble(d));
    return;
  case DType::F32:
    storeRaw(p, static_cast<float>(d));
    return;
  case DType::F64:
    storeRaw(p, d);
    return;
  default:
    // Integer destinations take an in-range integral value (callers decide
    // indeterminacy first); bool is nonzero.
    if (t == DType::Bool)
      storeInt(t, p, d != 0 || std::isnan(d));
    else if (t == DType::U64)
      storeRaw(p, static_cast<uint64_t>(d));
    else
      storeInt(t, p, static_cast<int64_t>(d));
  }
}

int64_t loadInt(DType t, const uint8_t *p) {
  switch (t) {
  case DType::Bool:
    return loadBool(p) ? 1 : 0;
  case DType::I8:
    return loadRaw<int8_t>(p);
  case DType::U8:
    return loadRaw<uint8_t>(p);
  case DType::I16:
    return loadRaw<int16_t>(p);
  case DType::U16:
    return loadRaw<uint16_t>(p);
  case DType::I32:
    return loadRaw<int32_t>(p);
  case DType::U32:
    return loadRaw<uint32_t>(p);
  case DType::I64:
    return loadRaw<int64_t>(p);
  case DType::U64:
    return static_cast<int64_t>(loadRaw<uint64_t>(p));
  default:
    return static_cast<int64_t>(loadDouble(t, p));
  }
}

uint64_t loadUInt(DType t, const uint8_t *p) {
  if (t == DType::U64)
    return loadRaw<uint64_t>(p);
  return static_cast<uint64_t>(loadInt(t, p));
}

void storeInt(DType t, uint8_t *p, int64_t v) {
  auto u = static_cast<uint64_t>(v);
  switch (t) {
  case DType::Bool:
    *p = v != 0;
    return;
  case DType::I8:
  case DType::U8:
    *p = static_cast<uint8_t>(u);
    return;
  case DType::I16:
  case DType::U16:
    storeRaw(p, static_cast<uint16_t>(u));
    return;
  case DType::I32:
  case DType::U32:
    storeRaw(p, static_cast<uint32_t>(u));
    return;
  case DType::I64:
  case DType::U64:
    storeRaw(p, u);
    return;
  default:
    storeDouble(t, p, static_cast<double>(v));
  }
}

bool isNaNElement(DType t, const uint8_t *p) {
  switch (t) {
  case DType::F16:
  case DType::BF16:
  case DType::F32:
  case DType::F64:
    return std::isnan(loadDouble(t, p));
  default:
    return false;
  }
}

bool elementsEqual(DType t, const uint8_t *a, const uint8_t *b) {
  if (isFloat(t) && isNaNElement(t, a) && isNaNElement(t, b))
    return true;
  if (t == DType::Bool)
    return loadBool(a) == loadBool(b);
  return std::memcmp(a, b, dtypeBytes(t)) == 0;
}

uint64_t ulpDistance(DType t, const uint8_t *a, const uint8_t *b) {
  if (!isFloat(t))
    return std::memcmp(a, b, dtypeBytes(t)) == 0 ? 0 : 1;
  bool na = isNaNElement(t, a), nb = isNaNElement(t, b);
  if (na || nb)
    return na && nb ? 0 : UINT64_MAX;
  // Map the sign-magnitude bits onto a monotone integer line.
  auto line = [&](const uint8_t *p) -> int64_t {
    uint64_t bits = 0;
    std::memcpy(&bits, p, dtypeBytes(t));
    unsigned width = dtypeBytes(t) * 8;
    uint64_t signBit = uint64_t{1} << (width - 1);
    auto mag = static_cast<int64_t>(bits & (signBit - 1));
    return (bits & signBit) ? -mag : mag;
  };
  int64_t x = line(a), y = line(b);
  return x > y ? static_cast<uint64_t>(x - y) : static_cast<uint64_t>(y - x);
}

std::optional<std::string> formatElement(DType t, const uint8_t *p) {
  char buf[64];
  if (!isFloat(t)) {
    if (t == DType::Bool)
      return std::string(loadBool(p) ? "1" : "0");
    if (t == DType::U64)
      return std::to_string(loadUInt(t, p));
    return std::to_string(loadInt(t, p));
  }
  double d = loadDouble(t, p);
  if (std::isnan(d)) {
    bool canonical = false;
    switch (t) {
    case DType::F16:
      canonical = loadRaw<uint16_t>(p) == kF16NaN;
      break;
    case DType::BF16:
      canonical = loadRaw<uint16_t>(p) == kBF16NaN;
      break;
    case DType::F32:
      canonical = loadRaw<uint32_t>(p) == kF32NaN;
      break;
    default:
      canonical = loadRaw<uint64_t>(p) == kF64NaN;
    }
    return canonical ? std::optional<std::string>("nan") : std::nullopt;
  }
  if (std::isinf(d))
    return std::string(d > 0 ? "inf" : "-inf");
  if (t == DType::F32) {
    auto r = std::to_chars(buf, buf + sizeof buf, loadRaw<float>(p));
    return std::string(buf, r.ptr);
  }
  if (t == DType::F64) {
    auto r = std::to_chars(buf, buf + sizeof buf, d);
    return std::string(buf, r.ptr);
  }
  // 16-bit floats: the fewest significant digits that read back exactly.
  uint16_t bits = loadRaw<uint16_t>(p);
  for (int prec = 1; prec <= 17; ++prec) {
    auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::general, prec);
    *r.ptr = '\0';
    if (parse16(t, buf) == bits)
      return std::string(buf, r.ptr);
  }
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, r.ptr);
}

bool parseElement(DType t, std::string_view text, uint8_t *p, std::string &error) {
  std::string s(text);
  if (isFloat(t)) {
    if (s == "nan") {
      switch (t) {
      case DType::F16:
        storeRaw(p, kF16NaN);
        break;
      case DType::BF16:
        storeRaw(p, kBF16NaN);
        break;
      case DType::F32:
        storeRaw(p, kF32NaN);
        break;
      default:
        storeRaw(p, kF64NaN);
      }
      return true;
    }
    if (s == "inf" || s == "-inf") {
      storeDouble(t, p, s[0] == '-' ? -INFINITY : INFINITY);
      return true;
    }
    char *end = nullptr;
    errno = 0;
    if (t == DType::F32) {
      float f = std::strtof(s.c_str(), &end);
      storeRaw(p, f);
    } else if (t == DType::F64) {
      double d = std::strtod(s.c_str(), &end);
      storeRaw(p, d);
    } else {
      std::strtod(s.c_str(), &end);
      if (end == s.c_str() + s.size())
        storeRaw(p, parse16(t, s.c_str()));
    }
    if (s.empty() || end != s.c_str() + s.size()) {
      error = "'" + s + "' is not a number";
      return false;
    }
    return true; // overflow rounds to ±inf, underflow to subnormals or ±0 (IEEE)
  }
  if (t == DType::Bool && (s == "true" || s == "false")) {
    *p = s == "true";
    return true;
  }
  bool negative = !s.empty() && s[0] == '-';
  const char *first = s.c_str() + (negative ? 1 : 0);
  const char *last = s.c_str() + s.size();
  uint64_t mag = 0;
  auto r = std::from_chars(first, last, mag);
  if (r.ec == std::errc::invalid_argument || r.ptr != last || first == last) {
    error = "'" + s + "' is not an integer of " + std::string(dtypeName(t));
    return false;
  }
  bool inRange = r.ec == std::errc();
  if (inRange) {
    if (negative)
      inRange = mag <= static_cast<uint64_t>(-(intMin(t) + 1)) + 1 && (mag == 0 || intMin(t) < 0);
    else
      inRange = mag <= intMax(t);
  }
  if (!inRange) {
    error = "'" + s + "' is out of range for " + std::string(dtypeName(t));
    return false;
  }
  storeInt(t, p, negative ? static_cast<int64_t>(0 - mag) : static_cast<int64_t>(mag));
  return true;
}

std::string formatFloatAttr(double d) {
  if (std::isnan(d))
    return "nan";
  if (std::isinf(d))
    return d > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return s;
}

} // namespace graphvet
