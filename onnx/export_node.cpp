// Writing one numeric op as ONNX: what ONNX cannot express is refused (ops
// without an ONNX schema at the target opset, GE forms, in-place writes,
// views and variable bindings set by attributes), graphvet's own attributes
// are dropped (`_...`, port descriptions, `onnx_opset`, `layout`), the rest
// is converted through the op's schema (so an empty list or an int given for
// a float attribute gets the schema's kind). Ops written in an older opset's
// form (the importer reads both) are rewritten into the target's, and an
// `layout = "NHWC"` op is written in its NCHW form between Transposes.
#include "ir/layout_ops.h"
#include "ir/op_library.h"
#include "onnx/export_internal.h"
#include "onnx/tensor_io.h"

#include <fmt/format.h>

#include <numeric>

namespace graphvet::onnxexport {

namespace {

/// Attributes graphvet keeps for itself (never ONNX attributes); `layout` is
/// graphvet's on the layout ops (ONNX's LSTM has its own).
bool isGraphvetAttribute(const std::string &type, const std::string &key) {
  return key.empty() || key[0] == '_' || key.find('.') != std::string::npos || key == "outputs" ||
         key == "subgraphs" || key == "onnx_opset" ||
         (key == "layout" && isLayoutSensitiveOp(type));
}

/// Reduce ops whose axes stayed an attribute until opset 18.
bool isAttributeAxesReduce(const std::string &type) {
  static const std::set<std::string> ops = {"ReduceMax",    "ReduceMean",      "ReduceMin",
                                            "ReduceProd",   "ReduceL1",        "ReduceL2",
                                            "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"};
  return ops.count(type) > 0;
}

std::vector<int64_t> intsOf(const AttrValue &v) {
  std::vector<int64_t> out;
  if (v.isInt())
    out.push_back(v.asInt());
  else if (v.isList())
    for (const AttrValue &e : v.asList())
      if (e.isInt())
        out.push_back(e.asInt());
  return out;
}

Tensor i64Tensor(const std::vector<int64_t> &values, bool scalar = false) {
  Tensor t(TensorType{DType::I64, scalar ? Shape{} : Shape{static_cast<int64_t>(values.size())}});
  for (size_t i = 0; i < values.size(); ++i)
    t.setInt(static_cast<int64_t>(i), values[i]);
  return t;
}

Tensor scalarOf(DType dtype, const AttrValue &v) {
  Tensor t(TensorType{dtype, {}});
  if (isFloat(dtype))
    t.setDouble(0, v.isFloat() ? v.asFloat() : static_cast<double>(v.asInt()));
  else
    t.setInt(0, v.isInt() ? v.asInt() : static_cast<int64_t>(v.asFloat()));
  return t;
}

std::string permSuffix(const std::vector<int64_t> &perm) {
  std::string s = "_T";
  for (int64_t p : perm)
    s += std::to_string(p);
  return s;
}

/// [0, r-1, 1, ..., r-2]: channels-last storage back to channels-first.
std::vector<int64_t> toChannelsFirst(int64_t rank) {
  std::vector<int64_t> perm{0, rank - 1};
  for (int64_t i = 1; i < rank - 1; ++i)
    perm.push_back(i);
  return perm;
}

/// [0, 2, ..., r-1, 1]: channels-first to channels-last.
std::vector<int64_t> toChannelsLast(int64_t rank) {
  std::vector<int64_t> perm{0};
  for (int64_t i = 2; i < rank; ++i)
    perm.push_back(i);
  perm.push_back(1);
  return perm;
}

[[noreturn]] void badAttribute(const std::string &key, const char *what) {
  Exporter::refuse(fmt::format("attribute '{}' does not hold {}", key, what));
}

/// One graphvet attribute value as the schema's kind of attribute.
onnx::AttributeProto convertAttribute(const std::string &key, const AttrValue &v,
                                      onnx::AttributeProto::AttributeType kind) {
  using A = onnx::AttributeProto;
  onnx::AttributeProto a;
  a.set_name(key);
  a.set_type(kind);
  auto toInt = [&](const AttrValue &e) -> int64_t {
    if (e.isInt())
      return e.asInt();
    if (e.isBool())
      return e.asBool() ? 1 : 0;
    if (e.isIdent())
      if (auto d = parseDType(e.asIdent()))
        return onnximport::elemTypeOfDType(*d);
    badAttribute(key, "an integer");
  };
  auto toFloat = [&](const AttrValue &e) -> float {
    if (e.isFloat())
      return static_cast<float>(e.asFloat());
    if (e.isInt())
      return static_cast<float>(e.asInt());
    badAttribute(key, "a number");
  };
  auto toString = [&](const AttrValue &e) -> std::string {
    if (const std::string *s = e.text())
      return *s;
    badAttribute(key, "a string");
  };
  auto list = [&]() -> const AttrValue::List & {
    if (!v.isList())
      badAttribute(key, "a list");
    return v.asList();
  };
  switch (kind) {
  case A::INT:
    a.set_i(toInt(v));
    break;
  case A::FLOAT:
    a.set_f(toFloat(v));
    break;
  case A::STRING:
    a.set_s(toString(v));
    break;
  case A::TENSOR:
    if (!v.isTensor())
      badAttribute(key, "a tensor");
    *a.mutable_t() = onnximport::tensorToProto(v.asTensor(), "");
    break;
  case A::INTS:
    for (const AttrValue &e : list())
      a.add_ints(toInt(e));
    break;
  case A::FLOATS:
    for (const AttrValue &e : list())
      a.add_floats(toFloat(e));
    break;
  case A::STRINGS:
    for (const AttrValue &e : list())
      a.add_strings(toString(e));
    break;
  default:
    Exporter::refuse(fmt::format("attribute '{}' of ONNX kind {} is not exported", key,
                                 A::AttributeType_Name(kind)));
  }
  return a;
}

} // namespace

void Exporter::writeDraft(const NodeDraft &d, onnx::GraphProto *gp) {
  const onnx::OpSchema *schema =
      onnx::OpSchemaRegistry::Schema(d.type, static_cast<int>(opts_.opset), "");
  if (!schema || schema->Deprecated())
    refuse(fmt::format("{} is not an op of ONNX opset {}", d.type, opts_.opset));
  onnx::NodeProto node;
  node.set_op_type(d.type);
  node.set_name(d.name);
  std::vector<std::string> inputs = d.inputs;
  while (!inputs.empty() && inputs.back().empty())
    inputs.pop_back();
  for (const std::string &in : inputs)
    node.add_input(in);
  for (const std::string &out : d.outputs)
    node.add_output(out);
  for (const auto &[key, value] : d.attrs) {
    auto it = schema->attributes().find(key);
    if (it == schema->attributes().end())
      refuse(fmt::format("attribute '{}' is not an attribute of ONNX {} (opset {})", key, d.type,
                         opts_.opset));
    *node.add_attribute() = convertAttribute(key, value, it->second.type);
  }
  *gp->add_node() = std::move(node);
  ++summary_.nodes;
}

std::optional<std::string> Exporter::cancelledTranspose(const std::string &value,
                                                        const std::vector<int64_t> &perm) const {
  auto it = layoutTransposeOf_.find(value);
  if (it == layoutTransposeOf_.end())
    return std::nullopt;
  const auto &[source, first] = it->second;
  if (first.size() != perm.size())
    return std::nullopt;
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] < 0 || perm[i] >= static_cast<int64_t>(perm.size()) ||
        first[static_cast<size_t>(perm[i])] != static_cast<int64_t>(i))
      return std::nullopt;
  return source;
}

