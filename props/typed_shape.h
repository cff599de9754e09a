// Shapes of typed random graphs: the generator of source shapes (rank 0-4,
// small dimensions, sometimes a 0) and the solvers the builder uses to
// satisfy op constraints: numpy broadcasting partners (multi- and
// unidirectional), factorizations of an element count for Reshape, and the
// element budget that keeps every tensor small enough to run quickly.
#pragma once

#include "ir/tensor.h"
#include "props/typed_recipe.h"

#include <rapidcheck.h>

#include <cstdint>
#include <optional>

namespace graphvet::props {

/// Largest element count of a source the generator or a solver makes.
inline constexpr int64_t kMaxSourceElements = 64;
/// Largest element count of any value of a typed graph (op outputs grow
/// sources by Tile, Expand, Concat, ...).
inline constexpr int64_t kMaxValueElements = 256;
/// Largest rank of any value.
inline constexpr size_t kMaxRank = 6;

/// Product of the dimensions (1 for a scalar).
int64_t elementsOf(const Shape &s);
/// The numpy broadcast of two shapes, or nullopt.
std::optional<Shape> broadcastOf(const Shape &a, const Shape &b);

/// Source shapes: rank 0-4, dimensions 1-4 with an occasional 0, at most
/// kMaxSourceElements elements; shrinks towards lower rank and dimension 1.
rc::Gen<Shape> genShape();

/// A shape that broadcasts with `s` (unidirectional: broadcasts *to* `s`,
/// never widening it), chosen by `ch`: the same shape, a scalar, a suffix,
/// some dimensions set to 1, or (multidirectional only) a new leading axis
/// or a widened size-1 axis, within kMaxValueElements.
Shape broadcastPartner(const Shape &s, bool unidirectional, Choices &ch);

/// A shape of `rank` dimensions holding `n` elements (n = 0: one dimension
/// is 0), its factors spread by `ch`; rank is raised to 1 when n != 1 and
/// rank is 0.
Shape factorShape(int64_t n, size_t rank, Choices &ch);

} // namespace graphvet::props
