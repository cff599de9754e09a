// Missed rewrites of the mid-end passes: after a pipeline, what is left that
// one of its passes should have taken. The harness finds each opportunity by
// its own simple rules (never by calling the pass it judges): a dead node
// (dce), two equal nodes (cse), a node whose inputs are all constants
// (fold-constant), a cast pair that gives back its input exactly or a
// transpose pair whose permutations cancel (simplify), two adjacent
// element-wise ops left unfused (fuse-ops). For the rewrites that change the
// graph's values or memory, the harness applies the rewrite itself to the
// pipeline's output and asks the oracle: a sound candidate is a missed
// rewrite, a violation means the pass was right to refuse. Fusion changes no
// value, so an unfused pair is missed by structure alone.
#pragma once

#include "ir/graph.h"
#include "oracle/check.h"
#include "passes/pass_manager.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace graphvet::props {

struct MissedRewriteOptions {
  /// The pipeline run; only the rules of its passes are looked for.
  PipelineOptions pipeline;
  oracle::CheckOptions check; ///< for every candidate (contract: the pipeline's)
  /// Opportunities checked by the oracle per module at most (in graph, then
  /// node order); the rest are counted as untried.
  unsigned maxCandidates = 64;
};

enum class RewriteStatus {
  Missed,       ///< the oracle proved the rewritten output sound (or, fusion, by structure)
  Necessary,    ///< the rewritten output is a violation: the pass was right
  Inconclusive, ///< a budget ran out on the candidate
  Untried,      ///< beyond MissedRewriteOptions::maxCandidates
};
std::string_view rewriteStatusName(RewriteStatus s);

/// One opportunity left in the pipeline's output.
struct MissedRewrite {
  std::string rule;               ///< "dce:dead-node", "cse:equal-nodes", ...
  std::vector<std::string> nodes; ///< graph-qualified names in the output
  std::string message;            ///< what the rewrite would do
  RewriteStatus status = RewriteStatus::Untried;
  std::string violationKind; ///< Necessary: the candidate's first violation
};

struct MissedRewriteReport {
  bool ok = true;    ///< false: the pipeline failed on the input
  std::string error; ///< why not ok
  std::vector<MissedRewrite> items;
  uint64_t missed = 0, necessary = 0, inconclusive = 0, untried = 0;
  std::map<std::string, uint64_t> missedByRule;
};

/// The rule tags, each with the pass that owns it, in report order.
struct MissedRewriteRule {
  std::string_view tag, pass, summary;
};
std::vector<MissedRewriteRule> missedRewriteRules();

/// Looks for the opportunities in `optimized` (what opts.pipeline made of
/// `original`, whose option overrides are already written) and checks each.
MissedRewriteReport findMissedRewritesIn(const Module &original, const Module &optimized,
                                         const MissedRewriteOptions &opts);

/// Runs opts.pipeline on a copy of `original` (option overrides written to
/// both), then findMissedRewritesIn.
MissedRewriteReport findMissedRewrites(const Module &original, const MissedRewriteOptions &opts);

} // namespace graphvet::props
