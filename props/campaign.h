// The fuzz campaign behind `graphvet fuzz`: draw graphs from the generators
// (case i uses seed S + i), run the pipeline on a copy, check refinement with
// the oracle, count, and turn every failure into a small, deduplicated,
// replayable `.graph` file.
//
// Two phases keep the findings independent of the number of jobs: phase 1
// runs cases (job j takes cases i = j mod J) and only records which cases
// fail and how; phase 2 picks, by case index, the first failing cases of each
// (violation kind, deleting rules) class, shrinks them (RapidCheck shrinking
// of the recipe, then IR reduction), and deduplicates the shrunk graphs by
// (kind, rules, shape signature), the lowest case index winning.
#pragma once

#include "oracle/check.h"
#include "passes/pass_manager.h"
#include "props/failure_modes.h"
#include "props/features.h"
#include "props/gen_recipe.h"
#include "props/typed_graph.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace graphvet::props {

/// Which generator draws a campaign's cases: the memory generator
/// (props/generate.h: aliasing, in-place writes, TensorMoves, control flow),
/// the typed numeric one (props/typed_graph.h: real dtypes, shapes and
/// values), or both (odd case indices typed).
enum class CaseGenerator { Memory, Typed, Mixed };
std::string_view caseGeneratorName(CaseGenerator g);
std::optional<CaseGenerator> parseCaseGenerator(std::string_view name);

struct CampaignOptions {
  uint64_t seed = 1;
  /// Stop after this many cases (cases 0..N-1 all run), and/or after this
  /// many seconds of wall-clock time. Neither: 1000 cases.
  std::optional<uint64_t> cases;
  std::optional<double> seconds;
  unsigned jobs = 1;
  PipelineOptions pipeline;
  /// `graphvet fuzz --passes all`: when not empty, these pipelines replace
  /// `pipeline` and take turns: case i runs pipelines[casePipelineIndex(i)]
  /// (consecutive pairs of cases share one, so in a mixed campaign every
  /// pipeline meets both generators). Findings, replay commands and the
  /// per-pipeline counts name the pipeline of their case.
  std::vector<PipelineOptions> pipelines;
  /// As EvalOptions::overridesReachOriginal: the generated originals get the
  /// pipeline's option overrides too, as `graphvet check --option` (the
  /// findings' replay command) applies them. false only to inject faults.
  bool overridesReachOriginal = true;
  /// Run each case's pipeline a second time on its output: a change, or a
  /// level pipeline that never reached its fixpoint, is a `not-idempotent`
  /// finding (EvalOptions::checkIdempotence; `graphvet fuzz
  /// --no-idempotence` turns it off).
  bool checkIdempotence = true;
  GenOptions gen;
  CaseGenerator generator = CaseGenerator::Memory;
  TypedGenOptions typedGen;
  /// Oracle settings for every case. The campaign default is the fast path
  /// (useZ3 = false, exact reachability-based race analysis); each finding is
  /// then re-checked with Z3 when confirmWithZ3 is set.
  oracle::CheckOptions check = defaultCheckOptions();
  bool confirmWithZ3 = true;
  /// Where findings are written ("" = keep them in memory only).
  std::string outDir;
  /// Missed optimizations (props/missed.h): after a sound check, remove each
  /// TensorMove the pass kept, alone, and ask the oracle. Costs one check per
  /// kept copy. Missed copies are figures, never findings.
  bool missed = false;
  /// Where to save example originals with a missed copy ("" = none): up to
  /// missedExamplesPerRule per rule tag, the smallest graphs first (ties by
  /// case index), each reduced with at most missedReduceBudget evaluations
  /// while the pass still keeps a removable copy for that rule.
  std::string missedOutDir;
  unsigned missedExamplesPerRule = 3;
  unsigned missedReduceBudget = 300;
  /// Seeded initial states per missed-optimization check. More than the
  /// soundness check's: a removal is claimed only when it holds in every
  /// state tried, and a copy that matters only in a branch (or a loop trip
  /// count) no tried state reaches would otherwise look removable. With 2
  /// states about 8% of the claims were such false positives; 8 and 16
  /// states give the same count within 1% (docs/missed-optimizations.md).
  unsigned missedStates = 8;
  /// Variants of the placeholder arithmetic per missed-optimization check
  /// (oracle::CheckOptions::arithmetics). A removal that holds only under
  /// the documented mix depends on values no real pass can know (a loop
  /// condition computed from constants alone, say). Over 10,000 cases 1, 3,
  /// 8 and 16 variants claim 627, 586, 568 and 562 removals
  /// (docs/missed-optimizations.md); 8 is within 1% of 16 at 3/4 the cost.
  unsigned missedArithmetics = 8;
  /// Shrinking budget per finding: recipe shrink steps tried, then IR
  /// reduction evaluations.
  unsigned recipeShrinkBudget = 1500;
  unsigned reduceBudget = 600;
  /// Phase 2 shrinks at most this many failing cases per (kind, rules) class
  /// and this many overall.
  unsigned shrinksPerClass = 2;
  unsigned maxShrinks = 60;
  /// Stop drawing cases once any case has failed (mutation testing asks only
  /// "is anything found, and how fast?"). The failures found so far, at least
  /// one, are still shrunk and saved. With jobs > 1 the cases that were
  /// already running finish, so more than one failure may come out.
  bool stopOnFirstFailure = false;
  /// Debugging aid (`graphvet fuzz --output-digest`): fold every case's
  /// pipeline output (the optimized module as printed, then each remark's
  /// decision, tag, message and location) into CampaignStats::outputDigest,
  /// so two builds can be compared on their output bytes over many cases.
  bool outputDigest = false;
  /// Set by a signal handler: stop drawing cases, shrink no further, save.
  const std::atomic<bool> *stop = nullptr;
  /// Progress: called about every progressInterval seconds during phase 1
  /// (phase "running", from the calling thread) and after each shrunk
  /// failure in phase 2 ("shrinking k/n", from a worker, one call at a time).
  std::function<void(const struct CampaignStats &, const char *phase)> progress;
  double progressInterval = 1.0;
  /// The time series of phase 1 (CampaignResult::timeline): a sample about
  /// every timelineInterval seconds of wall time; when timelineMaxPoints are
  /// reached, every other sample is dropped and the interval doubles. Timing
  /// only: what the cases do never depends on it.
  double timelineInterval = 0.5;
  size_t timelineMaxPoints = 200;

