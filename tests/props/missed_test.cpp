// The missed-optimization measurement (props/missed.h) on hand-written graphs:
// the pass's decisions are given as remarks so the verdicts do not depend on
// how clever the pass currently is; one integration test runs the pipeline,
// and one the campaign.

#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/tensor_move_delete.h"
#include "props/campaign.h"
#include "props/generate.h"
#include "props/missed.h"
#include "tests/oracle/oracle_test_util.h"

#include <gtest/gtest.h>

namespace graphvet::props {
namespace {

using oracle::testing::parseText;

Remark kept(const std::string &node, const std::string &rule, const std::string &graph = "g",
            const std::string &decision = "kept") {
  Remark r;
  r.pass = std::string(kTensorMoveDeleteName);
  r.node = node;
  r.graph = graph;
  r.decision = decision;
  r.rule = rule;
  r.message = decision + " " + node;
  return r;
}

MissedOptions exactOptions() {
  MissedOptions o;
  o.check.useZ3 = true; // prove race freedom, as `graphvet missed` does
  return o;
}

/// The pass "kept" every listed copy: the optimized module is the original.
MissedReport keptAll(const Module &m, const std::vector<Remark> &remarks,
                     const MissedOptions &o = exactOptions()) {
  return findMissedIn(m, m, remarks, o);
}

/// `text` with the placeholder `hole` replaced by `value`, parsed.
Module parseFilled(std::string text, const std::string &hole, const std::string &value) {
  text.replace(text.find(hole), hole.size(), value);
  return parseText(text);
}

/// Is node `node` of graph `graph` among `dead`?
bool deadIn(const UnobservedNodes &dead, const Module &m, const std::string &graph,
            const std::string &node) {
  GraphId g = m.findGraph(graph);
  return dead.contains(g, m.graph(g).find(node));
}

TEST(Missed, ReadOnlySuccessorOfUngrantedInputIsMissed) {
  Module m = parseText(R"(
graph g {
  x = Data() {index = 0}
  tm = TensorMove(x)
  q = ReLU(tm)
  out = NetOutput(q)
}
)");
  MissedReport r = keptAll(m, {kept("tm", "rule2-no-grant")});
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.items.size(), 1u);
  const MissedItem &item = r.items[0];
  EXPECT_EQ(item.status, MissedStatus::Removable) << item.violationKind << ": " << item.message;
  EXPECT_EQ(item.rule, "rule2-no-grant");
  EXPECT_EQ(item.node, "tm");
  EXPECT_TRUE(item.addedEdges.empty());
  EXPECT_EQ(r.missed, 1u);
  EXPECT_EQ(r.missedByRule.at("rule2-no-grant"), 1u);
  EXPECT_DOUBLE_EQ(r.recall(), 0.0);
}

TEST(Missed, CopyThatKeepsTheOldValueForAReaderAfterTheWriterIsNecessary) {
  // q must read v before w's write through the copy and after it through w:
  // no ordering of q against w serves both, so the copy is necessary.
  Module m = parseText(R"(
graph g {
  v = Variable()
  c = Const()
  tm = TensorMove(v)
  w = Assign(v, c)
  q = AddD(tm, w)
  out = NetOutput(q)
  ctrl tm -> w
}
)");
  MissedReport r = keptAll(m, {kept("tm", "rule1-special-successor-writes")});
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.items[0].status, MissedStatus::Necessary);
  EXPECT_EQ(r.items[0].violationKind, "value") << r.items[0].message;
  // tm -> w maps to v -> w, which the data edge v -> w already implies.
  EXPECT_TRUE(r.items[0].movedEdges.empty());
  EXPECT_EQ(r.missed, 0u);
  EXPECT_EQ(r.necessary, 1u);
}

