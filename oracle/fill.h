// Seeded initial values of the check's experiments (tensor-semantics.md §7):
// every element a value of its dtype, mostly ordinary magnitudes, with the
// dtype's specials mixed in (±0, ±inf, NaN, subnormals, extremes, 2^24,
// 65504, 1 ± ulp) so that a rewrite that is only right for "nice" numbers
// is caught.
#pragma once

#include "ir/tensor.h"

#include <cstdint>

namespace graphvet::oracle {

/// Fills `size` bytes at `dst` for a buffer of `type` from `seed`. When the
/// type does not describe exactly `size` bytes the bytes are seeded raw.
/// Without `specials` every element is an ordinary value (a real model's
/// inputs: one special in eight pixels turns every activation into NaN).
void fillTyped(uint8_t *dst, uint64_t size, const TensorType &type, uint64_t seed,
               bool specials = true);

/// Seeded raw bytes (the stream the placeholder arithmetic also uses).
void fillBytes(uint8_t *dst, uint64_t size, uint64_t seed);

} // namespace graphvet::oracle
