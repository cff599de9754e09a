// The import driver: load the ModelProto, run ONNX's checker, collect every
// unsupported op and element type into one error, fix the inputs' shapes and
// freeze the asked inputs, run ONNX's shape inference, then hand over to the
// static-value and translation stages and check the result with graphvet's
// own verifier and type inference.
#include "onnx/importer.h"

#include "ir/op_library.h"
#include "ir/types.h"
#include "ir/verifier.h"
#include "onnx/internal.h"
#include "onnx/tensor_io.h"

#include <fmt/format.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace graphvet::onnximport {

bool isStructuralOp(const std::string &opType) {
  return opType == "Constant" || opType == "If" || opType == "Loop" || opType == "Identity";
}

std::string nodeDisplayName(const onnx::NodeProto &n, size_t index) {
  return n.name().empty() ? fmt::format("{}_{}", n.op_type(), index) : n.name();
}

bool isDTypeAttribute(const std::string &opType, const std::string &attr) {
  return (opType == "Cast" && attr == "to") || attr == "dtype";
}

std::vector<const onnx::GraphProto *> subgraphsOf(const onnx::NodeProto &n) {
  std::vector<const onnx::GraphProto *> out;
  for (const auto &a : n.attribute()) {
    if (a.has_g())
      out.push_back(&a.g());
    for (const auto &g : a.graphs())
      out.push_back(&g);
  }
  return out;
}

bool Context::isNumeric(std::string_view opType) const {
  return opts.isNumericOp ? opts.isNumericOp(opType) : graphvet::isNumericOp(opType);
}

uint64_t Context::shapeOperands(std::string_view opType) const {
  return opts.shapeOperands ? opts.shapeOperands(opType) : lookupOp(opType).shapeOperands;
}

bool Context::nondeterministic(std::string_view opType) const {
  return lookupOp(opType).nondeterministic;
}

std::optional<TensorType> Context::staticType(const std::string &value) const {
  auto inferred = [&]() -> std::optional<TensorType> {
    auto i = inferredTypes.find(value);
    return i == inferredTypes.end() ? std::nullopt : std::optional<TensorType>(i->second);
  };
  auto it = valueTypes.find(value);
  if (it == valueTypes.end() || !it->second.has_tensor_type())
    return inferred();
  const auto &tt = it->second.tensor_type();
  auto dtype = dtypeOfElemType(tt.elem_type());
  if (!dtype || !tt.has_shape())
    return inferred();
  TensorType t{*dtype, {}};
  for (const auto &d : tt.shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0)
      return inferred();
    t.shape.push_back(d.dim_value());
  }
  return t;
}

namespace {

/// The numeric ops the While built for a Loop uses: the iteration counter's
/// Add, `iter < M` and `and cond` in its cond graph, and Equal/Where for the
/// scan outputs.
std::vector<std::string> loopHelperOps(const onnx::NodeProto &n) {
  std::vector<std::string> ops{"Add"};
  bool hasM = n.input_size() > 0 && !n.input(0).empty();
  bool hasCond = n.input_size() > 1 && !n.input(1).empty();
  if (hasM)
    ops.push_back("Less");
  if (hasM && hasCond)
    ops.push_back("And");
  int carried = std::max(0, n.input_size() - 2);
  for (const onnx::GraphProto *body : subgraphsOf(n))
    if (body->output_size() > 1 + carried) {
      ops.push_back("Equal");
      ops.push_back("Where");
    }
  return ops;
}

/// Every op and element type graphvet lacks, over all graphs.
class UnsupportedScan {
public:
  UnsupportedScan(Context &ctx, ImportResult &r) : ctx_(ctx), r_(r) {}

