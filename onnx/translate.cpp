// ONNX graphs to graphvet graphs: inputs to `Data {index}`, initializers,
// `Constant` and statically computed shape operands to `Const`, nodes to
// nodes of the same op type and attribute names, graph outputs to the root
// `NetOutput`. `If` keeps its shape; its branches get every outer-scope value
// they read as an explicit input. `Loop` becomes `While` (semantics.md §2):
// loop variables [iteration, trip count, condition, carried values..., scan
// accumulators..., captured outer values...], a cond subgraph computing
// `iter < M and cond`, and a body that writes every variable back.
#include "ir/op_library.h"
#include "onnx/internal.h"
#include "onnx/tensor_io.h"

#include <fmt/format.h>

#include <functional>
#include <limits>
#include <memory>

namespace graphvet::onnximport {

std::optional<AttrValue> convertAttribute(const Context &ctx, const onnx::NodeProto &n,
                                          const onnx::AttributeProto &a, std::string &error) {
  using A = onnx::AttributeProto;
  auto tensor = [&](const onnx::TensorProto &t) -> std::optional<AttrValue> {
    std::string err;
    auto v = tensorFromProto(t, ctx.modelDir, err);
    if (!v) {
      error = fmt::format("attribute '{}': {}", a.name(), err);
      return std::nullopt;
    }
    return AttrValue::ofTensor(std::make_shared<const Tensor>(std::move(*v)));
  };
  AttrValue::List list;
  switch (a.type()) {
  case A::FLOAT:
    return AttrValue::ofFloat(static_cast<double>(a.f()));
  case A::INT:
    if (isDTypeAttribute(n.op_type(), a.name())) {
      auto d = dtypeOfElemType(static_cast<int32_t>(a.i()));
      if (!d) {
        error = fmt::format("attribute '{}': element type {} is not supported", a.name(),
                            elemTypeName(static_cast<int32_t>(a.i())));
        return std::nullopt;
      }
      return AttrValue::ofIdent(std::string(dtypeName(*d)));
    }
    return AttrValue::ofInt(a.i());
  case A::STRING:
    return AttrValue::ofString(a.s());
  case A::TENSOR:
    return tensor(a.t());
  case A::FLOATS:
    for (float f : a.floats())
      list.push_back(AttrValue::ofFloat(static_cast<double>(f)));
    return AttrValue::ofList(std::move(list));
  case A::INTS:
    for (int64_t i : a.ints())
      list.push_back(AttrValue::ofInt(i));
    return AttrValue::ofList(std::move(list));
  case A::STRINGS:
    for (const std::string &s : a.strings())
      list.push_back(AttrValue::ofString(s));
    return AttrValue::ofList(std::move(list));
  case A::TENSORS:
    for (const auto &t : a.tensors()) {
      auto v = tensor(t);
      if (!v)
        return std::nullopt;
      list.push_back(std::move(*v));
    }
    return AttrValue::ofList(std::move(list));
  default:
    error = fmt::format("attribute '{}' of kind {} is not supported", a.name(),
                        A::AttributeType_Name(a.type()));
    return std::nullopt;
  }
}

namespace {

constexpr int64_t kUnboundedIterations = 1000000;

Tensor scalarI64(int64_t v) {
  Tensor t(TensorType{DType::I64, {}});
  t.setInt(0, v);
  return t;
}

Tensor scalarTrue() {
  Tensor t(TensorType{DType::Bool, {}});
  t.setInt(0, 1);
  return t;
}

const onnx::GraphProto *graphAttr(const onnx::NodeProto &n, const std::string &name) {
  for (const auto &a : n.attribute())
    if (a.name() == name && a.has_g())
      return &a.g();
  return nullptr;
}

class Translator {
public:
  explicit Translator(Context &ctx) : ctx_(ctx) {}

