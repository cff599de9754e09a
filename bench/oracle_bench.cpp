// Benchmarks of the oracle on generated graphs: checkRefinement with the Z3
// proof on a 50-node graph (goal: median under 20 ms), the reachability fast
// path and checkOriginal at fuzz-campaign sizes (goal: ~1,000 checks/s/core).
// The generator is a fixed-seed copy of a simple pattern: copies, views,
// in-place writers on private copies and two-input mixes, always race-free.
#include "ir/parser.h"
#include "oracle/check.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace {

using namespace graphvet;

struct Rng {
  uint64_t x;
  uint64_t next() {
    uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return next() % n; }
  double unit() { return (next() >> 11) * (1.0 / 9007199254740992.0); }
};

/// A race-free root graph with `nodes` nodes (NetOutput included).
std::string generate(uint64_t seed, size_t nodes) {
  Rng rng{seed};
  std::vector<std::string> names = {"x0", "x1", "v", "c"};
  std::string text = "graph root {\n  x0 = Data() {index = 0}\n  x1 = Data() {index = 1}\n"
                     "  v = Variable()\n  c = Const()\n";
  std::set<std::string> used;
  auto pick = [&](size_t from) {
    std::string n = names[from + rng.below(names.size() - from)];
    used.insert(n);
    return n;
  };
  size_t count = 4;
  for (size_t i = 1; count + 1 < nodes; ++i, ++count) {
    double k = rng.unit();
    std::vector<std::string> free;
    for (const std::string &n : names)
      if (n.rfind("tm", 0) == 0 && !used.count(n))
        free.push_back(n);
    std::string name;
    size_t from = names.size() > 4 ? 4 : 0;
    if (k < 0.3) {
      name = fmt::format("tm{}", i);
      text += fmt::format("  {} = TensorMove({})\n", name, pick(from));
    } else if (k < 0.45 && !free.empty()) {
      std::string target = free[rng.below(free.size())];
      names.erase(std::find(names.begin(), names.end(), target));
      used.insert(target);
      name = fmt::format("as{}", i);
      text += fmt::format("  {} = Assign({}, x1)\n", name, target);
    } else if (k < 0.55) {
      name = fmt::format("rs{}", i);
      text += fmt::format("  {} = Reshape({})\n", name, pick(from));
    } else {
      name = fmt::format("op{}", i);
      std::string a = pick(0), b = pick(0);
      text += fmt::format("  {} = Add({}, {})\n", name, a, b);
    }
    names.push_back(name);
  }
  std::string outs;
  for (size_t i = 4; i < names.size(); ++i)
    if (names[i].rfind("op", 0) == 0 || names[i].rfind("as", 0) == 0)
      outs += (outs.empty() ? "" : ", ") + names[i];
  return text + "  out = NetOutput(" + outs + ")\n}\n";
}

Module parsed(uint64_t seed, size_t nodes) {
  ParseResult r = parseModule(generate(seed, nodes));
  if (!r.module)
    throw std::runtime_error("generated graph does not parse");
  return std::move(*r.module);
}

void BM_CheckRefinementZ3(benchmark::State &state) {
  Module m = parsed(5, static_cast<size_t>(state.range(0)));
  oracle::CheckOptions o;
  if (oracle::checkOriginal(m, o).verdict != oracle::Verdict::Sound)
    state.SkipWithError("generated original is not valid");
  for (auto _ : state) {
    oracle::CheckResult r = oracle::checkRefinement(m, m, o);
    benchmark::DoNotOptimize(r.verdict);
  }
}
BENCHMARK(BM_CheckRefinementZ3)->Arg(10)->Arg(30)->Arg(50)->Unit(benchmark::kMillisecond);

void BM_CheckRefinementFast(benchmark::State &state) {
  Module m = parsed(7, static_cast<size_t>(state.range(0)));
  oracle::CheckOptions o;
  o.useZ3 = false;
  for (auto _ : state) {
    oracle::CheckResult r = oracle::checkRefinement(m, m, o);
    benchmark::DoNotOptimize(r.verdict);
  }
}
BENCHMARK(BM_CheckRefinementFast)->Arg(3)->Arg(10)->Arg(30)->Unit(benchmark::kMicrosecond);

/// What a fuzz campaign does per graph: checkOriginal, then checkRefinement.
void BM_FuzzPairFast(benchmark::State &state) {
  std::vector<Module> graphs;
  for (uint64_t s = 0; s < 16; ++s)
    graphs.push_back(parsed(100 + s, 3 + s % 28));
  oracle::CheckOptions o;
  o.useZ3 = false;
  size_t i = 0;
  for (auto _ : state) {
    const Module &m = graphs[i++ % graphs.size()];
    benchmark::DoNotOptimize(oracle::checkOriginal(m, o).verdict);
    benchmark::DoNotOptimize(oracle::checkRefinement(m, m, o).verdict);
  }
}
BENCHMARK(BM_FuzzPairFast)->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
