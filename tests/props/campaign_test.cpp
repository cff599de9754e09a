// The campaign library: results independent of the number of jobs, findings
// that replay from their files, deduplication signatures that ignore names,
// the stop flag, and the two shrinkers (recipe and IR) driven by synthetic
// interestingness tests so they are checked independently of any pass bug.

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/pass_manager.h"
#include "passes/reuse_options.h"
#include "props/build_module.h"
#include "props/campaign.h"
#include "props/evaluate.h"
#include "props/generate.h"
#include "props/motif_features.h"
#include "props/reduce.h"
#include "props/shrink.h"

#include "ir/op_library.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

namespace graphvet::props {
namespace {

CampaignOptions smallCampaign(unsigned jobs) {
  CampaignOptions o;
  o.seed = 7;
  o.cases = 150;
  o.jobs = jobs;
  o.confirmWithZ3 = false;
  o.recipeShrinkBudget = 200;
  o.reduceBudget = 100;
  return o;
}

TEST(Campaign, ResultsDoNotDependOnTheNumberOfJobs) {
  CampaignResult one = runCampaign(smallCampaign(1));
  CampaignResult two = runCampaign(smallCampaign(2));
  EXPECT_EQ(one.stats.cases, 150u);
  EXPECT_EQ(two.stats.cases, 150u);
  EXPECT_EQ(one.stats.violations, two.stats.violations);
  EXPECT_EQ(one.stats.tensorMoves, two.stats.tensorMoves);
  EXPECT_EQ(one.stats.deleted, two.stats.deleted);
  EXPECT_EQ(one.stats.rules, two.stats.rules);
  EXPECT_EQ(one.stats.features.counts, two.stats.features.counts);
  ASSERT_EQ(one.findings.size(), two.findings.size());
  for (size_t i = 0; i < one.findings.size(); ++i) {
    EXPECT_EQ(one.findings[i].fileName, two.findings[i].fileName);
    EXPECT_EQ(one.findings[i].original, two.findings[i].original);
  }
  EXPECT_GT(one.stats.tensorMoves, 0u);
  EXPECT_EQ(one.stats.tensorMoves, one.stats.deleted + one.stats.kept);
}

TEST(Campaign, FindingsAreSavedAndReplayToTheSameKind) {
  auto dir = std::filesystem::temp_directory_path() / "graphvet-campaign-test";
  std::filesystem::remove_all(dir);
  CampaignOptions o = smallCampaign(2);
  o.cases = 400;
  o.outDir = dir.string();
  CampaignResult r = runCampaign(o);
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.findings.empty(), r.stats.violations == 0 && r.stats.invalid == 0);
  for (const Finding &f : r.findings) {
    ASSERT_FALSE(f.path.empty());
    std::ifstream in(f.path);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    EXPECT_NE(text.find("# seed: " + std::to_string(f.seed)), std::string::npos);
    EXPECT_NE(text.find("# replay: graphvet check " + f.path), std::string::npos);
    EXPECT_NE(text.find("# verdict: "), std::string::npos);
    ParseResult parsed = parseModule(text);
    ASSERT_TRUE(parsed.module) << f.path;
    EXPECT_LE(f.nodesAfter, f.nodesBefore);
    if (f.kind == "invalid-original")
      continue;
    EvalOptions eo{o.pipeline, o.check};
    eo.check.seed = f.seed;
    EXPECT_TRUE(hasViolationKind(evaluate(*parsed.module, eo).result, f.kind)) << f.path;
  }
  std::filesystem::remove_all(dir);
}

TEST(Campaign, StopFlagEndsTheCampaignCleanly) {
  std::atomic<bool> stop{true};
  CampaignOptions o = smallCampaign(2);
  o.stop = &stop;
  CampaignResult r = runCampaign(o);
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.stats.cases, 0u);
  EXPECT_TRUE(r.findings.empty());
}

