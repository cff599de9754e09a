// A measurement program (not a test: it asserts nothing and is not run by
// ctest): median wall and CPU time of checkRefinement on generated race-free
// graphs of 10, 30 and 50 nodes, with the Z3 proof and with the reachability
// fast path, plus a checkOriginal + checkRefinement pair as a fuzz campaign
// runs it. Usage: graphvet_oracle_timing [REPEATS]
#include "ir/parser.h"
#include "oracle/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
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
  double unit() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
};

/// A race-free root graph with `nodes` nodes (NetOutput included): copies,
/// views, Assigns on copies nobody else reads, and two-input mixes.
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
      text += fmt::format("  {} = AddD({}, {})\n", name, a, b);
    }
    names.push_back(name);
  }
  std::string outs;
  for (size_t i = 4; i < names.size(); ++i)
    if (names[i].rfind("op", 0) == 0 || names[i].rfind("as", 0) == 0)
      outs += (outs.empty() ? "" : ", ") + names[i];
  return text + "  out = NetOutput(" + outs + ")\n}\n";
}

double cpuMs() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

template <typename F> void measure(const std::string &what, unsigned repeats, F &&f) {
  std::vector<double> wall, cpu;
  for (unsigned i = 0; i < repeats; ++i) {
    auto w0 = std::chrono::steady_clock::now();
    double c0 = cpuMs();
    f(i);
    cpu.push_back(cpuMs() - c0);
    wall.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - w0).count());
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  fmt::print("{:<44} median {:8.3f} ms wall {:8.3f} ms cpu   (min {:.3f}, max {:.3f} ms wall)\n",
             what, wall[wall.size() / 2], cpu[cpu.size() / 2], wall.front(), wall.back());
}

} // namespace

int main(int argc, char **argv) {
  unsigned repeats = argc > 1 ? static_cast<unsigned>(std::stoul(argv[1])) : 51;
  // Warm the per-thread Z3 context once, as a long-running campaign would.
  {
    Module m = *parseModule(generate(1, 10)).module;
    oracle::checkRefinement(m, m, {});
  }
  for (size_t nodes : {10, 30, 50}) {
    std::vector<Module> graphs;
    for (uint64_t s = 0; s < 8; ++s) {
      Module m = *parseModule(generate(1000 * nodes + s, nodes)).module;
      if (oracle::checkOriginal(m, {}).verdict == oracle::Verdict::Sound)
        graphs.push_back(std::move(m));
    }
    oracle::CheckOptions z3, fast;
    fast.useZ3 = false;
    measure(fmt::format("checkRefinement, Z3, {} nodes", nodes), repeats, [&](unsigned i) {
      oracle::checkRefinement(graphs[i % graphs.size()], graphs[i % graphs.size()], z3);
    });
    measure(fmt::format("checkRefinement, reachability, {} nodes", nodes), repeats,
            [&](unsigned i) {
              oracle::checkRefinement(graphs[i % graphs.size()], graphs[i % graphs.size()], fast);
            });
    measure(fmt::format("checkOriginal + checkRefinement, fast, {}", nodes), repeats,
            [&](unsigned i) {
              const Module &m = graphs[i % graphs.size()];
              oracle::checkOriginal(m, fast);
              oracle::checkRefinement(m, m, fast);
            });
  }
  return 0;
}