TEST(Missed, RaceIsRepairedByAReaderBeforeWriterEdge) {
  // Without the copy, q reads r's buffer while w writes it in place: q must
  // run first, which one added control edge says.
  const std::string text = R"(
graph g {
  x = Data() {index = 0}
  y = Data() {index = 1}
  r = ReLU(x)
  tm = TensorMove(r)
  q = NegD(tm)
  w = Assign(r, y)
  out = NetOutput(q, w)
  ctrl tm -> w
}
)";
  Module m = parseText(text);
  MissedReport r = keptAll(m, {kept("tm", "rule3-fan-out")});
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.items.size(), 1u);
  const MissedItem &item = r.items[0];
  EXPECT_EQ(item.status, MissedStatus::Removable) << item.violationKind << ": " << item.message;
  EXPECT_EQ(item.addedEdges, std::vector<std::string>{"q -> w"});
  EXPECT_TRUE(item.movedEdges.empty());

  // The candidate itself: tm gone, q reads r, and the repair edge is there.
  Module candidate;
  std::vector<std::string> moved, added;
  std::string error;
  GraphId g = m.findGraph("g");
  ASSERT_TRUE(buildCandidate(m, g, m.graph(g).find("tm"), 16, candidate, moved, added, error))
      << error;
  const Graph &cg = candidate.graph(g);
  EXPECT_EQ(cg.find("tm"), kNoNode);
  const Node &q = cg.node(cg.find("q"));
  ASSERT_TRUE(q.inputs[0]);
  EXPECT_EQ(q.inputs[0]->node, cg.find("r"));
  EXPECT_TRUE(cg.hasCtrlEdge(cg.find("q"), cg.find("w")));
  EXPECT_EQ(added, item.addedEdges);
}

TEST(Missed, WithoutTheRepairEdgeTheSameRemovalRaces) {
  // Same graph, repair budget 0: the oracle sees the race.
  Module m = parseText(R"(
graph g {
  x = Data() {index = 0}
  y = Data() {index = 1}
  r = ReLU(x)
  tm = TensorMove(r)
  q = NegD(tm)
  w = Assign(r, y)
  out = NetOutput(q, w)
  ctrl tm -> w
}
)");
  MissedOptions o = exactOptions();
  o.maxAddedEdges = 0;
  MissedReport r = keptAll(m, {kept("tm", "rule3-fan-out")}, o);
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.items[0].status, MissedStatus::Necessary);
  EXPECT_EQ(r.items[0].violationKind, "race");
}

TEST(Missed, TwoWritersOfOneBufferAreNotReordered) {
  // Without the copy, a (writing the copy in place) and b (writing the source)
  // write one buffer unordered: the repair only adds reader-before-writer
  // edges, so the race stays and the copy is necessary.
  Module m = parseText(R"(
graph g {
  x = Data() {index = 0}
  c = Const()
  r = ReLU(x)
  tm = TensorMove(r)
  a = Assign(tm, c)
  b = Assign(r, c)
  out = NetOutput(a, b)
  ctrl tm -> b
}
)");
  MissedReport r = keptAll(m, {kept("tm", "rule3-both-write")});
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.items[0].status, MissedStatus::Necessary);
  EXPECT_EQ(r.items[0].violationKind, "race") << r.items[0].message;
  EXPECT_TRUE(r.items[0].addedEdges.empty());
}

TEST(Missed, ControlOrderingsAreCarriedOver) {
  // cp -> tm and tm -> cs: cp must still precede q (tm's consumer) and cs
  // must still follow r (tm's producer) and cp.
  Module m = parseText(R"(
graph g {
  r = ReLU()
  cp = NegD()
  cs = AbsD()
  tm = TensorMove(r)
  q = ReLU(tm)
  out = NetOutput(q, cp, cs)
  ctrl cp -> tm
  ctrl tm -> cs
}
)");
  Module candidate;
  std::vector<std::string> moved, added;
  std::string error;
  GraphId g = m.findGraph("g");
  ASSERT_TRUE(buildCandidate(m, g, m.graph(g).find("tm"), 16, candidate, moved, added, error));
  std::sort(moved.begin(), moved.end());
  EXPECT_EQ(moved, (std::vector<std::string>{"cp -> cs", "cp -> q", "r -> cs"}));
  EXPECT_TRUE(added.empty());
}

