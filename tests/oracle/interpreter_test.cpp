// The reference interpreter: the mix of ops without semantics, copies,
// refs, scribbles, branch and loop rules, schedules, the experiment's two
// runs and alias relation, faults and budgets.
#include "oracle/interpreter.h"
#include "oracle_test_util.h"

#include <set>

namespace graphvet::oracle {
namespace {

using testing::parseText;

/// A module with its plan, domains and interpreter, kept together.
struct Harness {
  Module m;
  MemoryPlan plan;
  InlinedModule inl;
  std::unique_ptr<Interpreter> interp;
  explicit Harness(const std::string &text) : m(parseText(text)) {
    plan = MemoryPlan::build(m);
    inl = InlinedModule::build(m, plan);
    interp = std::make_unique<Interpreter>(m, plan, inl);
  }
  Observation run(uint64_t seed = 1) {
    RunOutcome r = interp->runOnce(seed);
    EXPECT_FALSE(r.crashed) << r.crash;
    return r.observation;
  }
};

const Bytes &input(const Observation &o, int64_t k) {
  for (const auto &[i, b] : o.inputs)
    if (i == k)
      return b;
  static Bytes none;
  ADD_FAILURE() << "no input " << k;
  return none;
}

TEST(Interpreter, DeterministicAndSeeded) {
  Harness h(R"(
graph root {
  x   = Data() {index = 0}
  r   = ReLU(x)
  out = NetOutput(r)
}
)");
  Observation a = h.run(7), b = h.run(7), c = h.run(8);
  EXPECT_EQ(a.outputs, b.outputs);
  EXPECT_NE(a.outputs, c.outputs);
  EXPECT_EQ(a.outputs[0].size(), 16u);
  EXPECT_NE(a.outputs[0], input(a, 0)); // ReLU mixes, it does not copy
}

TEST(Interpreter, ArithmeticVariantsKeyTheMixAndVariantZeroIsTheDefault) {
  Harness h(R"(
graph root {
  x   = Data() {index = 0}
  c   = AddD()
  r   = ReLU(x)
  out = NetOutput(c, r, x)
}
)");
  Observation byDefault = h.run(7);
  h.interp->setArithmetic(0);
  EXPECT_EQ(h.run(7).outputs, byDefault.outputs);
  h.interp->setArithmetic(1);
  Observation one = h.run(7);
  EXPECT_EQ(h.run(7).outputs, one.outputs);        // still deterministic
  EXPECT_NE(one.outputs[0], byDefault.outputs[0]); // an op of no inputs changes...
  EXPECT_NE(one.outputs[1], byDefault.outputs[1]); // ...and so does every mix
  EXPECT_EQ(one.outputs[2], byDefault.outputs[2]); // the filled input does not
  h.interp->setArithmetic(2);
  EXPECT_NE(h.run(7).outputs[0], one.outputs[0]);
}

TEST(Interpreter, MixDependsOnTypeOutputIndexAndEveryInput) {
  Harness h(R"(
graph root {
  x   = Data() {index = 0}
  y   = Data() {index = 1}
  a   = Foo(x, y) {outputs = 2}
  b   = Bar(x, y)
  c   = Foo(y, x)
  d   = Foo(x, _)
  e   = Foo(x)
  out = NetOutput(a:0, a:1, b, c, d, e)
}
)");
  Observation o = h.run();
  std::set<std::string> distinct;
  for (const Bytes &b : o.outputs)
    distinct.insert(toHex(b));
  EXPECT_EQ(distinct.size(), o.outputs.size()) << "type, index, order and an unconnected slot "
                                                  "all change the result";
}

TEST(Interpreter, AnyInputByteChangesEveryOutput) {
  Harness h(R"(
graph root {
  x   = Data() {index = 0}
  y   = Data() {index = 1}
  a   = Foo(x, y) {outputs = 2}
  out = NetOutput(a:0, a:1)
}
)");
  Observation base = h.run(1);
  // Over many seeds input 0 and 1 differ; every output must differ too.
  for (uint64_t s = 2; s < 40; ++s) {
    Observation o = h.run(s);
    ASSERT_NE(input(o, 0), input(base, 0));
    EXPECT_NE(o.outputs[0], base.outputs[0]);
    EXPECT_NE(o.outputs[1], base.outputs[1]);
  }
}

TEST(Interpreter, CopiesRefsAndViews) {
  Harness h(R"(
graph root {
  x   = Data() {index = 0}
  y   = Data() {index = 1}
  tm  = TensorMove(x)
  id  = Identity(_)
  v   = Reshape(x)
  w   = Assign(tm, y)
  out = NetOutput(tm, id, v, w)
}
)");
  Observation o = h.run();
  // w writes y's value into tm's buffer in place after tm copied x; output 0
  // and 3 are that buffer.
  EXPECT_EQ(o.outputs[0], o.outputs[3]);
  EXPECT_EQ(o.outputs[0], input(o, 1));
  EXPECT_NE(o.outputs[0], input(o, 0));
  EXPECT_EQ(o.outputs[1], Bytes(16, 0)); // a copy of nothing is zeros
  EXPECT_EQ(o.outputs[2], input(o, 0));  // the view shows the input
  EXPECT_EQ(o.outputBuffers[3], "fresh:tm:0");
}

TEST(Interpreter, CopyTruncatesOrZeroExtends) {
  Harness h(R"(
graph root {
  x   = Data() {index = 0, out0.dtype = u8, out0.shape = [3]}
  big = TensorMove(x) {out0.dtype = u8, out0.shape = [5]}
  sm  = TensorMove(x) {out0.dtype = u8, out0.shape = [2]}
  out = NetOutput(big, sm)
}
)");
  Observation o = h.run();
  const Bytes &in = input(o, 0);
  ASSERT_EQ(in.size(), 3u);
  EXPECT_EQ(o.outputs[0], (Bytes{in[0], in[1], in[2], 0, 0}));
  EXPECT_EQ(o.outputs[1], (Bytes{in[0], in[1]}));
}

TEST(Interpreter, ScribbleAlwaysChangesEveryByteOfEachInputOnce) {
  Harness h(R"(
graph root {
  x   = Data() {index = 0}
  y   = Data() {index = 1}
  ar  = HcomAllReduce(x, x, y)
  out = NetOutput(ar)
}
)");
  for (uint64_t seed = 1; seed < 20; ++seed) {
    RunOutcome r = h.interp->runOnce(seed);
    Harness clean(R"(
graph root {
  x   = Data() {index = 0}
  y   = Data() {index = 1}
  out = NetOutput(x)
}
)");
    Observation before = clean.run(seed);
    for (int k = 0; k < 2; ++k) {
      const Bytes &a = input(before, k), &b = input(r.observation, k);
      ASSERT_EQ(a.size(), b.size());
      for (size_t i = 0; i < a.size(); ++i)
        EXPECT_NE(a[i], b[i]) << "seed " << seed << " input " << k << " byte " << i;
    }
  }
}

TEST(Interpreter, InputMutableAttribute) {
  Harness h(R"(
graph root {
  x   = Data() {index = 0}
  y   = Data() {index = 1}
  a   = Foo(x) {_input_mutable = true}
  b   = HcomAllReduce(y) {_input_mutable = false}
  out = NetOutput(a, b)
}
)");
  Harness clean(R"(
graph root {
  x   = Data() {index = 0}
  y   = Data() {index = 1}
  out = NetOutput(x)
}
)");
  Observation o = h.run(), c = clean.run();
  EXPECT_NE(input(o, 0), input(c, 0));
  EXPECT_EQ(input(o, 1), input(c, 1));
}

constexpr const char *kIf = R"(
graph root {
  c   = Data() {index = 0, out0.dtype = u8, out0.shape = [1]}
  x   = Data() {index = 1}
  f   = If(c, x) {subgraphs = [then, else]}
  out = NetOutput(f)
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
)";

TEST(Interpreter, IfTakesThenOnOddCondition) {
  Harness h(kIf);
  bool sawOdd = false, sawEven = false;
  for (uint64_t seed = 1; seed < 40; ++seed) {
    Observation o = h.run(seed);
    bool odd = input(o, 0).at(0) & 1;
    if (odd) {
      sawOdd = true;
      EXPECT_EQ(o.outputs[0], input(o, 1));
      EXPECT_EQ(o.outputBuffers[0], "input1");
    } else {
      sawEven = true;
      EXPECT_NE(o.outputs[0], input(o, 1));
      EXPECT_EQ(o.outputBuffers[0], "fresh:else/r:0");
    }
  }
  EXPECT_TRUE(sawOdd && sawEven);
}

TEST(Interpreter, CaseTakesConditionModuloBranches) {
  Harness h(R"(
graph root {
  i   = Data() {index = 0, out0.dtype = u8, out0.shape = [1]}
  x   = Data() {index = 1}
  k   = Case(i, x) {subgraphs = [b0, b1, b2]}
  out = NetOutput(k)
}
graph b0 {
  a = Data() {_parent_node_index = 1}
  m = Op0(a)
  o = NetOutput(m) {in0._parent_node_index = 0}
}
graph b1 {
  a = Data() {_parent_node_index = 1}
  m = Op1(a)
  o = NetOutput(m) {in0._parent_node_index = 0}
}
graph b2 {
  a = Data() {_parent_node_index = 1}
  m = Op2(a)
  o = NetOutput(m) {in0._parent_node_index = 0}
}
)");
  std::set<std::string> seen;
  for (uint64_t seed = 1; seed < 40; ++seed) {
    Observation o = h.run(seed);
    unsigned branch = input(o, 0).at(0) % 3;
    EXPECT_EQ(o.outputBuffers[0], "fresh:b" + std::to_string(branch) + "/m:0");
    seen.insert(o.outputBuffers[0]);
  }
  EXPECT_EQ(seen.size(), 3u);
}

std::string whileGraph(int maxIterations) {
  return R"(
graph root {
  x   = Data() {index = 0}
  w   = While(x) {subgraphs = [cond, body], max_iterations = )" +
         std::to_string(maxIterations) + R"(}
  r   = Identity(w)
  out = NetOutput(r)
}
graph cond {
  c = Data() {_parent_node_index = 0}
  o = NetOutput(c)
}
graph body {
  a = Data() {_parent_node_index = 0}
  m = Step(a)
  o = NetOutput(m) {in0._parent_node_index = 0}
}
)";
}

TEST(Interpreter, WhileRunsBodyWhileConditionOddUpToBound) {
  // The body's Step is a pure mix of its input, so a chain of Steps yields
  // every loop iterate; the loop must stop at the first even iterate or
  // after max_iterations bodies.
  Harness chain(R"(
graph root {
  x   = Data() {index = 0}
  s1  = Step(x)
  s2  = Step(s1)
  s3  = Step(s2)
  out = NetOutput(x, s1, s2, s3)
}
)");
  for (int bound : {0, 1, 3}) {
    Harness h(whileGraph(bound));
    for (uint64_t seed = 1; seed < 30; ++seed) {
      Observation iterates = chain.run(seed);
      size_t expect = 0;
      while (expect < static_cast<size_t>(bound) && (iterates.outputs[expect].at(0) & 1))
        ++expect;
      Observation o = h.run(seed);
      EXPECT_EQ(o.outputs[0], iterates.outputs[expect]) << "bound " << bound << " seed " << seed;
      // The loop variable is updated in place: the caller's input 0 too.
      EXPECT_EQ(input(o, 0), iterates.outputs[expect]);
    }
  }
}

TEST(Interpreter, WeightWritesAreRecordedFaults) {
  Harness h(R"(
graph root {
  c   = Const()
  v   = Reshape(c)
  w   = Assign(v)
  out = NetOutput(w)
}
)");
  RunOutcome r = h.interp->runOnce(1);
  ASSERT_EQ(r.weightWrites.size(), 1u);
  EXPECT_EQ(r.weightWrites[0].node, "w");
  EXPECT_EQ(r.weightWrites[0].buffer, "weight:c");
}

TEST(Interpreter, VariableBoundOutputShowsTheVariable) {
  Harness h(R"(
graph root {
  x   = Data() {index = 0}
  v   = Variable()
  r   = ReadVariableOp(x) {ref_var_src_var_name = "v"}
  out = NetOutput(r)
}
)");
  RunOutcome r = h.interp->runOnce(1);
  ASSERT_FALSE(r.crashed) << r.crash;
  EXPECT_EQ(r.observation.outputs[0], r.observation.variables.at(0).second);
  EXPECT_EQ(r.observation.outputBuffers[0], "var:v");
}

TEST(Interpreter, UndeclaredVariableBindingFaults) {
  Harness h(R"(
graph root {
  x   = Data() {index = 0}
  r   = ReLU(x) {ref_var_src_var_name = "ghost"}
  out = NetOutput(r)
}
)");
  RunOutcome r = h.interp->runOnce(1);
  EXPECT_TRUE(r.crashed);
  EXPECT_NE(r.crash.find("var:ghost"), std::string::npos) << r.crash;
}

TEST(Interpreter, ExperimentRunsTwiceWithVariablesKept) {
  Harness h(R"(
graph root {
  v   = Variable()
  x   = Data() {index = 0}
  r   = ReLU(v)
  a   = AssignAdd(v, x)
  out = NetOutput(r)
  ctrl r -> a
}
)");
  ExperimentResult e = h.interp->experiment(3);
  ASSERT_FALSE(e.crashed());
  // Run 2 reads the variable run 1 left behind.
  EXPECT_NE(e.run1.observation.outputs[0], e.run2.observation.outputs[0]);
  EXPECT_NE(e.run1.observation.variables[0].second, e.run2.observation.variables[0].second);
  // Inputs are refilled with the same values.
  EXPECT_EQ(e.run1.observation.inputs, e.run2.observation.inputs);
}

TEST(Interpreter, AliasRelation) {
  Harness h(R"(
graph root {
  x   = Data() {index = 0}
  v   = Variable()
  r   = ReLU(x)
  out = NetOutput(x, r, r, v)
}
)");
  ExperimentResult e = h.interp->experiment(1);
  std::vector<AliasPair> expected = {{0, "input0"}, {1, "output2"}, {2, "output1"}, {3, "var:v"}};
  EXPECT_EQ(e.alias, expected);
}

TEST(Interpreter, Schedules) {
  Harness h(R"(
graph root {
  x   = Data() {index = 0}
  a   = A(x)
  b   = B(x)
  c   = C(a, b)
  out = NetOutput(c)
}
)");
  std::string err;
  auto ref = h.interp->schedule(0, {}, err);
  ASSERT_TRUE(ref);
  EXPECT_EQ(h.inl.names(0, *ref), (std::vector<std::string>{"x", "a", "b", "c", "out"}));

  ScheduleRequest explicitReq{ScheduleKind::Explicit, 0, {"b", "a"}};
  auto ex = h.interp->schedule(0, explicitReq, err);
  ASSERT_TRUE(ex) << err;
  EXPECT_EQ(h.inl.names(0, *ex), (std::vector<std::string>{"x", "b", "a", "c", "out"}));

  ScheduleRequest wrong{ScheduleKind::Explicit, 0, {"c", "a"}};
  EXPECT_FALSE(h.interp->schedule(0, wrong, err));
  EXPECT_NE(err.find("`c`"), std::string::npos) << err;
  ScheduleRequest unknown{ScheduleKind::Explicit, 0, {"nope"}};
  EXPECT_FALSE(h.interp->schedule(0, unknown, err));
  ScheduleRequest twice{ScheduleKind::Explicit, 0, {"a", "a"}};
  EXPECT_FALSE(h.interp->schedule(0, twice, err));

  std::set<std::vector<StepIndex>> orders;
  for (uint64_t s = 0; s < 32; ++s) {
    auto r = h.interp->schedule(0, {ScheduleKind::Random, s, {}}, err);
    ASSERT_TRUE(r);
    EXPECT_EQ(*r, *h.interp->schedule(0, {ScheduleKind::Random, s, {}}, err)) << "seeded";
    orders.insert(*r);
  }
  EXPECT_GE(orders.size(), 2u) << "random schedules explore both orders of a and b";
}

TEST(Interpreter, StepBudget) {
  bool exceeded = false;
  Harness pass(R"(
graph root {
  x   = Data() {index = 0}
  w   = While(x) {subgraphs = [cond, body], max_iterations = 1000000000}
  out = NetOutput(w)
}
graph cond {
  c = Data() {_parent_node_index = 0}
  o = NetOutput(c)
}
graph body {
  a = Data() {_parent_node_index = 0}
  o = NetOutput(a) {in0._parent_node_index = 0}
}
)");
  for (uint64_t seed = 1; seed < 40; ++seed) {
    RunOutcome r = pass.interp->runOnce(seed);
    Harness probe(R"(
graph root {
  x   = Data() {index = 0}
  out = NetOutput(x)
}
)");
    bool odd = input(probe.run(seed), 0).at(0) & 1;
    EXPECT_EQ(r.budgetExceeded, odd) << "seed " << seed;
    EXPECT_FALSE(r.crashed);
    exceeded = exceeded || r.budgetExceeded;
  }
  EXPECT_TRUE(exceeded);
}

TEST(RunModule, ReportsPlanScheduleAndErrors) {
  Module m = parseText(R"(
graph root {
  x   = Data() {index = 0}
  r   = ReLU(x)
  out = NetOutput(r)
}
)");
  RunOptions o;
  RunReport rep = runModule(m, o);
  ASSERT_TRUE(rep.ok) << rep.error;
  EXPECT_EQ(rep.schedule, (std::vector<std::string>{"x", "r", "out"}));
  EXPECT_NE(rep.plan.find("fresh:r:0"), std::string::npos);
  o.schedule = {ScheduleKind::Explicit, 0, {"out", "x"}};
  rep = runModule(m, o);
  EXPECT_FALSE(rep.ok);
  EXPECT_FALSE(rep.error.empty());
}

TEST(Hex, LowerCaseNoSeparators) {
  EXPECT_EQ(toHex({0x00, 0xab, 0x7f}), "00ab7f");
  EXPECT_EQ(toHex({}), "");
}

} // namespace
} // namespace graphvet::oracle
