// Pass-order exploration (`graphvet opt --explore-orders`): every order of a
// set of passes runs on a copy of one module, each distinct result is checked
// against the original by the oracle and costed by the cost model, and the
// orders are ranked best first. midend-passes.md: every order must be sound,
// and the cost model says which is cheaper (fusing before or after a layout
// change gives different kernels).
#pragma once

#include "oracle/check.h"
#include "passes/cost_model.h"
#include "props/evaluate.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace graphvet::props {

struct ExploreOptions {
  /// The pipeline settings every order shares; `eval.pipeline.passes` is the
  /// set whose orders are explored (a name listed twice runs twice).
  EvalOptions eval;
  /// The most orders to run: a set with more distinct orders is refused
  /// (ExploreResult::error) rather than cut short, so a ranking always covers
  /// every order. 720 is every order of six passes.
  size_t maxOrders = 720;
};

struct OrderOutcome {
  std::vector<std::string> order; ///< the passes, in the order they ran
  /// false: the pipeline stopped (the verifier failed after `failedPass`, or
  /// a pass could not run); the result is then judged `invalid-output`.
  bool pipelineOk = true;
  std::string failedPass;
  oracle::CheckResult check; ///< the oracle's verdict on this order's result
  CostReport cost;           ///< the cost of the result
  size_t nodes = 0;          ///< live nodes of the result, every graph
  /// Index (into ExploreResult::outcomes, after ranking) of the best-ranked
  /// order that produced the very same module text; that result was checked
  /// once. nullopt for the first order of each distinct result.
  std::optional<size_t> sameAs;
};

struct ExploreResult {
  std::string error; ///< non-empty: nothing ran (no pass set, too many orders, unknown pass)
  CostReport original;
  size_t originalNodes = 0;
  size_t distinctResults = 0;
  std::vector<OrderOutcome> outcomes; ///< best first (see exploreOrders)
};

/// Number of distinct orders of `passes` (a multiset permutation count), or
/// nullopt when it exceeds `limit`.
std::optional<size_t> countOrders(const std::vector<std::string> &passes, size_t limit);

/// Runs every order of `opts.eval.pipeline.passes` on a copy of `original`,
/// checks each distinct result and costs it. Ranking: sound results first,
/// then inconclusive, then violations; within a verdict by bytes moved
/// (read + written), kernels, peak live bytes (unknown last), FLOPs, and
/// last the order's lexicographic rank, so the table is deterministic.
/// Bounded by opts.maxOrders pipeline runs and as many checks.
ExploreResult exploreOrders(const Module &original, const ExploreOptions &opts);

} // namespace graphvet::props
