// Module-wide type inference: one walk per graph in topological order,
// descending into a holder's subgraphs when the holder is reached.
#include "ir/types.h"

#include "ir/op_library.h"

#include <fmt/format.h>

#include <map>

namespace graphvet {

TensorType defaultPortType() {
  return TensorType{DType::F32, {4}};
}

const TensorType *ModuleTypes::of(GraphId g, OutPort p) const {
  if (g >= ports.size() || p.node >= ports[g].size() || p.index >= ports[g][p.node].size())
    return nullptr;
  return &ports[g][p.node][p.index];
}

std::optional<TensorType> describedPortType(const Node &n, uint32_t out) {
  if (n.attrs.empty())
    return std::nullopt;
  const AttrValue *d = n.portAttr(true, out, "dtype");
  const AttrValue *s = n.portAttr(true, out, "shape");
  if (!d && !s)
    return std::nullopt;
  TensorType t = defaultPortType();
  if (d && d->text())
    if (auto dt = parseDType(*d->text()))
      t.dtype = *dt;
  if (s && s->isList()) {
    t.shape.clear();
    for (const AttrValue &dim : s->asList())
      t.shape.push_back(dim.isInt() ? dim.asInt() : 0);
  }
  return t;
}

std::vector<const Tensor *> constantInputs(const Graph &g, const Node &n) {
  std::vector<const Tensor *> consts;
  for (const auto &src : n.inputs) {
    const Tensor *c = nullptr;
    if (src && opKind(g.node(src->node)) == OpKind::Weight)
      c = attrTensor(g.node(src->node), "value");
    consts.push_back(c);
  }
  return consts;
}

bool hasRuntimeShapeOperands(const Graph &g, const Node &n) {
  const OpInfo *op = numericDefinition(n);
  if (!op || op->shapeOperands == 0)
    return false;
  std::vector<const Tensor *> consts = constantInputs(g, n);
  for (size_t i = 0; i < n.inputs.size() && i < 64; ++i)
    if ((op->shapeOperands >> i) & 1 && n.inputs[i] && !consts[i])
      return true;
  return false;
}

namespace {

class Inference {
public:
  Inference(const Module &m, Diagnostics &diags) : m_(m), diags_(diags) {
    types_.ports.resize(m.numGraphs());
  }

  ModuleTypes run() {
    std::vector<std::optional<TensorType>> none;
    inferGraph(0, none);
    return std::move(types_);
  }

private:
  void error(const Node &n, std::string msg) {
    diags_.push_back({n.loc, fmt::format("'{}': {}", n.name, msg), Severity::Error});
  }

  std::optional<TensorType> typeOf(GraphId g, const std::optional<OutPort> &src) {
    if (!src)
      return std::nullopt;
    const TensorType *t = types_.of(g, *src);
    return t ? std::optional<TensorType>(*t) : std::nullopt;
  }

  /// Described type, or the default, for ports that are not inferred.
  TensorType described(const Node &n, uint32_t k) {
    return describedPortType(n, k).value_or(defaultPortType());
  }

  /// An inferred type must agree with any description written on the port.
  void checkDescribed(const Node &n, uint32_t k, const TensorType &inferred) {
    if (auto d = describedPortType(n, k); d && *d != inferred)
      error(n, fmt::format("output {} is described as {} but its inferred type is {}", k, d->str(),
                           inferred.str()));
  }

  void inferGraph(GraphId g, const std::vector<std::optional<TensorType>> &parentInputs) {
    const Graph &graph = m_.graph(g);
    auto &out = types_.ports[g];
    out.assign(graph.capacity(), {});
    auto order = graph.topoOrder();
    if (!order)
      return;
    for (NodeId id : *order) {
      const Node &n = graph.node(id);
      if (!n.alive)
        continue;
      out[id] = inferNode(g, n, parentInputs);
      out[id].resize(n.numOutputs, defaultPortType());
    }
  }

