// splitmix64: the small deterministic random source of the model-like graph
// builders (model_builder, numeric_model_builder): tiny, fast and identical
// on every platform, so a seed names the same graph everywhere.
#pragma once

#include <cstdint>

namespace graphvet::props {

class SplitMix {
public:
  explicit SplitMix(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  bool chance(unsigned percent) { return next() % 100 < percent; }
  /// A multiple of 1/16 in [lo16 / 16, hi16 / 16].
  double sixteenths(int lo16, int hi16) {
    return static_cast<double>(lo16 + static_cast<int>(next() % (hi16 - lo16 + 1))) / 16.0;
  }

private:
  uint64_t state_;
};

} // namespace graphvet::props
