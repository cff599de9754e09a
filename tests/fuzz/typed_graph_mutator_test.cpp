// Unit tests of midend_fuzzer's pieces: the pipeline header and choice, the
// input filter, the check on the seed corpus, and the typed mutator (its
// results parse, verify and type-check, are canonical, differ from their
// input, are deterministic; each mutation kind does what it says; crossover
// and the fresh-graph fallback give well-typed graphs).
#include "fuzz/midend_input.h"
#include "fuzz/typed_graph_mutator.h"
#include "ir/op_library.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/types.h"
#include "ir/verifier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace graphvet::fuzz {
namespace {

constexpr size_t kMaxSize = 8192;

std::vector<std::string> midendSeeds() {
  std::vector<std::filesystem::path> files;
  for (const auto &e :
       std::filesystem::directory_iterator(std::string(GRAPHVET_SOURCE_DIR) + "/fuzz/seeds/midend"))
    if (e.path().extension() == ".graph")
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<std::string> texts;
  for (const auto &f : files) {
    std::ifstream in(f);
    texts.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return texts;
}

/// Independent of the mutator's own filter: parse, verifier, type inference.
::testing::AssertionResult wellTyped(const std::string &text) {
  ParseResult r = parseModule(text);
  if (!r.module)
    return ::testing::AssertionFailure() << "does not parse:\n" << text;
  if (hasErrors(verifyModule(*r.module)))
    return ::testing::AssertionFailure() << "verifier errors:\n" << text;
  Diagnostics diags;
  inferModuleTypes(*r.module, diags);
  if (hasErrors(diags))
    return ::testing::AssertionFailure() << diags.front().format("mutated") << "\n" << text;
  if (!pipelineHeader(text))
    return ::testing::AssertionFailure() << "no pipeline header:\n" << text;
  if (printModule(*r.module) != withoutPipelineHeader(text))
    return ::testing::AssertionFailure() << "not canonical:\n" << text;
  return ::testing::AssertionSuccess();
}

std::string canonical(std::string_view text) {
  ParseResult r = parseModule(text);
  return r.module ? withPipelineHeader(printModule(*r.module), choosePipeline(text)) : "";
}

size_t countType(const Module &m, const std::string &type) {
  size_t n = 0;
  for (GraphId g : m.canonicalGraphOrder())
    n += m.graph(g).nodesOfType(type).size();
  return n;
}

size_t countNodes(const Module &m) {
  size_t n = 0;
  for (GraphId g : m.canonicalGraphOrder())
    n += m.graph(g).numLiveNodes();
  return n;
}

MidendCase caseOf(const std::string &text) {
  ParseResult r = parseModule(text);
  EXPECT_TRUE(r.module.has_value());
  return MidendCase{r.module ? std::move(*r.module) : Module(), choosePipeline(text)};
}

TEST(MidendInput, HeaderNamesTheChoice) {
  EXPECT_EQ(pipelineHeader("# passes: cse\ngraph g {}\n"), "cse");
  EXPECT_EQ(pipelineHeader("# passes: -O2\n"), "-O2");
  EXPECT_EQ(pipelineHeader("# passes: no-such-pass\n"), std::nullopt);
  EXPECT_EQ(pipelineHeader("graph g {}\n# passes: cse\n"), std::nullopt);
  EXPECT_EQ(choosePipeline("# passes: fuse-ops\nrest"), "fuse-ops");
  // Without a header the bytes decide, the same way every time.
  std::string text = "graph g {\n  x = Data() {index = 0}\n  out = NetOutput(x)\n}\n";
  std::string a = choosePipeline(text);
  EXPECT_EQ(choosePipeline(text), a);
  auto choices = midendPipelineChoices();
  EXPECT_NE(std::find(choices.begin(), choices.end(), a), choices.end());
  EXPECT_EQ(withPipelineHeader("# passes: cse\nbody\n", "-O3"), "# passes: -O3\nbody\n");
  EXPECT_EQ(withPipelineHeader("body\n", "dce"), "# passes: dce\nbody\n");
  EXPECT_EQ(replayFlags("-O2"), "-O 2");
  EXPECT_EQ(replayFlags("simplify"), "--passes simplify");
  EXPECT_EQ(pipelineOptionsFor("-O1").optLevel, 1u);
  EXPECT_FALSE(pipelineOptionsFor("-O1").passes.has_value());
  ASSERT_TRUE(pipelineOptionsFor("cse").passes.has_value());
  EXPECT_EQ(*pipelineOptionsFor("cse").passes, std::vector<std::string>{"cse"});
}

TEST(MidendInput, ChoicesCoverTheRewritingPassesAndLevels) {
  auto choices = midendPipelineChoices();
  for (std::string_view name :
       {"simplify", "fold-constant", "dce", "cse", "simplify-inference", "fold-scale-axis",
        "combine-parallel-dense", "convert-layout", "fuse-ops", "-O1", "-O2", "-O3"})
    EXPECT_NE(std::find(choices.begin(), choices.end(), name), choices.end()) << name;
  EXPECT_EQ(std::find(choices.begin(), choices.end(), "annotate-used-memory"), choices.end());
}

TEST(MidendInput, FilterTurnsAwayWhatIsNotWorthJudging) {
  MidendLimits limits;
  EXPECT_EQ(classifyMidendInput("not a graph", limits), InputStatus::Unparsable);
  // Type errors: the verifier reports some itself (then Unparsable), type
  // inference the rest; either way the input is not judged.
  InputStatus illTyped = classifyMidendInput(R"(graph g {
  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2]}
  y = Data() {index = 1, out0.dtype = i32, out0.shape = [2]}
  a = Add(x, y)
  out = NetOutput(a)
}
)",
                                             limits);
  EXPECT_TRUE(illTyped == InputStatus::Unparsable || illTyped == InputStatus::IllTyped);
  EXPECT_EQ(checkMidendInput(R"(graph g {
  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2, 3]}
  a = Transpose(x) {perm = [0, 0]}
  out = NetOutput(a)
}
)")
                .outcome,
            MidendOutcome::Skipped);
  EXPECT_EQ(classifyMidendInput(R"(graph g {
  x = Data() {index = 0, out0.dtype = f32, out0.shape = [64, 64]}
  out = NetOutput(x)
}
)",
                                limits),
            InputStatus::TooLarge);
  EXPECT_EQ(classifyMidendInput(R"(graph g {
  c = Const() {value = f32[2] file("w.bin", 0)}
  out = NetOutput(c)
}
)",
                                limits),
            InputStatus::ReadsFiles);
  EXPECT_EQ(classifyMidendInput(R"(options { legalize.targets_file = "/etc/passwd" }
graph g {
  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2]}
  out = NetOutput(x)
}
)",
                                limits),
            InputStatus::ReadsFiles);
  std::string big(limits.maxInputBytes + 1, ' ');
  EXPECT_EQ(classifyMidendInput(big, limits), InputStatus::TooLarge);
}

