// ConstantFoldingPass through its C++ entry point: the options struct's
// defaults and effects, the statistics, the ownership of folded tensors, and
// the module options the pass manager reads.
#include "ir/op_def.h"
#include "ir/tensor.h"
#include "passes/fold_constant.h"
#include "test_util.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace graphvet {
namespace {

Module parse(const std::string &text) {
  ParseResult parsed = parseModule(text);
  EXPECT_TRUE(parsed.module);
  return parsed.module ? std::move(*parsed.module) : Module{};
}

constexpr const char *kChain = R"(
graph root {
  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2, 4]}
  a = Const() {value = f32[2, 4] splat(1)}
  b = Const() {value = f32[2, 4] splat(2)}
  r = Add(a, b)
  s = Shape(x)
  c = Const() {value = bool[] {1}}
  i = If(c, x) {subgraphs = [t, e]}
  y = Add(r, i)
  z = Add(y, a)
  out = NetOutput(z, s)
}
graph t {
  d = Data() {_parent_node_index = 1}
  n = Neg(d)
  o = NetOutput(n) {in0._parent_node_index = 0}
}
graph e {
  d = Data() {_parent_node_index = 1}
  o = NetOutput(d) {in0._parent_node_index = 0}
}
)";

TEST(FoldConstant, DefaultsAreDocumented) {
  FoldConstantOptions o;
  EXPECT_EQ(o.maxElements, int64_t{1} << 20);
  EXPECT_TRUE(o.foldShapeOps);
  EXPECT_TRUE(o.inlineIf);
}

TEST(FoldConstant, FoldsEvaluatesShapesAndInlinesWithStats) {
  Module m = parse(kChain);
  std::vector<Remark> remarks;
  FoldConstantStats s = runFoldConstant(m, FoldConstantOptions{}, &remarks);
  EXPECT_EQ(s.folded, 1);
  EXPECT_EQ(s.shapeFolded, 1);
  EXPECT_EQ(s.ifsInlined, 1);
  EXPECT_EQ(s.nodesInlined, 1);
  EXPECT_EQ(s.copiesCreated, 1); // the Shape result is a graph output
  EXPECT_EQ(s.constsRemoved, 2); // b and the condition (a has another use)
  EXPECT_EQ(s.constBytesBefore, 32 + 32 + 1);
  EXPECT_EQ(s.constBytesAfter, 32 + 32 + 16); // a, r, and s (i64[2])
  EXPECT_TRUE(s.refused.empty());
  ASSERT_EQ(remarks.size(), 3u);
  EXPECT_EQ(remarks[0].rule, "folded");
  EXPECT_EQ(remarks[1].rule, "shape");
  EXPECT_EQ(remarks[2].rule, "if-inlined");
  EXPECT_EQ(m.findGraph("t"), kNoGraph);
  EXPECT_NE(m.root().find("n"), kNoNode); // moved under its own name
}

TEST(FoldConstant, OptionsTurnPartsOff) {
  Module m = parse(kChain);
  FoldConstantOptions o;
  o.maxElements = 4;
  o.foldShapeOps = false;
  o.inlineIf = false;
  FoldConstantStats s = runFoldConstant(m, o, nullptr);
  EXPECT_EQ(s.folded + s.shapeFolded + s.ifsInlined, 0);
  ASSERT_EQ(s.refused.count("size-cap"), 1u);
  EXPECT_EQ(s.refused.at("size-cap"), 1);
  EXPECT_EQ(s.constBytesBefore, s.constBytesAfter);
}

