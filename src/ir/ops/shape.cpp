// Shape and data-movement ops: type inference and reference kernels. This
// file holds the ops that read or rewrite shapes (Shape, Size,
// ConstantOfShape, Range, Reshape, Flatten, Squeeze, Unsqueeze, Expand);
// shape_move.cpp holds the ops that move elements between positions.
//
// Each op has one planning function `planX(ctx, params)`: it validates the
// inputs and attributes, fills ctx.outputs and, when `params` is non-null,
// what the kernel needs. Inference calls it with no params; the kernel
// re-plans on its concrete inputs (replan), so both agree by construction.
// Values that decide an output type (Reshape's shape, ...) are the op's shape
// operands: they must be constants, and an indeterminate element there is an
// inference error, never an indeterminate shape.
#include "ir/ops/families.h"
#include "ir/ops/shape_common.h"

#include <algorithm>
#include <cmath>

namespace graphvet::ops {
namespace {

using namespace shape_detail;

constexpr PortAlias kOut0ViewIn0[] = {{0, 0}};
constexpr std::span<const PortAlias> kNone{};

/// Kernel of the ops whose output is the input's elements in the same
/// row-major order under another shape (Reshape, Flatten, Squeeze, Unsqueeze).
template <bool (*Plan)(InferContext &, NoParams *)> void sameOrderKernel(KernelContext &k) {
  NoParams p;
  if (!replan(k, Plan, p))
    return;
  Tensor &out = k.out(0);
  out.copyElements(0, k.in(0), 0, out.size());
}

// ---------------------------------------------------------------------------
// Shape, Size

struct ShapeParams {
  Shape dims;
};

bool planShape(InferContext &ctx, ShapeParams *p) {
  if (!checkInputs(ctx, 1, 1))
    return false;
  const TensorType &in = ctx.in(0);
  int64_t r = in.rank();
  // Opset 15: start/end slice the shape; negative values count from the
  // end; both are clamped to [0, rank].
  auto clampAxis = [r](int64_t a) {
    if (a < 0)
      a = std::max<int64_t>(a, -r) + r;
    return std::min(a, r);
  };
  int64_t start = clampAxis(attrInt(ctx.node, "start", 0));
  int64_t end = clampAxis(attrInt(ctx.node, "end", r));
  int64_t len = std::max<int64_t>(end - start, 0);
  ctx.outputs = {TensorType{DType::I64, {len}}};
  if (p)
    p->dims.assign(in.shape.begin() + start, in.shape.begin() + start + len);
  return true;
}

void shapeKernel(KernelContext &k) {
  ShapeParams p;
  if (!replan(k, planShape, p))
    return;
  for (size_t i = 0; i < p.dims.size(); ++i)
    k.out(0).setInt(static_cast<int64_t>(i), p.dims[i]);
}

bool planSize(InferContext &ctx, NoParams *) {
  if (!checkInputs(ctx, 1, 1))
    return false;
  ctx.outputs = {TensorType{DType::I64, {}}};
  return true;
}

void sizeKernel(KernelContext &k) {
  NoParams p;
  if (replan(k, planSize, p))
    k.out(0).setInt(0, k.in(0).type().numElements());
}

// ---------------------------------------------------------------------------
// ConstantOfShape

bool planConstantOfShape(InferContext &ctx, NoParams *) {
  if (!checkInputs(ctx, 1, 1))
    return false;
  std::vector<int64_t> dims;
  if (!shapeOperand(ctx, 0, "input", dims))
    return false;
  for (int64_t d : dims)
    if (d < 0)
      return ctx.fail("ConstantOfShape: negative dimension in shape " + listStr(dims));
  DType dt = DType::F32;
  if (const AttrValue *v = ctx.node.attr("value")) {
    const Tensor *t = v->isTensor() ? &v->asTensor() : nullptr;
    if (!t || t->size() != 1)
      return ctx.fail("ConstantOfShape: attribute value must be a one-element tensor");
    dt = t->dtype();
  }
  TensorType out{dt, dims};
  if (!checkOutputType(ctx, out))
    return false;
  ctx.outputs = {std::move(out)};
  return true;
}

void constantOfShapeKernel(KernelContext &k) {
  NoParams p;
  if (!replan(k, planConstantOfShape, p))
    return;
  const Tensor *value = attrTensor(k.node, "value");
  Tensor &out = k.out(0);
  if (!value) // default: f32 zero, which the zeroed output already holds
    return;
  for (int64_t i = 0; i < out.size(); ++i)
    out.copyElement(i, *value, 0);
}

// ---------------------------------------------------------------------------
// Range: number of elements max(ceil((limit - start) / delta), 0), element
// i is start + i * delta, both computed in the dtype (ONNX's definition;
// integers wrap, the count of an integer range is exact).

struct RangeParams {
  int64_t count = 0;
};

bool planRange(InferContext &ctx, RangeParams *p) {
  if (!checkInputs(ctx, 3, 3))
    return false;
  const char *names[] = {"start", "limit", "delta"};
  DType dt = ctx.in(0).dtype;
  if (dt != DType::F32 && dt != DType::F64 && dt != DType::I16 && dt != DType::I32 &&
      dt != DType::I64)
    return ctx.fail("Range: dtype must be f32, f64, i16, i32 or i64, got " +
                    std::string(dtypeName(dt)));
  const Tensor *v[3];
  for (size_t i = 0; i < 3; ++i) {
    std::string where = "input " + std::to_string(i) + " (" + names[i] + ") of Range";
    if (ctx.in(i).dtype != dt)
      return ctx.fail(where + " must be " + std::string(dtypeName(dt)) + ", got " +
                      ctx.in(i).str());
    if (ctx.in(i).rank() != 0)
      return ctx.fail(where + " must be a scalar, got " + ctx.in(i).str());
    v[i] = ctx.constant(i);
    if (!v[i])
      return ctx.fail(where + " must be a constant");
    if (v[i]->type() != ctx.in(i) || v[i]->isUndef(0))
      return ctx.fail(where + " must be a determinate scalar constant");
  }
  constexpr int64_t kMaxCount = int64_t{1} << 40; // checkOutputType bounds it further
  int64_t count = 0;
  if (isFloat(dt)) {
    double n;
    if (dt == DType::F32) {
      float s = static_cast<float>(v[0]->getDouble(0));
      float l = static_cast<float>(v[1]->getDouble(0));
      float d = static_cast<float>(v[2]->getDouble(0));
      if (d == 0)
        return ctx.fail("Range: delta must not be zero");
      n = std::ceil((l - s) / d);
    } else {
      double s = v[0]->getDouble(0), l = v[1]->getDouble(0), d = v[2]->getDouble(0);
      if (d == 0)
        return ctx.fail("Range: delta must not be zero");
      n = std::ceil((l - s) / d);
    }
    if (std::isnan(n) || n > static_cast<double>(kMaxCount))
      return ctx.fail("Range: the number of elements is not finite or too large");
    count = n > 0 ? static_cast<int64_t>(n) : 0;
  } else {
    int64_t s = v[0]->getInt(0), l = v[1]->getInt(0), d = v[2]->getInt(0);
    if (d == 0)
      return ctx.fail("Range: delta must not be zero");
    if ((l > s && d > 0) || (l < s && d < 0)) {
      // Exact ceil(|limit - start| / |delta|) on magnitudes (no overflow).
      uint64_t diff = l > s ? static_cast<uint64_t>(l) - static_cast<uint64_t>(s)
                            : static_cast<uint64_t>(s) - static_cast<uint64_t>(l);
      uint64_t step = d > 0 ? static_cast<uint64_t>(d) : 0 - static_cast<uint64_t>(d);
      uint64_t n = diff / step + (diff % step != 0 ? 1 : 0);
      if (n > static_cast<uint64_t>(kMaxCount))
        return ctx.fail("Range: the number of elements is too large");
      count = static_cast<int64_t>(n);
    }
  }
  TensorType out{dt, {count}};
  if (!checkOutputType(ctx, out))
    return false;
  ctx.outputs = {std::move(out)};
  if (p)
    p->count = count;
  return true;
}

void rangeKernel(KernelContext &k) {
  RangeParams p;
  if (!replan(k, planRange, p))
    return;
  Tensor &out = k.out(0);
  switch (out.dtype()) {
  case DType::F32: {
    float s = static_cast<float>(k.in(0).getDouble(0));
    float d = static_cast<float>(k.in(2).getDouble(0));
    for (int64_t i = 0; i < p.count; ++i)
      out.setDouble(i, s + static_cast<float>(i) * d);
    break;
  }
  case DType::F64: {
    double s = k.in(0).getDouble(0), d = k.in(2).getDouble(0);
    for (int64_t i = 0; i < p.count; ++i)
      out.setDouble(i, s + static_cast<double>(i) * d);
    break;
  }
  default: { // integers: wrap (unsigned arithmetic, stored modulo the width)
    uint64_t s = static_cast<uint64_t>(k.in(0).getInt(0));
    uint64_t d = static_cast<uint64_t>(k.in(2).getInt(0));
    for (int64_t i = 0; i < p.count; ++i)
      out.setInt(i, static_cast<int64_t>(s + static_cast<uint64_t>(i) * d));
    break;
  }
  }
}

// ---------------------------------------------------------------------------
// Reshape, Flatten, Squeeze, Unsqueeze

/// GE's one-input Reshape of version-1 graphs (no shape operand, no
/// `shape` attribute) is not ONNX's: it keeps the placeholder meaning, a view
/// of input 0 under its port description (OpInfo::numericForm).
bool onnxReshape(const Node &n) {
  return !(n.inputs.size() == 1 && !n.attr("shape"));
}

bool planReshape(InferContext &ctx, NoParams *) {
  const bool attrForm = ctx.numInputs() == 1 && ctx.node.attr("shape"); // opset 1-4
  if (!checkInputs(ctx, attrForm ? 1 : 2, 2))
    return false;
  const TensorType &in = ctx.in(0);
  std::vector<int64_t> spec;
  if (attrForm) {
    auto a = attrInts(ctx.node, "shape");
    if (!a)
      return ctx.fail("Reshape: attribute shape must be a list of integers");
    spec = *a;
  } else if (!shapeOperand(ctx, 1, "shape", spec)) {
    return false;
  }
  const bool allowZero = attrInt(ctx.node, "allowzero", 0) != 0;
  Shape out(spec.size());
  int64_t inferAt = -1;
  bool hasZero = false;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t v = spec[i];
    if (v == -1) {
      if (inferAt >= 0)
        return ctx.fail("Reshape: shape " + listStr(spec) + " has more than one -1");
      inferAt = static_cast<int64_t>(i);
      out[i] = 1;
    } else if (v < -1) {
      return ctx.fail("Reshape: invalid dimension " + std::to_string(v) + " in shape " +
                      listStr(spec));
    } else if (v == 0 && !allowZero) {
      if (i >= in.shape.size())
        return ctx.fail("Reshape: 0 at position " + std::to_string(i) +
                        " copies a dimension the input " + in.str() + " does not have");
      out[i] = in.shape[i];
    } else {
      hasZero = hasZero || v == 0;
      out[i] = v;
    }
  }
  if (allowZero && hasZero && inferAt >= 0)
    return ctx.fail("Reshape: with allowzero = 1 the shape cannot hold both 0 and -1");
  int64_t total = in.numElements();
  auto known = TensorType{in.dtype, out}.checkedElements();
  if (!known)
    return ctx.fail("Reshape: shape " + listStr(spec) + " is too large");
  if (inferAt >= 0) {
    if (*known == 0 || total % *known != 0)
      return ctx.fail("Reshape: cannot infer the -1 of shape " + listStr(spec) + " for input " +
                      in.str());
    out[static_cast<size_t>(inferAt)] = total / *known;
  } else if (*known != total) {
    return ctx.fail("Reshape: shape " + listStr(spec) + " does not hold the " +
                    std::to_string(total) + " elements of " + in.str());
  }
  ctx.outputs = {TensorType{in.dtype, out}};
  return true;
}

bool planFlatten(InferContext &ctx, NoParams *) {
  if (!checkInputs(ctx, 1, 1))
    return false;
  const TensorType &in = ctx.in(0);
  int64_t r = in.rank(), axis = attrInt(ctx.node, "axis", 1);
  if (axis < -r || axis > r)
    return ctx.fail("Flatten: axis " + std::to_string(axis) + " is out of range for " + in.str());
  if (axis < 0)
    axis += r;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < r; ++i)
    (i < axis ? outer : inner) *= in.shape[static_cast<size_t>(i)];
  ctx.outputs = {TensorType{in.dtype, {outer, inner}}};
  return true;
}