TEST(Campaign, StopOnFirstFailureStopsEarlyAndTimesTheFirstFailure) {
  // The override grants reuse of caller memory to the pass only (the oracle
  // judges by the original's options, which do not get it here), so the first
  // copy of a user input the pass deletes is a violation: a dependable failure
  // without a pass bug.
  CampaignOptions o = smallCampaign(1);
  o.cases = 400;
  o.pipeline.optionOverrides[std::string(kInputReuseMemIndexes)] = "0,1,2,3,4,5,6,7";
  o.overridesReachOriginal = false;
  CampaignResult all = runCampaign(o);
  ASSERT_GT(all.stats.violations, 1u);
  ASSERT_TRUE(all.firstFailureCase);
  ASSERT_TRUE(all.firstFailureSeconds);
  EXPECT_GE(*all.firstFailureSeconds, 0.0);
  EXPECT_EQ(all.stats.cases, 400u);

  o.stopOnFirstFailure = true;
  CampaignResult first = runCampaign(o);
  EXPECT_EQ(first.stats.violations, 1u);
  EXPECT_EQ(first.stats.cases, *all.firstFailureCase + 1);
  EXPECT_EQ(first.firstFailureCase, all.firstFailureCase);
  ASSERT_EQ(first.findings.size(), 1u);
  EXPECT_FALSE(first.interrupted);
}

// The module options of a campaign (graphvet fuzz --option) reach the passes
// of typed cases, and a finding's replay command carries every one of them
// (the convert-layout and legalize campaigns run with
// --option convert_layout.target=NHWC / --option legalize.target=npu).
TEST(Campaign, ModuleOptionsReachTypedPassesAndTheReplayCommand) {
  CampaignOptions typed = smallCampaign(1);
  typed.generator = CaseGenerator::Typed;
  typed.cases = 40;
  typed.pipeline.passes = std::vector<std::string>{"fold-constant"};
  CampaignResult plain = runCampaign(typed);
  typed.pipeline.optionOverrides["fold_constant.max_elements"] = "0";
  CampaignResult capped = runCampaign(typed);
  EXPECT_EQ(plain.stats.rules.count("kept:size-cap"), 0u);
  EXPECT_GT(capped.stats.rules["kept:size-cap"], 0u);
  EXPECT_EQ(capped.stats.violations, 0u);

  // A dependable failure (as above), to see a finding's replay command.
  CampaignOptions o = smallCampaign(1);
  o.cases = 400;
  o.pipeline.optionOverrides[std::string(kInputReuseMemIndexes)] = "0,1,2,3,4,5,6,7";
  o.pipeline.optionOverrides["convert_layout.target"] = "NHWC";
  o.overridesReachOriginal = false;
  o.stopOnFirstFailure = true;
  CampaignResult r = runCampaign(o);
  ASSERT_FALSE(r.findings.empty());
  for (const std::string &flag :
       {std::string("--option 'convert_layout.target=NHWC'"),
        "--option '" + std::string(kInputReuseMemIndexes) + "=0,1,2,3,4,5,6,7'"}) {
    EXPECT_NE(r.findings[0].replay.find(flag), std::string::npos) << r.findings[0].replay;
    EXPECT_NE(r.findings[0].fileText().find("# replay: "), std::string::npos);
    EXPECT_NE(r.findings[0].fileText().find(flag), std::string::npos);
  }
}

// `graphvet fuzz --passes all`: every pass of the table alone (a pass that
// needs a target once per target) and the -O3 pipeline take turns, two cases
// each, and the figures are kept per pipeline.
TEST(Campaign, PassesAllRotatesEveryPassAndTheLevelPipeline) {
  std::vector<PipelineOptions> all = everyPipeline(PipelineOptions{});
  std::set<std::string> labels;
  for (const PipelineOptions &p : all)
    labels.insert(pipelineLabel(p));
  EXPECT_EQ(labels.size(), all.size()) << "labels must tell the pipelines apart";
  for (const PassInfo &p : allPasses())
    EXPECT_TRUE(std::any_of(all.begin(), all.end(), [&](const PipelineOptions &o) {
      return o.passes && o.passes->size() == 1 && (*o.passes)[0] == p.name;
    })) << p.name;
  EXPECT_TRUE(labels.count("O3"));
  EXPECT_TRUE(labels.count("O3[convert_layout.target=NHWC]"));
  EXPECT_TRUE(labels.count("legalize[legalize.target=npu]"));
  EXPECT_TRUE(labels.count("partition-graph[partition_graph.target=dsp]"));
  PipelineOptions noCse;
  noCse.disabled = {"cse"};
  EXPECT_EQ(everyPipeline(noCse).size(), all.size() - 1);

  CampaignOptions o = smallCampaign(1);
  o.generator = CaseGenerator::Mixed;
  o.pipelines = all;
  o.cases = 4 * all.size();
  CampaignResult r = runCampaign(o);
  ASSERT_EQ(r.stats.byPipeline.size(), all.size());
  for (const auto &[label, counts] : r.stats.byPipeline)
    EXPECT_EQ(counts.cases, 4u) << label;
  EXPECT_EQ(r.stats.violations, 0u);
}

