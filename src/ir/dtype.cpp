// Element types: names, sizes, exact conversions, shortest printing and
// correctly rounded parsing.
#include "ir/dtype.h"

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

/// Rounds |a| (finite, > 0) to a multiple of 2^max(e - mantBits, minExp),
/// nearest even; exact because the scalings are by powers of two.
double roundToGrid(double a, int mantBits, int minQuantumExp) {
  int e = std::ilogb(a);
  int qe = std::max(e - mantBits, minQuantumExp);
  double r = std::nearbyint(std::ldexp(a, -qe));
  return std::ldexp(r, qe);
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

uint16_t f16FromDouble(double d) {
  uint16_t sign = std::signbit(d) ? 0x8000 : 0;
  if (std::isnan(d)) {
    uint64_t b = std::bit_cast<uint64_t>(d);
    return static_cast<uint16_t>(sign | 0x7e00 | ((b >> 42) & 0x1ff));
  }
  double a = std::fabs(d);
  if (std::isinf(a))
    return sign | 0x7c00;
  if (a == 0)
    return sign;
  double r = roundToGrid(a, 10, -24);
  if (r >= 65536.0)
    return sign | 0x7c00;
  if (r < std::ldexp(1.0, -14)) // subnormal (or rounded up to the smallest normal)
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::ldexp(r, 24)));
  int e = std::ilogb(r);
  auto mant = static_cast<uint16_t>(std::ldexp(r, 10 - e) - 1024.0);
  return static_cast<uint16_t>(sign | ((e + 15) << 10) | mant);
}

double f16ToDouble(uint16_t h) {
  double sign = (h & 0x8000) ? -1.0 : 1.0;
  int e = (h >> 10) & 0x1f;
  int m = h & 0x3ff;
  if (e == 0)
    return sign * std::ldexp(m, -24);
  if (e == 31) {
    if (m == 0)
      return sign * std::numeric_limits<double>::infinity();
    uint64_t b = (h & 0x8000 ? 0x8000000000000000ull : 0) | 0x7ff0000000000000ull |
                 (static_cast<uint64_t>(m) << 42);
    return std::bit_cast<double>(b);
  }
  return sign * std::ldexp(1024 + m, e - 25);
}

uint16_t bf16FromDouble(double d) {
  uint16_t sign = std::signbit(d) ? 0x8000 : 0;
  if (std::isnan(d)) {
    uint64_t b = std::bit_cast<uint64_t>(d);
    return static_cast<uint16_t>(sign | 0x7fc0 | ((b >> 45) & 0x3f));
  }
  double a = std::fabs(d);
  if (std::isinf(a))
    return sign | 0x7f80;
  if (a == 0)
    return sign;
  double r = roundToGrid(a, 7, -133);
  if (r >= std::ldexp(1.0, 128))
    return sign | 0x7f80;
  // r is exactly a bfloat16 value, hence exactly a float.
  return static_cast<uint16_t>(sign | (std::bit_cast<uint32_t>(static_cast<float>(r)) >> 16));
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
