// fold-scale-axis, analysis: decides whether a Mul by a per-channel
// constant folds backward (into the weights and bias of the op producing its
// other operand) or forward (into the weights of the op its result reaches),
// and computes the folded constants in the weights' dtype.
#include "passes/fold_scale_axis/internal.h"

#include "ir/dtype.h"
#include "ir/op_def.h"

#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <limits>

namespace graphvet::fold_scale_axis {
namespace {

/// Longest Relu/LeakyRelu/MaxPool chain a forward fold walks through.
constexpr int kMaxChain = 16;

/// The value of a `Const` without control edges at `p`, or nullptr.
const Tensor *constAt(const Graph &g, std::optional<OutPort> p) {
  if (!p)
    return nullptr;
  const Node &src = g.node(p->node);
  if (src.type != "Const" || !src.ctrlIn.empty())
    return nullptr;
  const AttrValue *v = src.attr("value");
  return v && v->isTensor() ? &v->asTensor() : nullptr;
}

/// True when a port description key (`outK.dtype`, `outK.shape`) or no port
/// key at all: every other port attribute binds memory.
bool plainAttr(const std::string &key) {
  bool port =
      (key.rfind("out", 0) == 0 || key.rfind("in", 0) == 0) && key.find('.') != std::string::npos;
  if (!port)
    return true;
  std::string_view rest = std::string_view(key).substr(key.find('.') + 1);
  return rest == "dtype" || rest == "shape";
}

/// Control edges, reserved or memory-binding attributes on a node the fold
/// removes or rewrites.
std::optional<Refusal> nodeRefusal(const Node &n) {
  if (!n.ctrlIn.empty() || !n.ctrlOut.empty())
    return Refusal{"ctrl-edges", n.name + " has control edges"};
  if (n.attr("_cannot_be_deleted") || n.attr("no_need_constant_folding"))
    return Refusal{"attrs", "a reserved attribute of " + n.name + " forbids the rewrite"};
  for (const auto &[key, value] : n.attrs)
    if (!plainAttr(key))
      return Refusal{"attrs", "port attribute " + key + " of " + n.name + " binds its memory"};
  return std::nullopt;
}

/// The channel axis a `layout` attribute gives a tensor of rank `rank`
/// (tensor-semantics.md §5), or a refusal for an unknown layout.
std::optional<Refusal> layoutAxis(const Node &n, int64_t rank, int64_t &axis, bool &nhwc) {
  const std::string *layout = n.stringAttr("layout");
  nhwc = layout && *layout == "NHWC";
  if (layout && !nhwc && *layout != "NCHW")
    return Refusal{"layout", "layout \"" + *layout + "\" of " + n.name + " is not NCHW or NHWC"};
  axis = nhwc ? rank - 1 : 1;
  return std::nullopt;
}

/// The per-channel values of `s` when, broadcast against `shape`, it varies
/// along `axis` only and changes no dimension.
std::optional<Refusal> channelValues(const Tensor &s, const Shape &shape, int64_t axis,
                                     const std::string &what, std::vector<double> &values) {
  if (s.anyUndef())
    return Refusal{"scale-not-constant", what + " holds indeterminate elements"};
  int64_t rank = static_cast<int64_t>(shape.size()), srank = s.type().rank();
  if (srank > rank)
    return Refusal{"scale-axis", what + " has a higher rank than the scaled value"};
  for (int64_t k = 0; k < srank; ++k) {
    int64_t a = rank - srank + k, d = s.shape()[static_cast<size_t>(k)];
    if (d == 1)
      continue;
    if (a != axis || d != shape[static_cast<size_t>(axis)])
      return Refusal{"scale-axis", fmt::format("{} of shape {} does not broadcast along axis {} "
                                               "only",
                                               what, shapeStr(s.shape()), axis)};
  }
  int64_t C = shape[static_cast<size_t>(axis)];
  values.assign(static_cast<size_t>(C), 0.0);
  for (int64_t c = 0; c < C; ++c)
    values[static_cast<size_t>(c)] = s.getDouble(s.size() == 1 ? 0 : c);
  return std::nullopt;
}

/// out = a * s + shift in `out`'s dtype, rounded once; a refusal when the
/// value overflows, or rounds below the normal range (an inexact subnormal
/// or zero loses more than the bound's few roundings; an exact one, such as
/// a subnormal weight times 1, is kept).
std::optional<Refusal> store(Tensor &out, int64_t i, double a, double s, double shift) {
  double exact = a * s + shift;
  out.setDouble(i, exact);
  double rounded = out.getDouble(i);
  if (!std::isfinite(a) || !std::isfinite(shift))
    return std::nullopt; // a non-finite weight stays what it was scaled by
  if (!std::isfinite(rounded) ||
      (rounded != exact && exact != 0 && std::fabs(exact) < smallestNormal(out.dtype())))
    return Refusal{"range", fmt::format("a folded constant ({:g} * {:g} + {:g}) leaves the normal "
                                        "range of {}",
                                        a, s, shift, dtypeName(out.dtype()))};
  return std::nullopt;
}

/// The coordinate of a flat index along one physical axis of a shape, its
/// stride computed once (it runs for every weight element).
class AxisCoord {
public:
  AxisCoord(const Shape &shape, int64_t axis) : dim_(shape[static_cast<size_t>(axis)]) {
    for (size_t k = static_cast<size_t>(axis) + 1; k < shape.size(); ++k)
      stride_ *= shape[k];
  }
  int64_t operator()(int64_t i) const { return (i / stride_) % dim_; }
  int64_t stride() const { return stride_; }
  int64_t dim() const { return dim_; }

private:
  int64_t stride_ = 1, dim_;
};

/// W scaled per element by scale[channelOf(flat index)].
template <class ChannelOf>
std::optional<Refusal> scaleWeights(const Tensor &w, const std::vector<double> &scale,
                                    ChannelOf channelOf, Tensor &out) {
  out = Tensor(w.type());
  if (w.dtype() == DType::F32) {
    // The common case without a dtype dispatch per element: the same
    // product, rounded once to f32, and the same checks as store().
    const uint8_t *src = w.bytes().data();
    uint8_t *dst = out.bytes().data();
    const double smallest = smallestNormal(DType::F32);
    for (int64_t i = 0; i < w.size(); ++i) {
      int64_t c = channelOf(i);
      if (c < 0 || c >= static_cast<int64_t>(scale.size()))
        return Refusal{"weights-shape", "a weight maps to no channel of the scale"};
      float a;
      std::memcpy(&a, src + 4 * i, 4);
      double exact = static_cast<double>(a) * scale[static_cast<size_t>(c)];
      float rounded = static_cast<float>(exact);
      std::memcpy(dst + 4 * i, &rounded, 4);
      if (std::isfinite(a) && (!std::isfinite(rounded) ||
                               (rounded != exact && exact != 0 && std::fabs(exact) < smallest)))
        return store(out, i, a, scale[static_cast<size_t>(c)], 0); // its refusal
    }
    return std::nullopt;
  }
  for (int64_t i = 0; i < w.size(); ++i) {
    int64_t c = channelOf(i);
    if (c < 0 || c >= static_cast<int64_t>(scale.size()))
      return Refusal{"weights-shape", "a weight maps to no channel of the scale"};
    if (auto r = store(out, i, w.getDouble(i), scale[static_cast<size_t>(c)], 0))
      return r;
  }
  return std::nullopt;
}

/// W scaled along one axis: the same values as the generic loop, walked as
/// (outer, channel, inner) blocks so that no element pays a division.
std::optional<Refusal> scaleWeights(const Tensor &w, const std::vector<double> &scale,
                                    AxisCoord axis, Tensor &out) {
  if (w.dtype() != DType::F32 || axis.dim() != static_cast<int64_t>(scale.size()))
    return scaleWeights<AxisCoord>(w, scale, axis, out);
  out = Tensor(w.type());
  const uint8_t *src = w.bytes().data();
  uint8_t *dst = out.bytes().data();
  const double smallest = smallestNormal(DType::F32);
  const int64_t inner = axis.stride(), dim = axis.dim();
  const int64_t outer = inner * dim == 0 ? 0 : w.size() / (inner * dim);
  // Each (outer, channel) block is scaled in a loop without a branch (the
  // compiler vectorizes it), then screened by a second one, in f32 only, for
  // the cases store() refuses: a finite weight whose product is not finite,
  // or a product that lost bits below the smallest normal (flagged
  // conservatively as a nonzero weight whose result is at most that normal:
  // a product rounding up to it counts too). A flagged block is walked again
  // with the exact checks to find the first bad weight, whose refusal store()
  // gives. (`|x| <= max` is isfinite: false for NaN and the infinities.)
  constexpr float kMaxFloat = std::numeric_limits<float>::max();
  const float smallestF = static_cast<float>(smallest);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < dim; ++c) {
      const double sc = scale[static_cast<size_t>(c)];
      const int64_t begin = (o * dim + c) * inner;
      const uint8_t *from = src + 4 * begin;
      uint8_t *to = dst + 4 * begin;
      for (int64_t k = 0; k < inner; ++k) {
        float a;
        std::memcpy(&a, from + 4 * k, 4);
        const float rounded = static_cast<float>(static_cast<double>(a) * sc);
        std::memcpy(to + 4 * k, &rounded, 4);
      }
      int bad = 0;
      for (int64_t k = 0; k < inner; ++k) {
        float a, r;
        std::memcpy(&a, from + 4 * k, 4);
        std::memcpy(&r, to + 4 * k, 4);
        bad |= static_cast<int>(std::fabs(a) <= kMaxFloat) &
               (static_cast<int>(!(std::fabs(r) <= kMaxFloat)) |
                (static_cast<int>(a != 0) & static_cast<int>(std::fabs(r) <= smallestF)));
      }
      if (!bad)
        continue;
      for (int64_t k = 0; k < inner; ++k) {
        float a;
        std::memcpy(&a, from + 4 * k, 4);
        const double exact = static_cast<double>(a) * sc;
        const float rounded = static_cast<float>(exact);
        if (std::isfinite(a) && (!std::isfinite(rounded) ||
                                 (rounded != exact && exact != 0 && std::fabs(exact) < smallest)))
          return store(out, begin + k, a, sc, 0); // its refusal
      }
    }
  return std::nullopt;
}

std::optional<Refusal> checkDTypes(const TensorType &y, const Tensor &s, const Tensor &w) {
  if (!isFloat(y.dtype))
    return Refusal{"dtype",
                   fmt::format("the scaled value is {}, not a float type", dtypeName(y.dtype))};
  if (s.dtype() != y.dtype || w.dtype() != y.dtype)
    return Refusal{"dtype",
                   fmt::format("scale {}, weights {} and data {} differ", dtypeName(s.dtype()),
                               dtypeName(w.dtype()), dtypeName(y.dtype))};
  return std::nullopt;
}

/// The weights of `op` (input 1) as a constant, or a refusal.
std::optional<Refusal> weightsOf(const Graph &g, const Node &op, const Tensor *&w) {
  w = op.inputs.size() > 1 ? constAt(g, op.inputs[1]) : nullptr;
  if (!w)
    return Refusal{"weights-not-constant", "the weights of " + op.name + " are not a constant"};
  if (w->anyUndef())
    return Refusal{"weights-not-constant",
                   "the weights of " + op.name + " hold indeterminate elements"};
  if (op.type == "MatMul" && w->type().rank() != 2)
    return Refusal{"weights-shape", "the weights of MatMul " + op.name + " are not 2-D"};
  return std::nullopt;
}

bool hasInput(const Node &n, size_t k) {
  return k < n.inputs.size() && n.inputs[k].has_value();
}

/// The Add after a backward-folded Mul, when its other operand is a
/// constant along the same channel axis (else the Add stays).
void absorbAdd(const Graph &g, GraphId gid, const ModuleTypes &types, const Node &mul, int64_t axis,
               std::optional<NodeId> &add, std::vector<double> &shift) {
  if (mul.consumers[0].size() != 1)
    return;
  const Node &a = g.node(mul.consumers[0][0].node);
  if (a.type != "Add" || a.inputs.size() != 2 || nodeRefusal(a))
    return;
  uint32_t other = 1 - mul.consumers[0][0].index;
  const Tensor *b = constAt(g, a.inputs[other]);
  const TensorType *yType = types.of(gid, *a.inputs[1 - other]);
  const TensorType *aType = types.of(gid, a.id, 0);
  if (!b || !yType || !aType || aType->shape != yType->shape || b->dtype() != yType->dtype)
    return;
  if (channelValues(*b, yType->shape, axis, "the shift", shift))
    return;
  add = a.id;
}

} // namespace

