// Catalogue entries of the shape family: Reshape (0 copies, -1, allowzero,
// the attribute form), Flatten, Transpose, Squeeze, Unsqueeze, Concat,
// Split, Slice, Gather, Expand, Tile, Pad, Shape, Size, ConstantOfShape,
// Range, DepthToSpace and SpaceToDepth. Shape operands are Consts solved for
// the input's type; the output types follow ONNX's definitions, written out
// here independently of src/ir/ops.
#include "props/typed_attrs.h"
#include "props/typed_builder.h"
#include "props/typed_shape.h"
#include "props/typed_values.h"

#include <algorithm>
#include <limits>
#include <memory>

namespace graphvet::props::typed {
namespace {

int64_t product(const Shape &s, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t i = from; i < to && i < s.size(); ++i)
    n *= s[i];
  return n;
}

/// Product of the dimensions other than `axis`.
int64_t productWithout(const Shape &s, size_t axis) {
  return product(s, 0, axis) * product(s, axis + 1, s.size());
}

/// Reshape(x, shape): a factorization of x's element count, some
/// dimensions spelled 0 (copy x's) or -1 (inferred); allowzero = 1 keeps a
/// literal 0.
void buildReshape(Builder &b, const std::string &op) {
  Value x = b.any();
  const Shape &in = x.type.shape;
  const int64_t n = elementsOf(in);
  Shape dims = factorShape(n, b.ch.below(5), b.ch);
  std::vector<int64_t> spec = dims;
  bool allowZero;
  if (n == 0) {
    // A 0 in the spec copies x's dimension unless allowzero is set: the
    // zero dimension can be spelled 0 only where x has its 0.
    size_t z = std::find(dims.begin(), dims.end(), 0) - dims.begin();
    allowZero = !(z < in.size() && in[z] == 0) || b.ch.chance(50);
  } else {
    allowZero = b.ch.chance(10);
    if (!allowZero)
      for (size_t i = 0; i < spec.size() && i < in.size(); ++i)
        if (spec[i] == in[i] && b.ch.chance(25))
          spec[i] = 0;
    if (!spec.empty() && b.ch.chance(35))
      spec[b.ch.below(static_cast<unsigned>(spec.size()))] = -1;
  }
  AttrMap attrs;
  if (allowZero || b.ch.chance(10))
    attrs["allowzero"] = AttrValue::ofInt(allowZero ? 1 : 0);
  Inputs ins{x};
  if (b.ch.chance(10))
    attrs["shape"] = intList(spec); // opset 1-4
  else
    ins.push_back(b.ints(spec));
  b.emit1(op, ins, std::move(attrs), {x.dtype(), dims});
}

void buildFlatten(Builder &b, const std::string &op) {
  Value x = b.any();
  const int64_t r = x.rank();
  AttrMap attrs;
  int64_t axis = 1;
  if (r == 0 || !b.ch.chance(20)) {
    axis = b.ch.below(static_cast<unsigned>(r + 1));
    attrs["axis"] = AttrValue::ofInt(axis < r && b.ch.chance(40) ? axis - r : axis);
  }
  const Shape &s = x.type.shape;
  size_t a = static_cast<size_t>(axis);
  b.emit1(op, {x}, std::move(attrs), {x.dtype(), {product(s, 0, a), product(s, a, s.size())}});
}

void buildTranspose(Builder &b, const std::string &op) {
  Value x = b.any();
  const size_t r = x.type.shape.size();
  std::vector<int64_t> perm = pickPermutation(r, b.ch);
  AttrMap attrs;
  if (b.ch.chance(25)) { // the default, reversed axes, left unspelled
    for (size_t i = 0; i < r; ++i)
      perm[i] = static_cast<int64_t>(r - 1 - i);
  } else {
    attrs["perm"] = intList(perm);
  }
  Shape out;
  for (int64_t p : perm)
    out.push_back(x.type.shape[static_cast<size_t>(p)]);
  b.emit1(op, {x}, std::move(attrs), {x.dtype(), out});
}

/// Squeeze: axes (input or attribute) naming some of the size-1 axes, or no
/// axes (every size-1 axis goes).
void buildSqueeze(Builder &b, const std::string &op) {
  Value x = b.any();
  const Shape &in = x.type.shape;
  const int64_t r = x.rank();
  unsigned form = b.ch.below(3);
  std::vector<bool> drop(in.size(), false);
  std::vector<int64_t> axes;
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i] == 1 && (form == 1 || b.ch.chance(60))) {
      drop[i] = true;
      axes.push_back(spellAxis(static_cast<int64_t>(i), r, b.ch));
    }
  Inputs ins{x};
  AttrMap attrs;
  if (form == 0)
    ins.push_back(b.ints(axes));
  else if (form == 2)
    attrs["axes"] = intList(axes);
  Shape out;
  for (size_t i = 0; i < in.size(); ++i)
    if (!drop[i])
      out.push_back(in[i]);
  b.emit1(op, ins, std::move(attrs), {x.dtype(), out});
}

