// convert-layout, analysis: permutation arithmetic, compile-time transposition
// of constants, which ops are layout-sensitive and may be converted, and how a
// layout-agnostic op computes on data stored in a permuted layout (its axis
// attributes and operands remapped, the perm its outputs come out in).
#include "passes/convert_layout/internal.h"

#include "ir/op_def.h"

#include <algorithm>
#include <fmt/format.h>
#include <set>

namespace graphvet::convert_layout {

bool isIdentity(const Perm &p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int64_t>(i))
      return false;
  return true;
}

Perm identityPerm(size_t rank) {
  Perm p(rank);
  for (size_t i = 0; i < rank; ++i)
    p[i] = static_cast<int64_t>(i);
  return p;
}

Perm inversePerm(const Perm &p) {
  Perm inv(p.size());
  for (size_t i = 0; i < p.size(); ++i)
    inv[static_cast<size_t>(p[i])] = static_cast<int64_t>(i);
  return inv;
}

Perm composePerm(const Perm &first, const Perm &second) {
  if (first.empty())
    return second;
  if (second.empty())
    return first;
  Perm c(second.size());
  for (size_t i = 0; i < second.size(); ++i)
    c[i] = first[static_cast<size_t>(second[i])];
  return c;
}

Perm layoutPerm(size_t rank, bool toNhwc) {
  Perm p;
  p.push_back(0);
  if (toNhwc) { // [N, C, D1..Dk] -> [N, D1..Dk, C]
    for (size_t i = 2; i < rank; ++i)
      p.push_back(static_cast<int64_t>(i));
    p.push_back(1);
  } else { // [N, D1..Dk, C] -> [N, C, D1..Dk]
    p.push_back(static_cast<int64_t>(rank) - 1);
    for (size_t i = 1; i + 1 < rank; ++i)
      p.push_back(static_cast<int64_t>(i));
  }
  return p;
}

std::string permText(const Perm &p) {
  std::string s = "[";
  for (size_t i = 0; i < p.size(); ++i)
    s += (i ? ", " : "") + std::to_string(p[i]);
  return s + "]";
}

std::string permSuffix(const Perm &p) {
  std::string s;
  for (int64_t a : p)
    s += std::to_string(a);
  return s;
}

Tensor transposeTensor(const Tensor &t, const Perm &perm) {
  const Shape &in = t.shape();
  const size_t r = in.size();
  Shape outShape(r);
  std::vector<int64_t> inStride(r, 1);
  for (size_t i = r; i-- > 1;)
    inStride[i - 1] = inStride[i] * in[i];
  for (size_t i = 0; i < r; ++i)
    outShape[i] = in[static_cast<size_t>(perm[i])];
  Tensor out(TensorType{t.dtype(), outShape});
  const int64_t n = out.size();
  std::vector<int64_t> idx(r, 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t src = 0;
    for (size_t i = 0; i < r; ++i)
      src += idx[i] * inStride[static_cast<size_t>(perm[i])];
    out.copyElement(flat, t, src);
    for (size_t i = r; i-- > 0;) { // row-major increment of the output index
      if (++idx[i] < outShape[i])
        break;
      idx[i] = 0;
    }
  }
  return out;
}

const Tensor *constValue(const Graph &g, OutPort p) {
  const Node &n = g.node(p.node);
  if (!n.alive || n.type != "Const" || p.index != 0)
    return nullptr;
  const AttrValue *v = n.attr("value");
  return v && v->isTensor() ? &v->asTensor() : nullptr;
}

AttrValue intListAttr(const std::vector<int64_t> &v) {
  AttrValue::List l;
  for (int64_t x : v)
    l.push_back(AttrValue::ofInt(x));
  return AttrValue::ofList(std::move(l));
}

std::optional<Refusal> structuralRefusal(const Node &n) {
  if (!n.subgraphs.empty())
    return Refusal{"subgraph", "it holds a subgraph"};
  for (const auto &[key, value] : n.attrs) {
    size_t dot = key.find('.');
    if (dot == std::string::npos)
      continue;
    std::string field = key.substr(dot + 1);
    if (key.rfind("out", 0) == 0 && (field == "dtype" || field == "shape"))
      continue;
    return Refusal{"port-attr", "its port attribute " + key + " binds memory"};
  }
  return std::nullopt;
}

