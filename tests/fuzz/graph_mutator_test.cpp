// Unit tests of the structure-aware graph mutator behind the libFuzzer custom
// mutator: results are valid race-free originals, at a measured rate; the
// same input and seed give the same output; each mutation kind does what it
// says; crossover output parses; refusals leave the module untouched.
#include "fuzz/graph_mutator.h"
#include "ir/op_library.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "oracle/check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

namespace graphvet::fuzz {
namespace {

constexpr size_t kMaxSize = 16384;

std::vector<std::string> seedTexts() {
  std::vector<std::string> texts;
  std::vector<std::filesystem::path> files;
  for (const auto &e :
       std::filesystem::directory_iterator(std::string(GRAPHVET_SOURCE_DIR) + "/fuzz/seeds"))
    if (e.path().extension() == ".graph")
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto &f : files) {
    std::ifstream in(f);
    texts.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return texts;
}

Module parse(std::string_view text) {
  ParseResult r = parseModule(text);
  EXPECT_TRUE(r.module.has_value()) << text;
  return r.module ? std::move(*r.module) : Module();
}

/// Independent of classifyModule: parses, verifies and asks the oracle.
void expectValidOriginal(const std::string &text) {
  ParseResult r = parseModule(text);
  ASSERT_TRUE(r.module.has_value()) << text;
  EXPECT_FALSE(hasErrors(verifyModule(*r.module))) << text;
  EXPECT_EQ(printModule(*r.module), text) << "mutator output is not canonical";
  EXPECT_EQ(oracle::checkOriginal(*r.module, MutatorOptions::defaultCheckOptions()).verdict,
            oracle::Verdict::Sound)
      << text;
}

size_t countType(const Module &m, const std::string &type) {
  size_t n = 0;
  for (GraphId g : m.canonicalGraphOrder())
    n += m.graph(g).nodesOfType(type).size();
  return n;
}

TEST(GraphMutator, SeedGraphsAreValidOriginals) {
  std::vector<std::string> seeds = seedTexts();
  ASSERT_GE(seeds.size(), 10u);
  for (const std::string &s : seeds) {
    Module m = parse(s);
    EXPECT_EQ(classifyModule(m, kMaxSize, MutatorOptions()), Validity::Valid) << s;
  }
  EXPECT_EQ(classifyModule(parse(fallbackSeedGraph()), kMaxSize, MutatorOptions()),
            Validity::Valid);
}

TEST(GraphMutator, OutputsAreValidRaceFreeOriginals) {
  std::vector<std::string> seeds = seedTexts();
  size_t produced = 0, calls = 0;
  for (const std::string &s : seeds)
    for (uint64_t seed = 0; seed < 6; ++seed) {
      MutationOutcome out = mutateGraphText(s, seed, kMaxSize);
      ++calls;
      if (!out.text)
        continue;
      ++produced;
      EXPECT_FALSE(out.applied.empty());
      EXPECT_FALSE(out.usedFallback);
      EXPECT_NE(*out.text, printModule(parse(s))) << "a mutation should change the graph";
      expectValidOriginal(*out.text);
    }
  // The filter retries a bounded number of times; nearly every call must
  // still find a valid neighbour.
  EXPECT_GE(produced * 10, calls * 9) << produced << " of " << calls;
}

TEST(GraphMutator, SingleMutationValidityRate) {
  // The measured figure: the fraction of single mutations (all kinds, all
  // seeds) that yield a valid race-free original. Racy and invalid results
  // are discarded by the filter, so this is the mutator's efficiency.
  std::vector<std::string> seeds = seedTexts();
  size_t applied = 0, valid = 0;
  for (const std::string &s : seeds) {
    Module base = parse(s);
    for (uint64_t seed = 0; seed < 8; ++seed) {
      Module m = base;
      MutationRng rng(seed);
      if (!mutateOnce(m, rng))
        continue;
      ++applied;
      valid += classifyModule(m, kMaxSize, MutatorOptions()) == Validity::Valid;
    }
  }
  ASSERT_GT(applied, seeds.size() * 6);
  double rate = static_cast<double>(valid) / static_cast<double>(applied);
  RecordProperty("validity_rate_percent", static_cast<int>(rate * 100));
  std::printf("single-mutation validity: %zu of %zu (%.1f%%)\n", valid, applied, rate * 100);
  EXPECT_GE(rate, 0.5);
}

TEST(GraphMutator, DeterministicForASeed) {
  std::vector<std::string> seeds = seedTexts();
  std::set<std::string> distinct;
  for (uint64_t seed = 0; seed < 8; ++seed) {
    MutationOutcome a = mutateGraphText(seeds[0], seed, kMaxSize);
    MutationOutcome b = mutateGraphText(seeds[0], seed, kMaxSize);
    ASSERT_EQ(a.text, b.text) << "seed " << seed;
    EXPECT_EQ(a.applied, b.applied);
    EXPECT_EQ(a.attempts, b.attempts);
    if (a.text)
      distinct.insert(*a.text);
    MutationOutcome x = crossOverGraphText(seeds[0], seeds[1], seed, kMaxSize);
    MutationOutcome y = crossOverGraphText(seeds[0], seeds[1], seed, kMaxSize);
    EXPECT_EQ(x.text, y.text) << "crossover, seed " << seed;
  }
  EXPECT_GE(distinct.size(), 4u) << "different seeds should explore different graphs";
}

TEST(GraphMutator, CrossOverOutputParsesAndSplicesTheDonor) {
  std::vector<std::string> seeds = seedTexts();
  size_t produced = 0, spliced = 0, calls = 0;
  for (size_t i = 0; i < seeds.size(); ++i)
    for (uint64_t seed = 0; seed < 3; ++seed) {
      const std::string &donor = seeds[(i + 1 + seed) % seeds.size()];
      MutationOutcome out = crossOverGraphText(seeds[i], donor, seed, kMaxSize);
      ++calls;
      if (!out.text)
        continue;
      ++produced;
      expectValidOriginal(*out.text);
      // Spliced nodes are named after their donor node with an "_x" suffix.
      spliced += out.text->find("_x") != std::string::npos;
    }
  EXPECT_GE(produced * 2, calls) << produced << " of " << calls;
  EXPECT_GE(spliced * 2, produced);
}

TEST(GraphMutator, EveryMutationKindAppliesAndCanYieldAValidGraph) {
  std::vector<std::string> seeds = seedTexts();
  for (size_t k = 0; k < kNumMutationKinds; ++k) {
    auto kind = static_cast<MutationKind>(k);
    size_t applied = 0, valid = 0;
    for (const std::string &s : seeds) {
      Module base = parse(s);
      for (uint64_t seed = 0; seed < 4; ++seed) {
        Module m = base;
        MutationRng rng(seed * 31 + k);
        if (!applyMutation(m, kind, rng))
          continue;
        ++applied;
        valid += classifyModule(m, kMaxSize, MutatorOptions()) == Validity::Valid;
      }
    }
    EXPECT_GT(applied, 0u) << mutationName(kind);
    EXPECT_GT(valid, 0u) << mutationName(kind);
  }
}

TEST(GraphMutator, RefusedMutationLeavesTheModuleUnchanged) {
  // A graph without TensorMoves or control edges: removing either is refused.
  Module m = parse("graph root {\n  x = Data() {index = 0}\n  out = NetOutput(x)\n}\n");
  std::string before = printModule(m);
  for (uint64_t seed = 0; seed < 8; ++seed) {
    MutationRng rng(seed);
    EXPECT_FALSE(applyMutation(m, MutationKind::RemoveTensorMove, rng));
    EXPECT_FALSE(applyMutation(m, MutationKind::RemoveControlEdge, rng));
    EXPECT_EQ(printModule(m), before);
  }
}

TEST(GraphMutator, InsertAndRemoveTensorMoveChangeTheCount) {
  Module base = parse(seedTexts()[0]);
  size_t before = countType(base, "TensorMove");
  for (uint64_t seed = 0; seed < 8; ++seed) {
    Module m = base;
    MutationRng rng(seed);
    ASSERT_TRUE(applyMutation(m, MutationKind::InsertTensorMove, rng));
    EXPECT_EQ(countType(m, "TensorMove"), before + 1);
    EXPECT_FALSE(hasErrors(verifyModule(m)));
  }
  Module m = parse(fallbackSeedGraph());
  MutationRng rng(3);
  ASSERT_TRUE(applyMutation(m, MutationKind::RemoveTensorMove, rng));
  EXPECT_EQ(countType(m, "TensorMove"), 0u);
  EXPECT_FALSE(hasErrors(verifyModule(m)));
}

TEST(GraphMutator, WrapInSubgraphAddsACallAndKeepsTheGraphValid) {
  Module base = parse(fallbackSeedGraph());
  size_t wrapped = 0;
  for (uint64_t seed = 0; seed < 16; ++seed) {
    Module m = base;
    MutationRng rng(seed);
    if (!applyMutation(m, MutationKind::WrapInSubgraph, rng))
      continue;
    ++wrapped;
    EXPECT_EQ(m.canonicalGraphOrder().size(), 2u);
    EXPECT_EQ(countType(m, "PartitionedCall"), 1u);
    EXPECT_EQ(classifyModule(m, kMaxSize, MutatorOptions()), Validity::Valid) << printModule(m);
  }
  EXPECT_GE(wrapped, 8u);
}

TEST(GraphMutator, ChangeOptionWritesAReuseOption) {
  Module base = parse(fallbackSeedGraph());
  size_t changed = 0;
  for (uint64_t seed = 0; seed < 16; ++seed) {
    Module m = base;
    MutationRng rng(seed);
    if (!applyMutation(m, MutationKind::ChangeOption, rng))
      continue;
    ++changed;
    EXPECT_TRUE(m.options.count("ge.exec.outputReuseInputMemIndexes") ||
                m.options.count("ge.exec.inputReuseMemIndexes"));
  }
  EXPECT_GE(changed, 8u);
}

TEST(GraphMutator, NonGraphInputFallsBackToTheSeedGraph) {
  for (std::string_view junk : {std::string_view(""), std::string_view("\xff\x00garbage", 9),
                                std::string_view("graph root {")}) {
    MutationOutcome out = mutateGraphText(junk, 7, kMaxSize);
    EXPECT_TRUE(out.usedFallback);
    ASSERT_TRUE(out.text.has_value());
    expectValidOriginal(*out.text);
  }
}

TEST(GraphMutator, RespectsTheSizeLimit) {
  std::string seed = seedTexts()[0];
  MutationOutcome out = mutateGraphText(seed, 1, seed.size() / 2);
  EXPECT_FALSE(out.text.has_value());
  EXPECT_GT(out.discarded[static_cast<size_t>(Validity::TooLarge)], 0u);
  for (uint64_t s = 0; s < 8; ++s) {
    MutationOutcome ok = mutateGraphText(seed, s, seed.size() + 200);
    if (ok.text) {
      EXPECT_LE(ok.text->size(), seed.size() + 200);
    }
  }
}

TEST(GraphMutator, RacyCandidatesAreRejected) {
  // Two unordered writers of one buffer: the oracle must refuse it, and the
  // filter with it.
  Module racy = parse("graph root {\n"
                      "  x = Data() {index = 0}\n"
                      "  r = ReLU(x)\n"
                      "  a = Assign(r, x)\n"
                      "  b = AssignAdd(r, x)\n"
                      "  out = NetOutput(a, b)\n"
                      "}\n");
  EXPECT_EQ(classifyModule(racy, kMaxSize, MutatorOptions()), Validity::NotSound);
  MutatorOptions structural;
  structural.requireRaceFree = false;
  EXPECT_EQ(classifyModule(racy, kMaxSize, structural), Validity::Valid);
}

} // namespace
} // namespace graphvet::fuzz
