// Motifs of the typed generator for the chain rewrites of simplify and the
// dtype-sensitive folds (issue 29): Cast chains over every pair and triple of
// the 13 dtypes (round trips exact and lossy, inputs holding the specials of
// tensor-semantics.md §7), Transpose pairs whose permutations cancel or
// compose (absent perm = reversal), Reshape / Squeeze / Unsqueeze chains
// with 0 copies, -1, negative axes and allowzero on empty tensors, and whole
// f16 / bf16 chains (element-wise ops into a reduction, Softmax or MatMul).
// As in typed_ops_motifs.cpp, every decision comes from the step's choice
// bytes (0 is the plainest form, still the pattern) and every motif solves
// its own shapes, so every shrink builds a valid graph.
#include "props/typed_attrs.h"
#include "props/typed_builder.h"
#include "props/typed_shape.h"
#include "props/typed_values.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace graphvet::props::typed {
namespace {

// ---- 8. cast-chain ---------------------------------------------------------------

/// A dtype other than those in `avoid`, for choice byte `c` (0: the first
/// member of the set in dtype order after f32, see pickDType).
DType otherDType(Builder &b, std::initializer_list<DType> avoid) {
  DTypeSet s = kAllDTypes;
  for (DType t : avoid)
    s &= ~dtypeBit(t);
  // f64 first for choice 0: the plainest chain widens f32 and comes back.
  const uint8_t c = b.ch.next();
  if (c == 0 && inSet(s, DType::F64))
    return DType::F64;
  return pickDType(s, c);
}

/// The dtypes other than `a` that hold every value of `a` (integers of a
/// wider range, floats whose significand covers the integer range, wider
/// floats; every dtype for bool): the exact round trips.
DTypeSet widerDTypes(DType a) {
  DTypeSet s = 0;
  for (int i = 0; i < kNumDTypes; ++i) {
    const auto t = static_cast<DType>(i);
    if (t == a || t == DType::Bool)
      continue;
    bool holds = a == DType::Bool;
    if (isInteger(a) && isInteger(t))
      holds = intMin(t) <= intMin(a) && intMax(a) <= intMax(t);
    else if (isInteger(a) && isFloat(t))
      holds = static_cast<double>(intMax(a)) <= std::ldexp(1.0, significandBits(t)) &&
              -static_cast<double>(intMin(a)) <= std::ldexp(1.0, significandBits(t));
    else if (isFloat(a) && isFloat(t))
      holds = significandBits(t) > significandBits(a) && !(a == DType::F16 && t == DType::BF16) &&
              !(a == DType::BF16 && t == DType::F16);
    if (holds)
      s |= dtypeBit(t);
  }
  return s;
}

/// A Const of `t` whose elements are the dtype's specials (NaN, -0, inf,
/// 2^24 + 1, 65504, the extremes of an integer type, ...), chosen by the
/// step's element picks.
Value specialsConst(Builder &b, const TensorType &t) {
  Tensor v(t);
  for (int64_t i = 0; i < v.size(); ++i)
    storeSpecial(t.dtype, v.at(i), b.nextPick().bits + static_cast<unsigned>(i) * 7u);
  return b.literal(std::move(v));
}

Value castStep(Builder &b, const Value &x, DType to) {
  AttrMap attrs;
  attrs["to"] = b.ch.chance(15) ? AttrValue::ofString(std::string(dtypeName(to))) : ident(to);
  return b.emit1("Cast", {x}, std::move(attrs), {to, x.type.shape});
}

/// x of dtype A (a graph input, a Const of specials, or an earlier value)
/// through two or three Casts: (0) A -> B -> A, (1) A -> B -> C,
/// (2) A -> B -> C -> A, (3) A -> B -> C -> D; sometimes the middle value
/// also has an outside consumer (a graph output).
void buildCastChain(Builder &b, const std::string &) {
  const DType a = pickDType(kAllDTypes, b.ch.next());
  const int64_t n = 1 + b.ch.below(6);
  Value x;
  switch (b.ch.below(3)) {
  case 1:
    x = specialsConst(b, {a, {n}});
    break;
  case 2: {
    const uint8_t back = b.nextRef();
    auto found = b.find(back, [&](const Value &v) {
      return v.dtype() == a && elementsOf(v.type.shape) <= kMaxValueElements;
    });
    x = found ? *found : b.data({a, {n}});
    break;
  }
  default:
    x = b.data({a, {n}});
    break;
  }
  const unsigned form = b.ch.below(4);
  // Round trips: half of them through a dtype that holds every value.
  const DTypeSet wider = widerDTypes(a);
  const DType mid = form == 0 && wider != 0 && !b.ch.chance(50) ? pickDType(wider, b.ch.next())
                                                                : otherDType(b, {a});
  Value y = castStep(b, x, mid);
  if (b.ch.chance(20))
    b.keepAsOutput(y);
  if (form == 0) {
    castStep(b, y, a);
    return;
  }
  const DType third = otherDType(b, {a, mid});
  y = castStep(b, y, third);
  if (form == 1)
    return;
  castStep(b, y, form == 2 ? a : otherDType(b, {third}));
}

// ---- 9. transpose-pair -------------------------------------------------------------

std::vector<int64_t> reversal(size_t r) {
  std::vector<int64_t> p(r);
  std::iota(p.rbegin(), p.rend(), 0);
  return p;
}

/// The permutation q with q[p[i]] = i: Transpose by q undoes Transpose by p.
std::vector<int64_t> inverse(const std::vector<int64_t> &p) {
  std::vector<int64_t> q(p.size());
  for (size_t i = 0; i < p.size(); ++i)
    q[static_cast<size_t>(p[i])] = static_cast<int64_t>(i);
  return q;
}

/// Transpose of `x` by `perm`, the attribute left out when `absent` (then
/// `perm` must be the reversal).
Value emitTranspose(Builder &b, const Value &x, const std::vector<int64_t> &perm, bool absent) {
  AttrMap attrs;
  if (!absent)
    attrs["perm"] = intList(perm);
  Shape out;
  for (int64_t p : perm)
    out.push_back(x.type.shape[static_cast<size_t>(p)]);
  return b.emit1("Transpose", {x}, std::move(attrs), {x.dtype(), out});
}

/// A value of rank 2..5: an earlier one, else a graph input of any dtype
/// (dimensions 1-3, rank 5 at most 2).
Value transposeInput(Builder &b) {
  const uint8_t back = b.nextRef();
  if (b.ch.chance(40))
    if (auto v = b.find(back, [](const Value &x) {
          return x.rank() >= 2 && x.rank() <= 5 && elementsOf(x.type.shape) <= kMaxValueElements;
        }))
      return *v;
  const DType dt = pickDType(kAllDTypes, b.ch.next());
  const size_t r = 2 + b.ch.below(4);
  Shape s;
  for (size_t i = 0; i < r; ++i)
    s.push_back(1 + b.ch.below(r >= 4 ? 2 : 3));
  return b.data({dt, s});
}

/// Transpose(Transpose(x, p1), p2): p2 undoes p1 (cancel) or is any other
/// permutation (compose); either may be left absent (the reversal). The
/// plainest form is two absent perms: the reversal twice.
void buildTransposePair(Builder &b, const std::string &) {
  const Value x = transposeInput(b);
  const size_t r = static_cast<size_t>(x.rank());
  const bool firstAbsent = !b.ch.chance(70);
  const std::vector<int64_t> p1 = firstAbsent ? reversal(r) : pickPermutation(r, b.ch);
  const Value t1 = emitTranspose(b, x, p1, firstAbsent);
  if (b.ch.chance(20))
    b.keepAsOutput(t1); // the inner Transpose has an outside consumer
  const bool cancel = !b.ch.chance(50);
  std::vector<int64_t> p2 = cancel ? inverse(p1) : pickPermutation(r, b.ch);
  bool secondAbsent = p2 == reversal(r) && !b.ch.chance(40);
  if (!cancel && b.ch.chance(25)) {
    p2 = reversal(r);
    secondAbsent = true;
  }
  const Value t2 = emitTranspose(b, t1, p2, secondAbsent);
  if (b.ch.chance(30)) { // an element-wise reader, as the pair usually has
    const Value f = t2.dtype() == DType::F32 ? t2 : b.castTo(t2, DType::F32);
    b.emit1("Relu", {f}, {}, f.type);
  }
}

// ---- 10. reshape-chain --------------------------------------------------------------

/// A spec for Reshape from `in` to `dims` (allowzero 0): some entries equal
/// to `in`'s dimension spelled 0 (a copy), one entry sometimes -1 (n > 0).
std::vector<int64_t> spellSpec(Builder &b, const Shape &in, const Shape &dims) {
  std::vector<int64_t> spec = dims;
  for (size_t i = 0; i < spec.size() && i < in.size(); ++i)
    if (spec[i] == in[i] && b.ch.chance(30))
      spec[i] = 0;
  if (!spec.empty() && elementsOf(in) > 0 && b.ch.chance(35))
    spec[b.ch.below(static_cast<unsigned>(spec.size()))] = -1;
  return spec;
}

Value emitReshape(Builder &b, const Value &x, const std::vector<int64_t> &spec, const Shape &out,
                  int allowZero) {
  AttrMap attrs;
  if (allowZero == 1 || b.ch.chance(15))
    attrs["allowzero"] = AttrValue::ofInt(allowZero);
  return b.emit1("Reshape", {x, b.ints(spec)}, std::move(attrs), {x.dtype(), out});
}

/// A non-empty graph input: rank 1-4, dimensions 1-4, at most
/// kMaxSourceElements elements.
Value nonEmptyInput(Builder &b) {
  const DType dt = pickDType(kAllDTypes, b.ch.next());
  const size_t r = 1 + b.ch.below(4);
  Shape s;
  for (size_t i = 0; i < r; ++i)
    s.push_back(1 + b.ch.below(4));
  while (elementsOf(s) > kMaxSourceElements)
    for (int64_t &d : s)
      d = std::max<int64_t>(1, d / 2);
  return b.data({dt, s});
}

/// Squeeze of the size-1 axes `axes` (non-empty, any spelling) of `x`:
/// the axes as an input (opset 13) or an attribute.
Value emitSqueeze(Builder &b, const Value &x, const std::vector<int64_t> &axes) {
  const int64_t r = x.rank();
  Shape out;
  for (int64_t i = 0; i < r; ++i)
    if (std::find_if(axes.begin(), axes.end(), [&](int64_t a) { return normAxis(a, r) == i; }) ==
        axes.end())
      out.push_back(x.type.shape[static_cast<size_t>(i)]);
  Inputs ins{x};
  AttrMap attrs;
  if (b.ch.chance(20))
    attrs["axes"] = intList(axes);
  else
    ins.push_back(b.ints(axes));
  return b.emit1("Squeeze", ins, std::move(attrs), {x.dtype(), out});
}

/// Unsqueeze of `x` inserting `k` axes, spelled negative unless the choice
/// says otherwise.
Value emitUnsqueeze(Builder &b, const Value &x, size_t k) {
  const size_t outRank = x.type.shape.size() + k;
  const std::vector<int64_t> order = pickPermutation(outRank, b.ch);
  std::vector<bool> inserted(outRank, false);
  std::vector<int64_t> axes;
  for (size_t i = 0; i < k; ++i) {
    const int64_t a = order[i];
    inserted[static_cast<size_t>(a)] = true;
    axes.push_back(b.ch.chance(30) ? a : a - static_cast<int64_t>(outRank));
  }
  Shape out;
  size_t next = 0;
  for (size_t i = 0; i < outRank; ++i)
    out.push_back(inserted[i] ? 1 : x.type.shape[next++]);
  Inputs ins{x};
  AttrMap attrs;
  if (b.ch.chance(20))
    attrs["axes"] = intList(axes);
  else
    ins.push_back(b.ints(axes));
  return b.emit1("Unsqueeze", ins, std::move(attrs), {x.dtype(), out});
}

/// The size-1 axes of `s` to squeeze: each with probability about 60%, at
/// least one, spelled negative unless the choice says otherwise; empty when
/// `s` has no size-1 axis.
std::vector<int64_t> squeezeAxes(Builder &b, const Shape &s) {
  const int64_t r = static_cast<int64_t>(s.size());
  std::vector<int64_t> ones;
  for (int64_t i = 0; i < r; ++i)
    if (s[static_cast<size_t>(i)] == 1)
      ones.push_back(i);
  std::vector<int64_t> axes;
  for (int64_t i : ones)
    if (axes.empty() || b.ch.chance(60))
      axes.push_back(b.ch.chance(30) ? i : i - r);
  return axes;
}

/// x (empty: one dimension 0) -> Reshape(s1, allowzero = 1), s1 spelling a
/// literal 0 both where x has its 0 and where x's dimension is not 0 ->
/// Reshape(s2, allowzero 0), s2 copying (0) the literal 0 of s1 at that
/// position. A pass that reads the inner spec as copies (ignores allowzero)
/// believes the middle shape equals x's there, and collapses the chain to a
/// Reshape of x that copies the wrong dimension.
void buildAllowZeroEmpty(Builder &b) {
  const DType dt = pickDType(kAllDTypes, b.ch.next());
  const size_t r = 2 + b.ch.below(3);
  const size_t z = b.ch.below(static_cast<unsigned>(r));
  Shape xs;
  for (size_t i = 0; i < r; ++i)
    xs.push_back(i == z ? 0 : 1 + b.ch.below(4));
  const Value x = b.data({dt, xs});
  // p: a position where x's dimension is not 0.
  size_t p = b.ch.below(static_cast<unsigned>(r - 1));
  if (p >= z)
    ++p;
  std::vector<int64_t> s1;
  for (size_t i = 0; i < r; ++i)
    s1.push_back(i == z || i == p ? 0 : (b.ch.chance(50) ? xs[i] : 1 + b.ch.below(4)));
  if (b.ch.chance(25))
    s1.push_back(1 + b.ch.below(3)); // a trailing extra axis
  const Shape mid(s1.begin(), s1.end());
  const Value m = emitReshape(b, x, s1, mid, 1);
  // s2 of rank max(p, z) + 1 .. rank(mid), 0 at p (copying mid[p] = 0)
  // and mostly at z too: then a reader who takes the middle shape for x's
  // (x[p] at p) still finds an empty, valid result, so nothing but the
  // allowzero tells the chain from one it may collapse.
  const size_t last = std::max(p, z);
  const size_t k = last + 1 + b.ch.below(static_cast<unsigned>(mid.size() - last));
  const bool copyZ = !b.ch.chance(20);
  std::vector<int64_t> s2;
  for (size_t i = 0; i < k; ++i)
    s2.push_back(i == p || (i == z && copyZ) ? 0 : 1 + b.ch.below(4));
  Shape out(s2.begin(), s2.end()); // each 0 copies mid's 0 there
  emitReshape(b, m, s2, out, 0);
}

/// A reshaping op's result read by a Reshape and, later, by another
/// reshaping op: Flatten(x) -> Reshape and Unsqueeze/Squeeze. Rewriting the
/// second (an Unsqueeze of a Flatten is one Reshape of x) leaves the first
/// the inner op's only reader, so the first's chain collapses only when
/// the pass looks again (simplify's next sweep). x is a computed value, so
/// the replacements may alias it; readers keep the results off the graph
/// outputs most of the time.
void buildSharedInner(Builder &b) {
  const DType dt = b.ch.chance(30) ? DType::F16 : DType::F32;
  Shape xs;
  for (size_t i = 0, r = 2 + b.ch.below(2); i < r; ++i)
    xs.push_back(1 + b.ch.below(4));
  const Value in = b.data({dt, xs});
  const Value x = b.emit1("Relu", {in}, {}, in.type);
  const int64_t r = static_cast<int64_t>(xs.size());
  const int64_t axis = b.ch.below(static_cast<unsigned>(r + 1));
  int64_t rows = 1, cols = 1;
  for (int64_t i = 0; i < r; ++i)
    (i < axis ? rows : cols) *= xs[static_cast<size_t>(i)];
  AttrMap attrs;
  attrs["axis"] = AttrValue::ofInt(axis < r && b.ch.chance(30) ? axis - r : axis); // -0 is not r
  const Shape fs{rows, cols};
  const Value inner = b.emit1("Flatten", {x}, std::move(attrs), {dt, fs});
  const Shape d1 = factorShape(rows * cols, 1 + b.ch.below(3), b.ch);
  const Value first = emitReshape(b, inner, spellSpec(b, fs, d1), d1, 0);
  const std::vector<int64_t> ones = squeezeAxes(b, fs);
  const Value second =
      !ones.empty() && b.ch.chance(50) ? emitSqueeze(b, inner, ones) : emitUnsqueeze(b, inner, 1);
  for (const Value &v : {first, second})
    if (!b.ch.chance(25))
      b.emit1("Neg", {v}, {}, v.type);
}

/// (0) Reshape(Reshape(x, s1), s2) with 0 copies and -1; (1) Unsqueeze then
/// Squeeze with negative axes; (2) Squeeze then Unsqueeze (negative axes);
/// (3) Reshape to a shape with size-1 axes, then Squeeze them (negative);
/// (4, 5) Reshape with allowzero on an empty x (buildAllowZeroEmpty); (6)
/// a reshaping op read by two (buildSharedInner).
void buildReshapeChain(Builder &b, const std::string &) {
  const unsigned form = b.ch.below(7);
  if (form == 6) {
    buildSharedInner(b);
    return;
  }
  if (form >= 4) {
    buildAllowZeroEmpty(b);
    return;
  }
  const Value x = nonEmptyInput(b);
  const Shape &xs = x.type.shape;
  const int64_t n = elementsOf(xs);
  switch (form) {
  case 1: { // Unsqueeze -> Squeeze
    const Value u = emitUnsqueeze(b, x, 1 + b.ch.below(2));
    emitSqueeze(b, u, squeezeAxes(b, u.type.shape));
    return;
  }
  case 2: { // Squeeze -> Unsqueeze (x gets a size-1 axis first when it has none)
    Value v = x;
    if (std::find(xs.begin(), xs.end(), 1) == xs.end()) {
      Shape with = xs;
      with.insert(with.begin() + b.ch.below(static_cast<unsigned>(xs.size() + 1)), 1);
      v = emitReshape(b, x, spellSpec(b, xs, with), with, 0);
    }
    const Value s = emitSqueeze(b, v, squeezeAxes(b, v.type.shape));
    emitUnsqueeze(b, s, 1 + b.ch.below(2));
    return;
  }
  case 3: { // Reshape to size-1 axes -> Squeeze
    Shape dims = factorShape(n, 1 + b.ch.below(3), b.ch);
    dims.insert(dims.begin() + b.ch.below(static_cast<unsigned>(dims.size() + 1)), 1);
    const Value m = emitReshape(b, x, spellSpec(b, xs, dims), dims, 0);
    emitSqueeze(b, m, squeezeAxes(b, dims));
    return;
  }
  default: { // Reshape -> Reshape
    const Shape d1 = factorShape(n, 1 + b.ch.below(4), b.ch);
    const Value m = emitReshape(b, x, spellSpec(b, xs, d1), d1, 0);
    const Shape d2 = b.ch.chance(30) ? xs : factorShape(n, 1 + b.ch.below(4), b.ch);
    if (b.ch.chance(20))
      b.keepAsOutput(m);
    emitReshape(b, m, spellSpec(b, d1, d2), d2, 0);
    return;
  }
  }
}

// ---- 11. half-chain -------------------------------------------------------------------

constexpr double kHalfConsts[] = {1.0, 0.5, -2.0, 3.0, 0.25, -0.0, 65504.0, 1e-4, 100.0, -1.0};

/// One element-wise op on `v` of the chain: binary with a constant that
/// broadcasts (per column or whole), or a unary float op.
Value halfStep(Builder &b, const Value &v) {
  static constexpr const char *kBinary[] = {"Add", "Mul", "Sub", "Div"};
  static constexpr const char *kUnary[] = {"Relu", "Neg", "Abs", "Exp", "Tanh", "Sigmoid", "Sqrt"};
  const DType dt = v.dtype();
  if (!b.ch.chance(40)) {
    const Shape cs = b.ch.chance(50) ? Shape{v.type.shape.back()} : v.type.shape;
    Tensor c(TensorType{dt, cs});
    for (int64_t i = 0; i < c.size(); ++i)
      c.setDouble(i, kHalfConsts[b.nextPick().bits % std::size(kHalfConsts)]);
    return b.emit1(kBinary[b.ch.below(4)], {v, b.literal(std::move(c))}, {}, v.type);
  }
  return b.emit1(kUnary[b.ch.below(7)], {v}, {}, v.type);
}

/// A whole chain in f16 (or bf16): 1-3 element-wise ops on an [M, K] input,
/// then MatMul by constant weights, a reduction over one axis (keepdims 0
/// or 1) or Softmax, then sometimes one more element-wise op.
void buildHalfChain(Builder &b, const std::string &) {
  const DType dt = b.ch.chance(50) ? DType::BF16 : DType::F16;
  const uint8_t back = b.nextRef();
  std::optional<Value> found;
  if (b.ch.chance(40))
    found = b.find(back, [&](const Value &v) {
      return v.dtype() == dt && v.rank() == 2 && v.type.shape[0] >= 1 && v.type.shape[1] >= 1 &&
             elementsOf(v.type.shape) <= 32;
    });
  Value y = found ? *found : b.data({dt, {1 + b.ch.below(3), 1 + b.ch.below(5)}});
  for (unsigned i = 1 + b.ch.below(3); i > 0; --i)
    y = halfStep(b, y);
  const int64_t m = y.type.shape[0], k = y.type.shape[1];
  switch (b.ch.below(3)) {
  case 1: { // a reduction over one axis
    static constexpr const char *kReduce[] = {"ReduceSum", "ReduceMean", "ReduceMax",
                                              "ReduceSumSquare"};
    const int64_t axis = b.ch.below(2);
    const bool keep = !b.ch.chance(40);
    AttrMap attrs;
    attrs["axes"] = intList({spellAxis(axis, 2, b.ch)});
    if (!keep)
      attrs["keepdims"] = AttrValue::ofInt(0);
    const Shape out = keep ? (axis == 0 ? Shape{1, k} : Shape{m, 1}) : Shape{axis == 0 ? k : m};
    y = b.emit1(kReduce[b.ch.below(4)], {y}, std::move(attrs), {dt, out});
    break;
  }
  case 2: { // Softmax along an axis
    AttrMap attrs;
    attrs["axis"] = AttrValue::ofInt(pickAxis(2, b.ch));
    y = b.emit1("Softmax", {y}, std::move(attrs), y.type);
    break;
  }
  default: { // MatMul by constant weights [K, N]
    const int64_t n = 1 + b.ch.below(4);
    Tensor w(TensorType{dt, {k, n}});
    for (int64_t i = 0; i < w.size(); ++i)
      w.setDouble(i, kHalfConsts[b.nextPick().bits % std::size(kHalfConsts)]);
    y = b.emit1("MatMul", {y, b.literal(std::move(w))}, {}, {dt, {m, n}});
    break;
  }
  }
  if (b.ch.chance(40))
    halfStep(b, y);
}

constexpr CatalogueEntry kEntries[] = {
    {"motif:cast-chain", buildCastChain},
    {"motif:transpose-pair", buildTransposePair},
    {"motif:reshape-chain", buildReshapeChain},
    {"motif:half-chain", buildHalfChain},
};

} // namespace

std::span<const CatalogueEntry> chainMotifEntries() {
  return kEntries;
}

} // namespace graphvet::props::typed
