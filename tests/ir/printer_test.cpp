// The canonical printer: exact text for representative modules, the order of
// graphs, nodes, attributes and control edges, name quoting, and the
// structural comparison used by round trips.
#include "ir/parser.h"
#include "ir/printer.h"

#include <gtest/gtest.h>

namespace graphvet {
namespace {

Module parseOk(const std::string &text) {
  ParseResult r = parseModule(text);
  EXPECT_TRUE(r.module.has_value()) << (r.diagnostics.empty() ? "" : r.diagnostics[0].message);
  return r.module ? std::move(*r.module) : Module{};
}

TEST(Printer, FormatNameQuotesOnlyWhenNeeded) {
  EXPECT_EQ(formatName("relu_1"), "relu_1");
  EXPECT_EQ(formatName("_x"), "_x");
  EXPECT_EQ(formatName("layer/1:relu"), "\"layer/1:relu\"");
  EXPECT_EQ(formatName("1abc"), "\"1abc\"");
  EXPECT_EQ(formatName("graph"), "\"graph\"");
  EXPECT_EQ(formatName("ctrl"), "\"ctrl\"");
  EXPECT_EQ(formatName("true"), "\"true\"");
  EXPECT_EQ(formatName("_"), "\"_\"") << "bare _ would mean an unconnected input";
  EXPECT_EQ(formatName(""), "\"\"");
  EXPECT_EQ(formatName("a\"b\\c\nd\te"), "\"a\\\"b\\\\c\\nd\\te\"");
}

TEST(Printer, PrintsTheCanonicalForm) {
  // Out of order on purpose: subgraph before its user, nodes before their
  // producers, attributes unsorted, ctrl edges unsorted, options unsorted.
  Module m = parseOk(R"(# comment dropped
graph main {
  out = NetOutput(k:1, "my node")
  k = Case(c, x) {subgraphs = [second, first], outputs = 2, zeta = 1, alpha = "s"}
  "my node" = Reshape(x) {out0.shape = [4], out0.dtype = f32}
  c = Const()
  x = Data() {index = 0}
  ctrl x -> c
  ctrl c -> "my node"
}
graph first {
  d = Data() {_parent_node_index = 1}
  o = NetOutput(d, d) {in1._parent_node_index = 1, in0._parent_node_index = 0}
}
graph second {
  d = Data() {_parent_node_index = 1}
  o = NetOutput(d, d) {in0._parent_node_index = 0, in1._parent_node_index = 1}
}
options {
  z = "last"
  a = "fir\"st"
}
)");
  const char *expected = R"(options {
  a = "fir\"st"
  z = "last"
}

graph main {
  x = Data() {index = 0}
  c = Const()
  k = Case(c, x) {alpha = "s", outputs = 2, subgraphs = [second, first], zeta = 1}
  "my node" = Reshape(x) {out0.dtype = f32, out0.shape = [4]}
  out = NetOutput(k:1, "my node")
  ctrl c -> "my node"
  ctrl x -> c
}

graph second {
  d = Data() {_parent_node_index = 1}
  o = NetOutput(d, d) {in0._parent_node_index = 0, in1._parent_node_index = 1}
}

graph first {
  d = Data() {_parent_node_index = 1}
  o = NetOutput(d, d) {in0._parent_node_index = 0, in1._parent_node_index = 1}
}
)";
  EXPECT_EQ(printModule(m), expected);
}

TEST(Printer, TopologicalTiesBreakByFileOrder) {
  Module m = parseOk("graph g {\n  c = C()\n  a = A()\n  b = B(a)\n  z = Z(c)\n}\n");
  EXPECT_EQ(printModule(m), "graph g {\n  c = C()\n  a = A()\n  b = B(a)\n  z = Z(c)\n}\n");
}

TEST(Printer, OutputsPrintedOnlyWhenDifferentFromTheDefault) {
  Module m = parseOk("graph g {\n"
                     "  a = A() {outputs = 1}\n" // default: dropped
                     "  b = A() {outputs = 3}\n" // kept
                     "  c = A()\n"
                     "  d = D(c:2, a, b)\n" // raises c to 3 outputs: printed
                     "  n = NetOutput(d)\n"
                     "}\n");
  EXPECT_EQ(printModule(m), "graph g {\n"
                            "  a = A()\n"
                            "  b = A() {outputs = 3}\n"
                            "  c = A() {outputs = 3}\n"
                            "  d = D(c:2, a, b)\n"
                            "  n = NetOutput(d)\n"
                            "}\n");
}

