// Every violation that applies is reported, most specific first, and an
// optimized graph's structural defects are violations of the tool that made
// it (invalid-output, cycle) with their location -- never bad input.
#include "oracle/check.h"
#include "oracle_test_util.h"

#include <algorithm>

namespace graphvet::oracle {
namespace {

using testing::parseText;

const char *kWeightCopied = R"(
graph g {
  x   = Data() {index = 0}
  c   = FileConstant()
  tm  = TensorMove(c)
  v   = Reshape(tm)
  w   = Assign(v, x)
  out = NetOutput(w)
}
)";

bool hasKind(const CheckResult &r, const std::string &kind) {
  return std::any_of(r.violations.begin(), r.violations.end(),
                     [&](const Violation &v) { return v.kind == kind; });
}

TEST(ViolationKinds, VocabularyRanksMostSpecificFirst) {
  EXPECT_LT(violationRank("invalid-output"), violationRank("cycle"));
  EXPECT_LT(violationRank("cycle"), violationRank("weight-written"));
  EXPECT_LT(violationRank("weight-written"), violationRank("layout"));
  EXPECT_LT(violationRank("race"), violationRank("value"));
  EXPECT_EQ(violationRank("no-such-kind"), std::size(kViolationKinds));
}

// Issue 21: the report said `layout` only.
TEST(ViolationKinds, AWeightWrittenThroughAViewIsReportedBesideTheLayoutConflict) {
  Module original = parseText(kWeightCopied);
  Module optimized = parseText(R"(
graph g {
  x   = Data() {index = 0}
  c   = FileConstant()
  v   = Reshape(c)
  w   = Assign(v, x)
  out = NetOutput(w)
}
)");
  CheckResult r = checkRefinement(original, optimized, {});
  ASSERT_EQ(r.verdict, Verdict::Violation) << formatResult(r);
  ASSERT_FALSE(r.violations.empty());
  EXPECT_EQ(r.violations.front().kind, "weight-written") << formatResult(r);
  EXPECT_EQ(r.violations.front().nodes, (std::vector<std::string>{"w"}));
  EXPECT_EQ(r.violations.front().buffers, (std::vector<std::string>{"weight:c"}));
  EXPECT_TRUE(hasKind(r, "layout")) << formatResult(r);
  std::vector<std::string> kinds = violationKindsOf(r);
  for (size_t i = 1; i < kinds.size(); ++i)
    EXPECT_LT(violationRank(kinds[i - 1]), violationRank(kinds[i]));
  EXPECT_NE(formatResult(r).find("violation: weight-written, layout"), std::string::npos)
      << formatResult(r);
}

TEST(ViolationKinds, ARaceDoesNotHideTheValueItChanges) {
  Module original = parseText(R"(
graph g {
  v   = Variable()
  tm  = TensorMove(v)
  s   = SigmoidD(tm)
  w   = Assign(v, s)
  n   = NegD(tm)
  out = NetOutput(n, w)
}
)");
  // The copy is gone: Neg now reads v while Assign may already have written it.
  Module optimized = parseText(R"(
graph g {
  v   = Variable()
  s   = SigmoidD(v)
  w   = Assign(v, s)
  n   = NegD(v)
  out = NetOutput(n, w)
}
)");
  CheckResult r = checkRefinement(original, optimized, {});
  ASSERT_EQ(r.verdict, Verdict::Violation) << formatResult(r);
  EXPECT_EQ(r.violations.front().kind, "race") << formatResult(r);
  EXPECT_TRUE(hasKind(r, "value")) << formatResult(r);
}

TEST(ViolationKinds, AVariableInAContinuousInputIsALayoutConflict) {
  Module original = parseText(R"(
graph g {
  v   = Variable()
  y   = ReLU()
  tm  = TensorMove(v)
  k   = ConcatD(tm, y) {continuous_input = true}
  out = NetOutput(k)
}
)");
  Module optimized = parseText(R"(
graph g {
  v   = Variable()
  y   = ReLU()
  k   = ConcatD(v, y) {continuous_input = true}
  out = NetOutput(k)
}
)");
  CheckResult r = checkRefinement(original, optimized, {});
  ASSERT_EQ(r.verdict, Verdict::Violation) << formatResult(r);
  EXPECT_EQ(r.violations.front().kind, "layout");
  EXPECT_EQ(r.violations.front().buffers, (std::vector<std::string>{"var:v"}));
  // Every input on the variable itself is exempt (one buffer).
  Module exempt = parseText(R"(
graph g {
  v   = Variable()
  k   = ConcatD(v, v) {continuous_input = true}
  out = NetOutput(k)
}
)");
  Module exemptOriginal = parseText(R"(
graph g {
  v   = Variable()
  tm  = TensorMove(v)
  k   = ConcatD(tm, tm) {continuous_input = true}
  out = NetOutput(k)
}
)");
  EXPECT_EQ(checkRefinement(exemptOriginal, exempt, {}).verdict, Verdict::Sound);
}

TEST(ViolationKinds, AMalformedOriginalIsInvalidWhateverTheOptimizedGraph) {
  Module empty;
  Module valid = parseText("graph root {\n  x = Data() {index = 0}\n  out = NetOutput(x)\n}\n");
  CheckResult r = checkRefinement(empty, valid, {});
  EXPECT_EQ(r.verdict, Verdict::Invalid);
  ASSERT_FALSE(r.violations.empty());
  EXPECT_EQ(r.violations.front().kind, "malformed");
  // The same through the text entry point, with an unparsable optimized text.
  CheckResult t = checkRefinementOfText(empty, "graph {", {});
  EXPECT_EQ(t.verdict, Verdict::Invalid);
}

TEST(ViolationKinds, AnOptimizedTextWithACycleIsACycleAtItsPlace) {
  Module original = parseText(kWeightCopied);
  CheckOptions o;
  o.optimizedName = "after.graph";
  CheckResult r = checkRefinementOfText(original, R"(graph g {
  x   = Data() {index = 0}
  c   = FileConstant()
  tm  = TensorMove(c)
  v   = Reshape(tm)
  w   = Assign(v, x)
  out = NetOutput(w)
  ctrl out -> tm
}
)",
                                        o);
  ASSERT_EQ(r.verdict, Verdict::Violation) << formatResult(r);
  ASSERT_EQ(r.violations.size(), 1u) << formatResult(r);
  EXPECT_EQ(r.violations[0].kind, "cycle");
  // Located at the cycle's first node, v.
  EXPECT_EQ(r.violations[0].nodes.front(), "v");
  EXPECT_EQ(r.violations[0].location, "after.graph:5:3");
}

