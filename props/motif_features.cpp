// The numeric-pattern features (the typed generator's motifs, typed_ops_motifs.cpp):
// detected on the root graph of the built module, whoever made the pattern,
// so the counters say what the mid-end passes really get to see.
#include "props/motif_features.h"

#include "ir/op_def.h"
#include "ir/op_library.h"

#include <algorithm>
#include <functional>
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
  }
}

bool isTypedFeature(Feature f) {
  return static_cast<size_t>(f) >= static_cast<size_t>(Feature::MotifConvBatchNorm);
}

} // namespace graphvet::props
