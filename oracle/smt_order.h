// The Z3 ordering proof, behind a solver-free interface (no Z3 type leaks):
// an integer position per step, `pos[u] < pos[v]` for every ordering edge
// (distinctness is implied, see smt_order.cpp). For a conflicting pair (a, b) listed with a before
// b in some valid schedule, "b before a" being UNSAT proves the pair ordered
// in every schedule; a model is a concrete witness schedule in which b runs
// first. UNSAT for all pairs is the proof of race freedom.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace graphvet::oracle {

struct OrderProblem {
  uint32_t numNodes = 0;
  std::vector<std::pair<uint32_t, uint32_t>> edges; ///< u must run before v
  /// Conflicting pairs (a, b); `reference` places a before b.
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  /// A schedule respecting every edge, used only to orient the pairs.
  std::vector<uint32_t> reference;
};

enum class PairOrder : uint8_t {
  Ordered,   ///< UNSAT: b can never run before a
  Unordered, ///< SAT both ways: a race, with witnesses
  Unknown,   ///< the solver gave up (timeout): no verdict
};

struct OrderAnswer {
  std::vector<PairOrder> pairs; ///< one per problem pair
  /// For each Unordered pair: positions of every node in a model where a runs
  /// first, and in a model where b runs first (sort nodes by position to get
  /// the schedule). Empty for other pairs.
  std::vector<std::vector<int64_t>> aFirst, bFirst;
  unsigned queries = 0;   ///< solver calls made
  bool exhausted = false; ///< the time budget ran out
  std::string note;       ///< solver message when something went wrong
};

/// Decides every pair with one Z3 context and one incremental solver.
/// `budgetMs` is the total time allowed across all queries.
OrderAnswer solveOrder(const OrderProblem &p, unsigned budgetMs);

/// Nodes sorted by position (ties by node number): the schedule of a model.
std::vector<uint32_t> scheduleFromPositions(const std::vector<int64_t> &positions);

} // namespace graphvet::oracle
