// The naive variant of TensorMoveDeletePass (a whole-graph reachability search
// per TensorMove and per candidate control edge, as the reference design does
// it) and the fast one (bounded searches over a dynamic topological order)
// must take exactly the same decisions: same remarks in the same order, same
// statistics, same resulting module. Checked on every corpus graph, on
// generated graphs and on model-like graphs.
#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/reuse_options.h"
#include "passes/tensor_move_delete.h"
#include "props/generate.h"
#include "props/model_builder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace graphvet {
namespace {

namespace fs = std::filesystem;

/// Runs both variants on copies of `m` and compares everything they produce.
void expectSameDecisions(const Module &m, const std::string &what) {
  Diagnostics warnings;
  TensorMoveDeleteOptions fast;
  fast.grants = readReuseGrants(m.options, m.optionLocs, warnings);
  TensorMoveDeleteOptions naive = fast;
  naive.naiveReachability = true;

  Module a = m, b = m;
  std::vector<Remark> ra, rb;
  TensorMoveDeleteStats sa = runTensorMoveDelete(a, fast, &ra);
  TensorMoveDeleteStats sb = runTensorMoveDelete(b, naive, &rb);
  EXPECT_EQ(sa.tensorMoves, sb.tensorMoves) << what;
  EXPECT_EQ(sa.deleted, sb.deleted) << what;
  EXPECT_EQ(sa.kept, sb.kept) << what;
  EXPECT_EQ(sa.ctrlEdgesAdded, sb.ctrlEdgesAdded) << what;
  ASSERT_EQ(ra.size(), rb.size()) << what;
  for (size_t i = 0; i < ra.size(); ++i) {
    EXPECT_EQ(ra[i].node, rb[i].node) << what << " remark " << i;
    EXPECT_EQ(ra[i].graph, rb[i].graph) << what << " remark " << i;
    EXPECT_EQ(ra[i].decision, rb[i].decision) << what << " remark " << i;
    EXPECT_EQ(ra[i].rule, rb[i].rule) << what << " remark " << i;
    EXPECT_EQ(ra[i].message, rb[i].message) << what << " remark " << i;
  }
  EXPECT_EQ(structuralDifference(a, b), std::nullopt) << what;
  EXPECT_EQ(printModule(a), printModule(b)) << what;
}

std::vector<fs::path> corpusFiles() {
  std::vector<fs::path> files;
  fs::path dir = fs::path(GRAPHVET_SOURCE_DIR) / "corpus";
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file() && it->path().extension() == ".graph")
      files.push_back(it->path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(NaiveEquivalence, CorpusGraphs) {
  std::vector<fs::path> files = corpusFiles();
  ASSERT_GT(files.size(), 10u) << "the corpus is missing";
  size_t checked = 0;
  for (const fs::path &f : files) {
    ParseResult r = parseFile(f.string());
    if (!r.module)
      continue; // deliberately malformed entries have nothing to decide
    expectSameDecisions(*r.module, f.filename().string());
    ++checked;
  }
  EXPECT_GT(checked, 10u);
}

TEST(NaiveEquivalence, GeneratedGraphs) {
  for (uint64_t seed = 1; seed <= 400; ++seed)
    expectSameDecisions(props::generateModule(seed), "generated seed " + std::to_string(seed));
}

TEST(NaiveEquivalence, ModelGraphs) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    props::ModelOptions o;
    o.nodes = 3000;
    o.seed = seed;
    expectSameDecisions(props::buildModelGraph(o), "model seed " + std::to_string(seed));
  }
}

} // namespace
} // namespace graphvet