void buildUnsqueeze(Builder &b, const std::string &op) {
  Value x = b.any();
  const size_t r = x.type.shape.size();
  size_t k = std::min<size_t>(1 + b.ch.below(2), kMaxRank > r ? kMaxRank - r : 0);
  const size_t outRank = r + k;
  std::vector<int64_t> order = pickPermutation(outRank, b.ch);
  std::vector<bool> inserted(outRank, false);
  std::vector<int64_t> axes;
  for (size_t i = 0; i < k; ++i) {
    inserted[static_cast<size_t>(order[i])] = true;
    axes.push_back(spellAxis(order[i], static_cast<int64_t>(outRank), b.ch));
  }
  Shape out;
  size_t next = 0;
  for (size_t i = 0; i < outRank; ++i)
    out.push_back(inserted[i] ? 1 : x.type.shape[next++]);
  Inputs ins{x};
  AttrMap attrs;
  if (b.ch.chance(20))
    attrs["axes"] = intList(axes); // opset < 13
  else
    ins.push_back(b.ints(axes));
  b.emit1(op, ins, std::move(attrs), {x.dtype(), out});
}

/// Concat of two or three inputs along an axis: x again, an earlier value
/// that matches outside the axis, or a new source (possibly empty along it).
void buildConcat(Builder &b, const std::string &op) {
  Value x = b.input(kAllDTypes, 1);
  const int64_t r = x.rank();
  const size_t ax = b.ch.below(static_cast<unsigned>(r));
  AttrMap attrs;
  attrs["axis"] = AttrValue::ofInt(spellAxis(static_cast<int64_t>(ax), r, b.ch));
  const int64_t outer = productWithout(x.type.shape, ax);
  Shape out = x.type.shape;
  auto fits = [&](int64_t more) {
    Shape s = x.type.shape;
    s[ax] = out[ax] + more;
    return elementsOf(s) <= kMaxValueElements;
  };
  Inputs ins{x};
  size_t n = 2 + b.ch.below(2);
  for (size_t i = 1; i < n; ++i) {
    unsigned mode = b.ch.below(3);
    uint8_t back = b.nextRef();
    std::optional<Value> v;
    if (mode == 0 && fits(x.type.shape[ax]))
      v = x;
    if (mode == 1)
      v = b.find(back, [&](const Value &c) {
        if (c.dtype() != x.dtype() || c.rank() != r || !fits(c.type.shape[ax]))
          return false;
        for (size_t d = 0; d < out.size(); ++d)
          if (d != ax && c.type.shape[d] != x.type.shape[d])
            return false;
        return true;
      });
    if (!v) {
      Shape s = x.type.shape;
      s[ax] = b.ch.below(4);
      if (!fits(s[ax]) || outer * s[ax] > kMaxSourceElements)
        s[ax] = 0;
      v = b.source({x.dtype(), s});
    }
    out[ax] += v->type.shape[ax];
    ins.push_back(v);
  }
  b.emit1(op, ins, std::move(attrs), {x.dtype(), out});
}

/// Sizes of `n` parts summing to `dim`, cut at points the choices pick.
std::vector<int64_t> composition(int64_t dim, size_t n, Choices &ch) {
  std::vector<int64_t> cuts;
  for (size_t i = 0; i + 1 < n; ++i)
    cuts.push_back(ch.below(static_cast<unsigned>(dim + 1)));
  std::sort(cuts.begin(), cuts.end());
  std::vector<int64_t> sizes;
  int64_t prev = 0;
  for (int64_t c : cuts) {
    sizes.push_back(c - prev);
    prev = c;
  }
  sizes.push_back(dim - prev);
  return sizes;
}

