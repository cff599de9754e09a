// Attribute solvers of the typed graph builder.
#include "props/typed_attrs.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace graphvet::props {

int64_t spellAxis(int64_t axis, int64_t rank, Choices &ch) {
  return ch.chance(40) ? axis - rank : axis;
}

int64_t pickAxis(int64_t rank, Choices &ch) {
  int64_t a = ch.below(static_cast<unsigned>(rank));
  return spellAxis(a, rank, ch);
}

std::vector<int64_t> pickPermutation(size_t n, Choices &ch) {
  std::vector<int64_t> perm(n);
  for (size_t i = 0; i < n; ++i)
    perm[i] = static_cast<int64_t>(i);
  for (size_t i = 0; i + 1 < n; ++i)
    std::swap(perm[i], perm[i + ch.below(static_cast<unsigned>(n - i))]);
  return perm;
}

std::vector<int64_t> pickAxisSubset(size_t n, Choices &ch) {
  std::vector<int64_t> axes;
  for (size_t i = 0; i < n; ++i)
    if (ch.chance(50))
      axes.push_back(static_cast<int64_t>(i));
  return axes;
}

double pickFloatAttr(const std::vector<double> &usual, Choices &ch) {
  unsigned m = ch.below(20);
  if (m < 14)
    return usual[m % usual.size()];
  const double unusual[] = {0.0,
                            -0.0,
                            -2.5,
                            1e30,
                            std::numeric_limits<double>::infinity(),
                            std::numeric_limits<double>::quiet_NaN()};
  return unusual[m - 14];
}

AttrValue intList(const std::vector<int64_t> &v) {
  AttrValue::List l;
  for (int64_t x : v)
    l.push_back(AttrValue::ofInt(x));
  return AttrValue::ofList(std::move(l));
}

WindowSolution solveWindow(const std::vector<int64_t> &in, const WindowLimits &limits,
                           Choices &ch) {
  WindowSolution w;
  w.ceilModeAllowed = limits.ceilMode;
  w.dilationsAllowed = limits.dilations;
  unsigned mode = ch.below(8);
  w.autoPad = mode == 5 ? "SAME_UPPER" : mode == 6 ? "SAME_LOWER" : mode == 7 ? "VALID" : "";
  bool same = mode == 5 || mode == 6;
  w.ceilMode = limits.ceilMode && ch.chance(30);
  const size_t k = in.size();
  w.pads.assign(2 * k, 0);
  for (size_t i = 0; i < k; ++i) {
    int64_t kernel = 1 + ch.below(static_cast<unsigned>(limits.maxKernel));
    int64_t dil = limits.dilations && ch.chance(25) ? 2 : 1;
    int64_t stride = ch.chance(30) ? 2 + ch.below(2) : 1;
    if (w.autoPad.empty()) {
      w.pads[i] = ch.below(3);
      w.pads[i + k] = ch.below(3);
    }
    int64_t padded = in[i] + w.pads[i] + w.pads[i + k];
    // The (dilated) kernel must fit the padded input, except with SAME
    // padding, which pads as much as the window needs.
    while (!same && (kernel - 1) * dil + 1 > padded) {
      if (dil > 1)
        dil = 1;
      else
        kernel = padded;
    }
    int64_t ek = (kernel - 1) * dil + 1;
    int64_t out;
    if (same) {
      out = (in[i] + stride - 1) / stride;
    } else {
      int64_t span = padded - ek;
      out = (w.ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
    }
    w.kernel.push_back(kernel);
    w.dilations.push_back(dil);
    w.strides.push_back(stride);
    w.out.push_back(out);
  }
  return w;
}

void setWindowAttrs(AttrMap &attrs, const WindowSolution &w, bool kernelShape, Choices &ch) {
  auto notAll = [](const std::vector<int64_t> &v, int64_t d) {
    return std::any_of(v.begin(), v.end(), [d](int64_t x) { return x != d; });
  };
  if (kernelShape)
    attrs["kernel_shape"] = intList(w.kernel);
  if (notAll(w.strides, 1) || ch.chance(30))
    attrs["strides"] = intList(w.strides);
  if (w.dilationsAllowed && (notAll(w.dilations, 1) || ch.chance(20)))
    attrs["dilations"] = intList(w.dilations);
  if (w.autoPad.empty()) {
    if (notAll(w.pads, 0) || ch.chance(30))
      attrs["pads"] = intList(w.pads);
    if (ch.chance(10))
      attrs["auto_pad"] = AttrValue::ofString("NOTSET");
  } else {
    attrs["auto_pad"] = AttrValue::ofString(w.autoPad);
  }
  if (w.ceilModeAllowed && (w.ceilMode || ch.chance(20)))
    attrs["ceil_mode"] = AttrValue::ofInt(w.ceilMode ? 1 : 0);
}

} // namespace graphvet::props
