// Motifs of the typed generator: catalogue entries whose builder emits a
// small multi-node pattern the mid-end passes act on, which single random
// ops almost never line up: Conv -> BatchNormalization -> Relu, a per-channel
// constant scale next to a Conv / Gemm / MatMul, parallel MatMuls on one
// input, a layout-sensitive op feeding axis-carrying ops feeding a Conv, the
// ops legalize rewrites, the normalizations, and random ops next to their
// deterministic twins. Like every entry, a motif
// reads its decisions from the step's choice bytes (0 is always the plainest
// form) and solves its own shapes, so every shrink still builds a valid
// graph. Shapes stay small (batch 1, 1-5 channels, spatial <= 4x4) so that a
// case stays fast; dtypes are f32 or f16.
#include "props/typed_attrs.h"
#include "props/typed_builder.h"
#include "props/typed_shape.h"

#include <algorithm>
#include <functional>

namespace graphvet::props::typed {
namespace {

constexpr int64_t kMaxChannels = 5;
constexpr int64_t kMaxSpatial = 4;

DType motifDType(Builder &b) {
  return b.ch.chance(30) ? DType::F16 : DType::F32;
}

/// A constant of `t` whose elements come from `table`, indexed by the
/// step's element picks (no picks: table[0]).
Value tableConst(Builder &b, const TensorType &t, std::span<const double> table) {
  Tensor v(t);
  for (int64_t i = 0; i < v.size(); ++i)
    v.setDouble(i, table[b.nextPick().bits % table.size()]);
  return b.literal(std::move(v));
}

/// Per-channel scales: positive, zero and negative entries (and -0).
constexpr double kScales[] = {1.0, 2.0, 0.5, 0.0, -1.0, -0.5, 3.0, -0.0, -2.0, 0.25};
/// Ordinary weights and biases.
constexpr double kWeights[] = {1.0, -1.0, 0.5, 2.0, -2.0, 0.25, 0.0, 3.0, -0.75, 1.5};
/// Variances: always > 0, sometimes tiny (1e-6 is an f16 subnormal).
constexpr double kVariances[] = {1.0, 0.25, 4.0, 1e-6, 2.0, 1e-3};
constexpr double kMeans[] = {0.0, 1.0, -1.0, 0.5, -2.0};
/// BatchNormalization scales: kScales and two tiny ones, which fold (divided by
/// sqrt(var + eps)) into an f16 subnormal: simplify-inference must refuse them.
constexpr double kBatchNormScales[] = {1.0, 2.0,  0.5,  0.0,  -1.0, -0.5,
                                       3.0, -0.0, -2.0, 0.25, 1e-6, -3e-7};

/// Weights: mostly ordinary values, sometimes the step's element picks
/// (specials of tensor-semantics.md §7 included).
Value weights(Builder &b, const TensorType &t) {
  return b.ch.chance(15) ? b.constant(t) : tableConst(b, t, kWeights);
}

/// A small image in `nhwc` or NCHW: an earlier value of rank 4, batch 1,
/// dtype `dt` and small dimensions, else a new graph input.
Value imageInput(Builder &b, DType dt, bool nhwc) {
  const uint8_t back = b.nextRef();
  if (b.ch.below(3) != 0)
    if (auto v = b.find(back, [&](const Value &x) {
          if (x.dtype() != dt || x.rank() != 4)
            return false;
          const Shape l = toLogical(x.type.shape, nhwc);
          return l[0] == 1 && l[1] >= 1 && l[1] <= 2 * kMaxChannels && l[2] >= 1 &&
                 l[2] <= kMaxSpatial && l[3] >= 1 && l[3] <= kMaxSpatial;
        }))
      return *v;
  const int64_t c = 1 + b.ch.below(kMaxChannels);
  const int64_t h = 1 + b.ch.below(kMaxSpatial), w = 1 + b.ch.below(kMaxSpatial);
  return b.data({dt, toPhysical({1, c, h, w}, nhwc)});
}

/// A small matrix [M, K]: an earlier rank-2 value of dtype `dt`, else a new
/// graph input.
Value matrixInput(Builder &b, DType dt) {
  const uint8_t back = b.nextRef();
  if (b.ch.below(3) != 0)
    if (auto v = b.find(back, [&](const Value &x) {
          return x.dtype() == dt && x.rank() == 2 && x.type.shape[0] >= 1 && x.type.shape[0] <= 4 &&
                 x.type.shape[1] >= 1 && x.type.shape[1] <= 8;
        }))
      return *v;
  return b.data({dt, {1 + b.ch.below(3), 1 + b.ch.below(kMaxChannels)}});
}

struct ConvSpec {
  int64_t m = 1, group = 1, kh = 1, kw = 1, ph = 0, pw = 0;
  bool bias = false;
};

/// A Conv of `x` (stride 1, no dilation) as `s` says.
Value emitConv(Builder &b, const Value &x, bool nhwc, const ConvSpec &s) {
  const Shape xs = toLogical(x.type.shape, nhwc);
  Inputs ins{x, weights(b, {x.dtype(), toPhysical({s.m, xs[1] / s.group, s.kh, s.kw}, nhwc)})};
  if (s.bias)
    ins.push_back(tableConst(b, {x.dtype(), {s.m}}, kWeights));
  AttrMap attrs;
  if (b.ch.chance(50))
    attrs["kernel_shape"] = intList({s.kh, s.kw});
  if (s.ph != 0 || s.pw != 0)
    attrs["pads"] = intList({s.ph, s.pw, s.ph, s.pw});
  if (s.group != 1)
    attrs["group"] = AttrValue::ofInt(s.group);
  if (nhwc)
    attrs["layout"] = AttrValue::ofString("NHWC");
  const Shape out{1, s.m, xs[2] + 2 * s.ph - s.kh + 1, xs[3] + 2 * s.pw - s.kw + 1};
  return b.emit1("Conv", ins, std::move(attrs), {x.dtype(), toPhysical(out, nhwc)});
}

/// A Conv spec for `x`: group 1 or depthwise, a kernel within the input.
ConvSpec pickConv(Builder &b, const Shape &logical) {
  ConvSpec s;
  const int64_t c = logical[1];
  if (b.ch.chance(30)) { // depthwise, channel multiplier 1 or 2
    s.group = c;
    s.m = c * (1 + b.ch.below(2));
  } else {
    s.m = 1 + b.ch.below(kMaxChannels);
  }
  s.kh = 1 + b.ch.below(static_cast<unsigned>(std::min<int64_t>(3, logical[2])));
  s.kw = 1 + b.ch.below(static_cast<unsigned>(std::min<int64_t>(3, logical[3])));
  if (b.ch.chance(30)) {
    s.ph = s.kh / 2;
    s.pw = s.kw / 2;
  }
  s.bias = b.ch.chance(50);
  return s;
}

/// BatchNormalization in inference mode with constant parameters.
Value emitBatchNorm(Builder &b, const Value &x, bool nhwc) {
  const int64_t c = toLogical(x.type.shape, nhwc)[1];
  const TensorType p{x.dtype(), {c}};
  Inputs ins{x, tableConst(b, p, kBatchNormScales), tableConst(b, p, kWeights),
             tableConst(b, p, kMeans), tableConst(b, p, kVariances)};
  AttrMap attrs;
  if (nhwc)
    attrs["layout"] = AttrValue::ofString("NHWC");
  if (b.ch.chance(40))
    attrs["epsilon"] = AttrValue::ofFloat(b.ch.chance(50) ? 1e-3 : 1e-5);
  return b.emit1("BatchNormalization", ins, std::move(attrs), x.type);
}

// ---- 1. conv-bn-relu ----------------------------------------------------------

void buildConvBnRelu(Builder &b, const std::string &) {
  const DType dt = motifDType(b);
  const bool nhwc = b.ch.chance(25);
  Value x = imageInput(b, dt, nhwc);
  Value y = emitConv(b, x, nhwc, pickConv(b, toLogical(x.type.shape, nhwc)));
  y = emitBatchNorm(b, y, nhwc);
  if (!b.ch.chance(25))
    b.emit1("Relu", {y}, {}, y.type);
}

// ---- 2. channel-scale ---------------------------------------------------------

/// A per-channel constant for `c` channels of a rank-`rank` value in the
/// given layout: [C, 1, 1] or [1, C, 1, 1] (NCHW), [C] or [1, 1, 1, C]
/// (NHWC); [K] or [1, K] for a matrix.
Shape channelShape(Builder &b, int64_t c, int64_t rank, bool nhwc) {
  const bool full = b.ch.chance(40);
  if (rank == 2)
    return full ? Shape{1, c} : Shape{c};
  if (nhwc)
    return full ? Shape{1, 1, 1, c} : Shape{c};
  return full ? Shape{1, c, 1, 1} : Shape{c, 1, 1};
}

/// Mul(v, s) with s per-channel (scale table), then optionally Add(bias).
Value scaleAndShift(Builder &b, const Value &v, int64_t c, bool nhwc) {
  const Shape s = channelShape(b, c, v.rank(), nhwc);
  Value scale = tableConst(b, {v.dtype(), s}, kScales);
  Value y = b.ch.chance(20) ? b.emit1("Mul", {scale, v}, {}, v.type)
                            : b.emit1("Mul", {v, scale}, {}, v.type);
  if (b.ch.chance(50))
    y = b.emit1("Add", {y, tableConst(b, {v.dtype(), s}, kWeights)}, {}, v.type);
  return y;
}

/// A dense layer of the matrix `a` [M, K]: MatMul or Gemm (transB 0/1,
/// sometimes with a bias C) with N outputs.
Value emitDense(Builder &b, const Value &a, int64_t n, bool gemm) {
  const int64_t m = a.type.shape[0], k = a.type.shape[1];
  if (!gemm)
    return b.emit1("MatMul", {a, weights(b, {a.dtype(), {k, n}})}, {}, {a.dtype(), {m, n}});
  const bool transB = b.ch.chance(40);
  Inputs ins{a, weights(b, {a.dtype(), transB ? Shape{n, k} : Shape{k, n}})};
  if (b.ch.chance(40))
    ins.push_back(tableConst(b, {a.dtype(), {n}}, kWeights));
  AttrMap attrs;
  if (transB)
    attrs["transB"] = AttrValue::ofInt(1);
  return b.emit1("Gemm", ins, std::move(attrs), {a.dtype(), {m, n}});
}

void buildChannelScale(Builder &b, const std::string &) {
  const DType dt = motifDType(b);
  const unsigned form = b.ch.below(4); // forward / backward, image / matrix
  const bool backward = form >= 2, image = form % 2 == 0;
  if (image) {
    const bool nhwc = b.ch.chance(25);
    Value x = imageInput(b, dt, nhwc);
    if (backward) { // Conv -> Mul(y, s along M) -> Add(b)
      Value y = emitConv(b, x, nhwc, pickConv(b, toLogical(x.type.shape, nhwc)));
      scaleAndShift(b, y, toLogical(y.type.shape, nhwc)[1], nhwc);
      return;
    }
    const Shape xs = toLogical(x.type.shape, nhwc);
    Value y = scaleAndShift(b, x, xs[1], nhwc);
    switch (b.ch.below(4)) {
    case 1:
      y = b.emit1("Relu", {y}, {}, y.type);
      break;
    case 2: {
      AttrMap attrs;
      attrs["alpha"] = AttrValue::ofFloat(b.ch.chance(50) ? 0.1 : 0.01);
      y = b.emit1("LeakyRelu", {y}, std::move(attrs), y.type);
      break;
    }
    case 3: { // a 2x2 (or smaller) window, stride 1
      const int64_t kh = std::min<int64_t>(2, xs[2]), kw = std::min<int64_t>(2, xs[3]);
      AttrMap attrs;
      attrs["kernel_shape"] = intList({kh, kw});
      if (nhwc)
        attrs["layout"] = AttrValue::ofString("NHWC");
      const Shape out{1, xs[1], xs[2] - kh + 1, xs[3] - kw + 1};
      y = b.emit1("MaxPool", {y}, std::move(attrs), {dt, toPhysical(out, nhwc)});
      break;
    }
    default:
      break;
    }
    emitConv(b, y, nhwc, pickConv(b, toLogical(y.type.shape, nhwc)));
    return;
  }
  Value a = matrixInput(b, dt);
  const int64_t n = 1 + b.ch.below(4);
  const bool gemm = b.ch.chance(50);
  if (backward) { // dense -> Mul(y, s along N) -> Add(b)
    Value y = emitDense(b, a, n, gemm);
    scaleAndShift(b, y, n, false);
    return;
  }
  Value y = scaleAndShift(b, a, a.type.shape[1], false); // scale along K
  if (b.ch.chance(40))
    y = b.emit1("Relu", {y}, {}, y.type);
  emitDense(b, y, n, gemm);
}

// ---- 3. parallel-dense --------------------------------------------------------

void buildParallelDense(Builder &b, const std::string &) {
  const DType dt = motifDType(b);
  Value a = matrixInput(b, dt);
  const unsigned branches = 2 + b.ch.below(3);
  const unsigned shared = b.ch.chance(30) ? b.ch.below(branches) : branches;
  for (unsigned i = 0; i < branches; ++i) {
    const int64_t n = 1 + b.ch.below(4);
    Value y = emitDense(b, a, n, b.ch.chance(40));
    if (i == shared)
      b.keepAsOutput(y); // the intermediate has a second consumer
    if (b.ch.chance(50))
      y = b.emit1("Add", {y, tableConst(b, {dt, {n}}, kWeights)}, {}, y.type);
    if (b.ch.chance(50) || i == shared)
      b.emit1("Relu", {y}, {}, y.type);
  }
}

// ---- 4. layout-chain ----------------------------------------------------------

/// The layout-sensitive head of a chain (NCHW): Conv, MaxPool, AveragePool,
/// GlobalAveragePool, BatchNormalization or Resize.
Value layoutHead(Builder &b, const Value &x) {
  const Shape xs = x.type.shape;
  switch (b.ch.below(6)) {
  case 1:
  case 2: {
    const int64_t kh = 1 + b.ch.below(static_cast<unsigned>(std::min<int64_t>(2, xs[2])));
    const int64_t kw = 1 + b.ch.below(static_cast<unsigned>(std::min<int64_t>(2, xs[3])));
    AttrMap attrs;
    attrs["kernel_shape"] = intList({kh, kw});
    const bool max = b.ch.chance(50);
    return b.emit1(max ? "MaxPool" : "AveragePool", {x}, std::move(attrs),
                   {x.dtype(), {1, xs[1], xs[2] - kh + 1, xs[3] - kw + 1}});
  }
  case 3:
    return b.emit1("GlobalAveragePool", {x}, {}, {x.dtype(), {1, xs[1], 1, 1}});
  case 4:
    return emitBatchNorm(b, x, false);
  case 5: { // Resize-10 nearest: scales 1 or 2 per spatial axis
    const int64_t sh = xs[2] <= 2 ? 2 : 1, sw = xs[3] <= 2 ? 2 : 1;
    Tensor scales(TensorType{DType::F32, {4}});
    const double sc[] = {1.0, 1.0, static_cast<double>(sh), static_cast<double>(sw)};
    for (int64_t i = 0; i < 4; ++i)
      scales.setDouble(i, sc[i]);
    return b.emit1("Resize", {x, b.literal(std::move(scales))}, {},
                   {x.dtype(), {1, xs[1], xs[2] * sh, xs[3] * sw}});
  }
  default:
    return emitConv(b, x, false, pickConv(b, xs));
  }
}

/// One layout-agnostic op with an axis on the rank-4 NCHW value `v`; the
/// result is rank 4 again (a keepdims = 0 reduction is reshaped back).
Value agnosticStep(Builder &b, const Value &v) {
  const Shape s = v.type.shape;
  const DType dt = v.dtype();
  switch (b.ch.below(8)) {
  case 1: { // ReduceMean / ReduceSum over one or two axes
    std::vector<int64_t> axes{1 + b.ch.below(3)};
    if (b.ch.chance(30) && axes[0] != 3)
      axes.push_back(3);
    const bool keep = !b.ch.chance(30);
    Shape kept = s;
    for (int64_t a : axes)
      kept[static_cast<size_t>(a)] = 1;
    std::vector<int64_t> spelled;
    for (int64_t a : axes)
      spelled.push_back(spellAxis(a, 4, b.ch));
    AttrMap attrs;
    attrs["axes"] = intList(spelled);
    if (!keep || b.ch.chance(20))
      attrs["keepdims"] = AttrValue::ofInt(keep ? 1 : 0);
    Shape out;
    for (size_t i = 0; i < 4; ++i)
      if (keep || std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) == axes.end())
        out.push_back(kept[i]);
    Value r =
        b.emit1(b.ch.chance(50) ? "ReduceSum" : "ReduceMean", {v}, std::move(attrs), {dt, out});
    return keep ? r : b.reshapeTo(r, kept);
  }
  case 2: { // Concat along channels with a constant or itself
    const bool self = b.ch.chance(40);
    const int64_t c2 = self ? s[1] : 1 + b.ch.below(2);
    Value other = self ? v : tableConst(b, {dt, {1, c2, s[2], s[3]}}, kWeights);
    AttrMap attrs;
    attrs["axis"] = AttrValue::ofInt(b.ch.chance(50) ? -3 : 1);
    return b.emit1("Concat", {v, other}, std::move(attrs), {dt, {1, s[1] + c2, s[2], s[3]}});
  }
  case 3: { // Softmax along some axis
    AttrMap attrs;
    attrs["axis"] = AttrValue::ofInt(pickAxis(4, b.ch));
    return b.emit1("Softmax", {v}, std::move(attrs), v.type);
  }
  case 4: { // Split the channels in two (the second part becomes an output)
    if (s[1] < 2)
      return v;
    const int64_t first = 1 + b.ch.below(static_cast<unsigned>(s[1] - 1));
    AttrMap attrs;
    attrs["axis"] = AttrValue::ofInt(spellAxis(1, 4, b.ch));
    std::vector<Value> parts =
        b.emit("Split", {v, b.ints({first, s[1] - first})}, std::move(attrs),
               {{dt, {1, first, s[2], s[3]}}, {dt, {1, s[1] - first, s[2], s[3]}}});
    return parts[0];
  }
  case 5: { // Slice one axis (explicit axes input)
    const int64_t axis = 1 + b.ch.below(3);
    const int64_t dim = s[static_cast<size_t>(axis)];
    const int64_t start = dim > 1 ? b.ch.below(2) : 0;
    Shape out = s;
    out[static_cast<size_t>(axis)] = dim - start;
    return b.emit1("Slice", {v, b.ints({start}), b.ints({dim}), b.ints({spellAxis(axis, 4, b.ch)})},
                   {}, {dt, out});
  }
  case 6: { // Pad the spatial axes with zeros
    const int64_t p = 1;
    Shape out{s[0], s[1], s[2] + 2 * p, s[3] + 2 * p};
    if (elementsOf(out) > kMaxValueElements)
      return v;
    return b.emit1("Pad", {v, b.ints({0, 0, p, p, 0, 0, p, p})}, {}, {dt, out});
  }
  case 7: { // Relu
    return b.emit1("Relu", {v}, {}, v.type);
  }
  default: // Add a [C, 1, 1] constant
    return b.emit1("Add", {v, tableConst(b, {dt, {s[1], 1, 1}}, kWeights)}, {}, v.type);
  }
}

void buildLayoutChain(Builder &b, const std::string &) {
  const DType dt = motifDType(b);
  Value x = imageInput(b, dt, false);
  Value y = layoutHead(b, x);
  for (unsigned i = 1 + b.ch.below(3); i > 0; --i)
    y = agnosticStep(b, y);
  ConvSpec s;
  s.m = 1 + b.ch.below(3);
  s.bias = b.ch.chance(40);
  emitConv(b, y, false, s);
}

// ---- 5. legalize-targets --------------------------------------------------------

/// A channel count that is not a multiple of 4.
int64_t unalignedChannels(Builder &b) {
  constexpr int64_t kCounts[] = {3, 1, 2, 5, 6, 7};
  return kCounts[b.ch.below(6)];
}

void buildLegalizeTargets(Builder &b, const std::string &) {
  switch (b.ch.below(4)) {
  case 1: { // HardSwish
    const DType dt = motifDType(b);
    Value x = b.ch.chance(50) ? imageInput(b, dt, false) : matrixInput(b, dt);
    b.emit1("HardSwish", {x}, {}, x.type);
    return;
  }
  case 2: { // Clip of f16 with constant bounds
    Value x = b.ch.chance(50) ? imageInput(b, DType::F16, false) : matrixInput(b, DType::F16);
    constexpr double kLows[] = {0.0, -1.0, -6.0, 0.5};
    constexpr double kHighs[] = {6.0, 1.0, 0.5, 65504.0};
    const unsigned form = b.ch.below(3); // both, min only, max only
    auto bound = [&](double v) {
      Tensor t(TensorType{DType::F16, {}});
      t.setDouble(0, v);
      return b.literal(std::move(t));
    };
    Inputs ins{x};
    const double lo = kLows[b.ch.below(4)], hi = kHighs[b.ch.below(4)];
    if (form == 2)
      ins.push_back(std::nullopt);
    else
      ins.push_back(bound(lo));
    if (form != 1)
      ins.push_back(bound(hi));
    b.emit1("Clip", ins, {}, x.type);
    return;
  }
  case 3: { // Conv with channel counts not a multiple of 4
    const DType dt = motifDType(b);
    const int64_t c = unalignedChannels(b);
    const int64_t h = 1 + b.ch.below(kMaxSpatial), w = 1 + b.ch.below(kMaxSpatial);
    Value x = b.data({dt, {1, c, h, w}});
    ConvSpec s = pickConv(b, {1, c, h, w});
    if (s.group == 1)
      s.m = unalignedChannels(b);
    emitConv(b, x, false, s);
    return;
  }
  default: { // Gemm: transA, transB, alpha, beta, C broadcast
    const DType dt = motifDType(b);
    const int64_t m = 1 + b.ch.below(3), k = 1 + b.ch.below(kMaxChannels), n = 1 + b.ch.below(4);
    const bool transA = b.ch.chance(40), transB = b.ch.chance(50);
    Value a = b.data({dt, transA ? Shape{k, m} : Shape{m, k}});
    Inputs ins{a, weights(b, {dt, transB ? Shape{n, k} : Shape{k, n}})};
    const Shape cShapes[] = {{n}, {1, n}, {m, 1}, {m, n}, {}, {1}};
    if (!b.ch.chance(20))
      ins.push_back(tableConst(b, {dt, cShapes[b.ch.below(6)]}, kWeights));
    AttrMap attrs;
    if (transA)
      attrs["transA"] = AttrValue::ofInt(1);
    if (transB)
      attrs["transB"] = AttrValue::ofInt(1);
    if (b.ch.chance(40))
      attrs["alpha"] = AttrValue::ofFloat(b.ch.chance(50) ? 0.5 : 2.0);
    if (b.ch.chance(40))
      attrs["beta"] = AttrValue::ofFloat(b.ch.chance(50) ? 0.0 : -1.0);
    b.emit1("Gemm", ins, std::move(attrs), {dt, {m, n}});
    return;
  }
  }
}

// ---- 6. norms --------------------------------------------------------------------

void buildNorms(Builder &b, const std::string &) {
  const DType dt = motifDType(b);
  const unsigned kind = b.ch.below(3); // LayerNormalization, InstanceNormalization, BatchNorm
  const int64_t rank = kind == 0 ? 2 + b.ch.below(3) : 3 + b.ch.below(2);
  Shape s{1};
  for (int64_t i = 1; i < rank; ++i)
    s.push_back(1 + b.ch.below(i == 1 ? kMaxChannels : kMaxSpatial));
  Value x = b.data({dt, s});
  AttrMap attrs;
  if (b.ch.chance(40))
    attrs["epsilon"] = AttrValue::ofFloat(b.ch.chance(50) ? 1e-3 : 1e-5);
  if (kind == 0) {
    const int64_t axis = 1 + b.ch.below(static_cast<unsigned>(rank - 1));
    if (axis != rank - 1 || b.ch.chance(50))
      attrs["axis"] = AttrValue::ofInt(spellAxis(axis, rank, b.ch));
    const Shape tail(s.begin() + axis, s.end());
    Inputs ins{x, tableConst(b, {dt, tail}, kScales)};
    if (b.ch.chance(60))
      ins.push_back(tableConst(b, {dt, tail}, kWeights));
    b.emit1("LayerNormalization", ins, std::move(attrs), x.type);
    return;
  }
  if (kind == 1) {
    const TensorType p{dt, {s[1]}};
    b.emit1("InstanceNormalization", {x, tableConst(b, p, kScales), tableConst(b, p, kWeights)},
            std::move(attrs), x.type);
    return;
  }
  emitBatchNorm(b, x, false);
}

// ---- 7. random ops and their deterministic twins --------------------------------

/// Probabilities for Bernoulli: inside [0, 1], the ends included.
constexpr double kProbabilities[] = {0.5, 0.0, 1.0, 0.25, 0.75};

/// The input of a random op of `kind` (RandomUniformLike, RandomNormalLike,
/// Bernoulli) of shape [1, n]: a graph input, or a constant when `constant`
/// or for Bernoulli (its probabilities must lie in [0, 1]).
Value randomInput(Builder &b, unsigned kind, DType dt, int64_t n, bool constant) {
  if (kind == 2)
    return tableConst(b, {dt, {1, n}}, kProbabilities);
  return constant ? tableConst(b, {dt, {1, n}}, kWeights) : b.data({dt, {1, n}});
}

/// The attributes of a random op of `kind` and output dtype `dt` reading `x`.
AttrMap randomAttrs(Builder &b, const Value &x, unsigned kind, DType dt) {
  AttrMap attrs;
  if (kind == 2)
    return attrs;
  if (x.dtype() != dt || b.ch.chance(30))
    attrs["dtype"] = ident(dt);
  if (kind == 0 && b.ch.chance(40)) {
    attrs["low"] = AttrValue::ofFloat(-1.0);
    attrs["high"] = AttrValue::ofFloat(b.ch.chance(50) ? 1.0 : 3.0);
  }
  if (kind == 1 && b.ch.chance(40))
    attrs["scale"] = AttrValue::ofFloat(b.ch.chance(50) ? 0.5 : 2.0);
  if (b.ch.chance(20))
    attrs["seed"] = AttrValue::ofFloat(1.0); // ignored: the draw is keyed by name
  return attrs;
}

/// A random op of `kind` and output dtype `dt` reading `x`.
Value emitRandom(Builder &b, const Value &x, unsigned kind, DType dt, AttrMap attrs) {
  static constexpr const char *kOps[] = {"RandomUniformLike", "RandomNormalLike", "Bernoulli"};
  return b.emit1(kOps[kind], {x}, std::move(attrs), {dt, x.type.shape});
}

Value emitRandom(Builder &b, const Value &x, unsigned kind, DType dt) {
  return emitRandom(b, x, kind, dt, randomAttrs(b, x, kind, dt));
}

/// An element-wise chain a fusion pass takes whole: Add with `other`, then
/// Relu or Neg.
Value fusableChain(Builder &b, const Value &v, const Value &other) {
  Value s = b.emit1("Add", {v, other}, {}, v.type);
  return b.emit1(b.ch.chance(50) ? "Relu" : "Neg", {s}, {}, s.type);
}

/// The five shapes the passes must not touch: (0) two identical random ops
/// on one input (CSE may not merge them); (1) a random op on a constant
/// (constant folding may not fold it, fusion may not copy it into a group
/// like a constant); (2) a random producer with two readers that each feed a
/// fusable chain (fusion may not take the draw into either group); (3)
/// Dropout in training mode; (4) Dropout in inference mode (the identity
/// that simplification may remove).
void buildRandom(Builder &b, const std::string &) {
  const DType dt = motifDType(b);
  const unsigned shape = b.ch.below(5);
  const unsigned kind = b.ch.below(3);
  const int64_t n = 1 + b.ch.below(kMaxChannels);
  switch (shape) {
  case 0: { // identical twins
    const Value x = randomInput(b, kind, dt, n, false);
    const AttrMap attrs = randomAttrs(b, x, kind, dt);
    const Value first = emitRandom(b, x, kind, dt, attrs);
    const Value second = emitRandom(b, x, kind, dt, attrs);
    if (b.ch.chance(50))
      b.emit1("Sub", {first, second}, {}, first.type);
    return;
  }
  case 1: { // a draw whose input is a constant
    const Value r = emitRandom(b, randomInput(b, kind, dt, n, true), kind, dt);
    fusableChain(b, r, b.data({dt, {1, n}}));
    if (b.ch.chance(60))
      fusableChain(b, r, tableConst(b, {dt, {1, n}}, kWeights)); // a second reader
    return;
  }
  case 2: { // one draw, two fusable readers
    const Value x = b.data({dt, {1, n}});
    const Value r = emitRandom(b, kind == 2 ? randomInput(b, kind, dt, n, true) : x, kind, dt);
    fusableChain(b, r, x);
    fusableChain(b, r, b.data({dt, {1, n}}));
    return;
  }
  default: { // Dropout, training (3) or inference (4)
    const Value x = b.data({dt, {1, n}});
    Inputs ins{x};
    const bool training = shape == 3;
    if (training || b.ch.chance(60)) {
      Tensor ratio(TensorType{DType::F32, {}});
      ratio.setDouble(0, training && b.ch.chance(70) ? 0.5 : 0.0);
      ins.push_back(b.literal(std::move(ratio)));
      Tensor mode(TensorType{DType::Bool, {}});
      mode.setInt(0, training ? 1 : 0);
      ins.push_back(b.literal(std::move(mode)));
    }
    const bool mask = b.ch.chance(40);
    std::vector<TensorType> outs{x.type};
    if (mask)
      outs.push_back({DType::Bool, x.type.shape});
    const std::vector<Value> y = b.emit("Dropout", ins, {}, outs);
    fusableChain(b, y[0], x);
    return;
  }
  }
}

constexpr CatalogueEntry kEntries[] = {
    {"motif:conv-bn-relu", buildConvBnRelu},
    {"motif:channel-scale", buildChannelScale},
    {"motif:parallel-dense", buildParallelDense},
    {"motif:layout-chain", buildLayoutChain},
    {"motif:legalize-targets", buildLegalizeTargets},
    {"motif:norms", buildNorms},
    {"motif:random", buildRandom},
};

} // namespace

std::span<const CatalogueEntry> motifEntries() {
  static const std::vector<CatalogueEntry> all = [] {
    std::vector<CatalogueEntry> v(std::begin(kEntries), std::end(kEntries));
    for (const CatalogueEntry &e : chainMotifEntries())
      v.push_back(e);
    for (const CatalogueEntry &e : stateMotifEntries())
      v.push_back(e);
    return v;
  }();
  return all;
}

} // namespace graphvet::props::typed
