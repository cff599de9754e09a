// The derived error bound of the `approx` contract (tensor-semantics.md §7):
// a shadow evaluation that carries, beside every value a numeric op
// computes, the magnitude of what was summed or multiplied to get it and the
// depth of the rounding chain behind it. An approximate rewrite may move an
// element of a result by at most 2 * gamma(depth, u) * magnitude -- the
// forward error bound of recursive summation (Higham, "Accuracy and
// Stability of Numerical Algorithms", §3) for the original and the rewrite
// each -- and nothing more.
#pragma once

#include "ir/graph.h"
#include "ir/op_library.h"
#include "ir/tensor.h"

#include <cstdint>
#include <span>
#include <vector>

namespace graphvet::oracle {

/// The shadow of one tensor: per element, the magnitude of the terms behind
/// it (infinity when no rule bounds it), and for the whole tensor the depth
/// of its rounding chain and the largest unit roundoff on it.
struct Magnitude {
  std::vector<double> m;
  uint32_t depth = 0;
  double unit = 0; ///< largest unit roundoff on the chain (0: exact so far)
};

/// Unit roundoff of a dtype: 2^-11 for f16, 2^-8 for bf16, 2^-24 for f32,
/// 2^-53 for f64, 0 for integers and bool (exact).
double unitRoundoff(DType t);

/// The shadow of a value nobody rounded: |x| per element, depth 0.
Magnitude exactMagnitude(const Tensor &t);

/// Extra rounding steps allowed to the rewrite itself: the constants an
/// approximate pass computes at compile time (a folded scale is a division,
/// a square root and a product of already rounded values) add this many
/// roundings to the chain it replaces.
inline constexpr uint32_t kRewriteSlack = 8;

/// The allowed distance between the original's and the optimized graph's
/// element `i`: 2 * gamma_{depth + slack}(unit) * m[i] plus the same many
/// smallest subnormals of `t` (underflow); infinity when m[i] is not finite
/// or the chain is too long for gamma to exist. 0 for an exact shadow.
double allowedDistance(const Magnitude &s, size_t i, DType t);

/// The shadows of node `n`'s outputs, from its inputs' values and shadows
/// (nullptr for an unconnected input) and the values its kernel computed.
/// An output the rules do not cover gets infinite magnitude: the `approx`
/// check cannot bound it, so it accepts any value there (docs/numbers.md
/// lists the covered ops).
std::vector<Magnitude> propagateMagnitudes(const Node &n, const OpInfo &op,
                                           std::span<const Tensor *const> inputs,
                                           std::span<const Magnitude *const> shadows,
                                           std::span<const Tensor> outputs);

} // namespace graphvet::oracle
