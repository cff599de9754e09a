// The measurement harness (see perf_harness.h). The naive comparison runs in
// a forked child so that a run over its time budget can be stopped without
// teaching the pass about clocks, and so that its memory does not count in
// the fast variant's peak.
#include "props/perf_harness.h"

#include "oracle/check.h"
#include "passes/tensor_move_delete.h"
#include "props/evaluate.h"
#include "props/generate.h"

#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>

namespace graphvet::props {
namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// CPU time of the whole process in milliseconds.
double cpuMs() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

uint64_t fnv1a(uint64_t h, std::string_view s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  h ^= 0xFF; // field separator
  h *= 0x100000001B3ull;
  return h;
}

uint64_t digestRemarks(const std::vector<Remark> &remarks) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (const Remark &r : remarks) {
    h = fnv1a(h, r.node);
    h = fnv1a(h, r.graph);
    h = fnv1a(h, r.decision);
    h = fnv1a(h, r.rule);
    h = fnv1a(h, r.message);
  }
  return h;
}

/// Runs the pass on `m` (which it rewrites) and measures it.
PassRun runPass(Module &m, bool naive) {
  TensorMoveDeleteOptions options; // the model has no options block: no grants
  options.naiveReachability = naive;
  std::vector<Remark> remarks;
  PassRun run;
  bool peakReset = resetPeakMemory();
  run.rssBeforeMb = sampleMemory().currentMb;
  double cpuStart = cpuMs();
  Clock::time_point start = Clock::now();
  TensorMoveDeleteStats stats = runTensorMoveDelete(m, options, &remarks);
  run.passMs = msSince(start);
  run.passCpuMs = cpuMs() - cpuStart;
  if (peakReset)
    run.passPeakMb = sampleMemory().peakMb;
  run.finished = true;
  run.deleted = stats.deleted;
  run.kept = stats.kept;
  run.ctrlEdgesAdded = stats.ctrlEdgesAdded;
  run.decisionDigest = digestRemarks(remarks);
  return run;
}

/// The naive variant in a child process, stopped after `budgetSeconds`.
PassRun runNaiveInChild(Module &m, double budgetSeconds) {
  double waitedMs = 0;
  // The child runs on its copy of the module.
  std::optional<PassRun> run =
      runInChild<PassRun>([&] { return runPass(m, /*naive=*/true); }, budgetSeconds, waitedMs);
  if (run)
    return *run;
  PassRun stopped;
  stopped.passMs = waitedMs; // at least this long
  return stopped;
}

double parseKb(const std::string &line) {
  // "VmRSS:\t  123456 kB"
  size_t colon = line.find(':');
  if (colon == std::string::npos)
    return 0;
  return std::strtod(line.c_str() + colon + 1, nullptr) / 1024.0;
}

} // namespace

uint64_t textDigest(std::string_view text) {
  return fnv1a(0xCBF29CE484222325ull, text);
}

bool runInChild(const std::function<void(void *)> &work, void *out, size_t size,
                double budgetSeconds, double &waitedMs) {
  waitedMs = 0;
  int fds[2];
  if (pipe(fds) != 0)
    return false;
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  if (pid == 0) {
    close(fds[0]);
    std::vector<char> result(size);
    work(result.data());
    ssize_t written = write(fds[1], result.data(), size);
    _exit(written == static_cast<ssize_t>(size) ? 0 : 1);
  }
  close(fds[1]);
  Clock::time_point start = Clock::now();
  size_t got = 0;
  while (got < size) {
    double left = budgetSeconds * 1000 - msSince(start);
    if (left <= 0)
      break;
    pollfd p{fds[0], POLLIN, 0};
    int ready = poll(&p, 1, static_cast<int>(std::min(left, 1e9)) + 1);
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready <= 0)
      break;
    ssize_t n = read(fds[0], static_cast<char *>(out) + got, size - got);
    if (n <= 0)
      break;
    got += static_cast<size_t>(n);
  }
  close(fds[0]);
  waitedMs = msSince(start);
  if (got < size)
    kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  return got == size;
}

MemorySample sampleMemory() {
  MemorySample s;
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0)
      s.currentMb = parseKb(line);
    else if (line.rfind("VmHWM:", 0) == 0)
      s.peakMb = parseKb(line);
  }
  if (s.peakMb == 0) {
    rusage u{};
    if (getrusage(RUSAGE_SELF, &u) == 0)
      s.peakMb = static_cast<double>(u.ru_maxrss) / 1024.0; // KiB on Linux
  }
  return s;
}

