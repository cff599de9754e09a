// The export driver and the walk over graphs: root `Data` to graph inputs
// (ordered by `index`, named as the nodes), `Const` to root initializers,
// calls inlined (their subgraph's `Data` read the call's inputs, their
// `NetOutput` gives the call's outputs), `If` to ONNX `If` with two
// subgraphs, `While` to ONNX `Loop`, the root `NetOutput` to graph outputs;
// then ONNX's checker and
// strict shape inference. Numeric ops are written by export_node.cpp.
#include "ir/op_library.h"
#include "ir/verifier.h"
#include "onnx/export_internal.h"
#include "onnx/tensor_io.h"

#include <fmt/format.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <fstream>
#include <functional>

namespace graphvet::onnxexport {

namespace {

/// The name a value gets by default: the node's, `:k` for output k > 0.
std::string defaultValueName(const Node &n, uint32_t port) {
  return port == 0 ? n.name : fmt::format("{}:{}", n.name, port);
}

onnx::TensorProto protoOf(const Tensor &t, const std::string &name) {
  onnx::TensorProto p = onnximport::tensorToProto(t, name);
  if (t.dtype() == DType::Bool) { // any nonzero byte is true; ONNX stores 0 or 1
    std::string bytes = p.raw_data();
    for (char &c : bytes)
      c = c != 0 ? 1 : 0;
    p.set_raw_data(bytes);
  }
  return p;
}

/// True when every consumer of the node's outputs is a While's loop
/// variable.
bool feedsOnlyWhile(const Graph &graph, NodeId id) {
  const Node &n = graph.node(id);
  bool any = false;
  for (uint32_t k = 0; k < n.numOutputs; ++k)
    for (const InPort &c : graph.consumers(OutPort{id, k})) {
      if (opKind(graph.node(c.node)) != OpKind::While)
        return false;
      any = true;
    }
  return any;
}

} // namespace

void setValueType(onnx::ValueInfoProto *vi, const TensorType &t) {
  auto *tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnximport::elemTypeOfDType(t.dtype));
  auto *shape = tt->mutable_shape();
  for (int64_t d : t.shape)
    shape->add_dim()->set_dim_value(d);
}

