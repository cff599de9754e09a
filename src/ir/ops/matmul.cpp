// MatMul and Gemm: type inference and reference kernels (part of the reduce
// family, see reduce_family.h). Both take i32, u32, i64, u64, f16, bf16, f32,
// f64 inputs of one dtype.
//
// Dot products: for floats, each product a*b is computed in the accumulation
// type A (f32 for f16/bf16/f32, where it is exact for f16 and bf16; f64 for
// f64) and summed in A over k in increasing order, starting with the first
// product (K = 0 gives +0); integers multiply and add with 64-bit wrap. An
// output element is indeterminate when any element of its row of A or column
// of B (or its C element) is.
//
// MatMul: numpy semantics. A 1-D first input [K] is treated as [1, K] and a
// 1-D second input [K] as [K, 1], the added dimension dropped from the
// result; batch dimensions broadcast (multidirectionally). The dot product
// is rounded once to the output dtype.
//
// Gemm: Y = alpha * A' * B' + beta * C, A' = transA ? A^T : A (2-D), likewise
// B'; C optional, broadcast unidirectionally to [M, N]. alpha and beta
// (default 1.0) are ONNX float32 attributes. Floats: with acc the dot product
// in A, the result is f64(alpha) * f64(acc) + f64(beta) * f64(c), each
// operation in f64 (for f16/bf16/f32 the two products are exact), rounded
// once to the output dtype; without C the last term is absent (alpha = 1
// then gives exactly MatMul's result). beta * C is computed as written even
// when beta = 0 (0 * inf is NaN, as in the formula). Integers: alpha and beta
// must be integral (an inference error otherwise); the result wraps.
#include "ir/ops/kernel_io.h"
#include "ir/ops/reduce_family.h"

#include <cmath>
#include <vector>

