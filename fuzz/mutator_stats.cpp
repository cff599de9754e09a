// graph_mutator_stats: measures the custom mutator on seed graphs. For each
// mutation kind it applies one mutation per (file, seed) and classifies the
// result (valid race-free original, verifier error, not sound, ...); then it
// runs the full custom mutator and crossover as libFuzzer would and reports
// how many candidates they had to discard. Files that are not valid originals
// are skipped. Usage:
//   graph_mutator_stats [--seeds N] [--no-oracle] FILE_OR_DIR...
#include "fuzz/graph_mutator.h"
#include "ir/parser.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

using namespace graphvet;
using namespace graphvet::fuzz;

constexpr size_t kMaxSize = 16384;
constexpr size_t kNumValidity = 5;

std::vector<std::filesystem::path> collect(const std::vector<std::string> &args) {
  std::vector<std::filesystem::path> files;
  for (const std::string &arg : args) {
    if (std::filesystem::is_directory(arg)) {
      std::vector<std::filesystem::path> found;
      for (const auto &e : std::filesystem::recursive_directory_iterator(arg))
        if (e.is_regular_file()) // libFuzzer corpora name files by hash
          found.push_back(e.path());
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(arg);
    }
  }
  return files;
}

std::string slurp(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void printRow(const char *name, uint64_t notApplicable, const std::array<uint64_t, 5> &counts) {
  uint64_t total = 0;
  for (uint64_t c : counts)
    total += c;
  double rate = total ? 100.0 * static_cast<double>(counts[0]) / static_cast<double>(total) : 0;
  std::printf("%-22s %8llu %8llu %7.1f%%", name, static_cast<unsigned long long>(notApplicable),
              static_cast<unsigned long long>(total), rate);
  for (size_t v = 1; v < kNumValidity; ++v)
    std::printf(" %10llu", static_cast<unsigned long long>(counts[v]));
  std::printf("\n");
}

} // namespace

int main(int argc, char **argv) {
  uint32_t seeds = 20;
  MutatorOptions opts;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--seeds" && i + 1 < argc)
      seeds = static_cast<uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    else if (a == "--no-oracle")
      opts.requireRaceFree = false;
    else if (a.starts_with("-")) {
      std::fprintf(stderr, "usage: graph_mutator_stats [--seeds N] [--no-oracle] PATH...\n");
      return 2;
    } else
      paths.push_back(a);
  }
  std::vector<std::string> texts;
  std::vector<Module> modules;
  for (const auto &f : collect(paths)) {
    std::string t = slurp(f);
    ParseResult r = parseModule(t);
    if (r.module && classifyModule(*r.module, kMaxSize, opts) == Validity::Valid) {
      texts.push_back(t);
      modules.push_back(std::move(*r.module));
    }
  }
  if (modules.empty()) {
    texts.emplace_back(fallbackSeedGraph());
    modules.push_back(std::move(*parseModule(texts.back()).module));
  }
  std::printf("%zu valid seed graphs, %u seeds each\n\n", modules.size(), seeds);
  std::printf("%-22s %8s %8s %8s", "mutation", "n/a", "applied", "valid");
  for (size_t v = 1; v < kNumValidity; ++v)
    std::printf(" %10s", std::string(validityName(static_cast<Validity>(v))).c_str());
  std::printf("\n");

  std::array<uint64_t, 5> all{};
  for (size_t k = 0; k < kNumMutationKinds; ++k) {
    auto kind = static_cast<MutationKind>(k);
    std::array<uint64_t, 5> counts{};
    uint64_t notApplicable = 0;
    for (const Module &m : modules)
      for (uint32_t s = 0; s < seeds; ++s) {
        Module copy = m;
        MutationRng rng(s * 7919 + k);
        if (!applyMutation(copy, kind, rng, opts.limits)) {
          ++notApplicable;
          continue;
        }
        ++counts[static_cast<size_t>(classifyModule(copy, kMaxSize, opts))];
      }
    for (size_t v = 0; v < kNumValidity; ++v)
      all[v] += counts[v];
    printRow(std::string(mutationName(kind)).c_str(), notApplicable, counts);
  }
  printRow("(single mutations)", 0, all);

  // The custom mutator and crossover end to end: candidates tried per call.
  auto start = std::chrono::steady_clock::now();
  uint64_t calls = 0, produced = 0, candidates = 0;
  std::array<uint64_t, 5> discarded{};
  for (size_t i = 0; i < texts.size(); ++i)
    for (uint32_t s = 0; s < seeds; ++s) {
      MutationOutcome out = mutateGraphText(texts[i], s, kMaxSize, opts);
      ++calls;
      produced += out.text.has_value();
      candidates += out.attempts;
      for (size_t v = 0; v < kNumValidity; ++v)
        discarded[v] += out.discarded[v];
    }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("\ncustom mutator: %llu calls, %llu produced a valid graph (%.1f%%), %.2f "
              "candidates per call, %.0f calls/s\n",
              static_cast<unsigned long long>(calls), static_cast<unsigned long long>(produced),
              calls ? 100.0 * static_cast<double>(produced) / static_cast<double>(calls) : 0.0,
              calls ? static_cast<double>(candidates) / static_cast<double>(calls) : 0.0,
              secs > 0 ? static_cast<double>(calls) / secs : 0.0);
  std::printf("  discarded:");
  for (size_t v = 1; v < kNumValidity; ++v)
    std::printf(" %s=%llu", std::string(validityName(static_cast<Validity>(v))).c_str(),
                static_cast<unsigned long long>(discarded[v]));
  std::printf("\n");

  uint64_t xCalls = 0, xProduced = 0;
  for (size_t i = 0; i < texts.size(); ++i)
    for (uint32_t s = 0; s < std::min<uint32_t>(seeds, 5); ++s) {
      const std::string &other = texts[(i + 1 + s) % texts.size()];
      MutationOutcome out = crossOverGraphText(texts[i], other, s, kMaxSize, opts);
      ++xCalls;
      xProduced += out.text.has_value();
    }
  std::printf("custom crossover: %llu calls, %llu produced a valid graph (%.1f%%)\n",
              static_cast<unsigned long long>(xCalls), static_cast<unsigned long long>(xProduced),
              xCalls ? 100.0 * static_cast<double>(xProduced) / static_cast<double>(xCalls) : 0.0);
  return 0;
}