/// Squeeze and Unsqueeze axes: input 1 (opset 13) or attribute `axes`
/// (older opsets); `present` is false when neither is given.
bool axesOperand(InferContext &ctx, std::vector<int64_t> &axes, bool &present) {
  present = true;
  if (ctx.has(1))
    return shapeOperand(ctx, 1, "axes", axes);
  if (ctx.node.attr("axes")) {
    auto a = attrInts(ctx.node, "axes");
    if (!a)
      return ctx.fail(ctx.node.type + ": attribute axes must be a list of integers");
    axes = *a;
    return true;
  }
  present = false;
  return true;
}

bool planSqueeze(InferContext &ctx, NoParams *) {
  if (!checkInputs(ctx, 1, 2))
    return false;
  const TensorType &in = ctx.in(0);
  std::vector<int64_t> axes;
  bool present;
  if (!axesOperand(ctx, axes, present))
    return false;
  // Without axes every size-1 axis goes; an empty axes list removes none
  // (ONNX's shape inference).
  std::vector<bool> drop(in.shape.size(), false);
  if (!present)
    for (size_t i = 0; i < in.shape.size(); ++i)
      drop[i] = in.shape[i] == 1;
  for (int64_t a : axes) {
    auto n = normalizeAxis(a, in.rank());
    if (!n)
      return ctx.fail("Squeeze: axis " + std::to_string(a) + " is out of range for " + in.str());
    size_t i = static_cast<size_t>(*n);
    if (drop[i])
      return ctx.fail("Squeeze: axis " + std::to_string(a) + " is repeated");
    if (in.shape[i] != 1)
      return ctx.fail("Squeeze: axis " + std::to_string(a) + " of " + in.str() +
                      " does not have size 1");
    drop[i] = true;
  }
  Shape out;
  for (size_t i = 0; i < in.shape.size(); ++i)
    if (!drop[i])
      out.push_back(in.shape[i]);
  ctx.outputs = {TensorType{in.dtype, out}};
  return true;
}