TEST(Missed, DeadCopyIsUnobservedNotMissed) {
  Module m = parseText(R"(
graph g {
  x = Data() {index = 0}
  r = ReLU(x)
  tm = TensorMove(r)
  n = NegD(tm)
  out = NetOutput(r)
}
)");
  MissedReport r = keptAll(m, {kept("tm", "rule3-fan-out")});
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.items[0].status, MissedStatus::Unobserved);
  EXPECT_EQ(r.missed, 0u);
  EXPECT_EQ(r.unobserved, 1u);
  UnobservedNodes dead = unobservedNodes(m);
  GraphId g = m.findGraph("g");
  EXPECT_TRUE(dead.contains(g, m.graph(g).find("tm")));
  EXPECT_TRUE(dead.contains(g, m.graph(g).find("n")));
  EXPECT_FALSE(dead.contains(g, m.graph(g).find("r")));
}

TEST(Missed, ACopyReadOnlyByWhatAScribblerScribblesIsUnobserved) {
  // h scribbles a (observed) and q; a scribble depends only on the old
  // content of the buffer scribbled, so q, and tm behind it, reach nothing.
  Module m = parseText(R"(
graph g {
  x = Data() {index = 0}
  a = ReLU(x)
  tm = TensorMove(x)
  q = ReLU(tm)
  h = HcomBroadcast(a, q)
  out = NetOutput(a)
}
)");
  UnobservedNodes dead = unobservedNodes(m);
  EXPECT_TRUE(deadIn(dead, m, "g", "tm"));
  EXPECT_TRUE(deadIn(dead, m, "g", "q"));
  EXPECT_FALSE(deadIn(dead, m, "g", "h"));
  EXPECT_FALSE(deadIn(dead, m, "g", "a"));
  MissedReport r = keptAll(m, {kept("tm", "rule3-fan-out")});
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.items[0].status, MissedStatus::Unobserved);
}

TEST(Missed, AScribblerWithAnObservedOutputKeepsItsInputsLive) {
  // The negative case: h's own output is observed, and it mixes every input.
  Module m = parseText(R"(
graph g {
  x = Data() {index = 0}
  a = ReLU(x)
  tm = TensorMove(x)
  q = ReLU(tm)
  h = HcomBroadcast(a, q)
  out = NetOutput(a, h)
}
)");
  UnobservedNodes dead = unobservedNodes(m);
  EXPECT_FALSE(deadIn(dead, m, "g", "tm"));
  EXPECT_FALSE(deadIn(dead, m, "g", "q"));
}

const char *kIfWithUnusedResult = R"(
graph g {
  x = Data() {index = 0}
  c = Data() {index = 1}
  f = If(c, x) {outputs = 2, subgraphs = [t, e]}
  out = NetOutput(f:OUT)
}
graph t {
  a = Data() {_parent_node_index = 1}
  tm = TensorMove(a)
  r = ReLU(a)
  o = NetOutput(r, tm) {in0._parent_node_index = 0, in1._parent_node_index = 1}
}
graph e {
  a = Data() {_parent_node_index = 1}
  r = NegD(a)
  o = NetOutput(r, r) {in0._parent_node_index = 0, in1._parent_node_index = 1}
}
)";

Module ifWithResult(const std::string &observed) {
  return parseFilled(kIfWithUnusedResult, "OUT", observed);
}

TEST(Missed, ABranchResultNobodyConsumesIsUnobserved) {
  Module m = ifWithResult("0");
  UnobservedNodes dead = unobservedNodes(m);
  EXPECT_TRUE(deadIn(dead, m, "t", "tm"));
  EXPECT_FALSE(deadIn(dead, m, "t", "r"));
}

TEST(Missed, AConsumedBranchResultIsLive) {
  Module m = ifWithResult("1");
  UnobservedNodes dead = unobservedNodes(m);
  EXPECT_FALSE(deadIn(dead, m, "t", "tm"));
  EXPECT_TRUE(deadIn(dead, m, "t", "r"));
}