Tensor transposeTensor(const Tensor &t, const std::vector<int64_t> &perm) {
  Shape shape(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    shape[i] = t.shape()[static_cast<size_t>(perm[i])];
  Tensor out(TensorType{t.dtype(), shape});
  std::vector<int64_t> inStrides = stridesOf(t.shape());
  std::vector<int64_t> index(perm.size(), 0);
  const int64_t n = out.size();
  for (int64_t o = 0; o < n; ++o) {
    int64_t src = 0;
    for (size_t i = 0; i < perm.size(); ++i)
      src += index[i] * inStrides[static_cast<size_t>(perm[i])];
    out.copyElement(o, t, src);
    for (size_t i = perm.size(); i-- > 0;) { // next index, row-major
      if (++index[i] < shape[i])
        break;
      index[i] = 0;
    }
  }
  return out;
}

std::string Exporter::fresh(const std::string &base) {
  std::string b = base.empty() ? "value" : base;
  std::string name = b;
  for (int k = 1; usedValues_.count(name); ++k)
    name = fmt::format("{}_{}", b, k);
  usedValues_.insert(name);
  return name;
}

std::string Exporter::freshNodeName(const std::string &base, const onnx::GraphProto *gp) {
  // Unique per ONNX graph, as graphvet's names are per graph: the
  // importer names its nodes after them.
  std::set<std::string> &used = usedNodes_[gp];
  std::string b = base.empty() ? "node" : base;
  std::string name = b;
  for (int k = 1; used.count(name); ++k)
    name = fmt::format("{}_{}", b, k);
  used.insert(name);
  return name;
}

std::string Exporter::valueOf(GraphId g, const std::optional<OutPort> &p) const {
  if (!p)
    return "";
  auto it = names_[g].find(*p);
  // A value of a refused node: the refusal was reported; the name only
  // keeps the walk going so that every refusal is reported together.
  return it == names_[g].end() ? "<not exported>" : it->second;
}

std::string Exporter::outputName(GraphId g, OutPort p) {
  if (auto it = reserved_.find({g, p}); it != reserved_.end())
    return names_[g][p] = it->second;
  return names_[g][p] = fresh(defaultValueName(m_.graph(g).node(p.node), p.index));
}

std::string Exporter::addInitializer(const Tensor &t, const std::string &base) {
  std::string name = fresh(base);
  *model_.mutable_graph()->add_initializer() = protoOf(t, name);
  constants_.emplace(name, t);
  ++summary_.initializers;
  return name;
}

const Tensor *Exporter::constantOf(const std::string &value) const {
  auto it = constants_.find(value);
  return it == constants_.end() ? nullptr : &it->second;
}

void Exporter::reserveRootNames() {
  const Graph &root = m_.root();
  std::vector<NodeId> data;
  for (NodeId id : root.liveNodes())
    if (opKind(root.node(id)) == OpKind::DataSource)
      data.push_back(id);
  std::stable_sort(data.begin(), data.end(), [&](NodeId a, NodeId b) {
    return root.node(a).intAttr("index").value_or(0) < root.node(b).intAttr("index").value_or(0);
  });
  for (NodeId id : data) {
    const Node &n = root.node(id);
    std::string name = fresh(n.name);
    names_[0][OutPort{id, 0}] = name;
    onnx::ValueInfoProto *vi = model_.mutable_graph()->add_input();
    vi->set_name(name);
    if (const TensorType *t = types_.of(0, OutPort{id, 0}))
      setValueType(vi, *t);
    ++summary_.inputs;
  }
  for (NodeId id : root.liveNodes()) {
    const Node &n = root.node(id);
    if (opKind(n) != OpKind::NetOutput)
      continue;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const std::optional<OutPort> &p = n.inputs[k];
      std::string desired = k < opts_.outputNames.size() ? opts_.outputNames[k]
                            : p ? defaultValueName(root.node(p->node), p->index)
                                : fmt::format("output_{}", k);
      desired = fresh(desired);
      outputNames_.push_back(desired);
      if (p)
        reserveOutput(0, *p, desired);
    }
    break;
  }
}

void Exporter::reserveOutput(GraphId g, OutPort p, const std::string &name) {
  // An op's output takes the graph output's name itself; anything else (an
  // input, a constant, a value returned twice) reaches it through an
  // Identity (writeOutputs).
  if (isReserved(g, p))
    return;
  const Node &n = m_.graph(g).node(p.node);
  switch (opKind(n)) {
  case OpKind::Ordinary:
  case OpKind::If:
  case OpKind::While:
  case OpKind::Weight:
    reserved_[{g, p}] = name;
    return;
  case OpKind::Copy:
    if (n.type == "Identity")
      reserved_[{g, p}] = name;
    return;
  case OpKind::Call: {
    if (n.subgraphs.size() != 1)
      return;
    GraphId sub = n.subgraphs[0];
    const Graph &body = m_.graph(sub);
    for (NodeId id : body.liveNodes()) {
      const Node &out = body.node(id);
      if (opKind(out) != OpKind::NetOutput)
        continue;
      for (size_t k = 0; k < out.inputs.size(); ++k)
        if (out.inputs[k] &&
            out.portIntAttr(false, static_cast<uint32_t>(k), "_parent_node_index")
                    .value_or(static_cast<int64_t>(k)) == static_cast<int64_t>(p.index))
          return reserveOutput(sub, *out.inputs[k], name);
    }
    return;
  }
  default:
    return;
  }
}