bool isFoldTarget(const std::string &type) {
  return type == "Conv" || type == "ConvTranspose" || type == "Gemm" || type == "MatMul";
}

std::optional<Refusal> planBackward(const Graph &g, GraphId gid, const ModuleTypes &types,
                                    NodeId mulId, FoldPlan &plan, bool &candidate) {
  const Node &mul = g.node(mulId);
  candidate = false;
  if (mul.inputs.size() != 2 || !mul.inputs[0] || !mul.inputs[1])
    return std::nullopt;
  int yIndex = -1;
  for (int k = 0; k < 2 && yIndex < 0; ++k)
    if (mul.inputs[k]->index == 0 && isFoldTarget(g.node(mul.inputs[k]->node).type))
      yIndex = k;
  if (yIndex < 0)
    return std::nullopt;
  candidate = true;
  OutPort y = *mul.inputs[yIndex];
  const Node &op = g.node(y.node);
  const Tensor *s = constAt(g, mul.inputs[1 - yIndex]);
  if (!s)
    return Refusal{"scale-not-constant", "the scale of " + mul.name + " is not a constant"};
  if (auto r = nodeRefusal(mul))
    return r;
  if (auto r = nodeRefusal(op))
    return r;
  if (op.consumers[0].size() != 1)
    return Refusal{"consumers", fmt::format("the result of {} has {} consumers (a graph output "
                                            "counts): only the Mul may read it unscaled",
                                            op.name, op.consumers[0].size())};
  const TensorType *yType = types.of(gid, y);
  const TensorType *mType = types.of(gid, mulId, 0);
  if (!yType || !mType)
    return Refusal{"unknown-type", "the type of " + op.name + "'s result is unknown"};
  const Tensor *w = nullptr;
  if (auto r = weightsOf(g, op, w))
    return r;
  if (auto r = checkDTypes(*yType, *s, *w))
    return r;
  if (mType->shape != yType->shape)
    return Refusal{"scale-axis", "the scale broadcasts the result to a larger shape"};
  int64_t rank = yType->rank();
  int64_t axis = rank - 1; // Gemm, MatMul: the last axis
  bool nhwc = false;
  if (op.type == "Conv" || op.type == "ConvTranspose")
    if (auto r = layoutAxis(op, rank, axis, nhwc))
      return r;
  if (rank < 1 || axis < 0)
    return Refusal{"scale-axis", "the result has no channel axis"};
  std::vector<double> scale;
  if (auto r = channelValues(*s, yType->shape, axis, "the scale", scale))
    return r;
  for (double v : scale)
    if (!std::isfinite(v))
      return Refusal{"range", "a scale is not finite"};
  const Shape &ws = w->shape();
  std::optional<Refusal> r;
  plan = FoldPlan{};
  if (op.type == "Conv") {
    // W is OIHW (OHWI in NHWC): output channel o is the physical axis 0.
    r = scaleWeights(*w, scale, AxisCoord(ws, 0), plan.weight);
    plan.where = "output channels (O) of the weights";
  } else if (op.type == "ConvTranspose") {
    // W is (C_in, C_out/group, k...) ((C_in, k..., C_out/group) in NHWC):
    // output channel (c / Cg) * Mg + m.
    int64_t group = op.intAttr("group").value_or(1);
    int64_t C = ws[0], Cg = group > 0 ? C / group : 0, mAxis = nhwc ? ws.size() - 1 : 1;
    if (group != 1 && Cg != 1)
      return Refusal{"grouped", fmt::format("ConvTranspose {} has {} groups and is not depthwise",
                                            op.name, group)};
    int64_t Mg = ws[static_cast<size_t>(mAxis)];
    r = scaleWeights(
        *w, scale,
        [&, o = AxisCoord(ws, 0), m = AxisCoord(ws, mAxis)](int64_t i) {
          return o(i) / Cg * Mg + m(i);
        },
        plan.weight);
    plan.where = "output channels (axis 1) of the weights";
  } else if (op.type == "Gemm") {
    // alpha joins the scale in B: the sum of the scaled terms is then no
    // larger than the result (with alpha < 1 left outside, it could
    // overflow where the original, scaled after alpha, did not).
    int64_t nAxis = op.intAttr("transB").value_or(0) != 0 ? 0 : 1;
    // ONNX's alpha is a float32, and the Gemm kernel reads it so: the fold
    // uses that value, not the double the attribute spells (found by the
    // --passes all campaign, issue 29: alpha = 1e30 is 1.0000000150e30).
    double alpha = static_cast<float>(attrFloat(op, "alpha", 1.0));
    std::vector<double> weightScale = scale;
    for (double &v : weightScale)
      v *= alpha;
    plan.dropAlpha = alpha != 1.0;
    r = scaleWeights(*w, weightScale, AxisCoord(ws, nAxis), plan.weight);
    plan.where =
        fmt::format("the N axis (axis {}) of B{}", nAxis, plan.dropAlpha ? " with alpha" : "");
  } else {
    r = scaleWeights(*w, scale, AxisCoord(ws, 1), plan.weight);
    plan.where = "the columns (N) of the weights";
  }
  if (r)
    return r;
  // The Add joins when the bias can take it: Conv, ConvTranspose, and a
  // Gemm whose beta is 1 or that has no C (its beta is then set to 1;
  // another beta would need b / beta, a division).
  std::vector<double> shift(scale.size(), 0.0);
  bool gemm = op.type == "Gemm";
  bool hasBias = hasInput(op, 2);
  double beta = static_cast<float>(attrFloat(op, "beta", 1.0)); // float32, as for alpha
  if (op.type != "MatMul" && (!gemm || beta == 1.0 || !hasBias))
    absorbAdd(g, gid, types, mul, axis, plan.add, shift);
  if (hasBias) {
    const Tensor *bias = constAt(g, op.inputs[2]);
    if (!bias || bias->anyUndef())
      return Refusal{"weights-not-constant", "the bias of " + op.name + " is not a constant"};
    if (bias->dtype() != w->dtype())
      return Refusal{"dtype", "the bias and the weights of " + op.name + " differ in dtype"};
    Shape bs = bias->shape();
    int64_t N = static_cast<int64_t>(scale.size());
    if (gemm) {
      // C broadcasts to [M, N]: the result keeps its rows and spans N.
      int64_t rows = bs.size() == 2 ? bs[0] : 1;
      Shape out = bs.size() == 2 ? Shape{rows, N} : Shape{N};
      int64_t cols = bs.empty() ? 1 : bs.back();
      plan.bias = Tensor(TensorType{bias->dtype(), out});
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double c = bias->getDouble(i * cols + (cols == 1 ? 0 : j));
          if (auto rr = store(*plan.bias, i * N + j, c, scale[static_cast<size_t>(j)],
                              shift[static_cast<size_t>(j)]))
            return rr;
        }
    } else {
      plan.bias = Tensor(bias->type());
      for (int64_t o = 0; o < bias->size(); ++o)
        if (auto rr = store(*plan.bias, o, bias->getDouble(o), scale[static_cast<size_t>(o)],
                            shift[static_cast<size_t>(o)]))
          return rr;
    }
  } else if (plan.add) {
    plan.bias = Tensor(TensorType{w->dtype(), {static_cast<int64_t>(shift.size())}});
    for (size_t o = 0; o < shift.size(); ++o)
      plan.bias->setDouble(static_cast<int64_t>(o), shift[o]); // exact: same dtype
    plan.setBetaOne = gemm;
  }
  plan.dir = Direction::Backward;
  plan.mul = mulId;
  plan.unscaled = y;
  plan.op = op.id;
  return std::nullopt;
}

