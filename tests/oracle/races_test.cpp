// Race analysis over the scheduling domains: accesses from the memory plan,
// boundary and control edges through PartitionedCall, control flow as one
// step, witness schedules, cycles, and the layout check.
#include "oracle/inlined.h"
#include "oracle/memory_plan.h"
#include "oracle/races.h"
#include "oracle_test_util.h"

#include <algorithm>

namespace graphvet::oracle {
namespace {

using testing::parseText;

struct Analysed {
  Module m;
  MemoryPlan plan;
  InlinedModule inl;
  RaceAnalysis races;
  explicit Analysed(const std::string &text) : m(parseText(text)) {
    plan = MemoryPlan::build(m);
    inl = InlinedModule::build(m, plan);
    races = analyzeRaces(inl);
  }
  std::vector<std::pair<std::string, std::string>> racePairs() const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const Conflict &c : races.conflicts)
      if (c.unordered)
        out.push_back({inl.domains[c.domain].steps[c.first].name,
                       inl.domains[c.domain].steps[c.second].name});
    return out;
  }
  const Step &step(const std::string &name) const {
    for (const Domain &d : inl.domains)
      for (const Step &s : d.steps)
        if (s.name == name)
          return s;
    ADD_FAILURE() << "no step " << name;
    static Step none;
    return none;
  }
  bool writes(const std::string &stepName, const std::string &buffer) const {
    for (const Access &a : step(stepName).accesses)
      if (plan.buffers()[a.buffer].label == buffer)
        return a.write;
    return false;
  }
  bool reads(const std::string &stepName, const std::string &buffer) const {
    for (const Access &a : step(stepName).accesses)
      if (plan.buffers()[a.buffer].label == buffer)
        return true;
    return false;
  }
};

using Pairs = std::vector<std::pair<std::string, std::string>>;

TEST(Races, ReaderAndWriterUnordered) {
  Analysed a(R"(
graph root {
  x   = Data() {index = 0}
  r   = ReLU(x)
  s   = SigmoidD(r)
  w   = Assign(r)
  out = NetOutput(s, w)
}
)");
  EXPECT_EQ(a.racePairs(), (Pairs{{"s", "w"}}));
  // Conflicts ordered by data edges are listed but are not races.
  EXPECT_GT(a.races.conflicts.size(), a.races.numRaces());
}

TEST(Races, ControlEdgeOrdersThem) {
  Analysed a(R"(
graph root {
  x   = Data() {index = 0}
  r   = ReLU(x)
  s   = SigmoidD(r)
  w   = Assign(r)
  out = NetOutput(s, w)
  ctrl s -> w
}
)");
  EXPECT_TRUE(a.racePairs().empty());
}

TEST(Races, TwoReadersNeverRace) {
  Analysed a(R"(
graph root {
  x   = Data() {index = 0}
  s   = SigmoidD(x)
  t   = TanhD(x)
  out = NetOutput(s, t)
}
)");
  EXPECT_TRUE(a.races.conflicts.empty());
}

TEST(Races, ScribblerConflictsWithEveryReader) {
  Analysed a(R"(
graph root {
  x   = Data() {index = 0}
  s   = SigmoidD(x)
  ar  = HcomAllReduce(x)
  out = NetOutput(s, ar)
}
)");
  EXPECT_TRUE(a.writes("ar", "input0"));
  EXPECT_EQ(a.racePairs(), (Pairs{{"s", "ar"}}));
}

constexpr const char *kCall = R"(
graph root {
  x   = Data() {index = 0}
  r   = ReLU(x)
  pc  = PartitionedCall(r) {subgraphs = [body]}
  s   = AddD(r)
  out = NetOutput(s, pc)
  %CTRL%
}
graph body {
  a = Data() {_parent_node_index = 0}
  m = MulD(a)
  w = Assign(a)
  o = NetOutput(w) {in0._parent_node_index = 0}
}
)";

