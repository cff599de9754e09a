// Properties of the generators themselves: every generated graph (and every
// shrink of one) is valid, prints and parses back to the same text, is the
// same for the same seed, and the features the generators promise occur.
#include "prop_support.h"

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "props/build_module.h"
#include "props/features.h"
#include "props/gen_recipe.h"
#include "props/generate.h"
#include "props/motif_features.h"

#include <fmt/format.h>

namespace graphvet::props {
namespace {

std::string diagnosticsText(const Diagnostics &diags) {
  std::string out;
  for (const Diagnostic &d : diags)
    out += d.format("<generated>") + "\n";
  return out;
}

GRAPHVET_PROP(GeneratorProps, GeneratedGraphsPassTheVerifier, 300, ()) {
  Recipe recipe = *genRecipe();
  Module m = buildModule(recipe);
  Diagnostics diags = verifyModule(m);
  RC_LOG() << diagnosticsText(diags);
  RC_ASSERT_FALSE(hasErrors(diags));
}

GRAPHVET_PROP(GeneratorProps, PrintParseRoundTrips, 300, ()) {
  Module m = buildModule(*genRecipe());
  std::string text = printModule(m);
  ParseResult parsed = parseModule(text);
  RC_ASSERT(parsed.module.has_value());
  RC_ASSERT(printModule(*parsed.module) == text);
}

GRAPHVET_PROP(GeneratorProps, DefaultSizeIsSmall, 300, ()) {
  Module m = buildModule(*genRecipe());
  size_t nodes = 0;
  for (GraphId g : m.canonicalGraphOrder())
    nodes += m.graph(g).numLiveNodes();
  RC_ASSERT(nodes >= 2u);
  RC_ASSERT(nodes <= 120u);
}

// Shrinking works on the recipe, so every shrink must build a valid graph
// too: walk the first shrinks of each level, a few levels deep.
GRAPHVET_PROP(GeneratorProps, ShrunkRecipesStayValid, 40, ()) {
  uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  rc::Shrinkable<Recipe> s = generateRecipe(seed);
  for (int depth = 0; depth < 6; ++depth) {
    rc::Seq<rc::Shrinkable<Recipe>> shrinks = s.shrinks();
    std::optional<rc::Shrinkable<Recipe>> next;
    int tried = 0;
    while (auto shrink = shrinks.next()) {
      Module m = buildModule(shrink->value());
      RC_ASSERT_FALSE(hasErrors(verifyModule(m)));
      if (!next)
        next = *shrink;
      if (++tried == 8)
        break;
    }
    if (!next)
      break;
    s = *next;
  }
}

TEST(GeneratorProps, SameSeedSameGraph) {
  for (uint64_t seed = 1; seed <= 100; ++seed)
    EXPECT_EQ(printModule(generateModule(seed)), printModule(generateModule(seed))) << seed;
  EXPECT_NE(printModule(generateModule(1)), printModule(generateModule(2)));
}

// Coverage: over a fixed set of campaign seeds every promised feature occurs.
TEST(GeneratorProps, EveryFeatureOccurs) {
  FeatureCounts counts;
  constexpr uint64_t kCases = 500;
  for (uint64_t seed = 1; seed <= kCases; ++seed)
    counts.add(featuresOf(generateModule(caseSeed(1, seed))));
  std::string table;
  for (size_t i = 0; i < kNumFeatures; ++i)
    table +=
        fmt::format("  {:<32} {:>5}\n", featureName(static_cast<Feature>(i)), counts.counts[i]);
  std::cout << "feature coverage over " << counts.modules << " graphs:\n" << table;
  // The numeric patterns are the typed generator's (typed_props_test.cpp).
  for (Feature f : counts.missing())
    if (!isTypedFeature(f))
      ADD_FAILURE() << "feature never generated: " << featureName(f);
}

// Swarm testing: switching a family off removes its features.
TEST(GeneratorProps, SwarmMaskSwitchesFamiliesOff) {
  GenOptions opts;
  opts.swarm = false;
  opts.families = kAllSwarmBits & ~static_cast<uint32_t>(SwarmBit::Subgraphs) &
                  ~static_cast<uint32_t>(SwarmBit::ControlFlow) &
                  ~static_cast<uint32_t>(SwarmBit::Writers);
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    FeatureSet f = featuresOf(generateModule(seed, opts));
    EXPECT_FALSE(f[static_cast<size_t>(Feature::PartitionedCall)]) << seed;
    EXPECT_FALSE(f[static_cast<size_t>(Feature::While)]) << seed;
    EXPECT_FALSE(f[static_cast<size_t>(Feature::InputMutable)]) << seed;
  }
}

TEST(GeneratorProps, ReuseOptionGrammar) {
  EXPECT_TRUE(parseReuseOption("0,1|2,3", true).wellFormed);
  EXPECT_TRUE(parseReuseOption(" 0 , 1 | 2,3 ", true).wellFormed);
  EXPECT_EQ(parseReuseOption("0,1|2,3", true).indexes, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_FALSE(parseReuseOption("0,x", true).wellFormed);
  EXPECT_FALSE(parseReuseOption("0,0,0", true).wellFormed);
  EXPECT_FALSE(parseReuseOption("0,0|", true).wellFormed);
  EXPECT_FALSE(parseReuseOption("-1,0", true).wellFormed);
  EXPECT_TRUE(parseReuseOption("0, 2", false).wellFormed);
  EXPECT_FALSE(parseReuseOption("0|1", false).wellFormed);
  EXPECT_FALSE(parseReuseOption("0,", false).wellFormed);
}

} // namespace
} // namespace graphvet::props