  std::optional<Module> run(std::vector<ImportedInput> &inputs, std::vector<std::string> &outputs) {
    const onnx::GraphProto &g = ctx_.model.graph();
    GraphId root = newGraph(g.name().empty() ? "main" : g.name());
    Scope s{root, nullptr, {}, nullptr};
    std::set<std::string> inits; // the model's own (frozen inputs were added as initializers)
    for (const auto &t : g.initializer())
      if (!ctx_.frozen.count(t.name()))
        inits.insert(t.name());
    int64_t index = 0;
    for (const auto &vi : g.input()) {
      if (inits.count(vi.name()))
        continue;
      int64_t i = index++;
      if (ctx_.frozen.count(vi.name())) {
        addConstValue(s, vi.name(), vi.name());
        inputs.push_back({vi.name(), std::nullopt, true, {}});
        continue;
      }
      auto type = ctx_.staticType(vi.name());
      if (!type) {
        ctx_.error(fmt::format("input '{}' has no static type", vi.name()));
        continue;
      }
      NodeId d = graph(root).addNode(uniqueNode(root, vi.name()), "Data", {}, 1);
      AttrMap &a = graph(root).node(d).attrs;
      a["index"] = AttrValue::ofInt(i);
      a["out0.dtype"] = AttrValue::ofIdent(std::string(dtypeName(type->dtype)));
      AttrValue::List dims;
      for (int64_t dim : type->shape)
        dims.push_back(AttrValue::ofInt(dim));
      a["out0.shape"] = AttrValue::ofList(std::move(dims));
      s.values[vi.name()] = OutPort{d, 0};
      inputs.push_back({vi.name(), i, false, *type});
    }
    body(s, g);
    std::vector<std::optional<OutPort>> results;
    for (const auto &vi : g.output()) {
      results.push_back(resolve(s, vi.name(), "graph output"));
      outputs.push_back(vi.name());
    }
    graph(root).addNode(uniqueNode(root, "net_output"), "NetOutput", results, 0);
    removeDeadShapeChains();
    if (!ctx_.errors.empty())
      return std::nullopt;
    return std::move(m_);
  }

private:
  struct Scope {
    GraphId graph;
    Scope *parent;
    std::map<std::string, OutPort> values;
    /// Makes an outer-scope value visible in this graph (a subgraph Data);
    /// null in the root.
    std::function<OutPort(const std::string &)> capture;
  };

  Graph &graph(GraphId g) { return m_.graph(g); }

  GraphId newGraph(const std::string &base) {
    std::string name = base;
    for (int k = 1; graphNames_.count(name); ++k)
      name = fmt::format("{}_{}", base, k);
    graphNames_.insert(name);
    return m_.addGraph(name);
  }

  std::string uniqueNode(GraphId g, const std::string &base) {
    std::string b = base.empty() ? "node" : base;
    std::string name = b;
    for (int k = 1; graph(g).find(name) != kNoNode; ++k)
      name = fmt::format("{}_{}", b, k);
    return name;
  }

  /// Marks a node built for a shape-operand chain: removed at the end when
  /// nothing reads it any more (its value was computed statically).
  void markIfNeeded(GraphId g, NodeId id, const std::string &value) {
    if (ctx_.neededValues.count(value))
      removable_[g].insert(id);
  }

  NodeId addConst(GraphId g, const std::string &name, std::shared_ptr<const Tensor> value) {
    NodeId id = graph(g).addNode(uniqueNode(g, name), "Const", {}, 1);
    graph(g).node(id).attrs["value"] = AttrValue::ofTensor(std::move(value));
    return id;
  }

  NodeId addConst(GraphId g, const std::string &name, Tensor value) {
    return addConst(g, name, std::make_shared<const Tensor>(std::move(value)));
  }

  /// A Const holding the static value of `value`, bound to that name.
  void addConstValue(Scope &s, const std::string &nodeName, const std::string &value) {
    auto it = ctx_.staticValues.find(value);
    if (it == ctx_.staticValues.end())
      return; // its error was reported when it was read
    NodeId id = addConst(s.graph, nodeName, it->second);
    s.values[value] = OutPort{id, 0};
    markIfNeeded(s.graph, id, value);
  }

