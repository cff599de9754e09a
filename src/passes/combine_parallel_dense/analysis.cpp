// combine-parallel-dense, analysis: reads each MatMul/Gemm on a shared input
// into a signature (or a refusal), and plans the element-wise follow-on
// levels that may be combined with a group.
#include "passes/combine_parallel_dense/internal.h"

#include "ir/dtype.h"
#include "ir/op_def.h"
#include "ir/op_library.h"

#include <algorithm>
#include <array>
#include <bit>
#include <fmt/format.h>
#include <string_view>
#include <unordered_set>

namespace graphvet::combine_parallel_dense {
namespace {

/// True for a port description key (`outK.dtype`, `inK.shape`...).
bool isPortKey(const std::string &key) {
  return (key.rfind("out", 0) == 0 || key.rfind("in", 0) == 0) &&
         key.find('.') != std::string::npos;
}

bool isDescriptionKey(const std::string &key) {
  if (!isPortKey(key))
    return false;
  std::string_view rest = std::string_view(key).substr(key.find('.') + 1);
  return rest == "dtype" || rest == "shape";
}

bool reserved(const Node &n) {
  return n.attr("_cannot_be_deleted") || n.attr("no_need_constant_folding");
}

/// A port attribute other than a description binds memory (a ref input, a
/// variable): such a node is never combined.
bool bindsMemory(const Node &n) {
  for (const auto &[key, value] : n.attrs)
    if (isPortKey(key) && !isDescriptionKey(key))
      return true;
  return false;
}

/// The attributes that define the computation (descriptions dropped).
AttrMap semanticAttrs(const Node &n) {
  AttrMap out;
  for (const auto &[key, value] : n.attrs)
    if (!isPortKey(key))
      out.emplace(key, value);
  return out;
}

constexpr std::array<std::string_view, 21> kUnaryOps = {
    "Abs",  "Neg",  "Sign",  "Exp",     "Log",         "Sqrt",      "Reciprocal",
    "Tanh", "Erf",  "Floor", "Ceil",    "Round",       "Relu",      "LeakyRelu",
    "Elu",  "Selu", "Celu",  "Sigmoid", "HardSigmoid", "HardSwish", "Softplus"};
constexpr std::array<std::string_view, 4> kBinaryOps = {"Add", "Sub", "Mul", "Div"};

bool isUnary(std::string_view t) {
  return std::find(kUnaryOps.begin(), kUnaryOps.end(), t) != kUnaryOps.end();
}
bool isBinary(std::string_view t) {
  return std::find(kBinaryOps.begin(), kBinaryOps.end(), t) != kBinaryOps.end();
}
bool isElementwise(const Node &n) {
  return (isUnary(n.type) && n.inputs.size() == 1) || (isBinary(n.type) && n.inputs.size() == 2);
}

uint32_t floatBits(double v) {
  return std::bit_cast<uint32_t>(static_cast<float>(v));
}

std::string shapeText(const std::vector<int64_t> &s) {
  return fmt::format("[{}]", fmt::join(s, ", "));
}

/// True when `shape` (rank <= `rank`) is 1 everywhere but its last
/// dimension, which is `n`: it broadcasts only along the output axis of a
/// result of rank `rank`.
bool alongOutputAxis(const Shape &shape, int64_t n, int64_t rank) {
  if (shape.empty() || static_cast<int64_t>(shape.size()) > rank || shape.back() != n)
    return false;
  for (size_t d = 0; d + 1 < shape.size(); ++d)
    if (shape[d] != 1)
      return false;
  return true;
}

} // namespace

bool dependsOnAny(const Graph &g, OutPort p, const std::vector<NodeId> &nodes) {
  // Backwards from p's producer over data inputs and control edges: the
  // search visits only p's ancestors (none for a constant weight), where a
  // forward search from each branch would visit everything after it.
  std::unordered_set<NodeId> targets(nodes.begin(), nodes.end());
  std::unordered_set<NodeId> seen{p.node};
  std::vector<NodeId> stack{p.node};
  while (!stack.empty()) {
    NodeId v = stack.back();
    stack.pop_back();
    if (targets.count(v))
      return true;
    const Node &n = g.node(v);
    for (const std::optional<OutPort> &in : n.inputs)
      if (in && seen.insert(in->node).second)
        stack.push_back(in->node);
    for (NodeId c : n.ctrlIn)
      if (seen.insert(c).second)
        stack.push_back(c);
  }
  return false;
}

bool ReadGuard::moduleWrites() {
  if (moduleWrites_ >= 0)
    return moduleWrites_ == 1;
  bool any = false;
  for (GraphId gid = 0; gid < m_.numGraphs() && !any; ++gid) {
    const Graph &g = m_.graph(gid);
    if (!g.alive)
      continue;
    for (NodeId id : g.liveNodes()) {
      const Node &n = g.node(id);
      any = any || !refWrittenInputs(n).empty() || isInputMutable(n) || opKind(n) == OpKind::While;
      for (uint32_t k = 0; k < n.numOutputs && !any; ++k)
        any = refVarSrcName(n, k) != nullptr;
      if (any)
        break;
    }
  }
  moduleWrites_ = any ? 1 : 0;
  return any;
}

std::optional<Refusal> ReadGuard::refusal(GraphId g, OutPort p) {
  SourceTrace trace = traceSource(m_, index_, g, p, kBudget);
  // A subgraph parameter or a control-flow result: its buffer is safe to
  // read at another place when nothing in the module writes in place.
  if (trace.kind == SourceKind::ControlFlow)
    return moduleWrites()
               ? std::optional<Refusal>(Refusal{"written-input",
                                                "an operand comes through control flow in a "
                                                "module that writes in place"})
               : std::nullopt;
  if (trace.kind == SourceKind::Variable || trace.kind == SourceKind::VariableRef)
    return Refusal{"variable-read", "an operand reads a variable, which other nodes may write"};
  if (trace.kind != SourceKind::Ordinary && trace.kind != SourceKind::Weight &&
      trace.kind != SourceKind::UserInput)
    return Refusal{"unknown-source",
                   std::string("an operand's buffer traces to ") + sourceKindName(trace.kind)};
  SourceWrites::Answer written = writes_.of(trace);
  if (written == SourceWrites::Answer::OverBudget)
    return Refusal{"budget", "the exploration of an operand's buffer ran out of budget"};
  if (written == SourceWrites::Answer::Written)
    return Refusal{"written-input", "an operand's buffer is written in place, so a read moved "
                                    "to the combined op may see other bytes"};
  return std::nullopt;
}

std::optional<Refusal> signatureDifference(const Signature &a, const Signature &b) {
  if (a.op != b.op)
    return Refusal{"mixed-op", fmt::format("a {} is not combined with a {}", a.op, b.op)};
  if (a.dtype != b.dtype)
    return Refusal{"dtype", fmt::format("its dtype {} differs from {}", dtypeName(a.dtype),
                                        dtypeName(b.dtype))};
  if (a.reduction != b.reduction)
    return Refusal{"reduction-size",
                   fmt::format("its reduction size {} differs from {}", a.reduction, b.reduction)};
  if (a.batch != b.batch)
    return Refusal{"batch-dims", fmt::format("its weight's batch dimensions {} differ from {}",
                                             shapeText(a.batch), shapeText(b.batch))};
  if (a.gemmAttrs != b.gemmAttrs)
    return Refusal{"gemm-attrs", "its transA, transB, alpha or beta differ"};
  if (a.biasRank != b.biasRank)
    return Refusal{"bias-mismatch", a.biasRank < 0 || b.biasRank < 0
                                        ? std::string("one Gemm has C and the other has none")
                                        : std::string("the ranks of their C differ")};
  return std::nullopt;
}

std::optional<Refusal> analyzeBranch(const Graph &g, GraphId gid, const ModuleTypes &types,
                                     ReadGuard &guard, NodeId id, Branch &branch) {
  const Node &n = g.node(id);
  branch.dense = id;
  if (!n.ctrlIn.empty() || !n.ctrlOut.empty())
    return Refusal{"ctrl-edges", "it has control edges"};
  if (reserved(n))
    return Refusal{"reserved-attr", "a reserved attribute forbids removing it"};
  if (bindsMemory(n))
    return Refusal{"memory-attr", "a port attribute binds its memory"};
  bool gemm = n.type == "Gemm";
  for (const auto &[key, value] : semanticAttrs(n))
    if (!gemm || (key != "alpha" && key != "beta" && key != "transA" && key != "transB"))
      return Refusal{"unknown-attr", fmt::format("its attribute {} is not {}'s", key, n.type)};
  size_t arity = n.inputs.size();
  if (!numericDefinition(n) || arity < 2 || arity > (gemm ? 3u : 2u) || !n.inputs[1] ||
      n.numOutputs != 1)
    return Refusal{"unknown-type", "it is not a typed two-operand " + n.type};
  const TensorType *a = types.of(gid, *n.inputs[0]);
  const TensorType *w = types.of(gid, *n.inputs[1]);
  const TensorType *y = types.of(gid, OutPort{id, 0});
  if (!a || !w || !y)
    return Refusal{"unknown-type", "the types of its operands are unknown"};
  branch.weight = *n.inputs[1];
  branch.sig.op = n.type;
  branch.sig.dtype = y->dtype;
  if (!gemm) {
    if (w->rank() < 2)
      return Refusal{"weight-rank", fmt::format("its weight {} has no output axis to concatenate "
                                                "along (rank < 2)",
                                                w->str())};
    branch.sig.reduction = w->shape[w->rank() - 2];
    branch.sig.batch.assign(w->shape.begin(), w->shape.end() - 2);
    branch.outSize = w->shape.back();
  } else {
    if (w->rank() != 2 || y->rank() != 2)
      return Refusal{"unknown-type", "Gemm's operands are not matrices"};
    int64_t transA = attrInt(n, "transA", 0), transB = attrInt(n, "transB", 0);
    branch.sig.gemmAttrs = {static_cast<uint32_t>(transA != 0), static_cast<uint32_t>(transB != 0),
                            floatBits(attrFloat(n, "alpha", 1.0)),
                            floatBits(attrFloat(n, "beta", 1.0))};
    branch.sig.reduction = w->shape[transB != 0 ? 1 : 0];
    branch.outSize = w->shape[transB != 0 ? 0 : 1];
    if (arity == 3 && n.inputs[2]) {
      const TensorType *c = types.of(gid, *n.inputs[2]);
      if (!c)
        return Refusal{"unknown-type", "the type of its C is unknown"};
      if (!alongOutputAxis(c->shape, branch.outSize, 2))
        return Refusal{"bias-shape",
                       fmt::format("its C {} does not broadcast along the output axis only "
                                   "([{}] or [1, {}])",
                                   c->str(), branch.outSize, branch.outSize)};
      branch.bias = *n.inputs[2];
      branch.sig.biasRank = c->rank();
    }
  }
  for (const std::optional<OutPort> &in : n.inputs)
    if (in)
      if (std::optional<Refusal> r = guard.refusal(gid, *in))
        return r;
  return std::nullopt;
}

void planFollowOns(const Graph &g, GraphId gid, const ModuleTypes &types, ReadGuard &guard,
                   GroupPlan &plan) {
  size_t count = plan.branches.size();
  std::vector<OutPort> current;
  std::vector<NodeId> denseNodes;
  for (const Branch &b : plan.branches) {
    current.push_back(OutPort{b.dense, 0});
    denseNodes.push_back(b.dense);
  }
  // Each level absorbs one node per branch: at most as many levels as nodes.
  for (size_t level = 0; level < g.capacity(); ++level) {
    std::vector<NodeId> next;
    bool shared = false;
    NodeId sharedAt = kNoNode;
    for (const OutPort &cur : current) {
      const std::vector<InPort> &uses = g.consumers(cur);
      const Node *only = uses.size() == 1 ? &g.node(uses[0].node) : nullptr;
      if (only && isElementwise(*only)) {
        next.push_back(uses[0].node);
        continue;
      }
      for (const InPort &use : uses)
        if (uses.size() > 1 && isElementwise(g.node(use.node)) && sharedAt == kNoNode) {
          shared = true;
          sharedAt = use.node;
        }
    }
    if (next.size() != count) {
      if (shared) {
        plan.followOnStop =
            Refusal{"follow-on-shared", "its input has another consumer, which still needs the "
                                        "value before it"};
        plan.followOnStopNode = sharedAt;
      }
      return;
    }
    const Node &first = g.node(next[0]);
    auto stop = [&](std::string tag, std::string why) {
      plan.followOnStop = Refusal{std::move(tag), std::move(why)};
      plan.followOnStopNode = next[0];
    };
    AttrMap attrs = semanticAttrs(first);
    for (NodeId f : next) {
      const Node &n = g.node(f);
      if (n.type != first.type || semanticAttrs(n) != attrs)
        return stop("follow-on-mismatch",
                    fmt::format("the branches' follow-ons differ ({} and {})", first.name, n.name));
      if (!n.ctrlIn.empty() || !n.ctrlOut.empty() || reserved(n) || bindsMemory(n) ||
          n.numOutputs != 1 || lookupOp(n.type).nondeterministic)
        return stop("follow-on-pinned", fmt::format("{} has control edges, a reserved or a "
                                                    "memory attribute",
                                                    n.name));
    }
    FollowOnLevel lv;
    lv.nodes = next;
    if (isBinary(first.type)) {
      uint32_t slot = first.inputs[0] == current[0] ? 0 : 1;
      for (size_t i = 0; i < count; ++i) {
        const Node &n = g.node(next[i]);
        if (n.inputs[slot] != current[i] || n.inputs[1 - slot] == current[i])
          return stop("follow-on-mismatch",
                      fmt::format("{} reads its branch at another operand", n.name));
        const std::optional<OutPort> &other = n.inputs[1 - slot];
        const TensorType *y = types.of(gid, current[i]);
        const TensorType *o = other ? types.of(gid, *other) : nullptr;
        if (o && i > 0 && o->rank() != lv.operandRank)
          return stop(
              "follow-on-operand",
              fmt::format("the other operands of {} and {} differ in rank", first.name, n.name));
        if (!y || !o || o->dtype != y->dtype ||
            !alongOutputAxis(o->shape, plan.branches[i].outSize, plan.outRank))
          return stop("follow-on-operand",
                      fmt::format("the other operand of {} ({}) does not broadcast along the "
                                  "output axis only",
                                  n.name, o ? o->str() : std::string("untyped")));
        if (dependsOnAny(g, *other, denseNodes))
          return stop("follow-on-operand",
                      fmt::format("the other operand of {} depends on a branch", n.name));
        if (std::optional<Refusal> r = guard.refusal(gid, *other))
          return stop("follow-on-operand",
                      fmt::format("the other operand of {}: {}", n.name, r->why));
        lv.operandRank = o->rank();
        lv.operands.push_back(*other);
      }
      lv.slot = slot;
    }
    plan.followOns.push_back(std::move(lv));
    for (size_t i = 0; i < count; ++i)
      current[i] = OutPort{next[i], 0};
  }
}

} // namespace graphvet::combine_parallel_dense
