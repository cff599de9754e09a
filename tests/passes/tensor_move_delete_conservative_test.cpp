// Conservative mode (TensorMoveDeleteOptions::conservative, --tm-conservative)
// must decide exactly like the reference design with its soundness fixes:
// every input of corpus/ and fuzz/regressions/ is optimized in that mode and
// its remarks and control edges are compared with a golden file captured
// from the pass before the extensions existed. Also checks that the three
// ways of selecting the mode agree and that the default mode differs.
//
// Regenerate the golden only for a deliberate change of the reference
// behaviour (a soundness fix), from a build of graphvet:
//   for each file F (sorted): "== F", then the remark lines of
//   `graphvet opt --passes tensor-move-delete --tm-conservative --remarks F`
//   without the "F:" prefix, then the `ctrl` lines of the printed module
//   ("error" when the file does not parse).
#include "test_util.h"

#include "passes/tensor_move_delete.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace graphvet {
namespace {

namespace fs = std::filesystem;

const std::string kSourceDir = GRAPHVET_SOURCE_DIR;

std::string readFile(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// The inputs, as paths relative to the source dir, sorted.
std::vector<std::string> inputs() {
  std::vector<std::string> out;
  for (const char *dir : {"corpus", "fuzz/regressions"})
    for (const auto &e : fs::recursive_directory_iterator(fs::path(kSourceDir) / dir))
      if (e.is_regular_file() && e.path().extension() == ".graph")
        out.push_back(fs::relative(e.path(), kSourceDir).generic_string());
  std::sort(out.begin(), out.end());
  return out;
}

/// Remarks and control edges of one file, in the golden's format.
std::string decisions(const std::string &file, PipelineOptions opts) {
  std::string text = "== " + file + "\n";
  ParseResult parsed = parseModule(readFile(fs::path(kSourceDir) / file));
  if (!parsed.module)
    return text + "error\n";
  opts.passes = std::vector<std::string>{std::string(kTensorMoveDeleteName)};
  PipelineResult r = runPipeline(*parsed.module, opts);
  if (!r.ok)
    return text + "error\n";
  for (const Remark &rm : r.remarks) {
    if (rm.loc.line != 0)
      text += std::to_string(rm.loc.line) + ":" + std::to_string(rm.loc.col);
    text += ": remark: " + rm.message + " [" + rm.pass + ":" + rm.rule + "]\n";
  }
  std::istringstream printed(printModule(*parsed.module));
  for (std::string line; std::getline(printed, line);) {
    size_t start = line.find_first_not_of(' ');
    if (start != std::string::npos && line.compare(start, 5, "ctrl ") == 0)
      text += line.substr(start) + "\n";
  }
  return text;
}

/// The golden file split by input ("== FILE" sections, comments dropped).
std::map<std::string, std::string> golden() {
  std::map<std::string, std::string> sections;
  std::istringstream in(readFile(fs::path(kSourceDir) / "tests/passes/golden" /
                                 "tensor-move-delete-conservative.txt"));
  std::string current;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#", 0) == 0)
      continue;
    if (line.rfind("== ", 0) == 0)
      current = line.substr(3);
    sections[current] += line + "\n";
  }
  return sections;
}

TEST(TensorMoveDeleteConservative, DecidesLikeTheReferenceDesignOnEveryCorpusInput) {
  std::map<std::string, std::string> expected = golden();
  std::vector<std::string> files = inputs();
  ASSERT_GT(files.size(), 50u);
  PipelineOptions opts;
  opts.conservative = true;
  size_t compared = 0;
  for (const std::string &file : files) {
    auto it = expected.find(file);
    if (it == expected.end())
      continue; // added after the golden was captured: no reference behaviour to compare
    EXPECT_EQ(decisions(file, opts), it->second) << file;
    ++compared;
  }
  EXPECT_GT(compared, 50u);
}

TEST(TensorMoveDeleteConservative, ModuleOptionAndPipelineFlagSelectTheSameMode) {
  // A graph the extensions decide differently: an ungranted user input only
  // read through the copy (ext-readonly-source deletes it, Rule 2 keeps it).
  const std::string graph = R"(
graph root {
  x = Data() {index = 0}
  tm = TensorMove(x)
  q = AbsD(tm)
  out = NetOutput(q)
}
)";
  // The pass alone: the other passes of the default pipeline have remarks
  // of their own.
  const std::vector<std::string> only = {"tensor-move-delete"};
  PipelineOptions extended;
  extended.passes = only;
  auto byDefault = testing::optimize(graph, extended);
  ASSERT_EQ(byDefault.result.remarks.size(), 1u);
  EXPECT_EQ(byDefault.result.remarks[0].rule, "ext-readonly-source");

  PipelineOptions flag;
  flag.passes = only;
  flag.conservative = true;
  auto byFlag = testing::optimize(graph, flag);
  ASSERT_EQ(byFlag.result.remarks.size(), 1u);
  EXPECT_EQ(byFlag.result.remarks[0].rule, "rule2-no-grant");

  PipelineOptions option;
  option.passes = only;
  option.optionOverrides[std::string(kTensorMoveDeleteConservativeOption)] = "true";
  auto byOption = testing::optimize(graph, option);
  ASSERT_EQ(byOption.result.remarks.size(), 1u);
  EXPECT_EQ(byOption.result.remarks[0].rule, "rule2-no-grant");
  EXPECT_TRUE(byOption.result.warnings.empty());

  PipelineOptions bad;
  bad.passes = only;
  bad.optionOverrides[std::string(kTensorMoveDeleteConservativeOption)] = "yes";
  auto byBad = testing::optimize(graph, bad);
  ASSERT_EQ(byBad.result.warnings.size(), 1u);
  EXPECT_NE(byBad.result.warnings[0].message.find("expected true or false"), std::string::npos);
  ASSERT_EQ(byBad.result.remarks.size(), 1u);
  EXPECT_EQ(byBad.result.remarks[0].rule, "ext-readonly-source"); // ignored: default mode
}

} // namespace
} // namespace graphvet
