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

} // namespace

RuleResult legalizeConv(RuleInput &in) {
  const Node &n = in.g.node(in.id);
  const TensorType *x = in.inputTypes.size() > 0 ? in.inputTypes[0] : nullptr;
  const TensorType *wt = in.inputTypes.size() > 1 ? in.inputTypes[1] : nullptr;
  if (!x || !wt || x->rank() < 3 || wt->rank() != x->rank())
    return refused("unknown-type", "the types of X and W are unknown");
  DType t = x->dtype;
  auto it = in.target.ops.find("Conv");
  if (it == in.target.ops.end() || !in.target.supportsOp("Conv", t))
    return refused("no-rule", fmt::format("no exact rewrite of Conv of {} (no Conv of that dtype "
                                          "to pad into)",
                                          dtypeName(t)));
  int64_t k = it->second.channelsMultipleOf;
  std::string layout = attrString(n, "layout", "NCHW");
  bool nhwc = layout == "NHWC";
  int64_t r = x->rank();
  size_t cAxis = nhwc ? static_cast<size_t>(r - 1) : 1; // X's and Y's channel axis
  size_t wIn = cAxis;                                   // W: OIHW or OHWI
  int64_t C = x->shape[cAxis], M = wt->shape[0];
  int64_t group = attrInt(n, "group", 1);
  bool depthwise = group > 1 && group == C && M == C && wt->shape[wIn] == 1;
  if (group != 1 && !depthwise)
    return refused("conv-grouped",
                   fmt::format("group = {} with {} input and {} output channels: padding would "
                               "go inside every group (only depthwise, group = C = M, is padded)",
                               group, C, M));
  const Tensor *w = constValue(in.g, n.inputs[1]);
  bool hasBias = n.inputs.size() > 2 && n.inputs[2].has_value();
  const Tensor *bias = hasBias ? constValue(in.g, n.inputs[2]) : nullptr;
  if (!w || (hasBias && !bias))
    return refused("conv-weights-not-constant",
                   "the weights (and bias) must be constants to be padded at compile time");
  int64_t C2 = roundUp(C, k), M2 = roundUp(M, k);
  if (depthwise)
    M2 = C2;
  std::vector<std::pair<std::string, DType>> needed;
  if (C2 != C)
    needed.emplace_back("Pad", t);
  if (M2 != M)
    needed.emplace_back("Slice", t);
  if (auto missing = missingOps(in.target, needed))
    return {missing, {}};

  Node old = n;
  in.g.removeNode(in.id);
  Builder bld(in.g, old);
  OutPort xv = *old.inputs[0];
  if (C2 != C) {
    std::vector<int64_t> pads(2 * static_cast<size_t>(r), 0);
    pads[static_cast<size_t>(r) + cAxis] = C2 - C; // end of the channel axis
    xv = bld.op("pad", "Pad", {xv});
    bld.node(xv).attrs["pads"] = intList(pads);
  }
  Shape ws = w->shape();
  ws[0] = M2;
  if (!depthwise)
    ws[wIn] = C2;
  std::vector<std::optional<OutPort>> inputs = {xv,
                                                bld.constant("weights", padTensor(*w, ws, -0.0))};
  if (bias)
    inputs.push_back(bld.constant("bias", padTensor(*bias, Shape{M2}, 0.0)));
  OutPort conv = bld.op("padded", "Conv", std::move(inputs));
  for (const auto &[key, value] : old.attrs)
    if (key.rfind("out0.", 0) != 0)
      bld.node(conv).attrs[key] = value;
  if (depthwise)
    bld.node(conv).attrs["group"] = AttrValue::ofInt(C2);
  OutPort result = conv;
  if (M2 != M) {
    result = bld.op("slice", "Slice", {conv});
    bld.node(result).attrs["starts"] = intList({0});
    bld.node(result).attrs["ends"] = intList({M});
    bld.node(result).attrs["axes"] = intList({static_cast<int64_t>(cAxis)});
  }
  bld.finish(result);
  return {
      std::nullopt,
      Rewritten{fmt::format("Conv{} with channels padded from {} in, {} out to {} in, {} out "
                            "(-0 weights, +0 data{}){}",
                            depthwise ? " (depthwise)" : "", C, M, C2, M2, bias ? ", +0 bias" : "",
                            M2 != M ? " and the added outputs sliced off" : ""),
                bld.created()}};
}

} // namespace graphvet::legalize