std::optional<Refusal> conversionRefusal(const Graph &g, const Node &n, const TensorType *xType) {
  (void)g;
  if (auto r = structuralRefusal(n))
    return r;
  if (!xType)
    return Refusal{"unknown-type", "the type of its data input is unknown"};
  if (xType->rank() < 3)
    return Refusal{"rank",
                   fmt::format("its data has rank {} (a layout needs rank >= 3)", xType->rank())};
  if ((n.type == "DepthToSpace" || n.type == "SpaceToDepth") && xType->rank() != 4)
    return Refusal{"rank", "DepthToSpace/SpaceToDepth need rank 4"};
  for (uint32_t k = 1; k < n.numOutputs; ++k)
    if (!n.consumers[k].empty())
      return Refusal{n.type == "MaxPool" ? "pool-indices" : "extra-outputs",
                     fmt::format("its output {} is used", k)};
  return std::nullopt;
}

namespace {

const std::set<std::string> &elementwiseOps() {
  static const std::set<std::string> kOps = {
      // unary
      "Abs", "Neg", "Sign", "Exp", "Log", "Sqrt", "Reciprocal", "Tanh", "Erf", "Floor", "Ceil",
      "Round", "Clip", "Relu", "LeakyRelu", "Elu", "Selu", "Celu", "Sigmoid", "HardSigmoid",
      "HardSwish", "Softplus", "Softsign", "Not", "IsNaN", "IsInf", "Cast", "Identity",
      // binary and variadic, broadcasting
      "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "PRelu", "Equal",
      "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Where"};
  return kOps;
}

bool isReduce(const std::string &t) {
  return t.rfind("Reduce", 0) == 0;
}

/// Reductions whose value does not depend on the order of the terms
/// (tensor-semantics.md §3 fixes the order for the accumulating ones).
bool isOrderFree(const std::string &t) {
  return t == "ReduceMax" || t == "ReduceMin" || t == "ArgMax" || t == "ArgMin";
}

std::optional<size_t> rankOfInput(const Graph &, GraphId gid, const Node &n, size_t k,
                                  const ModuleTypes &types) {
  if (k >= n.inputs.size() || !n.inputs[k])
    return std::nullopt;
  const TensorType *t = types.of(gid, *n.inputs[k]);
  if (!t)
    return std::nullopt;
  return t->shape.size();
}

/// Normalizes `a` against rank `r`; nullopt when out of range.
std::optional<int64_t> normalizeAxis(int64_t a, size_t r) {
  int64_t rank = static_cast<int64_t>(r);
  if (a < -rank || a >= rank)
    return std::nullopt;
  return a < 0 ? a + rank : a;
}

std::vector<int64_t> tensorInts(const Tensor &t) {
  std::vector<int64_t> v(static_cast<size_t>(t.size()));
  for (int64_t i = 0; i < t.size(); ++i)
    v[static_cast<size_t>(i)] = t.getInt(i);
  return v;
}

Tensor intTensor(DType dtype, const std::vector<int64_t> &v) {
  Tensor t(TensorType{dtype, {static_cast<int64_t>(v.size())}});
  for (size_t i = 0; i < v.size(); ++i)
    t.setInt(static_cast<int64_t>(i), v[i]);
  return t;
}

/// The stored perm of a reduction's output: with keepdims the input's perm
/// q; without, the kept stored axes renumbered among the kept original axes.
Perm reducedPerm(const Perm &q, const std::vector<bool> &reducedOrig, bool keepdims) {
  if (keepdims)
    return q;
  std::vector<int64_t> position(q.size(), -1); // original axis -> output axis
  int64_t next = 0;
  for (size_t a = 0; a < q.size(); ++a)
    if (!reducedOrig[a])
      position[a] = next++;
  Perm out;
  for (size_t i = 0; i < q.size(); ++i)
    if (!reducedOrig[static_cast<size_t>(q[i])])
      out.push_back(position[static_cast<size_t>(q[i])]);
  return out;
}

Refusal refuse(std::string tag, std::string why) {
  return Refusal{std::move(tag), std::move(why)};
}

} // namespace