TEST(MidendInput, EverySeedIsJudgedAndSound) {
  std::vector<std::string> seeds = midendSeeds();
  ASSERT_GE(seeds.size(), 40u);
  std::map<std::string, int> byChoice;
  for (const std::string &s : seeds) {
    MidendResult r = checkMidendInput(s);
    EXPECT_EQ(r.status, InputStatus::Accepted) << inputStatusName(r.status) << "\n" << s;
    EXPECT_TRUE(r.outcome == MidendOutcome::Sound || r.outcome == MidendOutcome::Inconclusive)
        << oracle::formatResult(r.check) << "\n"
        << s;
    ++byChoice[r.choice];
  }
  // The seeds exercise many pipelines, not one.
  EXPECT_GE(byChoice.size(), 10u);
}

TEST(TypedMutator, MutationsOfSeedsStayWellTypedAndChangeThings) {
  std::vector<std::string> seeds = midendSeeds();
  ASSERT_FALSE(seeds.empty());
  size_t produced = 0, changed = 0, judged = 0, total = 0;
  std::map<TypedMutationKind, int> applied;
  for (size_t i = 0; i < seeds.size(); ++i)
    for (uint64_t seed = 0; seed < 12; ++seed) {
      ++total;
      TypedMutationOutcome out = mutateTypedGraphText(seeds[i], seed * 7919 + i, kMaxSize);
      EXPECT_FALSE(out.usedFallback);
      if (!out.text)
        continue;
      ++produced;
      ASSERT_TRUE(wellTyped(*out.text));
      if (*out.text != canonical(seeds[i]))
        ++changed;
      for (TypedMutationKind k : out.applied)
        ++applied[k];
      if (seed % 4 == 0) { // the target judges them too (a quarter: it is slower)
        MidendResult r = checkMidendInput(*out.text);
        // A violation here is a pass finding (fuzz/crashes-found/), not a
        // defect of the mutator: only that the input is judged is asserted.
        EXPECT_EQ(r.status, InputStatus::Accepted);
        judged += r.outcome != MidendOutcome::Skipped;
      }
    }
  EXPECT_GE(produced * 100, total * 95) << produced << " of " << total;
  EXPECT_GE(changed * 100, produced * 95) << changed << " of " << produced;
  EXPECT_GT(judged, 0u);
  for (size_t k = 0; k < kNumTypedMutationKinds; ++k)
    EXPECT_GT(applied[static_cast<TypedMutationKind>(k)], 0)
        << typedMutationName(static_cast<TypedMutationKind>(k)) << " never applied";
}

