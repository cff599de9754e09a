// Graph bookkeeping: consumer lists under every mutation, tombstones,
// topological order and its tie-breaking, cycles, reachability, and the
// canonical graph order of a module.
#include "ir/graph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <queue>
#include <random>
#include <string>

namespace graphvet {
namespace {

using Consumers = std::vector<InPort>;

TEST(Graph, AddNodeRecordsConsumersInEdgeOrder) {
  Graph g;
  NodeId a = g.addNode("a", "Split", {}, 2);
  NodeId b = g.addNode("b", "Add", {OutPort{a, 0}, OutPort{a, 1}, OutPort{a, 0}});
  EXPECT_EQ(g.node(a).consumers[0], (Consumers{{b, 0}, {b, 2}}));
  EXPECT_EQ(g.node(a).consumers[1], (Consumers{{b, 1}}));
  EXPECT_EQ(g.find("b"), b);
  EXPECT_EQ(g.numLiveNodes(), 2u);
}

TEST(Graph, DefaultOutputCountComesFromTheOpLibrary) {
  Graph g;
  NodeId a = g.addNode("a", "A");
  NodeId n = g.addNode("n", "NetOutput", {OutPort{a, 0}});
  NodeId w = g.addNode("w", "While", {OutPort{a, 0}, OutPort{a, 0}, std::nullopt});
  EXPECT_EQ(g.node(a).numOutputs, 1u);
  EXPECT_EQ(g.node(n).numOutputs, 0u);
  EXPECT_EQ(g.node(w).numOutputs, 3u);
}

TEST(Graph, SetInputMovesTheConsumerEntry) {
  Graph g;
  NodeId a = g.addNode("a", "A");
  NodeId b = g.addNode("b", "B");
  NodeId c = g.addNode("c", "C", {OutPort{a, 0}});
  g.setInput({c, 0}, OutPort{b, 0});
  EXPECT_TRUE(g.node(a).consumers[0].empty());
  EXPECT_EQ(g.node(b).consumers[0], (Consumers{{c, 0}}));
  g.setInput({c, 0}, std::nullopt);
  EXPECT_TRUE(g.node(b).consumers[0].empty());
  EXPECT_FALSE(g.node(c).inputs[0]);
  // Referencing a higher port raises the producer's output count.
  g.setInput({c, 0}, OutPort{a, 3});
  EXPECT_EQ(g.node(a).numOutputs, 4u);
  EXPECT_EQ(g.node(a).consumers[3], (Consumers{{c, 0}}));
}

TEST(Graph, EraseInputShiftsLaterSlotsAndTheirConsumerEntries) {
  Graph g;
  NodeId a = g.addNode("a", "A");
  NodeId b = g.addNode("b", "B");
  NodeId c = g.addNode("c", "C", {OutPort{a, 0}, OutPort{b, 0}, std::nullopt, OutPort{a, 0}});
  g.eraseInput({c, 1});
  ASSERT_EQ(g.node(c).inputs.size(), 3u);
  EXPECT_EQ(g.node(c).inputs[0], (OutPort{a, 0}));
  EXPECT_FALSE(g.node(c).inputs[1]);
  EXPECT_EQ(g.node(c).inputs[2], (OutPort{a, 0}));
  EXPECT_TRUE(g.node(b).consumers[0].empty());
  Consumers ca = g.node(a).consumers[0];
  std::sort(ca.begin(), ca.end());
  EXPECT_EQ(ca, (Consumers{{c, 0}, {c, 2}})) << "slot 3 became slot 2";
}

TEST(Graph, RemoveNodeDetachesEverythingAndLeavesATombstone) {
  Graph g;
  NodeId a = g.addNode("a", "A");
  NodeId b = g.addNode("b", "B", {OutPort{a, 0}});
  NodeId c = g.addNode("c", "C", {OutPort{b, 0}, OutPort{a, 0}});
  g.addCtrlEdge(a, b);
  g.addCtrlEdge(b, c);
  g.removeNode(b);
  EXPECT_FALSE(g.node(b).alive);
  EXPECT_EQ(g.numLiveNodes(), 2u);
  EXPECT_EQ(g.capacity(), 3u);
  EXPECT_EQ(g.find("b"), kNoNode);
  EXPECT_EQ(g.node(a).consumers[0], (Consumers{{c, 1}}));
  EXPECT_FALSE(g.node(c).inputs[0]);
  EXPECT_TRUE(g.node(a).ctrlOut.empty());
  EXPECT_TRUE(g.node(c).ctrlIn.empty());
  EXPECT_EQ(g.liveNodes(), (std::vector<NodeId>{a, c}));
  // A new node may reuse the name; ids stay stable.
  NodeId b2 = g.addNode("b", "B");
  EXPECT_EQ(b2, 3u);
  EXPECT_EQ(g.find("b"), b2);
  g.removeNode(b); // removing twice is harmless
  EXPECT_EQ(g.numLiveNodes(), 3u);
}

TEST(Graph, ReplaceAllUsesAndRename) {
  Graph g;
  NodeId a = g.addNode("a", "A");
  NodeId b = g.addNode("b", "B");
  NodeId c = g.addNode("c", "C", {OutPort{a, 0}, OutPort{a, 0}});
  g.replaceAllUses({a, 0}, {b, 0});
  EXPECT_TRUE(g.node(a).consumers[0].empty());
  EXPECT_EQ(g.node(b).consumers[0].size(), 2u);
  EXPECT_EQ(g.node(c).inputs[1], (OutPort{b, 0}));
  g.rename(a, "z");
  EXPECT_EQ(g.find("a"), kNoNode);
  EXPECT_EQ(g.find("z"), a);
}

TEST(Graph, SetNumOutputsNeverDropsAUsedPort) {
  Graph g;
  NodeId a = g.addNode("a", "A", {}, 4);
  g.addNode("b", "B", {OutPort{a, 2}});
  g.setNumOutputs(a, 1);
  EXPECT_EQ(g.node(a).numOutputs, 3u);
  EXPECT_EQ(g.node(a).consumers.size(), 3u);
}

TEST(Graph, ControlEdges) {
  Graph g;
  NodeId a = g.addNode("a", "A");
  NodeId b = g.addNode("b", "B");
  EXPECT_TRUE(g.addCtrlEdge(a, b));
  EXPECT_FALSE(g.addCtrlEdge(a, b)) << "duplicate";
  EXPECT_FALSE(g.addCtrlEdge(a, a)) << "self edge";
  EXPECT_TRUE(g.hasCtrlEdge(a, b));
  EXPECT_FALSE(g.hasCtrlEdge(b, a));
  EXPECT_TRUE(g.removeCtrlEdge(a, b));
  EXPECT_FALSE(g.removeCtrlEdge(a, b));
  EXPECT_TRUE(g.node(b).ctrlIn.empty());
}

TEST(Graph, TopoOrderBreaksTiesByIdAndHonoursControlEdges) {
  Graph g;
  NodeId d = g.addNode("d", "D");
  NodeId c = g.addNode("c", "C");
  NodeId b = g.addNode("b", "B", {OutPort{d, 0}});
  NodeId a = g.addNode("a", "A");
  g.addCtrlEdge(a, c);
  auto order = g.topoOrder();
  ASSERT_TRUE(order);
  // d (0) first; then b (2) becomes ready before a (3); c (1) waits for a.
  EXPECT_EQ(*order, (std::vector<NodeId>{d, b, a, c}));
  g.removeNode(b);
  EXPECT_EQ(*g.topoOrder(), (std::vector<NodeId>{d, a, c}));
}

// The textbook stable order (a min-heap of ready ids), which topoOrder's
// cursor must reproduce exactly.
std::optional<std::vector<NodeId>> heapTopoOrder(const Graph &g) {
  std::vector<uint32_t> indeg(g.capacity(), 0);
  auto succs = [&](NodeId n) {
    std::vector<NodeId> out;
    for (const auto &port : g.node(n).consumers)
      for (InPort c : port)
        out.push_back(c.node);
    out.insert(out.end(), g.node(n).ctrlOut.begin(), g.node(n).ctrlOut.end());
    return out;
  };
  for (NodeId n : g.liveNodes())
    for (NodeId s : succs(n))
      ++indeg[s];
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> ready;
  for (NodeId n : g.liveNodes())
    if (indeg[n] == 0)
      ready.push(n);
  std::vector<NodeId> order;
  while (!ready.empty()) {
    NodeId n = ready.top();
    ready.pop();
    order.push_back(n);
    for (NodeId s : succs(n))
      if (--indeg[s] == 0)
        ready.push(s);
  }
  if (order.size() != g.numLiveNodes())
    return std::nullopt;
  return order;
}

std::string nodeName(char prefix, int trial, int index) {
  std::string name(1, prefix);
  name += std::to_string(trial);
  name += '_';
  name += std::to_string(index);
  return name;
}

TEST(Graph, TopoOrderEqualsTheHeapOrderAfterRewrites) {
  // Random DAGs, then rewrites as passes make them: new nodes (high ids)
  // spliced in front of old consumers, removals, control edges added and
  // removed, inputs erased; the cursor order must equal the heap order at
  // every step, asked twice (the second answer is the kept one) and on a copy.
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    Graph g;
    const int n = 2 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      std::vector<std::optional<OutPort>> ins;
      for (int k = 0; k < 2 && i > 0; ++k)
        if (rng() % 3 != 0)
          ins.push_back(OutPort{static_cast<NodeId>(rng() % i), 0});
      g.addNode(nodeName('n', trial, i), "Op", std::move(ins), 1u);
    }
    for (int step = 0; step < 30; ++step) {
      ASSERT_EQ(g.topoOrder(), heapTopoOrder(g)) << "trial " << trial << " step " << step;
      ASSERT_EQ(g.topoOrder(), heapTopoOrder(g)) << "trial " << trial << " step " << step;
      std::vector<NodeId> live = g.liveNodes();
      NodeId a = live[rng() % live.size()];
      if (step % 5 == 4) { // edits of a copy leave the original's order alone
        Graph copy = g;
        copy.removeNode(a);
        ASSERT_EQ(copy.topoOrder(), heapTopoOrder(copy));
        ASSERT_EQ(g.topoOrder(), heapTopoOrder(g));
      }
      switch (rng() % 6) {
      case 0: { // a new producer between `a` and its consumers
        NodeId fresh = g.addNode(nodeName('s', trial, step), "Op", {OutPort{a, 0}}, 1u);
        g.replaceAllUses(OutPort{a, 0}, OutPort{fresh, 0});
        g.setInput({fresh, 0}, OutPort{a, 0});
        break;
      }
      case 1: // a removal
        if (live.size() > 2)
          g.removeNode(a);
        break;
      case 2: { // a control edge that keeps the graph acyclic
        NodeId b = live[rng() % live.size()];
        if (a != b && !g.reaches(b, a))
          g.addCtrlEdge(a, b);
        break;
      }
      case 3: // a control edge removed
        if (!g.node(a).ctrlOut.empty())
          g.removeCtrlEdge(a, g.node(a).ctrlOut.front());
        break;
      case 4: // an input erased (later slots shift down)
        if (!g.node(a).inputs.empty())
          g.eraseInput({a, 0});
        break;
      default: { // an old node reads a new one
        NodeId fresh = g.addNode(nodeName('t', trial, step), "Op", {}, 1u);
        g.appendInput(a, OutPort{fresh, 0});
        break;
      }
      }
    }
    // A cycle: both orders give up.
    std::vector<NodeId> live = g.liveNodes();
    if (live.size() >= 2 && !g.reaches(live.back(), live.front())) {
      g.addCtrlEdge(live.front(), live.back());
      g.addCtrlEdge(live.back(), live.front());
      EXPECT_EQ(g.topoOrder(), std::nullopt);
      EXPECT_EQ(heapTopoOrder(g), std::nullopt);
    }
  }
}

