// TensorMoveDeletePass on model-like graphs (props/model_builder.h): the fast
// variant at 10k and 100k nodes (1M with --with-1m), and the naive variant
// (whole-graph reachability per TensorMove and per candidate edge) at 10k for
// the ratio. Building and copying the graph are excluded from the timing.
#include "passes/tensor_move_delete.h"
#include "props/model_builder.h"

#include <benchmark/benchmark.h>

#include <cstring>
#include <map>
#include <memory>

namespace {

using namespace graphvet;

/// One model per size, built once and copied per iteration.
const Module &model(size_t nodes) {
  static std::map<size_t, std::unique_ptr<Module>> cache;
  auto &slot = cache[nodes];
  if (!slot) {
    props::ModelOptions o;
    o.nodes = nodes;
    o.seed = 1;
    slot = std::make_unique<Module>(props::buildModelGraph(o));
  }
  return *slot;
}

void runPass(benchmark::State &state, bool naive) {
  const Module &base = model(static_cast<size_t>(state.range(0)));
  TensorMoveDeleteOptions options;
  options.naiveReachability = naive;
  TensorMoveDeleteStats stats;
  for (auto _ : state) {
    state.PauseTiming();
    auto m = std::make_unique<Module>(base);
    std::vector<Remark> remarks;
    state.ResumeTiming();
    stats = runTensorMoveDelete(*m, options, &remarks);
    benchmark::DoNotOptimize(remarks.data());
    state.PauseTiming();
    m.reset(); // freeing the copy is not the pass's cost
    remarks.clear();
    state.ResumeTiming();
  }
  state.counters["nodes"] = static_cast<double>(state.range(0));
  state.counters["tensor_moves"] = static_cast<double>(stats.tensorMoves);
  state.counters["deleted"] = static_cast<double>(stats.deleted);
  state.counters["nodes_per_s"] = benchmark::Counter(static_cast<double>(state.range(0)),
                                                     benchmark::Counter::kIsIterationInvariantRate);
}

void BM_TensorMoveDelete(benchmark::State &state) {
  runPass(state, false);
}
void BM_TensorMoveDeleteNaive(benchmark::State &state) {
  runPass(state, true);
}

void BM_BuildModel(benchmark::State &state) {
  props::ModelOptions o;
  o.nodes = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    Module m = props::buildModelGraph(o);
    benchmark::DoNotOptimize(&m);
  }
  state.counters["nodes_per_s"] = benchmark::Counter(static_cast<double>(state.range(0)),
                                                     benchmark::Counter::kIsIterationInvariantRate);
}

} // namespace

int main(int argc, char **argv) {
  // --with-1m adds the million-node size (a few seconds per iteration).
  bool large = false;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--with-1m") == 0)
      large = true;
    else
      argv[kept++] = argv[i];
  }
  argc = kept;
  auto *fast = benchmark::RegisterBenchmark("BM_TensorMoveDelete", BM_TensorMoveDelete)
                   ->Arg(10000)
                   ->Arg(100000)
                   ->Unit(benchmark::kMillisecond);
  if (large)
    fast->Arg(1000000)->Iterations(3);
  benchmark::RegisterBenchmark("BM_TensorMoveDeleteNaive", BM_TensorMoveDeleteNaive)
      ->Arg(10000)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_BuildModel", BM_BuildModel)
      ->Arg(100000)
      ->Unit(benchmark::kMillisecond);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
