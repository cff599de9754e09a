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

TEST(PassManager, TableListsTensorMoveDeleteAtO3) {
  ASSERT_FALSE(allPasses().empty());
  const PassInfo *p = findPass("tensor-move-delete");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->minLevel, 3u);
  EXPECT_EQ(findPass("nope"), nullptr);
}

TEST(PassManager, LevelsSelectPasses) {
  for (unsigned level = 0; level <= 3; ++level) {
    PipelineOptions o;
    o.optLevel = level;
    auto r = optimize(kGraph, o);
    ASSERT_TRUE(r.result.ok);
    EXPECT_EQ(r.result.stats.count("tensor-move-delete"), level == 3 ? 1u : 0u) << level;
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
