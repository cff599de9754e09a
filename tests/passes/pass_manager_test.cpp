// The pass manager: levels, explicit lists, disabling, option overrides,
// unknown names and the verifier after each pass.
#include "test_util.h"

namespace graphvet {
namespace {

using testing::optimize;

constexpr const char *kGraph = R"(
options {
  ge.exec.inputReuseMemIndexes = "5"
}
graph root {
  r = ReLU()
  tm = TensorMove(r)
  out = NetOutput(tm)
}
)";

TEST(PassManager, TableListsPassesAtTheirLevels) {
  // midend-passes.md: -O1 simplify, fold-constant, dce; -O2 adds cse,
  // simplify-inference and tensor-move-delete; -O3 adds fold-scale-axis,
  // combine-parallel-dense and convert-layout; legalize only when named.
  ASSERT_FALSE(allPasses().empty());
  for (auto [name, level] : {std::pair<const char *, unsigned>{"simplify", 1},
                             {"dce", 1},
                             {"cse", 2},
                             {"simplify-inference", 2},
                             {"tensor-move-delete", 2},
                             {"fold-scale-axis", 3},
                             {"combine-parallel-dense", 3},
                             {"convert-layout", 3}}) {
    const PassInfo *p = findPass(name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_EQ(p->minLevel, level) << name;
  }
  EXPECT_EQ(findPass("nope"), nullptr);
}

TEST(PassManager, LevelPipelineRepeatsRoundsUntilNothingChanges) {
  // cse merges the two ReLUs only once tensor-move-delete has removed the
  // copy between them, which happens after cse in the same round: a second
  // round is needed, a third confirms the fixpoint.
  PipelineOptions o;
  o.optLevel = 2;
  auto r = optimize(R"(
graph root {
  r = ReLU()
  tm = TensorMove(r)
  a = ReLU(tm)
  b = ReLU(r)
  s = Add(a, b)
  out = NetOutput(s)
}
)",
                    o);
  ASSERT_TRUE(r.result.ok);
  EXPECT_TRUE(r.result.reachedFixpoint);
  EXPECT_EQ(r.result.iterations, 3u);
  EXPECT_EQ(r.module.root().find("tm"), kNoNode);
  EXPECT_TRUE(r.module.root().find("a") == kNoNode || r.module.root().find("b") == kNoNode);
  // An explicit list runs once.
  PipelineOptions once;
  once.passes = std::vector<std::string>{"cse", "tensor-move-delete"};
  auto single = optimize(R"(
graph root {
  r = ReLU()
  tm = TensorMove(r)
  a = ReLU(tm)
  b = ReLU(r)
  s = Add(a, b)
  out = NetOutput(s)
}
)",
                         once);
  EXPECT_EQ(single.result.iterations, 1u);
  EXPECT_NE(single.module.root().find("a"), kNoNode);
  EXPECT_NE(single.module.root().find("b"), kNoNode);
}

TEST(PassManager, LevelsSelectPasses) {
  for (unsigned level = 0; level <= 3; ++level) {
    PipelineOptions o;
    o.optLevel = level;
    auto r = optimize(kGraph, o);
    ASSERT_TRUE(r.result.ok);
    EXPECT_EQ(r.result.stats.count("tensor-move-delete"), level >= 2 ? 1u : 0u) << level;
    EXPECT_EQ(r.result.stats.count("dce"), level >= 1 ? 1u : 0u) << level;
  }
}

TEST(PassManager, ExplicitListOverridesLevelAndDisableWins) {
  PipelineOptions o;
  o.optLevel = 0;
  o.passes = std::vector<std::string>{"tensor-move-delete"};
  auto r = optimize(kGraph, o);
  EXPECT_EQ(r.result.stats.count("tensor-move-delete"), 1u);
  o.disabled = {"tensor-move-delete"};
  r = optimize(kGraph, o);
  EXPECT_TRUE(r.result.ok);
  EXPECT_TRUE(r.result.stats.empty());
  EXPECT_NE(r.module.root().find("tm"), kNoNode);
}

TEST(PassManager, UnknownNamesAndLevelsRunNothing) {
  PipelineOptions o;
  o.passes = std::vector<std::string>{"tensor-move-delete", "bogus"};
  auto r = optimize(kGraph, o);
  EXPECT_FALSE(r.result.ok);
  EXPECT_TRUE(r.result.failedPass.empty());
  ASSERT_EQ(r.result.diagnostics.size(), 1u);
  EXPECT_NE(r.result.diagnostics[0].message.find("'bogus'"), std::string::npos);
  EXPECT_NE(r.module.root().find("tm"), kNoNode);

  PipelineOptions d;
  d.disabled = {"bogus"};
  EXPECT_FALSE(optimize(kGraph, d).result.ok);
  PipelineOptions l;
  l.optLevel = 4;
  EXPECT_FALSE(optimize(kGraph, l).result.ok);
}

TEST(PassManager, OptionOverridesReachModuleAndWarnings) {
  PipelineOptions o;
  o.optionOverrides["ge.exec.inputReuseMemIndexes"] = "1,x";
  auto r = optimize(kGraph, o);
  EXPECT_TRUE(r.result.ok);
  EXPECT_EQ(r.module.options.at("ge.exec.inputReuseMemIndexes"), "1,x");
  ASSERT_EQ(r.result.warnings.size(), 1u);
  EXPECT_EQ(r.result.warnings[0].severity, Severity::Warning);
  EXPECT_NE(r.result.warnings[0].message.find("'x'"), std::string::npos);
  // The overridden value has no file location any more.
  EXPECT_EQ(r.result.warnings[0].loc.line, 0u);
}

} // namespace
} // namespace graphvet
