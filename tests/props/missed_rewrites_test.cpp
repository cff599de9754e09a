// The finders of props/missed_rewrites.h on hand-made pipeline outputs: each
// rule reports its opening (and the oracle proves it sound), leaves alone
// the look-alike it must not take, and only the rules of the pipeline's
// passes are looked for.
#include "ir/parser.h"
#include "props/missed_rewrites.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace graphvet::props {
namespace {

Module parse(const std::string &text) {
  ParseResult r = parseModule(text);
  EXPECT_TRUE(r.module) << (r.diagnostics.empty() ? "" : r.diagnostics[0].message);
  return std::move(*r.module);
}

/// The report for `text` as the output of a pipeline of `passes` (the
/// module stands for both the original and the output: every opening is
/// then checked against the graph itself).
MissedRewriteReport report(const std::string &text, std::vector<std::string> passes) {
  Module m = parse(text);
  MissedRewriteOptions o;
  o.pipeline.passes = std::move(passes);
  o.check.useZ3 = false;
  return findMissedRewritesIn(m, m, o);
}

/// The status of the item of `rule` naming `node`, or nullopt.
std::optional<RewriteStatus> statusOf(const MissedRewriteReport &r, const std::string &rule,
                                      const std::string &node) {
  for (const MissedRewrite &item : r.items)
    if (item.rule == rule && std::count(item.nodes.begin(), item.nodes.end(), node))
      return item.status;
  return std::nullopt;
}

TEST(MissedRewrites, ADeadNodeIsMissedButAVariableWriterIsNot) {
  const std::string text = R"(graph g {
  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2]}
  dead = Neg(x)
  var = Variable() {out0.dtype = f32, out0.shape = [2]}
  w = RefIdentity(x) {ref_var_src_var_name = "var"}
  out = NetOutput(x)
})";
  MissedRewriteReport r = report(text, {"dce"});
  EXPECT_EQ(statusOf(r, "dce:dead-node", "dead"), RewriteStatus::Missed);
  EXPECT_FALSE(statusOf(r, "dce:dead-node", "w"));
  EXPECT_FALSE(statusOf(r, "dce:dead-node", "var"));
  EXPECT_EQ(r.missedByRule["dce:dead-node"], 1u);
  // The same graph after a pipeline without dce: nothing of dce's is asked.
  EXPECT_TRUE(report(text, {"cse"}).items.empty());
}

TEST(MissedRewrites, EqualNodesAreMissedUnlessAnAttributeDiffers) {
  MissedRewriteReport r = report(R"(graph g {
  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2]}
  a = LeakyRelu(x) {alpha = 0.5}
  b = LeakyRelu(x) {alpha = 0.5}
  c = LeakyRelu(x) {alpha = 0.25}
  s = Add(a, b)
  t = Add(s, c)
  out = NetOutput(t)
})",
                                 {"cse"});
  EXPECT_EQ(statusOf(r, "cse:equal-nodes", "b"), RewriteStatus::Missed);
  EXPECT_FALSE(statusOf(r, "cse:equal-nodes", "c"));
}

TEST(MissedRewrites, ANodeOfConstantsIsMissedButARandomDrawIsNot) {
  MissedRewriteReport r = report(R"(graph g {
  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2]}
  c = Const() {value = f32[2] {1, 2}}
  d = Const() {value = f32[2] {3, 4}}
  s = Add(c, d)
  u = RandomUniformLike(c)
  a = Add(x, s)
  b = Add(a, u)
  out = NetOutput(b)
})",
                                 {"fold-constant"});
  EXPECT_EQ(statusOf(r, "fold-constant:constant-inputs", "s"), RewriteStatus::Missed);
  EXPECT_FALSE(statusOf(r, "fold-constant:constant-inputs", "u"));
}

TEST(MissedRewrites, ACastPairIsMissedOnlyThroughAWiderType) {
  MissedRewriteReport r = report(R"(graph g {
  x = Data() {index = 0, out0.dtype = i8, out0.shape = [2]}
  w = Cast(x) {to = i32}
  y = Cast(w) {to = i8}
  f = Data() {index = 1, out0.dtype = f32, out0.shape = [2]}
  h = Cast(f) {to = f16}
  g2 = Cast(h) {to = f32}
  a = Neg(y)
  b = Neg(g2)
  out = NetOutput(a, b)
})",
                                 {"simplify"});
  EXPECT_EQ(statusOf(r, "simplify:cast-pair", "y"), RewriteStatus::Missed);
  EXPECT_FALSE(statusOf(r, "simplify:cast-pair", "g2")) << "f32 -> f16 -> f32 rounds";
}

TEST(MissedRewrites, ATransposePairIsMissedOnlyWhenThePermutationsCancel) {
  MissedRewriteReport r = report(R"(graph g {
  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2, 3, 4]}
  t1 = Transpose(x) {perm = [1, 2, 0]}
  t2 = Transpose(t1) {perm = [2, 0, 1]}
  r1 = Transpose(x)
  r2 = Transpose(r1)
  c1 = Transpose(x) {perm = [1, 2, 0]}
  c2 = Transpose(c1) {perm = [1, 2, 0]}
  a = Neg(t2)
  b = Neg(r2)
  c = Neg(c2)
  out = NetOutput(a, b, c)
})",
                                 {"simplify"});
  EXPECT_EQ(statusOf(r, "simplify:transpose-pair", "t2"), RewriteStatus::Missed);
  EXPECT_EQ(statusOf(r, "simplify:transpose-pair", "r2"), RewriteStatus::Missed)
      << "an absent perm reverses the axes";
  EXPECT_FALSE(statusOf(r, "simplify:transpose-pair", "c2"));
}

TEST(MissedRewrites, AnOpeningTheOracleRejectsIsNecessary) {
  // Taking the pair makes the graph output alias the user's input buffer.
  MissedRewriteReport r = report(R"(graph g {
  x = Data() {index = 0, out0.dtype = f32, out0.shape = [3]}
  w = Cast(x) {to = f64}
  y = Cast(w) {to = f32}
  out = NetOutput(y)
})",
                                 {"simplify"});
  EXPECT_EQ(statusOf(r, "simplify:cast-pair", "y"), RewriteStatus::Necessary);
  EXPECT_EQ(r.missed, 0u);
  EXPECT_EQ(r.necessary, 1u);
}

} // namespace
} // namespace graphvet::props
