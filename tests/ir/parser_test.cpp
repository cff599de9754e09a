// What the parser builds from valid text: nodes, ids, ports, attributes,
// subgraphs, control edges, options and source locations.
#include "ir/op_library.h"
#include "ir/parser.h"
#include "ir/printer.h"

#include <gtest/gtest.h>

namespace graphvet {
namespace {

Module parseOk(const std::string &text) {
  ParseResult r = parseModule(text);
  std::string all;
  for (const Diagnostic &d : r.diagnostics)
    all += d.format("t") + "\n";
  EXPECT_TRUE(r.module.has_value()) << all;
  EXPECT_TRUE(r.diagnostics.empty()) << all;
  return r.module ? std::move(*r.module) : Module{};
}

const char *kSpecExample = R"(# Scenario 5
options {
  ge.exec.outputReuseInputMemIndexes = "0,0"
}

graph root {
  x   = Data() {index = 0}
  r   = ReLU(x)
  sib = Add(r, r)
  tm  = TensorMove(r)
  w   = Assign(tm, x)              # Assign writes input 0 in place
  pc  = PartitionedCall(w, r) {subgraphs = [body], outputs = 1}
  out = NetOutput(sib, pc:0)
  ctrl x -> r                      # control edge
}

graph body {
  a  = Data() {_parent_node_index = 0}
  b  = Data() {_parent_node_index = 1}
  m  = Mul(a, b)
  o  = NetOutput(m) {in0._parent_node_index = 0}
}
)";

TEST(Parser, BuildsTheSpecExample) {
  Module m = parseOk(kSpecExample);
  ASSERT_EQ(m.numGraphs(), 2u);
  EXPECT_EQ(m.options.at("ge.exec.outputReuseInputMemIndexes"), "0,0");
  EXPECT_EQ(m.optionLocs.at("ge.exec.outputReuseInputMemIndexes"), (SourceLoc{3, 3}));
  const Graph &root = m.root();
  EXPECT_EQ(root.name, "root");
  EXPECT_EQ(root.loc, (SourceLoc{6, 7}));
  ASSERT_EQ(root.numLiveNodes(), 7u);
  // Ids follow file order.
  const char *order[] = {"x", "r", "sib", "tm", "w", "pc", "out"};
  for (NodeId i = 0; i < 7; ++i)
    EXPECT_EQ(root.node(i).name, order[i]);
  const Node &x = root.node(root.find("x"));
  EXPECT_EQ(x.loc, (SourceLoc{7, 3}));
  EXPECT_EQ(x.intAttr("index"), 0);
  const Node &sib = root.node(root.find("sib"));
  ASSERT_EQ(sib.inputs.size(), 2u);
  EXPECT_EQ(sib.inputs[0], (OutPort{root.find("r"), 0}));
  EXPECT_EQ(sib.inputs[1], (OutPort{root.find("r"), 0}));
  const Node &r = root.node(root.find("r"));
  ASSERT_EQ(r.consumers.size(), 1u);
  EXPECT_EQ(r.consumers[0].size(), 4u); // sib x2, tm, pc
  const Node &pc = root.node(root.find("pc"));
  EXPECT_EQ(pc.numOutputs, 1u);
  EXPECT_FALSE(pc.attr("outputs")) << "outputs lives in numOutputs";
  EXPECT_FALSE(pc.attr("subgraphs")) << "subgraphs lives in Node::subgraphs";
  ASSERT_EQ(pc.subgraphs.size(), 1u);
  GraphId body = pc.subgraphs[0];
  EXPECT_EQ(m.graph(body).name, "body");
  EXPECT_EQ(m.graph(body).parentGraph, 0u);
  EXPECT_EQ(m.graph(body).parentNode, pc.id);
  EXPECT_TRUE(root.hasCtrlEdge(root.find("x"), root.find("r")));
  ASSERT_EQ(root.ctrlEdgeLocs.size(), 1u);
  EXPECT_EQ(root.ctrlEdgeLocs[0].loc, (SourceLoc{14, 3}));
  const Node &o = m.graph(body).node(m.graph(body).find("o"));
  EXPECT_EQ(o.intAttr("in0._parent_node_index"), 0);
  EXPECT_EQ(o.numOutputs, 0u);
}

TEST(Parser, ResolvesForwardReferencesAndRaisesOutputCounts) {
  Module m = parseOk("graph g {\n"
                     "  b = AddD(a:2, a)\n"
                     "  a = SplitD()\n"
                     "}\n");
  const Graph &g = m.root();
  NodeId a = g.find("a"), b = g.find("b");
  EXPECT_EQ(b, 0u);
  EXPECT_EQ(a, 1u);
  EXPECT_EQ(g.node(a).numOutputs, 3u) << "raised to cover a:2";
  EXPECT_EQ(g.node(b).inputs[0], (OutPort{a, 2}));
  EXPECT_EQ(g.node(a).consumers[2].size(), 1u);
  EXPECT_EQ(g.node(a).consumers[1].size(), 0u);
}

TEST(Parser, ExplicitOutputsWinOverTheDefault) {
  Module m = parseOk("graph g {\n  a = NetOutput() {outputs = 2}\n  d = Data() {outputs = 0}\n}\n");
  EXPECT_EQ(m.root().node(0).numOutputs, 2u);
  EXPECT_EQ(m.root().node(1).numOutputs, 0u);
}

TEST(Parser, WhileDefaultsToOneOutputPerInput) {
  Module m = parseOk("graph g {\n"
                     "  a = A()\n  b = B()\n"
                     "  w = While(a, b) {subgraphs = [c, body]}\n"
                     "  o = NetOutput(w:1)\n"
                     "}\n"
                     "graph c {\n  i = Data() {_parent_node_index = 0}\n  o = NetOutput(i)\n}\n"
                     "graph body {\n  i = Data() {_parent_node_index = 1}\n"
                     "  o = NetOutput(i) {in0._parent_node_index = 1}\n}\n");
  const Graph &g = m.root();
  const Node &w = g.node(g.find("w"));
  EXPECT_EQ(w.numOutputs, 2u);
  ASSERT_EQ(w.subgraphs.size(), 2u);
  EXPECT_EQ(m.graph(w.subgraphs[0]).name, "c");
  EXPECT_EQ(m.graph(w.subgraphs[1]).name, "body");
}

TEST(Parser, AcceptsQuotedNamesKeywordsAndEscapes) {
  Module m = parseOk("graph \"my graph\" {\n"
                     "  \"layer/1:relu\" = ReLU()\n"
                     "  \"graph\" = A(\"layer/1:relu\")\n"
                     "  \"_\" = B(\"graph\", _)\n"
                     "  q = C(\"_\") {s = \"a\\\"b\\\\c\\nd\\te\", t = \"\"}\n"
                     "  ctrl \"layer/1:relu\" -> q\n"
                     "}\n");
  const Graph &g = m.root();
  EXPECT_EQ(g.name, "my graph");
  NodeId relu = g.find("layer/1:relu"), kw = g.find("graph"), us = g.find("_"), q = g.find("q");
  ASSERT_NE(relu, kNoNode);
  ASSERT_NE(kw, kNoNode);
  ASSERT_NE(us, kNoNode);
  EXPECT_EQ(g.node(kw).inputs[0], (OutPort{relu, 0}));
  ASSERT_EQ(g.node(us).inputs.size(), 2u);
  EXPECT_EQ(g.node(us).inputs[0], (OutPort{kw, 0}));
  EXPECT_FALSE(g.node(us).inputs[1]) << "bare _ is an unconnected slot";
  EXPECT_EQ(g.node(q).inputs[0], (OutPort{us, 0})) << "quoted \"_\" is a node";
  EXPECT_EQ(*g.node(q).stringAttr("s"), "a\"b\\c\nd\te");
  EXPECT_EQ(*g.node(q).stringAttr("t"), "");
  EXPECT_TRUE(g.hasCtrlEdge(relu, q));
}

TEST(Parser, ParsesEveryValueKind) {
  Module m = parseOk("graph g {\n"
                     "  x = A() {i = -9223372036854775808, j = 007, b = true, c = false,\n"
                     "           s = \"str\", d = f16, l = [1, [true, x], \"s\", []],\n"
                     "           out0.shape = [2, 3], graph = options,}\n"
                     "}\n");
  const Node &x = m.root().node(0);
  EXPECT_EQ(x.intAttr("i"), INT64_MIN);
  EXPECT_EQ(x.intAttr("j"), 7);
  EXPECT_TRUE(x.attr("b")->isBool() && x.attr("b")->asBool());
  EXPECT_TRUE(x.attr("c")->isBool() && !x.attr("c")->asBool());
  EXPECT_TRUE(x.attr("s")->isString());
  EXPECT_TRUE(x.attr("d")->isIdent());
  EXPECT_EQ(x.attr("d")->asIdent(), "f16");
  const AttrValue &l = *x.attr("l");
  ASSERT_TRUE(l.isList());
  ASSERT_EQ(l.asList().size(), 4u);
  EXPECT_EQ(l.asList()[1], AttrValue::ofList({AttrValue::ofBool(true), AttrValue::ofIdent("x")}));
  EXPECT_TRUE(l.asList()[3].isList() && l.asList()[3].asList().empty());
  EXPECT_EQ(x.attr("graph")->asIdent(), "options") << "keywords are fine as keys and values";
  EXPECT_EQ(outputBytes(x, 0), 24u);
}

TEST(Parser, WhitespaceCommentsAndLayoutAreFree) {
  Module m = parseOk("# header\r\n"
                     "graph g{a=A()b=B(a)#two statements on one line\r\n"
                     "  c = C(\n    a,\n    b:0\n  )\n"
                     "  {\n    k = 1\n  }\n"
                     "}");
  const Graph &g = m.root();
  ASSERT_EQ(g.numLiveNodes(), 3u);
  EXPECT_EQ(g.node(g.find("c")).inputs.size(), 2u);
  EXPECT_EQ(g.node(g.find("c")).intAttr("k"), 1);
  EXPECT_EQ(g.node(g.find("b")).loc, (SourceLoc{2, 14}));
}

TEST(Parser, OptionsMayComeInSeveralBlocksAnywhere) {
  Module m = parseOk("graph g {\n}\noptions {\n  b = \"2\"\n}\noptions {\n  a.x = \"1\"\n}\n");
  EXPECT_EQ(m.options.size(), 2u);
  EXPECT_EQ(m.options.at("a.x"), "1");
  EXPECT_EQ(m.root().name, "g") << "the first graph is the root wherever options are";
}

TEST(Parser, EmptyGraphAndEmptyInputList) {
  Module m = parseOk("graph g {\n  n = NoOp()\n}\n");
  EXPECT_EQ(m.root().node(0).inputs.size(), 0u);
  Module e = parseOk("graph g {}");
  EXPECT_EQ(e.root().numLiveNodes(), 0u);
}

TEST(Parser, SubgraphsAreAttachedInListOrder) {
  Module m = parseOk("graph g {\n"
                     "  c = A()\n"
                     "  k = Case(c) {subgraphs = [b2, b0, \"b 1\"]}\n"
                     "}\n"
                     "graph b0 {\n}\ngraph \"b 1\" {\n}\ngraph b2 {\n}\n");
  const Node &k = m.root().node(m.root().find("k"));
  ASSERT_EQ(k.subgraphs.size(), 3u);
  EXPECT_EQ(m.graph(k.subgraphs[0]).name, "b2");
  EXPECT_EQ(m.graph(k.subgraphs[1]).name, "b0");
  EXPECT_EQ(m.graph(k.subgraphs[2]).name, "b 1");
  // Graph ids follow file order; canonical order follows first reference.
  EXPECT_EQ(m.findGraph("b0"), 1u);
  std::vector<GraphId> order = m.canonicalGraphOrder();
  ASSERT_EQ(order.size(), 4u);
  EXPECT_EQ(m.graph(order[1]).name, "b2");
}

TEST(Parser, ParseFileReadsFromDisk) {
  ParseResult r = parseFile(std::string(GRAPHVET_SOURCE_DIR) + "/corpus/spec-format-example.graph");
  ASSERT_TRUE(r.module.has_value());
  EXPECT_EQ(r.module->root().numLiveNodes(), 7u);
}

TEST(Parser, SurvivesHostileBytes) {
  // Every single-byte value and some binary junk: never crashes, always
  // either parses or reports at least one error.
  for (int c = 0; c < 256; ++c) {
    std::string text = "graph g {\n  x = A() {s = \"";
    text += static_cast<char>(c);
    text += "\"}\n  ";
    text += static_cast<char>(c);
    text += "\n}\n";
    ParseResult r = parseModule(text);
    EXPECT_TRUE(r.module.has_value() || !r.diagnostics.empty());
  }
  std::string junk;
  for (int i = 0; i < 4096; ++i)
    junk += static_cast<char>((i * 7919 + 13) % 256);
  ParseResult r = parseModule(junk);
  EXPECT_FALSE(r.module.has_value());
  EXPECT_FALSE(r.diagnostics.empty());
  // Deep but unbalanced brackets must not recurse.
  ParseResult deep = parseModule("graph g {\n  x = A() {v = " + std::string(100000, '[') + "\n}\n");
  EXPECT_FALSE(deep.module.has_value());
}

} // namespace
} // namespace graphvet