std::string withCtrl(const std::string &ctrl) {
  std::string t = kCall;
  t.replace(t.find("%CTRL%"), 6, ctrl);
  return t;
}

TEST(Races, CallBodyIsInlined) {
  Analysed a(withCtrl(""));
  // The call itself is not a step; its body nodes are, qualified.
  for (const Step &s : a.inl.domains[0].steps)
    EXPECT_NE(s.name, "pc");
  EXPECT_TRUE(a.writes("body/w", "fresh:r:0"));
  Pairs races = a.racePairs();
  // Inside the body, m reads and w writes the same buffer: a race too.
  EXPECT_NE(std::find(races.begin(), races.end(),
                      std::make_pair(std::string("body/m"), std::string("body/w"))),
            races.end());
  EXPECT_NE(std::find(races.begin(), races.end(),
                      std::make_pair(std::string("body/w"), std::string("s"))),
            races.end());
}

TEST(Races, ControlEdgeIntoCallOrdersEveryNodeInside) {
  Analysed a(withCtrl("ctrl s -> pc"));
  Pairs races = a.racePairs();
  for (const auto &[x, y] : races)
    EXPECT_TRUE(x != "s" && y != "s") << x << " " << y;
  EXPECT_EQ(races, (Pairs{{"body/m", "body/w"}}));
}

TEST(Races, ControlEdgeOutOfCallOrdersEveryNodeInside) {
  Analysed a(withCtrl("ctrl pc -> s"));
  Pairs races = a.racePairs();
  for (const auto &[x, y] : races)
    EXPECT_TRUE(x != "s" && y != "s") << x << " " << y;
}

TEST(Races, ControlFlowAccessesWhatAnyBranchMay) {
  Analysed a(R"(
graph root {
  c   = Data() {index = 0}
  x   = Data() {index = 1}
  r   = ReLU(x)
  f   = If(c, r) {subgraphs = [then, else]}
  s   = SigmoidD(r)
  out = NetOutput(f, s)
}
graph then {
  a = Data() {_parent_node_index = 1}
  w = Assign(a)
  o = NetOutput(w) {in0._parent_node_index = 0}
}
graph else {
  a = Data() {_parent_node_index = 1}
  o = NetOutput(a) {in0._parent_node_index = 0}
}
)");
  EXPECT_TRUE(a.writes("f", "fresh:r:0"));
  EXPECT_EQ(a.racePairs(), (Pairs{{"f", "s"}}));
  // The branches are domains of their own.
  EXPECT_EQ(a.inl.domains.size(), 3u);
}

TEST(Races, WhileWritesBackLoopVariables) {
  Analysed a(R"(
graph root {
  x   = Data() {index = 0}
  y   = Data() {index = 1}
  w   = While(x, y) {subgraphs = [cond, body]}
  out = NetOutput(w:0, w:1)
}
graph cond {
  c = Data() {_parent_node_index = 0}
  o = NetOutput(c)
}
graph body {
  a = Data() {_parent_node_index = 0}
  b = Data() {_parent_node_index = 1}
  m = Step(a)
  o = NetOutput(m, b) {in0._parent_node_index = 0, in1._parent_node_index = 1}
}
)");
  EXPECT_TRUE(a.writes("w", "input0"));  // the body result is a new buffer
  EXPECT_FALSE(a.writes("w", "input1")); // handed back unchanged: no write
  EXPECT_TRUE(a.reads("w", "input1"));
}