TEST(Printer, PrintsProgrammaticModules) {
  Module m;
  GraphId g = m.addGraph("g");
  Graph &graph = m.graph(g);
  NodeId a = graph.addNode("a", "Data");
  graph.node(a).attrs["index"] = AttrValue::ofInt(0);
  NodeId t = graph.addNode("t", "TensorMove", {OutPort{a, 0}});
  NodeId u = graph.addNode("u", "Foo", {std::nullopt, OutPort{t, 0}});
  graph.node(u).attrs["v"] = AttrValue::ofList({AttrValue::ofString("x\ny"), AttrValue::ofInt(-3)});
  graph.addCtrlEdge(a, u);
  EXPECT_EQ(printModule(m), "graph g {\n"
                            "  a = Data() {index = 0}\n"
                            "  t = TensorMove(a)\n"
                            "  u = Foo(_, t) {v = [\"x\\ny\", -3]}\n"
                            "  ctrl a -> u\n"
                            "}\n");
  // Tombstoned nodes disappear from the text.
  graph.removeNode(t);
  EXPECT_EQ(printModule(m), "graph g {\n"
                            "  a = Data() {index = 0}\n"
                            "  u = Foo(_, _) {v = [\"x\\ny\", -3]}\n"
                            "  ctrl a -> u\n"
                            "}\n");
}

TEST(Printer, CyclicModulesStillPrintInIdOrder) {
  Module m;
  GraphId g = m.addGraph("g");
  Graph &graph = m.graph(g);
  NodeId a = graph.addNode("a", "A");
  NodeId b = graph.addNode("b", "B", {OutPort{a, 0}});
  graph.appendInput(a, OutPort{b, 0});
  EXPECT_EQ(printModule(m), "graph g {\n  a = A(b)\n  b = B(a)\n}\n");
}

TEST(Printer, PrintIsAFixpointAfterOneRound) {
  const char *text = "options {\n  k = \"v\\t\"\n}\n"
                     "graph \"r o o t\" {\n"
                     "  \"x y\" = Data() {index = 0}\n"
                     "  t = TensorMove(\"x y\") {note = \"a\\\\b\"}\n"
                     "  p = PartitionedCall(t) {subgraphs = [\"s-1\"]}\n"
                     "  o = NetOutput(p)\n"
                     "}\n"
                     "graph \"s-1\" {\n"
                     "  d = Data() {_parent_node_index = 0}\n"
                     "  o = NetOutput(d) {in0._parent_node_index = 0}\n"
                     "}\n";
  Module m1 = parseOk(text);
  std::string p1 = printModule(m1);
  Module m2 = parseOk(p1);
  EXPECT_EQ(printModule(m2), p1);
  EXPECT_FALSE(structuralDifference(m1, m2));
}

TEST(Printer, StructuralDifferenceFindsEachKindOfChange) {
  const char *base = "graph g {\n  a = A()\n  b = B(a) {k = 1}\n  c = C(b)\n  ctrl a -> c\n}\n";
  Module m = parseOk(base);
  EXPECT_FALSE(structuralDifference(m, parseOk(base)));
  auto differs = [&](const std::string &other, const std::string &needle) {
    auto d = structuralDifference(m, parseOk(other));
    ASSERT_TRUE(d) << other;
    EXPECT_NE(d->find(needle), std::string::npos) << *d;
  };
  differs("graph g {\n  a = A()\n  b = X(a) {k = 1}\n  c = C(b)\n  ctrl a -> c\n}\n", "type");
  differs("graph g {\n  a = A()\n  b = B(a) {k = 2}\n  c = C(b)\n  ctrl a -> c\n}\n", "attributes");
  differs("graph g {\n  a = A()\n  b = B(a) {k = 1}\n  c = C(a)\n  ctrl a -> c\n}\n", "inputs");
  differs("graph g {\n  a = A()\n  b = B(a) {k = 1}\n  c = C(b)\n  ctrl a -> b\n}\n", "control");
  differs("graph g {\n  a = A()\n  b = B(a) {k = 1}\n  d = C(b)\n  ctrl a -> d\n}\n", "only in");
  differs("graph g {\n  a = A() {outputs = 2}\n  b = B(a) {k = 1}\n  c = C(b)\n  ctrl a -> c\n}\n",
          "outputs");
  differs("options {\n  x = \"1\"\n}\n" + std::string(base), "options");
  differs("graph h {\n  a = A()\n  b = B(a) {k = 1}\n  c = C(b)\n  ctrl a -> c\n}\n", "graph");
}

} // namespace
} // namespace graphvet
