// The pipeline benchmark (see pipeline_bench.h). Each pass is called through
// its row of the pass table, exactly as runPipeline calls it (remarks
// collected, module options read), on the module the passes before it left.
// A naive variant runs in a forked child on the child's copy of that same
// module, so that a run over its budget can be stopped and its memory does
// not count in the fast variant's peak; the child sends back its time and
// the FNV-1a digest of its printed result, which is compared with the
// digest of the fast variant's printed result.
#include "props/pipeline_bench.h"

#include "ir/printer.h"
#include "props/evaluate.h"
#include "props/perf_harness.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>

namespace graphvet::props {
namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double cpuMs() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

double loadAverage() {
  std::ifstream in("/proc/loadavg");
  double load = -1;
  in >> load;
  return in ? load : -1;
}

struct PassTiming {
  double ms = 0, cpuMs = 0;
  double peakDeltaMb = -1;
  bool failed = false;
  std::string error;
};

/// Runs one pass on `m` as runPipeline does and measures it.
PassTiming timePass(const PassInfo &pass, Module &m, const PipelineOptions &opts) {
  std::vector<Remark> remarks;
  Diagnostics warnings;
  PassContext ctx{opts, remarks, warnings};
  PassTiming t;
  bool peakReset = resetPeakMemory();
  double rssBefore = sampleMemory().currentMb;
  double cpuStart = cpuMs();
  Clock::time_point start = Clock::now();
  pass.run(m, ctx);
  t.ms = msSince(start);
  t.cpuMs = cpuMs() - cpuStart;
  if (peakReset)
    t.peakDeltaMb = std::max(0.0, sampleMemory().peakMb - rssBefore);
  for (const Diagnostic &d : warnings)
    if (d.severity == Severity::Error) {
      t.failed = true;
      t.error = d.message;
      break;
    }
  return t;
}

/// What a naive child sends back through its pipe.
struct NaiveReport {
  double ms = 0;
  uint64_t digest = 0;
};

/// The naive variant of `pass` on the child's copy of `m`, stopped after
/// `budgetSeconds`; nullopt when stopped (or the child failed), with the
/// time waited in `waitedMs`.
std::optional<NaiveReport> runNaiveInChild(const PassInfo &pass, Module &m,
                                           const PipelineOptions &opts, double budgetSeconds,
                                           double &waitedMs) {
  return runInChild<NaiveReport>(
      [&] {
        PipelineOptions naive = opts;
        naive.naiveVariants = true;
        NaiveReport report;
        report.ms = timePass(pass, m, naive).ms;
        report.digest = textDigest(printModule(m));
        return report;
      },
      budgetSeconds, waitedMs);
}

} // namespace

bool hasNaiveVariant(std::string_view pass) {
  return pass == "cse" || pass == "dce" || pass == "fuse-ops";
}

PipelineBenchResult benchPipeline(const PipelineBenchOptions &opts) {
  PipelineBenchResult r;
  r.loadAverage = loadAverage();
  PipelineOptions pipeline;
  pipeline.optLevel = opts.optLevel;
  pipeline.passes = opts.passes;
  pipeline.verifyEach = false;
  if (opts.passes)
    r.pipelineName = fmt::format("{}", fmt::join(*opts.passes, ","));
  else
    r.pipelineName = fmt::format("O{}", opts.optLevel);
  Diagnostics errors;
  std::vector<const PassInfo *> passes = assemblePipeline(pipeline, errors);
  if (!errors.empty()) {
    r.ok = false;
    r.error = errors[0].message;
    return r;
  }
  const unsigned repeat = std::max(1u, opts.repeat);
  std::vector<std::vector<double>> passMs(passes.size()), passCpu(passes.size());
  std::vector<double> buildMs, wholeMs, wholeCpu;
  r.passes.resize(passes.size());
  for (unsigned rep = 0; rep < repeat; ++rep) {
    Clock::time_point start = Clock::now();
    std::optional<Module> passByPass =
        buildNumericModelGraph(opts.model, rep == 0 ? &r.model : nullptr);
    Module &m = *passByPass;
    buildMs.push_back(msSince(start));
    if (rep == 0)
      r.peakRssMb = sampleMemory().peakMb;
    // One round of the passes, each timed on what the ones before left.
    for (size_t i = 0; i < passes.size(); ++i) {
      PassBenchRow &row = r.passes[i];
      const size_t before = countNodes(m);
      const bool naive = rep == 0 && opts.compare && hasNaiveVariant(passes[i]->name);
      std::optional<NaiveReport> naiveReport;
      if (naive)
        naiveReport =
            runNaiveInChild(*passes[i], m, pipeline, opts.naiveBudgetSeconds, row.naiveMs);
      PassTiming t = timePass(*passes[i], m, pipeline);
      if (t.failed) {
        r.ok = false;
        r.error = t.error;
        return r;
      }
      passMs[i].push_back(t.ms);
      passCpu[i].push_back(t.cpuMs);
      if (rep > 0)
        continue;
      row.pass = std::string(passes[i]->name);
      row.peakDeltaMb = t.peakDeltaMb;
      row.nodesBefore = before;
      row.nodesAfter = countNodes(m);
      r.peakRssMb = std::max(r.peakRssMb, sampleMemory().peakMb);
      if (naive) {
        row.naiveRun = true;
        row.naiveFinished = naiveReport.has_value();
        if (naiveReport) {
          row.naiveMs = naiveReport->ms;
          row.sameResult = naiveReport->digest == textDigest(printModule(m));
          r.allSame = r.allSame && *row.sameResult;
        }
      }
    }
    // The whole pipeline on a fresh model, as `graphvet opt` runs it (the
    // pass-by-pass module freed first, so the peaks do not add up).
    passByPass.reset();
    Module whole = buildNumericModelGraph(opts.model);
    if (rep == 0)
      r.nodesBefore = countNodes(whole);
    bool peakReset = rep == 0 && resetPeakMemory();
    double rssBefore = sampleMemory().currentMb;
    double cpuStart = cpuMs();
    start = Clock::now();
    PipelineResult result = runPipeline(whole, pipeline);
    wholeMs.push_back(msSince(start));
    wholeCpu.push_back(cpuMs() - cpuStart);
    if (!result.ok) {
      r.ok = false;
      r.error = result.diagnostics.empty() ? "the pipeline failed" : result.diagnostics[0].message;
      return r;
    }
    if (rep == 0) {
      if (peakReset)
        r.pipelinePeakDeltaMb = std::max(0.0, sampleMemory().peakMb - rssBefore);
      r.rssBeforePipelineMb = rssBefore;
      r.rounds = result.iterations;
      r.nodesAfter = countNodes(whole);
      r.peakRssMb = std::max(r.peakRssMb, sampleMemory().peakMb);
    }
  }
  r.buildMs = median(buildMs);
  for (size_t i = 0; i < passes.size(); ++i) {
    r.passes[i].ms = median(passMs[i]);
    r.passes[i].msMin = *std::min_element(passMs[i].begin(), passMs[i].end());
    r.passes[i].cpuMs = median(passCpu[i]);
    r.passesTotalMs += r.passes[i].ms;
  }
  r.pipelineMs = median(wholeMs);
  r.pipelineCpuMs = median(wholeCpu);
  return r;
}

} // namespace graphvet::props