  void graph(const onnx::GraphProto &g) {
    for (const auto &vi : g.input())
      valueType(vi.type(), fmt::format("input '{}'", vi.name()));
    for (const auto &vi : g.output())
      valueType(vi.type(), fmt::format("output '{}'", vi.name()));
    for (const auto &vi : g.value_info())
      valueType(vi.type(), fmt::format("value '{}'", vi.name()));
    for (const auto &t : g.initializer())
      elemType(t.data_type(), fmt::format("initializer '{}'", t.name()));
    for (const auto &t : g.sparse_initializer())
      add("SPARSE_TENSOR", fmt::format("initializer '{}'", t.values().name()));
    for (int i = 0; i < g.node_size(); ++i)
      node(g.node(i), nodeDisplayName(g.node(i), static_cast<size_t>(i)));
  }

private:
  void add(const std::string &type, std::string where) {
    auto &list = r_.unsupportedTypes[type];
    if (std::find(list.begin(), list.end(), where) == list.end())
      list.push_back(std::move(where));
  }
  void elemType(int32_t t, std::string where) {
    if (!dtypeOfElemType(t))
      add(elemTypeName(t), std::move(where));
  }
  void valueType(const onnx::TypeProto &t, std::string where) {
    switch (t.value_case()) {
    case onnx::TypeProto::kTensorType:
      if (t.tensor_type().elem_type() != onnx::TensorProto::UNDEFINED)
        elemType(t.tensor_type().elem_type(), std::move(where));
      break;
    case onnx::TypeProto::kSequenceType:
      add("SEQUENCE", std::move(where));
      break;
    case onnx::TypeProto::kMapType:
      add("MAP", std::move(where));
      break;
    case onnx::TypeProto::kOptionalType:
      add("OPTIONAL", std::move(where));
      break;
    case onnx::TypeProto::kSparseTensorType:
      add("SPARSE_TENSOR", std::move(where));
      break;
    default: // no type given: graphvet infers it
      break;
    }
  }

  void node(const onnx::NodeProto &n, const std::string &name) {
    const std::string &domain = n.domain();
    if (!domain.empty() && domain != "ai.onnx") {
      r_.unsupportedOps[domain + "." + n.op_type()].push_back(name);
    } else if (!isStructuralOp(n.op_type()) && !ctx_.isNumeric(n.op_type())) {
      r_.unsupportedOps[n.op_type()].push_back(name);
    } else if (n.op_type() == "Loop") {
      // The While a Loop becomes computes with these ops.
      for (const std::string &op : loopHelperOps(n))
        if (!ctx_.isNumeric(op))
          r_.unsupportedOps[op].push_back(name);
    }
    for (const auto &a : n.attribute()) {
      std::string where = fmt::format("attribute '{}' of node '{}'", a.name(), name);
      if (a.type() == onnx::AttributeProto::INT && isDTypeAttribute(n.op_type(), a.name()))
        elemType(static_cast<int32_t>(a.i()), where);
      if (a.has_t())
        elemType(a.t().data_type(), where);
      for (const auto &t : a.tensors())
        elemType(t.data_type(), where);
      if (a.has_sparse_tensor() || a.sparse_tensors_size() > 0)
        add("SPARSE_TENSOR", where);
      if (n.op_type() == "Constant" && (a.name() == "value_string" || a.name() == "value_strings"))
        add("STRING", where);
    }
    for (const onnx::GraphProto *g : subgraphsOf(n))
      graph(*g);
  }

