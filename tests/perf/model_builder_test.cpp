// The model-like graph builder: exact sizes, determinism, a structurally valid
// and race-free original (the oracle says so), about 10% TensorMoves of every
// role, and the pass deleting what is removable and keeping what is necessary,
// with a result the oracle proves sound.
#include "ir/op_library.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "oracle/check.h"
#include "passes/tensor_move_delete.h"
#include "props/evaluate.h"
#include "props/model_builder.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace graphvet::props {
namespace {

ModelOptions sized(size_t nodes, uint64_t seed) {
  ModelOptions o;
  o.nodes = nodes;
  o.seed = seed;
  return o;
}

TEST(ModelBuilder, MeetsTheRequestedSizeExactly) {
  for (size_t n : {6u, 7u, 40u, 97u, 98u, 150u, 1000u, 1234u, 20000u}) {
    ModelInfo info;
    Module m = buildModelGraph(sized(n, 3), &info);
    EXPECT_EQ(countNodes(m), n) << "nodes = " << n;
    EXPECT_EQ(info.nodes, n);
  }
  // Below the smallest model the size is raised to it.
  ModelInfo tiny;
  Module m = buildModelGraph(sized(1, 1), &tiny);
  EXPECT_EQ(countNodes(m), 6u);
  EXPECT_EQ(tiny.layers, 0u);
}

TEST(ModelBuilder, IsDeterministicForASeed) {
  std::string a = printModule(buildModelGraph(sized(3000, 42)));
  std::string b = printModule(buildModelGraph(sized(3000, 42)));
  std::string c = printModule(buildModelGraph(sized(3000, 43)));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(ModelBuilder, PassesTheVerifier) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    Module m = buildModelGraph(sized(5000, seed));
    Diagnostics d = verifyModule(m);
    EXPECT_FALSE(hasErrors(d)) << "seed " << seed << ": " << (d.empty() ? "" : d[0].message);
    // And it survives the text format: the printed model parses back.
    std::string errors;
    auto reparsed = parseOrReport(printModule(m), "model.graph", errors);
    ASSERT_TRUE(reparsed) << errors;
    EXPECT_EQ(structuralDifference(m, *reparsed), std::nullopt);
  }
}

TEST(ModelBuilder, HasAboutTenPercentTensorMovesOfEveryRole) {
  ModelInfo info;
  Module m = buildModelGraph(sized(20000, 7), &info);
  size_t tms = 0;
  for (GraphId g = 0; g < m.numGraphs(); ++g)
    for (NodeId n : m.graph(g).liveNodes())
      tms += isTensorMove(m.graph(g).node(n));
  EXPECT_EQ(tms, info.tensorMoves.size());
  double ratio = static_cast<double>(tms) / static_cast<double>(info.nodes);
  EXPECT_GT(ratio, 0.07);
  EXPECT_LT(ratio, 0.13);
  EXPECT_GT(info.count(TensorMoveRole::Removable), 0u);
  EXPECT_GT(info.count(TensorMoveRole::Necessary), 0u);
  EXPECT_GT(info.count(TensorMoveRole::Conservative), 0u);
  EXPECT_GT(info.subgraphs, 0u);
  EXPECT_GT(info.controlEdges, 0u);
  std::set<std::string_view> patterns;
  for (const ModelTensorMove &t : info.tensorMoves)
    patterns.insert(t.pattern);
  EXPECT_GE(patterns.size(), 14u) << "every TensorMove pattern occurs at this size";
}

TEST(ModelBuilder, SmallModelsAreRaceFreeOriginals) {
  // checkOriginal decides race freedom by exact reachability and runs the
  // graph on seeded states: the builder's claim of race freedom, checked.
  oracle::CheckOptions check;
  check.numStates = 1;
  for (uint64_t seed = 1; seed <= 6; ++seed)
    for (size_t n : {120u, 300u}) {
      Module m = buildModelGraph(sized(n, seed));
      oracle::CheckResult r = oracle::checkOriginal(m, check);
      EXPECT_EQ(r.verdict, oracle::Verdict::Sound) << "seed " << seed << " nodes " << n << "\n"
                                                   << oracle::formatResult(r);
    }
}

/// The original with one TensorMove removed by force: its consumers read its
/// input instead (no control edges added, nothing else checked).
Module withoutTensorMove(const Module &original, const ModelTensorMove &t) {
  Module m = original;
  Graph &g = m.graph(t.graph);
  OutPort in = *g.node(t.node).inputs[0];
  g.replaceAllUses({t.node, 0}, in);
  g.removeNode(t.node);
  return m;
}