/// Split into one to three outputs: sizes as input 1 (opset 13), as the
/// attribute split (opsets 2-11), equal parts, or num_outputs (opset 18).
void buildSplit(Builder &b, const std::string &op) {
  Value x = b.input(kAllDTypes, 1);
  const int64_t r = x.rank();
  const size_t ax = b.ch.below(static_cast<unsigned>(r));
  const int64_t dim = x.type.shape[ax];
  AttrMap attrs;
  if (ax != 0 || b.ch.chance(50))
    attrs["axis"] = AttrValue::ofInt(spellAxis(static_cast<int64_t>(ax), r, b.ch));
  const size_t n = 1 + b.ch.below(3);
  Inputs ins{x};
  std::vector<int64_t> sizes;
  unsigned form = b.ch.below(4);
  if (form == 1 && dim % static_cast<int64_t>(n) == 0) {
    sizes.assign(n, dim / static_cast<int64_t>(n));
  } else if (form == 3) {
    int64_t chunk = (dim + static_cast<int64_t>(n) - 1) / static_cast<int64_t>(n);
    if (chunk * static_cast<int64_t>(n - 1) <= dim) {
      sizes.assign(n, chunk);
      sizes.back() = dim - chunk * static_cast<int64_t>(n - 1);
      attrs["num_outputs"] = AttrValue::ofInt(static_cast<int64_t>(n));
    }
  }
  if (sizes.empty()) {
    sizes = composition(dim, n, b.ch);
    if (form == 2)
      attrs["split"] = intList(sizes);
    else
      ins.push_back(b.ints(sizes));
  }
  std::vector<TensorType> outs;
  for (int64_t s : sizes) {
    Shape os = x.type.shape;
    os[ax] = s;
    outs.push_back({x.dtype(), os});
  }
  b.emit(op, ins, std::move(attrs), outs);
}

/// ONNX Slice's element count along one axis.
int64_t sliceCount(int64_t dim, int64_t s, int64_t e, int64_t step) {
  if (dim == 0)
    return 0;
  if (s < 0)
    s += dim;
  if (e < 0)
    e += dim;
  if (step > 0) {
    s = std::clamp<int64_t>(s, 0, dim);
    e = std::clamp<int64_t>(e, 0, dim);
    return e > s ? (e - s - 1) / step + 1 : 0;
  }
  s = std::clamp<int64_t>(s, 0, dim - 1);
  e = std::clamp<int64_t>(e, -1, dim - 1);
  return s > e ? (s - e - 1) / -step + 1 : 0;
}

/// Slice over some axes with starts/ends in and out of range (negative,
/// INT_MAX/INT_MIN idioms), steps of either sign; operands i64 or i32,
/// axes and steps optional, or the attribute form of opset 1.
void buildSlice(Builder &b, const std::string &op) {
  Value x = b.input(kAllDTypes, 1);
  const Shape &in = x.type.shape;
  const int64_t r = x.rank();
  const size_t k = 1 + b.ch.below(static_cast<unsigned>(r));
  std::vector<int64_t> axes = pickPermutation(static_cast<size_t>(r), b.ch);
  if (b.ch.chance(30))
    std::sort(axes.begin(), axes.end());
  axes.resize(k);
  bool natural = true;
  for (size_t i = 0; i < k; ++i)
    natural = natural && axes[i] == static_cast<int64_t>(i);
  const bool i32 = b.ch.chance(25);
  const int64_t big =
      i32 ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int64_t>::max();
  const int64_t small =
      i32 ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int64_t>::min();
  std::vector<int64_t> starts, ends, steps;
  Shape out = in;
  bool unitSteps = true;
  for (size_t i = 0; i < k; ++i) {
    const int64_t dim = in[static_cast<size_t>(axes[i])];
    const int64_t stepTable[] = {1, 2, -1, 1, -2, 3, big, -big};
    int64_t step = stepTable[b.ch.below(8)];
    auto bound = [&](bool isEnd) -> int64_t {
      switch (b.ch.below(6)) {
      case 0:
        return isEnd ? (step > 0 ? big : small) : 0;
      case 1:
        return b.ch.below(static_cast<unsigned>(dim + 1));
      case 2:
        return -1 - static_cast<int64_t>(b.ch.below(static_cast<unsigned>(dim + 2)));
      case 3:
        return big;
      case 4:
        return small;
      default:
        return isEnd ? -1 : dim - 1;
      }
    };
    int64_t s = bound(false);
    int64_t e = bound(true);
    starts.push_back(s);
    ends.push_back(e);
    steps.push_back(step);
    unitSteps = unitSteps && step == 1;
    out[static_cast<size_t>(axes[i])] = sliceCount(dim, s, e, step);
  }
  for (int64_t &a : axes)
    a = spellAxis(a, r, b.ch);
  const bool omitAxes = natural && b.ch.chance(50);
  const bool omitSteps = unitSteps && b.ch.chance(50);
  Inputs ins{x};
  AttrMap attrs;
  if (unitSteps && !i32 && b.ch.chance(10)) { // opset 1: attributes
    attrs["starts"] = intList(starts);
    attrs["ends"] = intList(ends);
    if (!omitAxes)
      attrs["axes"] = intList(axes);
  } else {
    auto operand = [&](const std::vector<int64_t> &v) {
      return b.ints(v, i32 ? DType::I32 : DType::I64);
    };
    ins.push_back(operand(starts));
    ins.push_back(operand(ends));
    if (!omitAxes)
      ins.push_back(operand(axes));
    else if (!omitSteps)
      ins.push_back(std::nullopt);
    if (!omitSteps)
      ins.push_back(operand(steps));
  }
  b.emit1(op, ins, std::move(attrs), {x.dtype(), out});
}

