// Deterministic draws from the recipe generator.
#include "props/generate.h"

#include "props/build_module.h"

namespace graphvet::props {

rc::Shrinkable<Recipe> generateRecipe(uint64_t seed, const GenOptions &opts, int size) {
  return genRecipe(opts)(rc::Random(seed), size);
}

Module generateModule(uint64_t seed, const GenOptions &opts) {
  return buildModule(generateRecipe(seed, opts).value());
}

} // namespace graphvet::props