  std::optional<OutPort> lookup(Scope &s, const std::string &name) {
    if (auto it = s.values.find(name); it != s.values.end())
      return it->second;
    if (!s.parent)
      return std::nullopt;
    auto outer = lookup(*s.parent, name);
    if (!outer)
      return std::nullopt;
    // A constant is copied into the subgraph rather than passed in, so that
    // it stays a constant there (shape operands, folding).
    const Node &p = graph(s.parent->graph).node(outer->node);
    if (opKind(p) == OpKind::Weight && attrTensor(p, "value") && outer->index == 0) {
      NodeId id = addConst(s.graph, p.name, p.attr("value")->tensorPtr());
      return s.values[name] = OutPort{id, 0};
    }
    return s.values[name] = s.capture(name);
  }

  std::optional<OutPort> resolve(Scope &s, const std::string &name, const std::string &where) {
    if (name.empty())
      return std::nullopt;
    auto p = lookup(s, name);
    if (!p && !failed_.count(name)) // a failed node's outputs were reported with it
      ctx_.error(fmt::format("{}: unknown value '{}'", where, name));
    return p;
  }

  /// A subgraph Data reading the holder's input `parentIndex`.
  OutPort addParentData(GraphId g, const std::string &name, int64_t parentIndex) {
    NodeId id = graph(g).addNode(uniqueNode(g, name), "Data", {}, 1);
    graph(g).node(id).attrs["_parent_node_index"] = AttrValue::ofInt(parentIndex);
    return OutPort{id, 0};
  }

  /// Initializers, then nodes, of one ONNX graph.
  void body(Scope &s, const onnx::GraphProto &g) {
    for (const auto &t : g.initializer())
      if (!s.values.count(t.name()))
        addConstValue(s, t.name(), t.name());
    for (int i = 0; i < g.node_size(); ++i)
      node(s, g.node(i), nodeDisplayName(g.node(i), static_cast<size_t>(i)));
  }

  void node(Scope &s, const onnx::NodeProto &n, const std::string &name) {
    const std::string &type = n.op_type();
    if (type == "Constant") {
      addConstValue(s, name, n.output(0));
      return;
    }
    if (allOutputsStatic(n)) {
      for (int k = 0; k < n.output_size(); ++k)
        if (!n.output(k).empty())
          addConstValue(s, k == 0 ? name : fmt::format("{}_{}", name, k), n.output(k));
      return;
    }
    if (type == "If") {
      if (auto it = ctx_.staticBranches.find(&n); it != ctx_.staticBranches.end())
        return inlineBranch(s, n, name, it->second);
      return translateIf(s, n, name);
    }
    if (type == "Loop")
      return translateLoop(s, n, name);
    std::vector<std::optional<OutPort>> inputs;
    for (const std::string &in : n.input())
      inputs.push_back(resolve(s, in, fmt::format("node '{}'", name)));
    AttrMap attrs;
    for (const auto &a : n.attribute()) {
      std::string err;
      auto v = convertAttribute(ctx_, n, a, err);
      if (!v) {
        ctx_.error(fmt::format("node '{}': {}", name, err));
        continue;
      }
      if (a.name() == "outputs" || a.name() == "subgraphs") {
        ctx_.error(
            fmt::format("node '{}': attribute '{}' clashes with graphvet's own", name, a.name()));
        continue;
      }
      attrs[a.name()] = std::move(*v);
    }
    addOpsetAttributes(ctx_, type, attrs);
    // graphvet's copies (Identity among them) own a buffer of their port
    // description (semantics.md §1): ONNX's Identity has its input's type.
    if (type == "Identity" && n.output_size() >= 1 && !describe(n, name, attrs, "Identity's "))
      return;
    // A shape operand computed at run time (Slice's starts from a loop
    // counter): the outputs take their static types (ONNX's inference, or
    // the same in every iteration), which the interpreter checks at run time.
    for (size_t slot : shapeOperandSlots(ctx_, n))
      if (!ctx_.staticValues.count(n.input(static_cast<int>(slot)))) {
        if (!describe(n, name, attrs,
                      fmt::format("{}'s input {} ('{}') is computed at run time, so its ", type,
                                  slot, n.input(static_cast<int>(slot)))))
          return;
        break;
      }
    NodeId id = graph(s.graph).addNode(uniqueNode(s.graph, name), type, inputs,
                                       static_cast<uint32_t>(n.output_size()));
    graph(s.graph).node(id).attrs = std::move(attrs);
    bind(s, n, id, [](int k) { return static_cast<uint32_t>(k); });
  }

