// The structural verifier: one test per error class, on parsed text (with
// locations) and on programmatic modules (without), including modules that
// passes have mutated (tombstones, removed graphs, broken bookkeeping).
#include "ir/parser.h"
#include "ir/verifier.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace graphvet {
namespace {

/// All diagnostics of parsing `text`, as "LINE:COL: MESSAGE".
std::vector<std::string> errorsOf(const std::string &text) {
  std::vector<std::string> out;
  for (const Diagnostic &d : parseModule(text).diagnostics)
    out.push_back(fmt::format("{}:{}: {}", d.loc.line, d.loc.col, d.message));
  return out;
}

using Errors = std::vector<std::string>;

/// Wraps nodes into a root graph.
std::string root(const std::string &body, const std::string &rest = "") {
  return "graph g {\n" + body + "}\n" + rest;
}

TEST(Verifier, AcceptsAValidModule) {
  EXPECT_EQ(errorsOf(root("  x = Data() {index = 0}\n"
                          "  t = TensorMove(x)\n"
                          "  p = PartitionedCall(t, x) {subgraphs = [s]}\n"
                          "  o = NetOutput(p)\n",
                          "graph s {\n"
                          "  a = Data() {_parent_node_index = 0}\n"
                          "  b = Data() {_parent_node_index = 1}\n"
                          "  m = MulD(a, b) {out0.dtype = f16, out0.shape = [2, 2]}\n"
                          "  o = NetOutput(m) {in0._parent_node_index = 0}\n"
                          "}\n")),
            Errors{});
}

TEST(Verifier, Cycles) {
  EXPECT_EQ(errorsOf(root("  c = C(b)\n  a = A(c)\n  b = B(a)\n")),
            Errors{"2:3: cycle through c -> a -> b -> c"})
      << "starts at the first node in file order, follows edges";
  EXPECT_EQ(errorsOf(root("  x = X(x)\n")), Errors{"2:3: cycle through x -> x"});
  EXPECT_EQ(errorsOf(root("  \"a b\" = A(c)\n  c = C(\"a b\")\n")),
            Errors{"2:3: cycle through \"a b\" -> c -> \"a b\""});
}

TEST(Verifier, TensorMoveInputs) {
  EXPECT_EQ(errorsOf(root("  a = A()\n  t = TensorMove(a, a)\n")),
            Errors{"3:3: TensorMove 't' must have exactly one input, has 2"});
  EXPECT_EQ(errorsOf(root("  t = TensorMove()\n")),
            Errors{"2:3: TensorMove 't' must have exactly one input, has 0"});
  EXPECT_EQ(errorsOf(root("  t = TensorMove(_)\n")),
            Errors{"2:3: input of TensorMove 't' is not connected"});
}

TEST(Verifier, RootDataIndex) {
  EXPECT_EQ(errorsOf(root("  a = Data() {index = -1}\n")),
            Errors{"2:3: index of Data 'a' must be a non-negative integer"});
  EXPECT_EQ(errorsOf(root("  a = Data() {index = \"0\"}\n")),
            Errors{"2:3: index of Data 'a' must be a non-negative integer"});
  EXPECT_EQ(errorsOf(root("  a = Data() {index = 1}\n  b = AippData() {index = 1}\n")),
            Errors{"3:3: duplicate AippData index 1 (also on 'a')"});
  EXPECT_EQ(errorsOf(root("  a = Data()\n  b = Data()\n")), Errors{})
      << "Data without index is caller memory";
}

const char *kCallHeader = "  x = A()\n  y = B()\n  p = PartitionedCall(x, y) {subgraphs = [s]}\n"
                          "  o = NetOutput(p)\n";

TEST(Verifier, SubgraphDataParentIndex) {
  EXPECT_EQ(errorsOf(root(kCallHeader, "graph s {\n  d = Data()\n"
                                       "  o = NetOutput(d) {in0._parent_node_index = 0}\n}\n")),
            Errors{"8:3: Data 'd' in subgraph 's' has no _parent_node_index"});
  EXPECT_EQ(errorsOf(root(kCallHeader, "graph s {\n  d = Data() {_parent_node_index = 2}\n"
                                       "  o = NetOutput(d) {in0._parent_node_index = 0}\n}\n")),
            Errors{"8:3: _parent_node_index 2 of 'd' out of range for 'p' with 2 inputs"});
  EXPECT_EQ(errorsOf(root(kCallHeader, "graph s {\n  d = Data() {_parent_node_index = 1}\n"
                                       "  e = Data() {_parent_node_index = 1}\n"
                                       "  o = NetOutput(d) {in0._parent_node_index = 0}\n}\n")),
            Errors{"9:3: duplicate _parent_node_index 1 in subgraph 's' (also on 'd')"});
  EXPECT_EQ(errorsOf(root(kCallHeader, "graph s {\n  d = Data() {_parent_node_index = x}\n"
                                       "  o = NetOutput(d) {in0._parent_node_index = 0}\n}\n")),
            Errors{"8:3: _parent_node_index of 'd' must be an integer"});
}

TEST(Verifier, SubgraphNetOutputParentIndex) {
  EXPECT_EQ(errorsOf(root(kCallHeader, "graph s {\n  d = Data() {_parent_node_index = 0}\n"
                                       "  o = NetOutput(d) {in0._parent_node_index = 1}\n}\n")),
            (Errors{"4:3: output 0 of 'p' is used but subgraph 's' does not produce it",
                    "9:3: in0._parent_node_index = 1 of 'o' out of range for 'p' with 1 output"}));
  EXPECT_EQ(errorsOf(root(kCallHeader, "graph s {\n  d = Data() {_parent_node_index = 0}\n"
                                       "  o = NetOutput(d, d) {in0._parent_node_index = 0,"
                                       " in1._parent_node_index = 0}\n}\n")),
            Errors{"9:3: NetOutput 'o' hands back output 0 of 'p' twice (inputs 0 and 1)"});
  EXPECT_EQ(errorsOf(root(kCallHeader, "graph s {\n  d = Data() {_parent_node_index = 0}\n"
                                       "  o = NetOutput(d)\n}\n")),
            Errors{"4:3: output 0 of 'p' is used but subgraph 's' does not produce it"});
  // An unused output need not be produced (a call run for its side effects).
  EXPECT_EQ(errorsOf(root("  x = A()\n  p = PartitionedCall(x) {subgraphs = [s]}\n",
                          "graph s {\n  d = Data() {_parent_node_index = 0}\n"
                          "  w = Assign(d, d)\n}\n")),
            Errors{});
}

TEST(Verifier, AtMostOneNetOutputPerGraph) {
  EXPECT_EQ(errorsOf(root("  a = A()\n  o1 = NetOutput(a)\n  o2 = NetOutput(a)\n")),
            Errors{"4:3: graph 'g' has more than one NetOutput ('o1' and 'o2')"});
}

TEST(Verifier, SubgraphCountsPerHolder) {
  const char *branches = "graph t {\n}\ngraph e {\n}\ngraph z {\n}\n";
  EXPECT_EQ(
      errorsOf(root("  c = A()\n  i = If(c) {subgraphs = [t, e, z], outputs = 0}\n", branches)),
      Errors{"3:3: If 'i' needs 2 subgraphs (then, else), has 3"});
  EXPECT_EQ(errorsOf(root("  c = A()\n  w = While(c) {subgraphs = [t]}\n", "graph t {\n}\n")),
            Errors{"3:3: While 'w' needs 2 subgraphs (cond, body), has 1"});
  EXPECT_EQ(errorsOf(root("  c = A()\n  k = Case(c) {outputs = 0}\n")),
            Errors{"3:3: Case 'k' needs at least 1 subgraph"});
  EXPECT_EQ(errorsOf(root("  p = PartitionedCall() {outputs = 0}\n")),
            Errors{"2:3: PartitionedCall 'p' needs 1 subgraph, has 0"});
  EXPECT_EQ(errorsOf(root("  r = ReLU() {subgraphs = [t]}\n", "graph t {\n}\n")),
            Errors{"2:3: ReLU 'r' cannot hold subgraphs"});
}

TEST(Verifier, BranchesAgreeOnTheirOutputs) {
  const char *branches = "graph t {\n  d = Data() {_parent_node_index = 1}\n"
                         "  o = NetOutput(d, d) {in0._parent_node_index = 0,"
                         " in1._parent_node_index = 1}\n}\n"
                         "graph e {\n  d = Data() {_parent_node_index = 1}\n"
                         "  o = NetOutput(d) {in0._parent_node_index = 0}\n}\n";
  EXPECT_EQ(errorsOf(root("  c = A()\n  x = B()\n"
                          "  i = If(c, x) {subgraphs = [t, e], outputs = 2}\n",
                          branches)),
            Errors{"4:3: branches of 'i' disagree on outputs: 't' produces [0, 1], 'e' produces "
                   "[0]"});
  EXPECT_EQ(errorsOf(root("  c = A()\n  x = B()\n"
                          "  i = Case(c, x) {subgraphs = [e, e2]}\n  o = NetOutput(i)\n",
                          "graph e {\n  d = Data() {_parent_node_index = 1}\n"
                          "  o = NetOutput(d) {in0._parent_node_index = 0}\n}\n"
                          "graph e2 {\n  d = Data() {_parent_node_index = 0}\n"
                          "  o = NetOutput(d) {in0._parent_node_index = 0}\n}\n")),
            Errors{});
  EXPECT_EQ(errorsOf(root("  i = If() {subgraphs = [t, e], outputs = 0}\n",
                          "graph t {\n}\ngraph e {\n}\n")),
            Errors{"2:3: If 'i' needs its condition as input 0"});
}

TEST(Verifier, WhileShape) {
  const char *loop = "graph c {\n  d = Data() {_parent_node_index = 0}\n  o = NetOutput(d)\n}\n"
                     "graph b {\n  d = Data() {_parent_node_index = 0}\n"
                     "  o = NetOutput(d) {in0._parent_node_index = 0}\n}\n";
  EXPECT_EQ(
      errorsOf(root("  x = A()\n  w = While(x) {subgraphs = [c, b]}\n  o = NetOutput(w)\n", loop)),
      Errors{});
  EXPECT_EQ(errorsOf(root("  x = A()\n  w = While(x) {subgraphs = [c, b], outputs = 2}\n", loop)),
            Errors{"3:3: While 'w' has 2 outputs but 1 input (output j is input j)"});
  EXPECT_EQ(
      errorsOf(root("  x = A()\n  w = While(x) {subgraphs = [c, b], max_iterations = -1}\n", loop)),
      Errors{"3:3: max_iterations of 'w' must be a non-negative integer"});
  EXPECT_EQ(errorsOf(root("  x = A()\n  w = While(x) {subgraphs = [c, b]}\n",
                          "graph c {\n}\n"
                          "graph b {\n  d = Data() {_parent_node_index = 0}\n}\n")),
            Errors{"3:3: cond subgraph 'c' of While 'w' has no NetOutput input 0 for the "
                   "condition"});
}

TEST(Verifier, SubgraphReferences) {
  EXPECT_EQ(errorsOf(root("  a = A()\n", "graph s {\n}\n")),
            Errors{"4:7: subgraph 's' is not referenced by any node"});
  EXPECT_EQ(
      errorsOf(root("  a = A()\n",
                    "graph a1 {\n  p = PartitionedCall() {subgraphs = [b1], outputs = 0}\n}\n"
                    "graph b1 {\n  q = PartitionedCall() {subgraphs = [a1], outputs = 0}\n}\n"
                    "graph self {\n  r = PartitionedCall() {subgraphs = [self], outputs = 0}\n"
                    "}\n")),
      (Errors{"4:7: subgraphs nest in a cycle: a1 -> b1 -> a1",
              "10:7: subgraphs nest in a cycle: self -> self"}));
}

TEST(Verifier, MemoryAttributes) {
  auto one = [](const std::string &node) { return errorsOf(root("  a = A()\n" + node)); };
  EXPECT_EQ(one("  n = Assign(a) {out0.ref_input = 1}\n"),
            Errors{"3:3: out0.ref_input = 1 out of range for 'n' with 1 input"});
  EXPECT_EQ(one("  n = Foo(a) {out0.ref_input = true}\n"),
            Errors{"3:3: out0.ref_input of 'n' must be an integer"});
  EXPECT_EQ(one("  n = Foo(a) {out0.reuse_input = 1}\n"),
            Errors{"3:3: out0.reuse_input of 'n' must be true or false"});
  EXPECT_EQ(one("  n = Foo(a) {out0.reuse_input = true, out0.reuse_input_index = 3}\n"),
            Errors{"3:3: out0.reuse_input_index = 3 out of range for 'n' with 1 input"});
  EXPECT_EQ(one("  n = Foo() {out0.reuse_input = true}\n"),
            Errors{"3:3: out0.reuse_input of 'n' views input 0, but it has no inputs"});
  EXPECT_EQ(one("  n = Foo(a) {out0.dtype = f17}\n"),
            Errors{"3:3: unknown dtype 'f17' in out0.dtype of 'n'"});
  EXPECT_EQ(one("  n = Foo(a) {out0.dtype = 4}\n"),
            Errors{"3:3: out0.dtype of 'n' must be a dtype name"});
  EXPECT_EQ(one("  n = Foo(a) {out0.shape = [2, -1]}\n"),
            Errors{"3:3: out0.shape of 'n' must be a list of non-negative integers"});
  EXPECT_EQ(one("  n = Foo(a) {out0.shape = 4}\n"),
            Errors{"3:3: out0.shape of 'n' must be a list of non-negative integers"});
  EXPECT_EQ(one("  n = Foo(a) {out0.shape = [4096, 4097]}\n"),
            Errors{"3:3: output 0 of 'n' is larger than 67108864 bytes"});
  EXPECT_EQ(one("  n = Foo(a) {out1.dtype = f16}\n"),
            Errors{"3:3: attribute 'out1.dtype' names output 1 but 'n' has 1 output"});
  EXPECT_EQ(one("  n = Foo(a) {in1.x = 0}\n"),
            Errors{"3:3: attribute 'in1.x' names input 1 but 'n' has 1 input"});
  EXPECT_EQ(one("  n = Foo(a) {out00.dtype = f16}\n"),
            Errors{"3:3: malformed port attribute 'out00.dtype' of 'n'"});
  EXPECT_EQ(one("  n = Foo(a) {_input_mutable = 1}\n"),
            Errors{"3:3: _input_mutable of 'n' must be true or false"});
  EXPECT_EQ(one("  n = Foo(a) {continuous_input = \"yes\"}\n"),
            Errors{"3:3: continuous_input of 'n' must be true or false"});
  EXPECT_EQ(one("  n = Foo(a) {ref_var_src_var_name = 3}\n"),
            Errors{"3:3: ref_var_src_var_name of 'n' must be a name"});
  EXPECT_EQ(one("  n = Foo(a) {out0.ref_var_src_var_name = [v]}\n"),
            Errors{"3:3: out0.ref_var_src_var_name of 'n' must be a name"});
  EXPECT_EQ(one("  n = Foo(a) {input0.x = 0, out0.ref_var_src_var_name = v}\n"), Errors{})
      << "input0.x is not a port attribute";
}

TEST(Verifier, ReportsIndependentErrorsInSourceOrder) {
  EXPECT_EQ(errorsOf(root("  t = TensorMove(_)\n  d = Data() {index = -2}\n  x = X(x)\n")),
            (Errors{"2:3: input of TensorMove 't' is not connected",
                    "3:3: index of Data 'd' must be a non-negative integer",
                    "4:3: cycle through x -> x"}));
}

// --- programmatic modules ---------------------------------------------------

std::vector<std::string> messagesOf(const Module &m) {
  std::vector<std::string> out;
  for (const Diagnostic &d : verifyModule(m)) {
    EXPECT_EQ(d.loc, (SourceLoc{0, 0}));
    out.push_back(d.message);
  }
  return out;
}

TEST(VerifierProgrammatic, NamesTheGraphWhenThereIsNoLocation) {
  Module m;
  GraphId g = m.addGraph("main");
  Graph &graph = m.graph(g);
  graph.addNode("t", "TensorMove", {std::nullopt});
  EXPECT_EQ(messagesOf(m), Errors{"graph 'main': input of TensorMove 't' is not connected"});
}

TEST(VerifierProgrammatic, EmptyModule) {
  Module m;
  EXPECT_EQ(messagesOf(m), Errors{"module has no graphs"});
}

TEST(VerifierProgrammatic, TombstonesAndRemovedGraphsAreSkipped) {
  Module m;
  GraphId g = m.addGraph("g");
  GraphId s = m.addGraph("s");
  Graph &graph = m.graph(g);
  NodeId x = graph.addNode("x", "Data");
  NodeId t = graph.addNode("t", "TensorMove", {OutPort{x, 0}});
  NodeId p = graph.addNode("p", "PartitionedCall", {OutPort{t, 0}}, 0);
  m.attachSubgraph(g, p, s);
  Graph &sub = m.graph(s);
  NodeId d = sub.addNode("d", "Data");
  sub.node(d).attrs["_parent_node_index"] = AttrValue::ofInt(0);
  EXPECT_EQ(messagesOf(m), Errors{});
  // Deleting the TensorMove leaves p's input unconnected: still valid.
  graph.replaceAllUses({t, 0}, {x, 0});
  graph.removeNode(t);
  EXPECT_EQ(messagesOf(m), Errors{});
  // A duplicate name on a tombstone is not a duplicate.
  graph.addNode("t", "ReLU", {OutPort{x, 0}});
  EXPECT_EQ(messagesOf(m), Errors{});
  // Removing the subgraph while p still holds it is an error...
  m.removeGraph(s);
  EXPECT_EQ(messagesOf(m), Errors{"graph 'g': 'p' holds removed graph 's'"});
  // ...and fine once p is gone too.
  graph.removeNode(p);
  EXPECT_EQ(messagesOf(m), Errors{});
}

TEST(VerifierProgrammatic, BrokenBookkeepingIsReportedNotCrashedOn) {
  Module m;
  GraphId g = m.addGraph("g");
  Graph &graph = m.graph(g);
  NodeId a = graph.addNode("a", "A");
  NodeId b = graph.addNode("b", "B", {OutPort{a, 0}});
  // A pass that edits inputs directly, bypassing setInput.
  graph.node(b).inputs.push_back(OutPort{a, 0});
  EXPECT_EQ(messagesOf(m), Errors{"graph 'g': consumer lists disagree with the node inputs"});
  graph.node(b).inputs.pop_back();
  graph.node(b).inputs.push_back(OutPort{77, 0});
  EXPECT_EQ(messagesOf(m), Errors{"graph 'g': input 1 of 'b' refers to a removed node"});
  graph.node(b).inputs.back() = OutPort{a, 5};
  EXPECT_EQ(messagesOf(m), Errors{"graph 'g': input index 5 out of range for 'a' with 1 output"});
  graph.node(b).inputs.pop_back();
  graph.node(a).ctrlOut.push_back(b); // without the matching ctrlIn
  EXPECT_EQ(messagesOf(m), Errors{"graph 'g': control edge lists are inconsistent"});
  graph.node(b).ctrlIn.push_back(a);
  EXPECT_EQ(messagesOf(m), Errors{});
}

TEST(VerifierProgrammatic, ConsumerListsHoldEachEdgeExactlyOnce) {
  Module m;
  GraphId g = m.addGraph("g");
  Graph &graph = m.graph(g);
  NodeId a = graph.addNode("a", "A");
  NodeId b = graph.addNode("b", "B", {OutPort{a, 0}, OutPort{a, 0}});
  NodeId c = graph.addNode("c", "C", {OutPort{b, 0}});
  const Errors disagree{"graph 'g': consumer lists disagree with the node inputs"};
  ASSERT_EQ(messagesOf(m), Errors{});
  std::vector<InPort> &readersOfA = graph.node(a).consumers[0];
  ASSERT_EQ(readersOfA.size(), 2u);
  const std::vector<InPort> good = readersOfA;
  // As many entries as edges, but one slot named twice and one not at all.
  readersOfA = {InPort{b, 0}, InPort{b, 0}};
  EXPECT_EQ(messagesOf(m), disagree);
  // An entry for a slot that reads another port.
  readersOfA = {InPort{b, 0}, InPort{c, 0}};
  EXPECT_EQ(messagesOf(m), disagree);
  // An entry for a slot the reader does not have.
  readersOfA = {InPort{b, 0}, InPort{b, 7}};
  EXPECT_EQ(messagesOf(m), disagree);
  // An entry naming a node that does not exist.
  readersOfA = {InPort{b, 0}, InPort{99, 1}};
  EXPECT_EQ(messagesOf(m), disagree);
  // A missing entry, and an extra one.
  readersOfA = {InPort{b, 0}};
  EXPECT_EQ(messagesOf(m), disagree);
  readersOfA = {InPort{b, 0}, InPort{b, 1}, InPort{b, 1}};
  EXPECT_EQ(messagesOf(m), disagree);
  // The order of the entries does not matter.
  readersOfA = {good[1], good[0]};
  EXPECT_EQ(messagesOf(m), Errors{});
  // An entry for a removed node's slot: c is gone, b still lists it.
  readersOfA = good;
  graph.removeNode(c);
  ASSERT_EQ(messagesOf(m), Errors{});
  graph.node(b).consumers[0].push_back(InPort{c, 0});
  EXPECT_EQ(messagesOf(m), disagree);
}

TEST(VerifierProgrammatic, SubgraphOwnership) {
  Module m;
  GraphId g = m.addGraph("g");
  GraphId s = m.addGraph("s");
  Graph &graph = m.graph(g);
  NodeId p = graph.addNode("p", "PartitionedCall", {}, 0);
  NodeId q = graph.addNode("q", "PartitionedCall", {}, 0);
  m.attachSubgraph(g, p, s);
  m.attachSubgraph(g, q, s);
  EXPECT_EQ(messagesOf(m),
            (Errors{"graph 'g': subgraph 's' referenced twice",
                    "graph 's': subgraph 's' has a parent link that disagrees with its owner"}));
  graph.node(q).subgraphs = {0};
  EXPECT_EQ(messagesOf(m),
            (Errors{"graph 'g': root graph 'g' cannot be a subgraph",
                    "graph 's': subgraph 's' has a parent link that disagrees with its owner"}));
  graph.node(q).subgraphs = {9};
  EXPECT_EQ(messagesOf(m).front(), "graph 'g': 'q' holds unknown graph #9");
}

TEST(VerifierProgrammatic, ReservedAndUnprintableAttributes) {
  Module m;
  GraphId g = m.addGraph("g");
  Graph &graph = m.graph(g);
  NodeId a = graph.addNode("a", "Not A Type");
  graph.node(a).attrs["outputs"] = AttrValue::ofInt(2);
  graph.node(a).attrs["bad key"] = AttrValue::ofInt(2);
  graph.node(a).attrs["v"] = AttrValue::ofList({AttrValue::ofIdent("not ident")});
  graph.addNode("a", "B");
  m.options["ok.key"] = "1";
  m.options["bad key"] = "1";
  EXPECT_EQ(messagesOf(m),
            (Errors{"option name 'bad key' is not a valid key",
                    "graph 'g': op type 'Not A Type' of 'a' is not an identifier",
                    "graph 'g': attribute name 'bad key' of 'a' is not a valid key",
                    "graph 'g': attribute 'outputs' of 'a' is held by the node itself, not its "
                    "attribute map",
                    "graph 'g': attribute 'v' of 'a' holds an invalid identifier",
                    "graph 'g': duplicate node 'a'"}));
}

} // namespace
} // namespace graphvet
