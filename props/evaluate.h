// One evaluation of a graph, shared by the campaign, the reducer and the
// properties: run the pass pipeline on a copy, then ask the oracle whether the
// result refines the original -- exactly what `graphvet check FILE` does.
#pragma once

#include "ir/graph.h"
#include "oracle/check.h"
#include "passes/pass_manager.h"

#include <string>
#include <vector>

namespace graphvet::props {

struct EvalOptions {
  PipelineOptions pipeline;
  oracle::CheckOptions check;
  /// The pipeline's option overrides apply to the original too, as in
  /// `graphvet check --option` (semantics.md §4 takes the permissions from the
  /// original's options). false: only the pass sees them, a fault injection
  /// for tests (the pass is granted what the oracle does not allow).
  bool overridesReachOriginal = true;
  /// Also run the pipeline again on its output: a second run that changes
  /// it, or a level pipeline that never reached its fixpoint, is a
  /// `not-idempotent` violation (props/contract.h; `graphvet check
  /// --idempotent`).
  bool checkIdempotence = false;
};

struct Evaluation {
  Module optimized;
  PipelineResult pipeline;
  oracle::CheckResult result;
};

/// Runs the pipeline on a copy of `original` and checks refinement. A pass
/// that breaks the verifier still yields a module, which the oracle reports
/// as `malformed`. The pipeline's option overrides apply to the original
/// too (EvalOptions::overridesReachOriginal).
Evaluation evaluate(const Module &original, const EvalOptions &opts);

/// The check half of evaluate(): `optimized` (what opts.pipeline made of
/// `original`, whose option overrides are already written) against
/// `original`, under the pipeline's contract, with the pass-contract checks.
oracle::CheckResult checkOptimized(const Module &original, const Module &optimized,
                                   const EvalOptions &opts);

/// True when the result is a violation with a violation of `kind`.
bool hasViolationKind(const oracle::CheckResult &r, const std::string &kind);

/// Rule tags of the TensorMoves the pipeline deleted, sorted and unique.
std::vector<std::string> deletionRules(const PipelineResult &p);
/// The tags joined with '+', or "none".
std::string joinRules(const std::vector<std::string> &rules);

/// Live nodes over every live graph.
size_t countNodes(const Module &m);

/// The `--passes` value that replays `opts.pipeline` ("" for the default
/// level-3 pipeline).
std::string passesFlag(const PipelineOptions &opts);

} // namespace graphvet::props
