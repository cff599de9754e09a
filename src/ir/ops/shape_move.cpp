// Shape family, second file: the ops that move elements between positions
// (Transpose, Concat, Split, Slice, Gather, Tile, Pad, DepthToSpace,
// SpaceToDepth). Same structure as shape.cpp: one planning function per op,
// shared by inference and the kernel. Every kernel copies elements with
// their indeterminate mask (Tensor::copyElement); Gather marks the elements
// an out-of-range index selects indeterminate (ONNX calls such an index an
// error; graphvet cannot reject it when the indices are not constant).
#include "ir/ops/shape_common.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace graphvet::ops {
namespace {

using namespace shape_detail;

constexpr std::span<const PortAlias> kNone{};

int64_t product(std::span<const int64_t> s, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t i = from; i < to; ++i)
    n *= s[i];
  return n;
}

// ---------------------------------------------------------------------------
// Transpose

struct TransposeParams {
  std::vector<int64_t> perm;
};

bool planTranspose(InferContext &ctx, TransposeParams *p) {
  if (!checkInputs(ctx, 1, 1))
    return false;
  const TensorType &in = ctx.in(0);
  std::vector<int64_t> perm(in.shape.size());
  if (ctx.node.attr("perm")) {
    auto a = attrInts(ctx.node, "perm");
    if (!a)
      return ctx.fail("Transpose: attribute perm must be a list of integers");
    perm = *a;
  } else { // default: reverse the axes
    std::iota(perm.rbegin(), perm.rend(), 0);
  }
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool isPerm = sorted.size() == in.shape.size();
  for (size_t i = 0; isPerm && i < sorted.size(); ++i)
    isPerm = sorted[i] == static_cast<int64_t>(i);
  if (!isPerm)
    return ctx.fail("Transpose: perm " + listStr(perm) + " is not a permutation of the axes of " +
                    in.str());
  Shape out;
  for (int64_t a : perm)
    out.push_back(in.shape[static_cast<size_t>(a)]);
  ctx.outputs = {TensorType{in.dtype, out}};
  if (p)
    p->perm = std::move(perm);
  return true;
}

void transposeKernel(KernelContext &k) {
  TransposeParams p;
  if (!replan(k, planTranspose, p))
    return;
  const Tensor &in = k.in(0);
  std::vector<int64_t> strides = stridesOf(in.shape());
  std::vector<std::vector<int64_t>> tables;
  for (int64_t a : p.perm)
    tables.push_back(
        stridedAxis(in.shape()[static_cast<size_t>(a)], strides[static_cast<size_t>(a)]));
  copyByAxes(k.out(0), in, tables);
}

// ---------------------------------------------------------------------------
// Concat, Split

struct AxisParams {
  size_t axis = 0;
};

bool planConcat(InferContext &ctx, AxisParams *p) {
  // Every input slot must be connected (Concat has no optional inputs).
  if (!checkInputs(ctx, std::max<size_t>(ctx.numInputs(), 1), std::max<size_t>(ctx.numInputs(), 1)))
    return false;
  const TensorType &first = ctx.in(0);
  if (!ctx.node.attr("axis"))
    return ctx.fail("Concat needs attribute axis");
  int64_t a = attrInt(ctx.node, "axis", 0);
  if (first.rank() == 0)
    return ctx.fail("Concat: inputs must have rank >= 1, got " + first.str());
  auto axis = normalizeAxis(a, first.rank());
  if (!axis)
    return ctx.fail("Concat: axis " + std::to_string(a) + " is out of range for " + first.str());
  size_t ax = static_cast<size_t>(*axis);
  Shape out = first.shape;
  out[ax] = 0;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    const TensorType &t = ctx.in(i);
    bool same = t.dtype == first.dtype && t.rank() == first.rank();
    for (size_t d = 0; same && d < out.size(); ++d)
      same = d == ax || t.shape[d] == first.shape[d];
    if (!same)
      return ctx.fail("Concat: input " + std::to_string(i) + " " + t.str() +
                      " does not match input 0 " + first.str() + " outside axis " +
                      std::to_string(a));
    out[ax] += t.shape[ax];
  }
  TensorType t{first.dtype, out};
  if (!checkOutputType(ctx, t))
    return false;
  ctx.outputs = {std::move(t)};
  if (p)
    p->axis = ax;
  return true;
}