TEST(Races, WitnessSchedulesOrderThePairBothWays) {
  Analysed a(R"(
graph root {
  x   = Data() {index = 0}
  r   = ReLU(x)
  p   = P(r)
  s   = SigmoidD(p)
  w   = Assign(r)
  q   = Q(w)
  out = NetOutput(s, q)
}
)");
  ASSERT_EQ(a.races.numRaces(), 1u); // p reads r while w writes it
  const Domain &d = a.inl.domains[0];
  for (const Conflict &c : a.races.conflicts) {
    if (!c.unordered)
      continue;
    for (auto [first, second] : {std::pair{c.first, c.second}, std::pair{c.second, c.first}}) {
      std::vector<StepIndex> order = orderWith(d, first, second);
      ASSERT_EQ(order.size(), d.steps.size());
      std::vector<size_t> pos(order.size());
      for (size_t i = 0; i < order.size(); ++i)
        pos[order[i]] = i;
      EXPECT_LT(pos[first], pos[second]);
      for (StepIndex u = 0; u < d.succ.size(); ++u)
        for (StepIndex v : d.succ[u])
          EXPECT_LT(pos[u], pos[v]) << "witness respects every edge";
    }
  }
}

TEST(Races, Reachability) {
  Analysed a(R"(
graph root {
  x   = Data() {index = 0}
  a   = A(x)
  b   = B(a)
  c   = C(x)
  out = NetOutput(b, c)
  ctrl c -> b
}
)");
  const Domain &d = a.inl.domains[0];
  Reachability r(d);
  auto idx = [&](const char *n) { return a.inl.findStep(0, n); };
  EXPECT_TRUE(r.reaches(idx("x"), idx("b")));
  EXPECT_TRUE(r.reaches(idx("c"), idx("b")));
  EXPECT_FALSE(r.reaches(idx("b"), idx("c")));
  EXPECT_FALSE(r.ordered(idx("a"), idx("c")));
}

TEST(Races, CycleIsReportedWithItsPath) {
  Module m = parseText(R"(
graph root {
  x   = Data() {index = 0}
  a   = A(x)
  b   = B(a)
  out = NetOutput(b)
}
)");
  m.root().addCtrlEdge(m.root().find("b"), m.root().find("a"));
  MemoryPlan plan = MemoryPlan::build(m);
  InlinedModule inl = InlinedModule::build(m, plan);
  EXPECT_FALSE(inl.acyclic());
  std::vector<std::string> cycle = inl.names(0, inl.domains[0].cycle);
  ASSERT_EQ(cycle.size(), 3u);
  EXPECT_EQ(cycle.front(), cycle.back());
  std::sort(cycle.begin(), cycle.end() - 1);
  EXPECT_EQ(cycle[0], "a");
  EXPECT_EQ(cycle[1], "b");
}

std::vector<std::string> layoutKeys(const std::string &text) {
  Module m = parseText(text);
  MemoryPlan plan = MemoryPlan::build(m);
  std::vector<std::string> out;
  for (const LayoutConflict &c : layoutConflicts(m, plan))
    out.push_back(c.key());
  return out;
}

TEST(Layout, Conflicts) {
  EXPECT_EQ(layoutKeys(R"(
graph root {
  x   = Data() {index = 0}
  c   = Const()
  r   = ReLU(x)
  k   = ConcatV2(x, c, r) {_no_padding_continuous_input = true}
  out = NetOutput(k, r)
}
)"),
            (std::vector<std::string>{"input+continuous|input0|k", "weight+continuous|weight:c|k",
                                      "output+continuous|output1|k"}));
  EXPECT_EQ(layoutKeys(R"(
graph root {
  c   = Const()
  out = NetOutput(c)
}
)"),
            (std::vector<std::string>{"output+weight|output0|weight:c"}));
  // Every input from the same buffer: no conflict.
  EXPECT_TRUE(layoutKeys(R"(
graph root {
  x   = Data() {index = 0}
  k   = ConcatV2(x, x) {continuous_input = true}
  out = NetOutput(k)
}
)")
                  .empty());
  // Fresh, non-output inputs: no conflict.
  EXPECT_TRUE(layoutKeys(R"(
graph root {
  x   = Data() {index = 0}
  a   = A(x)
  b   = B(x)
  k   = ConcatV2(a, b) {continuous_input = true}
  out = NetOutput(k)
}
)")
                  .empty());
}

} // namespace
} // namespace graphvet::oracle
