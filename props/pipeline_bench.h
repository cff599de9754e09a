// Measurement of the mid-end pipeline behind `graphvet bench --pipeline`
// (issue 30): the numeric model graph of N nodes, each pass of the pipeline
// in order (time as the median of repeats, peak memory, nodes before and
// after), the whole pipeline as `graphvet opt` runs it, and with compare the
// naive variant of each pass that has one (cse, dce, fuse-ops), run on the
// same input in a child process, its printed result compared with the fast
// variant's. Wall-clock time is only measured here, never fed back into what
// a pass decides.
#pragma once

#include "passes/pass_manager.h"
#include "props/numeric_model_builder.h"

#include <optional>
#include <string>
#include <vector>

namespace graphvet::props {

struct PipelineBenchOptions {
  NumericModelOptions model;
  /// The pipeline: a level (-O<optLevel>, the default -O3) or an explicit
  /// pass list.
  unsigned optLevel = 3;
  std::optional<std::vector<std::string>> passes;
  /// Runs of everything (each on a freshly built model); times reported are
  /// medians, memory and compare results are the first run's.
  unsigned repeat = 1;
  /// Also run each pass's naive variant (PipelineOptions::naiveVariants) on
  /// the same input and compare the printed results.
  bool compare = false;
  /// Seconds one naive run may take before it is stopped (reported as over
  /// the budget, not compared).
  double naiveBudgetSeconds = 120;
};

/// The passes that have a naive variant selected by naiveVariants.
bool hasNaiveVariant(std::string_view pass);

struct PassBenchRow {
  std::string pass;
  double ms = 0;           ///< wall time, median over the repeats
  double msMin = 0;        ///< fastest repeat
  double cpuMs = 0;        ///< CPU time, median
  double peakDeltaMb = -1; ///< RSS high-water mark during the pass over the RSS before it
  size_t nodesBefore = 0;  ///< live nodes over every graph
  size_t nodesAfter = 0;
  bool naiveRun = false;          ///< compare: the pass has a naive variant and it was run
  bool naiveFinished = false;     ///< false: stopped at the budget
  double naiveMs = 0;             ///< wall time of the naive variant (at least, when stopped)
  std::optional<bool> sameResult; ///< printed modules equal (finished naive runs)
};

struct PipelineBenchResult {
  bool ok = true;           ///< false: a pass failed (error diagnostics)
  std::string error;        ///< the first error
  std::string pipelineName; ///< "O3" or the list
  NumericModelInfo model;
  double buildMs = 0; ///< building the model (median)
  std::vector<PassBenchRow> passes;
  double passesTotalMs = 0; ///< sum of the passes' medians (one round)
  /// The whole pipeline as `graphvet opt` runs it (runPipeline: a level's
  /// rounds until one changes nothing, the printed-module comparison between
  /// rounds included), without the verifier after each pass; median.
  double pipelineMs = 0;
  double pipelineCpuMs = 0;
  unsigned rounds = 0;
  size_t nodesBefore = 0, nodesAfter = 0;
  /// The process's peak RSS over the whole run (building included); the
  /// peak counter is reset before each measured span, so this is the largest
  /// of the spans' peaks and the build's.
  double peakRssMb = 0;
  /// RSS before the whole pipeline (the model built), and the high-water
  /// mark during it over that.
  double rssBeforePipelineMb = 0;
  double pipelinePeakDeltaMb = -1;
  double loadAverage = -1; ///< /proc/loadavg, 1 minute, at the start
  /// compare: every finished naive run produced the same printed module.
  bool allSame = true;
};

PipelineBenchResult benchPipeline(const PipelineBenchOptions &opts);

} // namespace graphvet::props
