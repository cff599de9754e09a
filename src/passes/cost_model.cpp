// The cost model: a walk over every live graph from the root (a `_fused`
// call is one kernel whose body's values never touch memory; other calls
// are transparent; control flow counts each subgraph once, a static figure),
// sizes from type inference, FLOPs from the op table of docs/cost.md.
#include "passes/cost_model.h"

#include "ir/diagnostic.h"
#include "ir/op_library.h"
#include "ir/types.h"
#include "passes/annotate_used_memory/analysis.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace graphvet {
namespace {

constexpr unsigned kMaxNesting = 64;

/// Ops that move or rearrange data without arithmetic: 0 FLOPs.
constexpr std::array<std::string_view, 22> kDataMovement = {
    "Identity", "TensorMove",   "MemcpyAsync",    "Transpose",      "Concat",    "Split",
    "Slice",    "Gather",       "GatherElements", "GatherND",       "Pad",       "Expand",
    "Tile",     "Shape",        "Size",           "Squeeze",        "Unsqueeze", "Flatten",
    "Reshape",  "DepthToSpace", "SpaceToDepth",   "ConstantOfShape"};

/// Reductions: one operation per input element.
constexpr std::array<std::string_view, 16> kReductions = {
    "ReduceSum",         "ReduceMean",    "ReduceMax",    "ReduceMin",
    "ReduceProd",        "ReduceL1",      "ReduceL2",     "ReduceLogSumExp",
    "ReduceSumSquare",   "ReduceLogSum",  "ArgMax",       "ArgMin",
    "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool", "TopK"};

bool in(std::string_view t, auto const &table) {
  return std::find(table.begin(), table.end(), t) != table.end();
}

bool fusedCall(const Node &n) {
  const AttrValue *a = n.attr("_fused");
  if (!a)
    return false;
  if (a->isBool())
    return a->asBool();
  if (a->isInt())
    return a->asInt() != 0;
  return true; // a string or identifier naming the group
}

class Walker {
public:
  Walker(const Module &m, CostReport &r) : m_(m), r_(r) {
    Diagnostics ignored;
    types_ = inferModuleTypes(m, ignored);
  }

  void graph(GraphId g, unsigned depth) {
    if (depth > kMaxNesting || g >= m_.numGraphs() || !m_.graph(g).alive)
      return;
    for (NodeId id : m_.graph(g).liveNodes())
      node(g, m_.graph(g).node(id), depth);
  }

private:
  const Module &m_;
  CostReport &r_;
  ModuleTypes types_;

  const TensorType *type(GraphId g, OutPort p) const { return types_.of(g, p); }

  uint64_t bytes(GraphId g, OutPort p) {
    const TensorType *t = type(g, p);
    if (t && t->checkedElements() && t->byteSize() <= kMaxBufferBytes)
      return t->byteSize();
    if (auto b = outputBytes(m_.graph(g).node(p.node), p.index))
      return *b;
    ++r_.unsizedPorts;
    return 0;
  }

  uint64_t elements(GraphId g, OutPort p) const {
    const TensorType *t = type(g, p);
    auto n = t ? t->checkedElements() : std::nullopt;
    return n ? static_cast<uint64_t>(*n) : 0;
  }

  const TensorType *inputType(GraphId g, const Node &n, uint32_t i) const {
    return i < n.inputs.size() && n.inputs[i] ? type(g, *n.inputs[i]) : nullptr;
  }

  static uint64_t product(const Shape &s, size_t from) {
    uint64_t p = 1;
    for (size_t i = from; i < s.size(); ++i)
      p *= s[i] > 0 ? static_cast<uint64_t>(s[i]) : 0;
    return p;
  }

  /// FLOPs of one node (docs/cost.md's table).
  uint64_t flopsOf(GraphId g, const Node &n) const {
    const std::string &t = n.type;
    uint64_t outElems = 0;
    for (uint32_t k = 0; k < n.numOutputs; ++k)
      outElems += elements(g, {n.id, k});
    if (in(t, kDataMovement) || opKind(n) == OpKind::Copy)
      return 0;
    if (t == "Conv") { // 2 * |Y| * (Cin/group * prod(kernel))
      const TensorType *w = inputType(g, n, 1);
      return w && w->rank() >= 2 ? 2 * elements(g, {n.id, 0}) * product(w->shape, 1) : 0;
    }
    if (t == "ConvTranspose") { // 2 * |X| * (Cout/group * prod(kernel))
      const TensorType *x = inputType(g, n, 0), *w = inputType(g, n, 1);
      return x && w && w->rank() >= 2 ? 2 * product(x->shape, 0) * product(w->shape, 1) : 0;
    }
    if (t == "MatMul" || t == "MatMulInteger") { // 2 * |Y| * K
      const TensorType *a = inputType(g, n, 0);
      if (!a || a->rank() < 1)
        return 0;
      return 2 * elements(g, {n.id, 0}) *
             static_cast<uint64_t>(std::max<int64_t>(0, a->shape.back()));
    }
    if (t == "Gemm") { // 2 * |Y| * K, K from A (transA)
      const TensorType *a = inputType(g, n, 0);
      if (!a || a->rank() != 2)
        return 0;
      int64_t k = n.intAttr("transA").value_or(0) ? a->shape[0] : a->shape[1];
      return 2 * elements(g, {n.id, 0}) * static_cast<uint64_t>(std::max<int64_t>(0, k));
    }
    if (t == "MaxPool" || t == "AveragePool" || t == "LpPool") { // |Y| * prod(kernel_shape)
      uint64_t window = 1;
      if (const AttrValue *ks = n.attr("kernel_shape"); ks && ks->isList())
        for (const AttrValue &v : ks->asList())
          window *= v.isInt() && v.asInt() > 0 ? static_cast<uint64_t>(v.asInt()) : 1;
      return elements(g, {n.id, 0}) * window;
    }
    if (in(t, kReductions)) { // one per input element
      const TensorType *x = inputType(g, n, 0);
      return x ? product(x->shape, 0) : 0;
    }
    return outElems; // element-wise and everything else: one per output element
  }

