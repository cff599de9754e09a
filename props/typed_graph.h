// The RapidCheck generator of typed random graphs and its deterministic
// entry points. genTypedRecipe composes the concept generators (sources from
// typed_dtype.h, typed_shape.h and typed_values.h; op steps of choice bytes
// that typed_build.h interprets); generateTypedModule draws case `seed` at
// `size` without RapidCheck's runner, for tools (a later `graphvet fuzz`)
// that want the same graphs the properties see.
#pragma once

#include "ir/graph.h"
#include "props/typed_build.h"
#include "props/typed_recipe.h"

#include <rapidcheck.h>

#include <cstdint>

namespace graphvet::props {

struct TypedGenOptions {
  /// Sources (graph inputs and constants) before the first step.
  unsigned minSources = 1, maxSources = 4;
  /// Op steps (each adds one catalogue op, plus any adapters and
  /// constants it needs); the upper end scales with the size.
  unsigned minSteps = 1, maxSteps = 24;
};

rc::Gen<TypedSource> genTypedSource();
rc::Gen<TypedStep> genTypedStep();
rc::Gen<TypedRecipe> genTypedRecipe(const TypedGenOptions &opts = {});

/// The size of deterministic draws (RapidCheck's nominal size).
inline constexpr int kTypedDefaultSize = 100;

/// The recipe of case `seed` at `size`, with its shrink tree.
rc::Shrinkable<TypedRecipe> generateTypedRecipe(uint64_t seed, int size = kTypedDefaultSize,
                                                const TypedGenOptions &opts = {});
/// The graph of case `seed` at `size`: buildTypedModule of that recipe.
TypedModule generateTypedModule(uint64_t seed, int size = kTypedDefaultSize,
                                const TypedGenOptions &opts = {});

} // namespace graphvet::props
