// Unit tests of CommonSubexpressionEliminationPass at sizes lit files cannot
// show: a long chain of duplicate pairs folds in one run (a second run finds
// nothing), and a merge hands the removed node's control edges to the node
// kept.
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

} // namespace
} // namespace graphvet