TEST(FoldConstant, FoldedTensorIsItsOwn) {
  Module m = parse(R"(
graph root {
  x = Data() {index = 0, out0.dtype = f32, out0.shape = [2]}
  a = Const() {value = f32[2] {1, 2}}
  z = Const() {value = f32[] {0}}
  r = Add(a, z)
  y1 = Mul(r, x)
  y2 = Mul(a, x)
  out = NetOutput(y1, y2)
}
)");
  runFoldConstant(m, FoldConstantOptions{}, nullptr);
  const Graph &g = m.root();
  NodeId a = g.find("a"), r = g.find("r");
  ASSERT_NE(a, kNoNode);
  ASSERT_NE(r, kNoNode);
  EXPECT_EQ(g.node(r).type, "Const");
  const AttrValue *va = g.node(a).attr("value");
  const AttrValue *vr = g.node(r).attr("value");
  ASSERT_TRUE(va && vr);
  EXPECT_EQ(va->asTensor(), vr->asTensor());               // equal values...
  EXPECT_NE(va->tensorPtr().get(), vr->tensorPtr().get()); // ...in distinct buffers
}

TEST(FoldConstant, PassManagerReadsModuleOptions) {
  PipelineOptions po;
  po.passes = std::vector<std::string>{"fold-constant"};
  po.optionOverrides["fold_constant.max_elements"] = "4";
  auto r = testing::optimize(kChain, po);
  ASSERT_TRUE(r.result.ok);
  const auto &c = r.result.stats.at("fold-constant").counters;
  EXPECT_EQ(c.at("refused_size-cap"), 1);
  EXPECT_EQ(c.at("shape_folded"), 1);
  EXPECT_EQ(c.at("ifs_inlined"), 1);

  po.optionOverrides["fold_constant.max_elements"] = "lots";
  po.optionOverrides["fold_constant.inline_if"] = "no";
  auto bad = testing::optimize(kChain, po);
  ASSERT_TRUE(bad.result.ok);
  EXPECT_EQ(bad.result.warnings.size(), 2u);
  EXPECT_EQ(bad.result.stats.at("fold-constant").counters.at("folded"), 1); // defaults apply
  EXPECT_EQ(bad.result.stats.at("fold-constant").counters.at("ifs_inlined"), 1);
}

TEST(FoldConstant, SecondRunChangesNothing) {
  Module m = parse(kChain);
  runFoldConstant(m, FoldConstantOptions{}, nullptr);
  std::string once = printModule(m);
  FoldConstantStats s = runFoldConstant(m, FoldConstantOptions{}, nullptr);
  EXPECT_EQ(printModule(m), once);
  EXPECT_EQ(s.folded + s.shapeFolded + s.ifsInlined, 0);
}

/// Every chunk of every lit test of the pass, run twice through the C++
/// entry point (the sanitizer builds run this: it walks each path of the
/// pass, inlining, copies and refusals included); the second run changes
/// nothing.
TEST(FoldConstant, EveryLitChunkRunsAndReachesAFixpoint) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(GRAPHVET_SOURCE_DIR) / "tests" / "lit" / "fold-constant";
  std::vector<fs::path> files;
  for (const fs::directory_entry &e : fs::directory_iterator(dir))
    if (e.path().extension() == ".graph")
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 25u);
  size_t chunks = 0;
  for (const fs::path &f : files) {
    std::ifstream in(f);
    std::stringstream text;
    text << in.rdbuf();
    std::string all = text.str();
    std::istringstream lines(all);
    std::vector<std::string> parts(1);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("# -----", 0) == 0)
        parts.emplace_back();
      else
        parts.back() += line + "\n";
    }
    for (const std::string &part : parts) {
      ParseResult parsed = parseModule(part);
      if (!parsed.module)
        continue;
      ++chunks;
      Module m = std::move(*parsed.module);
      std::vector<Remark> remarks;
      runFoldConstant(m, FoldConstantOptions{}, &remarks);
      std::string once = printModule(m);
      FoldConstantStats s = runFoldConstant(m, FoldConstantOptions{}, nullptr);
      EXPECT_EQ(printModule(m), once) << f;
      EXPECT_EQ(s.folded + s.shapeFolded + s.ifsInlined, 0) << f;
    }
  }
  EXPECT_GE(chunks, 60u);
}

} // namespace
} // namespace graphvet