TEST(Graph, FindCycleReturnsAClosedPath) {
  Graph g;
  NodeId a = g.addNode("a", "A");
  NodeId b = g.addNode("b", "B", {OutPort{a, 0}});
  NodeId c = g.addNode("c", "C", {OutPort{b, 0}});
  EXPECT_TRUE(g.findCycle().empty());
  g.addCtrlEdge(c, a);
  std::vector<NodeId> cycle = g.findCycle();
  ASSERT_EQ(cycle.size(), 4u);
  EXPECT_EQ(cycle.front(), cycle.back());
  std::vector<NodeId> members(cycle.begin(), cycle.end() - 1);
  std::sort(members.begin(), members.end());
  EXPECT_EQ(members, (std::vector<NodeId>{a, b, c}));
  EXPECT_FALSE(g.topoOrder());
  // A data self-loop is a cycle of length one.
  Graph h;
  NodeId x = h.addNode("x", "X");
  h.appendInput(x, OutPort{x, 0});
  EXPECT_EQ(h.findCycle(), (std::vector<NodeId>{x, x}));
}

TEST(Graph, Reaches) {
  Graph g;
  NodeId a = g.addNode("a", "A");
  NodeId b = g.addNode("b", "B", {OutPort{a, 0}});
  NodeId c = g.addNode("c", "C");
  NodeId d = g.addNode("d", "D");
  g.addCtrlEdge(b, c);
  EXPECT_TRUE(g.reaches(a, b));
  EXPECT_TRUE(g.reaches(a, c)) << "data then control";
  EXPECT_FALSE(g.reaches(c, a));
  EXPECT_FALSE(g.reaches(a, a)) << "no cycle";
  EXPECT_FALSE(g.reaches(a, d));
}