void concatKernel(KernelContext &k) {
  AxisParams p;
  if (!replan(k, planConcat, p))
    return;
  Tensor &out = k.out(0);
  const Shape &os = out.shape();
  int64_t outer = product(os, 0, p.axis), inner = product(os, p.axis + 1, os.size());
  int64_t o = 0;
  for (int64_t b = 0; b < outer; ++b)
    for (const Tensor *in : k.inputs) {
      int64_t block = in->shape()[p.axis] * inner;
      out.copyElements(o, *in, b * block, block);
      o += block;
    }
}

struct SplitParams {
  size_t axis = 0;
  std::vector<int64_t> sizes;
};

bool planSplit(InferContext &ctx, SplitParams *p) {
  if (!checkInputs(ctx, 1, 2))
    return false;
  const TensorType &in = ctx.in(0);
  int64_t a = attrInt(ctx.node, "axis", 0);
  auto axis = normalizeAxis(a, in.rank());
  if (!axis)
    return ctx.fail("Split: axis " + std::to_string(a) + " is out of range for " + in.str());
  size_t ax = static_cast<size_t>(*axis);
  int64_t dim = in.shape[ax];
  int64_t n = ctx.node.numOutputs;
  if (n < 1)
    return ctx.fail("Split needs at least one output");
  std::vector<int64_t> sizes;
  if (ctx.has(1)) { // opset 13: input split
    if (!shapeOperand(ctx, 1, "split", sizes))
      return false;
  } else if (ctx.node.attr("split")) { // opsets 2-11: attribute split
    auto s = attrInts(ctx.node, "split");
    if (!s)
      return ctx.fail("Split: attribute split must be a list of integers");
    sizes = *s;
  } else if (ctx.node.attr("num_outputs")) {
    // Opset 18's attribute: chunks of ceil(dim / n), the last one smaller.
    if (attrInt(ctx.node, "num_outputs", 0) != n)
      return ctx.fail(
          "Split: num_outputs = " + std::to_string(attrInt(ctx.node, "num_outputs", 0)) +
          " but the node has " + std::to_string(n) + " outputs");
    int64_t chunk = dim / n + (dim % n != 0 ? 1 : 0);
    if (chunk > 0 && n - 1 > dim / chunk)
      return ctx.fail("Split: axis " + std::to_string(a) + " of " + in.str() +
                      " cannot be split into " + std::to_string(n) + " chunks of " +
                      std::to_string(chunk));
    sizes.assign(static_cast<size_t>(n), chunk);
    sizes.back() = dim - chunk * (n - 1);
  } else { // equal parts (opset <= 17: the axis must divide evenly)
    if (dim % n != 0)
      return ctx.fail("Split: axis " + std::to_string(a) + " of " + in.str() +
                      " does not split evenly into " + std::to_string(n) + " outputs");
    sizes.assign(static_cast<size_t>(n), dim / n);
  }
  if (static_cast<int64_t>(sizes.size()) != n)
    return ctx.fail("Split: split " + listStr(sizes) + " has " + std::to_string(sizes.size()) +
                    " entries but the node has " + std::to_string(n) + " outputs");
  int64_t sum = 0;
  for (int64_t s : sizes) {
    if (s < 0 || s > dim)
      return ctx.fail("Split: invalid split " + listStr(sizes));
    sum += s;
    if (sum > dim)
      break;
  }
  if (sum != dim)
    return ctx.fail("Split: split " + listStr(sizes) + " does not sum to dimension " +
                    std::to_string(dim) + " of " + in.str());
  for (int64_t s : sizes) {
    Shape os = in.shape;
    os[ax] = s;
    ctx.outputs.push_back(TensorType{in.dtype, os});
  }
  if (p) {
    p->axis = ax;
    p->sizes = std::move(sizes);
  }
  return true;
}

