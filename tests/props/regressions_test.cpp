// Replays every shrunk finding kept in corpus/regressions/: each file's
// header carries the replay command (`graphvet check FILE [--passes LIST]
// --seed S [--no-z3]`); running that check now must find the pipeline's
// result sound, so a fixed bug stays fixed.
#include "ir/parser.h"
#include "oracle/check.h"
#include "props/evaluate.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace graphvet::props {
namespace {

std::vector<std::filesystem::path> regressionFiles() {
  std::vector<std::filesystem::path> files;
  std::filesystem::path dir = std::filesystem::path(GRAPHVET_SOURCE_DIR) / "corpus" / "regressions";
  if (std::filesystem::exists(dir))
    for (const auto &entry : std::filesystem::directory_iterator(dir))
      if (entry.path().extension() == ".graph")
        files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

/// The evaluation settings of a file's "# replay:" header line.
EvalOptions replaySettings(const std::string &text) {
  EvalOptions eo;
  std::smatch match;
  std::regex replay("# replay: graphvet check (\\S+)(.*)");
  if (!std::regex_search(text, match, replay))
    return eo;
  std::istringstream flags(match[2].str());
  for (std::string flag; flags >> flag;) {
    if (flag == "--seed")
      flags >> eo.check.seed;
    else if (flag == "--no-z3")
      eo.check.useZ3 = false;
    else if (flag == "--arithmetics")
      flags >> eo.check.arithmetics;
    else if (flag == "--passes") {
      std::string list;
      flags >> list;
      std::vector<std::string> names;
      std::stringstream ss(list);
      for (std::string name; std::getline(ss, name, ',');)
        names.push_back(name);
      eo.pipeline.passes = names;
    }
  }
  return eo;
}

TEST(Regressions, CorpusIsNotEmpty) {
  EXPECT_FALSE(regressionFiles().empty());
}

TEST(Regressions, EveryShrunkFindingIsNowSound) {
  for (const auto &path : regressionFiles()) {
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    ASSERT_NE(text.find("# replay: graphvet check"), std::string::npos) << path;
    ParseResult parsed = parseModule(text);
    ASSERT_TRUE(parsed.module) << path;
    EvalOptions eo = replaySettings(text);
    ASSERT_TRUE(oracle::checkOriginal(*parsed.module, eo.check).verdict == oracle::Verdict::Sound)
        << path << ": the regression's original is not a valid original";
    Evaluation e = evaluate(*parsed.module, eo);
    EXPECT_EQ(e.result.verdict, oracle::Verdict::Sound)
        << path.filename().string() << " still fails:\n"
        << oracle::formatResult(e.result);
  }
}

} // namespace
} // namespace graphvet::props