  Context &ctx_;
  ImportResult &r_;
};

bool isValueKind(const std::string &type) {
  return type == "SEQUENCE" || type == "MAP" || type == "OPTIONAL" || type == "SPARSE_TENSOR";
}

std::string unsupportedMessage(const ImportResult &r) {
  std::string ops, types;
  for (const auto &[op, nodes] : r.unsupportedOps)
    ops += fmt::format("{}{} ({})", ops.empty() ? "" : ", ", op,
                       nodes.size() == 1 ? fmt::format("node '{}'", nodes[0])
                                         : fmt::format("{} nodes", nodes.size()));
  std::string kinds; // sequences, maps, optionals, sparse tensors: not element types
  for (const auto &[type, where] : r.unsupportedTypes) {
    std::string list;
    for (size_t i = 0; i < where.size() && i < 3; ++i)
      list += (i ? ", " : "") + where[i];
    if (where.size() > 3)
      list += fmt::format(", ... {} in all", where.size());
    std::string &into = isValueKind(type) ? kinds : types;
    into += fmt::format("{}{} ({})", into.empty() ? "" : ", ", type, list);
  }
  std::string msg;
  auto part = [&msg](const char *what, const std::string &items) {
    if (!items.empty())
      msg += (msg.empty() ? "" : "; ") + std::string(what) + items;
  };
  part("unsupported ONNX ops: ", ops);
  part("unsupported element types: ", types);
  part("unsupported value types: ", kinds);
  for (const std::string &free : r.freeDimensions)
    part("", free);
  return msg;
}

/// Root graph inputs that are not initializers, in graph.input order.
std::vector<const onnx::ValueInfoProto *> realInputs(const onnx::GraphProto &g) {
  std::set<std::string> inits;
  for (const auto &t : g.initializer())
    inits.insert(t.name());
  std::vector<const onnx::ValueInfoProto *> out;
  for (const auto &vi : g.input())
    if (!inits.count(vi.name()))
      out.push_back(&vi);
  return out;
}

/// The static shape of a graph input: the model's, with free dimensions
/// fixed by an explicit shape or by the shape of a given value. Free
/// dimensions left are added to `free` (reported with the unsupported ops).
std::optional<Shape> resolveInputShape(Context &ctx, const onnx::ValueInfoProto &vi,
                                       const Tensor *value, std::vector<std::string> &freeDims) {
  const std::string &name = vi.name();
  const auto &tt = vi.type().tensor_type();
  bool rankKnown = tt.has_shape();
  std::vector<std::optional<int64_t>> dims;
  std::vector<std::string> free;
  if (rankKnown)
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
      const auto &d = tt.shape().dim(i);
      if (d.has_dim_value() && d.dim_value() >= 0) {
        dims.push_back(d.dim_value());
      } else {
        dims.push_back(std::nullopt);
        free.push_back(d.has_dim_param() ? fmt::format("dim {} ('{}')", i, d.dim_param())
                                         : fmt::format("dim {}", i));
      }
    }
  auto fits = [&](const Shape &s) {
    if (!rankKnown)
      return true;
    if (s.size() != dims.size())
      return false;
    for (size_t i = 0; i < s.size(); ++i)
      if (dims[i] && *dims[i] != s[i])
        return false;
    return true;
  };
  auto modelShape = [&] {
    std::string s;
    for (size_t i = 0; i < dims.size(); ++i)
      s += (i ? ", " : "") + (dims[i] ? std::to_string(*dims[i]) : std::string("?"));
    return rankKnown ? "[" + s + "]" : std::string("of unknown rank");
  };
  if (auto it = ctx.opts.inputShapes.find(name); it != ctx.opts.inputShapes.end()) {
    if (!fits(it->second)) {
      ctx.error(fmt::format("the shape {} given for input '{}' does not fit the model's {}",
                            shapeStr(it->second), name, modelShape()));
      return std::nullopt;
    }
    return it->second;
  }
  if (value && (!rankKnown || !free.empty())) {
    if (!fits(value->shape())) {
      ctx.error(fmt::format("the value given for input '{}' has shape {}, the model's is {}", name,
                            shapeStr(value->shape()), modelShape()));
      return std::nullopt;
    }
    return value->shape();
  }
  if (!rankKnown) {
    freeDims.push_back(fmt::format("input '{}' has no shape (unknown rank); give it with "
                                   "--input-shape {}=DxDx...",
                                   name, name));
    return std::nullopt;
  }
  if (!free.empty()) {
    std::string list, example;
    for (const auto &f : free)
      list += (list.empty() ? "" : ", ") + f;
    for (size_t i = 0; i < dims.size(); ++i)
      example += (i ? "x" : "") + (dims[i] ? std::to_string(*dims[i]) : std::string("D"));
    freeDims.push_back(
        fmt::format("input '{}' has free dimensions: {}; fix them with --input-shape {}={}", name,
                    list, name, example));
    return std::nullopt;
  }
  Shape s;
  for (const auto &d : dims)
    s.push_back(*d);
  return s;
}

