// The Z3 ordering proof agrees with plain reachability: on random DAGs with
// random conflicting pairs, a pair is Unordered exactly when neither node
// reaches the other, and every witness the solver returns is a valid
// schedule that runs the pair in the claimed order.
#include "oracle/smt_order.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <numeric>

namespace graphvet::oracle {
namespace {

struct RandomDag {
  uint32_t n = 0;
  std::vector<std::pair<uint32_t, uint32_t>> edges; // u < v: acyclic by construction
  std::vector<std::pair<uint32_t, uint32_t>> pairs; // a < b
};

std::vector<std::vector<bool>> closure(const RandomDag &g) {
  std::vector<std::vector<bool>> reach(g.n, std::vector<bool>(g.n, false));
  for (auto [u, v] : g.edges)
    reach[u][v] = true;
  for (uint32_t k = 0; k < g.n; ++k)
    for (uint32_t i = 0; i < g.n; ++i)
      if (reach[i][k])
        for (uint32_t j = 0; j < g.n; ++j)
          if (reach[k][j])
            reach[i][j] = true;
  return reach;
}

/// The model satisfies every edge, and so does the schedule decoded from it.
bool respects(const RandomDag &g, const std::vector<int64_t> &pos) {
  if (pos.size() != g.n)
    return false;
  for (auto [u, v] : g.edges)
    if (!(pos[u] < pos[v]))
      return false;
  std::vector<uint32_t> order = scheduleFromPositions(pos);
  std::vector<uint32_t> at(g.n);
  for (uint32_t i = 0; i < g.n; ++i)
    at[order[i]] = i;
  for (auto [u, v] : g.edges)
    if (!(at[u] < at[v]))
      return false;
  return true;
}

rc::Gen<RandomDag> genDag() {
  return rc::gen::exec([] {
    RandomDag g;
    g.n = *rc::gen::inRange<uint32_t>(2, 14);
    // Node numbers are a topological order; the generator picks edges
    // forward only, with a random density.
    int density = *rc::gen::inRange(0, 100);
    for (uint32_t u = 0; u < g.n; ++u)
      for (uint32_t v = u + 1; v < g.n; ++v)
        if (*rc::gen::inRange(0, 100) < density / 3)
          g.edges.push_back({u, v});
    size_t pairs = *rc::gen::inRange<size_t>(1, 8);
    for (size_t i = 0; i < pairs; ++i) {
      uint32_t a = *rc::gen::inRange<uint32_t>(0, g.n - 1);
      uint32_t b = *rc::gen::inRange<uint32_t>(a + 1, g.n);
      g.pairs.push_back({a, b});
    }
    return g;
  });
}

RC_GTEST_PROP(SmtOrder, AgreesWithReachability, ()) {
  RandomDag g = *genDag();
  OrderProblem p;
  p.numNodes = g.n;
  p.edges = g.edges;
  p.pairs = g.pairs;
  p.reference.resize(g.n);
  std::iota(p.reference.begin(), p.reference.end(), 0u);
  OrderAnswer ans = solveOrder(p, 10000);
  RC_ASSERT(ans.pairs.size() == g.pairs.size());
  auto reach = closure(g);
  for (size_t i = 0; i < g.pairs.size(); ++i) {
    auto [a, b] = g.pairs[i];
    bool unordered = !reach[a][b] && !reach[b][a];
    RC_ASSERT(ans.pairs[i] != PairOrder::Unknown);
    RC_ASSERT((ans.pairs[i] == PairOrder::Unordered) == unordered);
    if (unordered) {
      RC_ASSERT(respects(g, ans.aFirst[i]));
      RC_ASSERT(respects(g, ans.bFirst[i]));
      RC_ASSERT(ans.aFirst[i][a] < ans.aFirst[i][b]);
      RC_ASSERT(ans.bFirst[i][b] < ans.bFirst[i][a]);
      std::vector<uint32_t> order = scheduleFromPositions(ans.bFirst[i]);
      RC_ASSERT(std::find(order.begin(), order.end(), b) <
                std::find(order.begin(), order.end(), a));
    }
  }
  // A race-free problem costs one query.
  bool anyRace = std::any_of(ans.pairs.begin(), ans.pairs.end(),
                             [](PairOrder o) { return o == PairOrder::Unordered; });
  if (!anyRace)
    RC_ASSERT(ans.queries == 1u);
}

TEST(SmtOrder, NoPairsNoQuery) {
  OrderProblem p;
  p.numNodes = 3;
  p.edges = {{0, 1}};
  EXPECT_EQ(solveOrder(p, 1000).queries, 0u);
}

TEST(SmtOrder, ChainIsProvedOrderedDiamondIsNot) {
  OrderProblem p;
  p.numNodes = 4;
  p.edges = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
  p.pairs = {{0, 3}, {1, 2}};
  p.reference = {0, 1, 2, 3};
  OrderAnswer ans = solveOrder(p, 5000);
  EXPECT_EQ(ans.pairs[0], PairOrder::Ordered);
  EXPECT_EQ(ans.pairs[1], PairOrder::Unordered);
  EXPECT_EQ(scheduleFromPositions(ans.bFirst[1]), (std::vector<uint32_t>{0, 2, 1, 3}));
}

TEST(SmtOrder, ExhaustedBudgetIsUnknownNeverOrdered) {
  OrderProblem p;
  p.numNodes = 2;
  p.edges = {{0, 1}};
  p.pairs = {{0, 1}};
  p.reference = {0, 1};
  OrderAnswer ans = solveOrder(p, 0);
  EXPECT_TRUE(ans.exhausted);
  EXPECT_EQ(ans.pairs[0], PairOrder::Unknown);
}

} // namespace
} // namespace graphvet::oracle