TEST(Missed, ABranchResultReadOnlyByDeadCodeIsUnobserved) {
  // f:1 is consumed, but only by n, which reaches nothing observed.
  Module m = parseText(R"(
graph g {
  x = Data() {index = 0}
  c = Data() {index = 1}
  f = If(c, x) {outputs = 2, subgraphs = [t, e]}
  n = NegD(f:1)
  out = NetOutput(f:0)
}
graph t {
  a = Data() {_parent_node_index = 1}
  tm = TensorMove(a)
  r = ReLU(a)
  o = NetOutput(r, tm) {in0._parent_node_index = 0, in1._parent_node_index = 1}
}
graph e {
  a = Data() {_parent_node_index = 1}
  r = NegD(a)
  o = NetOutput(r, r) {in0._parent_node_index = 0, in1._parent_node_index = 1}
}
)");
  UnobservedNodes dead = unobservedNodes(m);
  EXPECT_TRUE(deadIn(dead, m, "g", "n"));
  EXPECT_TRUE(deadIn(dead, m, "t", "tm"));
  EXPECT_FALSE(deadIn(dead, m, "t", "r"));
}

TEST(Missed, AnIfDecidingWhichLiveBufferAScribblerHitsIsLive) {
  // Found by LivenessProps (seed 11): no branch writes anything observed,
  // but h scribbles f, which is the user input x on the else branch. The
  // condition, and the copy tm behind it, decide whether x is clobbered.
  Module m = parseText(R"(
graph g {
  x = Data() {index = 0}
  tm = TensorMove(x)
  f = If(tm, x) {subgraphs = [t, e]}
  h = HcomAllReduce(f)
  out = NetOutput(x)
}
graph t {
  r = ReLU()
  o = NetOutput(r) {in0._parent_node_index = 0}
}
graph e {
  a = Data() {_parent_node_index = 1}
  o = NetOutput(a) {in0._parent_node_index = 0}
}
)");
  UnobservedNodes dead = unobservedNodes(m);
  EXPECT_FALSE(deadIn(dead, m, "g", "tm"));
  EXPECT_FALSE(deadIn(dead, m, "g", "h"));
  EXPECT_TRUE(deadIn(dead, m, "t", "r")); // scribbled, never read
}

const char *kWriteToInput = R"(
options {
  ge.exec.inputReuseMemIndexes = "GRANT"
}
graph g {
  x = Data() {index = 0}
  y = Data() {index = 1}
  tm = TensorMove(y)
  w = Assign(x, tm)
  out = NetOutput(y)
}
)";

TEST(Missed, AWriteToAnInputWithUnspecifiedContentIsUnobserved) {
  // Input 0's content after a run is unspecified and nothing reads it again.
  Module m = parseFilled(kWriteToInput, "GRANT", "0");
  UnobservedNodes dead = unobservedNodes(m);
  EXPECT_TRUE(deadIn(dead, m, "g", "w"));
  EXPECT_TRUE(deadIn(dead, m, "g", "tm"));
}

TEST(Missed, AWriteToAnInputTheCallerSeesIsLive) {
  // The grant names input 1: input 0 is observed after the run.
  Module m = parseFilled(kWriteToInput, "GRANT", "1");
  UnobservedNodes dead = unobservedNodes(m);
  EXPECT_FALSE(deadIn(dead, m, "g", "w"));
  EXPECT_FALSE(deadIn(dead, m, "g", "tm"));
}

const char *kLoopWithTwoVariables = R"(
graph g {
  x = Data() {index = 0}
  y = Data() {index = 1}
  a = ReLU(x)
  b = ReLU(y)
  l = While(a, b) {subgraphs = [c, body]}
  out = NetOutput(l:OUT)
}
graph c {
  v0 = Data() {_parent_node_index = 0}
  v1 = Data() {_parent_node_index = 1}
  o = NetOutput(v0)
}
graph body {
  v0 = Data() {_parent_node_index = 0}
  v1 = Data() {_parent_node_index = 1}
  n0 = NegD(v0)
  tm = TensorMove(v1)
  n1 = NegD(tm)
  o = NetOutput(n0, n1) {in0._parent_node_index = 0, in1._parent_node_index = 1}
}
)";

