// Test-case reduction on the IR: shrink any failing graph (nodes, edges,
// subgraphs, attributes, options) while it keeps failing the same way. Every
// candidate must pass the structural verifier before the interestingness
// test sees it; the standard test (failsWithKind) also rejects candidates
// that are no longer valid originals, because the oracle answers `invalid`
// for them. Deterministic and bounded by a number of evaluations.
#pragma once

#include "ir/graph.h"
#include "props/evaluate.h"

#include <atomic>
#include <functional>
#include <string>

namespace graphvet::props {

/// True when a candidate is still interesting (fails the same way).
using Interesting = std::function<bool(const Module &)>;

struct ReduceOptions {
  /// Calls of the interestingness test at most.
  unsigned maxEvaluations = 2000;
  /// Set asynchronously (signal handler) to stop early; the best module so
  /// far is returned.
  const std::atomic<bool> *stop = nullptr;
};

struct ReduceResult {
  Module module;
  unsigned evaluations = 0; ///< interestingness tests run
  unsigned accepted = 0;    ///< edits kept
  bool exhausted = false;   ///< stopped by the budget or the stop flag, not a fixpoint
};

/// Reduces `m` (which must be interesting) to a local minimum: no single
/// edit of the kinds below keeps it interesting. Edits, coarse first: remove
/// a node holding subgraphs, inline a subgraph into its holder, delete a
/// chunk of nodes (consumers reconnected to an aliased or first input, else
/// left unconnected), disconnect or drop an input, drop a control edge, an
/// attribute, an option, a graph output.
ReduceResult reduceModule(const Module &m, const Interesting &interesting,
                          const ReduceOptions &opts = {});

/// The standard interestingness test: the pipeline result is a violation of
/// `kind` (evaluate() + hasViolationKind).
Interesting failsWithKind(const EvalOptions &opts, const std::string &kind);

} // namespace graphvet::props
