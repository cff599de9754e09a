// The table-driven self-test of the oracle: hand-made (original, optimized)
// pairs in tests/oracle/pairs/, half sound and half not, covering every
// violation kind. Each row asserts the verdict and the kind of the first
// violation, with and without Z3. A few rows are built by mutating the
// parsed original, because the parser refuses cyclic or malformed text.
#include "oracle/check.h"
#include "oracle/inlined.h"
#include "oracle/interpreter.h"
#include "oracle/memory_plan.h"
#include "oracle_test_util.h"

#include "ir/op_library.h"

#include <algorithm>
#include <functional>

namespace graphvet::oracle {
namespace {

using testing::parsePairFile;

struct PairCase {
  const char *name;
  Verdict verdict;
  const char *kind; ///< first violation's kind ("" for sound)
};

// clang-format off
const PairCase kPairs[] = {
    // Sound.
    {"tm-direct",                 Verdict::Sound, ""},
    {"identical-if",              Verdict::Sound, ""},
    {"both-read",                 Verdict::Sound, ""},
    {"sibling-ctrl",              Verdict::Sound, ""},
    {"through-reshape",           Verdict::Sound, ""},
    {"output-reuse-granted",      Verdict::Sound, ""},
    {"input-reuse-granted",       Verdict::Sound, ""},
    {"variable-read",             Verdict::Sound, ""},
    {"const-read",                Verdict::Sound, ""},
    {"call-passthrough",          Verdict::Sound, ""},
    {"redundant-ctrl",            Verdict::Sound, ""},
    {"dead-node",                 Verdict::Sound, ""},
    {"while-copy-kept",           Verdict::Sound, ""},
    {"if-branch-tm",              Verdict::Sound, ""},
    {"renamed",                   Verdict::Sound, ""},
    {"scribble-private",          Verdict::Sound, ""},
    {"case-sound",                Verdict::Sound, ""},
    {"layout-same-buffer",        Verdict::Sound, ""},
    // Unsound.
    {"race-one-schedule",         Verdict::Violation, "race"},
    {"edge-wrong-direction",      Verdict::Violation, "value"},
    {"output-aliases-input",      Verdict::Violation, "alias"},
    {"weight-via-view",           Verdict::Violation, "weight-written"},
    {"variable-second-run",       Verdict::Violation, "value"},
    {"call-writer-races-reader",  Verdict::Violation, "race"},
    {"option-wrong-index",        Verdict::Violation, "alias"},
    {"output-count-changed",      Verdict::Violation, "invalid-output"},
    {"variable-dropped",          Verdict::Violation, "invalid-output"},
    {"layout-input-continuous",   Verdict::Violation, "layout"},
    {"layout-output-weight",      Verdict::Violation, "layout"},
    {"crash-undeclared-variable", Verdict::Violation, "crash"},
    {"input-clobbered",           Verdict::Violation, "input-clobbered"},
    {"scribble-on-output",        Verdict::Violation, "value"},
    {"weight-written-direct",     Verdict::Violation, "weight-written"},
    {"while-races-reader",        Verdict::Violation, "race"},
    {"race-in-body",              Verdict::Violation, "race"},
    {"outputs-share",             Verdict::Violation, "alias"},
    {"swapped-inputs",            Verdict::Violation, "value"},
    {"if-writes-input",           Verdict::Violation, "race"},
    // Not a valid original.
    {"racy-original",             Verdict::Invalid, "race"},
};
// clang-format on

class Pairs : public ::testing::TestWithParam<PairCase> {};

void expectResult(const CheckResult &r, const PairCase &c) {
  ASSERT_EQ(verdictName(r.verdict), verdictName(c.verdict)) << c.name << ": " << formatResult(r);
  if (c.verdict == Verdict::Sound) {
    EXPECT_TRUE(r.violations.empty()) << formatResult(r);
    return;
  }
  ASSERT_FALSE(r.violations.empty()) << formatResult(r);
  EXPECT_EQ(r.violations.front().kind, c.kind) << formatResult(r);
  for (const Violation &v : r.violations) {
    EXPECT_NE(std::find(std::begin(kViolationKinds), std::end(kViolationKinds), v.kind),
              std::end(kViolationKinds))
        << v.kind;
    EXPECT_FALSE(v.message.empty());
  }
}

TEST_P(Pairs, VerdictAndKind) {
  const PairCase &c = GetParam();
  Module orig = parsePairFile(std::string(c.name) + ".orig.graph");
  Module opt = parsePairFile(std::string(c.name) + ".opt.graph");
  CheckOptions withZ3;
  CheckResult r = checkRefinement(orig, opt, withZ3);
  expectResult(r, c);
  // A race found with Z3 took the proof query plus one witness query.
  if (std::string(c.kind) == "race" && c.verdict == Verdict::Violation) {
    EXPECT_GE(r.z3Queries, 2u);
  }
  CheckOptions noZ3;
  noZ3.useZ3 = false;
  CheckResult fast = checkRefinement(orig, opt, noZ3);
  expectResult(fast, c);
  EXPECT_EQ(fast.violations.size(), r.violations.size());
}

TEST_P(Pairs, Deterministic) {
  const PairCase &c = GetParam();
  Module orig = parsePairFile(std::string(c.name) + ".orig.graph");
  Module opt = parsePairFile(std::string(c.name) + ".opt.graph");
  CheckOptions o;
  EXPECT_EQ(formatResult(checkRefinement(orig, opt, o)),
            formatResult(checkRefinement(orig, opt, o)));
}

INSTANTIATE_TEST_SUITE_P(Oracle, Pairs, ::testing::ValuesIn(kPairs),
                         [](const ::testing::TestParamInfo<PairCase> &info) {
                           std::string n = info.param.name;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(PairsTable, CoversEveryKindAndIsBalanced) {
  size_t sound = 0, unsound = 0;
  std::set<std::string> kinds;
  for (const PairCase &c : kPairs) {
    if (c.verdict == Verdict::Sound)
      ++sound;
    if (c.verdict == Verdict::Violation) {
      ++unsound;
      kinds.insert(c.kind);
    }
  }
  // cycle is covered by the mutation rows below (the parser refuses cycles);
  // malformed is an original's defect, never a pair's verdict
  // (CheckRefinement.MalformedOriginalIsInvalid).
  kinds.insert("cycle");
  kinds.insert("malformed");
  EXPECT_GE(sound + unsound, 30u);
  EXPECT_GE(sound, 15u);
  EXPECT_GE(unsound, 15u);
  for (std::string_view k : kViolationKinds)
    EXPECT_TRUE(kinds.count(std::string(k))) << "no pair for kind " << k;
}

// -- details the table cannot express ----------------------------------------

CheckResult checkPair(const std::string &name, CheckOptions o = {}) {
  return checkRefinement(parsePairFile(name + ".orig.graph"), parsePairFile(name + ".opt.graph"),
                         o);
}

const Violation *firstOf(const CheckResult &r, const std::string &kind) {
  for (const Violation &v : r.violations)
    if (v.kind == kind)
      return &v;
  return nullptr;
}

TEST(PairDetails, RaceVisibleUnderOnlyOneSchedule) {
  Module orig = parsePairFile("race-one-schedule.orig.graph");
  Module opt = parsePairFile("race-one-schedule.opt.graph");
  CheckResult r = checkRefinement(orig, opt, {});
  const Violation *v = firstOf(r, "race");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->nodes, (std::vector<std::string>{"sib", "w"}));
  EXPECT_EQ(v->buffers, (std::vector<std::string>{"fresh:r:0"}));
  ASSERT_EQ(v->schedules.size(), 2u);
  EXPECT_NE(v->bytes.find("expected"), std::string::npos) << v->bytes;

  // Sampling the reference schedule alone would miss it: there the optimized
  // graph observes exactly what the original does; the second witness not.
  MemoryPlan pa = MemoryPlan::build(orig), pb = MemoryPlan::build(opt);
  InlinedModule ia = InlinedModule::build(orig, pa), ib = InlinedModule::build(opt, pb);
  Interpreter ra(orig, pa, ia), rb(opt, pb, ib);
  RunOutcome expected = ra.runOnce(1);
  RunOutcome reference = rb.runOnce(1);
  EXPECT_EQ(expected.observation.outputs, reference.observation.outputs);
  DomainOrders witness(ib.domains.size());
  for (const std::string &name : v->schedules[1])
    witness[0].push_back(ib.findStep(0, name));
  RunOutcome other = rb.runOnce(1, witness);
  EXPECT_NE(expected.observation.outputs, other.observation.outputs);
}

TEST(PairDetails, VariableClobberShowsInSecondRunOutputs) {
  CheckResult r = checkPair("variable-second-run");
  bool run2Output = false;
  for (const Violation &v : r.violations) {
    EXPECT_EQ(v.message.find("graph output 0 differs after run 1"), std::string::npos)
        << "run 1's outputs are identical";
    if (v.message.find("graph output 0 differs after run 2") != std::string::npos)
      run2Output = true;
  }
  EXPECT_TRUE(run2Output) << formatResult(r);
}

TEST(PairDetails, CallWriterIsNamedWithItsSubgraph) {
  CheckResult r = checkPair("call-writer-races-reader");
  const Violation *v = firstOf(r, "race");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->nodes, (std::vector<std::string>{"body/w", "s"}));
  // Both witness schedules order the pair differently.
  ASSERT_EQ(v->schedules.size(), 2u);
  auto pos = [](const std::vector<std::string> &s, const char *n) {
    return std::find(s.begin(), s.end(), n) - s.begin();
  };
  EXPECT_LT(pos(v->schedules[0], "body/w"), pos(v->schedules[0], "s"));
  EXPECT_GT(pos(v->schedules[1], "body/w"), pos(v->schedules[1], "s"));
}

TEST(PairDetails, WrongIndexNamesTheInput) {
  CheckResult r = checkPair("option-wrong-index");
  const Violation *v = firstOf(r, "alias");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->buffers, (std::vector<std::string>{"input0"}));
  EXPECT_NE(v->message.find("output 0"), std::string::npos);
}

TEST(PairDetails, WeightWrittenThroughView) {
  CheckResult r = checkPair("weight-via-view");
  const Violation *v = firstOf(r, "weight-written");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->nodes, (std::vector<std::string>{"w"}));
  EXPECT_EQ(v->buffers, (std::vector<std::string>{"weight:c"}));
}