TEST(Missed, ABodyResultForALoopVariableNobodyReadsIsUnobserved) {
  // Only variable 0 is observed; variable 1 feeds nothing but itself.
  Module m = parseFilled(kLoopWithTwoVariables, "OUT", "0");
  UnobservedNodes dead = unobservedNodes(m);
  EXPECT_TRUE(deadIn(dead, m, "body", "tm"));
  EXPECT_TRUE(deadIn(dead, m, "body", "n1"));
  EXPECT_TRUE(deadIn(dead, m, "g", "b"));
  EXPECT_FALSE(deadIn(dead, m, "body", "n0"));
  EXPECT_FALSE(deadIn(dead, m, "g", "a"));
}

TEST(Missed, ABodyResultForAnObservedLoopVariableIsLive) {
  // Variable 1 is a graph output: its body result and initial value count.
  Module m = parseFilled(kLoopWithTwoVariables, "OUT", "1");
  UnobservedNodes dead = unobservedNodes(m);
  EXPECT_FALSE(deadIn(dead, m, "body", "tm"));
  EXPECT_FALSE(deadIn(dead, m, "body", "n1"));
  EXPECT_FALSE(deadIn(dead, m, "g", "b"));
  // Variable 0 decides how often the body runs.
  EXPECT_FALSE(deadIn(dead, m, "body", "n0"));
  EXPECT_FALSE(deadIn(dead, m, "g", "a"));
}

const char *kWriteAfterRead = R"(
graph g {
  x = Data() {index = 0}
  a = ReLU(x)
  r = NegD(a)
  tm = TensorMove(x)
  w = Assign(a, tm)
  out = NetOutput(r)
  ctrl ORDER
}
)";

TEST(Missed, AWriteAfterTheLastReadIsUnobserved) {
  // r has read a when w overwrites it, and the next run recomputes a first.
  Module m = parseFilled(kWriteAfterRead, "ORDER", "r -> w");
  UnobservedNodes dead = unobservedNodes(m);
  EXPECT_TRUE(deadIn(dead, m, "g", "w"));
  EXPECT_TRUE(deadIn(dead, m, "g", "tm"));
  EXPECT_FALSE(deadIn(dead, m, "g", "a"));
}

TEST(Missed, AWriteBeforeALiveReadIsLive) {
  Module m = parseFilled(kWriteAfterRead, "ORDER", "w -> r");
  UnobservedNodes dead = unobservedNodes(m);
  EXPECT_FALSE(deadIn(dead, m, "g", "w"));
  EXPECT_FALSE(deadIn(dead, m, "g", "tm"));
}

TEST(Missed, AWriteAfterTheLastReadOfABufferNoRunRefillsIsLive) {
  // The buffer behind an unconnected slot keeps w's bytes into the next
  // run, where r reads them first.
  Module m = parseText(R"(
graph g {
  v = Reshape(_) {out0.reuse_input = true}
  r = NegD(v)
  x = Data() {index = 0}
  tm = TensorMove(x)
  w = Assign(v, tm)
  out = NetOutput(r)
  ctrl r -> w
}
)");
  UnobservedNodes dead = unobservedNodes(m);
  EXPECT_FALSE(deadIn(dead, m, "g", "w"));
  EXPECT_FALSE(deadIn(dead, m, "g", "tm"));
}