bool planUnsqueeze(InferContext &ctx, NoParams *) {
  if (!checkInputs(ctx, 1, 2))
    return false;
  const TensorType &in = ctx.in(0);
  std::vector<int64_t> axes;
  bool present;
  if (!axesOperand(ctx, axes, present))
    return false;
  if (!present)
    return ctx.fail("Unsqueeze needs axes (input 1, or attribute axes before opset 13)");
  int64_t outRank = in.rank() + static_cast<int64_t>(axes.size());
  std::vector<bool> inserted(static_cast<size_t>(outRank), false);
  for (int64_t a : axes) {
    auto n = normalizeAxis(a, outRank);
    if (!n)
      return ctx.fail("Unsqueeze: axis " + std::to_string(a) + " is out of range for rank " +
                      std::to_string(outRank));
    if (inserted[static_cast<size_t>(*n)])
      return ctx.fail("Unsqueeze: axis " + std::to_string(a) + " is repeated");
    inserted[static_cast<size_t>(*n)] = true;
  }
  Shape out;
  size_t next = 0;
  for (size_t i = 0; i < inserted.size(); ++i)
    out.push_back(inserted[i] ? 1 : in.shape[next++]);
  ctx.outputs = {TensorType{in.dtype, out}};
  return true;
}

// ---------------------------------------------------------------------------
// Expand: multidirectional broadcast of the input against the shape operand
// (a dimension 1 in the shape keeps the input's dimension).

