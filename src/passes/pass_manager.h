// The pass manager: the table of passes (name, summary, lowest optimization
// level that runs it), pipeline assembly from a level, an explicit list and
// --disable-pass, option overrides, and the verifier after every pass.
#pragma once

#include "ir/contract.h"
#include "ir/diagnostic.h"
#include "ir/graph.h"
#include "ir/types.h"
#include "passes/remark.h"

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace graphvet {

struct PipelineOptions {
  unsigned optLevel = 3;                              ///< O0..O3
  std::optional<std::vector<std::string>> passes;     ///< explicit list (overrides level)
  std::vector<std::string> disabled;                  ///< --disable-pass NAME
  std::map<std::string, std::string> optionOverrides; ///< --option K=V (over the options block)
  bool verifyEach = true;                             ///< run verifyModule after every pass
  /// tensor-move-delete in the reference design's scope, no extensions
  /// (graphvet opt --tm-conservative); TensorMoveDeleteOptions::conservative.
  bool conservative = false;
  /// A level pipeline (-O1..-O3) runs its passes again while a round still
  /// changes the module (midend-passes.md), at most this many rounds; an
  /// explicit --passes list runs once.
  unsigned maxIterations = 4;
  /// Benchmark baseline (`graphvet bench --compare`): the passes that have a
  /// naive variant (cse, dce, fuse-ops: the `naive` field of their options)
  /// run it. Same results, slower; never set by the optimizing commands.
  bool naiveVariants = false;
};

struct PipelineResult {
  bool ok = true;              ///< false when a pass broke verification or a name is unknown
  std::string failedPass;      ///< which pass broke verification
  Diagnostics diagnostics;     ///< verifier errors / unknown pass errors
  Diagnostics warnings;        ///< e.g. malformed option values
  std::vector<Remark> remarks; ///< every decision, in decision order
  std::map<std::string, PassStats> stats; ///< by pass name, summed over the rounds
  /// Rounds of the pipeline that changed the module, plus the one that
  /// confirmed the fixpoint (its remarks and counters are dropped: they
  /// repeat the decisions of the round before).
  unsigned iterations = 0;
  /// The last round changed nothing (always true for an explicit list,
  /// which runs once); false when PipelineOptions::maxIterations stopped it.
  bool reachedFixpoint = true;
  /// Wall time (steady clock) of each pass, summed over every round that ran
  /// (the confirming round included), of the verifier runs, of the change
  /// tests (the fingerprint after each pass and the fixpoint comparisons),
  /// and of the whole pipeline (`graphvet opt --time-passes`).
  std::map<std::string, double> passSeconds;
  double verifySeconds = 0, fixpointSeconds = 0, totalSeconds = 0;
  /// Pass runs a level pipeline skipped because the module was exactly the
  /// pass's own last output (see runPipeline).
  unsigned skippedPassRuns = 0;
};

/// What a pass gets besides the module.
struct PassContext {
  const PipelineOptions &options;
  std::vector<Remark> &remarks;
  Diagnostics &warnings;
  /// The module's types as the pass receives it, when the pass manager has
  /// them (the verifier's, or those of a pass before that changed nothing); a
  /// pass that reads types takes them for its first inference (its options'
  /// `inputTypes`) and leaves the types of its input there.
  TypeHandoff *inputTypes = nullptr;
};

using PassRunFn = PassStats (*)(Module &m, PassContext &ctx);

/// One row of the pass table; it drives runPipeline, `graphvet opt --passes`
/// and its --help.
struct PassInfo {
  std::string_view name;
  std::string_view summary;
  unsigned minLevel; ///< runs at -O<minLevel> and above
  PassRunFn run;
  /// What `graphvet check` demands of the pass's results (tensor-semantics.md
  /// §7): bit-exact, or within the derived bound of oracle/magnitude.h.
  NumericContract contract = NumericContract::Exact;
  /// The module options (`--option KEY=VALUE`) the pass reads, one
  /// "KEY=VALUE: meaning (default)" per line, for `graphvet opt --help`.
  std::string_view options = {};
};

inline constexpr unsigned kMaxOptLevel = 3;
/// PassInfo::minLevel of a pass that no -O level runs yet: it runs only when
/// named by --passes (a pass not yet in the -O1..-O3 pipelines of
/// midend-passes.md: dce and cse until the clean-up passes are complete).
inline constexpr unsigned kExplicitOnly = ~0u;

/// Every pass, in pipeline order.
std::span<const PassInfo> allPasses();
/// The row for `name`, or nullptr.
const PassInfo *findPass(std::string_view name);

/// The passes `opts` selects, in pipeline order; unknown names and an
/// out-of-range level go to `errors` (the pipeline is then empty).
std::vector<const PassInfo *> assemblePipeline(const PipelineOptions &opts, Diagnostics &errors);

/// The contract a check of the pipeline applies: `approx` when any selected
/// pass declares it, `exact` otherwise.
NumericContract pipelineContract(const PipelineOptions &opts);

/// The module-option key for `key`: a key whose first component names a pass
/// by its `--passes` spelling (`convert-layout.target`) becomes the option's
/// identifier spelling (`convert_layout.target`); any other key is returned
/// unchanged. Module option keys are identifiers (graph-format.md), so the
/// command line accepts both spellings.
std::string canonicalOptionKey(std::string_view key);

/// Writes the option overrides into `m.options`, as runPipeline does on the
/// module it optimizes. A checker applies them to the original too: the
/// permissions of semantics.md §4 come from the original's options.
void writeOptionOverrides(Module &m, const PipelineOptions &opts);

/// Applies the option overrides to `m.options` (so the printed module replays
/// the run), assembles the pipeline and runs it: an explicit list once, a
/// level pipeline round after round until a round changes nothing or
/// maxIterations rounds ran (a warning says so). Stops at the first pass
/// after which the verifier fails; an unknown pass name or level runs
/// nothing.
PipelineResult runPipeline(Module &m, const PipelineOptions &opts);

} // namespace graphvet