TEST(TypedMutator, DeterministicForInputAndSeed) {
  std::vector<std::string> seeds = midendSeeds();
  ASSERT_FALSE(seeds.empty());
  for (uint64_t seed = 1; seed < 20; ++seed) {
    TypedMutationOutcome a = mutateTypedGraphText(seeds[seed % seeds.size()], seed, kMaxSize);
    TypedMutationOutcome b = mutateTypedGraphText(seeds[seed % seeds.size()], seed, kMaxSize);
    EXPECT_EQ(a.text, b.text);
  }
}

/// Applies `kind` with successive seeds until it applies and type-checks.
std::optional<MidendCase> applyUntilWellTyped(const MidendCase &base, TypedMutationKind kind) {
  for (uint64_t seed = 0; seed < 200; ++seed) {
    MidendCase c = base;
    MutationRng rng(seed);
    if (applyTypedMutation(c, kind, rng) &&
        classifyModuleForMidend(c.module, MidendLimits{}) == InputStatus::Accepted)
      return c;
  }
  return std::nullopt;
}

constexpr const char *kChain = R"(# passes: simplify
graph g {
  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2, 3]}
  c = Const() {value = f32[3] {1, 2, 3}}
  a = Add(x, c)
  r = Relu(a)
  s = ReduceSum(r) {axes = [1], keepdims = 1}
  out = NetOutput(s)
}
)";

TEST(TypedMutator, EachKindDoesWhatItSays) {
  MidendCase base = caseOf(kChain);
  size_t nodes = countNodes(base.module);

  auto cast = applyUntilWellTyped(base, TypedMutationKind::InsertCastPair);
  ASSERT_TRUE(cast);
  EXPECT_EQ(countType(cast->module, "Cast"), 2u);

  auto transpose = applyUntilWellTyped(base, TypedMutationKind::InsertTransposePair);
  ASSERT_TRUE(transpose);
  EXPECT_EQ(countType(transpose->module, "Transpose"), 2u);

  auto unary = applyUntilWellTyped(base, TypedMutationKind::InsertUnary);
  ASSERT_TRUE(unary);
  EXPECT_EQ(countNodes(unary->module), nodes + 1);

  auto arith = applyUntilWellTyped(base, TypedMutationKind::InsertIdentityArith);
  ASSERT_TRUE(arith);
  EXPECT_EQ(countNodes(arith->module), nodes + 2); // the op and its constant
  EXPECT_EQ(countType(arith->module, "Const"), 2u);

  auto dup = applyUntilWellTyped(base, TypedMutationKind::DuplicateNode);
  ASSERT_TRUE(dup);
  EXPECT_EQ(countNodes(dup->module), nodes + 1);

  auto bypass = applyUntilWellTyped(base, TypedMutationKind::BypassNode);
  ASSERT_TRUE(bypass);
  EXPECT_EQ(countNodes(bypass->module), nodes - 1);

  auto value = applyUntilWellTyped(base, TypedMutationKind::ConstValue);
  ASSERT_TRUE(value);
  const Graph &vg = value->module.root();
  EXPECT_FALSE(vg.node(vg.find("c")).attr("value")->asTensor() ==
               base.module.root().node(base.module.root().find("c")).attr("value")->asTensor());

  auto attr = applyUntilWellTyped(base, TypedMutationKind::IntAttr);
  ASSERT_TRUE(attr);
  const Graph &ag = attr->module.root();
  EXPECT_NE(ag.node(ag.find("s")).attrs,
            base.module.root().node(base.module.root().find("s")).attrs);

  auto pipeline = applyUntilWellTyped(base, TypedMutationKind::ChangePipeline);
  ASSERT_TRUE(pipeline);
  EXPECT_NE(pipeline->choice, "simplify");

  auto splice = applyUntilWellTyped(base, TypedMutationKind::SpliceFresh);
  ASSERT_TRUE(splice);
  EXPECT_GT(countNodes(splice->module), nodes);

  auto output = applyUntilWellTyped(base, TypedMutationKind::AddOutput);
  ASSERT_TRUE(output);
  const Graph &og = output->module.root();
  EXPECT_EQ(og.node(og.find("out")).inputs.size(), 2u);
}