void splitKernel(KernelContext &k) {
  SplitParams p;
  if (!replan(k, planSplit, p))
    return;
  const Tensor &in = k.in(0);
  const Shape &is = in.shape();
  int64_t outer = product(is, 0, p.axis), inner = product(is, p.axis + 1, is.size());
  int64_t rowLen = is[p.axis] * inner, offset = 0;
  for (size_t j = 0; j < k.outputs.size(); ++j) {
    int64_t block = p.sizes[j] * inner;
    for (int64_t b = 0; b < outer; ++b)
      k.out(j).copyElements(b * block, in, b * rowLen + offset, block);
    offset += block;
  }
}

// ---------------------------------------------------------------------------
// Slice

struct SliceParams {
  std::vector<std::vector<int64_t>> tables;
};

/// starts/ends/axes/steps of Slice: inputs 1-4 (opset 10+) or attributes
/// starts/ends/axes (opset 1).
bool sliceOperand(InferContext &ctx, size_t i, const char *name, std::vector<int64_t> &out,
                  bool &present) {
  present = false;
  if (ctx.numInputs() == 1) {
    if (!ctx.node.attr(name) || i > 3)
      return true;
    auto a = attrInts(ctx.node, name);
    if (!a)
      return ctx.fail("Slice: attribute " + std::string(name) + " must be a list of integers");
    out = *a;
    present = true;
    return true;
  }
  if (!ctx.has(i))
    return true;
  present = true;
  return shapeOperand(ctx, i, name, out, true);
}

bool planSlice(InferContext &ctx, SliceParams *p) {
  if (!checkInputs(ctx, ctx.numInputs() == 1 ? 1 : 3, 5))
    return false;
  const TensorType &in = ctx.in(0);
  int64_t r = in.rank();
  std::vector<int64_t> starts, ends, axes, steps;
  bool has[4];
  if (!sliceOperand(ctx, 1, "starts", starts, has[0]) ||
      !sliceOperand(ctx, 2, "ends", ends, has[1]) || !sliceOperand(ctx, 3, "axes", axes, has[2]) ||
      !sliceOperand(ctx, 4, "steps", steps, has[3]))
    return false;
  if (!has[0] || !has[1])
    return ctx.fail("Slice needs starts and ends");
  if (starts.size() != ends.size())
    return ctx.fail("Slice: starts " + listStr(starts) + " and ends " + listStr(ends) +
                    " differ in length");
  if (!has[2]) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (!has[3])
    steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size())
    return ctx.fail("Slice: axes " + listStr(axes) + " and steps " + listStr(steps) +
                    " must have the length of starts " + listStr(starts));
  std::vector<int64_t> start(static_cast<size_t>(r), 0), step(static_cast<size_t>(r), 1);
  Shape out = in.shape;
  std::vector<bool> seen(static_cast<size_t>(r), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    auto ax = normalizeAxis(axes[i], r);
    if (!ax)
      return ctx.fail("Slice: axis " + std::to_string(axes[i]) + " is out of range for " +
                      in.str());
    size_t a = static_cast<size_t>(*ax);
    if (seen[a])
      return ctx.fail("Slice: axis " + std::to_string(axes[i]) + " is repeated");
    seen[a] = true;
    int64_t dim = in.shape[a], s = starts[i], e = ends[i], st = steps[i];
    if (st == 0)
      return ctx.fail("Slice: step must not be zero");
    // ONNX: negative starts/ends count from the end, then clamp to
    // [0, dim] for positive steps and [0, dim - 1] / [-1, dim - 1] for
    // negative ones.
    if (s < 0)
      s += dim;
    if (e < 0)
      e += dim;
    int64_t count;
    if (dim == 0) {
      s = 0, count = 0, st = 1;
    } else if (st > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      int64_t mag = std::min<int64_t>(st, dim + 1);
      count = e > s ? (e - s + mag - 1) / mag : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      int64_t mag = st < -(dim + 1) ? dim + 1 : -st;
      count = s > e ? (s - e + mag - 1) / mag : 0;
      st = -mag;
    }
    if (st > 0) // a step past the axis reads one element at most
      st = std::min<int64_t>(st, dim + 1);
    start[a] = s;
    step[a] = st;
    out[a] = count;
  }
  ctx.outputs = {TensorType{in.dtype, out}};
  if (p) {
    std::vector<int64_t> strides = stridesOf(in.shape);
    for (size_t a = 0; a < out.size(); ++a)
      p->tables.push_back(stridedAxis(out[a], step[a] * strides[a], start[a] * strides[a]));
  }
  return true;
}

