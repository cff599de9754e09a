// The ONNX exporter: import -> export -> import round trips on small models
// built in memory (the printed module is the same, and the oracle finds the
// re-imported module computing the same values bit for bit), the refusals
// of what ONNX cannot express, and the real models (ci/fetch-models puts
// them into build/models; skipped when absent): imported at small shapes,
// optimized at -O3, exported (ONNX's checker inside), imported again and
// checked against the original.
#include "ir/parser.h"
#include "ir/printer.h"
#include "onnx/exporter.h"
#include "onnx/importer.h"
#include "oracle/check.h"
#include "passes/pass_manager.h"
#include "tests/onnx/model_builder.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <ostream>

namespace graphvet::onnxexport {
namespace {

using onnx::TensorProto;
using onnximport::ImportOptions;
using onnximport::ImportResult;
using onnximport::test::attrInt;
using onnximport::test::attrInts;
using onnximport::test::attrString;
using onnximport::test::floatTensor;
using onnximport::test::int64Tensor;
using onnximport::test::ModelBuilder;

constexpr int32_t kF32 = TensorProto::FLOAT;
constexpr int32_t kBool = TensorProto::BOOL;

std::string errorsOf(const std::vector<std::string> &errors) {
  std::string s;
  for (const auto &e : errors)
    s += e + "\n";
  return s;
}

/// Exports `m`, imports the result again with `io`.
Module roundTrip(const Module &m, const ImportOptions &io = {},
                 const ExportOptions &eo = ExportOptions{}) {
  ExportResult e = exportOnnx(m, eo);
  EXPECT_TRUE(e.ok()) << errorsOf(e.errors);
  if (!e.ok())
    return Module{};
  ImportResult r = onnximport::importOnnxBytes(serializeModel(*e.model), "", io);
  EXPECT_TRUE(r.ok()) << errorsOf(r.errors);
  return r.ok() ? std::move(*r.module) : Module{};
}

oracle::Verdict checkPair(const Module &original, const Module &other,
                          NumericContract contract = NumericContract::Exact) {
  oracle::CheckOptions co;
  co.contract = contract;
  return oracle::checkRefinement(original, other, co).verdict;
}

Module imported(const ModelBuilder &mb, const ImportOptions &io = {}) {
  ImportResult r = onnximport::importOnnxBytes(mb.bytes(), "", io);
  EXPECT_TRUE(r.ok()) << errorsOf(r.errors);
  return r.ok() ? std::move(*r.module) : Module{};
}

/// A small convolutional model: Conv (with pads), BatchNormalization, Relu,
/// MaxPool, Flatten, Gemm, Softmax.
void buildConvModel(ModelBuilder &mb) {
  mb.input("x", kF32, {1, 2, 4, 4}).output("prob", kF32, {1, 3});
  std::vector<float> w(3 * 2 * 3 * 3), fc(3 * 12);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.25f;
  for (size_t i = 0; i < fc.size(); ++i)
    fc[i] = static_cast<float>(static_cast<int>(i % 5) - 2) * 0.5f;
  mb.initializer(floatTensor("w", {3, 2, 3, 3}, w))
      .initializer(floatTensor("scale", {3}, {1, 0.5f, 2}))
      .initializer(floatTensor("shift", {3}, {0, 1, -1}))
      .initializer(floatTensor("mean", {3}, {0.1f, 0.2f, 0.3f}))
      .initializer(floatTensor("var", {3}, {1, 2, 0.5f}))
      .initializer(floatTensor("fc", {12, 3}, fc))
      .initializer(floatTensor("fc_b", {3}, {0.5f, -0.5f, 0}));
  auto &conv = mb.node("Conv", {"x", "w"}, {"c"}, "conv");
  attrInts(conv, "pads", {1, 1, 1, 1});
  attrInts(conv, "kernel_shape", {3, 3});
  mb.node("BatchNormalization", {"c", "scale", "shift", "mean", "var"}, {"bn"}, "bn");
  mb.node("Relu", {"bn"}, {"r"}, "relu");
  auto &pool = mb.node("MaxPool", {"r"}, {"p"}, "pool");
  attrInts(pool, "kernel_shape", {2, 2});
  attrInts(pool, "strides", {2, 2});
  mb.node("Flatten", {"p"}, {"f"}, "flatten");
  mb.node("Gemm", {"f", "fc", "fc_b"}, {"logits"}, "fc");
  auto &sm = mb.node("Softmax", {"logits"}, {"prob"}, "softmax");
  attrInt(sm, "axis", 1);
}

TEST(ExporterRoundTrip, ConvModelPrintsTheSameAndComputesTheSame) {
  ModelBuilder mb(13);
  buildConvModel(mb);
  Module original = imported(mb);
  Module again = roundTrip(original);
  EXPECT_EQ(printModule(again), printModule(original));
  EXPECT_EQ(checkPair(original, again), oracle::Verdict::Sound);
}

TEST(ExporterRoundTrip, OutputNamesAreKeptWhenGiven) {
  ModelBuilder mb(13);
  buildConvModel(mb);
  ImportResult r = onnximport::importOnnxBytes(mb.bytes(), "", {});
  ASSERT_TRUE(r.ok()) << errorsOf(r.errors);
  ExportOptions eo;
  eo.outputNames = r.outputs;
  ExportResult e = exportOnnx(*r.module, eo);
  ASSERT_TRUE(e.ok()) << errorsOf(e.errors);
  ASSERT_EQ(e.model->graph().output_size(), 1);
  EXPECT_EQ(e.model->graph().output(0).name(), "prob");
  ASSERT_EQ(e.model->graph().input_size(), 1);
  EXPECT_EQ(e.model->graph().input(0).name(), "x");
  EXPECT_EQ(e.model->opset_import(0).version(), 17);
  EXPECT_EQ(e.summary.nodes, 7);
}

TEST(ExporterRoundTrip, IfWithAnInputConditionKeepsItsBranches) {
  ModelBuilder mb(13);
  mb.input("c", kBool, {}).input("x", kF32, {3}).output("y", kF32, {3});
  mb.node("Relu", {"x"}, {"r"}, "relu");
  auto &iff = mb.node("If", {"c"}, {"y"}, "choose");
  auto thenG = onnximport::test::attrGraph(iff, "then_branch", "double_it");
  thenG.output("t", kF32, {3});
  thenG.node("Add", {"r", "r"}, {"t"}, "twice");
  auto elseG = onnximport::test::attrGraph(iff, "else_branch", "negate_it");
  elseG.output("e", kF32, {3});
  elseG.node("Neg", {"r"}, {"e"}, "negate");
  Module original = imported(mb);
  Module again = roundTrip(original);
  EXPECT_EQ(checkPair(original, again), oracle::Verdict::Sound);
  // A branch's Data takes the name of the outer value it reads, which the
  // export names after graphvet's node (relu, not the model's r): the
  // second round trip is a fixpoint.
  EXPECT_NE(printModule(again).find("relu = Data() {_parent_node_index = 1}"), std::string::npos);
  EXPECT_EQ(printModule(roundTrip(again)), printModule(again));
  EXPECT_NE(printModule(again).find("choose = If(c, relu) {subgraphs = [double_it, negate_it]}"),
            std::string::npos);
}

TEST(ExporterRoundTrip, OpsetNineFormsAreRewrittenAndComputeTheSame) {
  ModelBuilder mb(9);
  mb.input("x", kF32, {2, 3, 4}).output("r", kF32, {2, 2});
  auto &slice = mb.node("Slice", {"x"}, {"s"}, "slice");
  attrInts(slice, "starts", {0, 1});
  attrInts(slice, "ends", {2, 3});
  attrInts(slice, "axes", {0, 2});
  auto &sm = mb.node("Softmax", {"s"}, {"sm"}, "softmax"); // 2-D coercion at axis 1
  attrInt(sm, "axis", 1);
  auto &sum = mb.node("ReduceSum", {"sm"}, {"r"}, "sum");
  attrInts(sum, "axes", {1});
  attrInt(sum, "keepdims", 0);
  Module original = imported(mb);
  ExportResult e = exportOnnx(original, {});
  ASSERT_TRUE(e.ok()) << errorsOf(e.errors);
  EXPECT_EQ(e.summary.formRewrites, 3);
  std::vector<std::string> ops;
  for (const auto &n : e.model->graph().node())
    ops.push_back(n.op_type());
  EXPECT_EQ(ops, (std::vector<std::string>{"Slice", "Reshape", "Softmax", "Reshape", "ReduceSum"}));
  Module again = roundTrip(original);
  EXPECT_EQ(checkPair(original, again), oracle::Verdict::Sound);
  // The opset-17 model exported again is a fixpoint.
  EXPECT_EQ(printModule(roundTrip(again)), printModule(again));
}

TEST(ExporterRoundTrip, MultipleOutputsAndUnusedOnes) {
  ModelBuilder mb(13);
  mb.input("x", kF32, {6}).output("a", kF32, {2}).output("c", kF32, {2});
  mb.initializer(int64Tensor("sizes", {3}, {2, 2, 2}));
  mb.node("Split", {"x", "sizes"}, {"a", "b", "c"}, "split");
  Module original = imported(mb);
  Module again = roundTrip(original);
  EXPECT_EQ(checkPair(original, again), oracle::Verdict::Sound);
  EXPECT_EQ(printModule(roundTrip(again)), printModule(again));
}

Module parsed(const std::string &text) {
  ParseResult p = parseModule(text);
  EXPECT_TRUE(p.module.has_value());
  return p.module ? std::move(*p.module) : Module{};
}

TEST(ExporterRefusals, GeMemoryOpsAndAttributeViewsAreRefusedTogether) {
  Module m = parsed(R"(
graph main {
  x  = Data() {index = 0, out0.dtype = f32, out0.shape = [4]}
  tm = TensorMove(x) {out0.dtype = f32, out0.shape = [4]}
  r  = Relu(tm) {out0.reuse_input = true}
  out = NetOutput(r)
}
)");
  ExportResult e = exportOnnx(m, {});
  EXPECT_FALSE(e.ok());
  ASSERT_EQ(e.errors.size(), 2u) << errorsOf(e.errors);
  EXPECT_EQ(e.errors[0], "cannot export tm (TensorMove): a GE memory op (a copy into a fresh "
                         "buffer) has no ONNX form; ONNX values are immutable, so the copy is "
                         "not needed there");
  EXPECT_EQ(e.errors[1],
            "cannot export r (Relu): output 0 shares an input's buffer (out0.reuse_input)");
}

TEST(ExporterRefusals, AnOpOfALaterOpsetIsRefusedByName) {
  Module m = parsed(R"(
graph main {
  x  = Data() {index = 0, out0.dtype = f32, out0.shape = [2, 4]}
  n  = HardSwish(x)
  out = NetOutput(n)
}
)");
  ExportOptions eo;
  eo.opset = 13;
  ExportResult e = exportOnnx(m, eo);
  ASSERT_EQ(e.errors.size(), 1u) << errorsOf(e.errors);
  EXPECT_EQ(e.errors[0], "cannot export n (HardSwish): HardSwish is not an op of ONNX opset 13");
  EXPECT_TRUE(exportOnnx(m, {}).ok()); // opset 14 introduced it
}

TEST(ExporterLayout, NhwcConvIsWrittenBetweenTransposesAndComputesTheSame) {
  const char *nchw = R"(
graph g {
  x = Data() {index = 0, out0.dtype = f32, out0.shape = [1, 2, 3, 3]}
  w = Const() {value = f32[2, 2, 1, 1] {1, -1, 2, 0.5}}
  c = Conv(x, w)
  r = Relu(c)
  out = NetOutput(r)
}
)";
  Module original = parsed(nchw);
  Module nhwc = parsed(nchw);
  PipelineOptions po;
  po.passes = std::vector<std::string>{"convert-layout"};
  po.optionOverrides["convert_layout.target"] = "NHWC";
  ASSERT_TRUE(runPipeline(nhwc, po).ok);
  ASSERT_NE(printModule(nhwc).find("layout = \"NHWC\""), std::string::npos);
  ExportResult e = exportOnnx(nhwc, {});
  ASSERT_TRUE(e.ok()) << errorsOf(e.errors);
  std::vector<std::string> ops;
  for (const auto &n : e.model->graph().node())
    ops.push_back(n.op_type());
  // Relu computes channels-last in graphvet: Transposes around the Conv.
  EXPECT_EQ(ops, (std::vector<std::string>{"Conv", "Transpose", "Relu", "Transpose"}));
  for (const auto &n : e.model->graph().node())
    for (const auto &a : n.attribute())
      EXPECT_NE(a.name(), "layout");
  Module again = roundTrip(nhwc);
  EXPECT_EQ(checkPair(original, again), oracle::Verdict::Sound);
}

TEST(ExporterChecker, ACheckerFailureIsAnError) {
  // Relu of i32 is ONNX's since opset 14: written for opset 13 (Relu-13,
  // floats only), the strict check of the export must reject it, and that
  // is reported, never a model.
  Module m = parsed(R"(
graph main {
  x  = Data() {index = 0, out0.dtype = i32, out0.shape = [4]}
  r  = Relu(x)
  out = NetOutput(r)
}
)");
  ExportOptions eo;
  eo.opset = 13;
  ExportResult e = exportOnnx(m, eo);
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.model, nullptr);
  ASSERT_EQ(e.errors.size(), 1u) << errorsOf(e.errors);
  EXPECT_EQ(e.errors[0].rfind("ONNX's shape inference rejects the export: ", 0), 0u) << e.errors[0];
  EXPECT_NE(e.errors[0].find("tensor(int32)"), std::string::npos) << e.errors[0];
  EXPECT_TRUE(exportOnnx(m, {}).ok()); // Relu-14 takes i32
}