// A finding of a `--passes all` campaign names the pipeline of its case, and
// its replay and redraw commands run that pipeline.
TEST(Campaign, PassesAllFindingsReplayTheirOwnPipeline) {
  // As above: the reuse override reaches the passes only, so a deleted copy
  // of a user input is a dependable violation of tensor-move-delete.
  PipelineOptions base;
  base.optionOverrides[std::string(kInputReuseMemIndexes)] = "0,1,2,3,4,5,6,7";
  CampaignOptions o = smallCampaign(1);
  o.pipelines = everyPipeline(base);
  o.cases = 600;
  o.overridesReachOriginal = false;
  CampaignResult r = runCampaign(o);
  ASSERT_FALSE(r.findings.empty());
  for (const Finding &f : r.findings) {
    bool tmd = f.pipeline.rfind("tensor-move-delete", 0) == 0;
    EXPECT_TRUE(tmd || f.pipeline.rfind("O3", 0) == 0) << f.pipeline;
    EXPECT_EQ(f.replay.find("--passes tensor-move-delete") != std::string::npos, tmd) << f.replay;
    EXPECT_EQ(f.replay.find("--passes") == std::string::npos, !tmd) << f.replay;
    EXPECT_NE(f.fileText().find("--cases 1" + f.pipelineFlags), std::string::npos);
  }
  uint64_t failing = 0;
  for (const auto &[label, counts] : r.stats.byPipeline)
    if (counts.violations > 0) {
      ++failing;
      EXPECT_TRUE(label.rfind("tensor-move-delete", 0) == 0 || label.rfind("O3", 0) == 0) << label;
    }
  EXPECT_GT(failing, 0u);
}

// A mixed campaign's feature sample holds cases of both generators: the
// A violation message of several lines (not-idempotent quotes the first
// difference) stays in the header's comments: the finding file parses.
TEST(Campaign, MultiLineVerdictStaysAComment) {
  Finding f;
  f.kind = "not-idempotent";
  f.rules = "none";
  f.replay = "graphvet check x.graph --idempotent";
  f.original = "graph main {\n  x = Data() {index = 0}\n  out = NetOutput(x)\n}\n";
  f.result.verdict = oracle::Verdict::Violation;
  f.result.violations.push_back(
      {"not-idempotent", {}, {}, {}, "", "first difference:\n  once:  a\n  twice: b"});
  const std::string text = f.fileText();
  EXPECT_NE(text.find("#   once:  a\n"), std::string::npos) << text;
  ParseResult parsed = parseModule(text);
  EXPECT_TRUE(parsed.module) << text;
}

// memory features and the typed numeric patterns both occur.
TEST(Campaign, MixedCampaignSamplesBothGenerators) {
  CampaignOptions o = smallCampaign(1);
  o.generator = CaseGenerator::Mixed;
  o.cases = 96;
  o.pipeline.passes = std::vector<std::string>{"dce"};
  CampaignResult r = runCampaign(o);
  EXPECT_EQ(r.stats.features.modules, 12u);
  uint64_t typed = 0, memory = 0;
  for (size_t i = 0; i < kNumFeatures; ++i)
    (isTypedFeature(static_cast<Feature>(i)) ? typed : memory) += r.stats.features.counts[i];
  EXPECT_GT(typed, 0u);
  EXPECT_GT(memory, 0u);
  EXPECT_GT(r.stats.features.counts[static_cast<size_t>(Feature::TensorMove)], 0u);
}

TEST(Campaign, StopOnFirstFailureChangesNothingWithoutFailures) {
  CampaignOptions o = smallCampaign(1);
  o.cases = 40;
  CampaignResult plain = runCampaign(o);
  o.stopOnFirstFailure = true;
  CampaignResult stopping = runCampaign(o);
  EXPECT_EQ(plain.stats.cases, stopping.stats.cases);
  EXPECT_EQ(plain.stats.violations, stopping.stats.violations);
  EXPECT_EQ(plain.firstFailureCase.has_value(), plain.stats.violations + plain.stats.invalid > 0);
}