  /// Writes every output's static type on the node (`outK.dtype`,
  /// `outK.shape`); false, with an error naming `why`, when one has none.
  bool describe(const onnx::NodeProto &n, const std::string &name, AttrMap &attrs,
                const std::string &why) {
    for (int k = 0; k < n.output_size(); ++k) {
      if (n.output(k).empty())
        continue;
      auto t = ctx_.staticType(n.output(k));
      if (!t) {
        bool reported = std::any_of(n.input().begin(), n.input().end(),
                                    [&](const std::string &in) { return failed_.count(in) > 0; });
        auto c = ctx_.typeConflicts.find(n.output(k));
        std::string message = fmt::format(
            "node '{}': {}output '{}' needs a static type, which neither ONNX's shape inference "
            "nor graphvet's gives{}",
            name, why, n.output(k),
            c == ctx_.typeConflicts.end() ? std::string() : " (its type is " + c->second + ")");
        if (reported) // the input's own failure says why
          for (const std::string &o : n.output())
            failed_.insert(o);
        else
          fail(n, message);
        return false;
      }
      uint32_t port = static_cast<uint32_t>(k);
      attrs[Node::portKey(true, port, "dtype")] =
          AttrValue::ofIdent(std::string(dtypeName(t->dtype)));
      AttrValue::List dims;
      for (int64_t d : t->shape)
        dims.push_back(AttrValue::ofInt(d));
      attrs[Node::portKey(true, port, "shape")] = AttrValue::ofList(std::move(dims));
    }
    return true;
  }

  /// An If whose condition is known: the branch taken, in the If's place
  /// (its nodes join this graph; the If's outputs are the branch's results).
  void inlineBranch(Scope &s, const onnx::NodeProto &n, const std::string &name, int taken) {
    const onnx::GraphProto *g = graphAttr(n, taken == 0 ? "then_branch" : "else_branch");
    if (!g) {
      fail(n, fmt::format("node '{}': If needs two branches", name));
      return;
    }
    body(s, *g);
    for (int k = 0; k < n.output_size() && k < g->output_size(); ++k) {
      if (n.output(k).empty())
        continue;
      if (auto p = resolve(s, g->output(k).name(), fmt::format("branch '{}'", g->name())))
        s.values[n.output(k)] = *p;
      else
        failed_.insert(n.output(k));
    }
  }

  bool allOutputsStatic(const onnx::NodeProto &n) {
    bool any = false;
    for (const std::string &o : n.output()) {
      if (o.empty())
        continue;
      if (!ctx_.foldedSet.count(o))
        return false;
      any = true;
    }
    return any;
  }

  /// Binds the node's ONNX outputs to ports of `id`.
  void bind(Scope &s, const onnx::NodeProto &n, NodeId id,
            const std::function<uint32_t(int)> &port) {
    for (int k = 0; k < n.output_size(); ++k)
      if (!n.output(k).empty()) {
        s.values[n.output(k)] = OutPort{id, port(k)};
        markIfNeeded(s.graph, id, n.output(k));
      }
  }

