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

} // namespace
} // namespace graphvet::props
