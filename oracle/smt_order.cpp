// Z3 encoding of "which conflicting pairs can run in either order". One
// context and solver per thread (creating a context costs more than a whole
// small check), reset per problem, push/pop per query. The proof query asks
// for ANY pair reversed at once; each model found reverses one or more pairs
// (all of them races, with the model as witness), which are dropped before
// asking again, so a race-free problem costs a single UNSAT query.
#include "oracle/smt_order.h"

#include <fmt/format.h>
#include <z3++.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <numeric>

namespace graphvet::oracle {

namespace {

/// Z3 4.8 spends tens of milliseconds creating a context and about one
/// creating a solver; both are made once per thread and the solver is reset
/// for every problem.
struct ThreadSolver {
  z3::context ctx;
  z3::solver solver{ctx, z3::solver::simple()};
};

ThreadSolver &threadSolver() {
  thread_local std::unique_ptr<ThreadSolver> ts;
  if (!ts)
    ts = std::make_unique<ThreadSolver>();
  return *ts;
}

std::vector<int64_t> positionsOf(const z3::model &m, const z3::expr_vector &pos) {
  std::vector<int64_t> out(pos.size());
  for (unsigned i = 0; i < pos.size(); ++i) {
    z3::expr v = m.eval(pos[i], true);
    int64_t x = 0;
    out[i] = v.is_numeral_i64(x) ? x : 0;
  }
  return out;
}

} // namespace

std::vector<uint32_t> scheduleFromPositions(const std::vector<int64_t> &positions) {
  std::vector<uint32_t> order(positions.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return positions[a] < positions[b]; });
  return order;
}

OrderAnswer solveOrder(const OrderProblem &p, unsigned budgetMs) {
  OrderAnswer ans;
  size_t np = p.pairs.size();
  ans.pairs.assign(np, PairOrder::Unknown);
  ans.aFirst.assign(np, {});
  ans.bFirst.assign(np, {});
  if (np == 0)
    return ans;
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(budgetMs);
  auto remainingMs = [&]() -> int64_t {
    return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  };
  try {
    ThreadSolver &ts = threadSolver();
    z3::context &ctx = ts.ctx;
    z3::solver &s = ts.solver;
    s.reset();
    z3::expr_vector pos(ctx);
    for (uint32_t i = 0; i < p.numNodes; ++i)
      pos.push_back(ctx.int_const(fmt::format("p{}", i).c_str()));
    for (auto [u, v] : p.edges)
      s.add(pos[u] < pos[v]);
    // Positions are not asserted distinct: every model with ties can be
    // made distinct without changing any strict inequality (break ties in
    // any order), so the problem is equisatisfiable, and the `distinct`
    // constraint makes Z3 2-5x slower on 30-50 node graphs. Decoding sorts
    // by position with ties broken by node number.

    auto setTimeout = [&]() -> bool {
      int64_t left = remainingMs();
      if (left <= 0) {
        ans.exhausted = true;
        return false;
      }
      z3::params params(ctx);
      params.set("timeout", static_cast<unsigned>(left));
      s.set(params);
      return true;
    };

    std::vector<size_t> active(np);
    std::iota(active.begin(), active.end(), size_t{0});
    // Each SAT answer removes at least one pair, so np + 1 queries suffice.
    while (!active.empty() && ans.queries <= np) {
      if (!setTimeout())
        break;
      z3::expr_vector reversed(ctx);
      for (size_t i : active)
        reversed.push_back(pos[p.pairs[i].second] < pos[p.pairs[i].first]);
      s.push();
      s.add(z3::mk_or(reversed));
      z3::check_result r = s.check();
      ++ans.queries;
      if (r == z3::unsat) {
        for (size_t i : active)
          ans.pairs[i] = PairOrder::Ordered;
        active.clear();
      } else if (r == z3::unknown) {
        ans.note = s.reason_unknown();
        ans.exhausted = true;
        s.pop();
        break;
      } else {
        std::vector<int64_t> positions = positionsOf(s.get_model(), pos);
        std::vector<size_t> still;
        for (size_t i : active) {
          auto [a, b] = p.pairs[i];
          if (positions[b] < positions[a]) {
            ans.pairs[i] = PairOrder::Unordered;
            ans.bFirst[i] = positions;
          } else {
            still.push_back(i);
          }
        }
        active.swap(still);
      }
      s.pop();
    }
    // A witness in the other order for every race.
    for (size_t i = 0; i < np; ++i) {
      if (ans.pairs[i] != PairOrder::Unordered)
        continue;
      if (!setTimeout()) {
        ans.pairs[i] = PairOrder::Unknown;
        continue;
      }
      auto [a, b] = p.pairs[i];
      s.push();
      s.add(pos[a] < pos[b]);
      z3::check_result r = s.check();
      ++ans.queries;
      if (r == z3::sat)
        ans.aFirst[i] = positionsOf(s.get_model(), pos);
      else
        ans.pairs[i] = PairOrder::Unknown; // cannot happen for a valid reference order
      s.pop();
    }
  } catch (const z3::exception &e) {
    ans.note = e.msg();
    for (auto &x : ans.pairs)
      if (x != PairOrder::Ordered && x != PairOrder::Unordered)
        x = PairOrder::Unknown;
  }
  return ans;
}

} // namespace graphvet::oracle
