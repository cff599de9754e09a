// The harness's throughput: checks per second on default-size generated
// graphs (props::generateModule, as the fuzz campaign draws them), end to end
// (generate + pipeline + refinement check) and for the check alone, with the
// campaign's reachability race analysis and with the Z3 proof.
#include "oracle/check.h"
#include "passes/pass_manager.h"
#include "props/generate.h"

#include <benchmark/benchmark.h>

#include <vector>

namespace {

using namespace graphvet;

oracle::CheckOptions checkOptions(bool z3, uint64_t seed) {
  oracle::CheckOptions c;
  c.useZ3 = z3;
  c.seed = seed;
  return c;
}

/// One campaign case per iteration: case i uses seed 1 + i.
void endToEnd(benchmark::State &state, bool z3) {
  uint64_t seed = 1;
  for (auto _ : state) {
    Module original = props::generateModule(seed);
    Module optimized = original;
    runPipeline(optimized, PipelineOptions{});
    oracle::CheckResult r = oracle::checkRefinement(original, optimized, checkOptions(z3, seed));
    benchmark::DoNotOptimize(r.verdict);
    ++seed;
  }
  state.SetItemsProcessed(state.iterations()); // items/s = checks per second
}

void BM_CheckEndToEnd(benchmark::State &state) {
  endToEnd(state, false);
}
void BM_CheckEndToEndZ3(benchmark::State &state) {
  endToEnd(state, true);
}

/// The refinement check alone, over 200 pre-built (original, optimized) pairs.
void BM_CheckRefinementOnly(benchmark::State &state) {
  struct Pair {
    Module original, optimized;
  };
  static std::vector<Pair> pairs = [] {
    std::vector<Pair> out;
    for (uint64_t seed = 1; seed <= 200; ++seed) {
      Module m = props::generateModule(seed);
      Module opt = m;
      runPipeline(opt, PipelineOptions{});
      out.push_back({std::move(m), std::move(opt)});
    }
    return out;
  }();
  size_t i = 0;
  for (auto _ : state) {
    const Pair &p = pairs[i % pairs.size()];
    oracle::CheckResult r =
        oracle::checkRefinement(p.original, p.optimized, checkOptions(false, i % pairs.size()));
    benchmark::DoNotOptimize(r.verdict);
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_GenerateOnly(benchmark::State &state) {
  uint64_t seed = 1;
  for (auto _ : state) {
    Module m = props::generateModule(seed++);
    benchmark::DoNotOptimize(&m);
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_CheckEndToEnd)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CheckEndToEndZ3)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CheckRefinementOnly)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GenerateOnly)->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