TEST(Evaluate, OptionOverridesApplyToTheOriginalAsInCheck) {
  // The grant lets the pass delete tm, so that w writes input 0 in place: sound
  // only against an original that has the same grant (graphvet check --option).
  ParseResult parsed = parseModule(R"(
options {
  ge.exec.outputReuseInputMemIndexes = "0,1"
}
graph root {
  x = Data() {index = 0}
  y = Data() {index = 1}
  tm = TensorMove(x)
  w = Assign(tm, y)
  out = NetOutput(w)
}
)");
  ASSERT_TRUE(parsed.module);
  EvalOptions eo;
  EXPECT_EQ(
      evaluate(*parsed.module, eo).pipeline.stats.at("tensor-move-delete").counters.at("deleted"),
      0);
  eo.pipeline.optionOverrides["ge.exec.inputReuseMemIndexes"] = "0";
  Evaluation e = evaluate(*parsed.module, eo);
  EXPECT_EQ(e.pipeline.stats.at("tensor-move-delete").counters.at("deleted"), 1);
  EXPECT_EQ(e.result.verdict, oracle::Verdict::Sound) << oracle::formatResult(e.result);
  EXPECT_EQ(e.optimized.options.at("ge.exec.inputReuseMemIndexes"), "0");
}

TEST(Campaign, ShapeSignatureIgnoresNames) {
  const char *a = "graph main {\n  x = Data() {index = 0}\n  t = TensorMove(x)\n"
                  "  o = NetOutput(t)\n}\n";
  const char *b = "graph g2 {\n  input = Data() {index = 0}\n  copy = TensorMove(input)\n"
                  "  result = NetOutput(copy)\n}\n";
  const char *c = "graph main {\n  x = Data() {index = 0}\n  t = Identity(x)\n"
                  "  o = NetOutput(t)\n}\n";
  auto sig = [](const char *text) { return shapeSignature(*parseModule(text).module); };
  EXPECT_EQ(sig(a), sig(b));
  EXPECT_NE(sig(a), sig(c));
}

/// Synthetic interestingness: a TensorMove reads a weight directly.
bool hasTensorMoveOfWeight(const Module &m) {
  for (GraphId g : m.canonicalGraphOrder())
    for (NodeId n : m.graph(g).liveNodes()) {
      const Node &node = m.graph(g).node(n);
      if (isTensorMove(node) && node.inputs[0] &&
          isWeightSource(m.graph(g).node(node.inputs[0]->node)))
        return true;
    }
  return false;
}

uint64_t firstSeedWith(const std::function<bool(const Module &)> &pred) {
  for (uint64_t seed = 1; seed < 5000; ++seed)
    if (pred(generateModule(seed)))
      return seed;
  return 0;
}

TEST(Shrinking, RecipeShrinkingKeepsTheFailureAndGetsSmall) {
  uint64_t seed = firstSeedWith(hasTensorMoveOfWeight);
  ASSERT_NE(seed, 0u);
  rc::Shrinkable<Recipe> start = generateRecipe(seed);
  RecipeShrinkResult r = shrinkRecipe(
      start, [](const Recipe &rec) { return hasTensorMoveOfWeight(buildModule(rec)); }, 5000);
  Module m = buildModule(r.recipe);
  EXPECT_TRUE(hasTensorMoveOfWeight(m));
  EXPECT_FALSE(hasErrors(verifyModule(m)));
  EXPECT_LT(countNodes(m), countNodes(buildModule(start.value())));
  EXPECT_LE(countNodes(m), 5u) << printModule(m);
}

TEST(Shrinking, IrReductionReachesAMinimalGraph) {
  uint64_t seed = firstSeedWith(hasTensorMoveOfWeight);
  ASSERT_NE(seed, 0u);
  Module start = generateModule(seed);
  ReduceResult r = reduceModule(start, hasTensorMoveOfWeight);
  EXPECT_FALSE(r.exhausted);
  EXPECT_TRUE(hasTensorMoveOfWeight(r.module));
  EXPECT_FALSE(hasErrors(verifyModule(r.module)));
  // Weight, TensorMove and the root NetOutput remain.
  EXPECT_EQ(countNodes(r.module), 3u) << printModule(r.module);
  EXPECT_TRUE(r.module.options.empty());
}

TEST(Shrinking, IrReductionInlinesSubgraphs) {
  const char *text = R"(graph main {
  x = Data() {index = 0}
  pc = PartitionedCall(x) {subgraphs = [body]}
  o = NetOutput(pc)
}
graph body {
  a = Data() {_parent_node_index = 0}
  inner = PartitionedCall(a) {subgraphs = [deep]}
  r = NetOutput(inner) {in0._parent_node_index = 0}
}
graph deep {
  d = Data() {_parent_node_index = 0}
  w = Assign(d, d)
  r2 = NetOutput(w) {in0._parent_node_index = 0}
}
)";
  auto hasAssign = [](const Module &m) {
    for (GraphId g : m.canonicalGraphOrder())
      if (!m.graph(g).nodesOfType("Assign").empty())
        return true;
    return false;
  };
  ReduceResult r = reduceModule(*parseModule(text).module, hasAssign);
  EXPECT_TRUE(hasAssign(r.module));
  EXPECT_EQ(r.module.canonicalGraphOrder().size(), 1u) << printModule(r.module);
  EXPECT_FALSE(hasErrors(verifyModule(r.module)));
}