TEST(PairDetails, ValueViolationShowsBytes) {
  CheckResult r = checkPair("swapped-inputs");
  const Violation *v = firstOf(r, "value");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->nodes, (std::vector<std::string>{"a"}));
  EXPECT_EQ(v->bytes.rfind("expected ", 0), 0u) << v->bytes;
  EXPECT_NE(v->bytes.find(" got "), std::string::npos);
}

// -- rows built by mutation -----------------------------------------------------

using Mutation = std::function<void(Module &)>;

CheckResult checkMutated(const std::string &name, const Mutation &mutate, CheckOptions o = {}) {
  Module orig = parsePairFile(name + ".orig.graph");
  Module opt = orig;
  mutate(opt);
  return checkRefinement(orig, opt, o);
}

TEST(Mutations, BackEdgeIsACycle) {
  CheckResult r = checkMutated("tm-direct", [](Module &m) {
    Graph &g = m.root();
    g.addCtrlEdge(g.find("a"), g.find("r"));
  });
  ASSERT_EQ(r.verdict, Verdict::Violation) << formatResult(r);
  EXPECT_EQ(r.violations.front().kind, "cycle");
  EXPECT_FALSE(r.violations.front().nodes.empty());
}

TEST(Mutations, CycleThroughCallBoundary) {
  // pc's body result feeds `a`, and `a` gets a control edge into pc.
  CheckResult r = checkMutated("call-passthrough", [](Module &m) {
    Graph &g = m.root();
    g.addCtrlEdge(g.find("a"), g.find("pc"));
  });
  ASSERT_EQ(r.verdict, Verdict::Violation) << formatResult(r);
  EXPECT_EQ(r.violations.front().kind, "cycle");
}

