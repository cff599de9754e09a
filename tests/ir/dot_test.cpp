// DOT export: clusters nested inside their owner, dashed control edges,
// highlighted TensorMoves and nodes, output labels, escaping, determinism,
// and (when graphviz is installed) that `dot` accepts the text.
#include "ir/dot.h"
#include "ir/graphviz.h"
#include "ir/parser.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace graphvet {
namespace {

const char *kText = R"(graph root {
  x = Data() {index = 0}
  t = TensorMove(x)
  "a<b>&\"c\"" = Split(t) {outputs = 2}
  p = PartitionedCall(x) {subgraphs = [body]}
  o = NetOutput(p, "a<b>&\"c\"":1)
  ctrl t -> p
}

graph body {
  d = Data() {_parent_node_index = 0}
  q = PartitionedCall(d) {subgraphs = [inner]}
  o = NetOutput(q) {in0._parent_node_index = 0}
}

graph inner {
  d = Data() {_parent_node_index = 0}
  o = NetOutput(d) {in0._parent_node_index = 0}
}
)";

Module parseOk(const std::string &text) {
  ParseResult r = parseModule(text);
  EXPECT_TRUE(r.module.has_value()) << (r.diagnostics.empty() ? "" : r.diagnostics[0].message);
  return r.module ? std::move(*r.module) : Module{};
}

size_t count(const std::string &hay, const std::string &needle) {
  size_t n = 0;
  for (size_t pos = hay.find(needle); pos != std::string::npos; pos = hay.find(needle, pos + 1))
    ++n;
  return n;
}

TEST(Dot, SubgraphClustersNestInsideTheirOwner) {
  Module m = parseOk(kText);
  std::string dot = toDot(m);
  ASSERT_EQ(dot.rfind("digraph graphvet {", 0), 0u);
  size_t root = dot.find("subgraph cluster_g0 {");
  size_t holder = dot.find("subgraph cluster_g0n3_holder {");
  size_t owner = dot.find("g0n3 [label=");
  size_t body = dot.find("subgraph cluster_g1 {");
  size_t innerHolder = dot.find("subgraph cluster_g1n1_holder {");
  size_t inner = dot.find("subgraph cluster_g2 {");
  ASSERT_NE(root, std::string::npos);
  ASSERT_NE(holder, std::string::npos);
  ASSERT_NE(body, std::string::npos);
  ASSERT_NE(inner, std::string::npos);
  EXPECT_LT(root, holder);
  EXPECT_LT(holder, owner) << "the owner node is drawn inside its holder cluster";
  EXPECT_LT(owner, body);
  EXPECT_LT(body, innerHolder);
  EXPECT_LT(innerHolder, inner);
  EXPECT_NE(dot.find("(body of p)"), std::string::npos);
  // Each cluster is opened exactly once.
  EXPECT_EQ(count(dot, "subgraph cluster_g1 {"), 1u);
  EXPECT_EQ(count(dot, "subgraph cluster_g2 {"), 1u);
}

TEST(Dot, ControlEdgesAreDashedAndDataEdgesAreNot) {
  std::string dot = toDot(parseOk(kText));
  EXPECT_NE(dot.find("g0n1 -> g0n3 [style=dashed"), std::string::npos) << dot;
  EXPECT_EQ(count(dot, "style=dashed, color"), 1u);
  EXPECT_NE(dot.find("g0n0 -> g0n1;"), std::string::npos) << dot;
}

TEST(Dot, TensorMovesAreFilledAndHighlightedNodesRed) {
  DotOptions opts;
  opts.highlighted.insert({1, 1}); // body/q
  std::string dot = toDot(parseOk(kText), opts);
  size_t tm = dot.find("g0n1 [label=");
  ASSERT_NE(tm, std::string::npos);
  std::string tmLine = dot.substr(tm, dot.find('\n', tm) - tm);
  EXPECT_NE(tmLine.find("filled"), std::string::npos);
  EXPECT_NE(tmLine.find("fillcolor=\"#ffb347\""), std::string::npos);
  size_t q = dot.find("g1n1 [label=");
  std::string qLine = dot.substr(q, dot.find('\n', q) - q);
  EXPECT_NE(qLine.find("color=red"), std::string::npos);
  EXPECT_NE(qLine.find("bold"), std::string::npos);
  EXPECT_EQ(count(dot, "color=red"), 1u);
}