std::string Exporter::transposed(const std::string &value, const std::vector<int64_t> &perm,
                                 onnx::GraphProto *gp) {
  if (auto source = cancelledTranspose(value, perm))
    return *source;
  const Tensor *c = constantOf(value);
  auto key = std::make_tuple(c ? nullptr : gp, value, perm);
  if (auto it = transposes_.find(key); it != transposes_.end())
    return it->second;
  std::string name;
  if (c) { // a constant is transposed now, not at run time
    name = addInitializer(transposeTensor(*c, perm), value + permSuffix(perm));
  } else {
    name = fresh(value + permSuffix(perm));
    NodeDraft t{"Transpose", freshNodeName(name, gp), {value}, {name}, {}};
    AttrValue::List p;
    for (int64_t i : perm)
      p.push_back(AttrValue::ofInt(i));
    t.attrs["perm"] = AttrValue::ofList(std::move(p));
    writeDraft(t, gp);
    layoutTransposeOf_[name] = {value, perm};
    wrappingTransposes_.insert(name);
    ++summary_.layoutTransposes;
  }
  return transposes_[key] = name;
}

void Exporter::emitOp(GraphId g, NodeId id, onnx::GraphProto *gp) {
  const Graph &graph = m_.graph(g);
  const Node &n = graph.node(id);
  // Identity is graphvet's copy (a memory op without a numeric row) and
  // ONNX's identity alike.
  if (n.type != "Identity" && !numericDefinition(n))
    refuse(isNumericOp(n.type) ? "this form of the op is GE's, without an ONNX meaning"
                               : "not an ONNX op (graphvet has no numeric definition of it)");
  if (isInputMutable(n))
    refuse("it scribbles on its inputs (_input_mutable); ONNX values are immutable");
  for (uint32_t k = 0; k < n.numOutputs; ++k) {
    if (auto in = refInput(n, k))
      refuse(fmt::format("output {} writes input {} in place; ONNX values are immutable", k, *in));
    if (n.portBoolAttr(true, k, "reuse_input"))
      refuse(fmt::format("output {} shares an input's buffer (out{}.reuse_input)", k, k));
    if (refVarSrcName(n, k))
      refuse(fmt::format("output {} is bound to a variable", k));
  }
  const onnx::OpSchema *schema =
      onnx::OpSchemaRegistry::Schema(n.type, static_cast<int>(opts_.opset), "");
  if (!schema || schema->Deprecated())
    refuse(fmt::format("{} is not an op of ONNX opset {}", n.type, opts_.opset));

  NodeDraft d;
  d.type = n.type;
  d.name = freshNodeName(n.name, gp);
  for (const auto &in : n.inputs)
    d.inputs.push_back(valueOf(g, in));
  for (const auto &[key, value] : n.attrs)
    if (!isGraphvetAttribute(n.type, key))
      d.attrs[key] = value;
  // Outputs: used ones named; trailing unused ones dropped (an opset-9
  // BatchNormalization's training outputs), keeping the schema's minimum.
  uint32_t count = 0;
  for (uint32_t k = 0; k < n.numOutputs; ++k)
    if (!graph.consumers(OutPort{id, k}).empty() || isReserved(g, OutPort{id, k}))
      count = k + 1;
  count = std::max<uint32_t>({count, 1, static_cast<uint32_t>(schema->min_output())});
  for (uint32_t k = 0; k < count; ++k) {
    bool used = k < n.numOutputs &&
                (!graph.consumers(OutPort{id, k}).empty() || isReserved(g, OutPort{id, k}));
    bool required = k < static_cast<uint32_t>(schema->min_output()) || k == 0;
    d.outputs.push_back(used || required ? outputName(g, OutPort{id, k}) : std::string());
  }

  if (n.type == "Transpose" && !d.inputs.empty() && d.attrs.count("perm")) {
    // A Transpose undoing one written before (the layout wrapping's, or the
    // model's own) is its input again.
    std::vector<int64_t> perm = intsOf(d.attrs["perm"]);
    if (auto source = cancelledTranspose(d.inputs[0], perm)) {
      if (!isReserved(g, OutPort{id, 0})) {
        names_[g][OutPort{id, 0}] = *source;
        return;
      }
      writeDraft(NodeDraft{"Identity", d.name, {*source}, {d.outputs[0]}, {}}, gp);
      return;
    }
    writeDraft(d, gp);
    layoutTransposeOf_[d.outputs[0]] = {d.inputs[0], perm};
    return;
  }
  normalizeForm(g, n, d, gp);
  const std::string *layout = n.stringAttr("layout");
  if (layout && *layout == "NHWC")
    wrapLayout(g, n, d, gp);
  else if (layout && *layout != "NCHW")
    refuse(fmt::format("layout '{}' has no ONNX form", *layout));
  else
    writeDraft(d, gp);
}

