// legalize, the Conv rule: channel counts padded up to the target's multiple, then the
// added output channels sliced off. Exactness (conv.cpp's kernel): each output element is
// acc = -0, then + x * w for input channel c = 0.. in order and each tap, then + bias,
// rounded once. The added input channels come last, and their terms are (+0) * (-0) = -0
// (x padded by Pad with +0, weights padded with -0), and acc + (-0) == acc for every acc
// (-0 + -0 = -0, +0 + -0 = +0, NaN and inf unchanged): the sum is the same bit for bit. A
// +0 weight would not do: a sum of -0 terms (x = -0, w = +0 ...) would become +0. Added
// output channels compute anything; the Slice drops them before anyone reads them.
// Depthwise Conv (group = C = M) pads whole groups: each real group is untouched. Other
// grouped Convs are refused (the padding would have to go inside every group).
#include "ir/op_def.h"
#include "passes/legalize/internal.h"

#include <fmt/format.h>

namespace graphvet::legalize {
namespace {

int64_t roundUp(int64_t v, int64_t k) {
  return (v + k - 1) / k * k;
}

/// The value of the Const feeding `p`, or nullptr.
const Tensor *constValue(const Graph &g, std::optional<OutPort> p) {
  if (!p)
    return nullptr;
  const Node &c = g.node(p->node);
  return c.alive && c.type == "Const" ? attrTensor(c, "value") : nullptr;
}

/// `w` grown to shape `shape` (each axis at least as long): old elements keep their
/// multi-index, new ones are `fill`.
Tensor padTensor(const Tensor &w, const Shape &shape, double fill) {
  Tensor out(TensorType{w.dtype(), shape});
  const Shape &old = w.shape();
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t k = 0; k < out.size(); ++k) {
    bool inside = true;
    int64_t src = 0;
    for (size_t a = 0; a < shape.size(); ++a) {
      inside = inside && idx[a] < old[a];
      src = src * old[a] + idx[a];
    }
    if (inside)
      out.copyElement(k, w, src);
    else
      out.setDouble(k, fill);
    for (size_t a = shape.size(); a-- > 0;) // next multi-index, row-major
      if (++idx[a] < shape[a])
        break;
      else
        idx[a] = 0;
  }
  return out;
}

RuleResult refused(std::string tag, std::string why) {
  return {Refusal{std::move(tag), std::move(why)}, {}};
}

/// What the Conv rule decided: the channel counts before and after, and where they are.
struct ConvPlan {
  DType t = DType::F32;
  int64_t rank = 4;
  size_t cAxis =
      1; ///< the channel axis of X and Y, and W's input axis (NCHW/OIHW: 1; NHWC/OHWI: last)
  int64_t C = 0, M = 0, C2 = 0, M2 = 0;
  bool depthwise = false;
  const Tensor *w = nullptr;
  const Tensor *bias = nullptr;
};

/// Carries the plan out: Pad, padded constants, Conv, Slice.
void buildConv(Builder &bld, const Node &old, const ConvPlan &p) {
  OutPort xv = *old.inputs[0];
  if (p.C2 != p.C) {
    std::vector<int64_t> pads(2 * static_cast<size_t>(p.rank), 0);
    pads[static_cast<size_t>(p.rank) + p.cAxis] = p.C2 - p.C; // end of the channel axis
    xv = bld.op("pad", "Pad", {xv});
    bld.node(xv).attrs["pads"] = intList(pads);
  }
  Shape ws = p.w->shape();
  ws[0] = p.M2;
  if (!p.depthwise)
    ws[p.cAxis] = p.C2;
  std::vector<std::optional<OutPort>> inputs = {xv,
                                                bld.constant("weights", padTensor(*p.w, ws, -0.0))};
  if (p.bias)
    inputs.push_back(bld.constant("bias", padTensor(*p.bias, Shape{p.M2}, 0.0)));
  OutPort conv = bld.op("padded", "Conv", std::move(inputs));
  for (const auto &[key, value] : old.attrs)
    if (key.rfind("out0.", 0) != 0)
      bld.node(conv).attrs[key] = value;
  if (p.depthwise)
    bld.node(conv).attrs["group"] = AttrValue::ofInt(p.C2);
  OutPort result = conv;
  if (p.M2 != p.M) {
    result = bld.op("slice", "Slice", {conv});
    bld.node(result).attrs["starts"] = intList({0});
    bld.node(result).attrs["ends"] = intList({p.M});
    bld.node(result).attrs["axes"] = intList({static_cast<int64_t>(p.cAxis)});
  }
  bld.finish(result);
}

} // namespace

RuleResult legalizeConv(RuleInput &in) {
  const Node &n = in.g.node(in.id);
  const TensorType *x = in.inputTypes.size() > 0 ? in.inputTypes[0] : nullptr;
  const TensorType *wt = in.inputTypes.size() > 1 ? in.inputTypes[1] : nullptr;
  if (!x || !wt || x->rank() < 3 || wt->rank() != x->rank())
    return refused("unknown-type", "the types of X and W are unknown");
  ConvPlan p;
  p.t = x->dtype;
  auto it = in.target.ops.find("Conv");
  if (it == in.target.ops.end() || !in.target.supportsOp("Conv", p.t))
    return refused("no-rule", fmt::format("no exact rewrite of Conv of {} (no Conv of that dtype "
                                          "to pad into)",
                                          dtypeName(p.t)));
  p.rank = x->rank();
  p.cAxis = attrString(n, "layout", "NCHW") == "NHWC" ? static_cast<size_t>(p.rank - 1) : 1;
  p.C = x->shape[p.cAxis];
  p.M = wt->shape[0];
  int64_t group = attrInt(n, "group", 1);
  p.depthwise = group > 1 && group == p.C && p.M == p.C && wt->shape[p.cAxis] == 1;
  if (group != 1 && !p.depthwise)
    return refused("conv-grouped",
                   fmt::format("group = {} with {} input and {} output channels: padding would "
                               "go inside every group (only depthwise, group = C = M, is padded)",
                               group, p.C, p.M));
  p.w = constValue(in.g, n.inputs[1]);
  bool hasBias = n.inputs.size() > 2 && n.inputs[2].has_value();
  p.bias = hasBias ? constValue(in.g, n.inputs[2]) : nullptr;
  if (!p.w || (hasBias && !p.bias))
    return refused("conv-weights-not-constant",
                   "the weights (and bias) must be constants to be padded at compile time");
  int64_t k = it->second.channelsMultipleOf;
  p.C2 = roundUp(p.C, k);
  p.M2 = p.depthwise ? p.C2 : roundUp(p.M, k);
  std::vector<std::pair<std::string, DType>> needed;
  if (p.C2 != p.C)
    needed.emplace_back("Pad", p.t);
  if (p.M2 != p.M)
    needed.emplace_back("Slice", p.t);
  if (auto missing = missingOps(in.target, needed))
    return {missing, {}};
  Node old = n; // a copy: the node is removed first, freeing its name
  in.g.removeNode(in.id);
  Builder bld(in.g, old);
  buildConv(bld, old, p); // p.w and p.bias point into Consts the removal leaves alive
  return {std::nullopt,
          Rewritten{fmt::format("Conv{} with channels padded from {} in, {} out to {} in, {} out "
                                "(-0 weights, +0 data{}){}",
                                p.depthwise ? " (depthwise)" : "", p.C, p.M, p.C2, p.M2,
                                p.bias ? ", +0 bias" : "",
                                p.M2 != p.M ? " and the added outputs sliced off" : ""),
                    bld.created()}};
}

} // namespace graphvet::legalize
