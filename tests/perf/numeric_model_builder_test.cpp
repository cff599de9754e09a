// The numeric model builder (issue 30): exact sizes, determinism, a valid
// module, and -O3 doing with each planted pattern what the builder's counts
// say: every pass's counters, the ops left over, the node count after the
// clean-up passes, and the oracle's verdict on small instances.
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "props/evaluate.h"
#include "props/numeric_model_builder.h"

#include <gtest/gtest.h>

#include <string>

namespace graphvet::props {
namespace {

NumericModelOptions sized(size_t nodes, uint64_t seed) {
  NumericModelOptions o;
  o.nodes = nodes;
  o.seed = seed;
  return o;
}

int64_t counter(const PipelineResult &r, const std::string &pass, const std::string &key) {
  auto p = r.stats.find(pass);
  if (p == r.stats.end())
    return 0;
  auto c = p->second.counters.find(key);
  return c == p->second.counters.end() ? 0 : c->second;
}

/// Live nodes of the root graph of `type`, and those whose name contains `part`.
size_t countType(const Module &m, const std::string &type) {
  return m.root().nodesOfType(type).size();
}
size_t countNamed(const Module &m, const std::string &part) {
  size_t n = 0;
  for (NodeId id : m.root().liveNodes())
    n += m.root().node(id).name.find(part) != std::string::npos;
  return n;
}

TEST(NumericModelBuilder, MeetsTheRequestedSizeExactly) {
  for (size_t n : {2u, 29u, 31u, 50u, 77u, 200u, 1000u, 12345u}) {
    NumericModelInfo info;
    Module m = buildNumericModelGraph(sized(n, 5), &info);
    EXPECT_EQ(countNodes(m), n) << "nodes = " << n;
    EXPECT_EQ(info.nodes, n);
  }
  NumericModelInfo tiny;
  Module m = buildNumericModelGraph(sized(0, 1), &tiny);
  EXPECT_EQ(countNodes(m), 2u);
  EXPECT_EQ(tiny.cnnBlocks + tiny.transformerBlocks, 0u);
}

TEST(NumericModelBuilder, IsDeterministicForASeedAndHasBothBlockKinds) {
  std::string a = printModule(buildNumericModelGraph(sized(3000, 42)));
  EXPECT_EQ(a, printModule(buildNumericModelGraph(sized(3000, 42))));
  EXPECT_NE(a, printModule(buildNumericModelGraph(sized(3000, 43))));
  NumericModelInfo info;
  buildNumericModelGraph(sized(3000, 42), &info);
  EXPECT_GT(info.cnnBlocks, 10u);
  EXPECT_GT(info.transformerBlocks, 10u);
}

TEST(NumericModelBuilder, PassesTheVerifierAndRoundTripsThroughText) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    Module m = buildNumericModelGraph(sized(2000, seed));
    Diagnostics d = verifyModule(m);
    EXPECT_FALSE(hasErrors(d)) << "seed " << seed << ": " << (d.empty() ? "" : d[0].message);
    std::string errors;
    auto reparsed = parseOrReport(printModule(m), "numeric.graph", errors);
    ASSERT_TRUE(reparsed) << errors;
    EXPECT_EQ(structuralDifference(m, *reparsed), std::nullopt);
  }
}

// What the clean-up passes of -O3 (all but fuse-ops) do with every planted
// pattern, and the node count the builder predicts.
TEST(NumericModelBuilder, CleanupPassesActOnEveryPlantedPattern) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    for (size_t n : {120u, 600u, 3000u}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " nodes " + std::to_string(n));
      NumericModelInfo info;
      Module m = buildNumericModelGraph(sized(n, seed), &info);
      PipelineOptions o3;
      o3.disabled = {"fuse-ops"};
      PipelineResult r = runPipeline(m, o3);
      ASSERT_TRUE(r.ok);
      EXPECT_TRUE(r.reachedFixpoint);
      auto planted = [](size_t k) { return static_cast<int64_t>(k); };
      EXPECT_EQ(counter(r, "dce", "removed"), planted(info.deadNodes));
      EXPECT_EQ(countNamed(m, "dead_"), 0u);
      EXPECT_EQ(counter(r, "cse", "merged") >= planted(info.duplicatePairs), true);
      EXPECT_EQ(countNamed(m, "sig_b"), 0u);
      EXPECT_EQ(countNamed(m, "sig_a"), info.duplicatePairs);
      EXPECT_EQ(counter(r, "simplify", "rule.cast-pair"), planted(info.castRoundTrips));
      EXPECT_EQ(counter(r, "simplify", "rule.cast-same-type"), planted(info.castNoOps));
      EXPECT_EQ(countType(m, "Cast"), 2 * info.lossyCastChains);
      EXPECT_EQ(counter(r, "simplify", "rule.transpose-pair"), planted(info.transposePairs));
      EXPECT_EQ(counter(r, "simplify", "rule.transpose-identity"), planted(info.transposePairs));
      EXPECT_EQ(countType(m, "Transpose"), info.neededTransposes);
      EXPECT_EQ(counter(r, "fold-constant", "shape_folded"), planted(info.shapeArithmetic));
      EXPECT_EQ(countType(m, "Shape") + countType(m, "Gather") + countType(m, "Concat"), 0u);
      EXPECT_EQ(counter(r, "simplify-inference", "batch_norms"), planted(info.convBnRelu));
      EXPECT_EQ(counter(r, "simplify-inference", "layer_norms"), planted(info.layerNorms));
      EXPECT_EQ(countType(m, "BatchNormalization") + countType(m, "LayerNormalization"), 0u);
      // Each BN's Mul folds backward into its Conv, each channel scale forward.
      EXPECT_EQ(counter(r, "fold-scale-axis", "backward_folds"), planted(info.convBnRelu));
      EXPECT_EQ(counter(r, "fold-scale-axis", "forward_folds"), planted(info.channelScales));
      EXPECT_EQ(countNamed(m, "chan_mul"), 0u);
      EXPECT_EQ(counter(r, "combine-parallel-dense", "groups_combined"),
                planted(info.parallelMatMulGroups));
      EXPECT_EQ(countType(m, "Split"), info.parallelMatMulGroups);
      EXPECT_LE(countNodes(m), info.predictedNodesAfterCleanup());
    }
  }
}

// The whole -O3 pipeline: fuse-ops groups at least every planted fusable
// chain, and the result refines the original (the oracle, as `graphvet
// check` runs it).
TEST(NumericModelBuilder, O3FusesTheChainsAndIsSoundOnSmallModels) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    for (size_t n : {60u, 150u, 400u}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " nodes " + std::to_string(n));
      NumericModelInfo info;
      Module original = buildNumericModelGraph(sized(n, seed), &info);
      EvalOptions eval;
      Evaluation e = evaluate(original, eval);
      ASSERT_TRUE(e.pipeline.ok);
      EXPECT_GE(counter(e.pipeline, "fuse-ops", "groups"),
                static_cast<int64_t>(info.fusableChains));
      EXPECT_LT(e.optimized.root().numLiveNodes(), info.predictedNodesAfterCleanup());
      EXPECT_EQ(e.result.verdict, oracle::Verdict::Sound) << oracle::formatResult(e.result);
    }
  }
}

} // namespace
} // namespace graphvet::props
