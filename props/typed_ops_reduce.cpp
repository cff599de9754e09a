// Catalogue entries of the reduce family: the ten reductions (axes as
// attribute or input, i64 or i32, a scalar axis, none, or empty with
// noop_with_empty_axes; keepdims; negative axes), ArgMax/ArgMin, Softmax,
// LogSoftmax, Hardmax (with the opset < 13 form), CumSum, MatMul (1-D and
// batched, broadcasting batches) and Gemm (transposes, alpha, beta, C).
#include "props/typed_attrs.h"
#include "props/typed_builder.h"
#include "props/typed_shape.h"

#include <algorithm>

namespace graphvet::props::typed {
namespace {

constexpr DTypeSet kReduceMaxMin = kWideNumericDTypes | dtypeBit(DType::I8) | dtypeBit(DType::U8);

void buildReduce(Builder &b, const std::string &op) {
  Value x = b.input(op == "ReduceMax" || op == "ReduceMin" ? kReduceMaxMin : kWideNumericDTypes);
  const int64_t r = x.rank();
  std::vector<int64_t> axes = pickAxisSubset(static_cast<size_t>(r), b.ch);
  std::vector<bool> reduced(static_cast<size_t>(r), false);
  for (int64_t a : axes)
    reduced[static_cast<size_t>(a)] = true;
  std::vector<int64_t> spelled;
  for (int64_t a : axes)
    spelled.push_back(spellAxis(a, r, b.ch));
  Inputs ins{x};
  AttrMap attrs;
  bool noop = false;
  switch (b.ch.below(6)) {
  case 0: // attribute (opset < 18; no axes reduce everything)
    attrs["axes"] = intList(spelled);
    break;
  case 1:
    ins.push_back(b.ints(spelled));
    break;
  case 2:
    ins.push_back(b.ints(spelled, DType::I32));
    break;
  case 3: // no axes: everything
    spelled.clear();
    break;
  case 4: // empty axes with noop_with_empty_axes: the identity
    ins.push_back(b.ints({}));
    attrs["noop_with_empty_axes"] = AttrValue::ofInt(1);
    spelled.clear();
    noop = true;
    break;
  default: // one axis as a scalar input
    spelled.resize(std::min<size_t>(spelled.size(), 1));
    if (spelled.empty()) {
      ins.push_back(b.ints({}));
    } else {
      ins.push_back(b.ints(spelled, DType::I64, true));
      std::fill(reduced.begin(), reduced.end(), false);
      reduced[static_cast<size_t>(normAxis(spelled[0], r))] = true;
    }
    break;
  }
  if (!noop && b.ch.chance(10))
    attrs["noop_with_empty_axes"] = AttrValue::ofInt(0);
  if (spelled.empty())
    std::fill(reduced.begin(), reduced.end(), !noop);
  const unsigned keep = b.ch.below(3); // 0: absent (1), 1: 0, 2: 1
  if (keep != 0)
    attrs["keepdims"] = AttrValue::ofInt(keep == 2 ? 1 : 0);
  Shape out;
  for (size_t i = 0; i < reduced.size(); ++i) {
    if (!reduced[i])
      out.push_back(x.type.shape[i]);
    else if (keep != 1)
      out.push_back(1);
  }
  b.emit1(op, ins, std::move(attrs), {x.dtype(), out});
}

void buildArg(Builder &b, const std::string &op) {
  Value x = b.input(kNumericDTypes, 1);
  const int64_t r = x.rank();
  const size_t ax = b.ch.below(static_cast<unsigned>(r));
  AttrMap attrs;
  if (ax != 0 || b.ch.chance(50))
    attrs["axis"] = AttrValue::ofInt(spellAxis(static_cast<int64_t>(ax), r, b.ch));
  const unsigned keep = b.ch.below(3);
  if (keep != 0)
    attrs["keepdims"] = AttrValue::ofInt(keep == 2 ? 1 : 0);
  if (b.ch.chance(30))
    attrs["select_last_index"] = AttrValue::ofInt(b.ch.below(2));
  Shape out = x.type.shape;
  if (keep == 1)
    out.erase(out.begin() + static_cast<int64_t>(ax));
  else
    out[ax] = 1;
  b.emit1(op, {x}, std::move(attrs), {DType::I64, out});
}

/// Softmax, LogSoftmax, Hardmax: the axis (default -1), or the opset < 13
/// form (`onnx_opset = 11`: the input flattened to 2-D at axis, default 1).
void buildSoftmax(Builder &b, const std::string &op) {
  Value x = b.input(kFloatDTypes, 1);
  const int64_t r = x.rank();
  AttrMap attrs;
  if (b.ch.chance(15)) {
    attrs["onnx_opset"] = AttrValue::ofInt(11);
    if (r < 2 || b.ch.chance(50))
      attrs["axis"] = AttrValue::ofInt(pickAxis(r, b.ch));
  } else if (!b.ch.chance(30)) {
    attrs["axis"] = AttrValue::ofInt(pickAxis(r, b.ch));
  }
  b.emit1(op, {x}, std::move(attrs), x.type);
}

void buildCumSum(Builder &b, const std::string &op) {
  Value x = b.input(kWideNumericDTypes, 1);
  const int64_t axis = pickAxis(x.rank(), b.ch);
  const bool scalar = b.ch.chance(50);
  Value a = b.ints({axis}, b.ch.chance(30) ? DType::I32 : DType::I64, scalar);
  AttrMap attrs;
  for (const char *name : {"exclusive", "reverse"})
    if (b.ch.chance(30))
      attrs[name] = AttrValue::ofInt(b.ch.below(2));
  b.emit1(op, {x, a}, std::move(attrs), x.type);
}

/// Sometimes more MatMuls on the same input `a` (their own weights, output
/// sizes 1..3), each branch then sometimes followed by the same Add of a
/// bias ([N], [1, N] or a broadcast [1]) and Relu: what
/// combine-parallel-dense combines (or must refuse).
/// The choices come after the first MatMul's, so recipes that stop there
/// build what they built before.
template <class OutShape>
void addParallelBranches(Builder &b, const std::string &op, const Value &a, const Value &first,
                         const Shape &bBatch, int64_t n, OutShape outShape) {
  if (!b.ch.chance(40))
    return;
  const unsigned extra = 1 + b.ch.below(3);
  const bool bias = b.ch.chance(50);
  // The bias shape: [N], [1, N], or [1] (one value broadcast across the
  // branch, which is not a bias along the output axis when N > 1).
  const unsigned biasShape = b.ch.below(3);
  const bool relu = isFloat(a.dtype()) && b.ch.chance(50);
  const int64_t k = a.type.shape.back();
  std::vector<std::pair<Value, int64_t>> branches = {{first, n}};
  for (unsigned i = 0; i < extra; ++i) {
    int64_t ni = 1 + b.ch.below(3);
    Shape out = outShape();
    out.back() = ni;
    if (elementsOf(out) > kMaxValueElements)
      ni = out.back() = 1;
    Shape ws = bBatch;
    ws.push_back(k);
    ws.push_back(ni);
    Value w = b.source({a.dtype(), ws});
    branches.push_back({b.emit1(op, {a, w}, {}, {a.dtype(), out}), ni});
  }
  for (auto &[v, ni] : branches) {
    if (bias) {
      Shape bs = biasShape == 2 ? Shape{1} : Shape{ni};
      if (biasShape == 1 && v.rank() >= 2)
        bs.insert(bs.begin(), 1);
      v = b.emit1("Add", {v, b.source({a.dtype(), bs})}, {}, v.type);
    }
    if (relu)
      b.emit1("Relu", {v}, {}, v.type);
  }
}

/// MatMul(a, b): b solved for a's inner dimension; its batch dimensions
/// broadcast with a's; either may be 1-D.
void buildMatMul(Builder &b, const std::string &op) {
  Value a = b.input(kWideNumericDTypes, 1);
  const Shape &as = a.type.shape;
  const size_t ar = as.size();
  const int64_t k = as.back();
  const Shape aBatch(as.begin(), as.end() - std::min<size_t>(ar, 2));
  const size_t br = 1 + b.ch.below(4);
  const int64_t nTable[] = {1, 2, 3, 0};
  int64_t n = nTable[b.ch.below(4)];
  Shape bBatch;
  if (br > 2) {
    // A suffix of a's batch dimensions (some 1), or new ones.
    for (size_t i = 0; i < br - 2; ++i) {
      size_t fromEnd = br - 2 - i;
      int64_t d = fromEnd <= aBatch.size() ? aBatch[aBatch.size() - fromEnd] : 1 + b.ch.below(2);
      bBatch.push_back(b.ch.chance(30) ? 1 : d);
    }
  }
  auto outShape = [&] {
    Shape o = *broadcastOf(aBatch, bBatch);
    if (ar > 1)
      o.push_back(as[ar - 2]);
    if (br > 1)
      o.push_back(n);
    return o;
  };
  if (elementsOf(outShape()) > kMaxValueElements) {
    n = 1;
    std::fill(bBatch.begin(), bBatch.end(), 1);
  }
  Shape bs = bBatch;
  bs.push_back(k);
  if (br > 1)
    bs.push_back(n);
  uint8_t back = b.nextRef();
  std::optional<Value> bv;
  if (b.ch.below(3) == 0)
    bv = b.find(back, [&](const Value &v) { return v.dtype() == a.dtype() && v.type.shape == bs; });
  if (!bv)
    bv = b.source({a.dtype(), bs});
  Value first = b.emit1(op, {a, *bv}, {}, {a.dtype(), outShape()});
  if (br > 1)
    addParallelBranches(b, op, a, first, bBatch, n, outShape);
}

/// Gemm(A, B[, C]): A made 2-D by a Flatten when it is not; transA, transB,
/// alpha and beta (integral for integer dtypes), C broadcasting to [M, N].
void buildGemm(Builder &b, const std::string &op) {
  Value a = b.input(kWideNumericDTypes);
  if (a.rank() != 2) {
    const Shape &s = a.type.shape;
    const size_t axis = b.ch.below(static_cast<unsigned>(s.size() + 1));
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < s.size(); ++i)
      (i < axis ? outer : inner) *= s[i];
    AttrMap fa;
    fa["axis"] = AttrValue::ofInt(static_cast<int64_t>(axis));
    a = b.emit1("Flatten", {a}, std::move(fa), {a.dtype(), {outer, inner}});
  }
  const bool transA = b.ch.chance(30), transB = b.ch.chance(30);
  const int64_t m = a.type.shape[transA ? 1 : 0], k = a.type.shape[transA ? 0 : 1];
  int64_t n = 1 + b.ch.below(3);
  if (m * n > kMaxValueElements)
    n = 1;
  AttrMap attrs;
  if (transA || b.ch.chance(10))
    attrs["transA"] = AttrValue::ofInt(transA ? 1 : 0);
  if (transB || b.ch.chance(10))
    attrs["transB"] = AttrValue::ofInt(transB ? 1 : 0);
  for (const char *name : {"alpha", "beta"})
    if (b.ch.chance(40)) {
      double v = isFloat(a.dtype()) ? pickFloatAttr({1.0, 0.5, 2.0, -1.0}, b.ch)
                                    : static_cast<double>(static_cast<int>(b.ch.below(4)) - 1);
      attrs[name] = AttrValue::ofFloat(v);
    }
  Value bv = b.source({a.dtype(), transB ? Shape{n, k} : Shape{k, n}});
  Inputs ins{a, bv};
  const Shape cShapes[] = {{}, {n}, {1, n}, {m, 1}, {m, n}, {1}};
  unsigned c = b.ch.below(7);
  if (c > 0)
    ins.push_back(b.source({a.dtype(), cShapes[c - 1]}));
  Value y = b.emit1(op, ins, std::move(attrs), {a.dtype(), {m, n}});
  if (b.ch.chance(20)) // a per-column scale after it (fold-scale-axis)
    perChannelAffine(b, y, 1);
}

constexpr CatalogueEntry kEntries[] = {
    {"ReduceSum", buildReduce},    {"ReduceMean", buildReduce},
    {"ReduceMax", buildReduce},    {"ReduceMin", buildReduce},
    {"ReduceProd", buildReduce},   {"ReduceL1", buildReduce},
    {"ReduceL2", buildReduce},     {"ReduceSumSquare", buildReduce},
    {"ReduceLogSum", buildReduce}, {"ReduceLogSumExp", buildReduce},
    {"ArgMax", buildArg},          {"ArgMin", buildArg},
    {"Softmax", buildSoftmax},     {"LogSoftmax", buildSoftmax},
    {"Hardmax", buildSoftmax},     {"CumSum", buildCumSum},
    {"MatMul", buildMatMul},       {"Gemm", buildGemm},
};

} // namespace

std::span<const CatalogueEntry> reduceEntries() {
  return kEntries;
}

} // namespace graphvet::props::typed
