// Measurement harness behind `graphvet bench` and the Google Benchmark
// targets: TensorMoveDeletePass on model-like graphs (time, memory, the naive
// variant side by side, decision equality) and the oracle's checks per second
// on default-size generated graphs. Wall-clock time is only ever measured
// here, never fed back into what the pass or the generators decide.
#pragma once

#include "oracle/check.h"
#include "passes/pass_manager.h"
#include "props/gen_recipe.h"
#include "props/model_builder.h"

#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string_view>
#include <type_traits>
#include <vector>

namespace graphvet::props {

/// Resident memory of this process in MiB, from /proc/self/status (VmRSS,
/// VmHWM); peak falls back to getrusage's ru_maxrss, current to 0.
struct MemorySample {
  double currentMb = 0;
  double peakMb = 0;
};
MemorySample sampleMemory();
/// Resets the peak (VmHWM) to the current RSS through /proc/self/clear_refs;
/// false when the kernel does not allow it (then pass-only peaks are unknown).
bool resetPeakMemory();

/// FNV-1a of `text`: equal texts give equal digests (the benchmarks compare
/// a naive variant's printed result with the fast one's this way).
uint64_t textDigest(std::string_view text);

/// Runs `work` in a forked child (on its own copy of the process, so it may
/// change anything) and reads back the `size` bytes it writes to its
/// argument, waiting at most `budgetSeconds`; a child that has not answered
/// by then is killed. False when the budget ran out, fork failed or the
/// child did not answer; `waitedMs` is the time waited. The naive variants
/// of the benchmarks run this way, so a quadratic one cannot hang a run.
bool runInChild(const std::function<void(void *)> &work, void *out, size_t size,
                double budgetSeconds, double &waitedMs);

/// runInChild for a trivially copyable result `work` returns.
template <class T, class Work>
std::optional<T> runInChild(Work work, double budgetSeconds, double &waitedMs) {
  static_assert(std::is_trivially_copyable_v<T>);
  T value{};
  if (!runInChild(
          [&](void *out) {
            const T r = work();
            std::memcpy(out, &r, sizeof r);
          },
          &value, sizeof value, budgetSeconds, waitedMs))
    return std::nullopt;
  return value;
}

struct PassBenchOptions {
  ModelOptions model;
  /// Time the naive variant (TensorMoveDeleteOptions::naiveReachability)
  /// instead of the fast one.
  bool naive = false;
  /// Also run the naive variant on the same graph, in a child process capped
  /// at naiveBudgetSeconds, and compare times and decisions (the main run is
  /// then the fast variant, whatever `naive` says).
  bool compare = false;
  double naiveBudgetSeconds = 120;
  /// Runs of the pass (each on a freshly built copy of the same model); the
  /// reported time is the median by wall time (shared machines are noisy),
  /// the reported memory the first run's.
  unsigned repeat = 1;
};

/// One run of the pass.
struct PassRun {
  bool finished = false; ///< false: the time budget ran out (compare only)
  double passMs = 0;     ///< runTensorMoveDelete alone (remarks collected, as the pipeline does)
  /// CPU time of the same span: on a loaded machine wall time overstates
  /// the cost, CPU time does not.
  double passCpuMs = 0;
  int64_t deleted = 0;
  int64_t kept = 0;
  int64_t ctrlEdgesAdded = 0;
  /// FNV-1a of every remark (node, graph, decision, rule, message), in order:
  /// equal digests mean equal decisions.
  uint64_t decisionDigest = 0;
  double rssBeforeMb = 0; ///< RSS when the pass started
  double passPeakMb = -1; ///< peak RSS during the pass (-1: unknown)
};

struct PassBenchResult {
  ModelInfo model;
  int64_t tensorMoves = 0;
  double buildMs = 0;
  PassRun run;                       ///< the variant asked for (fast unless options.naive)
  std::vector<double> passMsSamples; ///< wall time of every repetition, in run order
  double peakRssMb = 0;              ///< peak RSS of the whole process, building included
  std::optional<PassRun> naive;      ///< with compare
  /// With compare and a finished naive run: did both decide the same?
  std::optional<bool> sameDecisions;
};

PassBenchResult benchPass(const PassBenchOptions &opts);

struct OracleBenchOptions {
  uint64_t seed = 1; ///< case i uses seed + i, like `graphvet fuzz`
  uint64_t cases = 500;
  GenOptions gen; ///< default: the campaign's default-size graphs
  PipelineOptions pipeline;
  /// The campaign's default: exact reachability race analysis, no Z3.
  oracle::CheckOptions check = [] {
    oracle::CheckOptions c;
    c.useZ3 = false;
    return c;
  }();
};

struct OracleBenchResult {
  uint64_t checks = 0;
  double seconds = 0; ///< generate + pass + check, all cases (wall clock)
  double checksPerSecond = 0;
  double cpuSeconds = 0; ///< CPU time of the same (all threads of the process)
  double checksPerCpuSecond = 0;
  /// Where the time went.
  double generateSeconds = 0, passSeconds = 0, checkSeconds = 0;
  uint64_t sound = 0, violations = 0, inconclusive = 0, invalid = 0;
  double meanNodes = 0;
};

OracleBenchResult benchOracle(const OracleBenchOptions &opts);

} // namespace graphvet::props