void sliceKernel(KernelContext &k) {
  SliceParams p;
  if (replan(k, planSlice, p))
    copyByAxes(k.out(0), k.in(0), p.tables);
}

// ---------------------------------------------------------------------------
// Gather

struct GatherParams {
  size_t axis = 0;
};

bool planGather(InferContext &ctx, GatherParams *p) {
  if (!checkInputs(ctx, 2, 2))
    return false;
  const TensorType &data = ctx.in(0), &idx = ctx.in(1);
  if (idx.dtype != DType::I32 && idx.dtype != DType::I64)
    return ctx.fail("input 1 (indices) of Gather must be i32 or i64, got " + idx.str());
  int64_t a = attrInt(ctx.node, "axis", 0);
  auto axis = normalizeAxis(a, data.rank());
  if (!axis)
    return ctx.fail("Gather: axis " + std::to_string(a) + " is out of range for " + data.str());
  size_t ax = static_cast<size_t>(*axis);
  Shape out(data.shape.begin(), data.shape.begin() + static_cast<int64_t>(ax));
  out.insert(out.end(), idx.shape.begin(), idx.shape.end());
  out.insert(out.end(), data.shape.begin() + static_cast<int64_t>(ax) + 1, data.shape.end());
  TensorType t{data.dtype, out};
  if (!checkOutputType(ctx, t))
    return false;
  ctx.outputs = {std::move(t)};
  if (p)
    p->axis = ax;
  return true;
}

void gatherKernel(KernelContext &k) {
  GatherParams p;
  if (!replan(k, planGather, p))
    return;
  const Tensor &data = k.in(0), &idx = k.in(1);
  Tensor &out = k.out(0);
  const Shape &ds = data.shape();
  int64_t outer = product(ds, 0, p.axis), inner = product(ds, p.axis + 1, ds.size());
  int64_t dim = ds[p.axis], n = idx.size(), o = 0;
  for (int64_t b = 0; b < outer; ++b)
    for (int64_t j = 0; j < n; ++j) {
      int64_t i = idx.getInt(j);
      if (i < 0)
        i += dim;
      // An indeterminate or out-of-range index: ONNX calls it an error; the
      // elements it selects are indeterminate.
      bool bad = idx.isUndef(j) || i < 0 || i >= dim;
      if (bad)
        for (int64_t e = 0; e < inner; ++e)
          out.setUndef(o + e);
      else
        out.copyElements(o, data, (b * dim + i) * inner, inner);
      o += inner;
    }
}

// ---------------------------------------------------------------------------
// Tile

bool planTile(InferContext &ctx, NoParams *) {
  if (!checkInputs(ctx, 2, 2))
    return false;
  const TensorType &in = ctx.in(0);
  std::vector<int64_t> reps;
  if (!shapeOperand(ctx, 1, "repeats", reps))
    return false;
  if (static_cast<int64_t>(reps.size()) != in.rank())
    return ctx.fail("Tile: repeats " + listStr(reps) + " must have one entry per axis of " +
                    in.str());
  Shape out = in.shape;
  for (size_t a = 0; a < out.size(); ++a) {
    if (reps[a] < 0)
      return ctx.fail("Tile: negative repeat in " + listStr(reps));
    if (out[a] != 0 && reps[a] > (int64_t{1} << 62) / out[a])
      return ctx.fail("Tile: repeats " + listStr(reps) + " make " + in.str() + " too large");
    out[a] *= reps[a];
  }
  TensorType t{in.dtype, out};
  if (!checkOutputType(ctx, t))
    return false;
  ctx.outputs = {std::move(t)};
  return true;
}

void tileKernel(KernelContext &k) {
  NoParams p;
  if (!replan(k, planTile, p))
    return;
  const Tensor &in = k.in(0);
  const Shape &is = in.shape(), &os = k.out(0).shape();
  std::vector<int64_t> strides = stridesOf(is);
  std::vector<std::vector<int64_t>> tables(os.size());
  for (size_t a = 0; a < os.size(); ++a)
    for (int64_t c = 0; c < os[a]; ++c)
      tables[a].push_back((c % is[a]) * strides[a]);
  copyByAxes(k.out(0), in, tables);
}