void Exporter::emitGraph(GraphId g, onnx::GraphProto *gp,
                         const std::vector<std::string> &parentInputs) {
  const Graph &graph = m_.graph(g);
  auto order = graph.topoOrder();
  if (!order) {
    errors_.push_back(fmt::format("graph '{}' has a cycle", graph.name));
    return;
  }
  for (NodeId id : *order) {
    const Node &n = graph.node(id);
    try {
      switch (opKind(n)) {
      case OpKind::DataSource: {
        if (g == 0)
          break; // a graph input, named by reserveRootNames
        auto index = n.intAttr("_parent_node_index");
        if (!index || *index < 0 || static_cast<size_t>(*index) >= parentInputs.size() ||
            parentInputs[static_cast<size_t>(*index)].empty())
          refuse("a subgraph input without a connected holder input");
        names_[g][OutPort{id, 0}] = parentInputs[static_cast<size_t>(*index)];
        break;
      }
      case OpKind::Weight:
        emitConst(g, id, gp);
        break;
      case OpKind::NetOutput:
        break; // read by the holder (resultsOf) or writeOutputs
      case OpKind::Call:
        emitCall(g, id, gp);
        break;
      case OpKind::If:
        emitIf(g, id, gp);
        break;
      case OpKind::Variable:
        refuse("a variable (a persistent buffer) has no ONNX form");
      case OpKind::Copy:
        if (n.type == "TensorMove" && feedsOnlyWhile(graph, id)) {
          // The importer's copy of a Loop's initial value (a While writes
          // its loop variables in place): ONNX's Loop leaves its inputs
          // alone, so the copy is the input itself.
          names_[g][OutPort{id, 0}] = valueOf(g, n.inputs.empty() ? std::nullopt : n.inputs[0]);
          break;
        }
        if (n.type != "Identity")
          refuse("a GE memory op (a copy into a fresh buffer) has no ONNX form; ONNX values "
                 "are immutable, so the copy is not needed there");
        emitOp(g, id, gp);
        break;
      case OpKind::Case:
        refuse("Case has no ONNX form (ONNX's If has two branches)");
      case OpKind::While:
        emitWhile(g, id, gp);
        break;
      case OpKind::Ordinary:
        emitOp(g, id, gp);
        break;
      }
    } catch (const Refusal &r) {
      errors_.push_back(
          fmt::format("cannot export {} ({}): {}", m_.qualifiedName(g, id), n.type, r.why));
    }
  }
}

void Exporter::emitConst(GraphId g, NodeId id, onnx::GraphProto *gp) {
  const Node &n = m_.graph(g).node(id);
  const AttrValue *v = n.attr("value");
  if (!v || !v->isTensor())
    refuse("a Const without a value");
  if (v->asTensor().anyUndef())
    refuse("its value has indeterminate elements, which ONNX cannot hold");
  // A root initializer, except in an If or Loop subgraph and where a
  // NetOutput returns the constant itself: there a Constant node, so that
  // the graph returns a value of its own (in GE's memory model a returned
  // weight is the weight's buffer; an Identity's copy would be another).
  bool returned = false;
  for (const InPort &c : m_.graph(g).consumers(OutPort{id, 0}))
    returned = returned || opKind(m_.graph(g).node(c.node)) == OpKind::NetOutput;
  if (gp == model_.mutable_graph() && !returned) {
    names_[g][OutPort{id, 0}] = addInitializer(v->asTensor(), n.name);
    return;
  }
  std::string name = outputName(g, OutPort{id, 0});
  onnx::NodeProto *c = gp->add_node();
  c->set_op_type("Constant");
  c->set_name(freshNodeName(n.name, gp));
  c->add_output(name);
  onnx::AttributeProto *a = c->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = protoOf(v->asTensor(), "");
  constants_.emplace(name, v->asTensor());
  ++summary_.nodes;
}