TEST(ViolationKinds, AnOptimizedTextWithADanglingOrDuplicatedNameIsAnInvalidOutput) {
  Module original = parseText(kWeightCopied);
  CheckOptions o;
  o.optimizedName = "after.graph";
  CheckResult dangling = checkRefinementOfText(original, R"(graph g {
  x   = Data() {index = 0}
  c   = FileConstant()
  w   = Assign(gone, x)
  out = NetOutput(w)
}
)",
                                               o);
  ASSERT_EQ(dangling.verdict, Verdict::Violation) << formatResult(dangling);
  EXPECT_EQ(dangling.violations.at(0).kind, "invalid-output");
  EXPECT_EQ(dangling.violations.at(0).location, "after.graph:4:16");
  CheckResult duplicated = checkRefinementOfText(original, R"(graph g {
  x   = Data() {index = 0}
  c   = FileConstant()
  c   = FileConstant()
  w   = Assign(c, x)
  out = NetOutput(w)
}
)",
                                                 o);
  ASSERT_EQ(duplicated.verdict, Verdict::Violation) << formatResult(duplicated);
  EXPECT_EQ(duplicated.violations.at(0).kind, "invalid-output");
  EXPECT_EQ(duplicated.violations.at(0).location.rfind("after.graph:", 0), 0u);
}

TEST(ViolationKinds, AnOptimizedModuleThatBreaksTheVerifierIsAnInvalidOutput) {
  Module original = parseText(kWeightCopied);
  Module broken = original;
  Graph &g = broken.root();
  g.setInput({g.find("tm"), 0}, std::nullopt);
  CheckResult r = checkRefinement(original, broken, {});
  ASSERT_EQ(r.verdict, Verdict::Violation) << formatResult(r);
  EXPECT_EQ(r.violations.at(0).kind, "invalid-output");
  EXPECT_EQ(r.violations.at(0).location.rfind("optimized:", 0), 0u) << r.violations.at(0).location;
}

} // namespace
} // namespace graphvet::oracle
