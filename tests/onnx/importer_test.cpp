// The ONNX importer on small models built in memory: attribute kinds,
// initializers and Constant, names and multiple outputs, If with outer-scope
// capture, Loop -> While, unsupported ops and types reported together, free
// dimensions, freezing, and the TensorProto reader. The op support is a list
// given in the options, so the tests do not depend on which numeric op
// families are merged.
#include "ir/printer.h"
#include "ir/types.h"
#include "onnx/importer.h"
#include "onnx/tensor_io.h"
#include "tests/onnx/model_builder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <variant>

namespace graphvet::onnximport {
namespace {

using onnx::TensorProto;
using test::attrFloat;
using test::attrFloats;
using test::attrInt;
using test::attrInts;
using test::attrString;
using test::attrStrings;
using test::attrTensor;
using test::ModelBuilder;

constexpr int32_t kF32 = TensorProto::FLOAT;
constexpr int32_t kI64 = TensorProto::INT64;
constexpr int32_t kBool = TensorProto::BOOL;

/// Options that treat exactly `ops` as numeric, with the given shape operands.
ImportOptions withOps(std::set<std::string> ops, std::map<std::string, uint64_t> shapeOps = {}) {
  ImportOptions o;
  o.inferTypes = false; // the listed ops may have no inference on this build
  o.isNumericOp = [ops](std::string_view t) { return ops.count(std::string(t)) > 0; };
  o.shapeOperands = [shapeOps](std::string_view t) {
    auto it = shapeOps.find(std::string(t));
    return it == shapeOps.end() ? uint64_t{0} : it->second;
  };
  return o;
}

ImportResult import(const ModelBuilder &mb, const ImportOptions &opts) {
  return importOnnxBytes(mb.bytes(), "", opts);
}

std::string joined(const std::vector<std::string> &v) {
  std::string s;
  for (const auto &x : v)
    s += x + "\n";
  return s;
}

const Module &moduleOf(const ImportResult &r) {
  EXPECT_TRUE(r.ok()) << joined(r.errors);
  static const Module empty;
  return r.module ? *r.module : empty;
}

const Node &nodeNamed(const Module &m, const std::string &name, GraphId g = 0) {
  NodeId id = m.graph(g).find(name);
  EXPECT_NE(id, kNoNode) << "no node '" << name << "' in graph " << m.graph(g).name;
  static const Node none;
  return id == kNoNode ? none : m.graph(g).node(id);
}

const Node &producer(const Module &m, GraphId g, const std::optional<OutPort> &p) {
  EXPECT_TRUE(p.has_value());
  return m.graph(g).node(p->node);
}

/// The node behind the TensorMove that copies a While's initial value (the
/// While writes its loop variables in place).
const Node &copiedFrom(const Module &m, GraphId g, const std::optional<OutPort> &p) {
  const Node &copy = producer(m, g, p);
  EXPECT_EQ(copy.type, "TensorMove") << copy.name;
  return copy.type == "TensorMove" ? producer(m, g, copy.inputs[0]) : copy;
}

std::vector<int64_t> intsOf(const AttrValue &v) {
  std::vector<int64_t> out;
  for (const AttrValue &x : v.asList())
    out.push_back(x.asInt());
  return out;
}

std::vector<double> valuesOf(const Tensor &t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.size(); ++i)
    out.push_back(t.getDouble(i));
  return out;
}

/// Prints the module; false when the printer does not know graph-format
/// version 2's floats and tensors yet (it throws on them).
bool printsVersion2(const Module &m, std::string &text) {
  try {
    text = printModule(m);
    return true;
  } catch (const std::bad_variant_access &) {
    return false;
  }
}

TEST(OnnxImport, MapsEveryAttributeKind) {
  ModelBuilder mb(14);
  mb.input("x", kF32, {int64_t{2}, int64_t{1}, int64_t{3}})
      .input("h0", kF32, {int64_t{1}, int64_t{1}, int64_t{2}})
      .output("yh", kF32, {int64_t{1}, int64_t{1}, int64_t{2}})
      .output("t", kF32, {int64_t{3}, int64_t{1}, int64_t{2}})
      .output("half", TensorProto::FLOAT16, {int64_t{2}, int64_t{1}, int64_t{3}})
      .output("r", TensorProto::DOUBLE, {int64_t{2}, int64_t{1}, int64_t{3}})
      .output("filled", kI64, {int64_t{2}, int64_t{3}})
      .initializer(test::floatTensor("W", {1, 8, 3}, std::vector<float>(24, 0.5f)))
      .initializer(test::floatTensor("R", {1, 8, 2}, std::vector<float>(16, 0.25f), false))
      .initializer(test::int64Tensor("dims", {2}, {2, 3}));
  auto &lstm = mb.node("LSTM", {"x", "W", "R", "", "", "h0"}, {"", "yh"}, "lstm");
  attrInt(lstm, "hidden_size", 2);
  attrStrings(lstm, "activations", {"Sigmoid", "Tanh", "Tanh"});
  attrFloats(lstm, "activation_alpha", {0.1f, 0.2f, 0.3f});
  attrFloat(lstm, "clip", 0.1f);
  attrString(lstm, "direction", "forward");
  auto &tr = mb.node("Transpose", {"x"}, {"t"}, "tr");
  attrInts(tr, "perm", {2, 1, 0});
  attrInt(mb.node("Cast", {"x"}, {"half"}, "c"), "to", TensorProto::FLOAT16);
  auto &ru = mb.node("RandomUniformLike", {"x"}, {"r"}, "ru");
  attrInt(ru, "dtype", TensorProto::DOUBLE);
  attrFloat(ru, "high", 2.5f);
  attrTensor(mb.node("ConstantOfShape", {"dims"}, {"filled"}, "fill"), "value",
             test::int64Tensor("", {1}, {7}));

  auto r = import(mb, withOps({"LSTM", "Transpose", "Cast", "RandomUniformLike", "ConstantOfShape"},
                              {{"ConstantOfShape", 1}}));
  const Module &m = moduleOf(r);
  if (!r.ok())
    return;

  const Node &l = nodeNamed(m, "lstm");
  EXPECT_EQ(l.type, "LSTM");
  EXPECT_EQ(l.numOutputs, 2u) << "the unused first output keeps its slot";
  ASSERT_EQ(l.inputs.size(), 6u);
  EXPECT_FALSE(l.inputs[3].has_value()) << "'' is an unconnected slot";
  EXPECT_FALSE(l.inputs[4].has_value());
  EXPECT_EQ(producer(m, 0, l.inputs[5]).name, "h0");
  EXPECT_EQ(l.attr("hidden_size")->asInt(), 2);
  ASSERT_TRUE(l.attr("clip")->isFloat());
  EXPECT_EQ(l.attr("clip")->asFloat(), static_cast<double>(0.1f)) << "the float32 value, exactly";
  EXPECT_EQ(*l.attr("direction")->text(), "forward");
  EXPECT_TRUE(l.attr("direction")->isString());
  ASSERT_EQ(l.attr("activations")->asList().size(), 3u);
  EXPECT_EQ(l.attr("activations")->asList()[1].asString(), "Tanh");
  ASSERT_EQ(l.attr("activation_alpha")->asList().size(), 3u);
  EXPECT_EQ(l.attr("activation_alpha")->asList()[2].asFloat(), static_cast<double>(0.3f));

  EXPECT_EQ(intsOf(*nodeNamed(m, "tr").attr("perm")), (std::vector<int64_t>{2, 1, 0}));
  const AttrValue *to = nodeNamed(m, "c").attr("to");
  ASSERT_TRUE(to && to->isIdent());
  EXPECT_EQ(to->asIdent(), "f16");
  const Node &rn = nodeNamed(m, "ru");
  EXPECT_EQ(rn.attr("dtype")->asIdent(), "f64");
  EXPECT_EQ(rn.attr("high")->asFloat(), 2.5);
  const Node &fill = nodeNamed(m, "fill");
  ASSERT_TRUE(fill.attr("value") && fill.attr("value")->isTensor());
  EXPECT_EQ(fill.attr("value")->asTensor().type(), (TensorType{DType::I64, {1}}));
  EXPECT_EQ(fill.attr("value")->asTensor().getInt(0), 7);

  // Graph outputs in order, the second output of the LSTM as port 1.
  const Node &out = nodeNamed(m, "net_output");
  ASSERT_EQ(out.inputs.size(), 5u);
  EXPECT_EQ(out.inputs[0]->node, l.id);
  EXPECT_EQ(out.inputs[0]->index, 1u);
  EXPECT_EQ(producer(m, 0, out.inputs[1]).name, "tr");
  EXPECT_EQ(r.outputs, (std::vector<std::string>{"yh", "t", "half", "r", "filled"}));

  std::string text;
  if (!printsVersion2(m, text))
    GTEST_SKIP() << "the printer cannot print floats and tensors yet (graph-format v2)";
  EXPECT_NE(text.find("to = f16"), std::string::npos) << text;
  EXPECT_NE(text.find("lstm:1"), std::string::npos) << text;
  EXPECT_NE(text.find("outputs = 2"), std::string::npos) << text;
  EXPECT_NE(text.find("clip = 0.10000000149011612"), std::string::npos) << text;
  EXPECT_NE(text.find("LSTM(x, W, R, _, _, h0)"), std::string::npos) << text;
}

TEST(OnnxImport, InputsBecomeDataAndInitializersConst) {
  ModelBuilder mb;
  mb.input("x", kF32, {int64_t{2}, int64_t{2}})
      .input("w", kF32, {int64_t{2}, int64_t{2}}) // also an initializer: a Const, not a Data
      .input("y", kI64, {int64_t{3}})
      .output("s", kF32, {int64_t{2}, int64_t{2}})
      .output("y2", kI64, {int64_t{3}})
      .initializer(test::floatTensor("w", {2, 2}, {1, 2, 3, 4}))
      .initializer(test::int64Tensor("k", {3}, {-1, 0, 5}));
  mb.node("Add", {"x", "w"}, {"s"}, "add");
  mb.node("Mul", {"y", "k"}, {"y2"}, "");
  auto r = import(mb, withOps({"Add", "Mul"}));
  const Module &m = moduleOf(r);
  if (!r.ok())
    return;
  const Node &x = nodeNamed(m, "x");
  EXPECT_EQ(x.type, "Data");
  EXPECT_EQ(x.attr("index")->asInt(), 0);
  EXPECT_EQ(x.attr("out0.dtype")->asIdent(), "f32");
  EXPECT_EQ(intsOf(*x.attr("out0.shape")), (std::vector<int64_t>{2, 2}));
  const Node &y = nodeNamed(m, "y");
  EXPECT_EQ(y.attr("index")->asInt(), 1) << "initializers do not count";
  EXPECT_EQ(y.attr("out0.dtype")->asIdent(), "i64");
  const Node &w = nodeNamed(m, "w");
  EXPECT_EQ(w.type, "Const");
  EXPECT_EQ(valuesOf(w.attr("value")->asTensor()), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(valuesOf(nodeNamed(m, "k").attr("value")->asTensor()), (std::vector<double>{-1, 0, 5}));
  EXPECT_EQ(nodeNamed(m, "Mul_1").type, "Mul") << "an empty name becomes OpType_INDEX";
  ASSERT_EQ(r.inputs.size(), 2u);
  EXPECT_EQ(r.inputs[1].name, "y");
  EXPECT_EQ(r.inputs[1].index, 1);
  EXPECT_EQ(r.inputs[1].type, (TensorType{DType::I64, {3}}));
}

TEST(OnnxImport, ConstantNodesBecomeConst) {
  ModelBuilder mb;
  mb.output("a", kF32, {}).output("b", kI64, {int64_t{3}}).output("c", kF32, {int64_t{2}});
  attrFloat(mb.node("Constant", {}, {"a"}, "ca"), "value_float", 0.1f);
  attrInts(mb.node("Constant", {}, {"b"}, "cb"), "value_ints", {4, -5, 6});
  attrTensor(mb.node("Constant", {}, {"c"}), "value", test::floatTensor("", {2}, {1.5f, -0.0f}));
  auto r = import(mb, withOps({}));
  const Module &m = moduleOf(r);
  if (!r.ok())
    return;
  const Tensor &a = nodeNamed(m, "ca").attr("value")->asTensor();
  EXPECT_EQ(a.type(), (TensorType{DType::F32, {}}));
  EXPECT_EQ(a.getDouble(0), static_cast<double>(0.1f));
  const Tensor &b = nodeNamed(m, "cb").attr("value")->asTensor();
  EXPECT_EQ(b.type(), (TensorType{DType::I64, {3}}));
  EXPECT_EQ(valuesOf(b), (std::vector<double>{4, -5, 6}));
  const Node &c = nodeNamed(m, "Constant_2");
  EXPECT_EQ(c.type, "Const");
  const Tensor &ct = c.attr("value")->asTensor();
  EXPECT_TRUE(std::signbit(ct.getDouble(1))) << "-0 keeps its sign";
}

TEST(OnnxImport, NamesAreMadeUniqueAndMultipleOutputsReferenced) {
  ModelBuilder mb;
  mb.input("x", kF32, {int64_t{4}})
      .output("p", kF32, {int64_t{2}})
      .output("q", kF32, {int64_t{2}})
      .output("z", kF32, {int64_t{2}});
  attrInt(mb.node("Split", {"x"}, {"a", "b"}, "dup"), "axis", 0);
  mb.node("Relu", {"a"}, {"p"}, "dup");
  mb.node("Relu", {"b"}, {"q"}, "x"); // clashes with the input's Data
  mb.node("Add", {"a", "b"}, {"z"}, "");
  auto r = import(mb, withOps({"Split", "Relu", "Add"}));
  const Module &m = moduleOf(r);
  if (!r.ok())
    return;
  const Node &split = nodeNamed(m, "dup");
  EXPECT_EQ(split.type, "Split");
  EXPECT_EQ(split.numOutputs, 2u);
  EXPECT_EQ(nodeNamed(m, "dup_1").type, "Relu");
  EXPECT_EQ(nodeNamed(m, "x").type, "Data");
  EXPECT_EQ(nodeNamed(m, "x_1").type, "Relu");
  const Node &add = nodeNamed(m, "Add_3");
  EXPECT_EQ(add.inputs[0], (OutPort{split.id, 0}));
  EXPECT_EQ(add.inputs[1], (OutPort{split.id, 1}));
  EXPECT_NE(printModule(m).find("Add(dup, dup:1)"), std::string::npos) << printModule(m);
}

TEST(OnnxImport, IfBranchesReceiveOuterValuesAsInputs) {
  ModelBuilder mb;
  mb.input("cond", kBool, {})
      .input("x", kF32, {int64_t{2}})
      .output("res", kF32, {int64_t{2}})
      .initializer(test::floatTensor("c", {2}, {10, 20}));
  mb.node("Relu", {"x"}, {"z"}, "relu");
  auto &iff = mb.node("If", {"cond"}, {"res"}, "choose");
  auto then = test::attrGraph(iff, "then_branch", "then_body");
  then.output("t", kF32, {int64_t{2}});
  then.node("Add", {"x", "c"}, {"t0"}, "add");
  then.node("Add", {"t0", "x"}, {"t"}, "add2");
  auto els = test::attrGraph(iff, "else_branch", "else_body");
  els.output("e", kF32, {int64_t{2}});
  els.node("Identity", {"z"}, {"e"}, "id");
  auto r = import(mb, withOps({"Relu", "Add"}));
  const Module &m = moduleOf(r);
  if (!r.ok())
    return;
  const Node &n = nodeNamed(m, "choose");
  EXPECT_EQ(n.type, "If");
  ASSERT_EQ(n.subgraphs.size(), 2u);
  ASSERT_EQ(n.inputs.size(), 3u) << "cond, x (then), z (else); the constant c is copied in";
  EXPECT_EQ(producer(m, 0, n.inputs[0]).name, "cond");
  EXPECT_EQ(producer(m, 0, n.inputs[1]).name, "x");
  EXPECT_EQ(producer(m, 0, n.inputs[2]).name, "relu");

  GraphId tg = n.subgraphs[0], eg = n.subgraphs[1];
  EXPECT_EQ(m.graph(tg).name, "then_body");
  const Node &tx = nodeNamed(m, "x", tg);
  EXPECT_EQ(tx.type, "Data");
  EXPECT_EQ(tx.attr("_parent_node_index")->asInt(), 1);
  const Node &tc = nodeNamed(m, "c", tg);
  EXPECT_EQ(tc.type, "Const") << "a captured constant stays a constant in the branch";
  const Node &tout = nodeNamed(m, "net_output", tg);
  EXPECT_EQ(tout.attr("in0._parent_node_index")->asInt(), 0);
  EXPECT_EQ(producer(m, tg, tout.inputs[0]).name, "add2");

  const Node &ez = nodeNamed(m, "z", eg);
  EXPECT_EQ(ez.attr("_parent_node_index")->asInt(), 2);
  EXPECT_EQ(m.graph(eg).find("x"), kNoNode) << "the else branch does not read x";
  EXPECT_EQ(nodeNamed(m, "id", eg).type, "Identity");
  const Node &out = nodeNamed(m, "net_output");
  EXPECT_EQ(out.inputs[0], (OutPort{n.id, 0}));

  Diagnostics diags;
  inferModuleTypes(m, diags);
  EXPECT_TRUE(diags.empty());
}

/// Loop(M, cond, v) { v + 1, scan output v } with an outer value captured.
void buildLoop(ModelBuilder &mb, bool withM, bool withScan) {
  mb.input("cond", kBool, {}).input("v0", kF32, {int64_t{2}}).input("bias", kF32, {int64_t{2}});
  mb.output("v", kF32, {int64_t{2}});
  if (withScan)
    mb.output("scan", kF32, {int64_t{3}, int64_t{2}});
  if (withM)
    mb.initializer(test::int64Tensor("M", {}, {3}));
  std::vector<std::string> outs{"v"};
  if (withScan)
    outs.push_back("scan");
  auto &loop = mb.node("Loop", {withM ? "M" : "", "cond", "v0"}, outs, "loop");
  auto body = test::attrGraph(loop, "body", "loop_body");
  body.input("i", kI64, {}).input("c_in", kBool, {}).input("v_in", kF32, {int64_t{2}});
  body.output("c_out", kBool, {}).output("v_out", kF32, {int64_t{2}});
  if (withScan)
    body.output("s_out", kF32, {int64_t{2}});
  body.node("Identity", {"c_in"}, {"c_out"}, "keep");
  body.node("Add", {"v_in", "bias"}, {"v_out"}, "step");
  if (withScan)
    body.node("Identity", {"v_in"}, {"s_out"}, "record");
}

TEST(OnnxImport, LoopBecomesWhile) {
  ModelBuilder mb;
  buildLoop(mb, true, true);
  auto r = import(mb, withOps({"Add", "Less", "And", "Equal", "Where"}));
  const Module &m = moduleOf(r);
  if (!r.ok())
    return;
  const Node &w = nodeNamed(m, "loop");
  EXPECT_EQ(w.type, "While");
  EXPECT_EQ(w.attr("max_iterations")->asInt(), 3) << "M is a constant";
  // iteration, M, cond, v, scan accumulator, captured bias.
  ASSERT_EQ(w.inputs.size(), 6u);
  EXPECT_EQ(w.numOutputs, 6u);
  // The variables the body changes start as copies; M and the captured
  // bias are written back unchanged.
  const Node &iter0 = copiedFrom(m, 0, w.inputs[0]);
  ASSERT_NE(iter0.attr("value"), nullptr);
  EXPECT_EQ(iter0.attr("value")->asTensor().type(), (TensorType{DType::I64, {}}));
  EXPECT_EQ(iter0.attr("value")->asTensor().getInt(0), 0);
  EXPECT_EQ(producer(m, 0, w.inputs[1]).name, "M");
  EXPECT_EQ(copiedFrom(m, 0, w.inputs[2]).name, "cond");
  EXPECT_EQ(copiedFrom(m, 0, w.inputs[3]).name, "v0");
  const Node &acc = copiedFrom(m, 0, w.inputs[4]);
  ASSERT_NE(acc.attr("value"), nullptr);
  EXPECT_EQ(acc.attr("value")->asTensor().type(), (TensorType{DType::F32, {3, 2}}));
  EXPECT_EQ(describedPortType(producer(m, 0, w.inputs[4]), 0), (TensorType{DType::F32, {3, 2}}));
  EXPECT_EQ(producer(m, 0, w.inputs[5]).name, "bias");

  const Node &out = nodeNamed(m, "net_output");
  EXPECT_EQ(out.inputs[0], (OutPort{w.id, 3}));
  EXPECT_EQ(out.inputs[1], (OutPort{w.id, 4}));

  ASSERT_EQ(w.subgraphs.size(), 2u);
  GraphId cg = w.subgraphs[0], bg = w.subgraphs[1];
  // cond: (iteration < M) and cond.
  const Graph &cond = m.graph(cg);
  ASSERT_EQ(cond.nodesOfType("NetOutput").size(), 1u);
  const Node &cout = cond.node(cond.nodesOfType("NetOutput")[0]);
  const Node &conj = producer(m, cg, cout.inputs[0]);
  EXPECT_EQ(conj.type, "And");
  const Node &less = producer(m, cg, conj.inputs[0]);
  EXPECT_EQ(less.type, "Less");
  EXPECT_EQ(producer(m, cg, less.inputs[0]).attr("_parent_node_index")->asInt(), 0);
  EXPECT_EQ(producer(m, cg, less.inputs[1]).attr("_parent_node_index")->asInt(), 1);
  EXPECT_EQ(producer(m, cg, conj.inputs[1]).attr("_parent_node_index")->asInt(), 2);

  // body: every loop variable written back, in order.
  const Graph &body = m.graph(bg);
  EXPECT_EQ(body.name, "loop_body");
  const Node &bout = body.node(body.nodesOfType("NetOutput")[0]);
  ASSERT_EQ(bout.inputs.size(), 6u);
  for (uint32_t k = 0; k < 6; ++k)
    EXPECT_EQ(bout.portAttr(false, k, "_parent_node_index")->asInt(), k);
  const Node &next = producer(m, bg, bout.inputs[0]);
  EXPECT_EQ(next.type, "Add");
  EXPECT_EQ(producer(m, bg, next.inputs[0]).name, "i");
  EXPECT_EQ(producer(m, bg, bout.inputs[1]).attr("_parent_node_index")->asInt(), 1)
      << "M written back unchanged";
  EXPECT_EQ(producer(m, bg, bout.inputs[2]).name, "keep");
  EXPECT_EQ(producer(m, bg, bout.inputs[3]).name, "step");
  const Node &where = producer(m, bg, bout.inputs[4]);
  EXPECT_EQ(where.type, "Where");
  const Node &eq = producer(m, bg, where.inputs[0]);
  EXPECT_EQ(eq.type, "Equal");
  const Tensor &rows = producer(m, bg, eq.inputs[0]).attr("value")->asTensor();
  EXPECT_EQ(rows.type(), (TensorType{DType::I64, {3, 1}}));
  EXPECT_EQ(valuesOf(rows), (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(producer(m, bg, where.inputs[1]).name, "record");
  EXPECT_EQ(producer(m, bg, where.inputs[2]).attr("_parent_node_index")->asInt(), 4);
  const Node &bias = producer(m, bg, bout.inputs[5]);
  EXPECT_EQ(bias.name, "bias");
  EXPECT_EQ(bias.attr("_parent_node_index")->asInt(), 5) << "captured, written back unchanged";
  EXPECT_EQ(producer(m, bg, nodeNamed(m, "step", bg).inputs[1]).name, "bias");
}

TEST(OnnxImport, LoopWithoutTripCountRunsOnCond) {
  ModelBuilder mb;
  buildLoop(mb, false, false);
  auto r = import(mb, withOps({"Add"}));
  const Module &m = moduleOf(r);
  if (!r.ok())
    return;
  const Node &w = nodeNamed(m, "loop");
  EXPECT_EQ(w.attr("max_iterations")->asInt(), 1000000);
  ASSERT_EQ(w.inputs.size(), 5u);
  const Graph &cond = m.graph(w.subgraphs[0]);
  const Node &cout = cond.node(cond.nodesOfType("NetOutput")[0]);
  EXPECT_EQ(producer(m, w.subgraphs[0], cout.inputs[0]).attr("_parent_node_index")->asInt(), 2)
      << "the condition alone";
  EXPECT_EQ(cond.nodesOfType("Less").size(), 0u);
}

TEST(OnnxImport, LoopScanOutputsNeedAConstantTripCount) {
  ModelBuilder mb;
  buildLoop(mb, false, true);
  // M as a graph input instead of a constant.
  mb.input("M", kI64, {});
  mb.model().mutable_graph()->mutable_node(0)->set_input(0, "M");
  auto ops = withOps({"Add", "Less", "And", "Equal", "Where"});
  auto r = import(mb, ops);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(joined(r.errors).find("needs a constant trip count"), std::string::npos)
      << joined(r.errors);
  // Freezing the trip count (it decides the scan output's shape) fixes it.
  ops.inputData["M"] = Tensor(TensorType{DType::I64, {}});
  ops.inputData["M"].setInt(0, 3);
  ops.freezeShapeOperands = true;
  auto frozen = import(mb, ops);
  ASSERT_TRUE(frozen.ok()) << joined(frozen.errors);
  EXPECT_EQ(nodeNamed(*frozen.module, "loop").attr("max_iterations")->asInt(), 3);
  EXPECT_EQ(nodeNamed(*frozen.module, "M").type, "Const");
  ASSERT_EQ(frozen.inputs.size(), 4u);
  EXPECT_TRUE(frozen.inputs[3].frozen);
  EXPECT_FALSE(frozen.inputs[3].index.has_value());
  EXPECT_FALSE(frozen.inputs[1].frozen) << "v0 does not decide a type";
}

/// Loop(M = 4, cond, y) { y + x[i : i + width] } with a scan output of each
/// y: Slice's starts come from the iteration counter (ONNX's loop11).
void buildCounterSlice(ModelBuilder &mb, int64_t width) {
  mb.input("cond", kBool, {}).input("y", kF32, {width});
  mb.output("res_y", kF32, {width});
  mb.initializer(test::int64Tensor("M", {}, {4}));
  auto &loop = mb.node("Loop", {"M", "cond", "y"}, {"res_y", "res_scan"}, "loop");
  auto body = test::attrGraph(loop, "body", "loop_body");
  body.input("i", kI64, {}).input("c_in", kBool, {}).input("y_in", kF32, {width});
  body.output("c_out", kBool, {}).output("y_out", kF32, {width}).untypedOutput("scan_out");
  body.initializer(test::floatTensor("x", {6}, {1, 2, 3, 4, 5, 6}));
  body.initializer(test::int64Tensor("w", {}, {width}));
  body.initializer(test::int64Tensor("zero", {1}, {0}));
  body.node("Identity", {"c_in"}, {"c_out"}, "keep");
  body.node("Add", {"i", "w"}, {"end"}, "end");
  body.node("Unsqueeze", {"i", "zero"}, {"start1"}, "start1");
  body.node("Unsqueeze", {"end", "zero"}, {"end1"}, "end1");
  body.node("Slice", {"x", "start1", "end1"}, {"part"}, "part");
  body.node("Add", {"y_in", "part"}, {"y_out"}, "step");
  body.node("Identity", {"y_out"}, {"scan_out"}, "record");
}

TEST(OnnxImport, ShapeOperandFromTheLoopCounterIsTypedPerIteration) {
  ModelBuilder mb;
  buildCounterSlice(mb, 2);
  auto r = import(mb, ImportOptions{});
  const Module &m = moduleOf(r);
  if (!r.ok())
    return;
  const Node &w = nodeNamed(m, "loop");
  GraphId bg = w.subgraphs[1];
  // The starts stay computed at run time; the output type is the one every
  // iteration 0..3 gives (x[i : i + 2] of 6 elements), checked when it runs.
  const Node &part = nodeNamed(m, "part", bg);
  EXPECT_EQ(producer(m, bg, part.inputs[1]).type, "Unsqueeze");
  EXPECT_EQ(describedPortType(part, 0), (TensorType{DType::F32, {2}}));
  EXPECT_TRUE(hasRuntimeShapeOperands(m.graph(bg), part));
  // The untyped scan output is typed by graphvet's inference: [M, 2].
  const Node &acc = copiedFrom(m, 0, w.inputs[4]);
  EXPECT_EQ(acc.attr("value")->asTensor().type(), (TensorType{DType::F32, {4, 2}}));
  Diagnostics diags;
  ModuleTypes types = inferModuleTypes(m, diags);
  EXPECT_TRUE(diags.empty());
  ASSERT_NE(types.of(0, OutPort{w.id, 4}), nullptr);
  EXPECT_EQ(*types.of(0, OutPort{w.id, 4}), (TensorType{DType::F32, {4, 2}}));
}

TEST(OnnxImport, ShapeOperandWhoseTypeChangesBetweenIterationsIsAnError) {
  // x[i : i + 4] of 6 elements: 4 elements in iterations 0..2, 3 in
  // iteration 3: no static type.
  ModelBuilder mb;
  buildCounterSlice(mb, 4);
  auto r = import(mb, ImportOptions{});
  ASSERT_FALSE(r.ok());
  std::string text = joined(r.errors);
  EXPECT_NE(text.find("node 'part': Slice's input 1 ('start1') is computed at run time"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("f32[4] in iteration 0, f32[3] in iteration 3"), std::string::npos) << text;
}

TEST(OnnxImport, LoopCarriedValueOfAnotherTypeIsAnError) {
  // The body concatenates to the loop-carried value: ONNX allows its shape
  // to grow, graphvet's loop variables keep one type.
  ModelBuilder mb;
  mb.input("cond", kBool, {}).input("v0", kF32, {int64_t{2}});
  mb.output("v", kF32, {int64_t{2}});
  mb.initializer(test::int64Tensor("M", {}, {2}));
  auto &loop = mb.node("Loop", {"M", "cond", "v0"}, {"v"}, "loop");
  auto body = test::attrGraph(loop, "body", "loop_body");
  body.input("i", kI64, {}).input("c_in", kBool, {}).untypedInput("v_in");
  body.output("c_out", kBool, {}).untypedOutput("v_out");
  body.node("Identity", {"c_in"}, {"c_out"}, "keep");
  auto &cat = body.node("Concat", {"v_in", "v_in"}, {"v_out"}, "grow");
  test::attrInt(cat, "axis", 0);
  auto r = import(mb, ImportOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(joined(r.errors).find("loop-carried value 'v0' is f32[2] before the loop but the body "
                                  "makes it f32[4]"),
            std::string::npos)
      << joined(r.errors);
}

TEST(OnnxImport, IfWithAKnownConditionIsItsBranch) {
  // cond = Size(x) == 6 is known from x's static shape: the If is replaced
  // by its then branch, whose Squeeze would not type in the else branch's
  // place (the branches' results differ in shape).
  ModelBuilder mb;
  mb.input("x", kF32, {int64_t{1}, int64_t{6}});
  mb.output("y", kF32, {int64_t{6}});
  mb.initializer(test::int64Tensor("six", {}, {6}));
  mb.initializer(test::int64Tensor("axis0", {1}, {0}));
  mb.node("Size", {"x"}, {"n"}, "n");
  mb.node("Equal", {"n", "six"}, {"flat"}, "flat");
  auto &choose = mb.node("If", {"flat"}, {"y"}, "choose");
  auto then = test::attrGraph(choose, "then_branch", "then_body");
  then.untypedOutput("squeezed");
  then.node("Squeeze", {"x", "axis0"}, {"squeezed"}, "squeeze");
  auto other = test::attrGraph(choose, "else_branch", "else_body");
  other.untypedOutput("same");
  other.node("Identity", {"x"}, {"same"}, "same");
  auto r = import(mb, ImportOptions{});
  const Module &m = moduleOf(r);
  if (!r.ok())
    return;
  EXPECT_EQ(m.numGraphs(), 1u) << "no If, no branches";
  const Node &out = nodeNamed(m, "net_output");
  EXPECT_EQ(producer(m, 0, out.inputs[0]).name, "squeeze");
  EXPECT_EQ(m.graph(0).nodesOfType("If").size(), 0u);
}

TEST(OnnxImport, UnsupportedOpsAndTypesAreReportedTogether) {
  ModelBuilder mb(13);
  mb.input("x", kF32, {int64_t{4}})
      .input("k", kI64, {int64_t{1}})
      .input("s", TensorProto::STRING, {int64_t{2}})
      .output("v1", kF32, {int64_t{1}})
      .output("v2", kF32, {int64_t{1}})
      .output("e", kF32, {int64_t{4}})
      .output("r", kF32, {int64_t{4}})
      .output("u", TensorProto::STRING, {int64_t{2}});
  mb.node("TopK", {"x", "k"}, {"v1", "i1"}, "t1");
  mb.node("TopK", {"x", "k"}, {"v2", "i2"}, "t2");
  attrString(mb.node("Einsum", {"x"}, {"e"}, "e1"), "equation", "i->i");
  mb.node("Relu", {"x"}, {"r"}, "relu");
  mb.node("Identity", {"s"}, {"u"}, "sid");
  auto r = import(mb, withOps({"Relu"}));
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_EQ(r.errors[0], "unsupported ONNX ops: Einsum (node 'e1'), TopK (2 nodes); unsupported "
                         "element types: STRING (input 's', output 'u')");
  EXPECT_EQ(r.unsupportedOps.at("TopK"), (std::vector<std::string>{"t1", "t2"}));
  EXPECT_EQ(r.unsupportedTypes.size(), 1u);
}

TEST(OnnxImport, StringInputIsRejected) {
  ModelBuilder mb;
  mb.input("s", TensorProto::STRING, {int64_t{2}}).output("u", TensorProto::STRING, {int64_t{2}});
  mb.node("Identity", {"s"}, {"u"}, "id");
  auto r = import(mb, withOps({}));
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0], "unsupported element types: STRING (input 's', output 'u')");
  EXPECT_TRUE(r.unsupportedOps.empty());
}

TEST(OnnxImport, ComplexAndCastToStringAreRejected) {
  ModelBuilder mb;
  mb.input("x", kF32, {int64_t{2}}).output("y", TensorProto::STRING, {int64_t{2}});
  attrInt(mb.node("Cast", {"x"}, {"y"}, "c"), "to", TensorProto::STRING);
  auto r = import(mb, withOps({"Cast"}));
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("STRING (output 'y', attribute 'to' of node 'c')"), std::string::npos)
      << r.errors[0];
}

TEST(OnnxImport, OtherDomainsAreUnsupportedOps) {
  ModelBuilder mb;
  mb.addOpset("com.example", 1);
  mb.input("x", kF32, {int64_t{2}}).output("y", kF32, {int64_t{2}});
  mb.node("Fancy", {"x"}, {"y"}, "f").set_domain("com.example");
  auto r = import(mb, withOps({}));
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_EQ(r.errors[0], "unsupported ONNX ops: com.example.Fancy (node 'f')");
}

TEST(OnnxImport, FreeDimensionsAreRejectedUnlessGiven) {
  ModelBuilder mb;
  mb.input("x", kF32, {std::string("N"), int64_t{3}})
      .output("y", kF32, {std::string("N"), int64_t{3}});
  mb.node("Relu", {"x"}, {"y"}, "relu");
  auto opts = withOps({"Relu"});
  auto r = import(mb, opts);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0], "input 'x' has free dimensions: dim 0 ('N'); fix them with "
                         "--input-shape x=Dx3");
  ASSERT_EQ(r.freeDimensions.size(), 1u);

  opts.inputShapes["x"] = {5, 3};
  auto fixed = import(mb, opts);
  ASSERT_TRUE(fixed.ok()) << joined(fixed.errors);
  EXPECT_EQ(intsOf(*nodeNamed(*fixed.module, "x").attr("out0.shape")),
            (std::vector<int64_t>{5, 3}));

  opts.inputShapes["x"] = {5, 4};
  auto bad = import(mb, opts);
  ASSERT_EQ(bad.errors.size(), 1u);
  EXPECT_EQ(bad.errors[0], "the shape [5, 4] given for input 'x' does not fit the model's [?, 3]");

  opts.inputShapes.clear();
  opts.inputShapes["nope"] = {1};
  auto unknown = import(mb, opts);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(joined(unknown.errors).find("the model has no input of that name"), std::string::npos);

  // A value for the input fixes its free dimensions too (a test data set).
  opts.inputShapes.clear();
  opts.inputData["x"] = Tensor(TensorType{DType::F32, {2, 3}});
  auto byData = import(mb, opts);
  ASSERT_TRUE(byData.ok()) << joined(byData.errors);
  EXPECT_EQ(byData.inputs[0].type, (TensorType{DType::F32, {2, 3}}));
  EXPECT_EQ(nodeNamed(*byData.module, "x").type, "Data") << "not frozen without the option";
}

TEST(OnnxImport, UnsupportedOpsTypesAndFreeDimensionsAreOneError) {
  ModelBuilder mb;
  mb.input("x", kF32, {std::string("N"), int64_t{3}})
      .input("s", TensorProto::STRING, {int64_t{2}})
      .input("v", kF32, {std::string("B"), std::string("T")})
      .output("e", kF32, {int64_t{3}, std::string("N")})
      .output("t", TensorProto::STRING, {int64_t{2}})
      .output("w", kF32, {std::string("B"), std::string("T")});
  auto &ein = mb.node("Einsum", {"x"}, {"e"}, "e1");
  test::attrString(ein, "equation", "ij->ji");
  mb.node("Identity", {"s"}, {"t"}, "sid");
  mb.node("Relu", {"v"}, {"w"}, "relu");
  auto r = import(mb, withOps({"Relu"}));
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_EQ(r.errors[0], "unsupported ONNX ops: Einsum (node 'e1'); unsupported element types: "
                         "STRING (input 's', output 't'); input 'x' has free dimensions: dim 0 "
                         "('N'); fix them with --input-shape x=Dx3; input 'v' has free "
                         "dimensions: dim 0 ('B'), dim 1 ('T'); fix them with --input-shape "
                         "v=DxD");
  EXPECT_EQ(r.unsupportedOps.count("Einsum"), 1u);
  EXPECT_EQ(r.freeDimensions.size(), 2u);
}

TEST(OnnxImport, FreezeValuesFillTheInputsType) {
  ModelBuilder mb;
  mb.input("x", kF32, {int64_t{2}}).input("sr", kI64, {}).output("z", kF32, {int64_t{2}});
  auto &cast = mb.node("Cast", {"sr"}, {"srf"}, "to_float");
  test::attrInt(cast, "to", TensorProto::FLOAT);
  mb.node("Mul", {"x", "srf"}, {"z"}, "scale");
  ImportOptions opts;
  opts.freezeValues["sr"] = "16000";
  auto r = import(mb, opts);
  const Module &m = moduleOf(r);
  if (!r.ok())
    return;
  const Node &sr = nodeNamed(m, "sr");
  EXPECT_EQ(sr.type, "Const");
  EXPECT_EQ(sr.attr("value")->asTensor().type(), (TensorType{DType::I64, {}}));
  EXPECT_EQ(sr.attr("value")->asTensor().getInt(0), 16000);
  ASSERT_EQ(r.inputs.size(), 2u);
  EXPECT_TRUE(r.inputs[1].frozen);
  EXPECT_EQ(r.inputs[0].index, std::optional<int64_t>(0));

  opts.freezeValues["sr"] = "16k";
  auto bad = import(mb, opts);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(joined(bad.errors)
                .find("cannot freeze input 'sr' (i64[]) to '16k': expected an "
                      "integer"),
            std::string::npos)
      << joined(bad.errors);
  // Bounded like any buffer: a frozen input is a constant held in memory.
  ModelBuilder wide;
  wide.input("x", kF32, {std::string("N")}).output("y", kF32, {std::string("N")});
  wide.node("Relu", {"x"}, {"y"}, "relu");
  ImportOptions huge;
  huge.inputShapes["x"] = {int64_t{1} << 40};
  huge.freezeValues["x"] = "1";
  auto tooLarge = import(wide, huge);
  EXPECT_NE(joined(tooLarge.errors).find("is larger than"), std::string::npos)
      << joined(tooLarge.errors);

  opts.freezeValues.clear();
  opts.freezeValues["rate"] = "1";
  auto unknown = import(mb, opts);
  EXPECT_NE(joined(unknown.errors)
                .find("cannot freeze 'rate': the model has no input of that "
                      "name"),
            std::string::npos);
}

TEST(OnnxImport, FreezeInputsBecomeConst) {
  ModelBuilder mb;
  mb.input("x", kF32, {int64_t{2}}).input("y", kF32, {int64_t{2}}).output("z", kF32, {int64_t{2}});
  mb.node("Add", {"x", "y"}, {"z"}, "add");
  auto opts = withOps({"Add"});
  Tensor y(TensorType{DType::F32, {2}});
  y.setDouble(0, 1.5);
  y.setDouble(1, -2);
  opts.freezeInputs["y"] = y;
  auto r = import(mb, opts);
  const Module &m = moduleOf(r);
  if (!r.ok())
    return;
  const Node &c = nodeNamed(m, "y");
  EXPECT_EQ(c.type, "Const");
  EXPECT_EQ(c.attr("value")->asTensor(), y);
  EXPECT_EQ(nodeNamed(m, "x").attr("index")->asInt(), 0);
  ASSERT_EQ(r.inputs.size(), 2u);
  EXPECT_TRUE(r.inputs[1].frozen);

  opts.freezeInputs["y"] = Tensor(TensorType{DType::F64, {2}});
  auto bad = import(mb, opts);
  ASSERT_EQ(bad.errors.size(), 1u);
  EXPECT_EQ(bad.errors[0], "the value frozen into input 'y' is f64[2], the input is f32[2]");
}

TEST(OnnxImport, FreezeShapeOperandsFreezesExactlyThoseInputs) {
  ModelBuilder mb;
  mb.input("x", kF32, {int64_t{2}, int64_t{3}})
      .input("shape", kI64, {int64_t{2}})
      .input("y", kF32, {int64_t{3}, int64_t{2}})
      .output("r", kF32, {int64_t{3}, int64_t{2}})
      .output("s", kF32, {int64_t{3}, int64_t{2}})
      .output("q", kF32, {int64_t{3}, int64_t{2}});
  mb.node("Reshape", {"x", "shape"}, {"r"}, "reshape");
  // Through an Identity: still a shape operand, computed at import.
  mb.node("Identity", {"shape"}, {"shape2"}, "same");
  mb.node("Reshape", {"x", "shape2"}, {"s"}, "reshape2");
  // Through Shape: only y's type matters, so y is not frozen.
  mb.node("Shape", {"y"}, {"yshape"}, "shape_of_y");
  mb.node("Reshape", {"x", "yshape"}, {"q"}, "reshape3");
  auto opts = withOps({"Reshape", "Shape"}, {{"Reshape", 2}});
  opts.freezeShapeOperands = true;
  Tensor shape(TensorType{DType::I64, {2}});
  shape.setInt(0, 3);
  shape.setInt(1, 2);
  opts.inputData["shape"] = shape;
  opts.inputData["x"] = Tensor(TensorType{DType::F32, {2, 3}});
  opts.inputData["y"] = Tensor(TensorType{DType::F32, {3, 2}});
  auto r = import(mb, opts);
  const Module &m = moduleOf(r);
  if (!r.ok())
    return;
  EXPECT_EQ(nodeNamed(m, "x").type, "Data");
  EXPECT_EQ(nodeNamed(m, "y").type, "Data");
  const Node &s = nodeNamed(m, "shape");
  EXPECT_EQ(s.type, "Const");
  EXPECT_EQ(producer(m, 0, nodeNamed(m, "reshape").inputs[1]).name, "shape");
  const Node &s2 = producer(m, 0, nodeNamed(m, "reshape2").inputs[1]);
  EXPECT_EQ(s2.type, "Const");
  EXPECT_EQ(s2.name, "same");
  const Node &ys = producer(m, 0, nodeNamed(m, "reshape3").inputs[1]);
  EXPECT_EQ(ys.type, "Const") << "Shape of a static type is computed at import";
  EXPECT_EQ(valuesOf(ys.attr("value")->asTensor()), (std::vector<double>{3, 2}));
  EXPECT_EQ(m.graph(0).nodesOfType("Shape").size(), 0u) << "the computed Shape is removed";
  EXPECT_EQ(m.graph(0).nodesOfType("Identity").size(), 0u);
  EXPECT_EQ(r.inputs[0].index, 0);
  EXPECT_FALSE(r.inputs[1].index.has_value());
  EXPECT_EQ(r.inputs[2].index, 2) << "indices keep the model's input positions";
}

TEST(OnnxImport, ReportsGraphvetTypeInferenceErrors) {
  // Structural ops only, so the types are the importer's and graphvet's own.
  ModelBuilder mb;
  mb.input("cond", kBool, {}).input("x", kF32, {int64_t{2}}).output("res", kF32, {int64_t{2}});
  auto &iff = mb.node("If", {"cond"}, {"res"}, "choose");
  auto then = test::attrGraph(iff, "then_branch", "then_body");
  then.output("t", kF32, {int64_t{2}});
  then.node("Identity", {"x"}, {"t"}, "same");
  auto els = test::attrGraph(iff, "else_branch", "else_body");
  els.output("e", kF32, {int64_t{2}});
  attrTensor(els.node("Constant", {}, {"e"}, "k"), "value", test::floatTensor("", {2}, {1, 2}));
  ImportOptions opts;
  auto r = import(mb, opts);
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  Diagnostics diags;
  ModuleTypes types = inferModuleTypes(*r.module, diags);
  EXPECT_TRUE(diags.empty());
  EXPECT_EQ(*types.of(0, nodeNamed(*r.module, "choose").id, 0), (TensorType{DType::F32, {2}}));

  // ONNX lets branches disagree on shapes; graphvet's static types do not.
  mb.model()
      .mutable_graph()
      ->mutable_node(0)
      ->mutable_attribute(1)
      ->mutable_g()
      ->mutable_node(0)
      ->mutable_attribute(0)
      ->mutable_t()
      ->CopyFrom(test::floatTensor("", {3}, {1, 2, 3}));
  mb.model()
      .mutable_graph()
      ->mutable_node(0)
      ->mutable_attribute(1)
      ->mutable_g()
      ->mutable_output(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_value(3);
  mb.model()
      .mutable_graph()
      ->mutable_output(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_param("K");
  auto bad = import(mb, opts);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(joined(bad.errors)
                .find("'choose': output 0 is f32[2] in branch "
                      "'then_body' but f32[3] in branch 'else_body'"),
            std::string::npos)
      << joined(bad.errors);
}

TEST(OnnxImport, CheckerRejectsInvalidModels) {
  ModelBuilder mb;
  mb.input("x", kF32, {int64_t{2}}).output("y", kF32, {int64_t{2}});
  mb.node("Relu", {"nowhere"}, {"y"}, "relu");
  auto r = import(mb, withOps({"Relu"}));
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].rfind("the ONNX checker rejects the model: ", 0), 0u) << r.errors[0];
  auto garbage = importOnnxBytes("not a model", "", withOps({}));
  ASSERT_EQ(garbage.errors.size(), 1u);
  EXPECT_EQ(garbage.errors[0], "not a serialized ONNX model (ModelProto)");
  auto missing = importOnnx("/nonexistent/model.onnx", withOps({}));
  EXPECT_EQ(missing.errors, (std::vector<std::string>{"cannot open file"}));
}

class OnnxFiles : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = std::filesystem::path(GRAPHVET_ONNX_TEST_DIR) /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  std::string write(const std::string &name, const std::string &bytes) {
    std::filesystem::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
  std::filesystem::path dir_;
};

TEST_F(OnnxFiles, ReadsTensorProtoFiles) {
  TensorProto h;
  h.set_name("half");
  h.set_data_type(TensorProto::FLOAT16);
  h.add_dims(2);
  h.add_int32_data(0x3c00); // 1.0
  h.add_int32_data(0xc000); // -2.0
  std::string err, name;
  auto t = readTensorProto(write("h.pb", h.SerializeAsString()), err, &name);
  ASSERT_TRUE(t) << err;
  EXPECT_EQ(name, "half");
  EXPECT_EQ(t->type(), (TensorType{DType::F16, {2}}));
  EXPECT_EQ(valuesOf(*t), (std::vector<double>{1.0, -2.0}));

  TensorProto b;
  b.set_data_type(TensorProto::BOOL);
  b.add_dims(3);
  b.set_raw_data(std::string("\x00\x01\x00", 3));
  t = readTensorProto(write("b.pb", b.SerializeAsString()), err);
  ASSERT_TRUE(t) << err;
  EXPECT_EQ(valuesOf(*t), (std::vector<double>{0, 1, 0}));

  TensorProto s;
  s.set_name("words");
  s.set_data_type(TensorProto::STRING);
  s.add_dims(1);
  s.add_string_data("hi");
  EXPECT_FALSE(readTensorProto(write("s.pb", s.SerializeAsString()), err));
  EXPECT_EQ(err, "tensor 'words': element type STRING is not supported");

  TensorProto shortRaw = test::floatTensor("w", {3}, {1, 2});
  EXPECT_FALSE(readTensorProto(write("w.pb", shortRaw.SerializeAsString()), err));
  EXPECT_EQ(err, "tensor 'w': raw data has 8 bytes, 12 expected for f32[3]");
  EXPECT_FALSE(readTensorProto((dir_ / "missing.pb").string(), err));
  EXPECT_EQ(err, "cannot open file");
}

TEST_F(OnnxFiles, ExternalInitializersAndTestDataSets) {
  float w[2] = {0.5f, -4.0f};
  std::string raw(16, '\0');
  std::memcpy(raw.data() + 8, w, sizeof w);
  write("weights.bin", raw);
  ModelBuilder mb;
  mb.input("x", kF32, {std::string("N")}).output("y", kF32, {std::string("N")});
  TensorProto ext;
  ext.set_name("w");
  ext.set_data_type(TensorProto::FLOAT);
  ext.add_dims(2);
  ext.set_data_location(TensorProto::EXTERNAL);
  auto *kv = ext.add_external_data();
  kv->set_key("location");
  kv->set_value("weights.bin");
  kv = ext.add_external_data();
  kv->set_key("offset");
  kv->set_value("8");
  kv = ext.add_external_data();
  kv->set_key("length");
  kv->set_value("8");
  mb.initializer(ext);
  mb.node("Add", {"x", "w"}, {"y"}, "add");
  std::string model = write("model.onnx", mb.bytes());
  std::filesystem::create_directories(dir_ / "test_data_set_0");
  write("test_data_set_0/input_0.pb", test::floatTensor("", {2}, {1, 2}).SerializeAsString());

  auto opts = withOps({"Add"});
  opts.inputDataDir = (dir_ / "test_data_set_0").string();
  auto r = importOnnx(model, opts);
  const Module &m = moduleOf(r);
  if (!r.ok())
    return;
  EXPECT_EQ(valuesOf(nodeNamed(m, "w").attr("value")->asTensor()),
            (std::vector<double>{0.5, -4.0}));
  EXPECT_EQ(intsOf(*nodeNamed(m, "x").attr("out0.shape")), (std::vector<int64_t>{2}))
      << "the data set's shape fixes the free dimension";
}

TEST_F(OnnxFiles, Bfloat16TestDataStoredAsUint16IsReadAsBfloat16) {
  // ONNX's test generator writes bfloat16 values as UINT16 tensors.
  ModelBuilder mb;
  mb.input("x", TensorProto::BFLOAT16, {int64_t{2}})
      .input("shape", kI64, {int64_t{2}})
      .output("y", TensorProto::BFLOAT16, {int64_t{1}, int64_t{2}});
  mb.node("Reshape", {"x", "shape"}, {"y"}, "r");
  std::string model = write("model.onnx", mb.bytes());
  std::filesystem::create_directories(dir_ / "data");
  TensorProto bits;
  bits.set_data_type(TensorProto::UINT16);
  bits.add_dims(2);
  bits.add_int32_data(0x3f80); // 1.0
  bits.add_int32_data(0xc000); // -2.0
  write("data/input_0.pb", bits.SerializeAsString());
  write("data/input_1.pb", test::int64Tensor("shape", {2}, {1, 2}).SerializeAsString());
  // A stub that makes the data operand a shape operand too, so both freeze.
  auto opts = withOps({"Reshape"}, {{"Reshape", 3}});
  opts.inputDataDir = (dir_ / "data").string();
  opts.freezeShapeOperands = true;
  auto r = importOnnx(model, opts);
  const Module &m = moduleOf(r);
  if (!r.ok())
    return;
  const Tensor &x = nodeNamed(m, "x").attr("value")->asTensor();
  EXPECT_EQ(x.type(), (TensorType{DType::BF16, {2}}));
  EXPECT_EQ(valuesOf(x), (std::vector<double>{1.0, -2.0}));
}

TEST(OnnxImport, ParsesShapeText) {
  EXPECT_EQ(parseShapeText("1x3x224x224"), (Shape{1, 3, 224, 224}));
  EXPECT_EQ(parseShapeText(""), (Shape{}));
  EXPECT_EQ(parseShapeText("0"), (Shape{0}));
  EXPECT_FALSE(parseShapeText("1x"));
  EXPECT_FALSE(parseShapeText("x1"));
  EXPECT_FALSE(parseShapeText("-1"));
  EXPECT_FALSE(parseShapeText("1,2"));
}

TEST(OnnxImport, ElementTypesMapBothWays) {
  for (int i = 0; i < kNumDTypes; ++i) {
    auto d = static_cast<DType>(i);
    EXPECT_EQ(dtypeOfElemType(elemTypeOfDType(d)), d) << dtypeName(d);
  }
  EXPECT_FALSE(dtypeOfElemType(TensorProto::STRING));
  EXPECT_FALSE(dtypeOfElemType(TensorProto::COMPLEX64));
  EXPECT_FALSE(dtypeOfElemType(TensorProto::COMPLEX128));
  EXPECT_EQ(elemTypeName(TensorProto::COMPLEX64), "COMPLEX64");
}

} // namespace
} // namespace graphvet::onnximport
