// Attribute solvers of typed random graphs: each turns choice bytes into an
// attribute value that is valid for the op's input types (axes spelled
// positive or negative, permutations, subsets of axes, float attributes
// with their unusual values, sliding windows that fit their input). Choice
// 0 always gives the plainest value.
#pragma once

#include "ir/graph.h"
#include "props/typed_recipe.h"

#include <cstdint>
#include <string>
#include <vector>

namespace graphvet::props {

/// An axis of a rank-`rank` tensor (rank >= 1) spelled in [-rank, rank).
int64_t pickAxis(int64_t rank, Choices &ch);
/// The same axis spelled negative (a - rank) or not, by `ch`.
int64_t spellAxis(int64_t axis, int64_t rank, Choices &ch);
/// A permutation of 0..n-1 (the identity for choice 0).
std::vector<int64_t> pickPermutation(size_t n, Choices &ch);
/// Each axis of 0..n-1 with probability about one half, in increasing order.
std::vector<int64_t> pickAxisSubset(size_t n, Choices &ch);

/// A float attribute: mostly one of `usual` (index 0 first), sometimes
/// 0, -0, a negative value, a huge one, inf or NaN.
double pickFloatAttr(const std::vector<double> &usual, Choices &ch);

AttrValue intList(const std::vector<int64_t> &v);

/// A sliding window along the spatial axes of a Conv or a pool, with the
/// attribute values that produce it and its output size per axis (ONNX's
/// formula as nn.cpp documents it: floor, or ceil with ceil_mode, of
/// (in + pads - dilated kernel) / stride + 1; ceil(in / stride) with
/// SAME_UPPER/SAME_LOWER).
struct WindowSolution {
  std::vector<int64_t> kernel, strides, dilations, pads, out;
  std::string autoPad; ///< empty: attribute absent (NOTSET)
  bool ceilMode = false;
  bool ceilModeAllowed = false; ///< pools only
  bool dilationsAllowed = true; ///< not AveragePool (opset <= 17)
};

struct WindowLimits {
  bool dilations = true; ///< AveragePool (opset <= 17) has none
  bool ceilMode = false; ///< pools only
  int64_t maxKernel = 3;
};

/// A window that fits the spatial sizes `in` (each >= 1): the kernel never
/// exceeds the padded input.
WindowSolution solveWindow(const std::vector<int64_t> &in, const WindowLimits &limits, Choices &ch);

/// Writes a window's attributes (kernel_shape when `kernelShape`, strides,
/// dilations, pads, auto_pad, ceil_mode), each only when it differs from
/// its default or `ch` asks for the explicit spelling.
void setWindowAttrs(AttrMap &attrs, const WindowSolution &w, bool kernelShape, Choices &ch);

} // namespace graphvet::props
