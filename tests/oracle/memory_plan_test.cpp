// The memory plan (semantics.md §1): every row of the binding table, sizes
// from tensor descriptions, and the candidates of run-time bindings.
#include "oracle/memory_plan.h"
#include "oracle_test_util.h"

namespace graphvet::oracle {
namespace {

using testing::parseText;

std::string label(const Module &m, const MemoryPlan &p, const std::string &graph,
                  const std::string &node, uint32_t k = 0) {
  GraphId g = m.findGraph(graph);
  EXPECT_NE(g, kNoGraph) << graph;
  NodeId n = m.graph(g).find(node);
  EXPECT_NE(n, kNoNode) << node;
  return p.bufferLabel(g, {n, k});
}

TEST(MemoryPlan, SourcesCopiesRefsAndViews) {
  Module m = parseText(R"(
graph root {
  x   = Data() {index = 0}
  u   = Data()
  v   = Variable()
  c   = Const()
  tm  = TensorMove(x)
  id  = Identity(c)
  as  = Assign(tm, x)
  re  = Reshape(v)
  r   = ReLU(re)
  out = NetOutput(as, id, r, u)
}
)");
  MemoryPlan p = MemoryPlan::build(m);
  EXPECT_TRUE(p.errors().empty());
  EXPECT_EQ(label(m, p, "root", "x"), "input0");
  EXPECT_EQ(label(m, p, "root", "u"), "caller:u");
  EXPECT_EQ(label(m, p, "root", "v"), "var:v");
  EXPECT_EQ(label(m, p, "root", "c"), "weight:c");
  EXPECT_EQ(label(m, p, "root", "tm"), "fresh:tm:0");
  EXPECT_EQ(label(m, p, "root", "id"), "fresh:id:0");
  EXPECT_EQ(label(m, p, "root", "as"), "fresh:tm:0"); // ref output: input 0's buffer
  EXPECT_EQ(label(m, p, "root", "re"), "var:v");      // view
  EXPECT_EQ(label(m, p, "root", "r"), "fresh:r:0");

  PortId as = p.portId(0, {m.root().find("as"), 0});
  EXPECT_EQ(p.port(as).write, PortWrite::Ref);
  PortId re = p.portId(0, {m.root().find("re"), 0});
  EXPECT_EQ(p.port(re).write, PortWrite::None);
  PortId tm = p.portId(0, {m.root().find("tm"), 0});
  EXPECT_EQ(p.port(tm).write, PortWrite::Copy);
}

TEST(MemoryPlan, AttributeDrivenAliases) {
  Module m = parseText(R"(
graph root {
  x   = Data() {index = 0}
  y   = Data() {index = 1}
  v   = Variable()
  a   = Foo(x, y) {outputs = 3, out0.ref_input = 1, out1.reuse_input = true, out2.reuse_input = true, out2.reuse_input_index = 1}
  b   = Bar(x) {ref_var_src_var_name = "v"}
  c   = Baz(x) {outputs = 2, out1.ref_var_src_var_name = "v"}
  out = NetOutput(a:0, a:1, a:2, b, c:0, c:1)
}
)");
  MemoryPlan p = MemoryPlan::build(m);
  EXPECT_TRUE(p.errors().empty());
  EXPECT_EQ(label(m, p, "root", "a", 0), "input1");
  EXPECT_EQ(label(m, p, "root", "a", 1), "input0"); // reuse_input_index defaults to 0
  EXPECT_EQ(label(m, p, "root", "a", 2), "input1");
  EXPECT_EQ(label(m, p, "root", "b"), "var:v"); // node-level ref_var_src_var_name
  EXPECT_EQ(label(m, p, "root", "c", 0), "fresh:c:0");
  EXPECT_EQ(label(m, p, "root", "c", 1), "var:v"); // output-level
  PortId b = p.portId(0, {m.root().find("b"), 0});
  // Bound to the variable, not written by the node (§2 lists no such write).
  EXPECT_EQ(p.port(b).write, PortWrite::None);
}

TEST(MemoryPlan, SubgraphBoundaries) {
  Module m = parseText(R"(
graph root {
  x   = Data() {index = 0}
  r   = ReLU(x)
  pc  = PartitionedCall(x, r) {subgraphs = [body], outputs = 2}
  out = NetOutput(pc:0, pc:1)
}
graph body {
  a = Data() {_parent_node_index = 0}
  b = Data() {_parent_node_index = 1}
  m = MulD(a, b)
  o = NetOutput(m, b) {in0._parent_node_index = 1, in1._parent_node_index = 0}
}
)");
  MemoryPlan p = MemoryPlan::build(m);
  EXPECT_TRUE(p.errors().empty());
  EXPECT_EQ(label(m, p, "body", "a"), "input0");
  EXPECT_EQ(label(m, p, "body", "b"), "fresh:r:0");
  EXPECT_EQ(label(m, p, "body", "m"), "fresh:body/m:0");
  // Output j is the NetOutput input carrying _parent_node_index = j.
  EXPECT_EQ(label(m, p, "root", "pc", 0), "fresh:r:0");
  EXPECT_EQ(label(m, p, "root", "pc", 1), "fresh:body/m:0");
  EXPECT_EQ(p.qualifiedName(m.findGraph("body"), m.graph(m.findGraph("body")).find("m")), "body/m");
}

TEST(MemoryPlan, IfOutputIsBoundAtRunTime) {
  Module m = parseText(R"(
graph root {
  c   = Data() {index = 0}
  x   = Data() {index = 1}
  f   = If(c, x) {subgraphs = [then, else]}
  v   = Reshape(f)
  out = NetOutput(v)
}
graph then {
  a = Data() {_parent_node_index = 1}
  o = NetOutput(a) {in0._parent_node_index = 0}
}
graph else {
  a = Data() {_parent_node_index = 1}
  r = ReLU(a)
  o = NetOutput(r) {in0._parent_node_index = 0}
}
)");
  MemoryPlan p = MemoryPlan::build(m);
  EXPECT_TRUE(p.errors().empty());
  PortId f = p.portId(0, {m.root().find("f"), 0});
  EXPECT_EQ(p.port(f).rule, BindRule::Dynamic);
  EXPECT_EQ(p.port(f).candidates.size(), 2u);
  EXPECT_EQ(label(m, p, "root", "f"), "{input1|fresh:else/r:0}");
  // A view of a dynamic binding is dynamic with the same candidates.
  PortId v = p.portId(0, {m.root().find("v"), 0});
  EXPECT_EQ(p.port(v).root, f);
  EXPECT_EQ(p.port(v).candidates, p.port(f).candidates);
}

TEST(MemoryPlan, WhileOutputIsItsInput) {
  Module m = parseText(R"(
graph root {
  x   = Data() {index = 0}
  r   = ReLU(x)
  w   = While(x, r) {subgraphs = [cond, body]}
  out = NetOutput(w:0, w:1)
}
graph cond {
  c = Data() {_parent_node_index = 0}
  o = NetOutput(c)
}
graph body {
  a = Data() {_parent_node_index = 0}
  b = Data() {_parent_node_index = 1}
  o = NetOutput(b, a) {in0._parent_node_index = 0, in1._parent_node_index = 1}
}
)");
  MemoryPlan p = MemoryPlan::build(m);
  EXPECT_TRUE(p.errors().empty());
  EXPECT_EQ(label(m, p, "root", "w", 0), "input0");
  EXPECT_EQ(label(m, p, "root", "w", 1), "fresh:r:0");
}

TEST(MemoryPlan, SizesFromTensorDescriptions) {
  Module m = parseText(R"(
graph root {
  x   = Data() {index = 0, out0.dtype = f16, out0.shape = [2, 3]}
  r   = ReLU(x) {out0.dtype = i64, out0.shape = []}
  s   = ReLU(x)
  out = NetOutput(r, s)
}
)");
  MemoryPlan p = MemoryPlan::build(m);
  auto size = [&](const char *name) {
    BufferId b = p.port(p.portId(0, {m.root().find(name), 0})).own;
    return p.buffers()[b].size;
  };
  EXPECT_EQ(size("x"), 12u);
  EXPECT_EQ(size("r"), 8u);
  EXPECT_EQ(size("s"), 16u); // default f32 [4]
}

TEST(MemoryPlan, ReboundHolderOutputIsSizedByItsDescription) {
  // A call, Case or While output bound to a variable (or viewing an input
  // by attribute) is not its body's result (semantics.md §1): its size and
  // type come from its own description, as on an ordinary op, not from
  // the result (which sized variable v by an f64 body result: issue 23).
  Module m = parseText(R"(
graph root {
  v   = Variable()
  x   = Data() {index = 0, out0.dtype = f16}
  pc  = PartitionedCall() {out0.ref_var_src_var_name = "v", subgraphs = [body]}
  cs  = Case(x) {out0.ref_var_src_var_name = "w", out0.shape = [], subgraphs = [b0, b1]}
  vw  = PartitionedCall(x) {out0.reuse_input = true, subgraphs = [vbody]}
  out = NetOutput(pc, cs, vw)
}
graph body {
  r   = Variable() {out0.dtype = f64}
  o   = NetOutput(r) {in0._parent_node_index = 0}
}
graph b0 {
  r   = ReLU()
  o   = NetOutput(r) {in0._parent_node_index = 0}
}
graph b1 {
  r   = ReLU()
  o   = NetOutput(r) {in0._parent_node_index = 0}
}
graph vbody {
  r   = ReLU() {out0.dtype = f64}
  o   = NetOutput(r) {in0._parent_node_index = 0}
}
)");
  MemoryPlan p = MemoryPlan::build(m);
  EXPECT_TRUE(p.errors().empty());
  BufferId v = p.findBuffer(BufferKind::Variable, "v");
  BufferId w = p.findBuffer(BufferKind::Variable, "w");
  ASSERT_NE(v, kNoBuffer);
  ASSERT_NE(w, kNoBuffer);
  EXPECT_EQ(p.buffers()[v].size, 16u); // f32 [4], not the body's f64 [4]
  EXPECT_EQ(p.buffers()[v].type.str(), "f32[4]");
  EXPECT_EQ(p.buffers()[w].size, 4u); // f32 [], though both branches return f32 [4]
  PortId vw = p.portId(0, {m.root().find("vw"), 0});
  EXPECT_EQ(p.portType(vw).str(), "f32[4]"); // its description, not the f64 result
  EXPECT_EQ(label(m, p, "root", "vw"), "input0");
}

TEST(MemoryPlan, UndeclaredVariableIsMarked) {
  Module m = parseText(R"(
graph root {
  x   = Data() {index = 0}
  r   = ReLU(x) {ref_var_src_var_name = "ghost"}
  v   = Variable()
  s   = ReLU(x) {ref_var_src_var_name = "v"}
  out = NetOutput(r, s)
}
)");
  MemoryPlan p = MemoryPlan::build(m);
  BufferId ghost = p.findBuffer(BufferKind::Variable, "ghost");
  BufferId v = p.findBuffer(BufferKind::Variable, "v");
  ASSERT_NE(ghost, kNoBuffer);
  ASSERT_NE(v, kNoBuffer);
  EXPECT_FALSE(p.buffers()[ghost].declared);
  EXPECT_TRUE(p.buffers()[v].declared); // declared by the Variable, whatever the order
}

TEST(MemoryPlan, DescribeListsEveryOutputAndBuffer) {
  Module m = parseText(R"(
graph root {
  x   = Data() {index = 0}
  tm  = TensorMove(x)
  out = NetOutput(tm)
}
)");
  MemoryPlan p = MemoryPlan::build(m);
  std::string text = p.describe(m);
  EXPECT_NE(text.find("tm:0 (TensorMove) -> fresh:tm:0  [copy of input 0]"), std::string::npos)
      << text;
  EXPECT_NE(text.find("input0  user-input, 16 bytes"), std::string::npos) << text;
}

} // namespace
} // namespace graphvet::oracle
