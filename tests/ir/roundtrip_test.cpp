// Round trip over every `.graph` file under corpus/ (recursively): each parses,
// prints, re-parses to a structurally equal module, and printing is a fixpoint
// after one round.
#include "ir/parser.h"
#include "ir/printer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

namespace graphvet {
namespace {

namespace fs = std::filesystem;

fs::path corpusDir() {
  return fs::path(GRAPHVET_SOURCE_DIR) / "corpus";
}

std::vector<std::string> corpusFiles() {
  std::vector<std::string> files;
  std::error_code ec;
  if (!fs::is_directory(corpusDir(), ec))
    return files;
  for (auto it = fs::recursive_directory_iterator(corpusDir(), ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file() && it->path().extension() == ".graph")
      files.push_back(fs::relative(it->path(), corpusDir()).generic_string());
  std::sort(files.begin(), files.end());
  return files;
}

std::string readFile(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class CorpusRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusRoundTrip, ParsesPrintsAndReparsesToAFixpoint) {
  const std::string &rel = GetParam();
  std::string text = readFile(corpusDir() / rel);
  std::string errors;
  auto m1 = parseOrReport(text, rel, errors);
  ASSERT_TRUE(m1) << errors;
  std::string p1 = printModule(*m1);
  auto m2 = parseOrReport(p1, rel + " (printed)", errors);
  ASSERT_TRUE(m2) << errors << "\n" << p1;
  auto diff = structuralDifference(*m1, *m2);
  EXPECT_FALSE(diff) << *diff << "\n" << p1;
  std::string p2 = printModule(*m2);
  EXPECT_EQ(p1, p2) << "printing is not a fixpoint";
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusRoundTrip, ::testing::ValuesIn(corpusFiles()),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                           std::string name;
                           for (char c : info.param)
                             name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CorpusRoundTrip);

/// Applies one seeded mutation to `text` (std::mt19937 is specified by the
/// standard, and only its raw output is used, so mutants are the same
/// everywhere).
std::string mutate(std::string text, std::mt19937 &rng) {
  static const char *kTokens[] = {
      "{",           "}",
      "(",           ")",
      "[",           "]",
      ",",           ":1",
      ":",           "=",
      "\"",          "\\",
      "#",           "-",
      "->",          "_",
      " ",           "\n",
      "graph",       "ctrl",
      "options",     "true",
      "x",           "TensorMove(",
      "outputs = 3", "subgraphs = [body]",
      "index = 0",   "99999999999999999999",
      "\"q\\n\"",    "ctrl x -> x\n",
      "NetOutput(",  "While(",
  };
  auto pick = [&](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n); };
  size_t pos = pick(text.size() + 1);
  switch (rng() % 4) {
  case 0: // insert a token
    text.insert(pos, kTokens[pick(std::size(kTokens))]);
    break;
  case 1: // delete a short range
    text.erase(pos, pick(8) + 1);
    break;
  case 2: // replace one byte by any byte
    if (pos < text.size())
      text[pos] = static_cast<char>(rng() % 256);
    break;
  default: { // duplicate a line elsewhere
    size_t start = text.rfind('\n', pos == 0 ? 0 : pos - 1);
    start = start == std::string::npos ? 0 : start + 1;
    size_t end = text.find('\n', start);
    std::string line = text.substr(start, end == std::string::npos ? end : end - start + 1);
    text.insert(pick(text.size() + 1), line);
  }
  }
  return text;
}

TEST(CorpusMutants, NeverCrashAndRoundTripWheneverTheyParse) {
  std::vector<std::string> files = corpusFiles();
  ASSERT_FALSE(files.empty());
  size_t parsed = 0, rejected = 0;
  for (const std::string &rel : files) {
    uint32_t seed = 2166136261u; // FNV-1a of the file name: std::hash is not portable
    for (char c : rel)
      seed = (seed ^ static_cast<unsigned char>(c)) * 16777619u;
    std::mt19937 rng(seed);
    std::string original = readFile(corpusDir() / rel);
    for (int i = 0; i < 150; ++i) {
      std::string text = original;
      for (uint32_t k = 0, n = rng() % 3 + 1; k < n; ++k)
        text = mutate(std::move(text), rng);
      ParseResult r = parseModule(text);
      if (!r.module) {
        ++rejected;
        ASSERT_FALSE(r.diagnostics.empty()) << text;
        for (const Diagnostic &d : r.diagnostics)
          ASSERT_GE(d.loc.line, 1u) << d.message << "\n" << text;
        continue;
      }
      ++parsed;
      std::string p1 = printModule(*r.module);
      ParseResult again = parseModule(p1);
      ASSERT_TRUE(again.module) << "printed text does not parse:\n"
                                << p1 << "\nfrom:\n"
                                << text << "\n"
                                << again.diagnostics[0].message;
      auto diff = structuralDifference(*r.module, *again.module);
      ASSERT_FALSE(diff) << *diff << "\n" << text;
      ASSERT_EQ(printModule(*again.module), p1) << text;
    }
  }
  // Both outcomes must actually be exercised.
  EXPECT_GT(parsed, files.size() * 10);
  EXPECT_GT(rejected, files.size() * 10);
}

TEST(Corpus, IsSeededAndEverySeedStartsWithAComment) {
  std::vector<std::string> files = corpusFiles();
  size_t seeds = 0;
  for (const std::string &rel : files) {
    if (rel.find('/') != std::string::npos)
      continue; // corpus/regressions/ and other folders have their own conventions
    ++seeds;
    std::string text = readFile(corpusDir() / rel);
    EXPECT_TRUE(!text.empty() && text[0] == '#') << rel << " does not start with a comment";
  }
  EXPECT_GE(seeds, 20u);
}

} // namespace
} // namespace graphvet