  void addNetOutput(GraphId g, const std::vector<std::optional<OutPort>> &results,
                    const std::vector<int64_t> &parentIndex) {
    NodeId id = graph(g).addNode(uniqueNode(g, "net_output"), "NetOutput", results, 0);
    for (size_t k = 0; k < parentIndex.size(); ++k)
      graph(g)
          .node(id)
          .attrs[Node::portKey(false, static_cast<uint32_t>(k), "_parent_node_index")] =
          AttrValue::ofInt(parentIndex[k]);
  }

  void translateIf(Scope &s, const onnx::NodeProto &n, const std::string &name) {
    const onnx::GraphProto *branches[2] = {graphAttr(n, "then_branch"),
                                           graphAttr(n, "else_branch")};
    if (!branches[0] || !branches[1] || n.input_size() != 1) {
      fail(n, fmt::format("node '{}': If needs one input and two branches", name));
      return;
    }
    // graphvet's If has static output types: both branches must type (a
    // branch may not for these input shapes, e.g. a model's path for
    // another sample rate) and give their results static types.
    for (int b = 0; b < 2; ++b) {
      auto why = ctx_.untypedBranches.find(branches[b]);
      std::string reason;
      if (why != ctx_.untypedBranches.end())
        reason = "it does not type for these input shapes: " + why->second;
      for (int k = 0; k < branches[b]->output_size() && reason.empty(); ++k)
        if (!ctx_.staticType(branches[b]->output(k).name()))
          reason = fmt::format("its result {} ('{}') has no static type", k,
                               branches[b]->output(k).name());
      if (reason.empty())
        continue;
      std::string inputs;
      for (const std::string &in : inputsFeeding(ctx_, n.input(0)))
        inputs += fmt::format("{}'{}'", inputs.empty() ? "" : ", ", in);
      std::string hint = inputs.empty()
                             ? std::string()
                             : fmt::format(": the condition depends on input {}; freezing it "
                                           "(--freeze NAME=VALUE) keeps only the branch taken",
                                           inputs);
      fail(n, fmt::format("node '{}': the {} branch '{}' cannot be imported ({}); graphvet's If "
                          "needs both branches typed{}",
                          name, b == 0 ? "then" : "else", branches[b]->name(), reason, hint));
      return;
    }
    std::optional<OutPort> cond = resolve(s, n.input(0), fmt::format("node '{}'", name));
    std::vector<std::string> captured; // If input 1 + i
    GraphId subs[2];
    const char *suffix[2] = {"_then", "_else"};
    for (int b = 0; b < 2; ++b) {
      const onnx::GraphProto &bg = *branches[b];
      subs[b] = newGraph(bg.name().empty() ? name + suffix[b] : bg.name());
      GraphId g = subs[b];
      Scope bs{g, &s, {}, nullptr};
      bs.capture = [this, g, &captured](const std::string &value) {
        auto it = std::find(captured.begin(), captured.end(), value);
        int64_t i = it - captured.begin();
        if (it == captured.end())
          captured.push_back(value);
        return addParentData(g, value, 1 + i);
      };
      body(bs, bg);
      std::vector<std::optional<OutPort>> results;
      std::vector<int64_t> index;
      for (int k = 0; k < bg.output_size(); ++k) {
        results.push_back(resolve(bs, bg.output(k).name(), fmt::format("branch '{}'", bg.name())));
        index.push_back(k);
      }
      addNetOutput(g, results, index);
    }
    std::vector<std::optional<OutPort>> inputs{cond};
    for (const std::string &value : captured)
      inputs.push_back(resolve(s, value, fmt::format("node '{}'", name)));
    NodeId id = graph(s.graph).addNode(uniqueNode(s.graph, name), "If", inputs,
                                       static_cast<uint32_t>(n.output_size()));
    m_.attachSubgraph(s.graph, id, subs[0]);
    m_.attachSubgraph(s.graph, id, subs[1]);
    bind(s, n, id, [](int k) { return static_cast<uint32_t>(k); });
  }