/// Gather along an axis with i64 or i32 indices of rank 0-2: constants in
/// [-dim, dim) (sometimes one out of range), or a graph input (mostly out
/// of range: indeterminate elements).
void buildGather(Builder &b, const std::string &op) {
  Value x = b.input(kAllDTypes, 1);
  const Shape &in = x.type.shape;
  const int64_t r = x.rank();
  const size_t ax = b.ch.below(static_cast<unsigned>(r));
  const int64_t dim = in[ax];
  AttrMap attrs;
  if (ax != 0 || b.ch.chance(50))
    attrs["axis"] = AttrValue::ofInt(spellAxis(static_cast<int64_t>(ax), r, b.ch));
  const int64_t rest = productWithout(in, ax);
  Shape idxShape;
  for (unsigned i = b.ch.below(3); i > 0; --i) {
    int64_t d = 1 + b.ch.below(3);
    if (rest * elementsOf(idxShape) * d > kMaxValueElements)
      d = 1;
    idxShape.push_back(d);
  }
  const DType idt = b.ch.chance(30) ? DType::I32 : DType::I64;
  const unsigned mode = b.ch.below(4);
  Value idx;
  if (mode == 3) {
    idx = b.data({idt, idxShape});
  } else {
    Tensor t(TensorType{idt, idxShape});
    for (int64_t j = 0; j < t.size(); ++j) {
      int64_t bits = b.nextPick().bits;
      int64_t v = dim > 0 ? bits % (2 * dim) - dim : bits % 3 - 1;
      if (mode == 2 && j == 0)
        v = bits % 2 ? dim : -dim - 1; // out of range
      t.setInt(j, v);
    }
    idx = b.literal(std::move(t));
  }
  Shape out(in.begin(), in.begin() + static_cast<int64_t>(ax));
  out.insert(out.end(), idxShape.begin(), idxShape.end());
  out.insert(out.end(), in.begin() + static_cast<int64_t>(ax) + 1, in.end());
  b.emit1(op, {x, idx}, std::move(attrs), {x.dtype(), out});
}

/// Expand to a shape that broadcasts with x's (1 keeps x's dimension; new
/// leading axes; a shorter shape than x's).
void buildExpand(Builder &b, const std::string &op) {
  Value x = b.any();
  const Shape &in = x.type.shape;
  Shape target;
  for (int64_t d : in)
    target.push_back(d == 1 ? 1 + b.ch.below(3) : (b.ch.chance(30) ? 1 : d));
  if (in.size() < 5)
    for (unsigned i = b.ch.below(3); i > 0; --i)
      target.insert(target.begin(), 1 + b.ch.below(3));
  if (b.ch.chance(20))
    target.erase(target.begin(),
                 target.begin() + b.ch.below(static_cast<unsigned>(target.size() + 1)));
  Shape out = *broadcastOf(in, target);
  if (elementsOf(out) > kMaxValueElements) {
    target = in;
    out = in;
  }
  b.emit1(op, {x, b.ints(target)}, {}, {x.dtype(), out});
}

void buildTile(Builder &b, const std::string &op) {
  Value x = b.any();
  Shape out = x.type.shape;
  std::vector<int64_t> reps;
  const int64_t table[] = {1, 2, 3, 0};
  for (int64_t &d : out) {
    int64_t rep = table[b.ch.below(4)];
    if (elementsOf(out) * rep > kMaxValueElements)
      rep = 1;
    reps.push_back(rep);
    d *= rep;
  }
  b.emit1(op, {x, b.ints(reps)}, {}, {x.dtype(), out});
}

