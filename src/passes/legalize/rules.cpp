// legalize, the element-wise and matrix rules: Gemm into MatMul (+ Add), HardSwish into
// HardSigmoid and Mul, Clip of a half dtype through f32. Each is bit-exact by the kernels
// of src/ir/ops (the comments give the argument); anything else is refused.
#include "ir/op_def.h"
#include "passes/legalize/internal.h"

#include <fmt/format.h>

namespace graphvet::legalize {
namespace {

bool isHalf(DType t) {
  return t == DType::F16 || t == DType::BF16;
}

RuleResult refused(std::string tag, std::string why) {
  return {Refusal{std::move(tag), std::move(why)}, {}};
}

} // namespace

// Gemm: Y = alpha * A' * B' + beta * C. The kernel (matmul.cpp) sums the dot product `acc`
// in f32 (f16/bf16/f32) or f64, then computes alpha * acc + beta * c in f64 and rounds once.
// - f32/f64 without C: MatMul rounds acc once; alpha != 1 adds Mul(alpha) in the dtype,
//   one rounding of the exact f64 product alpha * acc (24 x 24 bits), as the kernel.
// - f32/f64 with C and alpha = beta = 1: Add; for f32 the f64 sum rounded to f32 equals the
//   f32 sum (53 >= 2 * 24 + 2: double rounding is innocuous for +).
// - f16/bf16, and f32 with C and alpha or beta != 1: the kernel's own arithmetic spelled
//   out, MatMul in f32 (the products of halves are exact there: acc is the same), Cast to
//   f64, Mul by alpha, Add beta * C in f64, Cast back: the same operations, the same
//   roundings. Without C and alpha = 1 a half MatMul rounds acc once, as the kernel.
// - integers: alpha = beta = 1 only (MatMul and Add wrap as the kernel's 64-bit sum does).
namespace {

/// What the Gemm rule decided: the form and the values it needs.
struct GemmPlan {
  DType t = DType::F32;
  bool transA = false, transB = false, hasC = false;
  double alpha = 1, beta = 1; ///< the f32 attribute values
  /// MatMul (+ Mul alpha) (+ Add C) in the data's dtype; otherwise the kernel's f64 steps.
  bool direct = true;
  bool unitAlpha() const { return alpha == 1.0; }
  bool unitBeta() const { return !hasC || beta == 1.0; }
};

/// The (op, dtype) pairs the rewrite of `p` creates.
std::vector<std::pair<std::string, DType>> gemmNeeds(const GemmPlan &p) {
  DType acc = isHalf(p.t) ? DType::F32 : p.t;
  std::vector<std::pair<std::string, DType>> needed = {{"MatMul", p.direct ? p.t : acc}};
  if (p.transA || p.transB)
    needed.emplace_back("Transpose", p.t);
  DType arith = p.direct ? p.t : DType::F64;
  if (!p.unitAlpha() || !p.unitBeta())
    needed.emplace_back("Mul", arith);
  if (p.hasC)
    needed.emplace_back("Add", arith);
  if (!p.direct) {
    needed.emplace_back("Cast", acc);
    needed.emplace_back("Cast", DType::F64);
    needed.emplace_back("Cast", p.t);
  }
  return needed;
}

/// Carries the plan out; returns the remark's description of the rewrite.
std::string buildGemm(Builder &bld, const Node &old, const GemmPlan &p) {
  auto transposed = [&](const std::string &suffix, OutPort in) {
    OutPort tr = bld.op(suffix, "Transpose", {in});
    bld.node(tr).attrs["perm"] = intList({1, 0});
    return tr;
  };
  OutPort pa = *old.inputs[0], pb = *old.inputs[1];
  if (p.transA)
    pa = transposed("a_t", pa);
  if (p.transB)
    pb = transposed("b_t", pb);
  bool widen = !p.direct && isHalf(p.t);
  if (widen) {
    pa = bld.cast("a_f32", pa, DType::F32);
    pb = bld.cast("b_f32", pb, DType::F32);
  }
  OutPort r = bld.op("matmul", "MatMul", {pa, pb});
  DType arith = p.direct ? p.t : DType::F64;
  if (!p.direct)
    r = bld.cast("acc_f64", r, DType::F64);
  if (!p.unitAlpha())
    r = bld.op("alpha", "Mul", {r, bld.constant("alpha_value", scalarTensor(arith, p.alpha))});
  if (p.hasC) {
    OutPort c = *old.inputs[2];
    if (!p.direct)
      c = bld.cast("c_f64", c, DType::F64);
    if (!p.unitBeta())
      c = bld.op("beta", "Mul", {c, bld.constant("beta_value", scalarTensor(arith, p.beta))});
    r = bld.op("add", "Add", {r, c});
  }
  if (!p.direct)
    r = bld.cast("round", r, p.t);
  bld.finish(r);
  if (!p.direct)
    return fmt::format(
        "MatMul in {} and the kernel's f64 scaling and bias steps, rounded once to {}",
        dtypeName(widen ? DType::F32 : p.t), dtypeName(p.t));
  return fmt::format("MatMul{}{}{} in {}", p.transA || p.transB ? " of transposed operands" : "",
                     p.unitAlpha() ? "" : " and Mul by alpha", p.hasC ? " and Add of C" : "",
                     dtypeName(p.t));
}

} // namespace

RuleResult legalizeGemm(RuleInput &in) {
  const Node &n = in.g.node(in.id);
  const TensorType *a = in.inputTypes.size() > 0 ? in.inputTypes[0] : nullptr;
  const TensorType *b = in.inputTypes.size() > 1 ? in.inputTypes[1] : nullptr;
  GemmPlan p;
  p.hasC = n.inputs.size() > 2 && n.inputs[2].has_value();
  if (!a || !b || (p.hasC && !in.inputTypes[2]))
    return refused("unknown-type", "an input's type is unknown");
  p.t = a->dtype;
  p.transA = attrInt(n, "transA", 0) != 0;
  p.transB = attrInt(n, "transB", 0) != 0;
  p.alpha = static_cast<float>(attrFloat(n, "alpha", 1.0));
  p.beta = static_cast<float>(attrFloat(n, "beta", 1.0));
  bool unitScales = p.unitAlpha() && p.unitBeta();
  if (!isFloat(p.t) && !unitScales)
    return refused("gemm-int-scale",
                   fmt::format("integer Gemm with alpha = {} and beta = {}: a Mul in {} would "
                               "wrap where the kernel's 64-bit sum does not",
                               p.alpha, p.beta, dtypeName(p.t)));
  if (isHalf(p.t))
    p.direct = !p.hasC && p.unitAlpha();
  else if (p.t == DType::F32)
    p.direct = !p.hasC || unitScales;
  else
    p.direct = true; // f64 (the kernel's steps are f64 already) and integers
  if (auto missing = missingOps(in.target, gemmNeeds(p)))
    return {missing, {}};
  Node old = n; // a copy: the node is removed first, freeing its name
  in.g.removeNode(in.id);
  Builder bld(in.g, old);
  std::string how = buildGemm(bld, old, p);
  return {std::nullopt, Rewritten{std::move(how), bld.created()}};
}

// HardSwish: the kernel (activations.cpp) computes x * clamp01(f32(1/6) * x + 0.5) in f32 for
// f16/bf16/f32 and rounds once to the dtype; HardSigmoid with alpha = f32(1/6), beta = 0.5
// computes the same clamp in the same f32 operations, and Mul(x, h) the same product. For
// f32 that is the whole argument; a half dtype computes in f32 between Casts, so that the
// clamp is not rounded to the half dtype before the product (one rounding, as the kernel).
// f64: the kernel's 1/6 is the f64 value, HardSigmoid's alpha attribute an f32 one: refused.
RuleResult legalizeHardSwish(RuleInput &in) {
  const Node &n = in.g.node(in.id);
  const TensorType *x = in.inputTypes.empty() ? nullptr : in.inputTypes[0];
  if (!x)
    return refused("unknown-type", "the input's type is unknown");
  DType t = x->dtype;
  if (t == DType::F64)
    return refused("hard-swish-f64",
                   "the f64 kernel uses 1/6 in f64, HardSigmoid's alpha is an f32 attribute; no "
                   "exact rewrite");
  std::vector<std::pair<std::string, DType>> needed = {{"HardSigmoid", DType::F32},
                                                       {"Mul", DType::F32}};
  if (t != DType::F32) {
    needed.emplace_back("Cast", t);
    needed.emplace_back("Cast", DType::F32);
  }
  if (auto missing = missingOps(in.target, needed))
    return {missing, {}};
  Node old = n;
  in.g.removeNode(in.id);
  Builder bld(in.g, old);
  OutPort xv = *old.inputs[0];
  if (t != DType::F32)
    xv = bld.cast("f32", xv, DType::F32);
  OutPort h = bld.op("hard_sigmoid", "HardSigmoid", {xv});
  bld.node(h).attrs["alpha"] =
      AttrValue::ofFloat(static_cast<double>(static_cast<float>(1.0 / 6.0)));
  bld.node(h).attrs["beta"] = AttrValue::ofFloat(0.5);
  OutPort r = bld.op("mul", "Mul", {xv, h});
  if (t != DType::F32)
    r = bld.cast("round", r, t);
  bld.finish(r);
  return {std::nullopt,
          Rewritten{fmt::format("Mul(x, HardSigmoid(x)) with alpha = f32(1/6), beta = 0.5{}",
                                t == DType::F32 ? "" : " in f32 between Casts"),
                    bld.created()}};
}

// Clip of f16/bf16: the kernel (activations.cpp) clamps in f32 with IEEE maximum/minimum
// (attribute bounds as f32 values) and rounds to the dtype: the value is x or a bound, so
// Cast to f32 (exact), Clip in f32 with the bounds Cast (exact) or the same attributes, and
// Cast back (exact: every candidate is a value of the dtype, or f32(attribute) rounded once
// as the kernel rounds it) give the same bits.
RuleResult legalizeClip(RuleInput &in) {
  const Node &n = in.g.node(in.id);
  const TensorType *x = in.inputTypes.empty() ? nullptr : in.inputTypes[0];
  if (!x)
    return refused("unknown-type", "the input's type is unknown");
  DType t = x->dtype;
  if (!isHalf(t))
    return refused("no-rule", fmt::format("no rewrite of Clip of {} (only f16 and bf16 are "
                                          "computed through f32)",
                                          dtypeName(t)));
  if (auto missing =
          missingOps(in.target, {{"Cast", t}, {"Cast", DType::F32}, {"Clip", DType::F32}}))
    return {missing, {}};
  Node old = n;
  in.g.removeNode(in.id);
  Builder bld(in.g, old);
  std::vector<std::optional<OutPort>> inputs = {bld.cast("f32", *old.inputs[0], DType::F32)};
  for (size_t k = 1; k < old.inputs.size(); ++k)
    inputs.push_back(old.inputs[k] ? std::optional<OutPort>(bld.cast(k == 1 ? "min_f32" : "max_f32",
                                                                     *old.inputs[k], DType::F32))
                                   : std::nullopt);
  OutPort clip = bld.op("clip", "Clip", std::move(inputs));
  for (const char *key : {"min", "max"})
    if (const AttrValue *v = old.attr(key))
      bld.node(clip).attrs[key] = *v;
  OutPort r = bld.cast("round", clip, t);
  bld.finish(r);
  return {std::nullopt,
          Rewritten{fmt::format("Clip in f32 between Casts from and to {}", dtypeName(t)),
                    bld.created()}};
}

} // namespace graphvet::legalize