  static oracle::CheckOptions defaultCheckOptions() {
    oracle::CheckOptions c;
    c.useZ3 = false;
    return c;
  }
};

/// Which entry of opts.pipelines case `index` runs (0 when there are none),
/// and that pipeline (opts.pipeline when there are none).
size_t casePipelineIndex(const CampaignOptions &opts, uint64_t index);
const PipelineOptions &casePipeline(const CampaignOptions &opts, uint64_t index);
/// A pipeline's short name in figures and reports: its explicit pass list
/// ("cse", "dce,cse") or its level ("O3"), then its option overrides
/// ("legalize[legalize.target=npu]").
std::string pipelineLabel(const PipelineOptions &p);
/// The command-line flags that run `p` (" --passes cse", " -O 2 --option
/// 'k=v'"; "" for the default -O3), for replay and redraw commands.
std::string pipelineCommandFlags(const PipelineOptions &p);
/// The pipelines of `graphvet fuzz --passes all`: each pass of the table
/// alone (unless `base` disables it), a pass that needs a target once per
/// target (convert-layout: NHWC; legalize and partition-graph: each target of
/// the shipped table), then base's level pipeline, without and with the NHWC
/// layout target. All keep base's option overrides.
std::vector<PipelineOptions> everyPipeline(const PipelineOptions &base);

/// The campaign counts the features of one case in kFeatureSample (the
/// first two of every 2 * kFeatureSample, so a mixed campaign samples both
/// generators).
inline constexpr uint64_t kFeatureSample = 8;