TEST(Module, CanonicalGraphOrderFollowsFirstReference) {
  Module m;
  GraphId root = m.addGraph("root");
  GraphId s1 = m.addGraph("s1");
  GraphId s2 = m.addGraph("s2");
  GraphId s3 = m.addGraph("s3"); // nested in s2
  GraphId lost = m.addGraph("lost");
  Graph &r = m.graph(root);
  NodeId late = r.addNode("late", "PartitionedCall");
  NodeId early = r.addNode("early", "PartitionedCall");
  r.addCtrlEdge(early, late); // early comes first in topological order
  m.attachSubgraph(root, late, s1);
  m.attachSubgraph(root, early, s2);
  NodeId inner = m.graph(s2).addNode("inner", "PartitionedCall");
  m.attachSubgraph(s2, inner, s3);
  EXPECT_EQ(m.canonicalGraphOrder(), (std::vector<GraphId>{root, s2, s1, s3}));
  EXPECT_EQ(m.graph(s3).parentGraph, s2);
  EXPECT_EQ(m.graph(s3).parentNode, inner);
  EXPECT_EQ(m.findGraph("lost"), lost);
  m.removeGraph(s2);
  EXPECT_FALSE(m.graph(s3).alive) << "removal is recursive";
  EXPECT_EQ(m.findGraph("s3"), kNoGraph);
  EXPECT_EQ(m.canonicalGraphOrder(), (std::vector<GraphId>{root, s1}));
}

