// Unit tests of DeadCodeEliminationPass at sizes lit files cannot show: a
// 100 000-node dead chain goes in one run (and a second run finds nothing),
// and a holder with thousands of ports is trimmed and renumbered so that the
// verifier accepts the result.
#include "ir/verifier.h"
#include "passes/dce.h"

#include <gtest/gtest.h>

#include <string>

namespace graphvet {
namespace {

/// "a" + number, in two appends: GCC 12's -Wrestrict misfires on
/// `"a" + std::to_string(i)`.
std::string numbered(const char *prefix, uint64_t i) {
  std::string s(prefix);
  s += std::to_string(i);
  return s;
}

NodeId addData(Graph &g, const std::string &name, const char *indexKey, int64_t index) {
  NodeId d = g.addNode(name, "Data");
  g.node(d).attrs[indexKey] = AttrValue::ofInt(index);
  return d;
}

TEST(Dce, HundredThousandNodeDeadChainGoesInOneRun) {
  constexpr int kChain = 100000;
  Module m;
  GraphId root = m.addGraph("root");
  Graph &g = m.graph(root);
  NodeId x = addData(g, "x", "index", 0);
  NodeId prev = x;
  for (int i = 0; i < kChain; ++i)
    prev = g.addNode(numbered("a", i), i % 2 ? "Exp" : "ReLU", {OutPort{prev, 0}});
  g.addNode("out", "NetOutput", {OutPort{x, 0}});

  DceStats first = runDce(m, DceOptions{}, nullptr);
  EXPECT_EQ(first.nodesBefore, kChain + 2);
  EXPECT_EQ(first.removed, kChain);
  EXPECT_EQ(m.root().numLiveNodes(), 2u);
  EXPECT_FALSE(hasErrors(verifyModule(m)));

  DceStats second = runDce(m, DceOptions{}, nullptr);
  EXPECT_EQ(second.removed, 0);
  EXPECT_EQ(second.nodesBefore, 2);
}

TEST(Dce, UsedChainStaysWhole) {
  constexpr int kChain = 1000;
  Module m;
  Graph &g = m.graph(m.addGraph("root"));
  NodeId prev = addData(g, "x", "index", 0);
  for (int i = 0; i < kChain; ++i)
    prev = g.addNode(numbered("a", i), "ReLU", {OutPort{prev, 0}});
  g.addNode("out", "NetOutput", {OutPort{prev, 0}});
  std::vector<Remark> remarks;
  DceStats s = runDce(m, DceOptions{}, &remarks);
  EXPECT_EQ(s.removed, 0);
  EXPECT_TRUE(remarks.empty());
  EXPECT_EQ(m.root().numLiveNodes(), static_cast<size_t>(kChain + 2));
}

/// A call with `ports` inputs and outputs, output k = ReLU(parameter k); the
/// caller reads only the odd outputs.
TEST(Dce, WideCallTrimmedAndRenumbered) {
  constexpr uint32_t kPorts = 4000;
  Module m;
  GraphId root = m.addGraph("root");
  GraphId body = m.addGraph("body");
  Graph &g = m.graph(root);
  std::vector<std::optional<OutPort>> args;
  for (uint32_t k = 0; k < kPorts; ++k)
    args.push_back(OutPort{addData(g, numbered("x", k), "index", k), 0});
  NodeId call = g.addNode("p", "PartitionedCall", args, kPorts);
  m.attachSubgraph(root, call, body);
  std::vector<std::optional<OutPort>> reads;
  for (uint32_t k = 1; k < kPorts; k += 2)
    reads.push_back(OutPort{call, k});
  g.addNode("out", "NetOutput", reads);

  Graph &b = m.graph(body);
  std::vector<std::optional<OutPort>> results;
  for (uint32_t k = 0; k < kPorts; ++k) {
    NodeId d = addData(b, numbered("d", k), "_parent_node_index", k);
    results.push_back(OutPort{b.addNode(numbered("r", k), "ReLU", {OutPort{d, 0}}), 0});
  }
  NodeId o = b.addNode("o", "NetOutput", results);
  for (uint32_t k = 0; k < kPorts; ++k)
    b.node(o).attrs[Node::portKey(false, k, "_parent_node_index")] = AttrValue::ofInt(k);
  ASSERT_FALSE(hasErrors(verifyModule(m)));

  DceStats s = runDce(m, DceOptions{}, nullptr);
  EXPECT_EQ(s.deadOutputsRemoved, kPorts / 2);
  EXPECT_EQ(s.unusedInputsRemoved, kPorts / 2);
  // The even ReLUs and their parameters.
  EXPECT_EQ(s.removed, static_cast<int64_t>(kPorts));
  const Node &p = m.root().node(call);
  EXPECT_EQ(p.numOutputs, kPorts / 2);
  EXPECT_EQ(p.inputs.size(), kPorts / 2);
  // Input j now comes from x(2j+1); the body's result j is ReLU(d(2j+1)).
  EXPECT_EQ(m.root().node(p.inputs[7]->node).name, "x15");
  const Node &out = b.node(o);
  EXPECT_EQ(b.node(out.inputs[7]->node).name, "r15");
  EXPECT_EQ(out.intAttr("in7._parent_node_index"), 7);
  EXPECT_EQ(b.node(b.find("d15")).intAttr("_parent_node_index"), 7);
  Diagnostics diags = verifyModule(m);
  EXPECT_FALSE(hasErrors(diags)) << (diags.empty() ? "" : diags.front().format("dce"));

  DceStats again = runDce(m, DceOptions{}, nullptr);
  EXPECT_EQ(again.removed, 0);
  EXPECT_EQ(again.deadOutputsRemoved, 0);
  EXPECT_EQ(again.unusedInputsRemoved, 0);
}

} // namespace
} // namespace graphvet
