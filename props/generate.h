// The deterministic, non-RapidCheck entry to the generators: the campaign,
// benchmarks and libFuzzer seeds draw case `seed` with a fixed rc::Random and
// size, so they and the properties share one generator.
#pragma once

#include "ir/graph.h"
#include "props/gen_recipe.h"

#include <cstdint>

namespace graphvet::props {

/// The size every deterministic draw uses (RapidCheck's nominal size).
inline constexpr int kCampaignSize = 100;

/// The recipe of case `seed`, with its shrink tree.
rc::Shrinkable<Recipe> generateRecipe(uint64_t seed, const GenOptions &opts = {},
                                      int size = kCampaignSize);
/// buildModule(generateRecipe(seed, opts).value()).
Module generateModule(uint64_t seed, const GenOptions &opts = {});

/// The seed of case `index` of a campaign started with `campaignSeed`: plain
/// addition, so `graphvet fuzz --seed <case seed> --cases 1` replays one case.
inline uint64_t caseSeed(uint64_t campaignSeed, uint64_t index) {
  return campaignSeed + index;
}

} // namespace graphvet::props