/// Pad in constant, reflect, edge or wrap mode with pads of either sign (a
/// negative pad crops): pads as input 1 (with constant_value, or opset
/// 18's axes after a `_`), or the attributes of opset < 11.
void buildPad(Builder &b, const std::string &op) {
  Value x = b.any();
  const Shape &in = x.type.shape;
  const int64_t r = x.rank();
  const char *modes[] = {"constant", "reflect", "edge", "wrap"};
  const unsigned mode = b.ch.below(4);
  const unsigned form = b.ch.below(4);
  std::vector<int64_t> axes;
  if (form == 2)
    axes = pickAxisSubset(static_cast<size_t>(r), b.ch);
  else
    for (int64_t a = 0; a < r; ++a)
      axes.push_back(a);
  const size_t k = axes.size();
  std::vector<int64_t> pads(2 * k, 0);
  Shape out = in;
  const int64_t table[] = {0, 1, 2, -1};
  for (size_t i = 0; i < k; ++i) {
    const int64_t dim = in[static_cast<size_t>(axes[i])];
    int64_t p0 = table[b.ch.below(4)], p1 = table[b.ch.below(4)];
    if (dim + p0 + p1 < 0 || (dim == 0 && mode != 0))
      p0 = p1 = 0; // no negative size; non-constant modes cannot pad an empty axis
    pads[i] = p0;
    pads[i + k] = p1;
    out[static_cast<size_t>(axes[i])] = dim + p0 + p1;
  }
  if (elementsOf(out) > kMaxValueElements) {
    std::fill(pads.begin(), pads.end(), 0);
    out = in;
  }
  AttrMap attrs;
  if (mode != 0 || b.ch.chance(20))
    attrs["mode"] = AttrValue::ofString(modes[mode]);
  Inputs ins{x};
  if (form == 3) { // opsets 2-10
    attrs["pads"] = intList(pads);
    if (b.ch.chance(60)) {
      const double usual[] = {0.0, 1.0, 7.0, 1.5, -2.0};
      double v = usual[b.ch.below(isFloat(x.dtype()) ? 5 : 3)];
      attrs["value"] = AttrValue::ofFloat(v);
    }
  } else {
    for (int64_t &a : axes)
      a = spellAxis(a, r, b.ch);
    ins.push_back(b.ints(pads));
    bool value = form == 1 || (form == 2 && b.ch.chance(50));
    if (value)
      ins.push_back(b.source({x.dtype(), b.ch.chance(50) ? Shape{} : Shape{1}}));
    if (form == 2) {
      if (!value)
        ins.push_back(std::nullopt);
      ins.push_back(b.ints(axes, b.ch.chance(30) ? DType::I32 : DType::I64));
    }
  }
  b.emit1(op, ins, std::move(attrs), {x.dtype(), out});
}

/// Shape with optional start/end (opset 15; clamped to [0, rank]).
void buildShape(Builder &b, const std::string &op) {
  Value x = b.any();
  const int64_t r = x.rank();
  AttrMap attrs;
  auto clampAxis = [r](int64_t a) { return std::clamp<int64_t>(a < 0 ? a + r : a, 0, r); };
  int64_t start = 0, end = r;
  if (b.ch.chance(30)) {
    int64_t v = static_cast<int64_t>(b.ch.below(static_cast<unsigned>(2 * r + 5))) - r - 2;
    attrs["start"] = AttrValue::ofInt(v);
    start = clampAxis(v);
  }
  if (b.ch.chance(30)) {
    int64_t v = static_cast<int64_t>(b.ch.below(static_cast<unsigned>(2 * r + 5))) - r - 2;
    attrs["end"] = AttrValue::ofInt(v);
    end = clampAxis(v);
  }
  b.emit1(op, {x}, std::move(attrs), {DType::I64, {std::max<int64_t>(end - start, 0)}});
}

void buildSize(Builder &b, const std::string &op) {
  Value x = b.any();
  b.emit1(op, {x}, {}, {DType::I64, {}});
}

/// ConstantOfShape of a constant shape, value a one-element tensor of any
/// dtype (default f32 0).
void buildConstantOfShape(Builder &b, const std::string &op) {
  Shape dims;
  for (unsigned i = b.ch.below(4); i > 0; --i) {
    int64_t d = b.ch.below(5);
    if (elementsOf(dims) * d > kMaxSourceElements)
      d = 1;
    dims.push_back(d);
  }
  AttrMap attrs;
  DType dt = DType::F32;
  if (b.ch.chance(70)) {
    dt = pickDType(kAllDTypes, b.ch.next());
    Tensor v(TensorType{dt, {1}});
    storePick(dt, v.at(0), b.nextPick(), 0);
    attrs["value"] = AttrValue::ofTensor(std::make_shared<const Tensor>(std::move(v)));
  }
  b.emit1(op, {b.ints(dims)}, std::move(attrs), {dt, dims});
}