bool planExpand(InferContext &ctx, NoParams *) {
  if (!checkInputs(ctx, 2, 2))
    return false;
  const TensorType &in = ctx.in(0);
  std::vector<int64_t> shape;
  if (!shapeOperand(ctx, 1, "shape", shape))
    return false;
  for (int64_t d : shape)
    if (d < 0)
      return ctx.fail("Expand: negative dimension in shape " + listStr(shape));
  auto out = broadcastShapes(in.shape, shape);
  if (!out)
    return ctx.fail("Expand: " + in.str() + " does not broadcast to shape " + listStr(shape));
  TensorType t{in.dtype, *out};
  if (!checkOutputType(ctx, t))
    return false;
  ctx.outputs = {std::move(t)};
  return true;
}

void expandKernel(KernelContext &k) {
  NoParams p;
  if (!replan(k, planExpand, p))
    return;
  const Tensor &in = k.in(0);
  Tensor &out = k.out(0);
  const Shape &os = out.shape(), &is = in.shape();
  std::vector<int64_t> strides = stridesOf(is);
  size_t offset = os.size() - is.size();
  std::vector<std::vector<int64_t>> tables;
  for (size_t a = 0; a < os.size(); ++a) {
    bool broadcast = a < offset || is[a - offset] == 1;
    tables.push_back(stridedAxis(os[a], broadcast ? 0 : strides[a - offset]));
  }
  copyByAxes(out, in, tables);
}

