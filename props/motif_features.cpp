// The numeric-pattern features (the typed generator's motifs, typed_ops_motifs.cpp):
// detected on the root graph of the built module, whoever made the pattern,
// so the counters say what the mid-end passes really get to see.
#include "props/motif_features.h"

#include "ir/op_def.h"
#include "ir/op_library.h"
#include "ir/types.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <set>
#include <string>

namespace graphvet::props {
namespace {

bool isOneOf(const std::string &t, std::initializer_list<std::string_view> types) {
  return std::find(types.begin(), types.end(), t) != types.end();
}

bool isDense(const Node &n) {
  return n.type == "MatMul" || n.type == "Gemm";
}

/// The Const tensor feeding input `slot` of `n`, if any.
const Tensor *constInput(const Graph &g, const Node &n, size_t slot) {
  if (slot >= n.inputs.size() || !n.inputs[slot])
    return nullptr;
  const Node &p = g.node(n.inputs[slot]->node);
  return p.type == "Const" ? attrTensor(p, "value") : nullptr;
}

/// The nodes reading output 0 of `n`.
std::vector<const Node *> readers(const Graph &g, const Node &n) {
  std::vector<const Node *> out;
  if (n.numOutputs == 0)
    return out;
  for (const InPort &c : g.consumers(OutPort{n.id, 0}))
    out.push_back(&g.node(c.node));
  return out;
}

/// A Mul with one Const operand of at least one element (a scale).
const Tensor *scaleOf(const Graph &g, const Node &n) {
  if (n.type != "Mul")
    return nullptr;
  for (size_t s : {size_t{0}, size_t{1}})
    if (const Tensor *t = constInput(g, n, s); t && t->size() >= 1 && t->type().rank() >= 1)
      return t;
  return nullptr;
}

/// Does `n`'s output reach a Conv / Gemm / MatMul (as its data input 0)
/// through at most `depth` of the ops between a scale and its consumer?
bool reachesWeighted(const Graph &g, const Node &n, int depth) {
  for (const Node *r : readers(g, n)) {
    if ((r->type == "Conv" || isDense(*r)) && r->inputs[0] && r->inputs[0]->node == n.id)
      return true;
    if (depth > 0 && isOneOf(r->type, {"Add", "Relu", "LeakyRelu", "MaxPool"}) &&
        reachesWeighted(g, *r, depth - 1))
      return true;
  }
  return false;
}

/// Does `n`'s output reach a Conv through at least one (and at most
/// `depth`) layout-agnostic ops carrying axes?
bool reachesConvThroughAxisOps(const Graph &g, const Node &n, int depth, bool sawAxisOp) {
  for (const Node *r : readers(g, n)) {
    if (r->type == "Conv" && sawAxisOp)
      return true;
    if (depth > 0 && isOneOf(r->type, {"ReduceMean", "ReduceSum", "Concat", "Softmax", "Split",
                                       "Slice", "Pad", "Add", "Relu", "Reshape"}))
      if (reachesConvThroughAxisOps(g, *r, depth - 1, true))
        return true;
  }
  return false;
}

/// A Conv's channel counts (C in, M out) from its constant weights.
bool convUnaligned(const Graph &g, const Node &n) {
  const Tensor *w = constInput(g, n, 1);
  if (!w || w->type().rank() < 3)
    return false;
  const Shape &s = w->type().shape;
  const int64_t group = n.intAttr("group").value_or(1);
  const std::string *layout = n.stringAttr("layout");
  const int64_t perGroup = layout && *layout == "NHWC" ? s.back() : s[1];
  return s[0] % 4 != 0 || (perGroup * group) % 4 != 0;
}

/// Does `n` draw random numbers (Dropout only in training mode)?
bool isRandom(const Graph &g, const Node &n) {
  if (n.type == "Dropout") {
    const Tensor *mode = constInput(g, n, 2);
    return mode && mode->size() == 1 && !mode->isUndef(0) && mode->getBool(0);
  }
  return lookupOp(n.type).nondeterministic;
}

/// The random-op and Dropout features of `n`.
void addRandomFeatures(const Graph &g, const Node &n, const std::function<void(Feature)> &set) {
  if (n.type == "Dropout") {
    if (isRandom(g, n))
      set(Feature::DropoutTraining);
    else if (n.inputs.size() < 3 || !n.inputs[2] || constInput(g, n, 2))
      set(Feature::DropoutInference); // absent or a constant false
  }
  if (!isRandom(g, n))
    return;
  bool allConst = !n.inputs.empty();
  for (size_t s = 0; s < n.inputs.size(); ++s)
    allConst = allConst && n.inputs[s] && g.node(n.inputs[s]->node).type == "Const";
  if (allConst)
    set(Feature::RandomOnConstant);
  size_t elementwise = 0;
  for (const Node *r : readers(g, n))
    elementwise += isOneOf(r->type, {"Add", "Sub", "Mul", "Relu", "Neg"});
  if (elementwise >= 2)
    set(Feature::RandomTwoReaders);
  // A twin: another random op of the same type, attributes and inputs.
  if (!n.inputs.empty() && n.inputs[0])
    for (const InPort &c : g.consumers(*n.inputs[0])) {
      const Node &o = g.node(c.node);
      if (o.id != n.id && o.type == n.type && o.attrs == n.attrs && o.inputs == n.inputs)
        set(Feature::RandomTwins);
    }
}

// ---- Chains: Cast, Transpose, Reshape / Squeeze, f16 / bf16 ------------------------

/// Does dtype `b` hold every value of dtype `a` (our own reading of
/// tensor-semantics.md §4, independent of the passes' tables)? NaN
/// payloads aside.
bool holdsEvery(DType a, DType b) {
  if (a == b || a == DType::Bool)
    return true;
  if (b == DType::Bool)
    return false;
  if (isInteger(a) && isInteger(b))
    return intMin(b) <= intMin(a) && intMax(a) <= intMax(b);
  if (isInteger(a)) { // into a float: every integer of the range exact
    const double mag = std::max(-static_cast<double>(intMin(a)), static_cast<double>(intMax(a)));
    return mag <= std::ldexp(1.0, significandBits(b));
  }
  if (isInteger(b))
    return false;
  // Floats: more significand bits and no smaller range (f16 <-> bf16 lose).
  auto range = [](DType t) { return t == DType::F16 ? 16 : t == DType::F64 ? 1024 : 128; };
  return significandBits(b) >= significandBits(a) && range(b) >= range(a);
}

/// A constant holding one of the specials a cast chain must carry: NaN,
/// an infinity, -0, 2^24 + 1, a float at or beyond f16's range, or an
/// integer type's extreme.
bool holdsSpecials(const Tensor &t) {
  for (int64_t i = 0; i < t.size(); ++i) {
    if (t.isUndef(i))
      continue;
    if (isFloat(t.dtype())) {
      const double v = t.getDouble(i);
      if (std::isnan(v) || std::isinf(v) || (v == 0 && std::signbit(v)) || std::fabs(v) >= 65504 ||
          v == 16777217.0)
        return true;
    } else if (isInteger(t.dtype())) {
      const int64_t v = t.getInt(i);
      if (v == intMin(t.dtype()) ||
          (t.dtype() != DType::U64 && static_cast<uint64_t>(v) == intMax(t.dtype())))
        return true;
    }
  }
  return false;
}

/// The integers of a list attribute or of a constant input `slot`.
std::optional<std::vector<int64_t>> intsOf(const Graph &g, const Node &n, const char *attr,
                                           size_t slot) {
  std::vector<int64_t> out;
  if (const AttrValue *a = n.attr(attr); a && a->isList()) {
    for (const AttrValue &e : a->asList())
      if (e.isInt())
        out.push_back(e.asInt());
    return out;
  }
  if (const Tensor *t = constInput(g, n, slot); t && isInteger(t->dtype())) {
    for (int64_t i = 0; i < t->size(); ++i)
      out.push_back(t->getInt(i));
    return out;
  }
  return std::nullopt;
}

/// The permutation of a Transpose of rank `r` (absent: the reversal).
std::vector<int64_t> permOf(const Node &n, size_t r) {
  std::vector<int64_t> p;
  if (const AttrValue *a = n.attr("perm"); a && a->isList())
    for (const AttrValue &e : a->asList())
      p.push_back(e.isInt() ? e.asInt() : -1);
  else
    for (size_t i = 0; i < r; ++i)
      p.push_back(static_cast<int64_t>(r - 1 - i));
  return p;
}

/// The producer of input `slot` of `n`, if connected.
const Node *producer(const Graph &g, const Node &n, size_t slot) {
  return slot < n.inputs.size() && n.inputs[slot] ? &g.node(n.inputs[slot]->node) : nullptr;
}

/// The allowzero = 1 Reshape `inner` on an empty x spells a literal 0 at a
/// position where x's dimension is not 0, and `outer` (allowzero 0) copies
/// that position's 0.
bool allowZeroEmptyPair(const Graph &g, const ModuleTypes &types, const Node &inner,
                        const Node &outer) {
  if (inner.intAttr("allowzero").value_or(0) != 1 || outer.intAttr("allowzero").value_or(0) != 0)
    return false;
  const TensorType *x = inner.inputs[0] ? types.of(0, *inner.inputs[0]) : nullptr;
  auto s1 = intsOf(g, inner, "shape", 1), s2 = intsOf(g, outer, "shape", 1);
  if (!x || !s1 || !s2 || x->numElements() != 0)
    return false;
  for (size_t i = 0; i < s1->size() && i < s2->size() && i < x->shape.size(); ++i)
    if ((*s1)[i] == 0 && (*s2)[i] == 0 && x->shape[i] != 0)
      return true;
  return false;
}

bool isHalfChainHead(const std::string &t) {
  return isOneOf(t, {"MatMul", "Gemm", "Softmax", "ReduceSum", "ReduceMean", "ReduceMax",
                     "ReduceMin", "ReduceSumSquare", "ReduceProd", "ReduceL1", "ReduceL2"});
}

bool isElementwise(const std::string &t) {
  return isOneOf(t, {"Add", "Sub", "Mul", "Div", "Relu", "Neg", "Abs", "Exp", "Tanh", "Sigmoid",
                     "Sqrt", "Log", "Reciprocal", "LeakyRelu", "Pow", "Max", "Min"});
}

/// The chain features of the root graph `g`; types are inferred only when
/// a candidate pattern is there.
void addChainFeatures(const Module &m, const Graph &g, const std::function<void(Feature)> &set) {
  std::optional<ModuleTypes> types;
  auto typesOf = [&]() -> const ModuleTypes & {
    if (!types) {
      Diagnostics diags;
      types = inferModuleTypes(m, diags);
    }
    return *types;
  };
  auto typeOf = [&](const Node &n, size_t slot) -> const TensorType * {
    return slot < n.inputs.size() && n.inputs[slot] ? typesOf().of(0, *n.inputs[slot]) : nullptr;
  };
  for (NodeId id : g.liveNodes()) {
    const Node &n = g.node(id);
    const Node *p = producer(g, n, 0);
    if (n.type == "Cast" && p && p->type == "Cast") {
      const TensorType *x = typeOf(*p, 0), *mid = typeOf(n, 0), *last = typesOf().of(0, id, 0);
      if (x && mid && last) {
        if (last->dtype == x->dtype && mid->dtype != x->dtype)
          set(holdsEvery(x->dtype, mid->dtype) ? Feature::CastRoundTripExact
                                               : Feature::CastRoundTripLossy);
        else if (last->dtype != x->dtype && last->dtype != mid->dtype && mid->dtype != x->dtype)
          set(Feature::CastChainOther);
      }
      const Node *head = producer(g, *p, 0);
      if (head && head->type == "Cast")
        set(Feature::CastChainThree);
      if (head && head->type == "Const")
        if (const Tensor *t = attrTensor(*head, "value"); t && holdsSpecials(*t))
          set(Feature::CastChainOfSpecials);
    }
    if (n.type == "Transpose" && p && p->type == "Transpose") {
      if (const TensorType *x = typeOf(*p, 0)) {
        const size_t r = x->shape.size();
        const std::vector<int64_t> p1 = permOf(*p, r), p2 = permOf(n, r);
        bool identity = p1.size() == r && p2.size() == r;
        for (size_t i = 0; identity && i < r; ++i)
          identity = p2[i] >= 0 && static_cast<size_t>(p2[i]) < r &&
                     p1[static_cast<size_t>(p2[i])] == static_cast<int64_t>(i);
        set(identity ? Feature::TransposePairCancel : Feature::TransposePairCompose);
        if (!n.attr("perm") || !p->attr("perm"))
          set(Feature::TransposeAbsentPerm);
      }
    }
    if (n.type == "Reshape" && p && p->type == "Reshape") {
      set(Feature::ReshapeChain);
      if (p->intAttr("allowzero").value_or(0) == 1 && allowZeroEmptyPair(g, typesOf(), *p, n))
        set(Feature::ReshapeAllowZeroEmpty);
    }
    if (n.type == "Squeeze" || n.type == "Unsqueeze")
      if (auto axes = intsOf(g, n, "axes", 1))
        if (std::any_of(axes->begin(), axes->end(), [](int64_t a) { return a < 0; }))
          set(Feature::SqueezeNegativeAxes);
    if (isHalfChainHead(n.type) && p && isElementwise(p->type))
      if (const TensorType *out = typesOf().of(0, id, 0); out && typeOf(n, 0)) {
        if (out->dtype == DType::F16 && typeOf(n, 0)->dtype == DType::F16)
          set(Feature::HalfChain);
        if (out->dtype == DType::BF16 && typeOf(n, 0)->dtype == DType::BF16)
          set(Feature::BFloat16Chain);
      }
  }
}

bool isReshaping(const std::string &t) {
  return isOneOf(t, {"Reshape", "Flatten", "Squeeze", "Unsqueeze"});
}

/// Same op, attributes and inputs (what cse compares).
bool sameComputation(const Node &a, const Node &b) {
  return a.id != b.id && a.type == b.type && a.numOutputs == b.numOutputs && a.inputs == b.inputs &&
         a.attrs == b.attrs;
}

bool contains(const std::vector<NodeId> &v, NodeId n) {
  return std::find(v.begin(), v.end(), n) != v.end();
}

/// Is `a` before `w` by a direct edge (a control edge, or a data edge into
/// w)?
bool directlyBefore(const Node &a, const Node &w) {
  if (contains(a.ctrlOut, w.id))
    return true;
  return std::any_of(w.inputs.begin(), w.inputs.end(),
                     [&](const std::optional<OutPort> &in) { return in && in->node == a.id; });
}

/// The in-place write features of writer `w` (an Assign-family node with
/// its value input) in graph `g`.
void addWriteFeatures(const Graph &g, const Node &w, const std::function<void(Feature)> &set) {
  const Node *target = producer(g, w, 0);
  if (!target)
    return;
  if (target->type == "Variable")
    set(Feature::InplaceWriteVariable);
  if (target->type == "Data")
    set(Feature::InplaceWriteInput);
  std::vector<const Node *> before, after;
  for (const InPort &c : g.consumers(*w.inputs[0])) {
    const Node &r = g.node(c.node);
    if (r.id == w.id)
      continue;
    if (directlyBefore(r, w))
      before.push_back(&r);
    else if (contains(r.ctrlIn, w.id))
      after.push_back(&r);
  }
  for (const Node *a : before)
    for (const Node *b : after)
      if (sameComputation(*a, *b))
        set(Feature::InplaceEqualReadsAroundWrite);
  for (NodeId d : w.ctrlOut) {
    const Node &dn = g.node(d);
    if (!dn.alive || dn.inputs.empty() || !dn.inputs[0])
      continue;
    for (const InPort &c : g.consumers(*dn.inputs[0]))
      if (const Node &twin = g.node(c.node);
          sameComputation(twin, dn) && !contains(twin.ctrlIn, w.id))
        set(Feature::InplaceOrderThroughDuplicate);
  }
}

/// The (op, parent input) pairs of the nodes of branch `b` that read a
/// parameter of the branch directly.
std::set<std::pair<std::string, int64_t>> branchReads(const Graph &b) {
  std::set<std::pair<std::string, int64_t>> out;
  for (NodeId id : b.liveNodes()) {
    const Node &d = b.node(id);
    if (d.type != "Data")
      continue;
    const std::optional<int64_t> p = d.intAttr("_parent_node_index");
    if (!p)
      continue;
    for (const InPort &c : b.consumers(OutPort{id, 0}))
      if (const Node &r = b.node(c.node); r.inputs.size() == 1)
        out.insert({r.type, *p});
  }
  return out;
}

/// The scope features of If node `n` of graph `g`.
void addIfFeatures(const Module &m, const Graph &g, const Node &n,
                   const std::function<void(Feature)> &set) {
  if (n.subgraphs.size() != 2)
    return;
  const auto thenReads = branchReads(m.graph(n.subgraphs[0]));
  const auto elseReads = branchReads(m.graph(n.subgraphs[1]));
  for (const auto &[op, p] : thenReads)
    if (elseReads.count({op, p}))
      set(Feature::IfEqualBranches);
  for (const auto *reads : {&thenReads, &elseReads})
    for (const auto &[op, p] : *reads) {
      if (p < 0 || static_cast<size_t>(p) >= n.inputs.size() || !n.inputs[static_cast<size_t>(p)])
        continue;
      for (const InPort &c : g.consumers(*n.inputs[static_cast<size_t>(p)]))
        if (const Node &r = g.node(c.node); r.type == op && r.inputs.size() == 1)
          set(Feature::IfBranchEqualToOuter);
    }
}

/// A reshaping op read (as data) by a Reshape and by another reshaping op.
void addSharedInnerFeature(const Graph &g, const Node &n, const std::function<void(Feature)> &set) {
  if (!isReshaping(n.type) || n.numOutputs == 0)
    return;
  bool reshape = false;
  size_t reshaping = 0;
  for (const InPort &c : g.consumers(OutPort{n.id, 0})) {
    const Node &r = g.node(c.node);
    if (c.index != 0 || !isReshaping(r.type))
      continue;
    ++reshaping;
    reshape = reshape || r.type == "Reshape";
  }
  if (reshape && reshaping >= 2)
    set(Feature::ReshapeSharedInner);
}

} // namespace

void addMotifFeatures(const Module &m, FeatureSet &f) {
  auto set = [&](Feature x) { f[static_cast<size_t>(x)] = true; };
  const Graph &g = m.root();
  for (NodeId id : g.liveNodes()) {
    const Node &n = g.node(id);
    if (n.type == "Conv") {
      for (const Node *r : readers(g, n))
        if (r->type == "BatchNormalization") {
          set(Feature::MotifConvBatchNorm);
          for (const Node *rr : readers(g, *r))
            if (rr->type == "Relu")
              set(Feature::MotifConvBatchNormRelu);
        }
      if (convUnaligned(g, n))
        set(Feature::LegalizeConvUnaligned);
    }
    if (const Tensor *s = scaleOf(g, n)) {
      bool forward = reachesWeighted(g, n, 2), backward = false;
      for (const auto &in : n.inputs)
        if (in) {
          const Node &p = g.node(in->node);
          backward = backward || p.type == "Conv" || isDense(p);
        }
      if (forward)
        set(Feature::MotifChannelScaleForward);
      if (backward)
        set(Feature::MotifChannelScaleBackward);
      if (forward || backward) {
        bool zero = false, negative = false;
        for (int64_t i = 0; i < s->size(); ++i) {
          const double v = s->getDouble(i);
          zero = zero || v == 0;
          negative = negative || v < 0;
        }
        if (zero && negative)
          set(Feature::MotifChannelScaleZeroNegative);
      }
    }
    // Parallel dense: two or more MatMul / Gemm with constant weights
    // reading this node's output 0 as their data input.
    if (n.numOutputs > 0) {
      std::vector<const Node *> dense;
      for (const InPort &c : g.consumers(OutPort{id, 0})) {
        const Node &r = g.node(c.node);
        if (c.index == 0 && isDense(r) && constInput(g, r, 1))
          dense.push_back(&r);
      }
      if (dense.size() >= 2) {
        set(Feature::MotifParallelDense);
        for (const Node *d : dense)
          if (g.consumers(OutPort{d->id, 0}).size() >= 2)
            set(Feature::MotifParallelDenseSharedIntermediate);
      }
    }
    if (isOneOf(n.type, {"Conv", "MaxPool", "AveragePool", "GlobalAveragePool",
                         "BatchNormalization", "Resize"}) &&
        reachesConvThroughAxisOps(g, n, 4, false))
      set(Feature::MotifLayoutChain);
    if (n.type == "Gemm")
      set(Feature::LegalizeGemm);
    if (n.type == "HardSwish")
      set(Feature::LegalizeHardSwish);
    if (n.type == "Clip")
      for (size_t s : {size_t{1}, size_t{2}})
        if (const Tensor *t = constInput(g, n, s); t && t->dtype() == DType::F16)
          set(Feature::LegalizeClipF16);
    if (n.type == "InstanceNormalization")
      set(Feature::NormInstance);
    if (n.type == "LayerNormalization") {
      set(Feature::NormLayer);
      if (n.intAttr("axis").value_or(0) < 0)
        set(Feature::NormLayerNegativeAxis);
    }
    addRandomFeatures(g, n, set);
    if (isOneOf(n.type, {"Assign", "AssignAdd", "AssignSub"}) && n.inputs.size() == 2 &&
        n.inputs[0])
      addWriteFeatures(g, n, set);
    if (n.type == "If")
      addIfFeatures(m, g, n, set);
    addSharedInnerFeature(g, n, set);
  }
  addChainFeatures(m, g, set);
}

bool isTypedFeature(Feature f) {
  return static_cast<size_t>(f) >= static_cast<size_t>(Feature::MotifConvBatchNorm);
}

} // namespace graphvet::props
