// Typed seeded filling with specials.
#include "oracle/fill.h"

#include <cmath>
#include <limits>

namespace graphvet::oracle {
namespace {

uint64_t splitmix(uint64_t &x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/// The float specials of §7, as doubles (each rounded once to the dtype).
double floatSpecial(DType t, uint64_t pick) {
  double maxFinite = t == DType::F16    ? 65504.0
                     : t == DType::BF16 ? 0x1.fep127
                     : t == DType::F32  ? std::numeric_limits<float>::max()
                                        : std::numeric_limits<double>::max();
  double minSub = t == DType::F16    ? 0x1p-24
                  : t == DType::BF16 ? 0x1p-133
                  : t == DType::F32  ? std::numeric_limits<float>::denorm_min()
                                     : std::numeric_limits<double>::denorm_min();
  double ulp1 = t == DType::F16    ? 0x1p-10
                : t == DType::BF16 ? 0x1p-7
                : t == DType::F32  ? 0x1p-23
                                   : 0x1p-52;
  const double specials[] = {0.0,
                             -0.0,
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::quiet_NaN(),
                             minSub,
                             -minSub * 3,
                             maxFinite,
                             -maxFinite,
                             16777216.0,
                             16777217.0,
                             65504.0,
                             1.0 + ulp1,
                             1.0 - ulp1 / 2,
                             1.0,
                             -1.0};
  return specials[pick % std::size(specials)];
}

int64_t intSpecial(DType t, uint64_t pick) {
  const int64_t specials[] = {0,        1,       -1, intMin(t), static_cast<int64_t>(intMax(t)),
                              16777216, 16777217};
  return specials[pick % std::size(specials)];
}

} // namespace

void fillBytes(uint8_t *dst, uint64_t size, uint64_t seed) {
  uint64_t x = seed;
  for (uint64_t i = 0; i < size; i += 8) {
    uint64_t r = splitmix(x);
    for (uint64_t j = 0; j < 8 && i + j < size; ++j)
      dst[i + j] = static_cast<uint8_t>(r >> (8 * j));
  }
}

void fillTyped(uint8_t *dst, uint64_t size, const TensorType &type, uint64_t seed, bool specials) {
  auto count = type.checkedElements();
  if (!count || type.byteSize() != size) {
    fillBytes(dst, size, seed);
    return;
  }
  DType t = type.dtype;
  uint32_t w = dtypeBytes(t);
  uint64_t x = seed;
  for (int64_t i = 0; i < *count; ++i) {
    uint64_t r = splitmix(x);
    uint8_t *p = dst + static_cast<uint64_t>(i) * w;
    bool special = specials && (r & 7) == 0; // one element in eight
    uint64_t bits = r >> 3;
    if (t == DType::Bool) {
      *p = bits & 1;
    } else if (isFloat(t)) {
      double v;
      if (special) {
        v = floatSpecial(t, bits);
      } else {
        // Ordinary magnitudes 2^-6 .. 2^6 with full random mantissas.
        int e = static_cast<int>(bits % 13) - 6;
        double mant = 1.0 + static_cast<double>((bits >> 4) & ((uint64_t{1} << 52) - 1)) * 0x1p-52;
        v = std::ldexp(mant, e) * ((bits >> 60) & 1 ? -1.0 : 1.0);
      }
      storeDouble(t, p, v);
    } else if (special) {
      storeInt(t, p, intSpecial(t, bits));
    } else {
      storeInt(t, p, static_cast<int64_t>(splitmix(x)));
    }
  }
}

} // namespace graphvet::oracle
