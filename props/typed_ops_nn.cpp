// Catalogue entries of the nn family, kept small: Conv (1-D and 2-D, groups,
// strides, dilations, pads or auto_pad, bias, NCHW or NHWC), MaxPool (with
// Indices, ceil_mode, storage_order), AveragePool (count_include_pad),
// GlobalAveragePool, GlobalMaxPool, BatchNormalization (inference and
// training mode), InstanceNormalization and LayerNormalization. A value of
// the pool is used when it fits; otherwise the input is a new source of a
// solved shape.
#include "props/typed_attrs.h"
#include "props/typed_builder.h"
#include "props/typed_shape.h"

namespace graphvet::props::typed {
namespace {

constexpr DTypeSet kMaxPoolDTypes = kFloat3DTypes | dtypeBit(DType::I8) | dtypeBit(DType::U8);

/// The data input of a windowed op: an earlier value of rank 3 or 4 with
/// every dimension >= 1 (and small), else a new [N, C, spatial...] source.
Value windowInput(Builder &b, DTypeSet set, bool nhwc, bool allowEmpty) {
  uint8_t back = b.nextRef();
  std::optional<Value> x;
  if (b.ch.below(3) != 0)
    x = b.find(back, [&](const Value &v) {
      if (!inSet(set, v.dtype()) || v.rank() < 3 || v.rank() > 4 ||
          elementsOf(v.type.shape) > kMaxSourceElements)
        return false;
      for (int64_t d : v.type.shape)
        if (d < 1 && !allowEmpty)
          return false;
      return true;
    });
  if (x)
    return *x;
  Shape l{1 + b.ch.below(2), 1 + b.ch.below(3)};
  for (unsigned i = 1 + b.ch.below(2); i > 0; --i)
    l.push_back(1 + b.ch.below(5));
  while (elementsOf(l) > kMaxSourceElements)
    --l.back();
  return b.source({pickDType(set, b.ch.next()), toPhysical(l, nhwc)});
}

void setLayout(Builder &b, AttrMap &attrs, bool nhwc) {
  if (nhwc)
    attrs["layout"] = AttrValue::ofString("NHWC");
  else if (b.ch.chance(10))
    attrs["layout"] = AttrValue::ofString("NCHW");
}

Shape spatialOf(const Shape &logical) {
  return Shape(logical.begin() + 2, logical.end());
}

void buildConv(Builder &b, const std::string &op) {
  const bool nhwc = b.ch.chance(20);
  Value x = windowInput(b, kFloat3DTypes, nhwc, false);
  const int64_t channelAxis = nhwc ? x.rank() - 1 : 1;
  if (b.ch.chance(15)) { // a scale before the Conv, sometimes through a Relu
    x = perChannelAffine(b, x, channelAxis);
    if (b.ch.chance(50))
      x = b.emit1("Relu", {x}, {}, x.type);
  }
  const Shape xs = toLogical(x.type.shape, nhwc);
  const int64_t c = xs[1];
  std::vector<int64_t> divisors;
  for (int64_t g = 1; g <= c; ++g)
    if (c % g == 0)
      divisors.push_back(g);
  const int64_t group = divisors[b.ch.below(static_cast<unsigned>(divisors.size()))];
  const int64_t m = group * (1 + b.ch.below(2));
  WindowSolution w = solveWindow(spatialOf(xs), {}, b.ch);
  Shape ws{m, c / group};
  ws.insert(ws.end(), w.kernel.begin(), w.kernel.end());
  Inputs ins{x, b.source({x.dtype(), toPhysical(ws, nhwc)})};
  if (b.ch.chance(50))
    ins.push_back(b.source({x.dtype(), {m}}));
  AttrMap attrs;
  if (group != 1 || b.ch.chance(10))
    attrs["group"] = AttrValue::ofInt(group);
  setWindowAttrs(attrs, w, b.ch.chance(60), b.ch);
  setLayout(b, attrs, nhwc);
  Shape out{xs[0], m};
  out.insert(out.end(), w.out.begin(), w.out.end());
  Value y = b.emit1(op, ins, std::move(attrs), {x.dtype(), toPhysical(out, nhwc)});
  if (b.ch.chance(20)) // a scale after it (a BatchNormalization simplified)
    perChannelAffine(b, y, channelAxis);
}

/// MaxPool and AveragePool.
void buildPool(Builder &b, const std::string &op) {
  const bool max = op == "MaxPool";
  const bool nhwc = b.ch.chance(20);
  Value x = windowInput(b, max ? kMaxPoolDTypes : kFloat3DTypes, nhwc, false);
  const Shape xs = toLogical(x.type.shape, nhwc);
  WindowSolution w = solveWindow(spatialOf(xs), {max, true, 3}, b.ch);
  AttrMap attrs;
  setWindowAttrs(attrs, w, true, b.ch);
  setLayout(b, attrs, nhwc);
  Shape out{xs[0], xs[1]};
  out.insert(out.end(), w.out.begin(), w.out.end());
  const Shape phys = toPhysical(out, nhwc);
  std::vector<TensorType> outs{{x.dtype(), phys}};
  if (max) {
    if (b.ch.chance(30))
      outs.push_back({DType::I64, phys});
    if (b.ch.chance(20))
      attrs["storage_order"] = AttrValue::ofInt(b.ch.below(2));
  } else if (b.ch.chance(40)) {
    attrs["count_include_pad"] = AttrValue::ofInt(b.ch.below(2));
  }
  b.emit(op, {x}, std::move(attrs), outs);
}

void buildGlobalPool(Builder &b, const std::string &op) {
  const bool nhwc = b.ch.chance(20);
  Value x = windowInput(b, kFloat3DTypes, nhwc, true);
  Shape out = toLogical(x.type.shape, nhwc);
  std::fill(out.begin() + 2, out.end(), 1);
  AttrMap attrs;
  setLayout(b, attrs, nhwc);
  b.emit1(op, {x}, std::move(attrs), {x.dtype(), toPhysical(out, nhwc)});
}

/// BatchNormalization: scale and B of one float dtype, mean and var of
/// one (mostly X's); training_mode = 1 adds running_mean and running_var.
void buildBatchNorm(Builder &b, const std::string &op) {
  Value x = b.input(kFloatDTypes, 2);
  const bool nhwc = b.ch.chance(20);
  const int64_t c = toLogical(x.type.shape, nhwc)[1];
  const DType scaleType = b.ch.chance(20) ? pickDType(kFloatDTypes, b.ch.next()) : x.dtype();
  const DType statType = b.ch.chance(20) ? pickDType(kFloatDTypes, b.ch.next()) : x.dtype();
  Inputs ins{x};
  for (DType t : {scaleType, scaleType, statType, statType})
    ins.push_back(b.source({t, {c}}));
  AttrMap attrs;
  setLayout(b, attrs, nhwc);
  if (b.ch.chance(40))
    attrs["epsilon"] = AttrValue::ofFloat(pickFloatAttr({1e-5, 1e-3, 0.1}, b.ch));
  if (b.ch.chance(30))
    attrs["momentum"] = AttrValue::ofFloat(pickFloatAttr({0.9, 0.1}, b.ch));
  std::vector<TensorType> outs{x.type};
  if (b.ch.chance(20)) {
    attrs["training_mode"] = AttrValue::ofInt(1);
    if (b.ch.chance(60)) {
      outs.push_back({statType, {c}});
      outs.push_back({statType, {c}});
    }
  } else if (b.ch.chance(10)) {
    attrs["training_mode"] = AttrValue::ofInt(0);
  }
  b.emit(op, ins, std::move(attrs), outs);
}

void buildInstanceNorm(Builder &b, const std::string &op) {
  Value x = b.input(kFloat3DTypes, 3);
  const bool nhwc = b.ch.chance(20);
  const int64_t c = toLogical(x.type.shape, nhwc)[1];
  Inputs ins{x, b.source({x.dtype(), {c}}), b.source({x.dtype(), {c}})};
  AttrMap attrs;
  setLayout(b, attrs, nhwc);
  if (b.ch.chance(40))
    attrs["epsilon"] = AttrValue::ofFloat(pickFloatAttr({1e-5, 1e-3, 0.1}, b.ch));
  b.emit1(op, ins, std::move(attrs), x.type);
}

/// LayerNormalization over the axes from `axis` on; Scale and B of one
/// value per normalized element (several shapes) or a single value; one to
/// three outputs (Mean and InvStdDev in the stash type).
void buildLayerNorm(Builder &b, const std::string &op) {
  Value x = b.input(kFloatDTypes, 1);
  const Shape &s = x.type.shape;
  const int64_t r = x.rank();
  AttrMap attrs;
  int64_t axis = r - 1;
  if (b.ch.chance(60)) {
    int64_t spelled = pickAxis(r, b.ch);
    attrs["axis"] = AttrValue::ofInt(spelled);
    axis = normAxis(spelled, r);
  }
  const Shape tail(s.begin() + axis, s.end());
  const int64_t cols = elementsOf(tail);
  auto param = [&] {
    const Shape shapes[] = {tail, {cols}, {1}, {}};
    return b.source({x.dtype(), shapes[b.ch.below(4)]});
  };
  Inputs ins{x, param()};
  if (b.ch.chance(50))
    ins.push_back(param());
  DType stash = DType::F32;
  if (b.ch.chance(30)) {
    bool bf16 = b.ch.chance(50);
    attrs["stash_type"] = AttrValue::ofInt(bf16 ? 16 : 1);
    stash = bf16 ? DType::BF16 : DType::F32;
  }
  if (b.ch.chance(40))
    attrs["epsilon"] = AttrValue::ofFloat(pickFloatAttr({1e-5, 1e-3, 0.1}, b.ch));
  Shape reduced = s;
  std::fill(reduced.begin() + axis, reduced.end(), 1);
  std::vector<TensorType> outs{x.type, {stash, reduced}, {stash, reduced}};
  outs.resize(1 + b.ch.below(3));
  b.emit(op, ins, std::move(attrs), outs);
}

constexpr CatalogueEntry kEntries[] = {
    {"Conv", buildConv},
    {"MaxPool", buildPool},
    {"AveragePool", buildPool},
    {"GlobalAveragePool", buildGlobalPool},
    {"GlobalMaxPool", buildGlobalPool},
    {"BatchNormalization", buildBatchNorm},
    {"InstanceNormalization", buildInstanceNorm},
    {"LayerNormalization", buildLayerNorm},
};

} // namespace

Value perChannelAffine(Builder &b, const Value &v, int64_t axis) {
  Shape s(static_cast<size_t>(v.rank() - axis), 1);
  s[0] = v.type.shape[static_cast<size_t>(axis)];
  Value out = b.emit1("Mul", {v, b.constant({v.dtype(), s})}, {}, v.type);
  if (b.ch.chance(50))
    out = b.emit1("Add", {out, b.constant({v.dtype(), s})}, {}, v.type);
  return out;
}

std::span<const CatalogueEntry> nnEntries() {
  return kEntries;
}

} // namespace graphvet::props::typed