TEST(TypedMutator, AxisSpellingsIncludeTheNegativeOne) {
  // Over many seeds, IntAttr writes ReduceSum's axis 1 of a rank-2 input as
  // -1 (the same axis), and drops keepdims to 0 or changes it.
  MidendCase base = caseOf(kChain);
  bool negative = false, keepdimsChanged = false;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    MidendCase c = base;
    MutationRng rng(seed);
    if (!applyTypedMutation(c, TypedMutationKind::IntAttr, rng))
      continue;
    const Node &s = c.module.root().node(c.module.root().find("s"));
    if (const AttrValue *axes = s.attr("axes");
        axes && axes->asList().size() == 1 && axes->asList()[0].asInt() == -1)
      negative = true;
    if (s.intAttr("keepdims") != std::optional<int64_t>(1))
      keepdimsChanged = true;
  }
  EXPECT_TRUE(negative);
  EXPECT_TRUE(keepdimsChanged);
}

TEST(TypedMutator, FreshCasesAreWellTypedAndJudged) {
  size_t judged = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    MutationRng rng(seed);
    MidendCase c = freshTypedCase(rng);
    std::string text = printCase(c);
    ASSERT_TRUE(wellTyped(text));
    MidendResult r = checkMidendInput(text);
    EXPECT_EQ(r.status, InputStatus::Accepted) << text;
    judged += r.outcome != MidendOutcome::Skipped;
  }
  EXPECT_GE(judged, 54u); // nearly all: the target is not fed junk
}

TEST(TypedMutator, NonGraphInputFallsBackToAFreshGraph) {
  TypedMutationOutcome out = mutateTypedGraphText("", 5, kMaxSize);
  EXPECT_TRUE(out.usedFallback);
  ASSERT_TRUE(out.text);
  EXPECT_TRUE(wellTyped(*out.text));
}

TEST(TypedMutator, CrossOverSplicesTheDonorWellTyped) {
  std::vector<std::string> seeds = midendSeeds();
  ASSERT_GE(seeds.size(), 2u);
  size_t produced = 0, grew = 0;
  for (size_t i = 0; i + 1 < seeds.size(); ++i) {
    TypedMutationOutcome out = crossOverTypedGraphText(seeds[i], seeds[i + 1], i, kMaxSize);
    if (!out.text)
      continue;
    ++produced;
    ASSERT_TRUE(wellTyped(*out.text));
    grew += countNodes(*parseModule(*out.text).module) > countNodes(*parseModule(seeds[i]).module);
  }
  EXPECT_GE(produced * 2, seeds.size());
  EXPECT_GE(grew * 10, produced * 9);
}

// MIDEND_FUZZER_SKIP_CONST_OUTPUTS turns away the shape of the target's first
// cse finding (a Const bound to a graph output), fixed since and kept as a
// regression: a switch for fuzzing past a finding of that shape.
TEST(MidendInput, SkipConstOutputsStepsAroundConstGraphOutputs) {
  std::ifstream in(std::string(GRAPHVET_SOURCE_DIR) +
                   "/fuzz/regressions/midend_fuzzer/cse-const-graph-output.graph");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(text.empty());
  MidendLimits skip;
  skip.skipConstOutputs = true;
  EXPECT_EQ(classifyMidendInput(text, MidendLimits{}), InputStatus::Accepted);
  EXPECT_EQ(classifyMidendInput(text, skip), InputStatus::Excluded);
  EXPECT_EQ(checkMidendInput(text, skip).outcome, MidendOutcome::Skipped);
  // With the same limits, the mutator makes no Const graph outputs.
  TypedMutatorOptions opts;
  opts.limits = skip;
  std::vector<std::string> seeds = midendSeeds();
  size_t produced = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    TypedMutationOutcome out =
        mutateTypedGraphText(seeds[seed % seeds.size()], seed, kMaxSize, opts);
    if (!out.text)
      continue;
    ++produced;
    EXPECT_EQ(classifyMidendInput(*out.text, skip), InputStatus::Accepted) << *out.text;
  }
  EXPECT_GE(produced, 150u);
}

} // namespace
} // namespace graphvet::fuzz
