// Pass-order exploration: orders by std::next_permutation over the sorted
// pass names (each distinct order once), results deduplicated by their
// printed text so an order that lands on a known result costs no check.
#include "props/explore_orders.h"

#include "ir/printer.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

namespace graphvet::props {
namespace {

int verdictRank(const OrderOutcome &o) {
  switch (o.check.verdict) {
  case oracle::Verdict::Sound:
    return 0;
  case oracle::Verdict::Inconclusive:
    return 1;
  default:
    return 2;
  }
}

/// The ranking key of exploreOrders: smaller is better.
auto rankKey(const OrderOutcome &o) {
  return std::make_tuple(verdictRank(o), o.cost.bytesRead + o.cost.bytesWritten, o.cost.kernels,
                         !o.cost.peakKnown, o.cost.peakLiveBytes, o.cost.flops);
}

} // namespace

std::optional<size_t> countOrders(const std::vector<std::string> &passes, size_t limit) {
  // n! / prod(k_i!) for the multiplicities k_i, built one pass at a time:
  // each step's count (the orders of the passes placed so far) is exact and
  // never exceeds the final count, so stopping past `limit` is safe.
  std::map<std::string, size_t> counts;
  for (const std::string &p : passes)
    ++counts[p];
  size_t total = 1, placed = 0;
  for (const auto &[name, k] : counts) {
    for (size_t i = 1; i <= k; ++i) {
      ++placed;
      total = total * placed / i;
      if (total > limit)
        return std::nullopt;
    }
  }
  return total;
}

ExploreResult exploreOrders(const Module &input, const ExploreOptions &opts) {
  ExploreResult out;
  if (!opts.eval.pipeline.passes || opts.eval.pipeline.passes->empty()) {
    out.error = "--explore-orders needs the set of passes to order (--passes a,b,c)";
    return out;
  }
  std::vector<std::string> passes = *opts.eval.pipeline.passes;
  Diagnostics unknown;
  assemblePipeline(opts.eval.pipeline, unknown);
  if (!unknown.empty()) {
    out.error = unknown.front().message;
    return out;
  }
  if (!countOrders(passes, opts.maxOrders)) {
    out.error = "the " + std::to_string(passes.size()) + " passes have more than " +
                std::to_string(opts.maxOrders) + " orders (--max-orders)";
    return out;
  }
  // The original sees the option overrides, as under graphvet check; each
  // order then runs with them already written.
  Module original = input;
  writeOptionOverrides(original, opts.eval.pipeline);
  EvalOptions eval = opts.eval;
  eval.pipeline.optionOverrides.clear();
  out.original = computeCost(original);
  out.originalNodes = countNodes(original);

  std::map<std::string, size_t> firstWithText; // printed result -> outcome index
  std::sort(passes.begin(), passes.end());
  do {
    OrderOutcome o;
    o.order = passes;
    eval.pipeline.passes = passes;
    Module optimized = original;
    PipelineResult run = runPipeline(optimized, eval.pipeline);
    o.pipelineOk = run.ok;
    o.failedPass = run.failedPass;
    std::string text = printModule(optimized);
    if (auto seen = firstWithText.find(text); seen != firstWithText.end()) {
      const OrderOutcome &first = out.outcomes[seen->second];
      o.check = first.check;
      o.cost = first.cost;
      o.nodes = first.nodes;
      o.sameAs = seen->second;
    } else {
      firstWithText.emplace(std::move(text), out.outcomes.size());
      o.check = checkOptimized(original, optimized, eval);
      o.cost = computeCost(optimized);
      o.nodes = countNodes(optimized);
    }
    out.outcomes.push_back(std::move(o));
  } while (std::next_permutation(passes.begin(), passes.end()));
  out.distinctResults = firstWithText.size();

  // Rank (stable: generation order is lexicographic), then point each
  // repeat at the best-ranked order with its result.
  std::vector<size_t> rank(out.outcomes.size());
  std::iota(rank.begin(), rank.end(), 0);
  std::stable_sort(rank.begin(), rank.end(), [&](size_t a, size_t b) {
    return rankKey(out.outcomes[a]) < rankKey(out.outcomes[b]);
  });
  std::vector<OrderOutcome> ranked;
  ranked.reserve(rank.size());
  std::map<size_t, size_t> bestOfResult; // first generated index -> best rank
  for (size_t i = 0; i < rank.size(); ++i) {
    OrderOutcome o = std::move(out.outcomes[rank[i]]);
    size_t result = o.sameAs.value_or(rank[i]);
    auto [it, fresh] = bestOfResult.emplace(result, i);
    o.sameAs = fresh ? std::nullopt : std::optional<size_t>(it->second);
    ranked.push_back(std::move(o));
  }
  out.outcomes = std::move(ranked);
  return out;
}

} // namespace graphvet::props
