// Missed optimizations of TensorMoveDeletePass, measured by the oracle: for
// every TensorMove the pass kept, build the pass's output with just that copy
// removed by the harness itself (consumers relinked to the copy's input, its
// orderings carried over, the fewest reader-before-writer control edges added
// to repair races), and ask the oracle whether that candidate refines the
// original. A sound candidate is a missed optimization. Each kept copy is tried
// alone against the pass's output, so deleted (D) and missed (M) add up and
// recall = D / (D + M).
#pragma once

#include "ir/graph.h"
#include "oracle/check.h"
#include "passes/pass_manager.h"
#include "props/liveness.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace graphvet::props {

struct MissedOptions {
  PipelineOptions pipeline;   ///< `conservative` selects the reference design's scope
  oracle::CheckOptions check; ///< for every candidate (and the pass output)
  /// Kept copies tried per module at most (in the pass's decision order); the
  /// rest are counted as untried and the report says it was capped.
  unsigned maxCandidates = 256;
  /// Reader-before-writer control edges added per candidate at most.
  unsigned maxAddedEdges = 16;
  /// Also check the pass's own output against the original (the CLI does;
  /// the campaign already has that verdict).
  bool checkPassOutput = true;
  /// Keep the printed candidate module of every removable copy.
  bool keepCandidates = false;
};

enum class MissedStatus {
  Removable, ///< the oracle proved the candidate sound: a missed optimization
  /// Removable, but the copy's bytes are never observed (dead code: nothing
  /// that reaches a graph output, a variable or caller memory reads them).
  /// Counted apart from M: deleting dead nodes is dead-code elimination's job.
  Unobserved,
  /// Removable, but the copy sits in a branch or loop body that never ran on
  /// the checked states: the experiments never tested its values (only the
  /// race analysis saw it). Counted apart from M, like Unobserved.
  Unexercised,
  Necessary,    ///< the candidate is a violation: the copy protects something
  Inconclusive, ///< a budget ran out on the candidate (not counted as missed)
  Reserved,     ///< skipped by contract (reserved attribute): not tried
  Untried,      ///< beyond MissedOptions::maxCandidates
};

/// "removable", "unobserved", "unexercised", "necessary", "inconclusive",
/// "reserved", "untried".
std::string_view missedStatusName(MissedStatus);

/// One kept TensorMove and what removing it alone does.
struct MissedItem {
  std::string node;        ///< graph-qualified name ("tm3", "body/tm")
  std::string graph;       ///< the graph holding it
  SourceLoc loc;           ///< where it was parsed
  std::string rule;        ///< the pass's rule tag for keeping it ("rule2-no-grant", ...)
  std::string passMessage; ///< the pass's remark message
  MissedStatus status = MissedStatus::Untried;
  /// Orderings the removal carried over from the copy ("a -> b"), only those
  /// not already implied by existing paths.
  std::vector<std::string> movedEdges;
  /// Reader-before-writer control edges added to repair races ("r -> w").
  std::vector<std::string> addedEdges;
  std::string violationKind; ///< Necessary: the first violation's kind
  std::string message;       ///< Necessary: its message; Inconclusive: the reason
  std::string candidate;     ///< printed candidate (Removable, with keepCandidates)
};

struct MissedReport {
  bool ok = true;    ///< false: the pipeline failed or the original is invalid
  std::string error; ///< why not ok
  /// The pass output's own verdict (Sound unless checkPassOutput found otherwise).
  oracle::Verdict passVerdict = oracle::Verdict::Sound;
  std::string passViolation; ///< first violation of the pass output, "kind: message"
  uint64_t tensorMoves = 0;
  uint64_t deleted = 0; ///< D: deleted by the pass
  /// Of D, copies that were dead code in the original (unobservedNodes).
  uint64_t deletedUnobserved = 0;
  /// Of D, live copies in graphs that never ran on the checked states.
  uint64_t deletedUnexercised = 0;
  uint64_t kept = 0;        ///< kept or skipped by the pass
  uint64_t missed = 0;      ///< M: Removable items
  uint64_t unobserved = 0;  ///< removable dead copies (not in M)
  uint64_t unexercised = 0; ///< removable copies that never ran (not in M)
  uint64_t necessary = 0, inconclusive = 0, reserved = 0, untried = 0;
  bool capped = false;           ///< maxCandidates was reached
  std::vector<MissedItem> items; ///< every kept copy, in the pass's decision order
  std::map<std::string, uint64_t> missedByRule;

  /// Recall over copies whose bytes are observed and whose removal the
  /// experiments tested: D_live / (D_live + M), D_live = deleted -
  /// deletedUnobserved - deletedUnexercised; 1 when there is nothing to delete.
  double recall() const { return ratio(deleted - deletedUnobserved - deletedUnexercised, missed); }
  /// Recall over every removable copy, dead and unexercised ones included:
  /// D / (D + M + U + X).
  double recallAll() const { return ratio(deleted, missed + unobserved + unexercised); }
  static double ratio(uint64_t done, uint64_t left) {
    return done + left == 0 ? 1.0 : static_cast<double>(done) / static_cast<double>(done + left);
  }
};

/// Runs the pipeline on a copy of `original` (with remarks) and tries every
/// kept TensorMove. The pipeline's option overrides apply to the original
/// too, as in `graphvet check --option`. Deterministic; never throws.
MissedReport findMissed(const Module &original, const MissedOptions &opts);

/// The same, given what the pipeline already made of `original` (the
/// campaign's evaluation): `optimized` and its remarks.
MissedReport findMissedIn(const Module &original, const Module &optimized,
                          const std::vector<Remark> &remarks, const MissedOptions &opts);

/// The candidate of one kept copy: `optimized` with TensorMove `node` of graph
/// `graph` removed, its orderings carried over (`moved`, "a -> b"), and
/// reader-before-writer control edges added (`added`) while races remain and
/// an edge can repair one without closing a cycle. False (with `error`) when
/// the node cannot be removed structurally.
bool buildCandidate(const Module &optimized, GraphId graph, NodeId node, unsigned maxAddedEdges,
                    Module &candidate, std::vector<std::string> &moved,
                    std::vector<std::string> &added, std::string &error);

} // namespace graphvet::props