/// Range(start, limit, delta) of scalar constants with an exact count.
void buildRange(Builder &b, const std::string &op) {
  const DTypeSet set = dtypeBit(DType::F32) | dtypeBit(DType::F64) | dtypeBit(DType::I16) |
                       dtypeBit(DType::I32) | dtypeBit(DType::I64);
  const DType dt = pickDType(set, b.ch.next());
  const double deltas[] = {1, 2, -1, -2, 3, 0.5, -0.25};
  const double start = static_cast<double>(b.ch.below(9)) - 4;
  const double delta = deltas[b.ch.below(isFloat(dt) ? 7 : 5)];
  const int64_t count = b.ch.below(9);
  const double limit = start + static_cast<double>(count) * delta;
  auto scalar = [&](double v) {
    Tensor t(TensorType{dt, {}});
    if (isFloat(dt))
      t.setDouble(0, v);
    else
      t.setInt(0, static_cast<int64_t>(v));
    return b.literal(std::move(t));
  };
  Value s = scalar(start), l = scalar(limit), d = scalar(delta);
  b.emit1(op, {s, l, d}, {}, {dt, {count}});
}

/// DepthToSpace (DCR or CRD) and SpaceToDepth on rank-4 values, NCHW or NHWC.
void buildBlock(Builder &b, const std::string &op) {
  const bool toSpace = op == "DepthToSpace";
  const int64_t bs = b.ch.chance(15) ? 1 : (b.ch.chance(10) ? 3 : 2);
  const bool nhwc = b.ch.chance(25);
  uint8_t back = b.nextRef();
  auto fits = [&](const Value &v) {
    if (v.rank() != 4 || elementsOf(v.type.shape) > kMaxSourceElements)
      return false;
    Shape l = toLogical(v.type.shape, nhwc);
    return toSpace ? l[1] % (bs * bs) == 0 : l[2] % bs == 0 && l[3] % bs == 0;
  };
  std::optional<Value> x;
  if (b.ch.below(2) == 0)
    x = b.find(back, fits);
  if (!x) {
    Shape l = toSpace
                  ? Shape{1, bs * bs * (1 + b.ch.below(2)), 1 + b.ch.below(3), 1 + b.ch.below(3)}
                  : Shape{1, 1 + b.ch.below(3), bs * (1 + b.ch.below(2)), bs * (1 + b.ch.below(2))};
    x = b.source({pickDType(kAllDTypes, b.ch.next()), toPhysical(l, nhwc)});
  }
  Shape l = toLogical(x->type.shape, nhwc);
  Shape o = toSpace ? Shape{l[0], l[1] / (bs * bs), l[2] * bs, l[3] * bs}
                    : Shape{l[0], l[1] * bs * bs, l[2] / bs, l[3] / bs};
  AttrMap attrs;
  attrs["blocksize"] = AttrValue::ofInt(bs);
  if (nhwc)
    attrs["layout"] = AttrValue::ofString("NHWC");
  if (toSpace && b.ch.chance(50))
    attrs["mode"] = AttrValue::ofString(b.ch.chance(50) ? "CRD" : "DCR");
  b.emit1(op, {*x}, std::move(attrs), {x->dtype(), toPhysical(o, nhwc)});
}

constexpr CatalogueEntry kEntries[] = {
    {"Reshape", buildReshape},
    {"Flatten", buildFlatten},
    {"Transpose", buildTranspose},
    {"Squeeze", buildSqueeze},
    {"Unsqueeze", buildUnsqueeze},
    {"Concat", buildConcat},
    {"Split", buildSplit},
    {"Slice", buildSlice},
    {"Gather", buildGather},
    {"Expand", buildExpand},
    {"Tile", buildTile},
    {"Pad", buildPad},
    {"Shape", buildShape},
    {"Size", buildSize},
    {"ConstantOfShape", buildConstantOfShape},
    {"Range", buildRange},
    {"DepthToSpace", buildBlock},
    {"SpaceToDepth", buildBlock},
};

} // namespace

std::span<const CatalogueEntry> shapeEntries() {
  return kEntries;
}

} // namespace graphvet::props::typed
