// Element values of the constants of typed random graphs. An ElementPick
// (typed_recipe.h) becomes an element of any dtype: zero, a small integer,
// an ordinary magnitude, or one of the specials of tensor-semantics.md §7
// (±0, ±inf, NaN, NaNs with payloads, subnormals, the dtype's extremes,
// 2^24 and 2^24 + 1, 65504, 1 ± ulp, ±1; for integers their minimum and
// maximum). Graph inputs get their values from the interpreter's own seeded
// fill (oracle/fill.h), which mixes in the same specials.
#pragma once

#include "ir/tensor.h"
#include "props/typed_recipe.h"

#include <rapidcheck.h>

#include <cstdint>
#include <vector>

namespace graphvet::props {

/// How an ElementPick's `kind` is read (modulo kNumPickKinds).
enum class PickKind : uint8_t { Zero, Small, Ordinary, Special };
inline constexpr unsigned kNumPickKinds = 4;

/// Number of specials of a dtype (bool: 2).
unsigned numSpecials(DType t);
/// Stores special number `k` (modulo numSpecials) of dtype `t` at `p`.
void storeSpecial(DType t, uint8_t *p, unsigned k);

/// Stores the element `pick` names at `p`; `salt` (the element's position)
/// varies ordinary magnitudes when one pick fills many elements.
void storePick(DType t, uint8_t *p, const ElementPick &pick, uint64_t salt);

/// A tensor of `type` whose element i is picks[(offset + i) % picks.size()]
/// (all +0 without picks).
Tensor literalFromPicks(const TensorType &type, const std::vector<ElementPick> &picks,
                        size_t offset);

/// An element pick: zero 10%, small integers 25%, ordinary magnitudes 40%,
/// specials 25%.
rc::Gen<ElementPick> genElementPick();
/// 0-8 picks (the constants of a step or a source cycle through them).
rc::Gen<std::vector<ElementPick>> genElementPicks();

} // namespace graphvet::props