bool resetPeakMemory() {
  std::ofstream out("/proc/self/clear_refs");
  if (!out)
    return false;
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

PassBenchResult benchPass(const PassBenchOptions &opts) {
  PassBenchResult r;
  Clock::time_point start = Clock::now();
  Module m = buildModelGraph(opts.model, &r.model);
  r.buildMs = msSince(start);
  r.tensorMoves = static_cast<int64_t>(r.model.tensorMoves.size());
  if (opts.compare)
    r.naive = runNaiveInChild(m, opts.naiveBudgetSeconds);
  bool naive = opts.naive && !opts.compare;
  std::vector<PassRun> runs;
  for (unsigned i = 0; i < std::max(opts.repeat, 1u); ++i) {
    if (i > 0) {
      m = Module{};   // free the rewritten one first: one model in memory at a time
      malloc_trim(0); // and hand the memory back, so every run starts like the first
      m = buildModelGraph(opts.model);
    }
    // Memory is reported for the first run only: later ones inherit a heap
    // the allocator has not fully returned, which is not what one compile sees.
    if (i == 0)
      r.peakRssMb = sampleMemory().peakMb; // building; before runPass resets it
    runs.push_back(runPass(m, naive));
    if (i == 0)
      r.peakRssMb = std::max({r.peakRssMb, sampleMemory().peakMb, runs.back().passPeakMb});
    r.passMsSamples.push_back(runs.back().passMs);
  }
  std::vector<const PassRun *> byTime;
  for (const PassRun &run : runs)
    byTime.push_back(&run);
  std::sort(byTime.begin(), byTime.end(),
            [](const PassRun *a, const PassRun *b) { return a->passMs < b->passMs; });
  r.run = *byTime[(byTime.size() - 1) / 2];
  r.run.rssBeforeMb = runs[0].rssBeforeMb;
  r.run.passPeakMb = runs[0].passPeakMb;
  if (r.naive && r.naive->finished)
    r.sameDecisions = r.naive->decisionDigest == r.run.decisionDigest &&
                      r.naive->deleted == r.run.deleted &&
                      r.naive->ctrlEdgesAdded == r.run.ctrlEdgesAdded;
  return r;
}

OracleBenchResult benchOracle(const OracleBenchOptions &opts) {
  OracleBenchResult r;
  double nodes = 0;
  double cpuStart = cpuMs();
  for (uint64_t i = 0; i < opts.cases; ++i) {
    uint64_t seed = caseSeed(opts.seed, i);
    Clock::time_point t0 = Clock::now();
    Module original = generateModule(seed, opts.gen);
    Clock::time_point t1 = Clock::now();
    // evaluate() step by step, to see where the time goes.
    Module optimized = original;
    PipelineResult pipeline = runPipeline(optimized, opts.pipeline);
    Clock::time_point t2 = Clock::now();
    oracle::CheckOptions check = opts.check;
    check.seed = seed; // as the campaign does
    oracle::CheckResult result = oracle::checkRefinement(original, optimized, check);
    Clock::time_point t3 = Clock::now();
    r.generateSeconds += std::chrono::duration<double>(t1 - t0).count();
    r.passSeconds += std::chrono::duration<double>(t2 - t1).count();
    r.checkSeconds += std::chrono::duration<double>(t3 - t2).count();
    nodes += static_cast<double>(countNodes(original));
    ++r.checks;
    switch (result.verdict) {
    case oracle::Verdict::Sound:
      ++r.sound;
      break;
    case oracle::Verdict::Violation:
      ++r.violations;
      break;
    case oracle::Verdict::Inconclusive:
      ++r.inconclusive;
      break;
    case oracle::Verdict::Invalid:
      ++r.invalid;
      break;
    }
  }
  r.seconds = r.generateSeconds + r.passSeconds + r.checkSeconds;
  r.checksPerSecond = r.seconds > 0 ? static_cast<double>(r.checks) / r.seconds : 0;
  r.cpuSeconds = (cpuMs() - cpuStart) / 1e3;
  r.checksPerCpuSecond = r.cpuSeconds > 0 ? static_cast<double>(r.checks) / r.cpuSeconds : 0;
  r.meanNodes = r.checks ? nodes / static_cast<double>(r.checks) : 0;
  return r;
}

} // namespace graphvet::props
