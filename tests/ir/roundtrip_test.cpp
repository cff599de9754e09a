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

namespace graphvet {
namespace {

namespace fs = std::filesystem;

fs::path corpusDir() { return fs::path(GRAPHVET_SOURCE_DIR) / "corpus"; }

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