TEST(Mutations, DisconnectedTensorMoveIsAnInvalidOutput) {
  CheckResult r = checkMutated("tm-direct", [](Module &m) {
    Graph &g = m.root();
    g.setInput({g.find("tm"), 0}, std::nullopt);
  });
  ASSERT_EQ(r.verdict, Verdict::Violation) << formatResult(r);
  EXPECT_EQ(r.violations.front().kind, "invalid-output");
}

TEST(Mutations, DroppedUserInputIsAnInvalidOutput) {
  CheckResult r = checkMutated("swapped-inputs", [](Module &m) {
    Graph &g = m.root();
    g.setInput({g.find("a"), 0}, std::nullopt);
    g.removeNode(g.find("x"));
  });
  ASSERT_EQ(r.verdict, Verdict::Violation) << formatResult(r);
  EXPECT_EQ(r.violations.front().kind, "invalid-output");
  EXPECT_NE(r.violations.front().message.find("user input 0"), std::string::npos);
}

TEST(Mutations, ZeroZ3BudgetIsInconclusiveNeverSound) {
  CheckOptions o;
  o.z3TimeoutMs = 0;
  // sibling-ctrl has conflicting pairs that only the solver can prove ordered.
  CheckResult r = checkPair("sibling-ctrl", o);
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << formatResult(r);
  EXPECT_FALSE(r.reason.empty());
  // Without Z3 the reachability verdict stands.
  o.useZ3 = false;
  EXPECT_EQ(checkPair("sibling-ctrl", o).verdict, Verdict::Sound);
}

