// The types a pipeline hands from pass to pass (ir/types.h, TypeHandoff).
#include "ir/parser.h"
#include "ir/types.h"

#include <gtest/gtest.h>

namespace graphvet {
namespace {

constexpr const char *kNested = R"(graph main {
  x = Data() {index = 0, out0.dtype = f32, out0.shape = [4]}
  k = PartitionedCall(x) {_target = "npu", subgraphs = [region]}
  p = PartitionedCall(k) {subgraphs = [plain]}
  out = NetOutput(p)
}
graph region {
  d = Data() {_parent_node_index = 0}
  c = PartitionedCall(d) {subgraphs = [inner]}
  o = NetOutput(c) {in0._parent_node_index = 0}
}
graph inner {
  d = Data() {_parent_node_index = 0}
  r = Relu(d)
  o = NetOutput(r) {in0._parent_node_index = 0}
}
graph plain {
  d = Data() {_parent_node_index = 0}
  r = Relu(d)
  o = NetOutput(r) {in0._parent_node_index = 0}
}
)";

Module parse(const char *text) {
  ParseResult r = parseModule(text);
  EXPECT_TRUE(r.module.has_value());
  return std::move(*r.module);
}

TEST(TypeHandoff, TheFirstInferenceTakesTheGivenTypesAndRecordsThem) {
  Module m = parse(kNested);
  Diagnostics ignored;
  auto given = std::make_shared<const ModuleTypes>(inferModuleTypes(m, ignored));
  TypeHandoff handoff{given, nullptr, false};
  std::shared_ptr<const ModuleTypes> first = takeOrInferTypes(m, &handoff);
  EXPECT_EQ(first, given); // the very object: no inference, no copy
  EXPECT_EQ(handoff.ofInput, given);
  EXPECT_EQ(handoff.given, nullptr);
  // A later call (made after the pass changed the module) infers afresh and
  // drops the input's types: they are stale, and the pipeline must not hand
  // them on.
  std::shared_ptr<const ModuleTypes> second = takeOrInferTypes(m, &handoff);
  EXPECT_NE(second, given);
  EXPECT_EQ(handoff.ofInput, nullptr);
  ASSERT_NE(second->of(0, OutPort{m.root().find("x"), 0}), nullptr);
}

TEST(TypeHandoff, WithoutGivenTypesTheInferredOnesAreRecorded) {
  Module m = parse(kNested);
  TypeHandoff handoff;
  std::shared_ptr<const ModuleTypes> types = takeOrInferTypes(m, &handoff);
  EXPECT_EQ(handoff.ofInput, types);
  EXPECT_NE(takeOrInferTypes(m, &handoff), types);
  EXPECT_EQ(handoff.ofInput, nullptr);
  const GraphId inner = m.findGraph("inner");
  const TensorType *relu = types->of(inner, OutPort{m.graph(inner).find("r"), 0});
  ASSERT_NE(relu, nullptr);
  EXPECT_NE(takeOrInferTypes(m, nullptr), nullptr);
}

} // namespace
} // namespace graphvet