/// The real models at the small shapes of docs/onnx-import.md.
struct RealModel {
  const char *file;
  std::map<std::string, Shape> shapes;
  std::map<std::string, std::string> freeze;
};

/// How GoogleTest names a parameter (ctest shows it): the model's file.
void PrintTo(const RealModel &m, std::ostream *os) {
  *os << m.file;
}

class ExporterRealModels : public ::testing::TestWithParam<RealModel> {};

TEST_P(ExporterRealModels, OptimizedExportIsAcceptedAndComputesTheSame) {
  const RealModel &rm = GetParam();
  std::filesystem::path path =
      std::filesystem::path(GRAPHVET_SOURCE_DIR) / "build" / "models" / rm.file;
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << path << " is absent (ci/fetch-models fetches it)";
  ImportOptions io;
  io.inputShapes = rm.shapes;
  io.freezeValues = rm.freeze;
  ImportResult r = onnximport::importOnnx(path.string(), io);
  ASSERT_TRUE(r.ok()) << errorsOf(r.errors);
  const Module &original = *r.module;

  // As imported: the round trip is exact.
  Module plain = roundTrip(original);
  EXPECT_EQ(checkPair(original, plain), oracle::Verdict::Sound);

  // After -O3 (simplify-inference is approx): sound under approx.
  Module optimized = original;
  PipelineResult pr = runPipeline(optimized, PipelineOptions{});
  ASSERT_TRUE(pr.ok);
  ExportOptions eo;
  eo.outputNames = r.outputs;
  ExportResult e = exportOnnx(optimized, eo);
  ASSERT_TRUE(e.ok()) << errorsOf(e.errors);
  EXPECT_EQ(e.model->graph().output_size(), static_cast<int>(r.outputs.size()));
  for (int k = 0; k < e.model->graph().output_size(); ++k)
    EXPECT_EQ(e.model->graph().output(k).name(), r.outputs[static_cast<size_t>(k)]);
  ImportResult again = onnximport::importOnnxBytes(serializeModel(*e.model), "", {});
  ASSERT_TRUE(again.ok()) << errorsOf(again.errors);
  EXPECT_EQ(checkPair(original, *again.module, NumericContract::Approx), oracle::Verdict::Sound);
}

INSTANTIATE_TEST_SUITE_P(
    Models, ExporterRealModels,
    ::testing::Values(
        RealModel{"ch_ppocr_mobile_v2.0_cls_infer.onnx", {{"x", {1, 3, 48, 192}}}, {}},
        RealModel{"ch_PP-OCRv4_det_infer.onnx", {{"x", {1, 3, 64, 64}}}, {}},
        RealModel{"ch_PP-OCRv4_rec_infer.onnx", {{"x", {1, 3, 48, 64}}}, {}},
        RealModel{"silero_vad_v5.onnx",
                  {{"input", {1, 512}}, {"state", {2, 1, 128}}},
                  {{"sr", "16000"}}}),
    [](const ::testing::TestParamInfo<RealModel> &info) {
      std::string name = info.param.file;
      name = name.substr(0, name.find('.'));
      for (char &c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)))
          c = '_';
      return name;
    });

} // namespace
} // namespace graphvet::onnxexport