/// What the cases did with one pass of the pipeline.
struct PassCoverage {
  uint64_t ran = 0;      ///< cases where the pass ran (it has counters)
  uint64_t remarked = 0; ///< cases where it remarked on a node
  uint64_t changed = 0;  ///< cases with a remark that changed the graph (not kept/skipped)
  uint64_t remarks = 0;
  std::set<std::string> rules; ///< distinct "decision:rule" of its remarks
};

struct CampaignStats {
  uint64_t cases = 0;
  uint64_t sound = 0;
  uint64_t violations = 0; ///< cases whose pipeline result is a violation
  uint64_t inconclusive = 0;
  uint64_t invalid = 0;     ///< generated originals the oracle rejects (a generator bug)
  uint64_t tensorMoves = 0; ///< TensorMoves seen by the pass
  uint64_t deleted = 0;
  uint64_t kept = 0;
  /// With CampaignOptions::missed, over the sound cases (the only ones examined):
  uint64_t missedCases = 0;             ///< cases examined
  uint64_t missedDeleted = 0;           ///< D: copies the pass deleted in those cases
  uint64_t missedDeletedUnobserved = 0; ///< of D, dead code in the original
  /// of D, live copies in graphs that never ran on the checked states
  uint64_t missedDeletedUnexercised = 0;
  uint64_t missed = 0; ///< M: kept copies the oracle proves removable
  uint64_t missedNecessary = 0, missedInconclusive = 0, missedReserved = 0, missedUntried = 0;
  uint64_t missedUnobserved = 0;                ///< removable dead copies (not in M)
  uint64_t missedUnexercised = 0;               ///< removable copies that never ran (not in M)
  std::map<std::string, uint64_t> missedByRule; ///< M by the rule that kept the copy
  /// With CampaignOptions::missed, the mid-end rewrites left open in the
  /// sound cases (props/missed_rewrites.h): missed by rule, and the
  /// opportunities the oracle showed necessary or could not decide.
  std::map<std::string, uint64_t> missedRewritesByRule;
  uint64_t missedRewrites = 0, rewritesNecessary = 0, rewritesInconclusive = 0;
  /// One record per missed copy when examples are wanted (missedOutDir set).
  struct MissedHit {
    std::string rule, node;
    uint64_t caseIndex = 0;
    size_t nodes = 0; ///< size of the case's original
  };
  std::vector<MissedHit> missedHits;
  /// D / (D + M) over the examined cases; 1 when there was nothing to delete.
  /// D_live / (D_live + M): over copies whose bytes are observed and whose
  /// removal the experiments tested (MissedReport::recall).
  double recall() const {
    uint64_t live = missedDeleted - missedDeletedUnobserved - missedDeletedUnexercised;
    return live + missed == 0 ? 1.0
                              : static_cast<double>(live) / static_cast<double>(live + missed);
  }
  /// D / (D + M + U + X): dead and unexercised copies included.
  double recallAll() const {
    uint64_t all = missedDeleted + missed + missedUnobserved + missedUnexercised;
    return all == 0 ? 1.0 : static_cast<double>(missedDeleted) / static_cast<double>(all);
  }
  /// Remarks by "decision:rule" (e.g. "deleted:scenario1", "kept:rule4-conflict").
  std::map<std::string, uint64_t> rules;
  /// Violating cases by kind.
  std::map<std::string, uint64_t> kinds;
  FeatureCounts features; ///< over the sampled cases (features.modules of them)
  /// Per pipeline (pipelineLabel), in a campaign over several
  /// (CampaignOptions::pipelines) or one: cases run, violations,
  /// inconclusive verdicts and the remarks its passes made (how much it did).
  struct PipelineCounts {
    uint64_t cases = 0, violations = 0, inconclusive = 0, remarks = 0;
  };
  std::map<std::string, PipelineCounts> byPipeline;
  /// Of the same sampled cases, how many touched each failure mode (by a
  /// feature, a remarked rule tag or extra pipeline rounds: failure_modes.h).
  std::array<uint64_t, kNumFailureModes> failureModeCases{};
  /// By pass name.
  std::map<std::string, PassCoverage> passes;
  /// With CampaignOptions::outputDigest: the sum (mod 2^64) over the cases
  /// of a 64-bit FNV-1a hash of (case index, output). A sum, so it does not
  /// depend on which job ran which case.
  uint64_t outputDigest = 0;
  double seconds = 0;
  double casesPerSecond() const { return seconds > 0 ? static_cast<double>(cases) / seconds : 0; }
  void merge(const CampaignStats &o);
};

