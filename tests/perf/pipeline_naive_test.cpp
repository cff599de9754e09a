// The naive variants of cse, dce and fuse-ops (PipelineOptions::naiveVariants,
// the baselines of `graphvet bench --pipeline --compare`) produce exactly the
// fast variants' printed modules: pass by pass on the corpus, on the lit
// tests of the passes, on generated graphs of both generators and on numeric
// model graphs, and for the whole -O3 pipeline; and benchPipeline reports
// what it measured consistently.
#include "ir/parser.h"
#include "ir/printer.h"
#include "props/evaluate.h"
#include "props/generate.h"
#include "props/numeric_model_builder.h"
#include "props/pipeline_bench.h"
#include "props/typed_graph.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace graphvet {
namespace {

namespace fs = std::filesystem;

constexpr const char *kNaivePasses[] = {"dce", "cse", "fuse-ops"};

/// The printed result and the remarks (sorted: the naive dce decides in
/// another order) of one run.
struct Outcome {
  std::string printed;
  std::vector<std::string> remarks;
};

Outcome runOne(const Module &m, const std::string &pass, bool naive) {
  Module copy = m;
  PipelineOptions opts;
  opts.passes = std::vector<std::string>{pass};
  opts.naiveVariants = naive;
  PipelineResult r = runPipeline(copy, opts);
  Outcome out{printModule(copy), {}};
  for (const Remark &rm : r.remarks)
    out.remarks.push_back(rm.graph + "/" + rm.node + " " + rm.decision + " " + rm.rule + " " +
                          rm.message);
  std::sort(out.remarks.begin(), out.remarks.end());
  return out;
}

void expectSameResults(const Module &m, const std::string &what) {
  for (const char *pass : kNaivePasses) {
    Outcome fast = runOne(m, pass, false), naive = runOne(m, pass, true);
    EXPECT_EQ(fast.printed, naive.printed) << what << ", pass " << pass;
    EXPECT_EQ(fast.remarks, naive.remarks) << what << ", pass " << pass;
  }
}

/// Every graph of the corpus and of the passes' lit tests (split at the
/// `# -----` separators of --split-input-file), parsed where it parses.
std::vector<std::pair<std::string, Module>> fileGraphs() {
  std::vector<std::pair<std::string, Module>> out;
  fs::path root(GRAPHVET_SOURCE_DIR);
  std::vector<fs::path> dirs = {root / "corpus"};
  for (const char *d : {"cse", "dce", "fuse-ops", "simplify", "fold-constant", "opt"})
    dirs.push_back(root / "tests" / "lit" / d);
  for (const fs::path &dir : dirs) {
    std::error_code ec;
    std::vector<fs::path> files;
    for (auto it = fs::recursive_directory_iterator(dir, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if (it->is_regular_file() && it->path().extension() == ".graph")
        files.push_back(it->path());
    std::sort(files.begin(), files.end());
    for (const fs::path &file : files) {
      std::ifstream in(file);
      std::string line, piece;
      size_t index = 0;
      auto flush = [&] {
        std::string errors;
        if (auto m = parseOrReport(piece, file.string(), errors))
          out.emplace_back(file.filename().string() + "#" + std::to_string(index), std::move(*m));
        piece.clear();
        ++index;
      };
      while (std::getline(in, line)) {
        if (line.rfind("# -----", 0) == 0)
          flush();
        else
          piece += line + "\n";
      }
      flush();
    }
  }
  return out;
}

TEST(PipelineNaive, SameResultsOnCorpusAndLitGraphs) {
  std::vector<std::pair<std::string, Module>> graphs = fileGraphs();
  ASSERT_GT(graphs.size(), 100u) << "the corpus or the lit tests are missing";
  for (const auto &[name, m] : graphs)
    expectSameResults(m, name);
}

TEST(PipelineNaive, SameResultsOnGeneratedGraphs) {
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    expectSameResults(props::generateModule(seed), "generated seed " + std::to_string(seed));
    expectSameResults(props::generateTypedModule(seed).module,
                      "typed seed " + std::to_string(seed));
  }
}

TEST(PipelineNaive, SameResultsOnNumericModelsPassByPassAndForO3) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    props::NumericModelOptions o;
    o.nodes = 1500;
    o.seed = seed;
    Module m = props::buildNumericModelGraph(o);
    expectSameResults(m, "numeric seed " + std::to_string(seed));
    Module fast = m, naive = m;
    PipelineOptions o3;
    runPipeline(fast, o3);
    o3.naiveVariants = true;
    runPipeline(naive, o3);
    EXPECT_EQ(printModule(fast), printModule(naive)) << "numeric seed " << seed << ", -O3";
  }
}

TEST(PipelineNaive, BenchPipelineReportsConsistently) {
  props::PipelineBenchOptions opts;
  opts.model.nodes = 800;
  opts.compare = true;
  opts.repeat = 3;
  props::PipelineBenchResult r = props::benchPipeline(opts);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.pipelineName, "O3");
  EXPECT_TRUE(r.allSame);
  Diagnostics errors;
  PipelineOptions o3;
  std::vector<const PassInfo *> pipeline = assemblePipeline(o3, errors);
  ASSERT_EQ(r.passes.size(), pipeline.size());
  EXPECT_EQ(r.passes.front().nodesBefore, 800u);
  for (size_t i = 0; i < r.passes.size(); ++i) {
    EXPECT_EQ(r.passes[i].pass, pipeline[i]->name);
    EXPECT_EQ(r.passes[i].naiveRun, props::hasNaiveVariant(r.passes[i].pass));
    if (r.passes[i].naiveRun) {
      EXPECT_TRUE(r.passes[i].naiveFinished);
      EXPECT_EQ(r.passes[i].sameResult, std::optional<bool>(true));
    }
    if (i > 0) {
      EXPECT_EQ(r.passes[i].nodesBefore, r.passes[i - 1].nodesAfter);
    }
    EXPECT_LE(r.passes[i].msMin, r.passes[i].ms);
  }
  // The whole pipeline's result is what `graphvet opt -O3` gives.
  Module m = props::buildNumericModelGraph(opts.model);
  PipelineResult whole = runPipeline(m, o3);
  EXPECT_EQ(r.nodesAfter, props::countNodes(m));
  EXPECT_EQ(r.rounds, whole.iterations);
  // An unknown pass name is an error, not a measurement.
  opts.passes = std::vector<std::string>{"cse", "no-such-pass"};
  EXPECT_FALSE(props::benchPipeline(opts).ok);
}

} // namespace
} // namespace graphvet