TEST(Missed, AWriteAfterTheLastReadInALoopBodyIsLive) {
  // The next iteration's r reads what w wrote into variable 1.
  Module m = parseText(R"(
graph g {
  x = Data() {index = 0}
  a = ReLU(x)
  l = While(x, a) {subgraphs = [c, b]}
  out = NetOutput(l:0)
}
graph c {
  v0 = Data() {_parent_node_index = 0}
  o = NetOutput(v0)
}
graph b {
  v0 = Data() {_parent_node_index = 0}
  v1 = Data() {_parent_node_index = 1}
  r = NegD(v1)
  tm = TensorMove(v0)
  w = Assign(v1, tm)
  o = NetOutput(r) {in0._parent_node_index = 0}
  ctrl r -> w
}
)");
  UnobservedNodes dead = unobservedNodes(m);
  EXPECT_FALSE(deadIn(dead, m, "b", "w"));
  EXPECT_FALSE(deadIn(dead, m, "b", "tm"));
}

TEST(Missed, ALoopWritingBackAfterTheLastReadIsUnobserved) {
  // m has read a before the loop writes its variable 0 (a's buffer) back.
  Module m = parseText(R"(
graph g {
  x = Data() {index = 0}
  a = ReLU(x)
  m = NegD(a)
  l = While(a) {subgraphs = [c, b]}
  out = NetOutput(m)
  ctrl m -> l
}
graph c {
  v0 = Data() {_parent_node_index = 0}
  o = NetOutput(v0)
}
graph b {
  v0 = Data() {_parent_node_index = 0}
  tm = TensorMove(v0)
  n = NegD(tm)
  o = NetOutput(n) {in0._parent_node_index = 0}
}
)");
  UnobservedNodes dead = unobservedNodes(m);
  EXPECT_TRUE(deadIn(dead, m, "b", "tm"));
  EXPECT_TRUE(deadIn(dead, m, "b", "n"));
  EXPECT_FALSE(deadIn(dead, m, "g", "m"));
}

const char *kWriteToACondition = R"(
graph g {
  x = Data() {index = 0}
  c = ReLU(x)
  f = If(c, x) {subgraphs = [t, e]}
  tm = TensorMove(x)
  w = Assign(c, tm)
  out = NetOutput(f)
  ctrl ORDER
}
graph t {
  a = Data() {_parent_node_index = 1}
  r = ReLU(a)
  o = NetOutput(r) {in0._parent_node_index = 0}
}
graph e {
  a = Data() {_parent_node_index = 1}
  r = NegD(a)
  o = NetOutput(r) {in0._parent_node_index = 0}
}
)";

TEST(Missed, AWriteToAConditionAfterItsIfIsUnobserved) {
  // The If has read its condition c when w overwrites it.
  Module m = parseFilled(kWriteToACondition, "ORDER", "f -> w");
  UnobservedNodes dead = unobservedNodes(m);
  EXPECT_TRUE(deadIn(dead, m, "g", "w"));
  EXPECT_TRUE(deadIn(dead, m, "g", "tm"));
  EXPECT_FALSE(deadIn(dead, m, "g", "c"));
}

TEST(Missed, AWriteToAConditionBeforeItsIfIsLive) {
  Module m = parseFilled(kWriteToACondition, "ORDER", "w -> f");
  UnobservedNodes dead = unobservedNodes(m);
  EXPECT_FALSE(deadIn(dead, m, "g", "w"));
  EXPECT_FALSE(deadIn(dead, m, "g", "tm"));
}

const char *kIfOnCondition = R"(
graph g {
  x = Data() {index = 0}
  f = If(COND, x) {subgraphs = [t, e]}
  out = NetOutput(f)
}
graph t {
  a = Data() {_parent_node_index = 1}
  tm = TensorMove(a)
  r = ReLU(tm)
  o = NetOutput(r) {in0._parent_node_index = 0}
}
graph e {
  a = Data() {_parent_node_index = 1}
  tm = TensorMove(a)
  r = NegD(tm)
  o = NetOutput(r) {in0._parent_node_index = 0}
}
)";

Module ifOn(const std::string &cond) {
  return parseFilled(kIfOnCondition, "COND", cond);
}