/// A tensor of `type` whose every element is the number `text` (an
/// integer for integer dtypes, 0/1/true/false for bool).
std::optional<Tensor> filledTensor(const TensorType &type, const std::string &text,
                                   std::string &error) {
  auto elements = type.checkedElements();
  if (!elements || static_cast<uint64_t>(*elements) > kMaxBufferBytes / dtypeBytes(type.dtype)) {
    error = fmt::format("the input is larger than {} bytes", kMaxBufferBytes);
    return std::nullopt;
  }
  Tensor t(type);
  const char *end = text.data() + text.size();
  if (type.dtype == DType::Bool) {
    bool v = text == "1" || text == "true";
    if (!v && text != "0" && text != "false") {
      error = "expected 0, 1, true or false";
      return std::nullopt;
    }
    for (int64_t i = 0; i < t.size(); ++i)
      t.setInt(i, v ? 1 : 0);
    return t;
  }
  if (isFloat(type.dtype)) {
    double v = 0;
    auto [p, ec] = std::from_chars(text.data(), end, v);
    if (ec != std::errc() || p != end || text.empty()) {
      error = "expected a number";
      return std::nullopt;
    }
    for (int64_t i = 0; i < t.size(); ++i)
      t.setDouble(i, v);
    return t;
  }
  int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || text.empty()) {
    error = "expected an integer";
    return std::nullopt;
  }
  for (int64_t i = 0; i < t.size(); ++i)
    t.setInt(i, v);
  if (t.size() > 0 && t.getInt(0) != v) {
    error = fmt::format("{} does not fit {}", v, dtypeName(type.dtype));
    return std::nullopt;
  }
  return t;
}

/// Reads DIR/input_N.pb for N = 0, 1, ... into ctx.inputData.
bool loadInputData(Context &ctx, const std::vector<const onnx::ValueInfoProto *> &inputs) {
  namespace fs = std::filesystem;
  const std::string &dir = ctx.opts.inputDataDir;
  if (!fs::is_directory(dir)) {
    ctx.error(fmt::format("input data: '{}' is not a directory", dir));
    return false;
  }
  for (size_t i = 0;; ++i) {
    fs::path file = fs::path(dir) / fmt::format("input_{}.pb", i);
    if (!fs::exists(file))
      break;
    std::string err, name;
    auto t = readTensorProto(file.string(), err, &name);
    if (!t) {
      ctx.error(fmt::format("input data '{}': {}", file.string(), err));
      continue;
    }
    bool named = std::any_of(inputs.begin(), inputs.end(),
                             [&](const auto *vi) { return vi->name() == name; });
    if (!named) {
      if (i >= inputs.size()) {
        ctx.error(fmt::format("input data '{}': the model has only {} inputs", file.string(),
                              inputs.size()));
        continue;
      }
      name = inputs[i]->name();
    }
    // ONNX's test data generator writes bfloat16 values as UINT16 tensors
    // holding the same bits.
    auto vi = std::find_if(inputs.begin(), inputs.end(),
                           [&](const auto *x) { return x->name() == name; });
    if (t->dtype() == DType::U16 &&
        (*vi)->type().tensor_type().elem_type() == onnx::TensorProto::BFLOAT16)
      t = Tensor(TensorType{DType::BF16, t->shape()},
                 std::vector<uint8_t>(t->bytes().begin(), t->bytes().end()));
    ctx.inputData.insert_or_assign(name, std::move(*t));
  }
  return ctx.errors.empty();
}

void collectTypes(Context &ctx, const onnx::GraphProto &g) {
  for (const auto *list : {&g.input(), &g.output(), &g.value_info()})
    for (const auto &vi : *list)
      if (vi.has_type() && !ctx.valueTypes.count(vi.name()))
        ctx.valueTypes[vi.name()] = vi.type();
  // Initializers outside graph.input (IR >= 4) have no value_info: their
  // type is their own (a Loop's initial value may be one).
  for (const auto &t : g.initializer())
    if (!ctx.valueTypes.count(t.name())) {
      auto *tt = ctx.valueTypes[t.name()].mutable_tensor_type();
      tt->set_elem_type(t.data_type());
      auto *shape = tt->mutable_shape();
      for (int64_t d : t.dims())
        shape->add_dim()->set_dim_value(d);
    }
  for (const auto &n : g.node())
    for (const onnx::GraphProto *sub : subgraphsOf(n))
      collectTypes(ctx, *sub);
}

