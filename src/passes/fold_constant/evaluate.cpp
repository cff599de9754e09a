// fold-constant, evaluation: a numeric node whose connected inputs are all
// valued Consts is run through evaluateNode (the op's inference and the
// interpreter's kernel, src/ir/op_def.h), unless a refusal rule applies.
// A constant input is a valued Const of the node's graph, or one a branch or
// call passes in through a subgraph Data (never a While's loop variable).
// The rules are checked before anything is evaluated, so a refused node
// costs no kernel run.
#include "passes/fold_constant/fold_internal.h"

#include "ir/op_def.h"
#include "ir/op_library.h"

#include <fmt/format.h>

namespace graphvet::fold {
namespace {

/// A memory effect of the node itself: in-place writes, scribbles, outputs
/// bound to a variable.
std::optional<Refusal> effectOf(const Node &n) {
  if (isInputMutable(n))
    return Refusal{"effect", "scribbles on its inputs (_input_mutable)"};
  if (!refWrittenInputs(n).empty())
    return Refusal{"effect", "writes an input in place"};
  for (uint32_t k = 0; k < n.numOutputs; ++k)
    if (const std::string *var = refVarSrcName(n, k))
      return Refusal{"effect", fmt::format("output {} writes variable {}", k, *var)};
  return std::nullopt;
}

/// A random draw (tensor-semantics.md §6). `Dropout` draws only in training
/// mode: with its training_mode input absent or a determinate constant false
/// it is the identity and may fold.
bool drawsRandom(const Node &n, const OpInfo &op, const std::vector<const Tensor *> &inputs) {
  if (!op.nondeterministic)
    return false;
  if (n.type != "Dropout")
    return true;
  if (inputs.size() < 3 || !inputs[2])
    return false;
  const Tensor &mode = *inputs[2];
  return mode.size() == 0 || mode.isUndef(0) || mode.getBool(0);
}

} // namespace

bool isReserved(const Node &n) {
  if (n.attr("no_need_constant_folding"))
    return true;
  const AttrValue *v = n.attr("_cannot_be_deleted");
  return v && ((v->isBool() && v->asBool()) || (v->isString() && v->asString() == "true"));
}

std::optional<ConstantSource> constantSource(const Module &m, GraphId g,
                                             std::optional<OutPort> src) {
  // Each step leaves one graph for its parent, so the loop is bounded by
  // the nesting depth.
  for (size_t depth = 0; src && depth < m.numGraphs(); ++depth) {
    const Graph &graph = m.graph(g);
    if (const Tensor *v = constantValue(graph, src))
      return ConstantSource{g, *src, v};
    const Node &d = graph.node(src->node);
    if (opKind(d) != OpKind::DataSource || graph.parentGraph == kNoGraph)
      return std::nullopt;
    const Node &holder = m.graph(graph.parentGraph).node(graph.parentNode);
    OpKind kind = opKind(holder);
    // A While's subgraph Data is a loop variable: it changes every iteration.
    if (kind != OpKind::If && kind != OpKind::Case && kind != OpKind::Call)
      return std::nullopt;
    std::optional<int64_t> p = d.intAttr("_parent_node_index");
    if (!p || *p < 0 || static_cast<size_t>(*p) >= holder.inputs.size())
      return std::nullopt;
    src = holder.inputs[static_cast<size_t>(*p)];
    g = graph.parentGraph;
  }
  return std::nullopt;
}

namespace {

/// The uncached exploration behind writtenConstant.
std::optional<Refusal> exploreWrites(Env &env, const ConstantSource &c) {
  constexpr size_t kBudget = size_t{1} << 16;
  std::vector<SlotRef> slots = consumerSlots(env.m, PortRef{c.graph, c.port});
  BufferUses uses = exploreUses(env.m, env.moduleIndex(), slots, kBudget);
  if (uses.overBudget)
    return Refusal{"budget", "the uses of an input constant exceed the exploration budget"};
  if (writes(uses.access))
    return Refusal{"written-constant",
                   fmt::format("input constant {} is written in place (so it does not hold "
                               "its literal)",
                               env.m.qualifiedName(c.graph, c.port.node))};
  return std::nullopt;
}

} // namespace

std::optional<Refusal> writtenConstant(Env &env, const ConstantSource &c) {
  auto key = std::make_pair(c.graph, c.port);
  if (auto it = env.writtenCache.find(key); it != env.writtenCache.end())
    return it->second;
  std::optional<Refusal> answer = exploreWrites(env, c);
  env.writtenCache.emplace(key, answer);
  return answer;
}

const Tensor *constantValue(const Graph &g, const std::optional<OutPort> &src) {
  if (!src)
    return nullptr;
  const Node &p = g.node(src->node);
  if (!p.alive || opKind(p) != OpKind::Weight || src->index != 0)
    return nullptr;
  return attrTensor(p, "value");
}

Outcome tryEvaluate(Env &env, GraphId gid, NodeId id) {
  const Graph &g = env.m.graph(gid);
  const Node &n = g.node(id);
  if (opKind(n) != OpKind::Ordinary)
    return std::monostate{};
  // Every connected input must be a valued Const; a Variable read makes the
  // node a candidate only to explain why it stays.
  std::vector<const Tensor *> inputs(n.inputs.size(), nullptr);
  std::vector<ConstantSource> sources;
  bool readsVariable = false, anyInput = false;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const std::optional<OutPort> &src = n.inputs[i];
    if (!src)
      continue;
    anyInput = true;
    if (std::optional<ConstantSource> c = constantSource(env.m, gid, src)) {
      inputs[i] = c->value;
      sources.push_back(*c);
      continue;
    }
    if (isVariableSource(g.node(src->node))) {
      readsVariable = true;
      continue;
    }
    return std::monostate{};
  }
  for (const ConstantSource &c : sources)
    if (std::optional<Refusal> r = writtenConstant(env, c))
      return *r;
  const OpInfo *op = numericDefinition(n);
  if (!anyInput && !op)
    return std::monostate{}; // a placeholder source op: nothing to fold from
  if (isReserved(n))
    return Refusal{"reserved", "a reserved attribute forbids folding it"};
  if (std::optional<Refusal> effect = effectOf(n))
    return *effect;
  if (readsVariable)
    return Refusal{"variable", "reads a variable, whose content is not a constant"};
  if (!op)
    return Refusal{"no-kernel", fmt::format("op {} has no numeric kernel", n.type)};
  if (drawsRandom(n, *op, inputs))
    return Refusal{"random", "a random draw is its own (folding would repeat it in every run)"};