TEST(Missed, ACopyInABranchThatNeverRunsIsUnexercised) {
  // An unconnected condition reads as zero bytes: even, so the else branch
  // runs on every state and the then branch never does.
  Module m = ifOn("_");
  std::vector<bool> ran = oracle::executedGraphs(m, exactOptions().check);
  ASSERT_EQ(ran.size(), m.numGraphs());
  EXPECT_TRUE(ran[m.findGraph("g")]);
  EXPECT_FALSE(ran[m.findGraph("t")]);
  EXPECT_TRUE(ran[m.findGraph("e")]);
  MissedReport r =
      keptAll(m, {kept("tm", "rule1-control-flow", "t"), kept("tm", "rule1-control-flow", "e")});
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.items.size(), 2u);
  EXPECT_EQ(r.items[0].status, MissedStatus::Unexercised);
  EXPECT_EQ(r.items[1].status, MissedStatus::Removable);
  EXPECT_EQ(r.unexercised, 1u);
  EXPECT_EQ(r.missed, 1u);
}

TEST(Missed, ACopyInABranchTakenOnSomeStateIsExercised) {
  // A user input as condition: the seeded states take both branches.
  Module m = ifOn("x");
  MissedOptions o = exactOptions();
  o.check.numStates = 8; // as `graphvet missed` does
  std::vector<bool> ran = oracle::executedGraphs(m, o.check);
  ASSERT_EQ(ran.size(), m.numGraphs());
  EXPECT_TRUE(ran[m.findGraph("t")]);
  EXPECT_TRUE(ran[m.findGraph("e")]);
  MissedReport r =
      keptAll(m, {kept("tm", "rule1-control-flow", "t"), kept("tm", "rule1-control-flow", "e")}, o);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.unexercised, 0u);
  EXPECT_EQ(r.missed, 2u);
}

TEST(Missed, CopyInsideASubgraphIsRemovedThere) {
  Module m = parseText(R"(
graph g {
  x = Data() {index = 0}
  pc = PartitionedCall(x) {subgraphs = [body], outputs = 1}
  out = NetOutput(pc:0)
}
graph body {
  a = Data() {_parent_node_index = 0}
  tm = TensorMove(a)
  m = ReLU(tm)
  o = NetOutput(m) {in0._parent_node_index = 0}
}
)");
  MissedReport r = keptAll(m, {kept("tm", "rule2-no-grant", "body")});
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.items[0].node, "body/tm");
  EXPECT_EQ(r.items[0].status, MissedStatus::Removable)
      << r.items[0].violationKind << ": " << r.items[0].message;
}

TEST(Missed, ReservedCopiesAreNotTriedAndTheCapIsReported) {
  Module m = parseText(R"(
graph g {
  x = Data() {index = 0}
  t1 = TensorMove(x)
  t2 = TensorMove(x)
  t3 = TensorMove(x) {_cannot_be_deleted = true}
  out = NetOutput(t1, t2, t3)
}
)");
  MissedOptions o = exactOptions();
  o.maxCandidates = 1;
  MissedReport r = keptAll(m,
                           {kept("t1", "rule2-no-grant"), kept("t2", "rule2-no-grant"),
                            kept("t3", "reserved-attr", "g", "skipped")},
                           o);
  ASSERT_EQ(r.items.size(), 3u);
  EXPECT_NE(r.items[0].status, MissedStatus::Untried);
  EXPECT_EQ(r.items[1].status, MissedStatus::Untried);
  EXPECT_EQ(r.items[2].status, MissedStatus::Reserved);
  EXPECT_TRUE(r.capped);
  EXPECT_EQ(r.untried, 1u);
  EXPECT_EQ(r.reserved, 1u);
  EXPECT_EQ(r.kept, 3u);
}

TEST(Missed, InvalidOriginalIsReported) {
  // Two unordered writers of one variable: a racy original.
  Module m = parseText(R"(
graph g {
  v = Variable()
  c = Const()
  a = Assign(v, c)
  b = Assign(v, c)
  tm = TensorMove(c)
  out = NetOutput(a, b, tm)
}
)");
  MissedReport r = findMissed(m, exactOptions());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("not valid"), std::string::npos) << r.error;
}

