// Element picks to element bytes, with the specials of tensor-semantics.md §7.
#include "props/typed_values.h"

#include "props/gen_util.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace graphvet::props {
namespace {

uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// Specials of a float dtype that are not NaN, as exact doubles (each is
/// stored with one rounding, so 2^24 + 1 stays itself in f64 only).
std::vector<double> floatSpecials(DType t) {
  const double maxFinite = t == DType::F16    ? 65504.0
                           : t == DType::BF16 ? 0x1.fep127
                           : t == DType::F32  ? std::numeric_limits<float>::max()
                                              : std::numeric_limits<double>::max();
  const double minSub = t == DType::F16    ? 0x1p-24
                        : t == DType::BF16 ? 0x1p-133
                        : t == DType::F32  ? std::numeric_limits<float>::denorm_min()
                                           : std::numeric_limits<double>::denorm_min();
  const double minNormal = t == DType::F16    ? 0x1p-14
                           : t == DType::BF16 ? 0x1p-126
                           : t == DType::F32  ? std::numeric_limits<float>::min()
                                              : std::numeric_limits<double>::min();
  const double ulp1 = t == DType::F16    ? 0x1p-10
                      : t == DType::BF16 ? 0x1p-7
                      : t == DType::F32  ? 0x1p-23
                                         : 0x1p-52;
  const double inf = std::numeric_limits<double>::infinity();
  return {-0.0,
          inf,
          -inf,
          minSub,
          -3 * minSub,
          minNormal - minSub, // the largest subnormal
          minNormal,
          maxFinite,
          -maxFinite,
          16777216.0,
          16777217.0,
          65504.0,
          1.0 + ulp1,
          1.0 - ulp1 / 2,
          1.0,
          -1.0,
          0.1,
          1e-8,
          70000.0};
}

/// NaNs of a float dtype as raw bits: the canonical quiet NaN, a payload,
/// a negative NaN and a signaling NaN.
std::vector<uint64_t> nanBits(DType t) {
  switch (t) {
  case DType::F16:
    return {0x7e00, 0x7e01, 0xfe00, 0x7c01};
  case DType::BF16:
    return {0x7fc0, 0x7fc1, 0xffc0, 0x7f81};
  case DType::F32:
    return {0x7fc00000, 0x7fc00001, 0xffc00000, 0x7f800001};
  default:
    return {0x7ff8000000000000, 0x7ff8000000000001, 0xfff8000000000000, 0x7ff0000000000001};
  }
}

std::vector<int64_t> intSpecials(DType t) {
  const int64_t lo = intMin(t), hi = static_cast<int64_t>(intMax(t));
  return {lo, hi, lo + 1, hi - 1, -1, 1, 16777216, 16777217, 65504, int64_t{1} << 31};
}

} // namespace

unsigned numSpecials(DType t) {
  if (t == DType::Bool)
    return 2;
  if (isFloat(t))
    return static_cast<unsigned>(floatSpecials(t).size() + nanBits(t).size());
  return static_cast<unsigned>(intSpecials(t).size());
}

void storeSpecial(DType t, uint8_t *p, unsigned k) {
  k %= numSpecials(t);
  if (t == DType::Bool) {
    storeInt(t, p, k);
  } else if (isFloat(t)) {
    std::vector<double> values = floatSpecials(t);
    if (k < values.size()) {
      storeDouble(t, p, values[k]);
    } else {
      uint64_t bits = nanBits(t)[k - values.size()];
      std::memcpy(p, &bits, dtypeBytes(t)); // little-endian host, as dtype.h assumes
    }
  } else {
    storeInt(t, p, intSpecials(t)[k]);
  }
}

void storePick(DType t, uint8_t *p, const ElementPick &pick, uint64_t salt) {
  switch (static_cast<PickKind>(pick.kind % kNumPickKinds)) {
  case PickKind::Zero:
    if (isFloat(t))
      storeDouble(t, p, 0.0);
    else
      storeInt(t, p, 0);
    return;
  case PickKind::Small: {
    if (isFloat(t)) {
      storeDouble(t, p, (static_cast<double>(pick.bits % 13) - 6) / 2); // -3 .. 3 by halves
      return;
    }
    int64_t v = static_cast<int64_t>(pick.bits % 7) - 3;
    storeInt(t, p, isSignedInteger(t) ? v : (v < 0 ? -v : v));
    return;
  }
  case PickKind::Ordinary: {
    uint64_t r = mix(pick.bits ^ mix(salt));
    if (t == DType::Bool) {
      storeInt(t, p, r & 1);
    } else if (isFloat(t)) {
      // Magnitudes 2^-6 .. 2^6 with random mantissas, as the input fill.
      int e = static_cast<int>(r % 13) - 6;
      double mant = 1.0 + static_cast<double>((r >> 4) & ((uint64_t{1} << 52) - 1)) * 0x1p-52;
      storeDouble(t, p, std::ldexp(mant, e) * ((r >> 60) & 1 ? -1.0 : 1.0));
    } else {
      storeInt(t, p, static_cast<int64_t>(r));
    }
    return;
  }
  case PickKind::Special:
    storeSpecial(t, p, pick.bits);
    return;
  }
}

Tensor literalFromPicks(const TensorType &type, const std::vector<ElementPick> &picks,
                        size_t offset) {
  Tensor t(type);
  if (picks.empty())
    return t;
  for (int64_t i = 0; i < t.size(); ++i)
    storePick(type.dtype, t.at(i), picks[(offset + static_cast<size_t>(i)) % picks.size()],
              static_cast<uint64_t>(i));
  return t;
}

rc::Gen<ElementPick> genElementPick() {
  auto kind = gen::weighted<uint8_t>({{10, static_cast<uint8_t>(PickKind::Zero)},
                                      {25, static_cast<uint8_t>(PickKind::Small)},
                                      {40, static_cast<uint8_t>(PickKind::Ordinary)},
                                      {25, static_cast<uint8_t>(PickKind::Special)}});
  return rc::gen::apply(
      [](uint8_t k, uint32_t bits) {
        return ElementPick{k, bits};
      },
      kind, gen::genBelow<uint32_t>(UINT32_MAX));
}

rc::Gen<std::vector<ElementPick>> genElementPicks() {
  return gen::genVector(genElementPick(), 0, 8);
}

} // namespace graphvet::props
