// TensorMoveDeletePass on small modules: decisions, the rewritten edges,
// remarks, statistics and determinism. (The lit tests in tests/lit cover
// every scenario and rule through `graphvet opt`; these pin down the library
// API and the graph surgery.)
#include "passes/tensor_move_delete.h"
#include "test_util.h"

#include "ir/verifier.h"

namespace graphvet {
namespace {

using testing::alive;
using testing::Optimized;

/// The pass alone unless a test names its passes: the default pipeline runs
/// other passes too (cse would merge the input-less ReLUs these graphs use).
Optimized optimize(const std::string &text, PipelineOptions options = {}) {
  if (!options.passes)
    options.passes = std::vector<std::string>{"tensor-move-delete"};
  return testing::optimize(text, std::move(options));
}
using testing::remarkFor;

TEST(TensorMoveDelete, Scenario1DeletesAndRelinks) {
  auto o = optimize(R"(
graph root {
  x = Data() {index = 0}
  r = ReLU(x)
  tm = TensorMove(r)
  q = AddD(tm, x)
  out = NetOutput(q)
}
)");
  ASSERT_TRUE(o.result.ok);
  const Remark *rm = remarkFor(o.result, "tm");
  ASSERT_NE(rm, nullptr);
  EXPECT_EQ(rm->decision, "deleted");
  EXPECT_EQ(rm->rule, "scenario1");
  EXPECT_EQ(rm->message, "deleted tm (source r)");
  EXPECT_FALSE(alive(o.module, "root", "tm"));
  const Graph &g = o.module.root();
  const Node &q = g.node(g.find("q"));
  ASSERT_TRUE(q.inputs[0]);
  EXPECT_EQ(q.inputs[0]->node, g.find("r"));
  EXPECT_TRUE(verifyModule(o.module).empty());
}

TEST(TensorMoveDelete, MovesControlEdgesOntoNeighbours) {
  // cp -> tm -> cs by control: after deletion cp precedes the consumer q,
  // and both the producer r and the consumer q precede cs.
  auto o = optimize(R"(
graph root {
  r = ReLU()
  cp = ReLU()
  cs = ReLU()
  tm = TensorMove(r)
  q = AddD(tm)
  out = NetOutput(q, cp, cs)
  ctrl cp -> tm
  ctrl tm -> cs
}
)");
  ASSERT_TRUE(o.result.ok);
  const Graph &g = o.module.root();
  EXPECT_FALSE(alive(o.module, "root", "tm"));
  EXPECT_TRUE(g.hasCtrlEdge(g.find("cp"), g.find("q")));
  EXPECT_TRUE(g.hasCtrlEdge(g.find("r"), g.find("cs")));
  EXPECT_TRUE(g.hasCtrlEdge(g.find("q"), g.find("cs")));
  EXPECT_EQ(o.result.stats.at("tensor-move-delete").counters.at("ctrl_edges_added"), 3);
  const Remark *rm = remarkFor(o.result, "tm");
  ASSERT_NE(rm, nullptr);
  EXPECT_NE(rm->message.find("moved ctrl"), std::string::npos) << rm->message;
}

TEST(TensorMoveDelete, Scenario5AddsPendingEdge) {
  auto o = optimize(R"(
graph root {
  x = Data() {index = 0}
  r = ReLU(x)
  sib = AddD(r, r)
  tm = TensorMove(r)
  w = Assign(tm, x)
  out = NetOutput(sib, w)
}
)");
  ASSERT_TRUE(o.result.ok);
  const Remark *rm = remarkFor(o.result, "tm");
  ASSERT_NE(rm, nullptr);
  EXPECT_EQ(rm->rule, "scenario5-read-write");
  EXPECT_EQ(rm->message, "deleted tm (source r; added ctrl sib -> w)");
  const Graph &g = o.module.root();
  EXPECT_TRUE(g.hasCtrlEdge(g.find("sib"), g.find("w")));
}

TEST(TensorMoveDelete, OneRemarkPerTensorMoveAndStatsAddUp) {
  auto o = optimize(R"(
graph root {
  v = Variable()
  r = ReLU(v)
  t1 = TensorMove(r)
  t2 = TensorMove(t1)
  t3 = TensorMove(v)
  w = Assign(t3, r)
  t4 = TensorMove(r) {_cannot_be_deleted = true}
  out = NetOutput(t2, w, t4)
}
)");
  ASSERT_TRUE(o.result.ok);
  const auto &c = o.result.stats.at("tensor-move-delete").counters;
  EXPECT_EQ(c.at("tensor_moves"), 4);
  EXPECT_EQ(c.at("deleted") + c.at("kept"), 4);
  EXPECT_EQ(o.result.remarks.size(), 4u);
  std::set<std::string> nodes;
  for (const Remark &r : o.result.remarks)
    nodes.insert(r.node);
  EXPECT_EQ(nodes, (std::set<std::string>{"t1", "t2", "t3", "t4"}));
  EXPECT_EQ(remarkFor(o.result, "t3")->rule, "rule1-special-successor-writes");
  EXPECT_EQ(remarkFor(o.result, "t4")->decision, "skipped");
}

TEST(TensorMoveDelete, ChainCollapsesInOnePass) {
  auto o = optimize(R"(
graph root {
  r = ReLU()
  t1 = TensorMove(r)
  t2 = TensorMove(t1)
  t3 = TensorMove(t2)
  q = ReLU(t3)
  out = NetOutput(q)
}
)");
  ASSERT_TRUE(o.result.ok);
  EXPECT_EQ(o.result.stats.at("tensor-move-delete").counters.at("deleted"), 3);
  const Graph &g = o.module.root();
  EXPECT_EQ(g.node(g.find("q")).inputs[0]->node, g.find("r"));
}

TEST(TensorMoveDelete, DeterministicOutput) {
  const char *text = R"(
graph root {
  x = Data() {index = 0}
  r = ReLU(x)
  a = ReLU(r)
  b = ReLU(r)
  t1 = TensorMove(r)
  t2 = TensorMove(r)
  w1 = Assign(t1, x)
  w2 = Assign(t2, x)
  out = NetOutput(a, b, w1, w2)
}
)";
  auto first = optimize(text);
  auto second = optimize(text);
  EXPECT_EQ(printModule(first.module), printModule(second.module));
  ASSERT_EQ(first.result.remarks.size(), second.result.remarks.size());
  for (size_t i = 0; i < first.result.remarks.size(); ++i)
    EXPECT_EQ(first.result.remarks[i].message, second.result.remarks[i].message);
}

TEST(TensorMoveDelete, DirectApiWithGrants) {
  ParseResult p = parseModule(R"(
graph root {
  x = Data() {index = 3}
  tm = TensorMove(x)
  w = Assign(tm, x)
  out = NetOutput(w)
}
)");
  ASSERT_TRUE(p.module);
  Module denied = *p.module;
  std::vector<Remark> remarks;
  TensorMoveDeleteStats s = runTensorMoveDelete(denied, {}, &remarks);
  EXPECT_EQ(s.deleted, 0);
  ASSERT_EQ(remarks.size(), 1u);
  EXPECT_EQ(remarks[0].rule, "rule2-no-grant");

  TensorMoveDeleteOptions opts;
  opts.grants.reusableInputs = {3};
  opts.conservative = true;
  Module design = *p.module;
  remarks.clear();
  s = runTensorMoveDelete(design, opts, &remarks);
  ASSERT_EQ(remarks.size(), 1u);
  // The grant passes Rule 2, but w also reads x directly while writing the
  // copy: the successor is its own sibling, which the design keeps.
  EXPECT_EQ(remarks[0].rule, "rule3-successor-is-sibling") << remarks[0].message;

  // graphvet's extensions: w reads x before it writes (one node), and the
  // options leave x unspecified after the run, so x may take the write.
  opts.conservative = false;
  Module granted = *p.module;
  remarks.clear();
  s = runTensorMoveDelete(granted, opts, &remarks);
  EXPECT_EQ(s.deleted, 1);
  ASSERT_EQ(remarks.size(), 1u);
  EXPECT_EQ(remarks[0].rule, "ext-written-copy") << remarks[0].message;
}

TEST(TensorMoveDelete, SiblingBudgetBoundsPendingEdges) {
  // A writing successor must follow every reading sibling; beyond the
  // budget of edges the copy stays.
  ParseResult p = parseModule(R"(
graph root {
  r = ReLU()
  y = ReLU()
  a = NegD(r)
  b = AbsD(r)
  tm = TensorMove(r)
  w = Assign(tm, y)
  out = NetOutput(a, b, w)
}
)");
  ASSERT_TRUE(p.module);
  Module tight = *p.module;
  TensorMoveDeleteOptions opts;
  opts.maxSiblings = 1;
  opts.conservative = true; // the extensions order the siblings their own way
  std::vector<Remark> remarks;
  TensorMoveDeleteStats s = runTensorMoveDelete(tight, opts, &remarks);
  EXPECT_EQ(s.deleted, 0);
  ASSERT_EQ(remarks.size(), 1u);
  EXPECT_EQ(remarks[0].rule, "rule3-sibling-budget") << remarks[0].message;

  Module roomy = *p.module;
  remarks.clear();
  TensorMoveDeleteOptions design;
  design.conservative = true;
  s = runTensorMoveDelete(roomy, design, &remarks);
  EXPECT_EQ(s.deleted, 1);
  EXPECT_EQ(s.ctrlEdgesAdded, 2);
}

TEST(TensorMoveDelete, HubOfCopiesAllGo) {
  // One weight read through many copies: each copy's siblings are the
  // other copies and the readers already relinked, all reading.
  std::string text = "graph root {\n  c = Const()\n";
  std::string outs;
  for (int i = 0; i < 50; ++i) {
    std::string k = std::to_string(i);
    text += "  t" + k + " = TensorMove(c)\n  q" + k + " = ReLU(t" + k + ")\n";
    outs += (i ? ", q" : "q") + k;
  }
  text += "  out = NetOutput(" + outs + ")\n}\n";
  auto o = optimize(text);
  ASSERT_TRUE(o.result.ok);
  EXPECT_EQ(o.result.stats.at("tensor-move-delete").counters.at("deleted"), 50);
  EXPECT_EQ(o.result.stats.at("tensor-move-delete").counters.at("ctrl_edges_added"), 0);
  const Graph &g = o.module.root();
  EXPECT_EQ(g.consumers({g.find("c"), 0}).size(), 50u);
}

TEST(TensorMoveDelete, RevisitDeletesOnceNeighbourIsGone) {
  // t1 is kept first (ReadOnly producer against a scribbling successor);
  // deleting the unused copy t2 makes the producer SoftRead and the re-visit
  // deletes t1. Its remark is the final decision and comes last. (By
  // default ext-written-copy deletes t1 at once: the design's rules here.)
  PipelineOptions design;
  design.conservative = true;
  design.passes = std::vector<std::string>{"tensor-move-delete"};
  auto o = optimize(R"(
graph root {
  r = ReLU()
  t1 = TensorMove(r)
  t2 = TensorMove(r)
  h = HcomAllReduce(t1)
  out = NetOutput(h)
}
)",
                    design);
  ASSERT_EQ(o.result.remarks.size(), 2u);
  EXPECT_EQ(o.result.remarks[0].node, "t2");
  EXPECT_EQ(o.result.remarks[1].node, "t1");
  EXPECT_EQ(o.result.remarks[1].decision, "deleted");
  EXPECT_EQ(o.result.stats.at("tensor-move-delete").counters.at("deleted"), 2);
}