// ---------------------------------------------------------------------------
// Pad

struct PadParams {
  std::vector<std::vector<int64_t>> tables;
  Tensor fill;
};

bool planPad(InferContext &ctx, PadParams *p) {
  const bool inputForm = ctx.numInputs() > 1; // opset 11+: pads is an input
  if (!checkInputs(ctx, inputForm ? 2 : 1, 4))
    return false;
  const TensorType &in = ctx.in(0);
  size_t r = in.shape.size();
  std::vector<int64_t> pads, axes;
  if (inputForm) {
    if (!shapeOperand(ctx, 1, "pads", pads))
      return false;
  } else {
    auto a = attrInts(ctx.node, "pads");
    if (!a)
      return ctx.fail("Pad needs pads (input 1, or attribute pads before opset 11)");
    pads = *a;
  }
  if (ctx.has(3)) { // opset 18: the axes pads applies to
    if (!shapeOperand(ctx, 3, "axes", axes, true))
      return false;
  } else {
    axes.resize(r);
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (pads.size() != 2 * axes.size())
    return ctx.fail("Pad: pads " + listStr(pads) + " must have 2 entries per padded axis of " +
                    in.str());
  std::string mode = attrString(ctx.node, "mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    return ctx.fail("Pad: unknown mode '" + mode + "'");
  // The padding value: input 2 (a scalar of the data's dtype) or attribute
  // value (before opset 11); 0 by default.
  Tensor fill(TensorType{in.dtype, {}});
  if (ctx.has(2)) {
    const TensorType &v = ctx.in(2);
    if (v.dtype != in.dtype || v.numElements() != 1 || v.rank() > 1)
      return ctx.fail("input 2 (constant_value) of Pad must be a scalar " +
                      std::string(dtypeName(in.dtype)) + ", got " + v.str());
  } else if (ctx.node.attr("value")) {
    double v = static_cast<float>(attrFloat(ctx.node, "value", 0.0));
    if (isFloat(in.dtype))
      fill.setDouble(0, v);
    else if (in.dtype == DType::Bool)
      fill.setInt(0, v != 0);
    else if (v != std::trunc(v) || v < static_cast<double>(intMin(in.dtype)) ||
             v > static_cast<double>(intMax(in.dtype)))
      return ctx.fail("Pad: value " + formatFloatAttr(v) + " is not a " +
                      std::string(dtypeName(in.dtype)));
    else
      fill.setInt(0, static_cast<int64_t>(v));
  }
  std::vector<int64_t> begin(r, 0), end(r, 0);
  std::vector<bool> seen(r, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    auto ax = normalizeAxis(axes[i], static_cast<int64_t>(r));
    if (!ax || seen[static_cast<size_t>(*ax)])
      return ctx.fail("Pad: invalid or repeated axis " + std::to_string(axes[i]));
    seen[static_cast<size_t>(*ax)] = true;
    begin[static_cast<size_t>(*ax)] = pads[i];
    end[static_cast<size_t>(*ax)] = pads[i + axes.size()];
  }
  Shape out(r);
  constexpr int64_t kLim = int64_t{1} << 40;
  for (size_t a = 0; a < r; ++a) {
    int64_t dim = in.shape[a];
    if (begin[a] < -kLim || begin[a] > kLim || end[a] < -kLim || end[a] > kLim ||
        dim + begin[a] + end[a] < 0)
      return ctx.fail("Pad: pads " + listStr(pads) + " are invalid for " + in.str());
    out[a] = dim + begin[a] + end[a];
    if (dim == 0 && out[a] > 0 && mode != "constant")
      return ctx.fail("Pad: mode " + mode + " cannot pad the empty axis " + std::to_string(a) +
                      " of " + in.str());
  }
  TensorType t{in.dtype, out};
  if (!checkOutputType(ctx, t))
    return false;
  ctx.outputs = {std::move(t)};
  if (!p)
    return true;
  // Each output coordinate o reads input coordinate o - begin; outside the
  // input, constant mode takes the fill value, edge clamps, reflect mirrors
  // without repeating the edge (numpy's reflect, periodic in 2 (dim - 1)),
  // wrap is periodic in dim. Edge/reflect/wrap are taken about the unpadded
  // input, so a negative pad (a crop) does not move the mirror.
  std::vector<int64_t> strides = stridesOf(in.shape);
  for (size_t a = 0; a < r; ++a) {
    int64_t dim = in.shape[a];
    std::vector<int64_t> table;
    for (int64_t o = 0; o < out[a]; ++o) {
      int64_t i = o - begin[a];
      if (i < 0 || i >= dim) {
        if (mode == "constant") {
          table.push_back(-1);
          continue;
        }
        if (mode == "edge") {
          i = std::clamp<int64_t>(i, 0, dim - 1);
        } else if (mode == "wrap") {
          i = ((i % dim) + dim) % dim;
        } else if (dim == 1) {
          i = 0;
        } else {
          int64_t period = 2 * (dim - 1);
          i = ((i % period) + period) % period;
          if (i >= dim)
            i = period - i;
        }
      }
      table.push_back(i * strides[a]);
    }
    p->tables.push_back(std::move(table));
  }
  p->fill = std::move(fill);
  return true;
}

void padKernel(KernelContext &k) {
  PadParams p;
  if (!replan(k, planPad, p))
    return;
  if (k.has(2))
    p.fill.copyElement(0, k.in(2), 0);
  copyByAxes(k.out(0), k.in(0), p.tables, &p.fill);
}

// ---------------------------------------------------------------------------
// DepthToSpace, SpaceToDepth (layout NCHW or NHWC: the NHWC op is the NCHW
// op between transposes, so the same element moves)

struct BlockParams {
  std::vector<std::vector<int64_t>> tables;
};

bool planBlock(InferContext &ctx, BlockParams *p, bool toSpace) {
  const std::string &op = ctx.node.type;
  if (!checkInputs(ctx, 1, 1))
    return false;
  const TensorType &in = ctx.in(0);
  if (in.rank() != 4)
    return ctx.fail(op + ": input must have rank 4, got " + in.str());
  if (!ctx.node.attr("blocksize"))
    return ctx.fail(op + " needs attribute blocksize");
  int64_t b = attrInt(ctx.node, "blocksize", 0);
  if (b <= 0 || b > (int64_t{1} << 20))
    return ctx.fail(op + ": blocksize must be positive, got " + std::to_string(b));
  std::string layout = attrString(ctx.node, "layout", "NCHW");
  if (layout != "NCHW" && layout != "NHWC")
    return ctx.fail(op + ": layout must be NCHW or NHWC, got '" + layout + "'");
  bool nhwc = layout == "NHWC";
  std::string mode = attrString(ctx.node, "mode", "DCR");
  if (toSpace && mode != "DCR" && mode != "CRD")
    return ctx.fail("DepthToSpace: mode must be DCR or CRD, got '" + mode + "'");
  int64_t n = in.shape[0], c = in.shape[nhwc ? 3 : 1], h = in.shape[nhwc ? 1 : 2],
          w = in.shape[nhwc ? 2 : 3];
  int64_t oc, oh, ow;
  if (toSpace) {
    if (c % (b * b) != 0)
      return ctx.fail("DepthToSpace: channels of " + in.str() + " are not a multiple of " +
                      std::to_string(b * b));
    oc = c / (b * b), oh = h * b, ow = w * b;
  } else {
    if (h % b != 0 || w % b != 0)
      return ctx.fail("SpaceToDepth: height and width of " + in.str() + " are not multiples of " +
                      std::to_string(b));
    oc = c * b * b, oh = h / b, ow = w / b;
  }
  TensorType t{in.dtype, nhwc ? Shape{n, oh, ow, oc} : Shape{n, oc, oh, ow}};
  if (!checkOutputType(ctx, t))
    return false;
  ctx.outputs = {std::move(t)};
  if (!p)
    return true;
  std::vector<int64_t> st = stridesOf(in.shape);
  int64_t sn = st[0], sc = st[nhwc ? 3 : 1], sh = st[nhwc ? 1 : 2], sw = st[nhwc ? 2 : 3];
  // The output seen as 6 axes, each with its stride into the input.
  std::vector<std::pair<int64_t, int64_t>> axes; // (extent, input stride)
  if (toSpace) {
    // Output [N, C', H, b, W, b] (NCHW) or [N, H, b, W, b, C'] (NHWC);
    // input channel (i * b + j) * C' + c (DCR) or c * b * b + i * b + j (CRD).
    bool dcr = mode == "DCR";
    int64_t si = dcr ? b * oc * sc : b * sc, sj = dcr ? oc * sc : sc, scc = dcr ? sc : b * b * sc;
    if (nhwc)
      axes = {{n, sn}, {h, sh}, {b, si}, {w, sw}, {b, sj}, {oc, scc}};
    else
      axes = {{n, sn}, {oc, scc}, {h, sh}, {b, si}, {w, sw}, {b, sj}};
  } else {
    // Output channel (i * b + j) * C + c reads input (c, h * b + i, w * b + j):
    // output [N, b, b, C, H', W'] (NCHW) or [N, H', W', b, b, C] (NHWC).
    if (nhwc)
      axes = {{n, sn}, {oh, b * sh}, {ow, b * sw}, {b, sh}, {b, sw}, {c, sc}};
    else
      axes = {{n, sn}, {b, sh}, {b, sw}, {c, sc}, {oh, b * sh}, {ow, b * sw}};
  }
  for (auto [extent, stride] : axes)
    p->tables.push_back(stridedAxis(extent, stride));
  return true;
}

bool planDepthToSpace(InferContext &ctx, BlockParams *p) {
  return planBlock(ctx, p, true);
}
bool planSpaceToDepth(InferContext &ctx, BlockParams *p) {
  return planBlock(ctx, p, false);
}

template <bool (*Plan)(InferContext &, BlockParams *)> void blockKernel(KernelContext &k) {
  BlockParams p;
  if (replan(k, Plan, p))
    copyByAxes(k.out(0), k.in(0), p.tables);
}

constexpr OpInfo kMoveOps[] = {
    {"Transpose", OpKind::Ordinary, 1, kNone, kNone, false,
     "input 0 with its axes permuted by perm (default: reversed)",
     inferOnly<TransposeParams, planTranspose>, transposeKernel},
    {"Concat", OpKind::Ordinary, 1, kNone, kNone, false, "the inputs joined along axis",
     inferOnly<AxisParams, planConcat>, concatKernel},
    {"Split", OpKind::Ordinary, 1, kNone, kNone, false,
     "input 0 cut along axis into one piece per output (sizes from split or equal)",
     inferOnly<SplitParams, planSplit>, splitKernel, false, 0b10},
    {"Slice", OpKind::Ordinary, 1, kNone, kNone, false,
     "input 0 sliced by starts, ends, axes, steps (clamped, negative from the end)",
     inferOnly<SliceParams, planSlice>, sliceKernel, false, 0b11110},
    {"Gather", OpKind::Ordinary, 1, kNone, kNone, false,
     "entries of input 0 along axis picked by the indices of input 1",
     inferOnly<GatherParams, planGather>, gatherKernel},
    {"Tile", OpKind::Ordinary, 1, kNone, kNone, false,
     "input 0 repeated along each axis by input 1", inferOnly<NoParams, planTile>, tileKernel,
     false, 0b10},
    {"Pad", OpKind::Ordinary, 1, kNone, kNone, false,
     "input 0 padded by pads (constant, reflect, edge or wrap)", inferOnly<PadParams, planPad>,
     padKernel, false, 0b1010},
    {"DepthToSpace", OpKind::Ordinary, 1, kNone, kNone, false,
     "channel blocks moved into blocksize x blocksize spatial tiles (DCR or CRD)",
     inferOnly<BlockParams, planDepthToSpace>, blockKernel<planDepthToSpace>},
    {"SpaceToDepth", OpKind::Ordinary, 1, kNone, kNone, false,
     "blocksize x blocksize spatial tiles moved into channels",
     inferOnly<BlockParams, planSpaceToDepth>, blockKernel<planSpaceToDepth>},
};

} // namespace

std::span<const OpInfo> shapeMoveOps() {
  return kMoveOps;
}

} // namespace graphvet::ops
