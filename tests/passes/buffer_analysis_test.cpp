// The buffer analyses: source traces across views and subgraph boundaries,
// forward use exploration, and the class tables.
#include "passes/buffer_analysis.h"
#include "test_util.h"

namespace graphvet {
namespace {

Module parse(const char *text) {
  ParseResult p = parseModule(text);
  EXPECT_TRUE(p.module);
  return p.module ? std::move(*p.module) : Module{};
}

TEST(BufferAnalysis, TraceThroughNestedCalls) {
  // root x -> pc{ d -> inner{ e -> Reshape -> result } -> result } -> tm
  Module m = parse(R"(
graph root {
  x = Data() {index = 0}
  r = ReLU(x)
  pc = PartitionedCall(r) {subgraphs = [outer]}
  tm = TensorMove(pc)
  out = NetOutput(tm)
}
graph outer {
  d = Data() {_parent_node_index = 0}
  ic = PartitionedCall(d) {subgraphs = [inner]}
  o = NetOutput(ic) {in0._parent_node_index = 0}
}
graph inner {
  e = Data() {_parent_node_index = 0}
  v = Reshape(e)
  o = NetOutput(v) {in0._parent_node_index = 0}
}
)");
  ModuleIndex index(m);
  const Graph &root = m.root();
  NodeId tm = root.find("tm");
  SourceTrace t = traceSource(m, index, 0, *root.node(tm).inputs[0], 100);
  ASSERT_EQ(t.kind, SourceKind::Ordinary) << t.failure;
  // pc:0, outer/ic:0, inner/v:0, inner/e:0, outer/d:0, root/r:0
  ASSERT_EQ(t.steps.size(), 6u);
  EXPECT_EQ(root.node(t.steps.back().port.node).name, "r");
  EXPECT_EQ(t.steps.back().graph, 0u);
  EXPECT_FALSE(t.refOnPath);
}

TEST(BufferAnalysis, TraceStopsAtControlFlowAndRefs) {
  Module m = parse(R"(
graph root {
  c = Data() {index = 0}
  v = Variable()
  a = Assign(v, c)
  i = If(c, a) {subgraphs = [then, else]}
  t1 = TensorMove(i)
  t2 = TensorMove(a)
  out = NetOutput(t1, t2)
}
graph then {
  d = Data() {_parent_node_index = 1}
  tm = TensorMove(d)
  o = NetOutput(tm) {in0._parent_node_index = 0}
}
graph else {
  d = Data() {_parent_node_index = 1}
  o = NetOutput(d) {in0._parent_node_index = 0}
}
)");
  ModuleIndex index(m);
  const Graph &root = m.root();
  SourceTrace t1 = traceSource(m, index, 0, *root.node(root.find("t1")).inputs[0], 100);
  EXPECT_EQ(t1.kind, SourceKind::ControlFlow);
  SourceTrace t2 = traceSource(m, index, 0, *root.node(root.find("t2")).inputs[0], 100);
  EXPECT_EQ(t2.kind, SourceKind::Variable);
  EXPECT_TRUE(t2.refOnPath);
  GraphId then = m.findGraph("then");
  const Graph &tg = m.graph(then);
  SourceTrace inBranch = traceSource(m, index, then, *tg.node(tg.find("tm")).inputs[0], 100);
  EXPECT_EQ(inBranch.kind, SourceKind::ControlFlow);
  EXPECT_EQ(root.node(inBranch.controlFlow.node).name, "i");
}

TEST(BufferAnalysis, ExploreFindsWritesOutputsAndSubgraphResults) {
  Module m = parse(R"(
graph root {
  r = ReLU()
  tm = TensorMove(r)
  v = Reshape(tm)
  pc = PartitionedCall(v) {subgraphs = [body]}
  h = HcomAllReduce(pc)
  out = NetOutput(pc, h)
}
graph body {
  d = Data() {_parent_node_index = 0}
  w = Assign(d, d)
  o = NetOutput(w) {in0._parent_node_index = 0}
}
)");
  ModuleIndex index(m);
  const Graph &g = m.root();
  std::vector<SlotRef> start = consumerSlots(m, {0, {g.find("tm"), 0}});
  BufferUses uses = exploreUses(m, index, start, 1000);
  EXPECT_FALSE(uses.overBudget);
  // Assign writes (Writeable) and HcomAllReduce scribbles (ScopeWriteable).
  EXPECT_EQ(uses.access, AccessClass::Invalid);
  EXPECT_EQ(uses.rootOutputs, (std::set<uint32_t>{0}));
  EXPECT_TRUE(uses.passedOnBy.count({0, g.find("v")}));
  EXPECT_TRUE(uses.passedOnBy.count({0, g.find("pc")}));
  EXPECT_TRUE(passesMemoryOn(m, index, 0, g.find("pc"), 0, 1000));
  EXPECT_FALSE(passesMemoryOn(m, index, 0, g.find("h"), 0, 1000));
  BufferUses tight = exploreUses(m, index, start, 2);
  EXPECT_TRUE(tight.overBudget);
  EXPECT_EQ(tight.access, AccessClass::Invalid);
}

TEST(BufferAnalysis, UnconnectedAliasPassesNothingOn) {
  Module m = parse(R"(
graph root {
  r = ReLU()
  y = ReLU()
  w = Assign(r, y)
  v = Reshape(r)
  q = ReLU(v)
  out = NetOutput(q)
}
)");
  ModuleIndex index(m);
  const Graph &g = m.root();
  // Assign's ref output has no consumer: it writes r but hands it to nobody.
  EXPECT_FALSE(passesMemoryOn(m, index, 0, g.find("w"), 0, 100));
  EXPECT_FALSE(passesMemoryOn(m, index, 0, g.find("w"), 1, 100));
  EXPECT_TRUE(passesMemoryOn(m, index, 0, g.find("v"), 0, 100));
  SlotRef slot{0, {g.find("w"), 0}};
  EXPECT_EQ(exploreUses(m, index, std::span<const SlotRef>(&slot, 1), 100).access,
            AccessClass::Writeable);
}

TEST(BufferAnalysis, ClassTables) {
  EXPECT_EQ(combine(AccessClass::ReadOnly, AccessClass::Writeable), AccessClass::Writeable);
  EXPECT_EQ(combine(AccessClass::ScopeWriteable, AccessClass::ReadOnly),
            AccessClass::ScopeWriteable);
  EXPECT_EQ(combine(AccessClass::Writeable, AccessClass::ScopeWriteable), AccessClass::Invalid);
  EXPECT_FALSE(conflicts(OutputClass::ReadOnlyConst, AccessClass::ReadOnly));
  EXPECT_TRUE(conflicts(OutputClass::ReadOnlyConst, AccessClass::Writeable));
  EXPECT_FALSE(conflicts(OutputClass::ReadOnly, AccessClass::Writeable));
  EXPECT_TRUE(conflicts(OutputClass::ReadOnly, AccessClass::ScopeWriteable));
  EXPECT_FALSE(conflicts(OutputClass::SoftRead, AccessClass::ScopeWriteable));
  EXPECT_TRUE(conflicts(OutputClass::Writeable, AccessClass::ScopeWriteable));
  EXPECT_FALSE(conflicts(OutputClass::Writeable, AccessClass::Writeable));
  EXPECT_TRUE(conflicts(OutputClass::SoftRead, AccessClass::Invalid));
}

} // namespace
} // namespace graphvet
