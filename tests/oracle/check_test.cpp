// checkOriginal and the verdict plumbing: valid and invalid originals,
// warnings, replay commands and the human-readable report.
#include "oracle/check.h"
#include "oracle_test_util.h"

#include <fmt/format.h>

namespace graphvet::oracle {
namespace {

using testing::parseText;

TEST(CheckOriginal, ValidGraphIsSound) {
  Module m = parseText(R"(
graph root {
  x   = Data() {index = 0}
  r   = ReLU(x)
  w   = Assign(r)
  out = NetOutput(w)
}
)");
  CheckResult r = checkOriginal(m, {});
  EXPECT_EQ(r.verdict, Verdict::Sound) << formatResult(r);
}

TEST(CheckOriginal, RacyGraphIsInvalidWithWitnesses) {
  Module m = parseText(R"(
graph root {
  x   = Data() {index = 0}
  s   = SigmoidD(x)
  w   = Assign(x)
  out = NetOutput(s, w)
}
)");
  CheckResult r = checkOriginal(m, {});
  ASSERT_EQ(r.verdict, Verdict::Invalid);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].kind, "race");
  EXPECT_EQ(r.violations[0].buffers, (std::vector<std::string>{"input0"}));
  EXPECT_EQ(r.violations[0].schedules.size(), 2u);
  EXPECT_NE(r.reason.find("racy"), std::string::npos);
}

TEST(CheckOriginal, WeightWriteIsInvalid) {
  Module m = parseText(R"(
graph root {
  c   = Const()
  w   = Assign(c)
  r   = ReLU(w)
  out = NetOutput(r)
}
)");
  CheckResult r = checkOriginal(m, {});
  EXPECT_EQ(r.verdict, Verdict::Invalid);
  EXPECT_EQ(r.violations.at(0).kind, "weight-written");
}

TEST(CheckOriginal, CycleIsInvalid) {
  Module m = parseText(R"(
graph root {
  x   = Data() {index = 0}
  a   = A(x)
  b   = B(a)
  out = NetOutput(b)
}
)");
  m.root().addCtrlEdge(m.root().find("b"), m.root().find("a"));
  CheckResult r = checkOriginal(m, {});
  EXPECT_EQ(r.verdict, Verdict::Invalid);
  EXPECT_EQ(r.violations.at(0).kind, "cycle");
}

// A branch predicate computed from no input is fixed by the placeholder
// arithmetic alone: replacing the If by the branch the documented mix takes
// holds under that mix only, and the other variants expose it.
TEST(CheckRefinement, ArithmeticVariantsExposeAValueOnlyTheMixDecides) {
  const char *original = R"(
graph root {
  x   = Data() {index = 0}
  c   = AddD()
  if1 = If(c, x) {subgraphs = [yes, no]}
  out = NetOutput(if1)
}
graph yes {
  a   = Data() {_parent_node_index = 1}
  r   = ReLU(a)
  ret = NetOutput(r) {in0._parent_node_index = 0}
}
graph no {
  a   = Data() {_parent_node_index = 1}
  r   = SigmoidD(a)
  ret = NetOutput(r) {in0._parent_node_index = 0}
}
)";
  Module m = parseText(original);
  int soundUnderTheMix = 0;
  for (const char *op : {"ReLU", "SigmoidD"}) {
    Module taken = parseText(fmt::format(R"(
graph root {{
  x   = Data() {{index = 0}}
  r   = {}(x)
  out = NetOutput(r)
}}
)",
                                         op));
    CheckOptions one;
    CheckResult byMix = checkRefinement(m, taken, one);
    soundUnderTheMix += byMix.verdict == Verdict::Sound;
    CheckOptions all;
    all.arithmetics = 8;
    CheckResult r = checkRefinement(m, taken, all);
    ASSERT_EQ(r.verdict, Verdict::Violation) << op << ": " << formatResult(r);
    if (byMix.verdict == Verdict::Sound) {
      EXPECT_NE(r.violations.front().message.find("arithmetic variant"), std::string::npos)
          << r.violations.front().message;
    }
  }
  EXPECT_EQ(soundUnderTheMix, 1); // exactly one branch is the mix's choice
}

TEST(CheckRefinement, MalformedOptionWarns) {
  Module m = parseText(R"(
options {
  ge.exec.outputReuseInputMemIndexes = "0;0"
}
graph root {
  x   = Data() {index = 0}
  out = NetOutput(x)
}
)");
  CheckResult r = checkRefinement(m, m, {});
  EXPECT_EQ(r.verdict, Verdict::Sound);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("`0;0`"), std::string::npos) << r.warnings[0];
}

TEST(CheckRefinement, NeverThrowsOnAnEmptyModule) {
  Module empty;
  Module m = parseText("graph root {\n  x = Data() {index = 0}\n  out = NetOutput(x)\n}\n");
  CheckResult r = checkRefinement(m, empty, {});
  EXPECT_EQ(r.verdict, Verdict::Violation);
  EXPECT_EQ(r.violations.at(0).kind, "invalid-output");
  EXPECT_EQ(checkOriginal(empty, {}).verdict, Verdict::Invalid);
}

TEST(Verdict, NamesAndReplay) {
  EXPECT_EQ(verdictName(Verdict::Sound), "sound");
  EXPECT_EQ(verdictName(Verdict::Violation), "violation");
  EXPECT_EQ(verdictName(Verdict::Inconclusive), "inconclusive");
  EXPECT_EQ(verdictName(Verdict::Invalid), "invalid");
  EXPECT_EQ(replayPairCommand("a.graph", "b.graph", 7),
            "graphvet check --pair a.graph b.graph --seed 7");
  EXPECT_EQ(replayPassesCommand("a.graph", "tensor-move-delete", 3),
            "graphvet check a.graph --passes tensor-move-delete --seed 3");
  EXPECT_EQ(replayPassesCommand("a.graph", "", 3), "graphvet check a.graph --seed 3");
  // A check under more than the documented arithmetic replays under as many.
  EXPECT_EQ(replayPairCommand("a.graph", "b.graph", 7, 8),
            "graphvet check --pair a.graph b.graph --seed 7 --arithmetics 8");
  EXPECT_EQ(replayPassesCommand("a.graph", "", 3, 1), "graphvet check a.graph --seed 3");
  EXPECT_EQ(replayPassesCommand("a.graph", "", 3, 2),
            "graphvet check a.graph --seed 3 --arithmetics 2");
}

TEST(Verdict, ReportListsEverything) {
  CheckResult r;
  r.verdict = Verdict::Violation;
  r.violations.push_back({"race", {"a", "b"}, {"input0"}, {{"a", "b"}, {"b", "a"}}, "x", "m"});
  r.replay = "graphvet check --pair o p --seed 1";
  std::string text = formatResult(r);
  EXPECT_NE(text.find("verdict: violation"), std::string::npos);
  EXPECT_NE(text.find("race: m"), std::string::npos);
  EXPECT_NE(text.find("nodes: a, b"), std::string::npos);
  EXPECT_NE(text.find("schedule 2: b, a"), std::string::npos);
  EXPECT_NE(text.find("replay: graphvet check"), std::string::npos);
}

} // namespace
} // namespace graphvet::oracle