std::vector<std::string> Exporter::resultsOf(GraphId g, size_t holderOutputs) {
  std::vector<std::string> results(holderOutputs);
  const Graph &graph = m_.graph(g);
  for (NodeId id : graph.liveNodes()) {
    const Node &n = graph.node(id);
    if (opKind(n) != OpKind::NetOutput)
      continue;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      int64_t index = n.portIntAttr(false, static_cast<uint32_t>(k), "_parent_node_index")
                          .value_or(static_cast<int64_t>(k));
      if (index >= 0 && static_cast<size_t>(index) < holderOutputs)
        results[static_cast<size_t>(index)] = valueOf(g, n.inputs[k]);
    }
  }
  return results;
}

void Exporter::emitCall(GraphId g, NodeId id, onnx::GraphProto *gp) {
  const Node &n = m_.graph(g).node(id);
  if (n.subgraphs.size() != 1)
    refuse(fmt::format("a call holds one subgraph, this one {}", n.subgraphs.size()));
  std::vector<std::string> inputs;
  for (const auto &in : n.inputs)
    inputs.push_back(valueOf(g, in));
  // A call runs as if inlined (semantics.md §2): its body is written in
  // the caller's place, its results are the call's outputs.
  GraphId sub = n.subgraphs[0];
  emitGraph(sub, gp, inputs);
  std::vector<std::string> results = resultsOf(sub, n.numOutputs);
  for (uint32_t j = 0; j < n.numOutputs; ++j) {
    if (results[j].empty() && !m_.graph(g).consumers(OutPort{id, j}).empty())
      refuse(fmt::format("output {} is used but its subgraph '{}' returns nothing for it", j,
                         m_.graph(sub).name));
    names_[g][OutPort{id, j}] = results[j];
  }
  ++summary_.inlinedCalls;
}

void Exporter::emitIf(GraphId g, NodeId id, onnx::GraphProto *gp) {
  const Node &n = m_.graph(g).node(id);
  if (n.subgraphs.size() != 2 || n.inputs.empty() || !n.inputs[0])
    refuse("an If needs a condition and two branches");
  std::vector<std::string> inputs;
  for (const auto &in : n.inputs)
    inputs.push_back(valueOf(g, in));
  onnx::NodeProto node;
  node.set_op_type("If");
  node.set_name(freshNodeName(n.name, gp));
  node.add_input(inputs[0]);
  const char *attrNames[2] = {"then_branch", "else_branch"};
  for (int b = 0; b < 2; ++b) {
    GraphId sub = n.subgraphs[static_cast<size_t>(b)];
    onnx::AttributeProto *a = node.add_attribute();
    a->set_name(attrNames[b]);
    a->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto *bp = a->mutable_g();
    bp->set_name(m_.graph(sub).name);
    // Outer values are visible in an ONNX subgraph: the branch's Data read
    // the If's inputs by name.
    emitGraph(sub, bp, inputs);
    std::vector<std::string> results = resultsOf(sub, n.numOutputs);
    std::set<std::string> returned;
    for (uint32_t j = 0; j < n.numOutputs; ++j) {
      if (results[j].empty())
        refuse(fmt::format("the {} branch '{}' returns nothing for output {}",
                           b == 0 ? "then" : "else", m_.graph(sub).name, j));
      subgraphResult(bp, results[j], returned, types_.of(g, OutPort{id, j}));
    }
  }
  for (uint32_t j = 0; j < n.numOutputs; ++j)
    node.add_output(outputName(g, OutPort{id, j}));
  *gp->add_node() = std::move(node);
  ++summary_.nodes;
}

std::string Exporter::subgraphResult(onnx::GraphProto *bp, const std::string &value,
                                     std::set<std::string> &returned, const TensorType *type) {
  bool produced = false;
  for (const auto &bn : bp->node())
    for (const std::string &o : bn.output())
      produced = produced || o == value;
  std::string r = value;
  if (!produced || returned.count(r)) {
    onnx::NodeProto *idn = bp->add_node();
    idn->set_op_type("Identity");
    idn->set_name(freshNodeName(value + "_result", bp));
    idn->add_input(value);
    r = fresh(value + "_result");
    idn->add_output(r);
    ++summary_.nodes;
  }
  returned.insert(r);
  onnx::ValueInfoProto *vi = bp->add_output();
  vi->set_name(r);
  if (type)
    setValueType(vi, *type);
  return r;
}