std::optional<Refusal> planForward(const Graph &g, GraphId gid, const ModuleTypes &types,
                                   NodeId mulId, FoldPlan &plan, bool &candidate) {
  const Node &mul = g.node(mulId);
  candidate = false;
  if (mul.inputs.size() != 2 || !mul.inputs[0] || !mul.inputs[1])
    return std::nullopt;
  // Walk to the first op reading the scaled value as its data input,
  // through elementwise-per-channel ops that commute with a scale >= 0.
  std::vector<NodeId> chain;
  NodeId cur = mulId, target = kNoNode;
  for (int step = 0; step < kMaxChain && target == kNoNode; ++step) {
    NodeId next = kNoNode;
    for (const InPort &use : g.node(cur).consumers[0]) {
      const std::string &t = g.node(use.node).type;
      if (use.index == 0 && (isFoldTarget(t) && t != "ConvTranspose")) {
        target = use.node;
        break;
      }
      if (use.index == 0 && (t == "Relu" || t == "LeakyRelu" || t == "MaxPool")) {
        next = use.node;
        break;
      }
    }
    if (target != kNoNode || next == kNoNode)
      break;
    chain.push_back(next);
    cur = next;
  }
  if (target == kNoNode) {
    // Mul -> Add -> Conv (a BatchNormalization before the Conv): the shift
    // is not moved forward, since a padded Conv does not shift its padding.
    for (const InPort &use : g.node(cur).consumers[0]) {
      const Node &a = g.node(use.node);
      if (a.type != "Add")
        continue;
      for (const InPort &next : a.consumers[0])
        if (next.index == 0 && isFoldTarget(g.node(next.node).type)) {
          candidate = true;
          return Refusal{"shift", fmt::format("{} shifts the scaled value before {}: a shift is "
                                              "not folded forward (padding is not shifted)",
                                              a.name, g.node(next.node).name)};
        }
    }
    return std::nullopt;
  }
  candidate = true;
  const Node &op = g.node(target);
  int sIndex = constAt(g, mul.inputs[1]) ? 1 : constAt(g, mul.inputs[0]) ? 0 : -1;
  if (sIndex < 0)
    return Refusal{"scale-not-constant", "the scale of " + mul.name + " is not a constant"};
  const Tensor *s = constAt(g, mul.inputs[sIndex]);
  OutPort x = *mul.inputs[1 - sIndex];
  if (auto r = nodeRefusal(mul))
    return r;
  if (auto r = nodeRefusal(op))
    return r;
  // Every value from the Mul to the target is read by the next step only.
  NodeId prev = mulId;
  for (NodeId c : chain) {
    if (g.node(prev).consumers[0].size() != 1)
      return Refusal{"consumers", fmt::format("the scaled value {} has {} consumers (a graph "
                                              "output counts)",
                                              g.node(prev).name, g.node(prev).consumers[0].size())};
    if (auto r = nodeRefusal(g.node(c)))
      return r;
    for (uint32_t k = 1; k < g.node(c).numOutputs; ++k)
      if (!g.node(c).consumers[k].empty())
        return Refusal{"consumers", "the indices of " + g.node(c).name + " are used"};
    prev = c;
  }
  if (g.node(prev).consumers[0].size() != 1)
    return Refusal{"consumers",
                   fmt::format("the scaled value {} has {} consumers (a graph output counts)",
                               g.node(prev).name, g.node(prev).consumers[0].size())};
  const TensorType *xType = types.of(gid, x);
  const TensorType *mType = types.of(gid, mulId, 0);
  if (!xType || !mType)
    return Refusal{"unknown-type", "the type of " + mul.name + "'s operand is unknown"};
  const Tensor *w = nullptr;
  if (auto r = weightsOf(g, op, w))
    return r;
  if (auto r = checkDTypes(*xType, *s, *w))
    return r;
  if (mType->shape != xType->shape)
    return Refusal{"scale-axis", "the scale broadcasts the data to a larger shape"};
  int64_t rank = xType->rank();
  int64_t axis = rank - 1; // MatMul: the reduced (last) axis of its data
  bool nhwc = false;
  if (op.type == "Conv") {
    if (auto r = layoutAxis(op, rank, axis, nhwc))
      return r;
  } else if (op.type == "Gemm") {
    axis = op.intAttr("transA").value_or(0) != 0 ? 0 : 1;
  }
  if (rank < 1 || axis < 0 || axis >= rank)
    return Refusal{"scale-axis", "the data has no channel axis"};
  std::vector<double> scale;
  if (auto r = channelValues(*s, xType->shape, axis, "the scale", scale))
    return r;
  for (double v : scale)
    if (!std::isfinite(v))
      return Refusal{"range", "a scale is not finite"};
  for (NodeId c : chain) {
    const Node &n = g.node(c);
    for (double v : scale)
      if (!(v >= 0))
        return Refusal{"negative-scale",
                       fmt::format("scale {} is negative: {} does not commute with it", v, n.name)};
    if (n.type == "MaxPool") {
      int64_t poolAxis = 1;
      bool poolNhwc = false;
      if (auto r = layoutAxis(n, rank, poolAxis, poolNhwc))
        return r;
      if (poolAxis != axis)
        return Refusal{"scale-axis",
                       "MaxPool " + n.name + "'s channel axis is not " + op.name + "'s"};
    }
  }
  const Shape &ws = w->shape();
  std::optional<Refusal> r;
  plan = FoldPlan{};
  if (op.type == "Conv") {
    // W is OIHW (OHWI in NHWC): input channel (o / Mg) * Cg + i.
    int64_t group = op.intAttr("group").value_or(1);
    int64_t iAxis = nhwc ? static_cast<int64_t>(ws.size()) - 1 : 1;
    int64_t Cg = ws[static_cast<size_t>(iAxis)], Mg = group > 0 ? ws[0] / group : 0;
    if (group != 1 && Cg != 1)
      return Refusal{"grouped", fmt::format("Conv {} has {} groups and is not depthwise: the "
                                            "scale is not folded into its input channels",
                                            op.name, group)};
    r = scaleWeights(
        *w, scale,
        [&, o = AxisCoord(ws, 0), c = AxisCoord(ws, iAxis)](int64_t i) {
          return o(i) / Mg * Cg + c(i);
        },
        plan.weight);
    plan.where = "input channels (I) of the weights";
  } else if (op.type == "Gemm") {
    int64_t kAxis = op.intAttr("transB").value_or(0) != 0 ? 1 : 0;
    r = scaleWeights(*w, scale, AxisCoord(ws, kAxis), plan.weight);
    plan.where = fmt::format("the K axis (axis {}) of B", kAxis);
  } else {
    r = scaleWeights(*w, scale, AxisCoord(ws, 0), plan.weight);
    plan.where = "the rows (K) of the weights";
  }
  if (r)
    return r;
  plan.dir = Direction::Forward;
  plan.mul = mulId;
  plan.unscaled = x;
  plan.op = op.id;
  return std::nullopt;
}

} // namespace graphvet::fold_scale_axis