  std::vector<TensorType> inferNode(GraphId g, const Node &n,
                                    const std::vector<std::optional<TensorType>> &parentInputs) {
    std::vector<std::optional<TensorType>> ins;
    for (const auto &src : n.inputs)
      ins.push_back(typeOf(g, src));
    const OpInfo &op = lookupOp(n.type);
    std::vector<TensorType> outs;
    switch (op.kind) {
    case OpKind::DataSource:
      if (g != 0) {
        auto p = n.intAttr("_parent_node_index");
        if (p && *p >= 0 && static_cast<size_t>(*p) < parentInputs.size() && parentInputs[*p]) {
          checkDescribed(n, 0, *parentInputs[*p]);
          outs.push_back(*parentInputs[*p]);
          break;
        }
      }
      for (uint32_t k = 0; k < n.numOutputs; ++k)
        outs.push_back(described(n, k));
      break;
    case OpKind::Weight:
      if (const Tensor *v = attrTensor(n, "value")) {
        checkDescribed(n, 0, v->type());
        outs.push_back(v->type());
        break;
      }
      if (n.attr("value")) {
        error(n, fmt::format("the value of {} must be a tensor literal (for example "
                             "f32[2] {{1, 2}})",
                             n.type));
        break;
      }
      [[fallthrough]];
    case OpKind::Variable:
    case OpKind::NetOutput:
      for (uint32_t k = 0; k < n.numOutputs; ++k)
        outs.push_back(described(n, k));
      break;
    case OpKind::Copy:
      // Copies (TensorMove, Identity, MemcpyAsync) own a fresh buffer of
      // their port description (semantics.md §1); the importer describes
      // ONNX's Identity with its input's type.
      for (uint32_t k = 0; k < n.numOutputs; ++k)
        outs.push_back(described(n, k));
      break;
    case OpKind::Call:
    case OpKind::If:
    case OpKind::Case:
      outs = inferHolder(n, ins);
      break;
    case OpKind::While:
      outs = inferWhile(n, ins);
      break;
    case OpKind::Ordinary:
      if (numericDefinition(n))
        outs = inferNumeric(g, n, ins, op);
      else
        for (uint32_t k = 0; k < n.numOutputs; ++k) {
          // A ref output shares its input's buffer and so its type, unless described.
          auto r = refInput(n, k);
          if (!describedPortType(n, k) && r && *r < ins.size() && ins[*r])
            outs.push_back(*ins[*r]);
          else
            outs.push_back(described(n, k));
        }
      break;
    }
    return outs;
  }

  std::vector<TensorType> inferNumeric(GraphId g, const Node &n,
                                       const std::vector<std::optional<TensorType>> &ins,
                                       const OpInfo &op) {
    std::vector<const Tensor *> consts = constantInputs(m_.graph(g), n);
    bool missing = false;
    for (size_t i = 0; i < n.inputs.size(); ++i)
      missing = missing || (n.inputs[i] && !ins[i]);
    std::vector<TensorType> outs;
    if (missing) // an input's own inference failed and was reported there
      return outs;
    if (std::optional<std::string> bad = attributeKindError(n)) {
      error(n, *bad);
      return outs;
    }
    bool runtimeShaped = hasRuntimeShapeOperands(m_.graph(g), n);
    if (runtimeShaped) {
      // The output types depend on values known only at run time: the
      // node's descriptions give them, the interpreter checks them.
      for (uint32_t k = 0; k < n.numOutputs; ++k)
        if (auto d = describedPortType(n, k))
          outs.push_back(*d);
      if (outs.size() == n.numOutputs)
        return outs;
      outs.clear();
    }
    InferContext ctx{n, ins, consts, {}, {}};
    if (!op.infer(ctx)) {
      std::string msg = ctx.error.empty() ? "type inference failed" : ctx.error;
      if (runtimeShaped)
        msg += " (or, to compute it at run time, describe every output: out<k>.dtype, "
               "out<k>.shape)";
      error(n, msg);
      return outs;
    }
    if (ctx.outputs.size() < n.numOutputs) {
      error(n, fmt::format("{} has {} outputs but '{}' defines {}", n.type, n.numOutputs, n.type,
                           ctx.outputs.size()));
      return outs;
    }
    ctx.outputs.resize(n.numOutputs);
    for (uint32_t k = 0; k < n.numOutputs; ++k)
      checkDescribed(n, k, ctx.outputs[k]);
    return std::move(ctx.outputs);
  }

  struct Result {
    TensorType type;
    bool numeric = false; ///< typed by inference, not by a port description
  };

  /// Only results computed by numeric ops and valued constants are typed by
  /// inference; every other result (placeholder ops, variables, a branch's
  /// own input, copies, nested holders) passes a buffer of its description.
  static bool typedByDescription(const Graph &, const Node &p) {
    if (opKind(p) == OpKind::Weight)
      return attrTensor(p, "value") == nullptr;
    return numericDefinition(p) == nullptr;
  }

  /// The type of a holder's output that the memory plan binds before its
  /// subgraphs' results or loop variable (semantics.md §1, the op library's
  /// precedence): an output bound to a variable is that variable's buffer,
  /// of the output's description; a ref output by attribute shares input
  /// i's buffer and type unless described; a view takes its description,
  /// as on an ordinary op. nullopt for an output bound the usual way. (The
  /// subgraph's result is not this buffer: typing the output by it sized a
  /// variable by a body's result, found by the campaign, issue 23.)
  std::optional<TensorType> reboundType(const Node &n, uint32_t k,
                                        const std::vector<std::optional<TensorType>> &ins) {
    if (n.attrs.empty())
      return std::nullopt;
    if (refVarSrcName(n, k))
      return described(n, k);
    if (auto i = refInput(n, k)) {
      if (!describedPortType(n, k) && *i < ins.size() && ins[*i])
        return *ins[*i];
      return described(n, k);
    }
    if (viewInput(n, k))
      return described(n, k);
    return std::nullopt;
  }