bool Exporter::isIterationCounter(GraphId bodyG, const std::string &initial) const {
  const Tensor *start = constantOf(initial);
  if (!start || start->dtype() != DType::I64 || !start->shape().empty() || start->getInt(0) != 0)
    return false;
  const Graph &body = m_.graph(bodyG);
  auto isParentData = [&](const std::optional<OutPort> &p) {
    return p && opKind(body.node(p->node)) == OpKind::DataSource &&
           body.node(p->node).intAttr("_parent_node_index") == 0;
  };
  auto isOne = [&](const std::optional<OutPort> &p) {
    if (!p || opKind(body.node(p->node)) != OpKind::Weight)
      return false;
    const AttrValue *v = body.node(p->node).attr("value");
    return v && v->isTensor() && v->asTensor().dtype() == DType::I64 &&
           v->asTensor().shape().empty() && v->asTensor().getInt(0) == 1;
  };
  for (NodeId id : body.liveNodes()) {
    const Node &out = body.node(id);
    if (opKind(out) != OpKind::NetOutput)
      continue;
    for (size_t k = 0; k < out.inputs.size(); ++k) {
      if (out.portIntAttr(false, static_cast<uint32_t>(k), "_parent_node_index")
                  .value_or(static_cast<int64_t>(k)) != 0 ||
          !out.inputs[k])
        continue;
      const Node &add = body.node(out.inputs[k]->node);
      return add.type == "Add" && add.inputs.size() == 2 &&
             ((isParentData(add.inputs[0]) && isOne(add.inputs[1])) ||
              (isOne(add.inputs[0]) && isParentData(add.inputs[1])));
    }
  }
  return false;
}

