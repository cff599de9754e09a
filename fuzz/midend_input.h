// What midend_fuzzer does with one input, as a library so that the unit
// tests and the replay driver see the same decisions: the pipeline an input
// selects (its `# passes: CHOICE` first line, else a hash of its bytes), the
// filter that turns away inputs not worth judging (unparsable, ill-typed,
// too big, reading files), and the check itself (the pipeline with the
// verifier on, then the oracle's refinement check under the pipeline's
// numeric contract plus the pass contracts, as `graphvet check` does).
#pragma once

#include "ir/graph.h"
#include "oracle/check.h"
#include "passes/pass_manager.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace graphvet::fuzz {

/// Every pipeline choice: each mid-end pass alone (by its --passes name),
/// then the level pipelines "-O1", "-O2", "-O3".
std::span<const std::string_view> midendPipelineChoices();

/// The prefix of the first line that names the pipeline.
inline constexpr std::string_view kPassesHeader = "# passes: ";

/// The choice the first line names, or nullopt when the line is absent or
/// names no known choice.
std::optional<std::string> pipelineHeader(std::string_view text);
/// The header's choice, else one picked by the FNV-1a hash of the bytes.
std::string choosePipeline(std::string_view text);
/// `text` with its pipeline header (if any) replaced by `choice`'s.
std::string withPipelineHeader(std::string_view text, std::string_view choice);
/// The text after the header line (the whole text without a header).
std::string_view withoutPipelineHeader(std::string_view text);

/// The pipeline a choice runs (verifier after every pass).
PipelineOptions pipelineOptionsFor(std::string_view choice);
/// The `graphvet check` flags that replay a choice: "--passes cse", "-O 2".
std::string replayFlags(std::string_view choice);

/// Bounds that keep one execution cheap.
struct MidendLimits {
  size_t maxInputBytes = 8192;
  uint32_t maxNodes = 48;          ///< live nodes over every live graph
  uint32_t maxGraphs = 4;          ///< live graphs, root included
  int64_t maxElements = 1024;      ///< elements of any one port's type
  int64_t maxTotalElements = 8192; ///< summed over every port
  /// Turn away inputs in which the root graph's NetOutput reads a Const
  /// directly: the shape of the target's first cse finding (fixed; kept as
  /// fuzz/regressions/midend_fuzzer/cse-const-graph-output.graph), which
  /// ended most fork-mode jobs within seconds while it was open. A switch
  /// for fuzzing past a finding of that shape: midend_fuzzer sets it from
  /// MIDEND_FUZZER_SKIP_CONST_OUTPUTS=1; off by default.
  bool skipConstOutputs = false;
};

/// Why an input is (not) judged.
enum class InputStatus : uint8_t {
  Accepted,
  Unparsable, ///< parse or verifier error
  IllTyped,   ///< type inference reports an error
  TooLarge,   ///< bytes, nodes, graphs or tensor sizes over the limits
  ReadsFiles, ///< `file(...)` literals or a `*.targets_file` option
  Excluded,   ///< a shape MidendLimits excludes (skipConstOutputs)
};
inline constexpr size_t kNumInputStatuses = 6;
std::string_view inputStatusName(InputStatus s);

/// Classifies a parsed module against the limits (verifier, types, sizes,
/// files).
InputStatus classifyModuleForMidend(const Module &m, const MidendLimits &limits);
/// Parses and classifies text; on Accepted, `module` (if given) gets it.
InputStatus classifyMidendInput(std::string_view text, const MidendLimits &limits,
                                std::optional<Module> *module = nullptr);

enum class MidendOutcome : uint8_t {
  Skipped,      ///< not judged (InputStatus other than Accepted, or invalid original)
  Sound,        ///< the pipeline's result refines the original
  Inconclusive, ///< a budget ran out
  Violation,    ///< unsound: a finding
};

struct MidendResult {
  MidendOutcome outcome = MidendOutcome::Skipped;
  InputStatus status = InputStatus::Accepted;
  std::string choice;        ///< the pipeline choice
  std::string failedPass;    ///< a pass after which the verifier failed
  oracle::CheckResult check; ///< the oracle's verdict (when judged)
  std::string optimizedText; ///< printed optimized module (on a violation)
};

/// The oracle budget of one execution: `graphvet check`'s defaults (seed
/// 1, 2 states) so that a finding replays with `graphvet check FILE FLAGS`;
/// Z3 runs on one input in 16 (picked by the input's hash).
oracle::CheckOptions midendCheckOptions(std::string_view text);

/// The whole target: classify, run the chosen pipeline on a copy, check.
MidendResult checkMidendInput(std::string_view text, const MidendLimits &limits = {});

} // namespace graphvet::fuzz