void loadInitializers(Context &ctx, const onnx::GraphProto &g) {
  for (const auto &t : g.initializer()) {
    if (ctx.frozen.count(t.name()))
      continue;
    std::string err;
    if (auto v = tensorFromProto(t, ctx.modelDir, err))
      ctx.staticValues.insert_or_assign(t.name(), std::move(*v));
    else
      ctx.error(fmt::format("initializer '{}': {}", t.name(), err));
  }
  for (const auto &n : g.node())
    for (const onnx::GraphProto *sub : subgraphsOf(n))
      loadInitializers(ctx, *sub);
}

ImportResult importModel(Context &ctx, const std::string &checkPath) {
  ImportResult r;
  try {
    if (!checkPath.empty())
      onnx::checker::check_model(checkPath);
    else
      onnx::checker::check_model(ctx.model);
  } catch (const std::exception &e) {
    r.errors.push_back(fmt::format("the ONNX checker rejects the model: {}", e.what()));
    return r;
  }
  onnx::GraphProto &g = *ctx.model.mutable_graph();
  for (const auto &o : ctx.model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx")
      ctx.opset = o.version();

  // 1. Everything graphvet cannot express (and, below, every free
  // dimension), reported together.
  UnsupportedScan(ctx, r).graph(g);

  // 2. Static input shapes and frozen inputs.
  std::vector<const onnx::ValueInfoProto *> inputs = realInputs(g);
  std::set<std::string> inputNames;
  for (const auto *vi : inputs)
    inputNames.insert(vi->name());
  if (!ctx.opts.inputDataDir.empty() && !loadInputData(ctx, inputs)) {
    r.errors = std::move(ctx.errors);
    return r;
  }
  for (const auto &[name, shape] : ctx.opts.inputShapes)
    if (!inputNames.count(name))
      ctx.error(fmt::format("an input shape is given for '{}', but the model has no input of "
                            "that name",
                            name));
  for (const auto &[name, value] : ctx.opts.freezeInputs) {
    if (!inputNames.count(name))
      ctx.error(fmt::format("cannot freeze '{}': the model has no input of that name", name));
    else
      ctx.frozen.insert(name);
  }
  for (const auto &[name, text] : ctx.opts.freezeValues) {
    if (!inputNames.count(name))
      ctx.error(fmt::format("cannot freeze '{}': the model has no input of that name", name));
    else
      ctx.frozen.insert(name);
  }
  if (ctx.opts.freezeShapeOperands)
    for (const std::string &name : inputsFeedingShapeOperands(ctx))
      if (ctx.inputData.count(name))
        ctx.frozen.insert(name);

  std::vector<onnx::TensorProto> frozenProtos;
  for (const auto *vi : inputs) {
    const std::string &name = vi->name();
    const Tensor *value = nullptr;
    if (auto it = ctx.opts.freezeInputs.find(name); it != ctx.opts.freezeInputs.end())
      value = &it->second;
    else if (auto d = ctx.inputData.find(name); d != ctx.inputData.end())
      value = &d->second;
    auto dtype = dtypeOfElemType(vi->type().tensor_type().elem_type());
    if (!dtype) {
      bool reported = vi->type().value_case() != onnx::TypeProto::VALUE_NOT_SET &&
                      (!vi->type().has_tensor_type() ||
                       vi->type().tensor_type().elem_type() != onnx::TensorProto::UNDEFINED);
      if (!reported) // an unsupported element or value type is in the message already
        ctx.error(fmt::format("input '{}' has no element type", name));
      continue;
    }
    auto shape = resolveInputShape(ctx, *vi, value, r.freeDimensions);
    if (!shape)
      continue;
    TensorType type{*dtype, *shape};
    std::optional<Tensor> filled;
    if (auto fv = ctx.opts.freezeValues.find(name); fv != ctx.opts.freezeValues.end()) {
      std::string err;
      filled = filledTensor(type, fv->second, err);
      if (!filled) {
        ctx.error(fmt::format("cannot freeze input '{}' ({}) to '{}': {}", name, type.str(),
                              fv->second, err));
        continue;
      }
      value = &*filled;
    }
    ImportedInput in{name, std::nullopt, ctx.frozen.count(name) > 0, type};
    r.inputs.push_back(in);
    // Write the static shape back so that ONNX's inference propagates it.
    auto mvi = std::find_if(g.mutable_input()->begin(), g.mutable_input()->end(),
                            [&](const auto &x) { return x.name() == name; });
    auto *mshape = mvi->mutable_type()->mutable_tensor_type()->mutable_shape();
    mshape->clear_dim();
    for (int64_t d : *shape)
      mshape->add_dim()->set_dim_value(d);
    if (!in.frozen)
      continue;
    if (value == nullptr) {
      ctx.error(fmt::format("cannot freeze input '{}': no value given", name));
      continue;
    }
    if (value->type() != type) {
      ctx.error(fmt::format("the value frozen into input '{}' is {}, the input is {}", name,
                            value->type().str(), type.str()));
      continue;
    }
    ctx.staticValues.insert_or_assign(name, *value);
    frozenProtos.push_back(tensorToProto(*value, name));
  }
  if (!r.unsupportedOps.empty() || !r.unsupportedTypes.empty() || !r.freeDimensions.empty())
    ctx.errors.insert(ctx.errors.begin(), unsupportedMessage(r));
  if (!ctx.errors.empty()) {
    r.errors = std::move(ctx.errors);
    return r;
  }
  for (auto &t : frozenProtos)
    *g.add_initializer() = std::move(t);

  // 3. ONNX's shape inference (with data propagation, so that frozen values
  // and constants give static shapes).
  try {
    onnx::shape_inference::InferShapes(ctx.model, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(false, 0, true));
  } catch (const std::exception &e) {
    r.errors.push_back(fmt::format("ONNX shape inference fails: {}", e.what()));
    return r;
  }
  collectTypes(ctx, ctx.model.graph());

  // 4. Static values, then the module.
  loadInitializers(ctx, ctx.model.graph());
  computeStaticValues(ctx);
  if (ctx.errors.empty()) {
    std::vector<ImportedInput> built;
    auto module = translateModel(ctx, built, r.outputs);
    if (module && ctx.errors.empty()) {
      for (ImportedInput &in : r.inputs)
        for (const ImportedInput &b : built)
          if (b.name == in.name)
            in.index = b.index;
      Diagnostics diags = verifyModule(*module);
      for (const Diagnostic &d : diags)
        ctx.error("the imported module fails graphvet's verifier: " + d.message);
      if (diags.empty() && ctx.opts.inferTypes) {
        Diagnostics typeDiags;
        inferModuleTypes(*module, typeDiags);
        for (const Diagnostic &d : typeDiags)
          if (d.severity == Severity::Error)
            ctx.error("type inference: " + d.message);
      }
      r.module = std::move(module);
    }
  }
  r.folded = ctx.folded;
  r.errors = std::move(ctx.errors);
  return r;
}

} // namespace

ImportResult importOnnxBytes(const std::string &bytes, const std::string &modelDir,
                             const ImportOptions &opts) {
  Context ctx(opts, modelDir);
  if (!ctx.model.ParseFromString(bytes)) {
    ImportResult r;
    r.errors.push_back("not a serialized ONNX model (ModelProto)");
    return r;
  }
  return importModel(ctx, "");
}

ImportResult importOnnx(const std::string &path, const ImportOptions &opts) {
  std::ifstream in(path, std::ios::binary);
  std::error_code dirError; // a directory opens but cannot be read
  if (!in || std::filesystem::is_directory(path, dirError)) {
    ImportResult r;
    r.errors.push_back("cannot open file");
    return r;
  }
  std::string bytes(std::istreambuf_iterator<char>(in), {});
  Context ctx(opts, std::filesystem::path(path).parent_path().string());
  if (!ctx.model.ParseFromString(bytes)) {
    ImportResult r;
    r.errors.push_back("not a serialized ONNX model (ModelProto)");
    return r;
  }
  return importModel(ctx, path);
}

} // namespace graphvet::onnximport