void Exporter::emitWhile(GraphId g, NodeId id, onnx::GraphProto *gp) {
  const Node &n = m_.graph(g).node(id);
  if (n.subgraphs.size() != 2)
    refuse("a While holds a cond and a body subgraph");
  const GraphId condG = n.subgraphs[0], bodyG = n.subgraphs[1];
  const size_t vars = n.inputs.size();
  std::vector<std::string> initial;
  std::vector<const TensorType *> types;
  for (size_t k = 0; k < vars; ++k) {
    if (!n.inputs[k])
      refuse(fmt::format("loop variable {} is unconnected", k));
    initial.push_back(valueOf(g, n.inputs[k]));
    types.push_back(types_.of(g, *n.inputs[k]));
    if (!types.back())
      refuse(fmt::format("loop variable {} has no type", k));
  }
  auto condition = [&]() {
    const Graph &cg = m_.graph(condG);
    for (NodeId c : cg.liveNodes())
      if (opKind(cg.node(c)) == OpKind::NetOutput && !cg.node(c).inputs.empty() &&
          cg.node(c).inputs[0]) {
        const TensorType *t = types_.of(condG, *cg.node(c).inputs[0]);
        if (!t || t->dtype != DType::Bool || t->numElements() != 1)
          refuse("its condition is not one bool (ONNX's Loop takes a bool condition)");
        return valueOf(condG, cg.node(c).inputs[0]);
      }
    refuse("its cond subgraph returns no condition");
  };
  // While runs cond, then the body, until cond is false or max_iterations
  // bodies have run: ONNX's Loop with M = max_iterations, the condition on
  // the initial values, and a body that computes the next condition.
  Tensor maxIterations(TensorType{DType::I64, {}});
  maxIterations.setInt(0, n.intAttr("max_iterations").value_or(3));
  std::string m = addInitializer(maxIterations, n.name + "_max_iterations");
  emitGraph(condG, gp, initial);
  std::string first = condition();

  onnx::NodeProto node;
  node.set_op_type("Loop");
  node.set_name(freshNodeName(n.name, gp));
  node.add_input(m);
  node.add_input(first);
  for (const std::string &v : initial)
    node.add_input(v);
  onnx::AttributeProto *a = node.add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto *bp = a->mutable_g();
  bp->set_name(m_.graph(bodyG).name);
  auto addInput = [&](const std::string &base, const TensorType &t) {
    std::string name = fresh(base);
    onnx::ValueInfoProto *vi = bp->add_input();
    vi->set_name(name);
    setValueType(vi, t);
    return name;
  };
  std::string iteration = addInput(n.name + "_iteration", TensorType{DType::I64, {}});
  addInput(n.name + "_cond", TensorType{DType::Bool, {}});
  std::vector<std::string> current;
  for (size_t k = 0; k < vars; ++k)
    current.push_back(addInput(fmt::format("{}_var{}", n.name, k), *types[k]));
  // The importer's iteration counter (variable 0, from 0, the body adding
  // 1) equals ONNX's iteration number in every iteration: the body reads
  // the Loop's own, which a re-import follows iteration by iteration (a
  // Slice whose starts come from the counter).
  std::vector<std::string> bodyInputs = current;
  if (vars > 0 && isIterationCounter(bodyG, initial[0]))
    bodyInputs[0] = iteration;
  emitGraph(bodyG, bp, bodyInputs);
  std::vector<std::string> next = resultsOf(bodyG, vars);
  for (size_t k = 0; k < vars; ++k)
    if (next[k].empty()) // not written back: unchanged
      next[k] = current[k];
  emitGraph(condG, bp, next);
  std::set<std::string> returned;
  subgraphResult(bp, condition(), returned, nullptr);
  for (size_t k = 0; k < vars; ++k)
    subgraphResult(bp, next[k], returned, types[k]);
  for (uint32_t j = 0; j < n.numOutputs; ++j)
    node.add_output(j < vars ? outputName(g, OutPort{id, j}) : std::string());
  *gp->add_node() = std::move(node);
  ++summary_.nodes;
}

void Exporter::writeOutputs() {
  const Graph &root = m_.root();
  onnx::GraphProto *gp = model_.mutable_graph();
  for (NodeId id : root.liveNodes()) {
    const Node &n = root.node(id);
    if (opKind(n) != OpKind::NetOutput)
      continue;
    for (size_t k = 0; k < n.inputs.size() && k < outputNames_.size(); ++k) {
      if (!n.inputs[k]) {
        errors_.push_back(
            fmt::format("cannot export {} (NetOutput): input {} is unconnected", n.name, k));
        continue;
      }
      std::string v = valueOf(0, n.inputs[k]);
      const std::string &name = outputNames_[k];
      if (v != name) {
        onnx::NodeProto *idn = gp->add_node();
        idn->set_op_type("Identity");
        idn->set_name(freshNodeName(name, gp));
        idn->add_input(v);
        idn->add_output(name);
        ++summary_.nodes;
      }
      onnx::ValueInfoProto *vi = gp->add_output();
      vi->set_name(name);
      if (const TensorType *t = types_.of(0, *n.inputs[k]))
        setValueType(vi, *t);
      ++summary_.outputs;
    }
    break;
  }
}

namespace {

void collectUses(const onnx::GraphProto &g, std::set<std::string> &used) {
  for (const auto &n : g.node()) {
    for (const std::string &in : n.input())
      used.insert(in);
    for (const auto &a : n.attribute())
      if (a.has_g())
        collectUses(a.g(), used);
  }
  for (const auto &o : g.output())
    used.insert(o.name());
}

/// Removes the nodes of `g` (and its subgraphs) that `dead` says to;
/// returns how many.
int64_t removeNodes(onnx::GraphProto &g, const std::function<bool(const onnx::NodeProto &)> &dead) {
  int64_t removed = 0;
  auto *nodes = g.mutable_node();
  for (int i = nodes->size(); i-- > 0;) {
    if (dead(nodes->Get(i))) {
      nodes->DeleteSubrange(i, 1);
      ++removed;
      continue;
    }
    for (auto &a : *nodes->Mutable(i)->mutable_attribute())
      if (a.has_g())
        removed += removeNodes(*a.mutable_g(), dead);
  }
  return removed;
}

} // namespace

