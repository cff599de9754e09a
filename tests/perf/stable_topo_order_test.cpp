// stableTopoOrder (the pass's linear-time path to the stable topological
// order) must equal Graph::topoOrder exactly: on corpus graphs, generated
// graphs, model-like graphs, graphs whose ids are not in dependency order,
// graphs after node removal, and cyclic graphs.
#include "ir/parser.h"
#include "passes/order_index.h"
#include "props/generate.h"
#include "props/model_builder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace graphvet {
namespace {

namespace fs = std::filesystem;

void expectSameOrder(const Module &m, const std::string &what) {
  for (GraphId g = 0; g < m.numGraphs(); ++g)
    EXPECT_EQ(stableTopoOrder(m.graph(g)), m.graph(g).topoOrder()) << what << " graph " << g;
}

TEST(StableTopoOrder, CorpusGraphs) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(fs::path(GRAPHVET_SOURCE_DIR) / "corpus", ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file() && it->path().extension() == ".graph")
      files.push_back(it->path());
  std::sort(files.begin(), files.end());
  ASSERT_GT(files.size(), 10u);
  for (const fs::path &f : files)
    if (ParseResult r = parseFile(f.string()); r.module)
      expectSameOrder(*r.module, f.filename().string());
}

TEST(StableTopoOrder, GeneratedAndModelGraphs) {
  for (uint64_t seed = 1; seed <= 300; ++seed)
    expectSameOrder(props::generateModule(seed), "generated " + std::to_string(seed));
  props::ModelOptions o;
  o.nodes = 5000;
  expectSameOrder(props::buildModelGraph(o), "model");
}

TEST(StableTopoOrder, IdsOutOfDependencyOrder) {
  // Forward references: `c` (id 0) consumes `b` (id 2); a control edge goes
  // down in id too. The fast path must notice and fall back.
  std::string errors;
  auto m = parseOrReport(R"(
graph g {
  c = AddD(a, b)
  a = Data() {index = 0}
  b = ReLU(a)
  d = ReLU(a)
  out = NetOutput(c, d)
  ctrl d -> b
}
)",
                         "t.graph", errors);
  ASSERT_TRUE(m) << errors;
  expectSameOrder(*m, "forward references");
  ASSERT_TRUE(stableTopoOrder(m->root()));
  EXPECT_NE(*stableTopoOrder(m->root()), m->root().liveNodes());
}

TEST(StableTopoOrder, AfterRemovalAndAddedEdges) {
  props::ModelOptions o;
  o.nodes = 800;
  Module m = props::buildModelGraph(o);
  Graph &g = m.root();
  // Remove every third TensorMove (relinking its consumers), then add a
  // control edge that goes down in id.
  int k = 0;
  for (NodeId n : g.nodesOfType("TensorMove"))
    if (k++ % 3 == 0) {
      g.replaceAllUses({n, 0}, *g.node(n).inputs[0]);
      g.removeNode(n);
    }
  expectSameOrder(m, "after removal");
  NodeId last = g.find("out"), first = g.find("mask");
  ASSERT_NE(last, kNoNode);
  // A node with no successors ordered before an early one: legal, not monotone.
  NodeId sink = g.addNode("sink", "ReLU", {OutPort{first, 0}});
  g.addCtrlEdge(sink, g.find("b0_l1_mean"));
  expectSameOrder(m, "edge down in id");
  // And a cycle: both say nullopt.
  g.addCtrlEdge(last, sink);
  g.addCtrlEdge(g.find("b0_l1_mean"), last);
  EXPECT_EQ(stableTopoOrder(g), std::nullopt);
  EXPECT_EQ(g.topoOrder(), std::nullopt);
}

} // namespace
} // namespace graphvet
