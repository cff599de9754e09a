// The dynamic topological order: pruned reachability, cycle refusal and
// re-numbering after an edge against the current order.
#include "passes/order_index.h"

#include <gtest/gtest.h>

namespace graphvet {
namespace {

// a -> b -> c, and d on its own.
struct Chain : ::testing::Test {
  Graph g;
  NodeId a, b, c, d;
  void SetUp() override {
    a = g.addNode("a", "ReLU");
    b = g.addNode("b", "ReLU", {OutPort{a, 0}});
    c = g.addNode("c", "ReLU", {OutPort{b, 0}});
    d = g.addNode("d", "ReLU");
  }
};

TEST_F(Chain, ReachesFollowsDataAndControl) {
  OrderIndex ord(g, g.topoOrder());
  ASSERT_TRUE(ord.valid());
  EXPECT_TRUE(ord.reaches(a, c));
  EXPECT_FALSE(ord.reaches(c, a));
  EXPECT_FALSE(ord.reaches(a, a));
  EXPECT_FALSE(ord.reaches(a, d));
  g.addCtrlEdge(c, d);
  EXPECT_TRUE(ord.reaches(a, d)); // order a<b<c<d already consistent
}

TEST_F(Chain, RefusesCycleAndChangesNothing) {
  OrderIndex ord(g, g.topoOrder());
  EXPECT_FALSE(ord.addCtrlEdge(c, a));
  EXPECT_FALSE(g.hasCtrlEdge(c, a));
  EXPECT_FALSE(ord.addCtrlEdge(b, b));
}

TEST_F(Chain, ReordersOnBackwardEdge) {
  // Ids give d the last position; d -> a forces d before the whole chain.
  OrderIndex ord(g, g.topoOrder());
  bool added = false;
  ASSERT_TRUE(ord.addCtrlEdge(d, a, &added));
  EXPECT_TRUE(added);
  EXPECT_LT(ord.position(d), ord.position(a));
  EXPECT_LT(ord.position(a), ord.position(b));
  EXPECT_LT(ord.position(b), ord.position(c));
  EXPECT_TRUE(ord.reaches(d, c));
  EXPECT_FALSE(ord.addCtrlEdge(c, d)); // now a cycle
  bool again = true;
  EXPECT_TRUE(ord.addCtrlEdge(d, a, &again)); // exists already
  EXPECT_FALSE(again);
}

TEST(OrderIndex, InvalidOnCyclicGraph) {
  Graph g;
  NodeId a = g.addNode("a", "ReLU");
  NodeId b = g.addNode("b", "ReLU", {OutPort{a, 0}});
  g.addCtrlEdge(b, a);
  OrderIndex ord(g, g.topoOrder());
  EXPECT_FALSE(ord.valid());
  EXPECT_FALSE(ord.reaches(a, b));
}

TEST(OrderIndex, ManyBackwardEdgesKeepAValidOrder) {
  // A ladder of 40 independent nodes chained backwards one edge at a time:
  // every insertion goes against the order and must re-number.
  Graph g;
  std::vector<NodeId> n;
  for (int i = 0; i < 40; ++i) {
    std::string name = "n";
    name += std::to_string(i); // (not "n" + ...: GCC 12 warns falsely on it)
    n.push_back(g.addNode(name, "ReLU"));
  }
  OrderIndex ord(g, g.topoOrder());
  for (int i = 39; i > 0; --i)
    ASSERT_TRUE(ord.addCtrlEdge(n[i], n[i - 1]));
  for (int i = 39; i > 0; --i)
    EXPECT_LT(ord.position(n[i]), ord.position(n[i - 1]));
  EXPECT_TRUE(ord.reaches(n[39], n[0]));
  EXPECT_FALSE(ord.addCtrlEdge(n[0], n[39]));
}

} // namespace
} // namespace graphvet