TEST(Shrinking, ReductionRespectsItsBudget) {
  uint64_t seed = firstSeedWith(hasTensorMoveOfWeight);
  ReduceOptions ro;
  ro.maxEvaluations = 3;
  ReduceResult r = reduceModule(generateModule(seed), hasTensorMoveOfWeight, ro);
  EXPECT_TRUE(r.exhausted);
  EXPECT_EQ(r.evaluations, 3u);
  EXPECT_TRUE(hasTensorMoveOfWeight(r.module));
}

} // namespace
} // namespace graphvet::props

namespace graphvet::props {
namespace {

/// The typed generator's campaign: the clean-up passes on typed graphs.
CampaignOptions typedCampaign(unsigned jobs) {
  CampaignOptions o = smallCampaign(jobs);
  o.generator = CaseGenerator::Typed;
  o.pipeline.passes = std::vector<std::string>{"simplify", "fold-constant", "dce", "cse"};
  return o;
}

TEST(Campaign, TypedCampaignsAreSoundAndIndependentOfJobs) {
  CampaignResult one = runCampaign(typedCampaign(1));
  CampaignResult two = runCampaign(typedCampaign(2));
  EXPECT_EQ(one.stats.cases, 150u);
  EXPECT_EQ(one.stats.violations, 0u);
  EXPECT_EQ(one.stats.invalid, 0u);
  EXPECT_EQ(one.stats.rules, two.stats.rules);
  // The passes decided something on these graphs (their remark tags).
  size_t numericTags = 0;
  for (const auto &[tag, count] : one.stats.rules)
    numericTags += count > 0 && tag.find("tensor-move") == std::string::npos;
  EXPECT_GT(numericTags, 0u);
  EXPECT_EQ(one.stats.tensorMoves, 0u); // typed graphs have no TensorMoves
}

TEST(Campaign, MixedCampaignsDrawFromBothGenerators) {
  CampaignOptions o = smallCampaign(1);
  o.generator = CaseGenerator::Mixed;
  CampaignResult r = runCampaign(o);
  EXPECT_EQ(r.stats.cases, 150u);
  EXPECT_GT(r.stats.tensorMoves, 0u); // the even cases are memory graphs
  EXPECT_EQ(parseCaseGenerator("typed"), CaseGenerator::Typed);
  EXPECT_EQ(parseCaseGenerator("bogus"), std::nullopt);
  EXPECT_EQ(caseGeneratorName(CaseGenerator::Mixed), "mixed");
}

bool hasCastOfCast(const Module &m) {
  const Graph &g = m.root();
  for (NodeId n : g.nodesOfType("Cast")) {
    const auto &in = g.node(n).inputs;
    if (!in.empty() && in[0] && g.node(in[0]->node).type == "Cast")
      return true;
  }
  return false;
}

TEST(Shrinking, TypedRecipeShrinkingKeepsTheFailureAndGetsSmall) {
  // A synthetic failure: "the graph has a Cast of a Cast". The typed
  // recipe's shrink tree must keep it while dropping everything else.
  uint64_t seed = 0;
  for (uint64_t s = 1; s < 3000 && seed == 0; ++s)
    if (hasCastOfCast(generateTypedModule(s).module))
      seed = s;
  ASSERT_NE(seed, 0u);
  rc::Shrinkable<TypedRecipe> start = generateTypedRecipe(seed);
  TypedRecipeShrinkResult r = shrinkTypedRecipe(
      start, [](const TypedRecipe &rec) { return hasCastOfCast(buildTypedModule(rec).module); },
      5000);
  Module m = buildTypedModule(r.recipe).module;
  EXPECT_TRUE(hasCastOfCast(m));
  EXPECT_FALSE(hasErrors(verifyModule(m)));
  EXPECT_LE(countNodes(m), countNodes(buildTypedModule(start.value()).module));
  EXPECT_LE(countNodes(m), 8u) << printModule(m);
}

} // namespace
} // namespace graphvet::props