void Exporter::wrapLayout(GraphId g, const Node &n, NodeDraft &d, onnx::GraphProto *gp) {
  if (!isLayoutSensitiveOp(n.type))
    refuse("a layout attribute on an op without a layout");
  const TensorType *x = n.inputs.empty() || !n.inputs[0] ? nullptr : typeOf(g, *n.inputs[0]);
  if (!x || x->rank() < 3)
    refuse("an NHWC op needs data of rank 3 or more");
  for (size_t k = 1; k < d.outputs.size(); ++k)
    if (!d.outputs[k].empty())
      refuse(fmt::format("output {} of an NHWC op is used; only output 0 is transposed back", k));
  const int64_t rank = x->rank();
  // Stored channels-last: the NCHW op reads Transpose(x, [0, r-1, 1...]);
  // Conv and ConvTranspose weights are stored OHWI ([C, kH, kW, M/g]) the
  // same way.
  d.inputs[0] = transposed(d.inputs[0], toChannelsFirst(rank), gp);
  if ((n.type == "Conv" || n.type == "ConvTranspose") && d.inputs.size() > 1 &&
      !d.inputs[1].empty() && n.inputs[1]) {
    const TensorType *w = typeOf(g, *n.inputs[1]);
    if (!w)
      refuse("the weights have no type");
    d.inputs[1] = transposed(d.inputs[1], toChannelsFirst(w->rank()), gp);
  }
  std::string result = d.outputs[0];
  d.outputs[0] = fresh(result + "_nchw");
  writeDraft(d, gp);
  NodeDraft back{"Transpose", freshNodeName(result + "_nhwc", gp), {d.outputs[0]}, {result}, {}};
  AttrValue::List p;
  for (int64_t i : toChannelsLast(rank))
    p.push_back(AttrValue::ofInt(i));
  back.attrs["perm"] = AttrValue::ofList(std::move(p));
  writeDraft(back, gp);
  layoutTransposeOf_[result] = {d.outputs[0], toChannelsLast(rank)};
  wrappingTransposes_.insert(result);
  ++summary_.layoutTransposes;
}

