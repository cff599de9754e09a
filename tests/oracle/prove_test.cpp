// graphvet prove's library (oracle/prove.h): verdicts of the cast rules on
// the classic instances of tensor-semantics.md §4, ad-hoc rules over the
// other ops the encoder models (arithmetic with signed zeros, shape ops,
// Split/Concat, Dropout), a deliberately wrong precondition (a
// disagreement), and a budget that runs out (inconclusive, never proved).
// Every refutation has gone through the kernel replay (a counterexample
// that does not replay is verdict Error, which these tests reject).
#include "ir/rewrite_rule.h"
#include "oracle/prove.h"
#include "oracle/rule_instance.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

namespace graphvet::oracle {
namespace {

using namespace rewrite;

AttrValue dt(DType t) {
  return AttrValue::ofIdent(std::string(dtypeName(t)));
}

Instance castInstance(DType x, std::vector<std::pair<std::string, DType>> tos) {
  Instance inst;
  inst.label = "x:" + std::string(dtypeName(x));
  inst.binding.operands["x"] = TensorType{x, {1}};
  for (auto &[k, v] : tos)
    inst.binding.attrs[k] = dt(v);
  return inst;
}

Instance shapedInstance(TensorType x) {
  Instance inst;
  inst.label = x.str();
  inst.binding.operands["x"] = std::move(x);
  return inst;
}

ProveOptions opts() {
  ProveOptions o;
  o.timeoutMs = 60000;
  return o;
}

/// The decimal text of an element ("1.0001 (0x...)" -> "1.0001").
std::string decimal(const std::string &elementText) {
  return elementText.substr(0, elementText.find(' '));
}

/// A rule with no precondition of interest (allows nothing) and no
/// instances of its own: the test supplies them.
Rule adHoc(std::string_view name, Term pattern, Term replacement, bool allows = false) {
  return Rule{name,
              "test rule",
              std::move(pattern),
              std::move(replacement),
              "test",
              [allows](const Binding &) { return allows; },
              [] { return std::vector<Instance>{}; }};
}

void expectRefutedWithCounterexample(const InstanceProof &p) {
  ASSERT_EQ(p.verdict, ProofVerdict::Refuted) << p.note;
  ASSERT_TRUE(p.counterexample.has_value());
  EXPECT_FALSE(p.counterexample->inputs.empty());
  EXPECT_GE(p.counterexample->element, 0);
  EXPECT_NE(p.counterexample->original, p.counterexample->replacement);
}

TEST(ProveCast, F32ThroughF16IsRefutedWithAReplayedCounterexample) {
  const Rule *pair = findRule("cast-pair");
  ASSERT_NE(pair, nullptr);
  InstanceProof p = proveInstance(
      *pair, castInstance(DType::F32, {{"$B", DType::F16}, {"$A", DType::F32}}), opts());
  expectRefutedWithCounterexample(p);
  EXPECT_FALSE(p.allowed);
  EXPECT_EQ(p.finding, ProofFinding::None);
  // The input's text carries its bits, and the two results are those the
  // kernels computed on it.
  const std::string &x = p.counterexample->inputs[0].elements[0];
  EXPECT_NE(x.find("(0x"), std::string::npos) << x;
  // Special values are tried first: 1.0001 is the classic witness.
  EXPECT_EQ(x, "1.0001 (0x3f800347)");
  EXPECT_EQ(p.counterexample->original, "1 (0x3f800000)");
  EXPECT_EQ(p.counterexample->inputs[0].type, "f32[1]");
}

TEST(ProveCast, F16ThroughF32IsProved) {
  const Rule *pair = findRule("cast-pair");
  ASSERT_NE(pair, nullptr);
  InstanceProof p = proveInstance(
      *pair, castInstance(DType::F16, {{"$B", DType::F32}, {"$A", DType::F16}}), opts());
  EXPECT_EQ(p.verdict, ProofVerdict::Proved) << p.note;
  EXPECT_TRUE(p.allowed);
  EXPECT_EQ(p.finding, ProofFinding::None);
}

TEST(ProveCast, I32ThroughF32IsRefutedAbove2To24) {
  const Rule *pair = findRule("cast-pair");
  ASSERT_NE(pair, nullptr);
  Instance inst = castInstance(DType::I32, {{"$B", DType::F32}, {"$A", DType::I32}});
  InstanceProof p = proveInstance(*pair, inst, opts());
  expectRefutedWithCounterexample(p);
  // Every i32 up to 2^24 in magnitude is exact in f32: the witness is larger.
  long long v = std::atoll(decimal(p.counterexample->inputs[0].elements[0]).c_str());
  EXPECT_GT(std::llabs(v), 1LL << 24);
  EXPECT_EQ(v, 16777217);
  // And 16777217 itself is a counterexample, by the kernels.
  std::string error, replError;
  auto g = instantiate(*pair, inst, error, replError);
  ASSERT_TRUE(g) << error;
  Tensor x(TensorType{DType::I32, {1}});
  x.setInt(0, 16777217);
  auto values = evaluateInstance(*g, {{"x", x}}, error);
  ASSERT_TRUE(values) << error;
  EXPECT_EQ((*values)[static_cast<size_t>(g->original.node)][0].getInt(0), 16777216);
  EXPECT_EQ((*values)[static_cast<size_t>(g->replacement.node)][0].getInt(0), 16777217);
}

TEST(ProveCast, I8ThroughU8ToI32IsRefuted) {
  const Rule *chain = findRule("cast-chain");
  ASSERT_NE(chain, nullptr);
  InstanceProof p = proveInstance(
      *chain, castInstance(DType::I8, {{"$B", DType::U8}, {"$C", DType::I32}}), opts());
  expectRefutedWithCounterexample(p);
  long long v = std::atoll(decimal(p.counterexample->inputs[0].elements[0]).c_str());
  EXPECT_LT(v, 0); // only negative i8 values change through u8
  EXPECT_FALSE(p.allowed);
}

TEST(ProveCast, F32ThroughBoolIsRefuted) {
  const Rule *pair = findRule("cast-pair");
  ASSERT_NE(pair, nullptr);
  InstanceProof p = proveInstance(
      *pair, castInstance(DType::F32, {{"$B", DType::Bool}, {"$A", DType::F32}}), opts());
  expectRefutedWithCounterexample(p);
  EXPECT_FALSE(p.allowed);
}

TEST(ProveCast, SameTypeCastIsProvedAndOtherTypesRefusedByType) {
  const Rule *same = findRule("cast-same-type");
  ASSERT_NE(same, nullptr);
  InstanceProof p = proveInstance(*same, castInstance(DType::BF16, {{"$A", DType::BF16}}), opts());
  EXPECT_EQ(p.verdict, ProofVerdict::Proved);
  InstanceProof q = proveInstance(*same, castInstance(DType::BF16, {{"$A", DType::F32}}), opts());
  ASSERT_EQ(q.verdict, ProofVerdict::Refuted);
  ASSERT_TRUE(q.counterexample);
  EXPECT_NE(q.counterexample->reason.find("result types differ"), std::string::npos);
}

TEST(ProveArith, AddPlusZeroIsRefutedAtNegativeZero) {
  Rule r = adHoc("add-plus-zero", op("Add", {var("x"), constant("zero", 0.0)}), var("x"));
  InstanceProof p = proveInstance(r, shapedInstance({DType::F32, {2}}), opts());
  expectRefutedWithCounterexample(p);
  const Counterexample &c = *p.counterexample;
  const std::string &x = c.inputs[0].elements[static_cast<size_t>(c.element)];
  EXPECT_EQ(x, "-0 (0x80000000)");
  EXPECT_EQ(c.original, "0 (0x00000000)");
}

TEST(ProveArith, AddMinusZeroIsProvedInEveryFloatDType) {
  Rule r = adHoc("add-minus-zero", op("Add", {var("x"), constant("zero", -0.0)}), var("x"), true);
  for (DType t : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    InstanceProof p = proveInstance(r, shapedInstance({t, {2}}), opts());
    EXPECT_EQ(p.verdict, ProofVerdict::Proved) << dtypeName(t) << ": " << p.note;
    EXPECT_EQ(p.finding, ProofFinding::None);
  }
}

TEST(ProveArith, IntegerIdentitiesAndTheirFailures) {
  Rule div1 = adHoc("div-one", op("Div", {var("x"), constant("one", 1)}), var("x"), true);
  EXPECT_EQ(proveInstance(div1, shapedInstance({DType::I8, {3}}), opts()).verdict,
            ProofVerdict::Proved);
  // x * 0 is not 0 for floats (NaN, inf, -0), but is for integers (scalars:
  // the constant is a scalar, and the result types must agree).
  Rule mul0 = adHoc("mul-zero", op("Mul", {var("x"), constant("zero", 0)}), constant("zero", 0));
  EXPECT_EQ(proveInstance(mul0, shapedInstance({DType::I16, {}}), opts()).verdict,
            ProofVerdict::Proved);
  expectRefutedWithCounterexample(proveInstance(mul0, shapedInstance({DType::F16, {}}), opts()));
  Rule negneg = adHoc("neg-neg", op("Neg", {op("Neg", {var("x")})}), var("x"), true);
  EXPECT_EQ(proveInstance(negneg, shapedInstance({DType::I32, {1}}), opts()).verdict,
            ProofVerdict::Proved);
  EXPECT_EQ(proveInstance(negneg, shapedInstance({DType::F32, {1}}), opts()).verdict,
            ProofVerdict::Proved);
  // x / x = 1 for integers: at x = 0 the original is indeterminate, which
  // anything refines. For floats 0/0 and inf/inf are NaN: refuted.
  Rule divself = adHoc("div-self", op("Div", {var("x"), var("x")}), constant("one", 1));
  EXPECT_EQ(proveInstance(divself, shapedInstance({DType::I8, {}}), opts()).verdict,
            ProofVerdict::Proved);
  expectRefutedWithCounterexample(proveInstance(divself, shapedInstance({DType::F32, {}}), opts()));
}

TEST(ProveShape, TransposePairsComposeOrNot) {
  auto perm = [](std::vector<int64_t> p) {
    AttrValue::List l;
    for (int64_t v : p)
      l.push_back(AttrValue::ofInt(v));
    return AttrValue::ofList(l);
  };
  Term twice = op("Transpose", {op("Transpose", {var("x")}, {attrLit("perm", perm({1, 2, 0}))})},
                  {attrLit("perm", perm({2, 0, 1}))});
  Rule good = adHoc("transpose-inverse", twice, var("x"), true);
  EXPECT_EQ(proveInstance(good, shapedInstance({DType::U8, {2, 3, 2}}), opts()).verdict,
            ProofVerdict::Proved);
  // The same pair is not the identity when the perms do not compose to it:
  // shapes agree on [2, 2, 2], the values do not.
  Term wrong = op("Transpose", {op("Transpose", {var("x")}, {attrLit("perm", perm({1, 2, 0}))})},
                  {attrLit("perm", perm({1, 2, 0}))});
  Rule bad = adHoc("transpose-wrong", wrong, var("x"), true);
  InstanceProof p = proveInstance(bad, shapedInstance({DType::I8, {2, 2, 2}}), opts());
  expectRefutedWithCounterexample(p);
  EXPECT_EQ(p.finding, ProofFinding::Disagreement);
  // On [2, 3, 2] the wrong composition changes the shape: refuted by type.
  InstanceProof q = proveInstance(bad, shapedInstance({DType::I8, {2, 3, 2}}), opts());
  ASSERT_EQ(q.verdict, ProofVerdict::Refuted);
  EXPECT_NE(q.counterexample->reason.find("result types differ"), std::string::npos);
}

std::shared_ptr<const Tensor> i64s(std::vector<int64_t> v) {
  auto t = std::make_shared<Tensor>(TensorType{DType::I64, {static_cast<int64_t>(v.size())}});
  for (size_t i = 0; i < v.size(); ++i)
    t->setInt(static_cast<int64_t>(i), v[i]);
  return t;
}

TEST(ProveShape, SplitConcatSliceReshapeAndPad) {
  // Concat(Split(x)#0, Split(x)#1) along the same axis is x.
  Term s0 = op("Split", {var("x")}, {attrLit("axis", AttrValue::ofInt(1))});
  Term s1 = s0;
  s1.result = 1;
  Instance inst = shapedInstance({DType::F16, {2, 4}});
  inst.binding.counts["$n"] = 2;
  Rule rejoin =
      adHoc("split-concat", op("Concat", {s0, s1}, {attrLit("axis", AttrValue::ofInt(1))}),
            var("x"), true);
  EXPECT_EQ(proveInstance(rejoin, inst, opts()).verdict, ProofVerdict::Proved);
  Rule swapped = adHoc("split-concat-swapped",
                       op("Concat", {s1, s0}, {attrLit("axis", AttrValue::ofInt(1))}), var("x"));
  expectRefutedWithCounterexample(proveInstance(swapped, inst, opts()));

  // Slice of the whole tensor with step 1 is x; with step -1 it reverses.
  Instance sl = shapedInstance({DType::I32, {3}});
  sl.binding.constants["s"] = i64s({0});
  sl.binding.constants["e"] = i64s({3});
  sl.binding.constants["rs"] = i64s({-1});
  sl.binding.constants["re"] = i64s({-4});
  sl.binding.constants["rstep"] = i64s({-1});
  Rule whole =
      adHoc("slice-whole", op("Slice", {var("x"), constant("s", 0), constant("e", 0)}), var("x"));
  EXPECT_EQ(proveInstance(whole, sl, opts()).verdict, ProofVerdict::Proved);
  Term rev = op("Slice", {var("x"), constant("rs", 0), constant("re", 0), constant("s", 0),
                          constant("rstep", 0)});
  Rule revrev = adHoc("slice-reverse-twice",
                      op("Slice", {rev, constant("rs", 0), constant("re", 0), constant("s", 0),
                                   constant("rstep", 0)}),
                      var("x"));
  EXPECT_EQ(proveInstance(revrev, sl, opts()).verdict, ProofVerdict::Proved);
  Rule revOnce = adHoc("slice-reverse", rev, var("x"));
  expectRefutedWithCounterexample(proveInstance(revOnce, sl, opts()));

  // Reshape(Reshape(x, [6]), [2, 3]) is x on [2, 3].
  Instance rs = shapedInstance({DType::Bool, {2, 3}});
  rs.binding.constants["flat"] = i64s({6});
  rs.binding.constants["back"] = i64s({2, 3});
  Rule reshape2 =
      adHoc("reshape-back",
            op("Reshape", {op("Reshape", {var("x"), constant("flat", 0)}), constant("back", 0)}),
            var("x"));
  EXPECT_EQ(proveInstance(reshape2, rs, opts()).verdict, ProofVerdict::Proved);

  // Slice(Pad(x)) cutting the padding off is x, for every mode.
  for (const char *mode : {"constant", "edge", "reflect", "wrap"}) {
    Instance pd = shapedInstance({DType::F32, {3}});
    pd.binding.constants["pads"] = i64s({2, 1});
    pd.binding.constants["s"] = i64s({2});
    pd.binding.constants["e"] = i64s({5});
    Term padded =
        op("Pad", {var("x"), constant("pads", 0)}, {attrLit("mode", AttrValue::ofString(mode))});
    Rule crop =
        adHoc("pad-crop", op("Slice", {padded, constant("s", 0), constant("e", 0)}), var("x"));
    EXPECT_EQ(proveInstance(crop, pd, opts()).verdict, ProofVerdict::Proved) << mode;
    // Cropping one element off the wrong side is not x.
    pd.binding.constants["s"] = i64s({1});
    pd.binding.constants["e"] = i64s({4});
    expectRefutedWithCounterexample(proveInstance(crop, pd, opts()));
  }
}

TEST(ProveShape, IdentityDropoutExpandSqueeze) {
  Instance inst = shapedInstance({DType::BF16, {1, 2}});
  Rule id = adHoc("identity", op("Identity", {var("x")}), var("x"), true);
  EXPECT_EQ(proveInstance(id, inst, opts()).verdict, ProofVerdict::Proved);
  Rule drop = adHoc("dropout", op("Dropout", {var("x")}), var("x"), true);
  EXPECT_EQ(proveInstance(drop, inst, opts()).verdict, ProofVerdict::Proved);
  inst.binding.constants["axes"] = i64s({0});
  Rule sq =
      adHoc("unsqueeze-squeeze",
            op("Unsqueeze", {op("Squeeze", {var("x"), constant("axes", 0)}), constant("axes", 0)}),
            var("x"), true);
  EXPECT_EQ(proveInstance(sq, inst, opts()).verdict, ProofVerdict::Proved);
  // Expand to [2, 2] then Slice the first row back is x.
  inst.binding.constants["shape"] = i64s({2, 2});
  inst.binding.constants["s"] = i64s({1});
  inst.binding.constants["e"] = i64s({2});
  Rule ex = adHoc("expand-slice",
                  op("Slice", {op("Expand", {var("x"), constant("shape", 0)}), constant("s", 0),
                               constant("e", 0)}),
                  var("x"), true);
  EXPECT_EQ(proveInstance(ex, inst, opts()).verdict, ProofVerdict::Proved);
}

TEST(ProveVerdicts, AWrongPreconditionIsADisagreement) {
  const Rule *pair = findRule("cast-pair");
  ASSERT_NE(pair, nullptr);
  Rule wrong = *pair;
  wrong.name = "cast-pair-always";
  wrong.allows = [](const Binding &) { return true; };
  wrong.instances = [] {
    return std::vector<Instance>{
        castInstance(DType::F32, {{"$B", DType::F16}, {"$A", DType::F32}}),
        castInstance(DType::F16, {{"$B", DType::F32}, {"$A", DType::F16}})};
  };
  const Rule *rules[] = {&wrong};
  ProveReport r = proveRules(rules, opts());
  ASSERT_EQ(r.rules.size(), 1u);
  EXPECT_EQ(r.instances, 2u);
  EXPECT_EQ(r.refuted, 1u);
  EXPECT_EQ(r.proved, 1u);
  EXPECT_EQ(r.disagreements, 1u);
  EXPECT_EQ(r.rules[0].instances[0].finding, ProofFinding::Disagreement);
  EXPECT_EQ(r.exitCode(), 1);
  EXPECT_NE(proveReportText(r, false).find("[DISAGREEMENT] x:f32"), std::string::npos);
}

TEST(ProveVerdicts, ARefusedProvedInstanceIsAMissedRewrite) {
  const Rule *chain = findRule("cast-chain");
  ASSERT_NE(chain, nullptr);
  // bf16 -> f16 -> i8 is bf16 -> i8 (values f16 cannot hold are far outside
  // i8's range, so the original is indeterminate there), which no clause of
  // castChainCollapses covers.
  InstanceProof p = proveInstance(
      *chain, castInstance(DType::BF16, {{"$B", DType::F16}, {"$C", DType::I8}}), opts());
  EXPECT_EQ(p.verdict, ProofVerdict::Proved);
  EXPECT_FALSE(p.allowed);
  EXPECT_EQ(p.finding, ProofFinding::MissedRewrite);
}

TEST(ProveVerdicts, ABudgetThatRunsOutIsInconclusiveNeverProved) {
  const Rule *chain = findRule("cast-chain");
  ASSERT_NE(chain, nullptr);
  // bf16 -> f16 -> i64 against bf16 -> i64: true (bf16 values in f16's
  // range are exact there, tiny ones truncate to 0 either way, and those
  // that overflow f16 make the original indeterminate), and no shortcut
  // decides it: the proof bit-blasts the rounding, far beyond a resource
  // limit of 1 (Z3's rlimit counts work, so the budget runs out at the same
  // point on any machine; a 1 ms timeout once let a quiet machine finish).
  Instance inst = castInstance(DType::BF16, {{"$B", DType::F16}, {"$C", DType::I64}});
  ProveOptions o;
  o.rlimit = 1;
  InstanceProof p = proveInstance(*chain, inst, o);
  EXPECT_EQ(p.verdict, ProofVerdict::Inconclusive) << proofVerdictName(p.verdict);
  EXPECT_FALSE(p.bySimplification);
  EXPECT_EQ(p.finding,
            p.allowed ? ProofFinding::InconclusiveAllowed : ProofFinding::RefusedInconclusive);
  // With time it is proved.
  EXPECT_EQ(proveInstance(*chain, inst, opts()).verdict, ProofVerdict::Proved);
}

TEST(ProveVerdicts, AnIllTypedInstanceIsAnError) {
  Rule r = adHoc("add-bool", op("Add", {var("x"), var("x")}), var("x"));
  InstanceProof p = proveInstance(r, shapedInstance({DType::Bool, {1}}), opts());
  EXPECT_EQ(p.verdict, ProofVerdict::Error);
  EXPECT_NE(p.note.find("pattern does not type-check"), std::string::npos) << p.note;
}

} // namespace
} // namespace graphvet::oracle