std::string passThroughWhile(const std::string &maxIterations) {
  return R"(
graph root {
  x   = Data() {index = 0}
  wh  = While(x) {subgraphs = [cond, body], max_iterations = )" +
         maxIterations + R"(}
  r   = ReLU(wh)
  out = NetOutput(r)
}
graph cond {
  c = Data() {_parent_node_index = 0}
  o = NetOutput(c)
}
graph body {
  a = Data() {_parent_node_index = 0}
  o = NetOutput(a) {in0._parent_node_index = 0}
}
)";
}

TEST(Mutations, StepBudgetIsInconclusive) {
  // cond hands back the loop variable, the body leaves it unchanged: with an
  // odd first byte the loop only stops at max_iterations.
  Module orig = testing::parseText(passThroughWhile("3"));
  Module opt = testing::parseText(passThroughWhile("1099511627776"));
  // Find a seed whose input 0 starts with an odd byte.
  MemoryPlan plan = MemoryPlan::build(orig);
  InlinedModule inl = InlinedModule::build(orig, plan);
  Interpreter interp(orig, plan, inl);
  uint64_t seed = 1;
  while (seed < 64 && (interp.runOnce(seed).observation.inputs.at(0).second.at(0) & 1) == 0)
    ++seed;
  ASSERT_LT(seed, 64u);
  CheckOptions o;
  o.seed = seed;
  o.numStates = 1;
  EXPECT_EQ(checkRefinement(orig, orig, o).verdict, Verdict::Sound);
  CheckResult r = checkRefinement(orig, opt, o);
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << formatResult(r);
  EXPECT_NE(r.reason.find("budget"), std::string::npos) << r.reason;
}

} // namespace
} // namespace graphvet::oracle
