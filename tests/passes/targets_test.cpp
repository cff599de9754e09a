// The target table library: the shipped table (embedded data/targets.json) parses and holds
// the two documented targets; malformed tables fail with FILE:LINE:COL errors.
#include "passes/targets.h"

#include <gtest/gtest.h>

namespace graphvet {
namespace {

TEST(Targets, ShippedTableParses) {
  Diagnostics errors;
  std::optional<TargetTable> t =
      parseTargetTable(builtinTargetTableText(), "data/targets.json", errors);
  ASSERT_TRUE(t) << (errors.empty() ? "" : errors[0].message);
  EXPECT_EQ(t->names(), "dsp, npu");
  EXPECT_EQ(builtinTargetTable().names(), "dsp, npu");
}

TEST(Targets, NpuLimits) {
  const Target *npu = builtinTargetTable().find("npu");
  ASSERT_NE(npu, nullptr);
  EXPECT_FALSE(npu->supportsOp("Gemm", DType::F32));
  EXPECT_FALSE(npu->supportsOp("HardSwish", DType::F32));
  EXPECT_FALSE(npu->supportsOp("Clip", DType::F16));
  EXPECT_TRUE(npu->supportsOp("Clip", DType::F32));
  EXPECT_TRUE(npu->supportsOp("Transpose", DType::I8)); // no dtype list: every dtype
  EXPECT_EQ(npu->ops.at("Conv").channelsMultipleOf, 4);
  const Target *dsp = builtinTargetTable().find("dsp");
  ASSERT_NE(dsp, nullptr);
  EXPECT_TRUE(dsp->supportsOp("Gemm", DType::F16));
  EXPECT_FALSE(dsp->supportsOp("HardSigmoid", DType::F32));
  EXPECT_EQ(builtinTargetTable().find("gpu"), nullptr);
}

TEST(Targets, ConvChannelLimitReadsTheLayout) {
  const Target &npu = *builtinTargetTable().find("npu");
  Node n;
  n.name = "c";
  n.type = "Conv";
  TensorType x{DType::F32, {1, 3, 3, 4}}, w{DType::F32, {4, 1, 1, 4}};
  // NCHW: C = 3 (axis 1), not a multiple of 4.
  EXPECT_TRUE(npu.unsupportedReason(n, {&x, &w}).has_value());
  n.attrs["layout"] = AttrValue::ofString("NHWC"); // C = 4 (last axis)
  EXPECT_FALSE(npu.unsupportedReason(n, {&x, &w}).has_value());
}

TEST(Targets, ErrorsCarryLineAndColumn) {
  Diagnostics errors;
  EXPECT_FALSE(parseTargetTable("{\n  \"targets\": {\n    \"a\": 3\n  }\n}\n", "t.json", errors));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message, "t.json:3:5: at targets.a: target \"a\" must be an object");
  errors.clear();
  EXPECT_FALSE(parseTargetTable("{\"targets\": {}", "t.json", errors));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message.rfind("t.json:1:15: malformed JSON: ", 0), 0u) << errors[0].message;
  errors.clear();
  EXPECT_FALSE(parseTargetTable("{\"format\": \"v2\", \"targets\": {}}", "t.json", errors));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message, "t.json:1:2: at format: \"format\" must be \"graphvet-targets-1\"");
}

} // namespace
} // namespace graphvet