TEST(Module, CanonicalGraphOrderSkipsHoldersThatDiedOrLostTheirSubgraphs) {
  // The order reads the graph's record of attached subgraphs: a holder that
  // was removed, or whose subgraphs moved to another node (an inlined If),
  // no longer counts, and a node given two subgraphs is one holder.
  Module m;
  GraphId root = m.addGraph("root");
  GraphId a = m.addGraph("a");
  GraphId b = m.addGraph("b");
  GraphId c = m.addGraph("c");
  Graph &r = m.graph(root);
  NodeId first = r.addNode("first", "If");
  NodeId second = r.addNode("second", "PartitionedCall");
  NodeId third = r.addNode("third", "PartitionedCall");
  m.attachSubgraph(root, first, a);
  m.attachSubgraph(root, first, b);
  m.attachSubgraph(root, second, c);
  EXPECT_EQ(m.canonicalGraphOrder(), (std::vector<GraphId>{root, a, b, c}));
  // c moves to `third`, ordered before `first`; `second` keeps no subgraph.
  m.graph(root).node(second).subgraphs.clear();
  m.attachSubgraph(root, third, c);
  m.graph(root).addCtrlEdge(third, first);
  EXPECT_EQ(m.canonicalGraphOrder(), (std::vector<GraphId>{root, c, a, b}));
  // A removed holder's graphs are no longer reached.
  m.graph(root).removeNode(first);
  EXPECT_EQ(m.canonicalGraphOrder(), (std::vector<GraphId>{root, c}));
}

TEST(AttrValue, KindsAndText) {
  EXPECT_TRUE(AttrValue().isInt());
  EXPECT_EQ(*AttrValue::ofString("s").text(), "s");
  EXPECT_EQ(*AttrValue::ofIdent("f16").text(), "f16");
  EXPECT_EQ(AttrValue::ofInt(3).text(), nullptr);
  EXPECT_NE(AttrValue::ofString("x"), AttrValue::ofIdent("x"));
  Node n;
  n.attrs["b"] = AttrValue::ofBool(true);
  n.attrs["i"] = AttrValue::ofInt(7);
  EXPECT_TRUE(n.boolAttr("b"));
  EXPECT_FALSE(n.boolAttr("i"));
  EXPECT_EQ(n.intAttr("i"), 7);
  EXPECT_EQ(n.intAttr("b"), std::nullopt);
  EXPECT_EQ(Node::portKey(true, 1, "ref_input"), "out1.ref_input");
  EXPECT_EQ(Node::portKey(false, 0, "_parent_node_index"), "in0._parent_node_index");
}

} // namespace
} // namespace graphvet