namespace graphvet::ops::reduce_detail {
namespace {

bool checkSameDType(InferContext &ctx, size_t i) {
  if (ctx.in(i).dtype == ctx.in(0).dtype)
    return true;
  return ctx.fail("input " + std::to_string(i) + " of " + ctx.node.type + " has dtype " +
                  std::string(dtypeName(ctx.in(i).dtype)) + ", input 0 has " +
                  std::string(dtypeName(ctx.in(0).dtype)));
}

/// One dot product's operands: `n` terms, A at a + k*sa, B at b + k*sb.
struct Dot {
  int64_t a, sa, b, sb, n;
};

bool dotUndef(const Tensor &ta, const Tensor &tb, const Dot &d) {
  if (!ta.anyUndef() && !tb.anyUndef())
    return false;
  for (int64_t k = 0; k < d.n; ++k)
    if (ta.isUndef(d.a + k * d.sa) || tb.isUndef(d.b + k * d.sb))
      return true;
  return false;
}

template <class A> A dotFloat(const Tensor &ta, const Tensor &tb, const Dot &d) {
  A acc = 0;
  for (int64_t k = 0; k < d.n; ++k) {
    A p =
        static_cast<A>(ta.getDouble(d.a + k * d.sa)) * static_cast<A>(tb.getDouble(d.b + k * d.sb));
    acc = k == 0 ? p : acc + p;
  }
  return acc;
}

uint64_t loadWrapped(const Tensor &t, int64_t i) {
  return isSignedInteger(t.dtype()) ? static_cast<uint64_t>(t.getInt(i))
                                    : loadUInt(t.dtype(), t.at(i));
}

uint64_t dotInt(const Tensor &ta, const Tensor &tb, const Dot &d) {
  uint64_t acc = 0;
  for (int64_t k = 0; k < d.n; ++k)
    acc += loadWrapped(ta, d.a + k * d.sa) * loadWrapped(tb, d.b + k * d.sb);
  return acc;
}

/// The dot product rounded once to the output dtype (wrapped for integers).
void storeDot(const Tensor &ta, const Tensor &tb, const Dot &d, Tensor &out, int64_t o) {
  if (dotUndef(ta, tb, d))
    out.setUndef(o);
  else if (!isFloat(ta.dtype()))
    out.setInt(o, static_cast<int64_t>(dotInt(ta, tb, d)));
  else if (accumulatesInDouble(ta.dtype()))
    out.setDouble(o, dotFloat<double>(ta, tb, d));
  else
    out.setDouble(o, static_cast<double>(dotFloat<float>(ta, tb, d)));
}

// ------------------------------------------------ Float products by rows
//
// The fast path of both kernels, for float operands without indeterminate
// elements: the operands are converted to the accumulation type once (not
// per term), and each output row keeps one accumulator per column while k
// advances outside the loop over columns, reading B row by row. Every
// element still sums its products in increasing k from the first one, so
// the bits are dotFloat's.

/// One product's geometry: A'(i, k) = a[i * ai + k * ak], B' as a
/// row-major [K, N] matrix `b` (transposed by the caller when needed).
template <class A> struct RowProduct {
  const A *a;
  int64_t ai, ak;
  const A *b;
  int64_t m, k, n;
};

/// Calls store(i, j, acc) for every element of the product, row by row.
template <class A, class Store> void productByRows(const RowProduct<A> &p, Store store) {
  std::vector<A> acc(static_cast<size_t>(p.n));
  for (int64_t i = 0; i < p.m; ++i) {
    if (p.k == 0)
      std::fill(acc.begin(), acc.end(), A(0)); // no term: +0
    for (int64_t kk = 0; kk < p.k; ++kk) {
      const A av = p.a[i * p.ai + kk * p.ak];
      const A *brow = p.b + kk * p.n;
      if (kk == 0)
        for (size_t j = 0; j < acc.size(); ++j)
          acc[j] = av * brow[j]; // the sum starts at the first product
      else
        for (size_t j = 0; j < acc.size(); ++j) {
          const A prod = av * brow[j];
          acc[j] = acc[j] + prod;
        }
    }
    for (int64_t j = 0; j < p.n; ++j)
      store(i, j, acc[static_cast<size_t>(j)]);
  }
}

/// B' of `b` ([rows, cols] row-major) as a row-major [K, N] matrix:
/// b itself, or its transpose when `trans`.
template <class A> std::vector<A> asKByN(std::vector<A> b, int64_t rows, int64_t cols, bool trans) {
  if (!trans)
    return b;
  std::vector<A> t(b.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      t[static_cast<size_t>(c * rows + r)] = b[static_cast<size_t>(r * cols + c)];
  return t;
}

/// Does the fast path apply: float operands, none indeterminate?
bool fastFloatProduct(const KernelContext &ctx) {
  if (ctx.referenceLoops || !isFloat(ctx.in(0).dtype()))
    return false;
  for (size_t i = 0; i < ctx.inputs.size(); ++i)
    if (ctx.has(i) && ctx.in(i).anyUndef())
      return false;
  return true;
}

// ------------------------------------------------------------------- MatMul

/// MatMul's operand shapes with 1-D inputs promoted to matrices.
struct MatMulShapes {
  Shape a, b, batch, out;
};

bool matmulShapes(const Shape &a0, const Shape &b0, MatMulShapes &s, std::string &error) {
  if (a0.empty() || b0.empty()) {
    error = "MatMul inputs must have rank >= 1";
    return false;
  }
  s.a = a0.size() == 1 ? Shape{1, a0[0]} : a0;
  s.b = b0.size() == 1 ? Shape{b0[0], 1} : b0;
  int64_t k = s.a.back(), kb = s.b[s.b.size() - 2];
  if (k != kb) {
    error = "MatMul inner dimensions differ: " + shapeStr(a0) + " x " + shapeStr(b0);
    return false;
  }
  auto batch =
      broadcastShapes(std::span(s.a).first(s.a.size() - 2), std::span(s.b).first(s.b.size() - 2));
  if (!batch) {
    error = "MatMul batch dimensions do not broadcast: " + shapeStr(a0) + " x " + shapeStr(b0);
    return false;
  }
  s.batch = *batch;
  s.out = s.batch;
  if (a0.size() > 1)
    s.out.push_back(s.a[s.a.size() - 2]);
  if (b0.size() > 1)
    s.out.push_back(s.b.back());
  return true;
}

bool inferMatMul(InferContext &ctx) {
  if (!checkInputCount(ctx, 2, 2) || !checkDType(ctx, 0, kNumericTypes) || !checkSameDType(ctx, 1))
    return false;
  MatMulShapes s;
  std::string error;
  if (!matmulShapes(ctx.in(0).shape, ctx.in(1).shape, s, error))
    return ctx.fail(error);
  ctx.outputs = {TensorType{ctx.in(0).dtype, s.out}};
  return true;
}

/// MatMul's fast path (see "Float products by rows").
template <class A> void matmulByRows(KernelContext &ctx, const MatMulShapes &s) {
  Tensor &out = ctx.out(0);
  const std::vector<A> av = loadAllAs<A>(ctx.in(0)), bv = loadAllAs<A>(ctx.in(1));
  int64_t m = s.a[s.a.size() - 2], k = s.a.back(), n = s.b.back();
  std::span<const int64_t> aBatch = std::span(s.a).first(s.a.size() - 2);
  std::span<const int64_t> bBatch = std::span(s.b).first(s.b.size() - 2);
  int64_t batches = TensorType{DType::F32, s.batch}.numElements();
  for (int64_t bi = 0; bi < batches; ++bi) {
    const A *a = av.data() + broadcastIndex(bi, s.batch, aBatch) * m * k;
    const A *b = bv.data() + broadcastIndex(bi, s.batch, bBatch) * k * n;
    productByRows<A>({a, k, 1, b, m, k, n}, [&](int64_t i, int64_t j, A acc) {
      storeRounded(out, (bi * m + i) * n + j, acc);
    });
  }
}

void matmulKernel(KernelContext &ctx) {
  const Tensor &ta = ctx.in(0), &tb = ctx.in(1);
  Tensor &out = ctx.out(0);
  MatMulShapes s;
  std::string error;
  matmulShapes(ta.shape(), tb.shape(), s, error); // validated by inference
  if (fastFloatProduct(ctx))
    return accumulatesInDouble(ta.dtype()) ? matmulByRows<double>(ctx, s)
                                           : matmulByRows<float>(ctx, s);
  int64_t m = s.a[s.a.size() - 2], k = s.a.back(), n = s.b.back();
  std::span<const int64_t> aBatch = std::span(s.a).first(s.a.size() - 2);
  std::span<const int64_t> bBatch = std::span(s.b).first(s.b.size() - 2);
  int64_t batches = TensorType{DType::F32, s.batch}.numElements();
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t aBase = broadcastIndex(bi, s.batch, aBatch) * m * k;
    int64_t bBase = broadcastIndex(bi, s.batch, bBatch) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        storeDot(ta, tb, Dot{aBase + i * k, 1, bBase + j, n, k}, out, (bi * m + i) * n + j);
  }
}

// --------------------------------------------------------------------- Gemm

struct GemmDims {
  int64_t m, k, n;
  bool transA, transB;
};

GemmDims gemmDims(const Node &node, const Shape &a, const Shape &b) {
  bool ta = attrInt(node, "transA", 0) != 0, tb = attrInt(node, "transB", 0) != 0;
  return {ta ? a[1] : a[0], ta ? a[0] : a[1], tb ? b[0] : b[1], ta, tb};
}

/// True when the float32 attribute value `v` is an integer that fits in int64.
bool integral(double v) {
  double f = static_cast<float>(v);
  return std::isfinite(f) && std::trunc(f) == f && std::fabs(f) < 0x1p63;
}

bool inferGemm(InferContext &ctx) {
  if (!checkInputCount(ctx, 2, 3) || !checkDType(ctx, 0, kNumericTypes) ||
      !checkSameDType(ctx, 1) || (ctx.has(2) && !checkSameDType(ctx, 2)))
    return false;
  const Shape &a = ctx.in(0).shape, &b = ctx.in(1).shape;
  if (a.size() != 2 || b.size() != 2)
    return ctx.fail("Gemm inputs A and B must have rank 2, got " + shapeStr(a) + " and " +
                    shapeStr(b));
  GemmDims d = gemmDims(ctx.node, a, b);
  int64_t kb = d.transB ? b[1] : b[0];
  if (d.k != kb)
    return ctx.fail("Gemm inner dimensions differ: " + std::to_string(d.k) + " and " +
                    std::to_string(kb));
  Shape mn = {d.m, d.n};
  if (ctx.has(2)) {
    const Shape &c = ctx.in(2).shape;
    auto bc = broadcastShapes(c, mn);
    if (c.size() > 2 || !bc || *bc != mn)
      return ctx.fail("Gemm input C " + shapeStr(c) + " does not broadcast to " + shapeStr(mn));
  }
  if (!isFloat(ctx.in(0).dtype) &&
      (!integral(attrFloat(ctx.node, "alpha", 1.0)) || !integral(attrFloat(ctx.node, "beta", 1.0))))
    return ctx.fail("Gemm on integers needs integral alpha and beta");
  ctx.outputs = {TensorType{ctx.in(0).dtype, mn}};
  return true;
}

/// alpha * dot + beta * c for element o (c index ci; -1: no C).
void gemmElement(KernelContext &ctx, const Dot &d, int64_t o, int64_t ci) {
  const Tensor &ta = ctx.in(0), &tb = ctx.in(1);
  Tensor &out = ctx.out(0);
  if (dotUndef(ta, tb, d) || (ci >= 0 && ctx.in(2).isUndef(ci))) {
    out.setUndef(o);
    return;
  }
  // ONNX's alpha and beta are float32 values.
  double alpha = static_cast<float>(attrFloat(ctx.node, "alpha", 1.0));
  double beta = static_cast<float>(attrFloat(ctx.node, "beta", 1.0));
  DType t = ta.dtype();
  if (!isFloat(t)) {
    uint64_t r = static_cast<uint64_t>(static_cast<int64_t>(alpha)) * dotInt(ta, tb, d);
    if (ci >= 0)
      r += static_cast<uint64_t>(static_cast<int64_t>(beta)) * loadWrapped(ctx.in(2), ci);
    out.setInt(o, static_cast<int64_t>(r));
    return;
  }
  double acc = accumulatesInDouble(t) ? dotFloat<double>(ta, tb, d)
                                      : static_cast<double>(dotFloat<float>(ta, tb, d));
  double r = alpha * acc;
  if (ci >= 0)
    r = r + beta * ctx.in(2).getDouble(ci);
  out.setDouble(o, r);
}

/// Gemm's fast path (see "Float products by rows"): alpha * acc + beta * c
/// in f64 as gemmElement computes it.
template <class A> void gemmByRows(KernelContext &ctx, const GemmDims &g) {
  const Tensor &ta = ctx.in(0), &tb = ctx.in(1);
  Tensor &out = ctx.out(0);
  const std::vector<A> av = loadAllAs<A>(ta);
  const std::vector<A> bv = asKByN(loadAllAs<A>(tb), tb.shape()[0], tb.shape()[1], g.transB);
  const double alpha = static_cast<float>(attrFloat(ctx.node, "alpha", 1.0));
  const double beta = static_cast<float>(attrFloat(ctx.node, "beta", 1.0));
  const Tensor *c = ctx.has(2) ? &ctx.in(2) : nullptr;
  const Shape mn = {g.m, g.n};
  const int64_t aCols = ta.shape()[1];
  productByRows<A>(
      {av.data(), g.transA ? 1 : aCols, g.transA ? aCols : 1, bv.data(), g.m, g.k, g.n},
      [&](int64_t i, int64_t j, A acc) {
        const int64_t o = i * g.n + j;
        double r = alpha * static_cast<double>(acc);
        if (c)
          r = r + beta * c->getDouble(broadcastIndex(o, mn, c->shape()));
        out.setDouble(o, r);
      });
}

void gemmKernel(KernelContext &ctx) {
  const Tensor &ta = ctx.in(0), &tb = ctx.in(1);
  GemmDims g = gemmDims(ctx.node, ta.shape(), tb.shape());
  if (fastFloatProduct(ctx))
    return accumulatesInDouble(ta.dtype()) ? gemmByRows<double>(ctx, g) : gemmByRows<float>(ctx, g);
  // Element (i, k) of A' and (k, j) of B' in row-major A and B.
  int64_t aCols = ta.shape()[1], bCols = tb.shape()[1];
  int64_t aRow = g.transA ? 1 : aCols, aStep = g.transA ? aCols : 1;
  int64_t bCol = g.transB ? bCols : 1, bStep = g.transB ? 1 : bCols;
  Shape mn = {g.m, g.n};
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) {
      int64_t o = i * g.n + j;
      int64_t ci = ctx.has(2) ? broadcastIndex(o, mn, ctx.in(2).shape()) : -1;
      gemmElement(ctx, Dot{i * aRow, aStep, j * bCol, bStep, g.k}, o, ci);
    }
}

constexpr OpInfo kMatMulOps[] = {
    {"MatMul",
     OpKind::Ordinary,
     1,
     {},
     {},
     false,
     "matrix product (numpy semantics)",
     inferMatMul,
     matmulKernel},
    {"Gemm",
     OpKind::Ordinary,
     1,
     {},
     {},
     false,
     "alpha * A' * B' + beta * C",
     inferGemm,
     gemmKernel},
};

} // namespace

std::span<const OpInfo> matmulOps() {
  return kMatMulOps;
}

} // namespace graphvet::ops::reduce_detail