TEST(TensorMoveDelete, RefusedEdgeLeavesGraphUntouched) {
  // Moving ctrl tm -> cs onto the consumer q would close a cycle (cs feeds
  // q): the TensorMove stays and no edge is left behind.
  const char *text = R"(
graph root {
  v = Variable()
  r = ReLU()
  tm = TensorMove(r)
  cs = Assign(v, r)
  q = AddD(tm, cs)
  out = NetOutput(q)
  ctrl tm -> cs
}
)";
  PipelineOptions design;
  design.conservative = true;
  auto o = optimize(text, design);
  ASSERT_TRUE(o.result.ok);
  EXPECT_EQ(remarkFor(o.result, "tm")->rule, "ctrl-order-cycle");
  ParseResult original = parseModule(text);
  ASSERT_TRUE(original.module);
  EXPECT_EQ(printModule(o.module), printModule(*original.module));
  EXPECT_EQ(o.result.stats.at("tensor-move-delete").counters.at("ctrl_edges_added"), 0);

  // By default the refusal falls back to the extensions: nothing writes r,
  // so cs need not follow q's read of it, and tm goes without that edge.
  auto ext = optimize(text);
  ASSERT_TRUE(ext.result.ok);
  EXPECT_EQ(remarkFor(ext.result, "tm")->rule, "ext-readonly-source");
  EXPECT_EQ(ext.module.root().find("tm"), kNoNode);
  EXPECT_FALSE(
      ext.module.root().hasCtrlEdge(ext.module.root().find("q"), ext.module.root().find("cs")));
}

} // namespace
} // namespace graphvet