  /// Results of a subgraph by parent output index (from NetOutput's
  /// `in<k>._parent_node_index`).
  std::map<int64_t, Result> results(GraphId sub) {
    std::map<int64_t, Result> r;
    const Graph &sg = m_.graph(sub);
    for (NodeId id : sg.nodesOfType("NetOutput")) {
      const Node &no = sg.node(id);
      for (uint32_t k = 0; k < no.inputs.size(); ++k) {
        auto j = no.portIntAttr(false, k, "_parent_node_index");
        if (!j || !no.inputs[k])
          continue;
        if (auto t = typeOf(sub, no.inputs[k]))
          r.emplace(*j, Result{*t, !typedByDescription(sg, sg.node(no.inputs[k]->node))});
      }
    }
    return r;
  }

  /// A call's outputs are its body's results. A branch node's output is the
  /// taken branch's result: the branches must agree on its type when
  /// inference types one of them; placeholder results of different
  /// descriptions (version-1 graphs bind the output to whichever buffer the
  /// branch returns, semantics.md §1) give the output its port description.
  std::vector<TensorType> inferHolder(const Node &n,
                                      const std::vector<std::optional<TensorType>> &ins) {
    std::vector<std::optional<TensorType>> outs(n.numOutputs);
    std::vector<bool> disagree(n.numOutputs, false), numeric(n.numOutputs, false);
    for (size_t b = 0; b < n.subgraphs.size(); ++b) {
      GraphId sub = n.subgraphs[b];
      inferGraph(sub, ins);
      for (auto &[j, res] : results(sub)) {
        if (j < 0 || static_cast<size_t>(j) >= outs.size())
          continue;
        numeric[j] = numeric[j] || res.numeric;
        if (!outs[j])
          outs[j] = res.type;
        else if (*outs[j] != res.type && !disagree[j]) {
          disagree[j] = true;
          if (numeric[j])
            error(n, fmt::format("output {} is {} in branch '{}' but {} in branch '{}'", j,
                                 outs[j]->str(), m_.graph(n.subgraphs[0]).name, res.type.str(),
                                 m_.graph(sub).name));
        }
      }
    }
    std::vector<TensorType> r;
    // A holder's outputs are its subgraphs' buffers: a description on them
    // is not checked (version-1 graphs carry descriptions of other sizes).
    for (uint32_t k = 0; k < n.numOutputs; ++k) {
      if (auto bound = reboundType(n, k, ins)) {
        r.push_back(*bound);
      } else if (outs[k] && !disagree[k]) {
        r.push_back(*outs[k]);
      } else {
        r.push_back(described(n, k));
      }
    }
    return r;
  }

  /// A loop variable keeps its input's type; a body result of another type
  /// is written back truncated or zero-extended (semantics.md §2, as the
  /// interpreter copies), so it is not a type error.
  std::vector<TensorType> inferWhile(const Node &n,
                                     const std::vector<std::optional<TensorType>> &ins) {
    for (GraphId sub : n.subgraphs)
      inferGraph(sub, ins);
    std::vector<TensorType> r;
    for (uint32_t k = 0; k < n.numOutputs; ++k)
      if (auto bound = reboundType(n, k, ins))
        r.push_back(*bound);
      else
        r.push_back(k < ins.size() && ins[k] ? *ins[k] : described(n, k));
    return r;
  }

  const Module &m_;
  Diagnostics &diags_;
  ModuleTypes types_;
};

} // namespace

ModuleTypes inferModuleTypes(const Module &m, Diagnostics &diags) {
  return Inference(m, diags).run();
}

std::shared_ptr<const ModuleTypes> takeOrInferTypes(const Module &m, TypeHandoff *handoff) {
  if (handoff && handoff->given) {
    handoff->inferred = true;
    handoff->ofInput = std::move(handoff->given);
    handoff->given.reset();
    return handoff->ofInput;
  }
  // A pass infers again only after it changed the module: the input's types
  // are stale then, and released before the new ones are built.
  const bool first = handoff && !handoff->inferred;
  if (handoff) {
    handoff->inferred = true;
    handoff->ofInput.reset();
  }
  Diagnostics ignored;
  auto types = std::make_shared<const ModuleTypes>(inferModuleTypes(m, ignored));
  if (first)
    handoff->ofInput = types;
  return types;
}

} // namespace graphvet