TEST(Missed, PipelineFiguresAddUp) {
  Module m = parseText(R"(
graph g {
  x = Data() {index = 0}
  r = ReLU(x)
  t1 = TensorMove(r)
  q = ReLU(t1)
  t2 = TensorMove(x)
  p = NegD(t2)
  out = NetOutput(q, p)
}
)");
  MissedOptions o = exactOptions();
  o.pipeline.conservative = true;
  MissedReport r = findMissed(m, o);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.tensorMoves, 2u);
  EXPECT_EQ(r.deleted + r.kept, r.tensorMoves);
  EXPECT_GE(r.deleted, 1u);           // t1 is scenario 1
  EXPECT_EQ(r.deletedUnobserved, 0u); // both copies feed graph outputs
  EXPECT_EQ(r.missed + r.unobserved + r.necessary + r.inconclusive + r.reserved + r.untried,
            r.kept);
  EXPECT_EQ(r.passVerdict, oracle::Verdict::Sound);
}

TEST(Missed, DeterministicOnGeneratedGraphs) {
  MissedOptions o;
  o.check.useZ3 = false;
  for (uint64_t seed = 1; seed <= 25; ++seed) {
    Module m = generateModule(seed, GenOptions{});
    MissedReport a = findMissed(m, o);
    MissedReport b = findMissed(m, o);
    ASSERT_EQ(a.ok, b.ok);
    ASSERT_EQ(a.items.size(), b.items.size()) << "seed " << seed;
    EXPECT_EQ(a.missed, b.missed);
    for (size_t i = 0; i < a.items.size(); ++i) {
      EXPECT_EQ(a.items[i].node, b.items[i].node);
      EXPECT_EQ(a.items[i].status, b.items[i].status);
      EXPECT_EQ(a.items[i].addedEdges, b.items[i].addedEdges);
      EXPECT_EQ(a.items[i].movedEdges, b.items[i].movedEdges);
    }
    EXPECT_EQ(a.deleted + a.kept, a.tensorMoves);
  }
}

TEST(Missed, OptionOverridesApplyToTheOriginalAsInCheck) {
  // With the grant the pass deletes tm and w writes input 0 in place: the
  // pass output is sound only against an original with the same grant.
  Module m = parseText(R"(
options {
  ge.exec.outputReuseInputMemIndexes = "0,1"
}
graph root {
  x = Data() {index = 0}
  y = Data() {index = 1}
  tm = TensorMove(x)
  w = Assign(tm, y)
  out = NetOutput(w)
}
)");
  MissedOptions o = exactOptions();
  o.pipeline.optionOverrides["ge.exec.inputReuseMemIndexes"] = "0";
  MissedReport r = findMissed(m, o);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.deleted, 1u);
  EXPECT_EQ(r.passVerdict, oracle::Verdict::Sound) << r.passViolation;
}

TEST(Missed, CampaignCountsAreIndependentOfJobs) {
  CampaignOptions o;
  o.cases = 60;
  o.missed = true;
  CampaignResult one = runCampaign(o);
  o.jobs = 2;
  CampaignResult two = runCampaign(o);
  EXPECT_EQ(one.stats.missedCases, one.stats.sound);
  EXPECT_EQ(one.stats.missed, two.stats.missed);
  EXPECT_EQ(one.stats.missedByRule, two.stats.missedByRule);
  EXPECT_EQ(one.stats.missedUnobserved, two.stats.missedUnobserved);
  EXPECT_LE(one.stats.missedDeleted, one.stats.deleted);
  if (one.stats.violations == 0) {
    EXPECT_EQ(one.stats.missedDeleted, one.stats.deleted);
  }
  EXPECT_GT(one.stats.missed + one.stats.missedNecessary, 0u);
  // Missed copies are figures, never findings.
  EXPECT_TRUE(one.findings.empty());
}

} // namespace
} // namespace graphvet::props