void Exporter::removeUnused() {
  std::set<std::string> used;
  for (bool changed = true; changed;) {
    used.clear();
    collectUses(model_.graph(), used);
    int64_t wrapping = 0;
    int64_t removed = removeNodes(*model_.mutable_graph(), [&](const onnx::NodeProto &n) {
      bool dead = n.op_type() == "Transpose" && n.output_size() == 1 &&
                  layoutTransposeOf_.count(n.output(0)) && !used.count(n.output(0));
      wrapping += dead && wrappingTransposes_.count(n.output(0)) ? 1 : 0;
      return dead;
    });
    summary_.layoutTransposes -= wrapping;
    summary_.nodes -= removed;
    changed = removed > 0;
  }
  // Constants only an undone Transpose read (convert-layout's transposed
  // weights, transposed back at export time).
  auto *inits = model_.mutable_graph()->mutable_initializer();
  for (int i = inits->size(); i-- > 0;)
    if (!used.count(inits->Get(i).name())) {
      inits->DeleteSubrange(i, 1);
      --summary_.initializers;
    }
}

void Exporter::check() {
  try {
    onnx::checker::check_model(model_);
  } catch (const std::exception &e) {
    errors_.push_back(fmt::format("the ONNX checker rejects the export: {}", e.what()));
    return;
  }
  // Strict shape inference: the types of the written ops must agree.
  onnx::ModelProto copy = model_;
  try {
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(true, 1, false));
  } catch (const std::exception &e) {
    errors_.push_back(fmt::format("ONNX's shape inference rejects the export: {}", e.what()));
  }
}

ExportResult Exporter::run() {
  ExportResult result;
  Diagnostics diags = verifyModule(m_);
  if (!hasErrors(diags))
    types_ = inferModuleTypes(m_, diags);
  for (const Diagnostic &d : diags)
    if (d.severity == Severity::Error)
      result.errors.push_back(
          d.loc.line ? fmt::format("{}:{}: {}", d.loc.line, d.loc.col, d.message) : d.message);
  if (!result.errors.empty())
    return result;

  model_.set_ir_version(onnx::IR_VERSION);
  model_.set_producer_name(opts_.producerName);
  onnx::OperatorSetIdProto *opset = model_.add_opset_import();
  opset->set_domain("");
  opset->set_version(opts_.opset);
  onnx::GraphProto *gp = model_.mutable_graph();
  gp->set_name(opts_.graphName.empty() ? m_.root().name : opts_.graphName);
  names_.resize(m_.numGraphs());

  reserveRootNames();
  emitGraph(0, gp, {});
  writeOutputs();
  removeUnused();
  if (errors_.empty())
    check();
  result.errors = std::move(errors_);
  result.summary = summary_;
  if (result.errors.empty())
    result.model = std::make_shared<onnx::ModelProto>(std::move(model_));
  return result;
}

ExportResult exportOnnx(const Module &m, const ExportOptions &opts) {
  return Exporter(m, opts).run();
}

std::string serializeModel(const onnx::ModelProto &model) {
  std::string bytes;
  model.SerializeToString(&bytes);
  return bytes;
}

ExportResult exportOnnxFile(const Module &m, const ExportOptions &opts, const std::string &path) {
  ExportResult r = exportOnnx(m, opts);
  if (!r.ok())
    return r;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  std::string bytes = serializeModel(*r.model);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) {
    r.errors.push_back(fmt::format("cannot write {}", path));
    r.model.reset();
  }
  return r;
}

} // namespace graphvet::onnxexport