struct Finding {
  std::string kind;      ///< violation kind ("invalid-original" for a generator bug)
  std::string rules;     ///< rules of the deletions in the shrunk case, '+'-joined, or "none"
  std::string signature; ///< shape signature of the shrunk original
  uint64_t caseIndex = 0;
  uint64_t seed = 0; ///< case seed: `graphvet fuzz --seed <seed> --cases 1` redraws it
  /// The generator that drew the case (the redraw command names it).
  CaseGenerator generator = CaseGenerator::Memory;
  /// The pipeline the case ran (pipelineLabel) and the flags that run it
  /// (pipelineCommandFlags; the redraw and replay commands use them).
  std::string pipeline, pipelineFlags;
  size_t nodesBefore = 0, nodesAfter = 0;
  unsigned shrinkSteps = 0; ///< accepted recipe shrinks + IR edits
  unsigned duplicates = 0;  ///< other failing cases that shrank to the same finding
  bool confirmedWithZ3 = false;
  std::string original;  ///< the shrunk original, printed
  std::string optimized; ///< what the pipeline made of it, printed
  oracle::CheckResult result;
  std::string replay;   ///< command replaying the saved file
  std::string fileName; ///< base name, e.g. "value-scenario1-1a2b3c4d.graph"
  std::string path;     ///< where it was written ("" if not written)
  /// The file content: header comments then the original.
  std::string fileText() const;
};

/// A saved example of a missed optimization (CampaignOptions::missedOutDir).
struct MissedExample {
  std::string rule; ///< the rule tag that kept the copy
  std::string node; ///< the kept copy in the reduced graph
  uint64_t caseIndex = 0;
  uint64_t seed = 0; ///< case seed
  size_t nodesBefore = 0, nodesAfter = 0;
  std::string text; ///< header comments then the reduced original
  std::string path; ///< where it was written ("" if not written)
};

/// One sample of phase 1 (CampaignOptions::timelineInterval).
struct TimelinePoint {
  double seconds = 0;        ///< wall time since phase 1 started
  uint64_t cases = 0;        ///< cases done by then
  double casesPerSecond = 0; ///< over the interval since the previous sample
  size_t rules = 0;          ///< distinct "decision:rule" remarks seen so far
  size_t features = 0;       ///< features seen so far (in the sampled cases)
};

struct CampaignResult {
  CampaignStats stats;
  /// Phase 1 over time, at most CampaignOptions::timelineMaxPoints samples
  /// from 0 s to the end (the last sample is the final count).
  std::vector<TimelinePoint> timeline;
  std::vector<Finding> findings;
  std::vector<MissedExample> missedExamples; ///< by rule, then size
  bool interrupted = false;
  /// Seconds from the start of phase 1 until the first failing case had run
  /// (wall clock; a measurement, it decides nothing), and that case's index.
  std::optional<double> firstFailureSeconds;
  std::optional<uint64_t> firstFailureCase;
  /// Failing cases of classes that were never shrunk (opts.maxShrinks hit).
  uint64_t unshrunkFailures = 0;
  std::vector<std::string> errors; ///< e.g. a finding that could not be written
};

/// Runs the campaign. Unknown pass names must be rejected by the caller
/// (runPipeline would run nothing).
CampaignResult runCampaign(const CampaignOptions &opts);

/// A signature of a module's shape that ignores names: per graph (canonical
/// order), its op types in topological order and its edges by position.
std::string shapeSignature(const Module &m);

} // namespace graphvet::props