  void translateLoop(Scope &s, const onnx::NodeProto &n, const std::string &name);

  Context &ctx_;
  Module m_;
  std::set<std::string> graphNames_;
  std::map<GraphId, std::set<NodeId>> removable_;
  /// Outputs of nodes that could not be translated (reported once).
  std::set<std::string> failed_;

  void fail(const onnx::NodeProto &n, std::string message) {
    ctx_.error(std::move(message));
    for (const std::string &o : n.output())
      failed_.insert(o);
  }

  void removeDeadShapeChains() {
    for (auto &[g, ids] : removable_) {
      for (bool changed = true; changed;) {
        changed = false;
        for (NodeId id : ids) {
          Node &nd = graph(g).node(id);
          if (!nd.alive || opKind(nd) == OpKind::DataSource || holdsSubgraphs(nd))
            continue;
          bool used = false;
          for (const auto &c : nd.consumers)
            used = used || !c.empty();
          if (!used) {
            graph(g).removeNode(id);
            changed = true;
          }
        }
      }
    }
  }
};

void Translator::translateLoop(Scope &s, const onnx::NodeProto &n, const std::string &name) {
  const onnx::GraphProto *bodyProto = graphAttr(n, "body");
  std::string where = fmt::format("node '{}'", name);
  if (!bodyProto || n.input_size() < 2) {
    fail(n, fmt::format("{}: Loop needs a body and the inputs M and cond", where));
    return;
  }
  const onnx::GraphProto &bp = *bodyProto;
  const int carried = n.input_size() - 2;
  const int scans = bp.output_size() - 1 - carried;
  if (scans < 0 || bp.input_size() != 2 + carried) {
    fail(n, fmt::format("{}: the Loop body's inputs and outputs do not match its inputs", where));
    return;
  }
  const bool hasM = !n.input(0).empty(), hasCond = !n.input(1).empty();
  std::optional<int64_t> tripCount;
  if (hasM)
    if (auto it = ctx_.staticValues.find(n.input(0));
        it != ctx_.staticValues.end() && it->second.size() == 1 && !it->second.anyUndef())
      tripCount = it->second.getInt(0);
  // graphvet's loop variables keep their type: a loop-carried value whose
  // type changes between iterations cannot be expressed.
  for (int k = 0; k < carried; ++k) {
    auto in = ctx_.staticType(n.input(2 + k)), out = ctx_.staticType(bp.output(1 + k).name());
    if (in && out && *in != *out) {
      fail(n, fmt::format("{}: loop-carried value '{}' is {} before the loop but the body makes "
                          "it {}; graphvet's loop variables keep one static type",
                          where, n.input(2 + k), in->str(), out->str()));
      return;
    }
  }
  std::vector<TensorType> scanTypes;
  for (int j = 0; j < scans; ++j) {
    const std::string &v = bp.output(1 + carried + j).name();
    auto t = ctx_.staticType(v);
    if (!tripCount) {
      fail(n, fmt::format("{}: Loop scan output '{}' needs a constant trip count (make input "
                          "'{}' a constant, e.g. by freezing it)",
                          where, v, n.input(0)));
      return;
    }
    if (!t) {
      auto c = ctx_.typeConflicts.find(v);
      fail(n, fmt::format("{}: the type of Loop scan output '{}' is not static{}", where, v,
                          c == ctx_.typeConflicts.end() ? std::string()
                                                        : " (it is " + c->second + ")"));
      return;
    }
    scanTypes.push_back(*t);
  }
  const int64_t firstScan = 3 + carried, firstCapture = firstScan + scans;
  const int64_t rows = tripCount ? std::max<int64_t>(0, *tripCount) : 0;
  // The accumulators are constants of [M, ...] zeros: bounded like any
  // buffer the interpreter allocates.
  for (const TensorType &t : scanTypes) {
    TensorType acc = t;
    acc.shape.insert(acc.shape.begin(), rows);
    auto elements = acc.checkedElements();
    if (!elements || static_cast<uint64_t>(*elements) > kMaxBufferBytes / dtypeBytes(acc.dtype)) {
      fail(n, fmt::format("{}: the scan output accumulator {} is larger than {} bytes", where,
                          acc.str(), kMaxBufferBytes));
      return;
    }
  }

  GraphId cg = newGraph(name + "_cond");
  GraphId bg = newGraph(bp.name().empty() ? name + "_body" : bp.name());

  // The body: Data for every loop variable, the ONNX body, then the updates.
  std::vector<std::string> captured;
  std::vector<OutPort> capturedData;
  Scope bs{bg, &s, {}, nullptr};
  bs.capture = [&, bg](const std::string &value) {
    OutPort d = addParentData(bg, value, firstCapture + static_cast<int64_t>(captured.size()));
    captured.push_back(value);
    capturedData.push_back(d);
    return d;
  };
  OutPort iter = addParentData(bg, bp.input(0).name(), 0);
  OutPort tripData = addParentData(bg, "trip_count", 1);
  bs.values[bp.input(0).name()] = iter;
  bs.values[bp.input(1).name()] = addParentData(bg, bp.input(1).name(), 2);
  for (int k = 0; k < carried; ++k)
    bs.values[bp.input(2 + k).name()] = addParentData(bg, bp.input(2 + k).name(), 3 + k);
  std::vector<OutPort> accData;
  for (int j = 0; j < scans; ++j)
    accData.push_back(addParentData(bg, bp.output(1 + carried + j).name() + "_acc", firstScan + j));
  body(bs, bp);
  std::vector<std::optional<OutPort>> outs;
  for (int k = 0; k < bp.output_size(); ++k)
    outs.push_back(resolve(bs, bp.output(k).name(), fmt::format("Loop body of '{}'", name)));

  NodeId one = addConst(bg, "iteration_step", scalarI64(1));
  NodeId next =
      graph(bg).addNode(uniqueNode(bg, "next_iteration"), "Add", {iter, OutPort{one, 0}}, 1);
  std::vector<std::optional<OutPort>> results{OutPort{next, 0}, tripData, outs[0]};
  for (int k = 0; k < carried; ++k)
    results.push_back(outs[1 + k]);
  for (int j = 0; j < scans; ++j) {
    // acc = Where(row == iter, value, acc): row j of the accumulator takes
    // the value of iteration j (rows broadcast over the value's shape).
    Shape rowShape(scanTypes[j].shape.size() + 1, 1);
    rowShape[0] = rows;
    Tensor rowIndex(TensorType{DType::I64, rowShape});
    for (int64_t r = 0; r < rows; ++r)
      rowIndex.setInt(r, r);
    std::string v = bp.output(1 + carried + j).name();
    NodeId idx = addConst(bg, v + "_rows", std::move(rowIndex));
    NodeId eq =
        graph(bg).addNode(uniqueNode(bg, v + "_row_mask"), "Equal", {OutPort{idx, 0}, iter}, 1);
    NodeId upd = graph(bg).addNode(uniqueNode(bg, v + "_scan"), "Where",
                                   {OutPort{eq, 0}, outs[1 + carried + j], accData[j]}, 1);
    results.push_back(OutPort{upd, 0});
  }
  for (const OutPort &d : capturedData) // written back unchanged
    results.push_back(d);
  std::vector<int64_t> index(results.size());
  for (size_t k = 0; k < index.size(); ++k)
    index[k] = static_cast<int64_t>(k);
  addNetOutput(bg, results, index);

  // The cond subgraph: iter < M (when M is given) and cond (when given).
  std::optional<OutPort> c;
  if (hasM) {
    OutPort i = addParentData(cg, "iteration", 0), m = addParentData(cg, "trip_count", 1);
    c = OutPort{graph(cg).addNode(uniqueNode(cg, "below_trip_count"), "Less", {i, m}, 1), 0};
  }
  if (hasCond) {
    OutPort cd = addParentData(cg, "cond", 2);
    c = c ? OutPort{graph(cg).addNode(uniqueNode(cg, "continue"), "And", {*c, cd}, 1), 0} : cd;
  }
  if (!c)
    c = OutPort{addConst(cg, "forever", scalarTrue()), 0};
  addNetOutput(cg, {c}, {});

  // The While in the parent: initial values of every loop variable. A
  // While writes its loop variables in place (semantics.md §1), where
  // ONNX's Loop leaves its inputs alone: each variable the body changes
  // starts as a copy (TensorMove) of its initial value; the trip count and
  // the captured values are written back unchanged.
  GraphId pg = s.graph;
  auto copied = [&](std::optional<OutPort> init, const std::string &value,
                    std::optional<TensorType> type) -> std::optional<OutPort> {
    if (!init)
      return init;
    if (!type) {
      fail(n, fmt::format("{}: the type of the Loop's initial value '{}' is not static", where,
                          value));
      return std::nullopt;
    }
    NodeId id = graph(pg).addNode(uniqueNode(pg, name + "_init_" + value), "TensorMove", {init}, 1);
    AttrMap &a = graph(pg).node(id).attrs;
    a["out0.dtype"] = AttrValue::ofIdent(std::string(dtypeName(type->dtype)));
    AttrValue::List dims;
    for (int64_t d : type->shape)
      dims.push_back(AttrValue::ofInt(d));
    a["out0.shape"] = AttrValue::ofList(std::move(dims));
    return OutPort{id, 0};
  };
  const TensorType scalarBool{DType::Bool, {}}, scalarIndex{DType::I64, {}};
  std::vector<std::optional<OutPort>> inputs;
  inputs.push_back(copied(OutPort{addConst(pg, name + "_iteration0", scalarI64(0)), 0}, "iteration",
                          scalarIndex));
  inputs.push_back(hasM ? resolve(s, n.input(0), where)
                        : OutPort{addConst(pg, name + "_no_trip_count",
                                           scalarI64(std::numeric_limits<int64_t>::max())),
                                  0});
  inputs.push_back(
      hasCond
          ? copied(resolve(s, n.input(1), where), n.input(1), ctx_.staticType(n.input(1)))
          : copied(OutPort{addConst(pg, name + "_no_cond", scalarTrue()), 0}, "cond", scalarBool));
  for (int k = 0; k < carried; ++k)
    inputs.push_back(
        copied(resolve(s, n.input(2 + k), where), n.input(2 + k), ctx_.staticType(n.input(2 + k))));
  for (int j = 0; j < scans; ++j) {
    Shape shape = scanTypes[j].shape;
    shape.insert(shape.begin(), rows);
    TensorType accType{scanTypes[j].dtype, shape};
    inputs.push_back(
        copied(OutPort{addConst(pg, fmt::format("{}_scan{}_init", name, j), Tensor(accType)), 0},
               fmt::format("scan{}", j), accType));
  }
  for (const std::string &value : captured)
    inputs.push_back(resolve(s, value, where));
  NodeId w = graph(pg).addNode(uniqueNode(pg, name), "While", inputs,
                               static_cast<uint32_t>(inputs.size()));
  graph(pg).node(w).attrs["max_iterations"] =
      AttrValue::ofInt(tripCount ? std::max<int64_t>(0, *tripCount) : kUnboundedIterations);
  m_.attachSubgraph(pg, w, cg);
  m_.attachSubgraph(pg, w, bg);
  bind(s, n, w, [](int k) { return static_cast<uint32_t>(3 + k); });
}

} // namespace

std::optional<Module> translateModel(Context &ctx, std::vector<ImportedInput> &inputs,
                                     std::vector<std::string> &outputs) {
  return Translator(ctx).run(inputs, outputs);
}

} // namespace graphvet::onnximport