  // The result's size, from the op's inference, before any kernel runs.
  std::vector<std::optional<TensorType>> inTypes;
  for (const Tensor *t : inputs)
    inTypes.push_back(t ? std::optional<TensorType>(t->type()) : std::nullopt);
  std::string error;
  auto outTypes = inferNodeTypes(n, inTypes, inputs, error);
  if (!outTypes)
    return Refusal{"eval-error", "its inference fails on the constants: " + error};
  int64_t elements = 0, bytes = 0;
  for (size_t k = 0; k < outTypes->size(); ++k) {
    std::optional<int64_t> e = (*outTypes)[k].checkedElements();
    if (!e || static_cast<uint64_t>(*e) * dtypeBytes((*outTypes)[k].dtype) > kMaxBufferBytes)
      return Refusal{"size-cap", fmt::format("output {} is larger than any buffer ({} bytes)", k,
                                             kMaxBufferBytes)};
    if (k < n.consumers.size() && !n.consumers[k].empty()) {
      elements += *e;
      bytes += *e * dtypeBytes((*outTypes)[k].dtype);
    }
  }
  std::string how = fmt::format("evaluated {}", n.type);
  if (elements > env.options.maxElements) {
    int64_t freed = bytesFreedByFolding(g, n);
    if (bytes >= freed)
      return Refusal{"size-cap", fmt::format("the result has {} elements, over the cap of {}, and "
                                             "would add {} constant bytes",
                                             elements, env.options.maxElements, bytes - freed)};
    how += fmt::format(" ({} elements, over the cap of {}, but {} constant bytes fewer)", elements,
                       env.options.maxElements, freed - bytes);
  }

  std::optional<std::vector<Tensor>> values = evaluateNode(n, inputs, error);
  if (!values)
    return Refusal{"eval-error", error};
  for (size_t k = 0; k < values->size(); ++k) {
    if (k >= n.consumers.size() || n.consumers[k].empty())
      continue;
    const Tensor &t = (*values)[k];
    if (!t.anyUndef())
      continue;
    int64_t first = 0;
    while (first < t.size() && !t.isUndef(first))
      ++first;
    return Refusal{"indeterminate",
                   fmt::format("element {} of output {} is indeterminate (tensor-semantics.md "
                               "§2), which no literal can express",
                               first, k)};
  }
  return Folded{std::move(*values), std::move(how)};
}

} // namespace graphvet::fold