TEST(ModelBuilder, RolesMeanWhatTheySay) {
  // Deleting a necessary TensorMove by force is unsound; deleting a
  // conservative one is sound (the reference design just cannot tell).
  oracle::CheckOptions check;
  check.numStates = 2;
  check.useZ3 = false; // exact reachability race analysis: enough here, and fast
  std::map<TensorMoveRole, size_t> checked;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    ModelInfo info;
    Module original = buildModelGraph(sized(400, seed), &info);
    for (const ModelTensorMove &t : info.tensorMoves) {
      if (t.role == TensorMoveRole::Removable)
        continue; // whether a forced deletion needs the pass's control edge varies
      oracle::CheckResult r =
          oracle::checkRefinement(original, withoutTensorMove(original, t), check);
      oracle::Verdict expected =
          t.role == TensorMoveRole::Necessary ? oracle::Verdict::Violation : oracle::Verdict::Sound;
      EXPECT_EQ(r.verdict, expected)
          << "seed " << seed << " " << original.graph(t.graph).node(t.node).name << " ("
          << t.pattern << ")\n"
          << oracle::formatResult(r);
      ++checked[t.role];
    }
  }
  EXPECT_GT(checked[TensorMoveRole::Necessary], 3u);
  EXPECT_GT(checked[TensorMoveRole::Conservative], 3u);
}

TEST(ModelBuilder, TheRaceCheckIsNotVacuous) {
  // Negative control for the test above: without the copy, the in-place
  // AssignAdd on the KV cache races with the reader of the cache that does
  // not depend on it, and checkOriginal must reject the graph.
  oracle::CheckOptions check;
  check.numStates = 1;
  size_t rejected = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    ModelInfo info;
    Module m = buildModelGraph(sized(300, seed), &info);
    for (const ModelTensorMove &t : info.tensorMoves)
      if (t.pattern == "variable-write") {
        oracle::CheckResult r = oracle::checkOriginal(withoutTensorMove(m, t), check);
        EXPECT_EQ(r.verdict, oracle::Verdict::Invalid) << oracle::formatResult(r);
        ++rejected;
        break;
      }
  }
  EXPECT_GT(rejected, 0u);
}

/// Names of the TensorMoves of each role that survive the pass.
std::map<TensorMoveRole, size_t> survivors(const Module &before, const ModelInfo &info,
                                           const Module &after) {
  std::map<TensorMoveRole, size_t> alive;
  for (const ModelTensorMove &t : info.tensorMoves) {
    const std::string &name = before.graph(t.graph).node(t.node).name;
    if (after.graph(t.graph).find(name) != kNoNode)
      ++alive[t.role];
  }
  return alive;
}

TEST(ModelBuilder, ThePassDeletesTheRemovableAndKeepsTheNecessary) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    ModelInfo info;
    Module original = buildModelGraph(sized(4000, seed), &info);
    Module m = original;
    TensorMoveDeleteStats stats = runTensorMoveDelete(m, {}, nullptr);
    EXPECT_EQ(static_cast<size_t>(stats.tensorMoves), info.tensorMoves.size());
    auto alive = survivors(original, info, m);
    EXPECT_EQ(alive[TensorMoveRole::Removable], 0u) << "seed " << seed;
    EXPECT_EQ(alive[TensorMoveRole::Necessary], info.count(TensorMoveRole::Necessary))
        << "seed " << seed;
    EXPECT_EQ(static_cast<size_t>(stats.deleted), info.count(TensorMoveRole::Removable) +
                                                      info.count(TensorMoveRole::Conservative) -
                                                      alive[TensorMoveRole::Conservative]);
    EXPECT_FALSE(hasErrors(verifyModule(m)));
  }
}

TEST(ModelBuilder, ThePassResultIsProvedSoundOnSmallModels) {
  EvalOptions eval;
  eval.check.numStates = 1;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    Module original = buildModelGraph(sized(160, seed));
    Evaluation e = evaluate(original, eval);
    EXPECT_EQ(e.result.verdict, oracle::Verdict::Sound) << "seed " << seed << "\n"
                                                        << oracle::formatResult(e.result);
  }
}

} // namespace
} // namespace graphvet::props