std::optional<Propagation> planPropagation(const Graph &g, GraphId gid, const Node &n,
                                           const ModuleTypes &types,
                                           const std::vector<Perm> &permOf,
                                           std::optional<Refusal> &refusal) {
  refusal.reset();
  auto permuted = [&](size_t k) { return k < permOf.size() && !isIdentity(permOf[k]); };
  bool any = false;
  for (size_t k = 0; k < n.inputs.size(); ++k)
    any = any || permuted(k);
  if (!any)
    return std::nullopt;
  auto fail = [&](std::string tag, std::string why) -> std::optional<Propagation> {
    refusal = refuse(std::move(tag), std::move(why));
    return std::nullopt;
  };
  if (n.type == "NetOutput")
    return fail("boundary", "a graph output keeps its original layout");
  if (auto r = structuralRefusal(n)) {
    refusal = r;
    return std::nullopt;
  }
  const TensorType *outType = n.numOutputs > 0 ? types.of(gid, n.id, 0) : nullptr;
  if (!outType)
    return fail("unknown-type", "the type of its output is unknown");
  const size_t r = outType->shape.size();
  Propagation p;
  p.inputs.resize(n.inputs.size());

  if (elementwiseOps().count(n.type)) {
    if (n.numOutputs != 1)
      return fail("extra-outputs", "it has more than one output");
    for (size_t k = 0; k < n.inputs.size() && p.q.empty(); ++k)
      if (permuted(k) && rankOfInput(g, gid, n, k, types) == r && !constValue(g, *n.inputs[k]))
        p.q = permOf[k];
    if (p.q.empty())
      return fail("broadcast-operand", "its permuted operand is not of the output's rank");
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (!n.inputs[k])
        continue;
      const TensorType *t = types.of(gid, *n.inputs[k]);
      if (!t)
        return fail("unknown-type", fmt::format("the type of input {} is unknown", k));
      if (t->shape.size() == r) {
        p.inputs[k] = InputPlan{InputPlan::Demand, p.q, r, {}, {}};
        continue;
      }
      bool allOnes =
          std::all_of(t->shape.begin(), t->shape.end(), [](int64_t d) { return d == 1; });
      if (allOnes)
        continue; // a scalar-like operand broadcasts the same in any layout
      // A constant is permuted at compile time; a value is reshaped to the
      // output's rank and transposed (a Reshape reads 0 as "copy": refused).
      if (!constValue(g, *n.inputs[k]) &&
          std::any_of(t->shape.begin(), t->shape.end(), [](int64_t d) { return d == 0; }))
        return fail(
            "broadcast-operand",
            fmt::format("input {} ({}) broadcasts from a lower rank and is empty", k, t->str()));
      p.inputs[k] = InputPlan{InputPlan::Broadcast, p.q, r, {}, {}};
    }
    p.outPerms = {p.q};
    p.what = "element-wise";
    return p;
  }

  if (n.type == "Concat") {
    for (size_t k = 0; k < n.inputs.size() && p.q.empty(); ++k)
      if (permuted(k) && !constValue(g, *n.inputs[k]))
        p.q = permOf[k];
    if (p.q.empty())
      return fail("concat-operand", "only constants are permuted");
    auto axis = normalizeAxis(n.intAttr("axis").value_or(0), r);
    if (!axis)
      return fail("bad-axis", "its axis is out of range");
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (n.inputs[k])
        p.inputs[k] = InputPlan{InputPlan::Demand, p.q, r, {}, {}};
    int64_t newAxis = inversePerm(p.q)[static_cast<size_t>(*axis)];
    p.attrs.push_back({"axis", AttrValue::ofInt(newAxis)});
    p.outPerms = {p.q};
    p.what = fmt::format("axis {} -> {}", *axis, newAxis);
    return p;
  }

  // The remaining ops permute through their input 0 only.
  if (!permuted(0))
    return fail("operand", "only a secondary operand is permuted");
  p.q = permOf[0];
  const size_t inRank = p.q.size();
  const Perm qinv = inversePerm(p.q);
  p.inputs[0] = InputPlan{InputPlan::Demand, p.q, inRank, {}, {}};
  auto remap = [&](int64_t a) { return qinv[static_cast<size_t>(a)]; };

  if (n.type == "Softmax" || n.type == "LogSoftmax" || n.type == "Hardmax" || n.type == "Split") {
    bool softmax = n.type != "Split";
    if (softmax && n.intAttr("onnx_opset").value_or(13) < 13)
      return fail("softmax-opset", "before opset 13 it works on a 2-D coercion of its input");
    auto axis = normalizeAxis(n.intAttr("axis").value_or(softmax ? -1 : 0), inRank);
    if (!axis)
      return fail("bad-axis", "its axis is out of range");
    int64_t newAxis = remap(*axis);
    p.attrs.push_back({"axis", AttrValue::ofInt(newAxis)});
    p.outPerms.assign(n.numOutputs, p.q);
    p.what = fmt::format("axis {} -> {}", *axis, newAxis);
    return p;
  }

  // The driver absorbs every plain Transpose; one reaching here is pinned.
  if (n.type == "Transpose")
    return fail("transpose-pinned", "it carries control edges");

  if (isReduce(n.type) || n.type == "ArgMax" || n.type == "ArgMin") {
    if (n.numOutputs != 1)
      return fail("extra-outputs", "it has more than one output");
    bool arg = n.type == "ArgMax" || n.type == "ArgMin";
    std::vector<int64_t> axes;
    bool fromInput = false;
    if (arg) {
      axes.push_back(n.intAttr("axis").value_or(0));
    } else if (n.inputs.size() > 1 && n.inputs[1]) {
      const Tensor *t = constValue(g, *n.inputs[1]);
      if (!t)
        return fail("reduce-axes", "its axes input is not a constant");
      axes = tensorInts(*t);
      fromInput = true;
    } else if (auto a = attrInts(n, "axes")) {
      axes = *a;
    }
    if (axes.empty()) {
      if (n.intAttr("noop_with_empty_axes").value_or(0) != 0) {
        p.outPerms = {p.q};
        p.what = "no-op reduction";
        return p;
      }
      if (!isOrderFree(n.type))
        return fail("reduce-order", "it reduces every axis and the order of the terms changes");
    }
    std::vector<bool> reducedOrig(inRank, axes.empty());
    for (int64_t a : axes) {
      auto na = normalizeAxis(a, inRank);
      if (!na)
        return fail("bad-axis", fmt::format("axis {} is out of range", a));
      reducedOrig[static_cast<size_t>(*na)] = true;
    }
    std::vector<int64_t> newAxes; // stored axes reduced, increasing
    int64_t lastOrig = -1;
    bool ordered = true;
    for (size_t i = 0; i < inRank; ++i) {
      if (!reducedOrig[static_cast<size_t>(p.q[i])])
        continue;
      newAxes.push_back(static_cast<int64_t>(i));
      ordered = ordered && p.q[i] > lastOrig;
      lastOrig = p.q[i];
    }
    if (!ordered && !isOrderFree(n.type))
      return fail("reduce-order", "the permuted layout visits the reduced axes in another order "
                                  "(the canonical accumulation order would change)");
    bool keepdims = n.intAttr("keepdims").value_or(1) != 0;
    if (!axes.empty()) {
      if (arg) {
        p.attrs.push_back({"axis", AttrValue::ofInt(newAxes[0])});
      } else if (fromInput) {
        const Tensor *t = constValue(g, *n.inputs[1]);
        p.inputs[1] = InputPlan{InputPlan::Replace, {}, 0, intTensor(t->dtype(), newAxes), "axes"};
      } else {
        p.attrs.push_back({"axes", intListAttr(newAxes)});
      }
    }
    p.outPerms = {reducedPerm(p.q, reducedOrig, keepdims)};
    p.what = fmt::format("axes {} -> {}{}", permText(axes), permText(newAxes),
                         keepdims ? "" : ", keepdims = 0");
    return p;
  }

  if (n.type == "Squeeze" || n.type == "Unsqueeze") {
    // Axes: input 1 (opset 13) or attribute `axes`; Squeeze without them
    // drops every size-1 axis, the same set in any layout.
    std::vector<int64_t> axes;
    bool present = true, fromInput = false;
    DType dtype = DType::I64;
    if (n.inputs.size() > 1 && n.inputs[1]) {
      const Tensor *t = constValue(g, *n.inputs[1]);
      if (!t)
        return fail("squeeze-axes", "its axes input is not a constant");
      axes = tensorInts(*t);
      dtype = t->dtype();
      fromInput = true;
    } else if (auto a = attrInts(n, "axes")) {
      axes = *a;
    } else {
      present = false;
    }
    if (n.type == "Squeeze") {
      const TensorType *in = types.of(gid, *n.inputs[0]);
      if (!in)
        return fail("unknown-type", "the type of its input is unknown");
      std::vector<bool> drop(inRank, false);
      for (size_t a = 0; a < inRank && !present; ++a)
        drop[a] = in->shape[a] == 1;
      for (int64_t a : axes) {
        auto na = normalizeAxis(a, inRank);
        if (!na)
          return fail("bad-axis", fmt::format("axis {} is out of range", a));
        drop[static_cast<size_t>(*na)] = true;
      }
      std::vector<int64_t> newAxes; // the stored positions of the dropped axes
      for (size_t i = 0; i < inRank; ++i)
        if (drop[static_cast<size_t>(p.q[i])])
          newAxes.push_back(static_cast<int64_t>(i));
      if (present && fromInput)
        p.inputs[1] = InputPlan{InputPlan::Replace, {}, 0, intTensor(dtype, newAxes), "axes"};
      else if (present)
        p.attrs.push_back({"axes", intListAttr(newAxes)});
      p.outPerms = {reducedPerm(p.q, drop, false)};
      p.what = fmt::format("axes {} -> {}", permText(axes), permText(newAxes));
      return p;
    }
    if (!present)
      return fail("squeeze-axes", "Unsqueeze without axes");
    // Unsqueeze: the inserted axes keep their output positions; the other
    // positions hold the input's axes as stored.
    const size_t outRank = inRank + axes.size();
    std::vector<bool> inserted(outRank, false);
    for (int64_t a : axes) {
      auto na = normalizeAxis(a, outRank);
      if (!na)
        return fail("bad-axis", fmt::format("axis {} is out of range", a));
      inserted[static_cast<size_t>(*na)] = true;
    }
    std::vector<int64_t> kept; // output positions of the input's axes
    for (size_t j = 0; j < outRank; ++j)
      if (!inserted[j])
        kept.push_back(static_cast<int64_t>(j));
    if (kept.size() != inRank)
      return fail("bad-axis", "its axes repeat");
    std::vector<int64_t> storedOrder; // original output axes the stored input's axes become
    for (size_t t = 0; t < inRank; ++t)
      storedOrder.push_back(kept[static_cast<size_t>(p.q[t])]);
    // Prefer a channel-moving perm of the output's rank (so a Squeeze /
    // Unsqueeze round trip lands back in the layout of the ops around it):
    // possible when the stored axes appear in it in their stored order; the
    // new axes go where that perm puts the inserted ones.
    for (bool toNhwc : {true, false}) {
      Perm c = layoutPerm(outRank, toNhwc);
      std::vector<int64_t> order, newAxes;
      for (size_t j = 0; j < outRank; ++j) {
        if (inserted[static_cast<size_t>(c[j])])
          newAxes.push_back(static_cast<int64_t>(j));
        else
          order.push_back(c[j]);
      }
      if (order != storedOrder)
        continue;
      if (fromInput)
        p.inputs[1] = InputPlan{InputPlan::Replace, {}, 0, intTensor(dtype, newAxes), "axes"};
      else
        p.attrs.push_back({"axes", intListAttr(newAxes)});
      p.outPerms = {c};
      p.what = fmt::format("axes {} -> {}", permText(axes), permText(newAxes));
      return p;
    }
    Perm out = identityPerm(outRank); // the inserted axes keep their positions
    for (size_t t = 0; t < inRank; ++t)
      out[static_cast<size_t>(kept[t])] = storedOrder[t];
    p.outPerms = {out};
    p.what = fmt::format("axes {} kept", permText(axes));
    return p;
  }

  if (n.type == "Slice") {
    if (n.attr("starts") || n.inputs.size() < 3)
      return fail("slice-attr", "its opset-1 form keeps starts and axes in attributes");
    std::vector<int64_t> axes;
    DType dtype = DType::I64;
    if (n.inputs.size() > 3 && n.inputs[3]) {
      const Tensor *t = constValue(g, *n.inputs[3]);
      if (!t)
        return fail("slice-axes", "its axes input is not a constant");
      axes = tensorInts(*t);
      dtype = t->dtype();
    } else {
      const TensorType *st = n.inputs[1] ? types.of(gid, *n.inputs[1]) : nullptr;
      if (!st || st->shape.size() != 1)
        return fail("slice-axes", "the length of its starts is unknown");
      for (int64_t i = 0; i < st->shape[0]; ++i)
        axes.push_back(i);
    }
    std::vector<int64_t> newAxes;
    for (int64_t a : axes) {
      auto na = normalizeAxis(a, inRank);
      if (!na)
        return fail("bad-axis", fmt::format("axis {} is out of range", a));
      newAxes.push_back(remap(*na));
    }
    InputPlan axesPlan{InputPlan::Replace, {}, 0, intTensor(dtype, newAxes), "axes"};
    if (n.inputs.size() > 3)
      p.inputs[3] = std::move(axesPlan);
    else
      p.appended.push_back(std::move(axesPlan));
    p.outPerms = {p.q};
    p.what = fmt::format("axes {} -> {}", permText(axes), permText(newAxes));
    return p;
  }

  if (n.type == "Pad") {
    if (n.inputs.size() > 3 && n.inputs[3]) { // opset 18: remap the axes
      const Tensor *t = constValue(g, *n.inputs[3]);
      if (!t)
        return fail("pad-operand", "its axes input is not a constant");
      std::vector<int64_t> axes = tensorInts(*t), newAxes;
      for (int64_t a : axes) {
        auto na = normalizeAxis(a, inRank);
        if (!na)
          return fail("bad-axis", fmt::format("axis {} is out of range", a));
        newAxes.push_back(remap(*na));
      }
      p.inputs[3] = InputPlan{InputPlan::Replace, {}, 0, intTensor(t->dtype(), newAxes), "axes"};
      p.what = fmt::format("axes {} -> {}", permText(axes), permText(newAxes));
    } else {
      std::vector<int64_t> pads;
      const Tensor *t = nullptr;
      if (n.inputs.size() > 1) {
        t = n.inputs[1] ? constValue(g, *n.inputs[1]) : nullptr;
        if (!t)
          return fail("pad-operand", "its pads input is not a constant");
        pads = tensorInts(*t);
      } else if (auto a = attrInts(n, "pads")) {
        pads = *a;
      }
      if (pads.size() != 2 * inRank)
        return fail("pad-operand", "its pads do not cover every axis");
      std::vector<int64_t> newPads(pads.size());
      for (size_t i = 0; i < inRank; ++i) {
        newPads[i] = pads[static_cast<size_t>(p.q[i])];
        newPads[inRank + i] = pads[inRank + static_cast<size_t>(p.q[i])];
      }
      if (t)
        p.inputs[1] = InputPlan{InputPlan::Replace, {}, 0, intTensor(t->dtype(), newPads), "pads"};
      else
        p.attrs.push_back({"pads", intListAttr(newPads)});
      p.what = fmt::format("pads {} -> {}", permText(pads), permText(newPads));
    }
    p.outPerms = {p.q};
    return p;
  }

  return fail("unsupported-op", n.type + " has no layout rule");
}

} // namespace graphvet::convert_layout
