// The op library: kinds, default output counts, built-in and attribute-driven
// aliasing, scope writes, variable-backed outputs, layouts and byte sizes.
#include "ir/op_library.h"

#include <gtest/gtest.h>

namespace graphvet {
namespace {

Node makeNode(std::string type, size_t inputs, uint32_t outputs = 1) {
  Node n;
  n.type = std::move(type);
  n.inputs.assign(inputs, std::nullopt);
  n.numOutputs = outputs;
  return n;
}

TEST(OpLibrary, KindsOfTheFamilies) {
  EXPECT_EQ(opKind(makeNode("Data", 0)), OpKind::DataSource);
  EXPECT_EQ(opKind(makeNode("AippData", 0)), OpKind::DataSource);
  EXPECT_EQ(opKind(makeNode("RefData", 0)), OpKind::Variable);
  EXPECT_EQ(opKind(makeNode("FileConstant", 0)), OpKind::Weight);
  EXPECT_EQ(opKind(makeNode("MemcpyAsync", 1)), OpKind::Copy);
  EXPECT_EQ(opKind(makeNode("StatefulPartitionedCall", 1)), OpKind::Call);
  EXPECT_EQ(opKind(makeNode("StatelessIf", 1)), OpKind::If);
  EXPECT_EQ(opKind(makeNode("_While", 1)), OpKind::While);
  EXPECT_EQ(opKind(makeNode("SomethingNew", 3)), OpKind::Ordinary);
  EXPECT_EQ(lookupOp("SomethingNew").defaultOutputs, 1u);
  EXPECT_TRUE(isCopy(makeNode("Identity", 1)));
  EXPECT_FALSE(isTensorMove(makeNode("Identity", 1)));
  EXPECT_TRUE(isTensorMove(makeNode("TensorMove", 1)));
  EXPECT_TRUE(isControlFlow(makeNode("Case", 1)));
  EXPECT_FALSE(isControlFlow(makeNode("PartitionedCall", 1)));
  EXPECT_TRUE(holdsSubgraphs(makeNode("PartitionedCall", 1)));
  EXPECT_TRUE(isVariableSource(makeNode("VariableV2", 0)));
  EXPECT_TRUE(isWeightSource(makeNode("Constant", 0)));
  EXPECT_FALSE(allOps().empty());
}

TEST(OpLibrary, PatternColumn) {
  // One op of each kind, and the default for anything unclassified.
  EXPECT_EQ(opPattern("Relu"), OpPattern::ElemWise);
  EXPECT_EQ(opPattern("Add"), OpPattern::Broadcast);
  EXPECT_EQ(opPattern("Transpose"), OpPattern::Injective);
  EXPECT_EQ(opPattern("ReduceSum"), OpPattern::CommReduce);
  EXPECT_EQ(opPattern("Conv"), OpPattern::OutEWiseFusable);
  EXPECT_EQ(opPattern("Softmax"), OpPattern::Opaque);
  EXPECT_EQ(opPattern("SomethingNew"), OpPattern::Opaque);
  EXPECT_EQ(opPatternName(OpPattern::OutEWiseFusable), "OutEWiseFusable");
  size_t classified = 0;
  for (const OpInfo *op : allOps()) {
    OpPattern p = opPattern(op->type);
    if (p == OpPattern::Opaque)
      continue;
    ++classified;
    // Only ordinary numeric ops with no effect are ever fusible: sources,
    // boundaries, copies, holders, in-place writers, scribblers and random
    // ops stay Opaque.
    EXPECT_EQ(op->kind, OpKind::Ordinary) << op->type;
    EXPECT_TRUE(op->infer && op->kernel) << op->type;
    EXPECT_FALSE(op->nondeterministic) << op->type;
    EXPECT_TRUE(op->refOutputs.empty()) << op->type;
    EXPECT_FALSE(op->inputMutable) << op->type;
  }
  // Every classified type is an op of the table (no typo in the column).
  EXPECT_EQ(classified, 85u);
}

TEST(OpLibrary, DefaultOutputCounts) {
  EXPECT_EQ(defaultOutputCount("NetOutput", 3), 0u);
  EXPECT_EQ(defaultOutputCount("While", 3), 3u);
  EXPECT_EQ(defaultOutputCount("ReLU", 3), 1u);
  EXPECT_EQ(defaultOutputCount("If", 3), 1u);
}

TEST(OpLibrary, RefOutputsBuiltInAndByAttribute) {
  Node assign = makeNode("Assign", 2);
  EXPECT_EQ(refInput(assign, 0), 0u);
  EXPECT_EQ(aliasedInput(assign, 0), 0u);
  EXPECT_EQ(refWrittenInputs(assign), (std::vector<uint32_t>{0}));
  // An explicit attribute overrides the built-in row.
  assign.attrs["out0.ref_input"] = AttrValue::ofInt(1);
  EXPECT_EQ(refInput(assign, 0), 1u);
  assign.attrs["out0.ref_input"] = AttrValue::ofInt(5); // out of range: no alias
  EXPECT_EQ(refInput(assign, 0), std::nullopt);

  Node multi = makeNode("MyRefOp", 2, 2);
  multi.attrs["out0.ref_input"] = AttrValue::ofInt(0);
  multi.attrs["out1.ref_input"] = AttrValue::ofInt(0);
  EXPECT_EQ(refWrittenInputs(multi), (std::vector<uint32_t>{0}));
  EXPECT_EQ(refInput(makeNode("Assign", 0), 0), std::nullopt) << "built-in needs input 0";
}

// Issue 21 (libFuzzer): the memory plan's precedence -- a variable binding,
// then a copy's fresh buffer, then ref and view attributes.
TEST(OpLibrary, AVariableBindingOrACopyIsNeverARefOrAView) {
  Node tm = makeNode("TensorMove", 1);
  tm.attrs["out0.ref_input"] = AttrValue::ofInt(0);
  EXPECT_EQ(refInput(tm, 0), std::nullopt) << "a copy's output 0 is a fresh buffer";
  EXPECT_TRUE(refWrittenInputs(tm).empty());
  tm.attrs.erase("out0.ref_input");
  tm.attrs["out0.reuse_input"] = AttrValue::ofBool(true);
  EXPECT_EQ(viewInput(tm, 0), std::nullopt);
  EXPECT_EQ(aliasedInput(tm, 0), std::nullopt);

  Node assign = makeNode("Assign", 2);
  assign.attrs["out0.ref_var_src_var_name"] = AttrValue::ofString("v");
  EXPECT_EQ(refInput(assign, 0), std::nullopt) << "the output lives in variable v";
  EXPECT_TRUE(refWrittenInputs(assign).empty());
  Node reshape = makeNode("Reshape", 2);
  reshape.attrs["ref_var_src_var_name"] = AttrValue::ofString("v");
  EXPECT_EQ(viewInput(reshape, 0), std::nullopt) << "the node-level binding too";

  // A holder's ref attribute still aliases (it comes before the call's result).
  Node call = makeNode("PartitionedCall", 1);
  call.attrs["out0.ref_input"] = AttrValue::ofInt(0);
  EXPECT_EQ(refInput(call, 0), 0u);
}

TEST(OpLibrary, ViewsBuiltInAndByAttribute) {
  Node reshape = makeNode("Reshape", 2);
  EXPECT_EQ(viewInput(reshape, 0), 0u);
  EXPECT_EQ(refInput(reshape, 0), std::nullopt);
  Node v = makeNode("Squeeze", 2);
  EXPECT_EQ(viewInput(v, 0), std::nullopt);
  v.attrs["out0.reuse_input"] = AttrValue::ofBool(true);
  EXPECT_EQ(viewInput(v, 0), 0u) << "reuse_input_index defaults to 0";
  v.attrs["out0.reuse_input_index"] = AttrValue::ofInt(1);
  EXPECT_EQ(viewInput(v, 0), 1u);
  v.attrs["out0.reuse_input"] = AttrValue::ofBool(false);
  EXPECT_EQ(viewInput(v, 0), std::nullopt);
  reshape.attrs["out0.reuse_input"] = AttrValue::ofBool(false);
  EXPECT_EQ(viewInput(reshape, 0), std::nullopt) << "attribute overrides the built-in view";
}

TEST(OpLibrary, InputMutable) {
  EXPECT_TRUE(isInputMutable(makeNode("HcomAllReduce", 1)));
  Node n = makeNode("Custom", 1);
  EXPECT_FALSE(isInputMutable(n));
  n.attrs["_input_mutable"] = AttrValue::ofBool(true);
  EXPECT_TRUE(isInputMutable(n));
  Node h = makeNode("HcomBroadcast", 1);
  h.attrs["_input_mutable"] = AttrValue::ofBool(false);
  EXPECT_FALSE(isInputMutable(h));
}

TEST(OpLibrary, RefVarSrcNameAndContinuousInput) {
  Node n = makeNode("Custom", 1, 2);
  EXPECT_EQ(refVarSrcName(n, 0), nullptr);
  n.attrs["ref_var_src_var_name"] = AttrValue::ofString("v");
  n.attrs["out1.ref_var_src_var_name"] = AttrValue::ofIdent("w");
  EXPECT_EQ(*refVarSrcName(n, 0), "v");
  EXPECT_EQ(*refVarSrcName(n, 1), "w");
  EXPECT_FALSE(needsContinuousInput(n));
  n.attrs["_no_padding_continuous_input"] = AttrValue::ofBool(true);
  EXPECT_TRUE(needsContinuousInput(n));
}

TEST(OpLibrary, OutputBytes) {
  Node n = makeNode("A", 0, 2);
  EXPECT_EQ(outputBytes(n, 0), 16u) << "f32 [4]";
  n.attrs["out0.dtype"] = AttrValue::ofIdent("f16");
  n.attrs["out0.shape"] = AttrValue::ofList({AttrValue::ofInt(2), AttrValue::ofInt(3)});
  EXPECT_EQ(outputBytes(n, 0), 12u);
  n.attrs["out1.shape"] = AttrValue::ofList({});
  EXPECT_EQ(outputBytes(n, 1), 4u) << "a scalar";
  n.attrs["out1.dtype"] = AttrValue::ofString("f17");
  EXPECT_EQ(outputBytes(n, 1), std::nullopt);
  n.attrs["out1.dtype"] = AttrValue::ofString("i64");
  n.attrs["out1.shape"] =
      AttrValue::ofList({AttrValue::ofInt(static_cast<int64_t>(kMaxBufferBytes / 8 + 1))});
  EXPECT_EQ(outputBytes(n, 1), std::nullopt) << "over kMaxBufferBytes";
  n.attrs["out1.shape"] = AttrValue::ofList({AttrValue::ofInt(-1)});
  EXPECT_EQ(outputBytes(n, 1), std::nullopt);
  EXPECT_EQ(dtypeSize("bool"), 1u);
  EXPECT_EQ(dtypeSize("bf16"), 2u);
  EXPECT_EQ(dtypeSize("u64"), 8u);
  EXPECT_EQ(dtypeSize("float"), std::nullopt);
}

} // namespace
} // namespace graphvet
