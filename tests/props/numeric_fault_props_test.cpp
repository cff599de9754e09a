// The planted faults of issue 26 as properties of the check (the `approx`
// contract; the combine-parallel-dense and legalize faults are exact ones), each
// a pair of graphs written here independently of the passes' code: random
// parameters (statistics and scales of random signs, input values) give an
// ORIGINAL graph, its correct rewrite -- `graphvet check --pair` under the
// approx contract must call it sound -- and the faulty rewrite, which the
// check must reject whenever the fault moves an output by more than a
// margin far above the derived bound (the values here are at most ~30, so
// the f32 bound is below 1e-4 and the margin is 1e-2; an unobservable draw
// is tagged and not asserted).
#include "prop_support.h"

#include "ir/contract.h"
#include "ir/parser.h"
#include "oracle/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace graphvet::props {
namespace {

/// The smallest output movement a fault must make to be asserted.
constexpr double kObservable = 1e-2;

/// `ORIGINAL OPTIMIZED --contract approx --no-z3`, as `graphvet check --pair`.
oracle::CheckResult checkPair(const std::string &original, const std::string &optimized) {
  std::string errors;
  std::optional<Module> m = parseOrReport(original, "<original>", errors);
  RC_LOG() << "original:\n" << original << errors;
  RC_ASSERT(m.has_value());
  oracle::CheckOptions co;
  co.useZ3 = false;
  co.numStates = 2;
  co.contract = NumericContract::Approx;
  oracle::CheckResult r = oracle::checkRefinementOfText(*m, optimized, co);
  RC_LOG() << "optimized:\n" << optimized << oracle::formatResult(r);
  return r;
}

void assertSound(const std::string &original, const std::string &optimized) {
  RC_ASSERT(checkPair(original, optimized).verdict == oracle::Verdict::Sound);
}

/// Asserts a violation when the fault moves some output by `moved` >= the
/// margin; tags the draw either way.
void assertCaught(const char *fault, double moved, const std::string &original,
                  const std::string &faulty) {
  bool observable = moved >= kObservable;
  RC_TAG(std::string(fault) + (observable ? ": observable" : ": not observable"));
  if (observable)
    RC_ASSERT(checkPair(original, faulty).verdict == oracle::Verdict::Violation);
}

/// Multiples of 1/8 in [lo, hi] (exact in f16 and f32, printed exactly).
double eighths(int lo, int hi) {
  return *rc::gen::inRange(lo * 8, hi * 8 + 1) / 8.0;
}

/// A magnitude in [0.5, 2] with a random sign.
double signedScale() {
  double v = *rc::gen::inRange(4, 17) / 8.0;
  return *rc::gen::arbitrary<bool>() ? -v : v;
}

std::vector<double> values(size_t n, int lo, int hi) {
  std::vector<double> v(n);
  for (double &x : v)
    x = eighths(lo, hi);
  return v;
}

std::string list(const std::vector<double> &v) {
  std::string s;
  for (double x : v)
    s += (s.empty() ? "" : ", ") + fmt::format("{:.17g}", x);
  return s;
}

std::string shape(const std::vector<int64_t> &dims) {
  std::string s;
  for (int64_t d : dims)
    s += (s.empty() ? "" : ", ") + std::to_string(d);
  return "[" + s + "]";
}

std::string constant(const std::string &name, const char *dtype, const std::vector<int64_t> &dims,
                     const std::vector<double> &v) {
  return fmt::format("  {} = Const() {{value = {}{} {{{}}}}}\n", name, dtype, shape(dims), list(v));
}

double maxDistance(const std::vector<double> &a, const std::vector<double> &b) {
  double d = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    d = std::max(d, std::fabs(a[i] - b[i]));
  return d;
}

// ---- BatchNormalization folded into a per-channel Mul and Add ------------

struct BatchNormCase {
  int64_t c = 2; ///< channels; also the last axis (W = C)
  std::vector<double> x, scale, bias, mean, var;
  double eps = 0.25;
  std::vector<int64_t> dims() const { return {1, c, 2, c}; }
  size_t channelOf(size_t i) const { return (i / static_cast<size_t>(2 * c)) % c; }
  size_t lastOf(size_t i) const { return i % static_cast<size_t>(c); }
};

BatchNormCase genBatchNorm() {
  BatchNormCase b;
  b.c = *rc::gen::inRange<int64_t>(2, 4);
  size_t n = static_cast<size_t>(2 * b.c * b.c);
  b.x = values(n, -4, 4);
  for (int64_t k = 0; k < b.c; ++k) {
    b.scale.push_back(signedScale());
    double bias = *rc::gen::inRange(2, 17) / 8.0;
    b.bias.push_back(*rc::gen::arbitrary<bool>() ? -bias : bias);
    b.mean.push_back(eighths(-2, 2));
    b.var.push_back(*rc::gen::inRange(1, 33) / 16.0);
  }
  b.eps = *rc::gen::element(0.25, 0.5, 1.0);
  return b;
}

std::string batchNormOriginal(const BatchNormCase &b, const char *dtype) {
  std::vector<int64_t> c{b.c};
  return fmt::format("graph bn {{\n{}{}{}{}{}  bn = BatchNormalization(x, scale, bias, mean, var) "
                     "{{epsilon = {}}}\n  out = NetOutput(bn)\n}}\n",
                     constant("x", dtype, b.dims(), b.x), constant("scale", dtype, c, b.scale),
                     constant("bias", dtype, c, b.bias), constant("mean", dtype, c, b.mean),
                     constant("var", dtype, c, b.var), b.eps);
}

/// x * s + t with per-channel constants of `constDims` in `constType`.
std::string mulAdd(const BatchNormCase &b, const char *dtype, const char *constType,
                   const std::vector<int64_t> &constDims, const std::vector<double> &s,
                   const std::vector<double> &t) {
  return fmt::format(
      "graph bn {{\n{}{}{}  m = Mul(x, s)\n  y = Add(m, t)\n  out = NetOutput(y)\n}}\n",
      constant("x", dtype, b.dims(), b.x), constant("s", constType, constDims, s),
      constant("t", constType, constDims, t));
}

/// Per-element y = x * s[axis] + t[axis] in f64, `lastAxis` picking W.
std::vector<double> evalMulAdd(const BatchNormCase &b, const std::vector<double> &s,
                               const std::vector<double> &t, bool lastAxis = false) {
  std::vector<double> y(b.x.size());
  for (size_t i = 0; i < y.size(); ++i) {
    size_t k = lastAxis ? b.lastOf(i) : b.channelOf(i);
    y[i] = b.x[i] * s[k] + t[k];
  }
  return y;
}

GRAPHVET_PROP(NumericFaultProps, BatchNormFoldFaults, 100, ()) {
  const BatchNormCase b = genBatchNorm();
  const std::vector<int64_t> nchw{b.c, 1, 1}, nhwc{b.c};
  std::vector<double> s(b.c), t(b.c), sEps(b.c), tEps(b.c), sNoScale(b.c), tNoScale(b.c),
      tNoBias(b.c);
  for (size_t k = 0; k < static_cast<size_t>(b.c); ++k) {
    s[k] = b.scale[k] / std::sqrt(b.var[k] + b.eps);
    t[k] = b.bias[k] - b.mean[k] * s[k];
    sEps[k] = b.scale[k] / (std::sqrt(b.var[k]) + b.eps); // epsilon outside the square root
    tEps[k] = b.bias[k] - b.mean[k] * sEps[k];
    sNoScale[k] = 1 / std::sqrt(b.var[k] + b.eps); // scale dropped
    tNoScale[k] = b.bias[k] - b.mean[k] * sNoScale[k];
    tNoBias[k] = -b.mean[k] * s[k]; // bias dropped
  }
  const std::string original = batchNormOriginal(b, "f32");
  const std::vector<double> good = evalMulAdd(b, s, t);
  assertSound(original, mulAdd(b, "f32", "f32", nchw, s, t));
  assertCaught("epsilon outside sqrt", maxDistance(good, evalMulAdd(b, sEps, tEps)), original,
               mulAdd(b, "f32", "f32", nchw, sEps, tEps));
  assertCaught("scale dropped", maxDistance(good, evalMulAdd(b, sNoScale, tNoScale)), original,
               mulAdd(b, "f32", "f32", nchw, sNoScale, tNoScale));
  assertCaught("bias dropped", maxDistance(good, evalMulAdd(b, s, tNoBias)), original,
               mulAdd(b, "f32", "f32", nchw, s, tNoBias));
  // NHWC-shaped constants ([C]) on NCHW data broadcast along W (= C here).
  assertCaught("NCHW vs NHWC axis", maxDistance(good, evalMulAdd(b, s, t, true)), original,
               mulAdd(b, "f32", "f32", nhwc, s, t));
}

GRAPHVET_PROP(NumericFaultProps, BatchNormFoldStaysInTheDataDtype, 100, ()) {
  const BatchNormCase b = genBatchNorm();
  const std::vector<int64_t> nchw{b.c, 1, 1};
  std::vector<double> s(b.c), t(b.c);
  for (size_t k = 0; k < static_cast<size_t>(b.c); ++k) {
    s[k] = b.scale[k] / std::sqrt(b.var[k] + b.eps);
    t[k] = b.bias[k] - b.mean[k] * s[k];
  }
  const std::string original = batchNormOriginal(b, "f16");
  // f16 constants (each rounded once from the f64 value by the parser).
  assertSound(original, mulAdd(b, "f16", "f16", nchw, s, t));
  // f32 constants in the f16 graph: Mul's operands disagree (invalid output).
  oracle::CheckResult r = checkPair(original, mulAdd(b, "f16", "f32", nchw, s, t));
  RC_ASSERT(r.verdict == oracle::Verdict::Violation);
  RC_ASSERT(!r.violations.empty() && r.violations.front().kind == "invalid-output");
}

// ---- A channel scale moved through Relu ------------------------------------

GRAPHVET_PROP(NumericFaultProps, ScaleThroughRelu, 100, ()) {
  const int64_t c = *rc::gen::inRange<int64_t>(1, 4);
  const std::vector<int64_t> dims{1, c, 2, 2}, sdims{c, 1, 1};
  const std::vector<double> x = values(static_cast<size_t>(4 * c), -4, 4);
  std::vector<double> positive(c);
  for (double &v : positive)
    v = std::fabs(signedScale());
  std::vector<double> negative = positive;
  const size_t flipped = static_cast<size_t>(*rc::gen::inRange<int64_t>(0, c));
  negative[flipped] = -negative[flipped];
  auto before = [&](const std::vector<double> &s) {
    return fmt::format("graph g {{\n{}{}  m = Mul(x, s)\n  r = Relu(m)\n  out = NetOutput(r)\n}}\n",
                       constant("x", "f32", dims, x), constant("s", "f32", sdims, s));
  };
  auto after = [&](const std::vector<double> &s) {
    return fmt::format("graph g {{\n{}{}  r = Relu(x)\n  m = Mul(r, s)\n  out = NetOutput(m)\n}}\n",
                       constant("x", "f32", dims, x), constant("s", "f32", sdims, s));
  };
  // Relu(x * s) = Relu(x) * s for s > 0 only.
  assertSound(before(positive), after(positive));
  double moved = 0; // Relu(x s) - Relu(x) s = |x| |s| on the flipped channel, x != 0
  for (size_t i = 0; i < x.size(); ++i)
    if (i / 4 == flipped)
      moved = std::max(moved, std::fabs(x[i]) * std::fabs(negative[flipped]));
  assertCaught("negative scale through Relu", moved, before(negative), after(negative));
}

// ---- A scale after a Conv folded into its weights and bias ----------------

struct ConvCase {
  int64_t c = 2; ///< input and output channels (equal, so the wrong axis fits)
  std::vector<double> x, w, b, s;
};

/// Conv (1 x c x 3 x 3 input, c x c x 2 x 2 weights, no padding) in f64.
std::vector<double> evalConv(const ConvCase &k, const std::vector<double> &w,
                             const std::vector<double> &b) {
  const size_t c = static_cast<size_t>(k.c);
  std::vector<double> y(c * 4);
  for (size_t o = 0; o < c; ++o)
    for (size_t i = 0; i < 2; ++i)
      for (size_t j = 0; j < 2; ++j) {
        double acc = b[o];
        for (size_t ci = 0; ci < c; ++ci)
          for (size_t ki = 0; ki < 2; ++ki)
            for (size_t kj = 0; kj < 2; ++kj)
              acc += k.x[ci * 9 + (i + ki) * 3 + (j + kj)] * w[((o * c + ci) * 2 + ki) * 2 + kj];
        y[o * 4 + i * 2 + j] = acc;
      }
  return y;
}

GRAPHVET_PROP(NumericFaultProps, ConvScaleFoldFaults, 100, ()) {
  ConvCase k;
  k.c = *rc::gen::inRange<int64_t>(2, 4);
  const size_t c = static_cast<size_t>(k.c);
  k.x = values(c * 9, -2, 2);
  k.w = values(c * c * 4, -1, 1);
  k.b = values(c, -2, 2);
  for (size_t o = 0; o < c; ++o)
    k.s.push_back(signedScale());
  const std::vector<int64_t> xd{1, k.c, 3, 3}, wd{k.c, k.c, 2, 2}, bd{k.c}, sd{k.c, 1, 1};
  // The weights scaled along O (right) or I (wrong); the bias rescaled or not.
  std::vector<double> wO(k.w), wI(k.w), bScaled(k.b);
  for (size_t o = 0; o < c; ++o)
    for (size_t ci = 0; ci < c; ++ci)
      for (size_t q = 0; q < 4; ++q) {
        wO[(o * c + ci) * 4 + q] = k.w[(o * c + ci) * 4 + q] * k.s[o];
        wI[(o * c + ci) * 4 + q] = k.w[(o * c + ci) * 4 + q] * k.s[ci];
      }
  for (size_t o = 0; o < c; ++o)
    bScaled[o] = k.b[o] * k.s[o];
  const std::string original = fmt::format(
      "graph g {{\n{}{}{}{}  y = Conv(x, w, b)\n  m = Mul(y, s)\n  out = NetOutput(m)\n}}\n",
      constant("x", "f32", xd, k.x), constant("w", "f32", wd, k.w), constant("b", "f32", bd, k.b),
      constant("s", "f32", sd, k.s));
  auto folded = [&](const std::vector<double> &w, const std::vector<double> &b) {
    return fmt::format("graph g {{\n{}{}{}  y = Conv(x, w, b)\n  out = NetOutput(y)\n}}\n",
                       constant("x", "f32", xd, k.x), constant("w", "f32", wd, w),
                       constant("b", "f32", bd, b));
  };
  const std::vector<double> good = evalConv(k, wO, bScaled);
  assertSound(original, folded(wO, bScaled));
  assertCaught("scale along I instead of O", maxDistance(good, evalConv(k, wI, bScaled)), original,
               folded(wI, bScaled));
  assertCaught("bias not rescaled", maxDistance(good, evalConv(k, wO, k.b)), original,
               folded(wO, k.b));
}

// ---- A reduction across a layout change -----------------------------------

GRAPHVET_PROP(NumericFaultProps, ReduceAxisRemappedAcrossLayout, 100, ()) {
  const int64_t c = *rc::gen::inRange<int64_t>(2, 4), h = *rc::gen::inRange<int64_t>(2, 4);
  const std::vector<int64_t> dims{1, c, h, 2};
  const std::vector<double> x = values(static_cast<size_t>(c * h * 2), -4, 4);
  const std::string original =
      fmt::format("graph g {{\n{}  r = ReduceMean(x) {{axes = [1], keepdims = 1}}\n"
                  "  out = NetOutput(r)\n}}\n",
                  constant("x", "f32", dims, x));
  // NCHW -> NHWC, reduce C (axis 3 there), back to NCHW.
  auto viaNhwc = [&](int64_t axis) {
    return fmt::format("graph g {{\n{}  t = Transpose(x) {{perm = [0, 2, 3, 1]}}\n"
                       "  r = ReduceMean(t) {{axes = [{}], keepdims = 1}}\n"
                       "  b = Transpose(r) {{perm = [0, 3, 1, 2]}}\n  out = NetOutput(b)\n}}\n",
                       constant("x", "f32", dims, x), axis);
  };
  assertSound(original, viaNhwc(3));
  // The axis left at 1 reduces H of the NHWC tensor: a [1, C, 1, 2] result
  // in place of [1, 1, H, 2], of another size unless H = C (then compared
  // element by element in row-major order: (h, w) against (c, w)).
  const size_t cs = static_cast<size_t>(c), hs = static_cast<size_t>(h);
  std::vector<double> good(hs * 2), wrong(cs * 2);
  for (size_t ci = 0; ci < cs; ++ci)
    for (size_t hi = 0; hi < hs; ++hi)
      for (size_t w = 0; w < 2; ++w) {
        double v = x[(ci * hs + hi) * 2 + w];
        good[hi * 2 + w] += v / static_cast<double>(c);
        wrong[ci * 2 + w] += v / static_cast<double>(h);
      }
  const double moved = cs != hs ? 1.0 : maxDistance(good, wrong);
  assertCaught("reduce axis not remapped", moved, original, viaNhwc(1));
}

// ---- LayerNormalization's negative axis -----------------------------------

/// LayerNormalization in f64 over the flattened axes from `from` on.
std::vector<double> evalLayerNorm(const std::vector<double> &x, const std::vector<int64_t> &dims,
                                  int64_t from, const std::vector<double> &scale, double eps) {
  size_t cols = 1;
  for (size_t a = static_cast<size_t>(from); a < dims.size(); ++a)
    cols *= static_cast<size_t>(dims[a]);
  std::vector<double> y(x.size());
  for (size_t r = 0; r < x.size() / cols; ++r) {
    double mean = 0, var = 0;
    for (size_t j = 0; j < cols; ++j)
      mean += x[r * cols + j] / static_cast<double>(cols);
    for (size_t j = 0; j < cols; ++j)
      var += (x[r * cols + j] - mean) * (x[r * cols + j] - mean) / static_cast<double>(cols);
    for (size_t j = 0; j < cols; ++j)
      y[r * cols + j] =
          (x[r * cols + j] - mean) / std::sqrt(var + eps) * scale[(r * cols + j) % scale.size()];
  }
  return y;
}

GRAPHVET_PROP(NumericFaultProps, LayerNormNegativeAxisRank, 100, ()) {
  const int64_t rows = *rc::gen::inRange<int64_t>(2, 4), k = *rc::gen::inRange<int64_t>(2, 4);
  const std::vector<int64_t> dims{rows, 2, k}, sdims{2, k};
  const std::vector<double> x = values(static_cast<size_t>(rows * 2 * k), -4, 4);
  std::vector<double> scale(static_cast<size_t>(2 * k));
  for (double &v : scale)
    v = signedScale();
  const double eps = 0.25;
  const std::string original =
      fmt::format("graph g {{\n{}{}  ln = LayerNormalization(x, s) {{axis = -2, epsilon = {}}}\n"
                  "  out = NetOutput(ln)\n}}\n",
                  constant("x", "f32", dims, x), constant("s", "f32", sdims, scale), eps);
  auto decomposed = [&](const std::string &axes) {
    return fmt::format(
        "graph g {{\n{}{}  mu = ReduceMean(x) {{axes = {}, keepdims = 1}}\n"
        "  d = Sub(x, mu)\n  sq = Mul(d, d)\n"
        "  var = ReduceMean(sq) {{axes = {}, keepdims = 1}}\n"
        "  e = Const() {{value = f32[] {{{}}}}}\n  ve = Add(var, e)\n"
        "  sd = Sqrt(ve)\n  z = Div(d, sd)\n  y = Mul(z, s)\n  out = NetOutput(y)\n}}\n",
        constant("x", "f32", dims, x), constant("s", "f32", sdims, scale), axes, axes, eps);
  };
  // axis -2 of rank 3 is axis 1; against rank 2 it would be axis 0.
  assertSound(original, decomposed("[1, 2]"));
  const double moved =
      maxDistance(evalLayerNorm(x, dims, 1, scale, eps), evalLayerNorm(x, dims, 0, scale, eps));
  assertCaught("negative axis vs wrong rank", moved, original, decomposed("[0, 1, 2]"));
}

// ---- keepdims = 0 ------------------------------------------------------------

GRAPHVET_PROP(NumericFaultProps, KeepdimsZeroHonoured, 100, ()) {
  const int64_t n = *rc::gen::inRange<int64_t>(2, 5);
  const std::vector<int64_t> dims{n, n};
  const std::vector<double> x = values(static_cast<size_t>(n * n), -4, 4);
  const std::string original =
      fmt::format("graph g {{\n{}  m = ReduceMean(x) {{axes = [1], keepdims = 0}}\n"
                  "  y = Add(x, m)\n  out = NetOutput(y)\n}}\n",
                  constant("x", "f32", dims, x));
  // ReduceMean as ReduceSum / n; keepdims 0 gives [n] (broadcast along the
  // last axis), keepdims 1 [n, 1] (along the first).
  auto rewritten = [&](int keepdims) {
    return fmt::format("graph g {{\n{}  ax = Const() {{value = i64[1] {{1}}}}\n"
                       "  s = ReduceSum(x, ax) {{keepdims = {}}}\n"
                       "  k = Const() {{value = f32[] {{{}}}}}\n  m = Div(s, k)\n"
                       "  y = Add(x, m)\n  out = NetOutput(y)\n}}\n",
                       constant("x", "f32", dims, x), keepdims, n);
  };
  assertSound(original, rewritten(0));
  // y[i][j] = x[i][j] + mean(row j) vs + mean(row i).
  std::vector<double> rowMean(static_cast<size_t>(n));
  for (size_t i = 0; i < x.size(); ++i)
    rowMean[i / static_cast<size_t>(n)] += x[i] / static_cast<double>(n);
  double moved = 0;
  for (double a : rowMean)
    for (double b : rowMean)
      moved = std::max(moved, std::fabs(a - b));
  assertCaught("keepdims = 0 ignored", moved, original, rewritten(1));
}

// ---- combine-parallel-dense: a follow-on with a second consumer ----------

GRAPHVET_PROP(NumericFaultProps, CombinedDenseKeepsSharedFollowOnInput, 100, ()) {
  // Three MatMuls on x; branch 1 is followed by Relu but its MatMul result is
  // also a graph output. Combining the MatMuls is exact; absorbing the Relu
  // into the combined op hands that output the Relu's result instead.
  const std::vector<int64_t> xd{2, 2}, wd{2, 2}, cd{2, 6};
  std::vector<double> x = values(4, -4, 4);
  std::vector<std::vector<double>> w(3);
  for (auto &wi : w)
    wi = values(4, -2, 2);
  // y1[0][0] = x[0] * w1[0][0] + x[1] * w1[1][0] made negative, so that the
  // absorbed Relu is observable in every draw.
  x[0] = 1 + std::fabs(x[0]);
  x[1] = 0;
  w[0][0] = -0.5 - std::fabs(w[0][0]);
  std::vector<double> combined; // [2, 6]: row r holds w1[r], w2[r], w3[r]
  for (size_t r = 0; r < 2; ++r)
    for (const auto &wi : w)
      for (size_t c = 0; c < 2; ++c)
        combined.push_back(wi[r * 2 + c]);
  const std::string original = fmt::format(
      "graph g {{\n{}{}{}{}  y1 = MatMul(x, w1)\n  y2 = MatMul(x, w2)\n  y3 = MatMul(x, w3)\n"
      "  r1 = Relu(y1)\n  out = NetOutput(r1, y1, y2, y3)\n}}\n",
      constant("x", "f32", xd, x), constant("w1", "f32", wd, w[0]), constant("w2", "f32", wd, w[1]),
      constant("w3", "f32", wd, w[2]));
  auto combinedGraph = [&](bool absorbRelu) {
    return fmt::format("graph g {{\n{}{}  y = MatMul(x, w)\n{}"
                       "  sp = Split({}) {{axis = 1, outputs = 3, split = [2, 2, 2]}}\n{}"
                       "  out = NetOutput({}, sp, sp:1, sp:2)\n}}\n",
                       constant("x", "f32", xd, x), constant("w", "f32", cd, combined),
                       absorbRelu ? "  r = Relu(y)\n" : "", absorbRelu ? "r" : "y",
                       absorbRelu ? "" : "  r1 = Relu(sp)\n", absorbRelu ? "sp" : "r1");
  };
  assertSound(original, combinedGraph(false));
  double moved = 0; // a negative y1 element: Relu made it 0
  for (size_t r = 0; r < 2; ++r)
    for (size_t c = 0; c < 2; ++c) {
      double y = x[r * 2] * w[0][c] + x[r * 2 + 1] * w[0][2 + c];
      moved = std::max(moved, -y);
    }
  assertCaught("follow-on with a second consumer absorbed", moved, original, combinedGraph(true));
}

// ---- legalize: Conv channels padded to a multiple of 4 --------------------

GRAPHVET_PROP(NumericFaultProps, LegalizedConvPaddingAndSlice, 100, ()) {
  // 3 input and 2 output channels padded to 4 and 4: data by +0, weights by
  // -0 (each added term +0 * -0 = -0 leaves every sum as it was), the two
  // extra output channels sliced off. Faults: padding by 1, and no Slice.
  const std::vector<int64_t> xd{1, 3, 2, 2}, wd{2, 3, 1, 1};
  const std::vector<double> x = values(12, -4, 4), w = values(6, -2, 2);
  const std::string original =
      fmt::format("graph g {{\n{}{}  y = Conv(x, w)\n  out = NetOutput(y)\n}}\n",
                  constant("x", "f32", xd, x), constant("w", "f32", wd, w));
  auto legalized = [&](double pad, bool slice) {
    std::vector<double> wp; // [4, 4, 1, 1]
    for (size_t o = 0; o < 4; ++o)
      for (size_t i = 0; i < 4; ++i)
        wp.push_back(o < 2 && i < 3 ? w[o * 3 + i] : (pad == 0 ? -0.0 : pad));
    return fmt::format(
        "graph g {{\n{}{}  pads = Const() {{value = i64[8] {{0, 0, 0, 0, 0, 1, 0, 0}}}}\n"
        "  cv = Const() {{value = f32[] {{{}}}}}\n  xp = Pad(x, pads, cv)\n"
        "  yp = Conv(xp, wp)\n{}  out = NetOutput({})\n}}\n",
        constant("x", "f32", xd, x), constant("wp", "f32", {4, 4, 1, 1}, wp), pad,
        slice ? "  st = Const() {value = i64[1] {0}}\n  en = Const() {value = i64[1] {2}}\n"
                "  ax = Const() {value = i64[1] {1}}\n  y = Slice(yp, st, en, ax)\n"
              : "",
        slice ? "y" : "yp");
  };
  assertSound(original, legalized(0, true));
  // Padding by 1 adds 1 * 1 to every output element; no Slice changes the
  // output's shape: both always observable.
  assertCaught("legalized Conv padded with 1", 1.0, original, legalized(1, true));
  assertCaught("legalized Conv missing its output slice", 1.0, original, legalized(0, false));
}

} // namespace
} // namespace graphvet::props
