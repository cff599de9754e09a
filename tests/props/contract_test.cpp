// The pass-contract check layered on the oracle (props/contract.h): deleting
// a reserved node is a violation even though memory and values are intact.
#include "ir/parser.h"
#include "props/contract.h"
#include "props/evaluate.h"
#include "tests/oracle/oracle_test_util.h"

#include <gtest/gtest.h>

namespace graphvet::props {
namespace {

using oracle::testing::parseText;

const char *kOriginal = R"(graph g {
  x = Data() {index = 0}
  tm = TensorMove(x) {_cannot_be_deleted = true}
  fold = TensorMove(x) {no_need_constant_folding = 1}
  n = NegD(tm)
  k = NegD(fold)
  out = NetOutput(n, k)
}
)";

// The same graph with `tm` gone: every value is the same.
const char *kWithoutTm = R"(graph g {
  x = Data() {index = 0}
  fold = TensorMove(x) {no_need_constant_folding = 1}
  n = NegD(x)
  k = NegD(fold)
  out = NetOutput(n, k)
}
)";

TEST(Contract, ReservedNodesAreRecognized) {
  Module m = parseText(kOriginal);
  const Graph &g = m.graph(0);
  EXPECT_TRUE(isReservedNode(g.node(g.find("tm"))));
  EXPECT_TRUE(isReservedNode(g.node(g.find("fold"))));
  EXPECT_FALSE(isReservedNode(g.node(g.find("n"))));
  Module f =
      parseText("graph g {\n  x = Data() {index = 0}\n  t = TensorMove(x) {_cannot_be_deleted = "
                "false}\n  out = NetOutput(t)\n}\n");
  EXPECT_FALSE(isReservedNode(f.graph(0).node(f.graph(0).find("t"))));
}

TEST(Contract, DeletingAReservedNodeIsAViolationTheOracleAloneMisses) {
  Module original = parseText(kOriginal);
  Module optimized = parseText(kWithoutTm);
  oracle::CheckResult r = oracle::checkRefinement(original, optimized, {});
  ASSERT_EQ(r.verdict, oracle::Verdict::Sound); // memory and values are intact
  checkReservedNodesKept(original, optimized, r);
  ASSERT_EQ(r.verdict, oracle::Verdict::Violation);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].kind, kReservedDeletedKind);
  EXPECT_EQ(r.violations[0].nodes, std::vector<std::string>{"tm"});
}

TEST(Contract, KeepingEveryReservedNodeLeavesTheVerdictAlone) {
  Module original = parseText(kOriginal);
  oracle::CheckResult r = oracle::checkRefinement(original, original, {});
  ASSERT_EQ(r.verdict, oracle::Verdict::Sound);
  checkReservedNodesKept(original, original, r);
  EXPECT_EQ(r.verdict, oracle::Verdict::Sound);
  EXPECT_TRUE(r.violations.empty());
}

TEST(Contract, AnInvalidOriginalIsNotBlamedOnThePass) {
  Module original = parseText(kOriginal);
  oracle::CheckResult r;
  r.verdict = oracle::Verdict::Invalid;
  checkReservedNodesKept(original, parseText(kWithoutTm), r);
  EXPECT_EQ(r.verdict, oracle::Verdict::Invalid);
  EXPECT_TRUE(r.violations.empty());
}

TEST(Contract, TheCampaignEvaluationKeepsReservedCopies) {
  // The real pass skips reserved copies, so evaluate() finds nothing.
  Evaluation e = evaluate(parseText(kOriginal), {});
  EXPECT_EQ(e.result.verdict, oracle::Verdict::Sound);
}

// Fixpoint and idempotence: a pipeline's output that one more run changes
// is a `not-idempotent` violation naming the first line that changed; the
// real output of the pass is left sound; a level pipeline stopped by its
// bound is one too.
TEST(Idempotence, ASecondRunThatChangesTheOutputIsAViolation) {
  Module m = parseText(R"(graph g {
  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2]}
  dead = Neg(x)
  out = NetOutput(x)
})");
  PipelineOptions dce;
  dce.passes = std::vector<std::string>{"dce"};
  // Handing the unoptimized module over as the "output": dce still acts on it.
  oracle::CheckResult notFixed;
  notFixed.verdict = oracle::Verdict::Sound;
  checkIdempotent(m, dce, PipelineResult{}, notFixed);
  ASSERT_EQ(notFixed.verdict, oracle::Verdict::Violation);
  ASSERT_EQ(notFixed.violations.size(), 1u);
  EXPECT_EQ(notFixed.violations[0].kind, kNotIdempotentKind);
  EXPECT_NE(notFixed.violations[0].message.find("once:  dead = Neg(x)"), std::string::npos)
      << notFixed.violations[0].message;

  // A first run that left its input as it was is not run again (the same
  // deterministic pipeline on the same module changes nothing again).
  oracle::CheckResult unchanged;
  unchanged.verdict = oracle::Verdict::Sound;
  checkIdempotent(m, dce, PipelineResult{}, unchanged, &m);
  EXPECT_EQ(unchanged.verdict, oracle::Verdict::Sound);

  // dce's own output is its fixpoint.
  Module optimized = m;
  PipelineResult first = runPipeline(optimized, dce);
  oracle::CheckResult fixed;
  fixed.verdict = oracle::Verdict::Sound;
  checkIdempotent(optimized, dce, first, fixed);
  EXPECT_EQ(fixed.verdict, oracle::Verdict::Sound);
  EXPECT_TRUE(fixed.violations.empty());

  // A level pipeline that never reached its fixpoint.
  PipelineResult bounded = first;
  bounded.reachedFixpoint = false;
  oracle::CheckResult stopped;
  stopped.verdict = oracle::Verdict::Sound;
  checkIdempotent(optimized, PipelineOptions{}, bounded, stopped);
  EXPECT_EQ(stopped.verdict, oracle::Verdict::Violation);
  ASSERT_EQ(stopped.violations.size(), 1u);
  EXPECT_NE(stopped.violations[0].message.find("maxIterations"), std::string::npos);
}

// evaluate() runs the check when asked, and only then.
TEST(Idempotence, EvaluateChecksItOnRequest) {
  Module m = parseText(R"(graph g {
  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2]}
  a = Relu(x)
  b = Relu(x)
  s = Add(a, b)
  out = NetOutput(s)
})");
  EvalOptions eo;
  eo.pipeline.passes = std::vector<std::string>{"cse"};
  eo.check.useZ3 = false;
  eo.checkIdempotence = true;
  Evaluation e = evaluate(m, eo);
  EXPECT_EQ(e.result.verdict, oracle::Verdict::Sound);
}

} // namespace
} // namespace graphvet::props
