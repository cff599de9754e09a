// Reductions (ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd,
// ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp) and
// ArgMax/ArgMin: type inference and reference kernels. The family's common
// conventions are in reduce_family.h; reduceOps() below also hands over the
// rows of softmax.cpp and matmul.cpp.
//
// Reductions (ONNX opset <= 18 forms, all accepted):
// - The reduced axes come from the `axes` attribute (old opsets) or from the
//   optional input 1 (ReduceSum-13, the others from opset 18), which is a
//   shape operand (it must be a constant); giving both is an error, as are
//   duplicate or out-of-range axes. No axes (absent or empty) reduce every
//   axis, unless `noop_with_empty_axes` = 1: then the output is the input,
//   unchanged, for every reduction (ONNX: "equivalent to the input").
// - `keepdims` (default 1) keeps reduced axes as size 1.
// - Float results: the accumulated value, then the final step computed in
//   f64 from it and rounded once to the output dtype: Mean divides by the
//   count, L2 takes sqrt, LogSum and LogSumExp take log. Terms: L1 |x|,
//   L2/SumSquare x*x rounded to the accumulation type, LogSumExp exp(x)
//   computed in f64 and rounded to the accumulation type (no max shift, as
//   ONNX 1.12 defines it: it overflows where exp(x) does).
// - Empty reductions (a reduced axis of size 0): Sum, L1, L2, SumSquare give
//   0; Prod 1; LogSum and LogSumExp -inf; Mean NaN for floats and an
//   indeterminate element for integers (division by zero); Max gives -inf (the
//   dtype's minimum for integers) and Min +inf (maximum), ONNX opset 18's
//   choice (ONNX 1.12 leaves it undefined).
// - ReduceMax/ReduceMin: a NaN anywhere gives that (first) NaN, bits kept;
//   +0 is above -0 (IEEE 754-2019 maximum/minimum), so the result does not
//   depend on the order; other results are an input element, bit for bit.
// - Integers: Sum, Prod, L1, SumSquare wrap; Mean is the 64-bit (wrapped)
//   sum divided by the count, truncated toward zero, then narrowed; L2,
//   LogSum and LogSumExp compute in f64 (terms x*x, x, exp(x) summed in f64)
//   and convert like a Cast (truncate; NaN, inf, out of range: indeterminate).
//
// ArgMax/ArgMin: `axis` (default 0), `keepdims` (default 1),
// `select_last_index` (default 0); i64 output. A NaN counts as the extreme for
// both (numpy's argmax/argmin): the first NaN wins, the last one with
// select_last_index. -0 and +0 tie. Over an empty axis the output elements are
// indeterminate (ONNX leaves this undefined).
#include "ir/ops/families.h"
#include "ir/ops/reduce_family.h"

#include <cmath>
#include <cstring>
#include <vector>