TEST(Dot, OutputsAreLabelledAndEdgesLeaveFromTheirPort) {
  DotOptions opts;
  opts.outputLabel = [](GraphId g, OutPort p) {
    return g == 0 && p.node == 0 ? std::string("user input 0") : fmt::format("buf{}", p.index);
  };
  std::string dot = toDot(parseOk(kText), opts);
  EXPECT_NE(dot.find("out0: user input 0"), std::string::npos);
  EXPECT_NE(dot.find("port=\"o1\""), std::string::npos);
  EXPECT_NE(dot.find("out1: buf1"), std::string::npos);
  EXPECT_NE(dot.find("g0n2:o1:s -> g0n4"), std::string::npos) << dot;
  // Without labels, a single-output node has no port rows.
  std::string plain = toDot(parseOk(kText));
  EXPECT_EQ(plain.find("port=\"o0\""), plain.find("port=\"o0\"", 0));
  EXPECT_NE(plain.find("g0n0 -> g0n1;"), std::string::npos);
}

TEST(Dot, MarkedInputEdgesAreRedAndLabelled) {
  Module m = parseOk(kText);
  NodeId o = m.root().find("o");
  DotOptions opts;
  opts.markedInputs[{0, o, 1}] = "output 1 = 2 (expected <3>)";
  std::string dot = toDot(m, opts);
  size_t mark = dot.find("fontcolor=red");
  ASSERT_NE(mark, std::string::npos) << dot;
  size_t start = dot.rfind('\n', mark) + 1;
  std::string line = dot.substr(start, dot.find('\n', mark) - start);
  // The edge into input 1 of o (from the Split), not input 0 (from the call).
  EXPECT_NE(line.find(fmt::format("-> g0n{} [", o)), std::string::npos) << line;
  EXPECT_NE(line.find("headlabel=\"1\""), std::string::npos) << line;
  EXPECT_NE(line.find("color=red"), std::string::npos);
  EXPECT_NE(line.find("label=<output 1 = 2 (expected &lt;3&gt;)>"), std::string::npos);
  EXPECT_EQ(count(dot, "fontcolor=red"), 1u);
}

TEST(Dot, EscapesNamesAndIsDeterministic) {
  Module m = parseOk(kText);
  DotOptions opts;
  opts.title = "t<1>";
  std::string dot = toDot(m, opts);
  EXPECT_NE(dot.find("a&lt;b&gt;&amp;&quot;c&quot;"), std::string::npos);
  EXPECT_EQ(dot.find("a<b>"), std::string::npos);
  EXPECT_NE(dot.find("label=<t&lt;1&gt;>"), std::string::npos);
  EXPECT_EQ(dot, toDot(m, opts));
}

TEST(Dot, ControlBytesAndInvalidUtf8AreReplaced) {
  Module m;
  GraphId g = m.addGraph("g");
  m.graph(g).addNode(std::string("a\x01\xff\xc3\xa9", 5), "A");
  std::string dot = toDot(m);
  EXPECT_NE(dot.find("a&#xFFFD;&#xFFFD;\xc3\xa9"), std::string::npos);
}

TEST(Dot, GraphvizAcceptsTheOutput) {
  if (!graphvizAvailable())
    GTEST_SKIP() << "graphviz's dot is not installed";
  DotOptions opts;
  opts.outputLabel = [](GraphId, OutPort p) { return fmt::format("b{}", p.index); };
  opts.highlighted.insert({0, 1});
  std::string error;
  auto svg = renderDot(toDot(parseOk(kText), opts), "svg", error);
  ASSERT_TRUE(svg) << error;
  EXPECT_NE(svg->find("<svg"), std::string::npos);
}

} // namespace
} // namespace graphvet