void Exporter::normalizeForm(GraphId g, const Node &n, NodeDraft &d, onnx::GraphProto *gp) {
  const int64_t opset = opts_.opset;
  const std::string &type = n.type;
  bool rewritten = false;
  auto takeAttr = [&](const char *key) -> std::optional<AttrValue> {
    auto it = d.attrs.find(key);
    if (it == d.attrs.end())
      return std::nullopt;
    AttrValue v = it->second;
    d.attrs.erase(it);
    return v;
  };
  auto setInput = [&](size_t slot, const std::string &value) {
    if (d.inputs.size() <= slot)
      d.inputs.resize(slot + 1);
    d.inputs[slot] = value;
    rewritten = true;
  };
  auto dataType = [&]() -> DType {
    const TensorType *t = n.inputs.empty() || !n.inputs[0] ? nullptr : typeOf(g, *n.inputs[0]);
    if (!t)
      refuse("its data input has no type");
    return t->dtype;
  };

  if (type == "Slice" && opset >= 10 && d.attrs.count("starts")) { // Slice-1: attributes
    auto starts = takeAttr("starts"), ends = takeAttr("ends"), axes = takeAttr("axes");
    setInput(1, addInitializer(i64Tensor(intsOf(*starts)), n.name + "_starts"));
    setInput(2, addInitializer(i64Tensor(ends ? intsOf(*ends) : std::vector<int64_t>{}),
                               n.name + "_ends"));
    if (axes)
      setInput(3, addInitializer(i64Tensor(intsOf(*axes)), n.name + "_axes"));
  } else if ((type == "Squeeze" || type == "Unsqueeze" || type == "ReduceSum") && opset >= 13) {
    if (auto axes = takeAttr("axes"))
      setInput(1, addInitializer(i64Tensor(intsOf(*axes)), n.name + "_axes"));
  } else if (type == "Split" && opset >= 13) {
    if (auto split = takeAttr("split"))
      setInput(1, addInitializer(i64Tensor(intsOf(*split)), n.name + "_split"));
  } else if (isAttributeAxesReduce(type) && opset < 18 && d.inputs.size() > 1 &&
             !d.inputs[1].empty()) {
    const Tensor *axes = constantOf(d.inputs[1]);
    if (!axes)
      refuse(fmt::format("its axes are computed at run time; {} of opset {} takes them as an "
                         "attribute",
                         type, opset));
    AttrValue::List list;
    for (int64_t i = 0; i < axes->size(); ++i)
      list.push_back(AttrValue::ofInt(axes->getInt(i)));
    d.attrs["axes"] = AttrValue::ofList(std::move(list));
    d.inputs.resize(1);
    rewritten = true;
  } else if (type == "Clip" && opset >= 11 && (d.attrs.count("min") || d.attrs.count("max"))) {
    DType dt = dataType();
    auto lo = takeAttr("min"), hi = takeAttr("max");
    d.inputs.resize(1);
    setInput(1, lo ? addInitializer(scalarOf(dt, *lo), n.name + "_min") : std::string());
    setInput(2, hi ? addInitializer(scalarOf(dt, *hi), n.name + "_max") : std::string());
  } else if (type == "Pad" && opset >= 11 && d.attrs.count("pads")) {
    DType dt = dataType();
    auto pads = takeAttr("pads"), value = takeAttr("value");
    setInput(1, addInitializer(i64Tensor(intsOf(*pads)), n.name + "_pads"));
    if (value)
      setInput(2, addInitializer(scalarOf(dt, *value), n.name + "_value"));
  } else if (type == "Dropout" && opset >= 12 && d.attrs.count("ratio")) {
    // Dropout-7..10: the ratio an attribute (no training mode: the
    // identity on the data, as without training_mode since opset 12).
    DType dt = dataType();
    auto ratio = takeAttr("ratio");
    d.inputs.resize(1);
    setInput(1, addInitializer(scalarOf(isFloat(dt) ? dt : DType::F32, *ratio), n.name + "_ratio"));
  } else if (type == "Resize" && opset >= 11 && d.inputs.size() == 2) {
    // Resize-10 (X, scales): asymmetric coordinates; nearest rounds down
    // when upsampling (graphvet's kernel, onnxruntime's rule).
    const Tensor *scales = constantOf(d.inputs[1]);
    const std::string *mode = n.stringAttr("mode");
    bool nearest = !mode || *mode == "nearest";
    if (nearest) {
      bool up = scales != nullptr;
      for (int64_t i = 0; scales && i < scales->size(); ++i)
        up = up && scales->getDouble(i) >= 1.0;
      if (!up)
        refuse("a Resize-10 nearest that downsamples (or with scales computed at run time) "
               "rounds as no later Resize does");
      d.attrs["nearest_mode"] = AttrValue::ofString("floor");
    }
    d.attrs["coordinate_transformation_mode"] = AttrValue::ofString("asymmetric");
    d.inputs = {d.inputs[0], "", d.inputs[1]};
    rewritten = true;
  } else if ((type == "Softmax" || type == "LogSoftmax" || type == "Hardmax") && opset >= 13) {
    auto old = n.intAttr("onnx_opset");
    if (old && *old < 13) {
      // Before opset 13 the op flattens to 2-D at `axis` (default 1).
      const TensorType *x = n.inputs.empty() || !n.inputs[0] ? nullptr : typeOf(g, *n.inputs[0]);
      if (!x)
        refuse("its input has no type");
      int64_t rank = x->rank();
      int64_t axis = n.intAttr("axis").value_or(1);
      if (axis < 0)
        axis += rank;
      rewritten = true;
      if (axis == rank - 1 || rank == 0) {
        d.attrs["axis"] = AttrValue::ofInt(rank == 0 ? -1 : axis);
      } else {
        int64_t outer = 1, inner = 1;
        for (int64_t i = 0; i < rank; ++i)
          (i < axis ? outer : inner) *= x->shape[static_cast<size_t>(i)];
        std::string flat = fresh(d.outputs[0] + "_2d");
        NodeDraft reshape{"Reshape",
                          freshNodeName(flat, gp),
                          {d.inputs[0], addInitializer(i64Tensor({outer, inner}), flat + "_shape")},
                          {flat},
                          {}};
        writeDraft(reshape, gp);
        std::string result = d.outputs[0];
        d.inputs = {flat};
        d.attrs["axis"] = AttrValue::ofInt(1);
        d.outputs[0] = fresh(result + "_2d_out");
        writeDraft(d, gp);
        NodeDraft back{"Reshape",
                       freshNodeName(result + "_nd", gp),
                       {d.outputs[0], addInitializer(i64Tensor(x->shape), result + "_shape")},
                       {result},
                       {}};
        // Replace the draft by the final Reshape: the caller writes `d`.
        d = std::move(back);
      }
    }
  }
  if (rewritten)
    ++summary_.formRewrites;
}

} // namespace graphvet::onnxexport
