// Unit tests of CommonSubexpressionEliminationPass at sizes lit files cannot
// show: a long chain of duplicate pairs folds in one run (a second run finds
// nothing), and a merge hands the removed node's control edges to the node
// kept. In a module where nothing writes in place the pass works out a
// node's facts only when an equal node turns up: at every analysis budget
// its decisions are those of the module with a writer added elsewhere,
// which works them out at each visit.
#include "ir/parser.h"
#include "ir/verifier.h"
#include "passes/cse.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace graphvet {
namespace {

/// prefix + number, in two appends: GCC 12's -Wrestrict misfires on
/// `"a" + std::to_string(i)`.
std::string numbered(const char *prefix, uint64_t i) {
  std::string s(prefix);
  s += std::to_string(i);
  return s;
}

TEST(Cse, ChainOfDuplicatePairsFoldsInOneRun) {
  constexpr int kPairs = 20000;
  Module m;
  Graph &g = m.graph(m.addGraph("root"));
  NodeId x = g.addNode("x", "Data");
  g.node(x).attrs["index"] = AttrValue::ofInt(0);
  NodeId a = x, b = x;
  for (int i = 0; i < kPairs; ++i) {
    // a_i and b_i are equal only once a_{i-1} and b_{i-1} have merged.
    NodeId na = g.addNode(numbered("a", i), "ReLU", {OutPort{a, 0}});
    NodeId nb = g.addNode(numbered("b", i), "ReLU", {OutPort{b, 0}});
    a = na;
    b = nb;
  }
  g.addNode("out", "NetOutput",
            {OutPort{g.addNode("sum", "Add", {OutPort{a, 0}, OutPort{b, 0}}), 0}});

  CseStats first = runCse(m, CseOptions{}, nullptr);
  EXPECT_EQ(first.merged, kPairs);
  EXPECT_EQ(first.refused, 0);
  EXPECT_EQ(m.root().numLiveNodes(), static_cast<size_t>(kPairs + 3));
  EXPECT_FALSE(hasErrors(verifyModule(m)));

  CseStats second = runCse(m, CseOptions{}, nullptr);
  EXPECT_EQ(second.merged, 0);
  EXPECT_EQ(second.refused, 0);
}

TEST(Cse, MergedNodeHandsOnItsControlEdges) {
  Module m;
  Graph &g = m.graph(m.addGraph("root"));
  NodeId x = g.addNode("x", "Data");
  g.node(x).attrs["index"] = AttrValue::ofInt(0);
  NodeId a1 = g.addNode("a1", "ReLU", {OutPort{x, 0}});
  NodeId before = g.addNode("before", "Exp", {OutPort{x, 0}});
  NodeId a2 = g.addNode("a2", "ReLU", {OutPort{x, 0}});
  NodeId after = g.addNode("after", "Neg", {OutPort{x, 0}});
  g.addCtrlEdge(before, a2);
  g.addCtrlEdge(a2, after);
  NodeId mix = g.addNode("mix", "MyMix",
                         {OutPort{a1, 0}, OutPort{a2, 0}, OutPort{before, 0}, OutPort{after, 0}});
  g.addNode("out", "NetOutput", {OutPort{mix, 0}});

  std::vector<Remark> remarks;
  CseStats s = runCse(m, CseOptions{}, &remarks);
  ASSERT_EQ(s.merged, 1);
  EXPECT_FALSE(g.node(a2).alive);
  EXPECT_TRUE(g.hasCtrlEdge(before, a1));
  EXPECT_TRUE(g.hasCtrlEdge(a1, after));
  EXPECT_EQ(g.node(mix).inputs[1]->node, a1);
  ASSERT_EQ(remarks.size(), 1u);
  EXPECT_EQ(remarks[0].rule, "merged-ctrl");
  EXPECT_FALSE(hasErrors(verifyModule(m)));
}

TEST(Cse, ControlEdgeThatWouldCloseACycleRefusesTheMerge) {
  Module m;
  Graph &g = m.graph(m.addGraph("root"));
  NodeId x = g.addNode("x", "Data");
  g.node(x).attrs["index"] = AttrValue::ofInt(0);
  NodeId a1 = g.addNode("a1", "ReLU", {OutPort{x, 0}});
  NodeId b = g.addNode("b", "Exp", {OutPort{a1, 0}});
  NodeId a2 = g.addNode("a2", "ReLU", {OutPort{x, 0}});
  g.addCtrlEdge(b, a2);
  NodeId mix = g.addNode("mix", "MyMix", {OutPort{a2, 0}, OutPort{b, 0}});
  g.addNode("out", "NetOutput", {OutPort{mix, 0}});

  std::vector<Remark> remarks;
  CseStats s = runCse(m, CseOptions{}, &remarks);
  EXPECT_EQ(s.merged, 0);
  EXPECT_EQ(s.refused, 1);
  EXPECT_TRUE(g.node(a2).alive);
  ASSERT_EQ(remarks.size(), 1u);
  EXPECT_EQ(remarks[0].rule, "ctrl-cycle");
}

/// Views, graph outputs, constants and duplicates whose merges give the
/// kept node more readers (a1 takes a2's three), so that at small budgets
/// explorations run out at some visits and not at others. `writer` adds an
/// in-place write that touches nothing else.
std::string budgetModule(bool writer) {
  std::string text = "graph root {\n"
                     "  x = Data() {index = 0}\n"
                     "  c1 = Const() {value = f32[4] {1, 2, 3, 4}}\n"
                     "  c2 = Const() {value = f32[4] {1, 2, 3, 4}}\n"
                     "  a1 = ReLU(x)\n"
                     "  a2 = ReLU(x)\n"
                     "  u1 = Exp(a1)\n"
                     "  u2 = Neg(a1)\n"
                     "  u3 = Abs(a1)\n"
                     "  w1 = Exp(a2)\n"
                     "  w2 = Neg(a2)\n"
                     "  w3 = Abs(a2)\n"
                     "  v1 = View(a1) {out0.reuse_input = true}\n"
                     "  v2 = View(a2) {out0.reuse_input = true}\n"
                     "  m1 = Mul(v1, c1)\n"
                     "  m2 = Mul(v2, c2)\n"
                     "  s1 = Add(u1, w1)\n"
                     "  s2 = Add(u1, w1)\n"
                     "  r1 = ReLU(x)\n"
                     "  r2 = ReLU(x)\n"
                     "  t = MyMix(u2, u3, w2, w3, m1, m2, s1, s2)\n";
  if (writer)
    text += "  y = Data() {index = 1}\n"
            "  z = Exp(y)\n"
            "  w = Assign(z, y)\n"
            "  out = NetOutput(t, r1, r2, v2, w)\n";
  else
    text += "  out = NetOutput(t, r1, r2, v2)\n";
  return text + "}\n";
}

TEST(Cse, FactsWorkedOutLateDecideAsAtEachVisitAtEveryBudget) {
  for (size_t budget = 0; budget <= 40; ++budget) {
    SCOPED_TRACE(budget);
    CseOptions options;
    options.analysisBudget = budget;
    std::vector<std::string> decisions[2];
    CseStats stats[2];
    for (int writer = 0; writer < 2; ++writer) {
      ParseResult parsed = parseModule(budgetModule(writer == 1));
      ASSERT_TRUE(parsed.module) << parsed.diagnostics.front().message;
      std::vector<Remark> remarks;
      stats[writer] = runCse(*parsed.module, options, &remarks);
      for (const Remark &r : remarks)
        decisions[writer].push_back(r.rule + ": " + r.message);
      EXPECT_FALSE(hasErrors(verifyModule(*parsed.module)));
    }
    EXPECT_EQ(decisions[0], decisions[1]);
    EXPECT_EQ(stats[0].merged, stats[1].merged);
    EXPECT_EQ(stats[0].refused, stats[1].refused);
    EXPECT_EQ(stats[0].candidates + 2, stats[1].candidates); // z and w
    if (budget == 40) {
      // With room enough, everything equal merges but what must not.
      EXPECT_GE(stats[0].merged, 5);
      EXPECT_FALSE(decisions[0].empty());
    }
  }
}

} // namespace
} // namespace graphvet