constexpr OpInfo kShapeOps[] = {
    {"Reshape", OpKind::Ordinary, 1, kNone, kOut0ViewIn0, false,
     "output 0 views input 0: input 0 under the shape of input 1 (0 copies, -1 infers)",
     inferOnly<NoParams, planReshape>, sameOrderKernel<planReshape>, false, 0b10, onnxReshape},
    {"Shape", OpKind::Ordinary, 1, kNone, kNone, false,
     "the dimensions of input 0 (from start to end) as i64", inferOnly<ShapeParams, planShape>,
     shapeKernel},
    {"Size", OpKind::Ordinary, 1, kNone, kNone, false, "the element count of input 0 as i64",
     inferOnly<NoParams, planSize>, sizeKernel},
    {"ConstantOfShape", OpKind::Ordinary, 1, kNone, kNone, false,
     "a tensor of shape input 0 filled with attribute value (default f32 0)",
     inferOnly<NoParams, planConstantOfShape>, constantOfShapeKernel, false, 0b1},
    {"Range", OpKind::Ordinary, 1, kNone, kNone, false,
     "start, start + delta, ... up to limit (exclusive)", inferOnly<RangeParams, planRange>,
     rangeKernel, false, 0b111},
    {"Flatten", OpKind::Ordinary, 1, kNone, kNone, false,
     "input 0 as a matrix: axes before `axis` form the rows", inferOnly<NoParams, planFlatten>,
     sameOrderKernel<planFlatten>},
    {"Squeeze", OpKind::Ordinary, 1, kNone, kNone, false,
     "input 0 without the size-1 axes listed (all size-1 axes by default)",
     inferOnly<NoParams, planSqueeze>, sameOrderKernel<planSqueeze>, false, 0b10},
    {"Unsqueeze", OpKind::Ordinary, 1, kNone, kNone, false,
     "input 0 with size-1 axes inserted at the output positions listed",
     inferOnly<NoParams, planUnsqueeze>, sameOrderKernel<planUnsqueeze>, false, 0b10},
    {"Expand", OpKind::Ordinary, 1, kNone, kNone, false,
     "input 0 broadcast with the shape of input 1", inferOnly<NoParams, planExpand>, expandKernel,
     false, 0b10},
};

} // namespace

std::span<const OpInfo> shapeOps() {
  static const std::vector<OpInfo> rows = [] {
    std::vector<OpInfo> r(std::begin(kShapeOps), std::end(kShapeOps));
    std::span<const OpInfo> move = shapeMoveOps();
    r.insert(r.end(), move.begin(), move.end());
    return r;
  }();
  return rows;
}

} // namespace graphvet::ops
