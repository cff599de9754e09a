// simplify-inference, analysis: decides whether a normalization node may be
// rewritten and, when it may, computes the plan (for BatchNormalization the
// folded per-channel constants, in f64 rounded once to the data's dtype).
#include "passes/simplify_inference/internal.h"

#include "ir/dtype.h"

#include <cmath>
#include <fmt/format.h>

namespace graphvet::simplify_inference {
namespace {

/// The value of the `Const` feeding input `k` of `n`, or nullptr.
const Tensor *constInput(const Graph &g, const Node &n, size_t k) {
  if (k >= n.inputs.size() || !n.inputs[k])
    return nullptr;
  const Node &src = g.node(n.inputs[k]->node);
  if (src.type != "Const" || !src.ctrlIn.empty())
    return nullptr;
  const AttrValue *v = src.attr("value");
  return v && v->isTensor() ? &v->asTensor() : nullptr;
}

/// True when a port description key (`outK.dtype`, `outK.shape`) or no port
/// key at all: every other port attribute binds memory and is refused.
bool plainAttr(const std::string &key) {
  bool port =
      (key.rfind("out", 0) == 0 || key.rfind("in", 0) == 0) && key.find('.') != std::string::npos;
  if (!port)
    return true;
  std::string_view rest = std::string_view(key).substr(key.find('.') + 1);
  return rest == "dtype" || rest == "shape";
}

bool anyConsumer(const Node &n, uint32_t from) {
  for (uint32_t k = from; k < n.numOutputs; ++k)
    if (!n.consumers[k].empty())
      return true;
  return false;
}

} // namespace

double epsilonOf(const Node &n) {
  const AttrValue *v = n.attr("epsilon");
  double e = 1e-5;
  if (v && v->isFloat())
    e = v->asFloat();
  else if (v && v->isInt())
    e = static_cast<double>(v->asInt());
  return static_cast<double>(static_cast<float>(e)); // an ONNX float attribute
}

std::optional<Refusal> commonRefusal(const Graph &g, const Node &n, const TensorType *xType) {
  (void)g;
  if (!n.ctrlIn.empty() || !n.ctrlOut.empty())
    return Refusal{"ctrl-edges", "it has control edges"};
  if (n.attr("_cannot_be_deleted") || n.attr("no_need_constant_folding"))
    return Refusal{"reserved-attr", "a reserved attribute forbids removing it"};
  for (const auto &[key, value] : n.attrs)
    if (!plainAttr(key))
      return Refusal{"port-attrs", "port attribute " + key + " binds its memory"};
  if (n.inputs.empty() || !n.inputs[0] || !xType)
    return Refusal{"unknown-type", "the type of its data input is unknown"};
  if (!isFloat(xType->dtype))
    return Refusal{"dtype",
                   fmt::format("its data is {}, not a float type", dtypeName(xType->dtype))};
  return std::nullopt;
}

std::optional<Refusal> planBatchNorm(const Graph &g, const Node &n, const TensorType &xType,
                                     BatchNormPlan &plan) {
  // Used running statistics first: they exist only in training mode, and
  // the tag says which output keeps the node.
  if (anyConsumer(n, 1))
    return Refusal{"extra-outputs-used", "its running statistics outputs are used"};
  if (n.intAttr("training_mode").value_or(0) != 0)
    return Refusal{"training-mode", "training_mode = 1 normalizes by the batch's statistics"};
  int64_t rank = static_cast<int64_t>(xType.shape.size());
  if (rank < 2)
    return Refusal{"unknown-axis", "its data has no channel axis"};
  const std::string *layout = n.stringAttr("layout");
  bool nhwc = layout && *layout == "NHWC";
  if (layout && !nhwc && *layout != "NCHW")
    return Refusal{"unknown-axis", "layout \"" + *layout + "\" is not NCHW or NHWC"};
  const Tensor *t[4];
  for (size_t k = 1; k <= 4; ++k) {
    t[k - 1] = constInput(g, n, k);
    if (!t[k - 1])
      return Refusal{"non-constant-stats",
                     fmt::format("input {} (scale, B, mean, var) is not a constant", k)};
    if (t[k - 1]->anyUndef())
      return Refusal{"non-constant-stats", fmt::format("input {} holds indeterminate elements", k)};
  }
  int64_t channelAxis = nhwc ? rank - 1 : 1;
  int64_t C = xType.shape[static_cast<size_t>(channelAxis)];
  for (const Tensor *s : t)
    if (s->size() != C)
      return Refusal{"unknown-axis", "a statistic does not hold one value per channel"};
  // [C] then one 1 per axis after the channel axis: broadcasts along it.
  Shape shape{C};
  for (int64_t a = channelAxis + 1; a < rank; ++a)
    shape.push_back(1);
  plan.x = *n.inputs[0];
  plan.scale = Tensor(TensorType{xType.dtype, shape});
  plan.shift = Tensor(TensorType{xType.dtype, shape});
  double eps = epsilonOf(n);
  for (int64_t c = 0; c < C; ++c) {
    double scale = t[0]->getDouble(c), bias = t[1]->getDouble(c);
    double mean = t[2]->getDouble(c), var = t[3]->getDouble(c);
    // Computed in f64 and rounded once to the data's dtype (storeDouble).
    double s = scale / std::sqrt(var + eps);
    plan.scale.setDouble(c, s);
    plan.shift.setDouble(c, bias - mean * s);
    // A scale rounded below the normal range keeps only a few significant
    // bits, an error the data then multiplies (not one rounding of the
    // result); an infinite one overflows where the original did not (a
    // typed campaign finding: subnormal bf16 statistics).
    double rs = plan.scale.getDouble(c), rb = plan.shift.getDouble(c);
    if ((std::isfinite(s) && !std::isfinite(rs)) ||
        (std::isfinite(bias - mean * s) && !std::isfinite(rb)) ||
        (rs != s && std::fabs(rs) < smallestNormal(xType.dtype)))
      return Refusal{"range", fmt::format("the folded scale or shift of channel {} ({:g}, {:g}) "
                                          "overflows or rounds below {}'s normal range",
                                          c, s, bias - mean * s, dtypeName(xType.dtype))};
  }
  return std::nullopt;
}

std::optional<Refusal> planInstanceNorm(const Graph &g, const Node &n, const TensorType &xType,
                                        NormPlan &plan) {
  (void)g;
  int64_t rank = static_cast<int64_t>(xType.shape.size());
  if (rank < 3)
    return Refusal{"unknown-axis", "its data has no spatial axis to normalize over"};
  if (n.inputs.size() < 3 || !n.inputs[1] || !n.inputs[2])
    return Refusal{"unknown-type", "scale or B is not connected"};
  const std::string *layout = n.stringAttr("layout");
  bool nhwc = layout && *layout == "NHWC";
  if (layout && !nhwc && *layout != "NCHW")
    return Refusal{"unknown-axis", "layout \"" + *layout + "\" is not NCHW or NHWC"};
  plan.x = *n.inputs[0];
  plan.scale = *n.inputs[1];
  plan.bias = *n.inputs[2];
  plan.dtype = xType.dtype;
  plan.epsilon = epsilonOf(n);
  int64_t first = nhwc ? 1 : 2, last = nhwc ? rank - 2 : rank - 1;
  for (int64_t a = first; a <= last; ++a)
    plan.axes.push_back(a);
  if (!nhwc) {
    plan.paramShape.push_back(xType.shape[1]);
    for (int64_t a = 2; a < rank; ++a)
      plan.paramShape.push_back(1);
  }
  return std::nullopt;
}

std::optional<Refusal> planLayerNorm(const Graph &g, const Node &n, const TensorType &xType,
                                     const TensorType *scaleType, const TensorType *biasType,
                                     NormPlan &plan) {
  (void)g;
  if (anyConsumer(n, 1))
    return Refusal{"stash-used", "its Mean or InvStdDev output is used"};
  int64_t rank = static_cast<int64_t>(xType.shape.size());
  int64_t axis = n.intAttr("axis").value_or(-1);
  int64_t normalized = axis < 0 ? axis + rank : axis;
  if (rank < 1 || normalized < 0 || normalized >= rank)
    return Refusal{"unknown-axis", fmt::format("axis {} is out of range for rank {}", axis, rank)};
  if (n.inputs.size() < 2 || !n.inputs[1] || !scaleType)
    return Refusal{"unknown-type", "the type of Scale is unknown"};
  bool hasBias = n.inputs.size() > 2 && n.inputs[2].has_value();
  if (hasBias && !biasType)
    return Refusal{"unknown-type", "the type of B is unknown"};
  // Scale and B are indexed by the flat position in a row; they broadcast
  // the same way only when shaped like the row (or a single value).
  Shape row(xType.shape.begin() + normalized, xType.shape.end());
  auto broadcastsAsRow = [&](const TensorType &t) {
    return t.shape == row || (t.numElements() == 1 && t.shape.size() <= row.size());
  };
  if (!broadcastsAsRow(*scaleType) || (hasBias && !broadcastsAsRow(*biasType)))
    return Refusal{"scale-shape", "Scale or B is not shaped like a normalized row"};
  plan.x = *n.inputs[0];
  plan.scale = *n.inputs[1];
  if (hasBias)
    plan.bias = *n.inputs[2];
  plan.dtype = xType.dtype;
  plan.epsilon = epsilonOf(n);
  plan.varianceFromSquares = true;
  switch (n.intAttr("stash_type").value_or(1)) {
  case 1:
    plan.stash = DType::F32;
    break;
  case 16:
    plan.stash = DType::BF16;
    break;
  default:
    return Refusal{"stash-type", "its stash_type is neither 1 (f32) nor 16 (bf16)"};
  }
  for (int64_t a = normalized; a < rank; ++a)
    plan.axes.push_back(a);
  return std::nullopt;
}

} // namespace graphvet::simplify_inference