  void kernel(GraphId g, const Node &n, const std::string &key, uint64_t flops) {
    ++r_.kernels;
    ++r_.kernelsByOp[key];
    r_.flops += flops;
    for (const auto &src : n.inputs)
      if (src)
        r_.bytesRead += bytes(g, *src);
    for (uint32_t k = 0; k < n.numOutputs; ++k) {
      // A view output is the input's memory: nothing is written through it.
      if (viewInput(n, k) || refVarSrcName(n, k))
        continue;
      r_.bytesWritten += bytes(g, {n.id, k});
    }
  }

  /// FLOPs of everything inside a fused body (no bytes: the values stay in the kernel).
  uint64_t bodyFlops(GraphId g, unsigned depth) const {
    uint64_t f = 0;
    if (depth > kMaxNesting || g >= m_.numGraphs() || !m_.graph(g).alive)
      return 0;
    for (NodeId id : m_.graph(g).liveNodes()) {
      const Node &n = m_.graph(g).node(id);
      if (holdsSubgraphs(n)) {
        for (GraphId s : n.subgraphs)
          f += bodyFlops(s, depth + 1);
      } else if (!isFreeNode(n)) {
        f += flopsOf(g, n);
      }
    }
    return f;
  }

  void node(GraphId g, const Node &n, unsigned depth) {
    if (opKind(n) == OpKind::Weight && n.numOutputs > 0)
      r_.constantBytes += bytes(g, {n.id, 0});
    if (opKind(n) == OpKind::Call && fusedCall(n)) {
      ++r_.fusedGroups;
      uint64_t f = 0;
      for (GraphId s : n.subgraphs) {
        f += bodyFlops(s, depth + 1);
        constantsIn(s, depth + 1);
      }
      kernel(g, n, "fused", f);
      return;
    }
    if (holdsSubgraphs(n)) {
      // A plain call is transparent; control flow launches nothing itself
      // (branch choice and While write-backs are not kernels): each
      // subgraph's nodes count once (docs/cost.md).
      for (GraphId s : n.subgraphs)
        graph(s, depth + 1);
      return;
    }
    if (isFreeNode(n))
      return;
    kernel(g, n, n.type, flopsOf(g, n));
  }

  void constantsIn(GraphId g, unsigned depth) {
    if (depth > kMaxNesting || g >= m_.numGraphs() || !m_.graph(g).alive)
      return;
    for (NodeId id : m_.graph(g).liveNodes()) {
      const Node &n = m_.graph(g).node(id);
      if (opKind(n) == OpKind::Weight && n.numOutputs > 0)
        r_.constantBytes += bytes(g, {n.id, 0});
      for (GraphId s : n.subgraphs)
        constantsIn(s, depth + 1);
    }
  }
};

} // namespace

bool isFreeNode(const Node &n) {
  switch (opKind(n)) {
  case OpKind::DataSource:
  case OpKind::Variable:
  case OpKind::Weight:
  case OpKind::NetOutput:
  case OpKind::Call:
    return true;
  default:
    break;
  }
  if (n.numOutputs == 0 || isInputMutable(n))
    return false;
  for (uint32_t k = 0; k < n.numOutputs; ++k)
    if (!viewInput(n, k))
      return false;
  return true;
}

CostReport computeCost(const Module &m) {
  CostReport r;
  if (m.numGraphs() == 0)
    return r;
  Walker(m, r).graph(0, 0);
  MemoryTimeline t = analyzeMemory(m);
  r.peakKnown = t.ok;
  r.peakLiveBytes = t.ok ? t.peak : 0;
  r.peakSkip = t.ok ? "" : t.skipTag;
  return r;
}

} // namespace graphvet