namespace graphvet::ops {
namespace {

using reduce_detail::accumulatesInDouble;
using reduce_detail::checkDType;
using reduce_detail::checkInputCount;
using reduce_detail::kNumericTypes;

enum class RKind { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp };

/// Which axes a reduction reduces and the shape it produces.
struct ReducePlan {
  bool noop = false;
  std::vector<bool> reduced;
  Shape outShape;
};

bool makePlan(const Node &n, const Shape &shape, const std::vector<int64_t> &axes, ReducePlan &plan,
              std::string &error) {
  int64_t rank = static_cast<int64_t>(shape.size());
  plan.reduced.assign(shape.size(), axes.empty());
  plan.noop = axes.empty() && attrInt(n, "noop_with_empty_axes", 0) != 0;
  if (plan.noop) {
    plan.reduced.assign(shape.size(), false);
    plan.outShape = shape;
    return true;
  }
  for (int64_t a : axes) {
    auto axis = normalizeAxis(a, rank);
    if (!axis) {
      error = "axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank);
      return false;
    }
    if (plan.reduced[*axis]) {
      error = "axis " + std::to_string(a) + " appears twice in axes";
      return false;
    }
    plan.reduced[*axis] = true;
  }
  bool keep = attrInt(n, "keepdims", 1) != 0;
  plan.outShape.clear();
  for (size_t i = 0; i < shape.size(); ++i) {
    if (!plan.reduced[i])
      plan.outShape.push_back(shape[i]);
    else if (keep)
      plan.outShape.push_back(1);
  }
  return true;
}

/// Input offsets of every combination of the axes selected by `mask` (the
/// others at 0), in increasing row-major order.
std::vector<int64_t> offsetsOver(const Shape &shape, const std::vector<bool> &mask, bool want) {
  std::vector<int64_t> strides = stridesOf(shape);
  std::vector<size_t> axes;
  int64_t count = 1;
  for (size_t i = 0; i < shape.size(); ++i)
    if (mask[i] == want) {
      axes.push_back(i);
      count *= shape[i];
    }
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(count));
  std::vector<int64_t> idx(axes.size(), 0);
  for (int64_t k = 0; k < count; ++k) {
    int64_t off = 0;
    for (size_t j = 0; j < axes.size(); ++j)
      off += idx[j] * strides[axes[j]];
    out.push_back(off);
    for (size_t j = axes.size(); j-- > 0;) {
      if (++idx[j] < shape[axes[j]])
        break;
      idx[j] = 0;
    }
  }
  return out;
}

// ---------------------------------------------------------------- inference

constexpr bool isMaxMin(RKind k) {
  return k == RKind::Max || k == RKind::Min;
}

template <RKind K> bool inferReduce(InferContext &ctx) {
  if (!checkInputCount(ctx, 1, 2))
    return false;
  if (isMaxMin(K)) {
    if (!checkDType(ctx, 0,
                    {DType::I8, DType::U8, DType::I32, DType::U32, DType::I64, DType::U64,
                     DType::F16, DType::BF16, DType::F32, DType::F64}))
      return false;
  } else if (!checkDType(ctx, 0, kNumericTypes)) {
    return false;
  }
  std::vector<int64_t> axes;
  bool hasAttr = ctx.node.attr("axes") != nullptr;
  if (hasAttr) {
    auto a = attrInts(ctx.node, "axes");
    if (!a)
      return ctx.fail("attribute axes of " + ctx.node.type + " must be a list of integers");
    axes = *a;
  }
  if (ctx.has(1)) {
    if (hasAttr)
      return ctx.fail(ctx.node.type + " takes axes as an attribute or as input 1, not both");
    if (!reduce_detail::constantInts(ctx, 1, "axes", axes))
      return false;
  }
  ReducePlan plan;
  std::string error;
  if (!makePlan(ctx.node, ctx.in(0).shape, axes, plan, error))
    return ctx.fail(error);
  ctx.outputs = {TensorType{ctx.in(0).dtype, plan.outShape}};
  return true;
}

// ------------------------------------------------------------------ kernels

std::vector<int64_t> axesOf(const KernelContext &ctx) {
  if (ctx.has(1)) {
    std::vector<int64_t> axes;
    for (int64_t k = 0; k < ctx.in(1).size(); ++k)
      axes.push_back(ctx.in(1).getInt(k));
    return axes;
  }
  return attrInts(ctx.node, "axes").value_or(std::vector<int64_t>{});
}

/// The contributing input indices of each output element, as offsets: input
/// index = base[o] + terms[r].
struct ReduceIndex {
  bool noop;
  std::vector<int64_t> base, terms;
};

ReduceIndex indexFor(const KernelContext &ctx) {
  ReducePlan plan;
  std::string error;
  makePlan(ctx.node, ctx.in(0).shape(), axesOf(ctx), plan, error); // validated by inference
  if (plan.noop)
    return {true, {}, {}};
  return {false, offsetsOver(ctx.in(0).shape(), plan.reduced, false),
          offsetsOver(ctx.in(0).shape(), plan.reduced, true)};
}

bool anyUndef(const Tensor &in, int64_t base, const std::vector<int64_t> &terms) {
  if (!in.anyUndef())
    return false;
  for (int64_t t : terms)
    if (in.isUndef(base + t))
      return true;
  return false;
}

/// A float result of the f64 steps of an integer reduction, converted like a
/// float -> integer Cast.
void storeIntFromDouble(Tensor &out, int64_t o, double v) {
  DType t = out.dtype();
  double r = std::trunc(v);
  bool ok = std::isfinite(r) && r >= static_cast<double>(intMin(t)) &&
            (isSignedInteger(t) ? r < -static_cast<double>(intMin(t))
                                : r < 2.0 * (static_cast<double>(intMax(t) / 2) + 1));
  if (!ok) {
    out.setUndef(o);
    return;
  }
  if (isSignedInteger(t))
    out.setInt(o, static_cast<int64_t>(r));
  else
    out.setInt(o, static_cast<int64_t>(static_cast<uint64_t>(r)));
}

template <RKind K, class Acc> Acc termOf(Acc x) {
  if constexpr (K == RKind::L1)
    return std::fabs(x);
  else if constexpr (K == RKind::L2 || K == RKind::SumSquare)
    return x * x;
  else if constexpr (K == RKind::LogSumExp)
    return static_cast<Acc>(std::exp(static_cast<double>(x)));
  else
    return x;
}

/// The f64 step after accumulation (count = number of terms).
template <RKind K> double finish(double acc, size_t count) {
  if constexpr (K == RKind::Mean)
    return acc / static_cast<double>(count);
  else if constexpr (K == RKind::L2)
    return std::sqrt(acc);
  else if constexpr (K == RKind::LogSum || K == RKind::LogSumExp)
    return std::log(acc);
  else
    return acc;
}

template <RKind K, class Acc> void reduceFloat(KernelContext &ctx, const ReduceIndex &ix) {
  const Tensor &in = ctx.in(0);
  Tensor &out = ctx.out(0);
  for (size_t o = 0; o < ix.base.size(); ++o) {
    int64_t b = ix.base[o];
    if (anyUndef(in, b, ix.terms)) {
      out.setUndef(static_cast<int64_t>(o));
      continue;
    }
    Acc acc = K == RKind::Prod ? Acc(1) : Acc(0);
    for (size_t r = 0; r < ix.terms.size(); ++r) {
      Acc t = termOf<K>(static_cast<Acc>(in.getDouble(b + ix.terms[r])));
      if (r == 0)
        acc = t;
      else if constexpr (K == RKind::Prod)
        acc = acc * t;
      else
        acc = acc + t;
    }
    out.setDouble(static_cast<int64_t>(o), finish<K>(static_cast<double>(acc), ix.terms.size()));
  }
}

template <RKind K> void reduceInt(KernelContext &ctx, const ReduceIndex &ix) {
  const Tensor &in = ctx.in(0);
  Tensor &out = ctx.out(0);
  bool isSigned = isSignedInteger(in.dtype());
  for (size_t o = 0; o < ix.base.size(); ++o) {
    int64_t b = ix.base[o], oi = static_cast<int64_t>(o);
    if (anyUndef(in, b, ix.terms)) {
      out.setUndef(oi);
      continue;
    }
    if constexpr (K == RKind::L2 || K == RKind::LogSum || K == RKind::LogSumExp) {
      double acc = 0;
      for (size_t r = 0; r < ix.terms.size(); ++r) {
        double t = termOf<K>(in.getDouble(b + ix.terms[r]));
        acc = r == 0 ? t : acc + t;
      }
      storeIntFromDouble(out, oi, finish<K>(acc, ix.terms.size()));
    } else {
      uint64_t acc = K == RKind::Prod ? 1 : 0; // wraps mod 2^64
      for (size_t r = 0; r < ix.terms.size(); ++r) {
        uint64_t x = loadUInt(in.dtype(), in.at(b + ix.terms[r]));
        if (isSigned)
          x = static_cast<uint64_t>(in.getInt(b + ix.terms[r]));
        if (K == RKind::L1 && isSigned && static_cast<int64_t>(x) < 0)
          x = 0 - x;
        if constexpr (K == RKind::Prod)
          acc *= x;
        else if constexpr (K == RKind::SumSquare)
          acc += x * x;
        else
          acc += x;
      }
      if constexpr (K == RKind::Mean) {
        if (ix.terms.empty()) {
          out.setUndef(oi);
          continue;
        }
        auto n = static_cast<uint64_t>(ix.terms.size());
        acc = isSigned ? static_cast<uint64_t>(static_cast<int64_t>(acc) / static_cast<int64_t>(n))
                       : acc / n;
      }
      out.setInt(oi, static_cast<int64_t>(acc));
    }
  }
}

/// True when `v` should replace `best` as the maximum (Max) or minimum.
template <RKind K> bool floatBetter(double v, double best) {
  if (std::isnan(best))
    return false;
  if (std::isnan(v))
    return true;
  if (v == best) // ±0: +0 is the maximum, -0 the minimum
    return v == 0 && (K == RKind::Max ? std::signbit(best) && !std::signbit(v)
                                      : !std::signbit(best) && std::signbit(v));
  return K == RKind::Max ? v > best : v < best;
}

template <RKind K> void reduceMaxMin(KernelContext &ctx, const ReduceIndex &ix) {
  const Tensor &in = ctx.in(0);
  Tensor &out = ctx.out(0);
  DType t = in.dtype();
  bool isSigned = isSignedInteger(t);
  size_t bytes = dtypeBytes(t);
  for (size_t o = 0; o < ix.base.size(); ++o) {
    int64_t b = ix.base[o], oi = static_cast<int64_t>(o);
    if (anyUndef(in, b, ix.terms)) {
      out.setUndef(oi);
      continue;
    }
    if (ix.terms.empty()) {
      if (isFloat(t))
        out.setDouble(oi, K == RKind::Max ? -INFINITY : INFINITY);
      else
        out.setInt(oi, K == RKind::Max ? intMin(t) : static_cast<int64_t>(intMax(t)));
      continue;
    }
    int64_t best = b + ix.terms[0];
    for (size_t r = 1; r < ix.terms.size(); ++r) {
      int64_t i = b + ix.terms[r];
      bool better;
      if (isFloat(t))
        better = floatBetter<K>(in.getDouble(i), in.getDouble(best));
      else if (isSigned)
        better = K == RKind::Max ? in.getInt(i) > in.getInt(best) : in.getInt(i) < in.getInt(best);
      else
        better = K == RKind::Max ? loadUInt(t, in.at(i)) > loadUInt(t, in.at(best))
                                 : loadUInt(t, in.at(i)) < loadUInt(t, in.at(best));
      if (better)
        best = i;
    }
    std::memcpy(out.at(oi), in.at(best), bytes);
  }
}

template <RKind K> void reduceKernel(KernelContext &ctx) {
  ReduceIndex ix = indexFor(ctx);
  const Tensor &in = ctx.in(0);
  if (ix.noop) {
    for (int64_t i = 0; i < in.size(); ++i)
      ctx.out(0).copyElement(i, in, i);
    return;
  }
  if constexpr (isMaxMin(K))
    reduceMaxMin<K>(ctx, ix);
  else if (!isFloat(in.dtype()))
    reduceInt<K>(ctx, ix);
  else if (accumulatesInDouble(in.dtype()))
    reduceFloat<K, double>(ctx, ix);
  else
    reduceFloat<K, float>(ctx, ix);
}

// ----------------------------------------------------------- ArgMax, ArgMin

bool inferArg(InferContext &ctx) {
  if (!checkInputCount(ctx, 1, 1) ||
      !checkDType(ctx, 0,
                  {DType::I8, DType::U8, DType::I16, DType::U16, DType::I32, DType::U32, DType::I64,
                   DType::U64, DType::F16, DType::BF16, DType::F32, DType::F64}))
    return false;
  const Shape &shape = ctx.in(0).shape;
  int64_t a = attrInt(ctx.node, "axis", 0);
  auto axis = normalizeAxis(a, static_cast<int64_t>(shape.size()));
  if (!axis)
    return ctx.fail("axis " + std::to_string(a) + " is out of range for rank " +
                    std::to_string(shape.size()));
  Shape out = shape;
  if (attrInt(ctx.node, "keepdims", 1) != 0)
    out[*axis] = 1;
  else
    out.erase(out.begin() + *axis);
  ctx.outputs = {TensorType{DType::I64, out}};
  return true;
}

/// Compares element i against the current best j (-1: none yet) for ArgMax
/// (max = true) or ArgMin; `last` takes ties.
bool argBetter(const Tensor &in, int64_t i, int64_t j, bool max, bool last) {
  if (j < 0)
    return true;
  DType t = in.dtype();
  if (isFloat(t)) {
    double v = in.getDouble(i), b = in.getDouble(j);
    if (std::isnan(b))
      return last && std::isnan(v);
    if (std::isnan(v))
      return true;
    return (max ? v > b : v < b) || (last && v == b);
  }
  if (isSignedInteger(t)) {
    int64_t v = in.getInt(i), b = in.getInt(j);
    return (max ? v > b : v < b) || (last && v == b);
  }
  uint64_t v = loadUInt(t, in.at(i)), b = loadUInt(t, in.at(j));
  return (max ? v > b : v < b) || (last && v == b);
}

template <bool Max> void argKernel(KernelContext &ctx) {
  const Tensor &in = ctx.in(0);
  Tensor &out = ctx.out(0);
  const Shape &shape = in.shape();
  int64_t axis = *normalizeAxis(attrInt(ctx.node, "axis", 0), static_cast<int64_t>(shape.size()));
  bool last = attrInt(ctx.node, "select_last_index", 0) != 0;
  int64_t n = shape[axis], post = 1;
  for (size_t i = static_cast<size_t>(axis) + 1; i < shape.size(); ++i)
    post *= shape[i];
  for (int64_t o = 0; o < out.size(); ++o) {
    int64_t base = (o / post) * n * post + o % post, best = -1;
    bool undef = n == 0;
    for (int64_t k = 0; k < n && !undef; ++k) {
      int64_t i = base + k * post;
      undef = in.isUndef(i);
      if (argBetter(in, i, best, Max, last))
        best = i;
    }
    if (undef)
      out.setUndef(o);
    else
      out.setInt(o, (best - base) / post);
  }
}

constexpr OpInfo kReduceOps[] = {
    {"ReduceSum",
     OpKind::Ordinary,
     1,
     {},
     {},
     false,
     "sum over axes",
     inferReduce<RKind::Sum>,
     reduceKernel<RKind::Sum>,
     false,
     0b10},
    {"ReduceMean",
     OpKind::Ordinary,
     1,
     {},
     {},
     false,
     "mean over axes",
     inferReduce<RKind::Mean>,
     reduceKernel<RKind::Mean>,
     false,
     0b10},
    {"ReduceMax",
     OpKind::Ordinary,
     1,
     {},
     {},
     false,
     "maximum over axes",
     inferReduce<RKind::Max>,
     reduceKernel<RKind::Max>,
     false,
     0b10},
    {"ReduceMin",
     OpKind::Ordinary,
     1,
     {},
     {},
     false,
     "minimum over axes",
     inferReduce<RKind::Min>,
     reduceKernel<RKind::Min>,
     false,
     0b10},
    {"ReduceProd",
     OpKind::Ordinary,
     1,
     {},
     {},
     false,
     "product over axes",
     inferReduce<RKind::Prod>,
     reduceKernel<RKind::Prod>,
     false,
     0b10},
    {"ReduceL1",
     OpKind::Ordinary,
     1,
     {},
     {},
     false,
     "sum of absolute values over axes",
     inferReduce<RKind::L1>,
     reduceKernel<RKind::L1>,
     false,
     0b10},
    {"ReduceL2",
     OpKind::Ordinary,
     1,
     {},
     {},
     false,
     "Euclidean norm over axes",
     inferReduce<RKind::L2>,
     reduceKernel<RKind::L2>,
     false,
     0b10},
    {"ReduceSumSquare",
     OpKind::Ordinary,
     1,
     {},
     {},
     false,
     "sum of squares over axes",
     inferReduce<RKind::SumSquare>,
     reduceKernel<RKind::SumSquare>,
     false,
     0b10},
    {"ReduceLogSum",
     OpKind::Ordinary,
     1,
     {},
     {},
     false,
     "log of the sum over axes",
     inferReduce<RKind::LogSum>,
     reduceKernel<RKind::LogSum>,
     false,
     0b10},
    {"ReduceLogSumExp",
     OpKind::Ordinary,
     1,
     {},
     {},
     false,
     "log of the sum of exps over axes",
     inferReduce<RKind::LogSumExp>,
     reduceKernel<RKind::LogSumExp>,
     false,
     0b10},
    {"ArgMax",
     OpKind::Ordinary,
     1,
     {},
     {},
     false,
     "index of the maximum along an axis",
     inferArg,
     argKernel<true>},
    {"ArgMin",
     OpKind::Ordinary,
     1,
     {},
     {},
     false,
     "index of the minimum along an axis",
     inferArg,
     argKernel<false>},
};

} // namespace

std::span<const OpInfo> reduceOps() {
  static const std::vector<OpInfo> rows = [] {
    std::vector<OpInfo> all(std::begin(kReduceOps), std::end(kReduceOps));
    for (auto part : {reduce_detail::softmaxOps(), reduce_detail::matmulOps()})
      all.insert(all.end(), part.begin(), part.end());
    return all;
  }();
  return rows;
}

} // namespace graphvet::ops
