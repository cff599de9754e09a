// Comparisons, logic, Where, NaN tests, casts, Dropout and random ops: type
// inference and reference kernels. This file holds the comparisons
// (Equal, Less, Greater, LessOrEqual, GreaterOrEqual), the boolean ops (Not,
// And, Or, Xor), Where, IsNaN and IsInf, and assembles the family's rows with
// those of logic_cast.cpp and logic_random.cpp.
//
// Indeterminate elements (tensor-semantics.md §2) propagate element-wise: an
// output element is indeterminate when an input element it reads is, even
// where the other operand would decide the result (And(false, x)); Where
// reads the condition and only the operand it selects.
#include "ir/ops/families.h"
#include "ir/ops/logic_parts.h"

#include <cmath>
#include <vector>

namespace graphvet::ops {
namespace {

using logic_detail::checkDType;
using logic_detail::checkInputCount;
using logic_detail::checkOutputCount;

// ---------------------------------------------------------------------------
// Broadcasting helpers.

/// Output shape of a multidirectional broadcast of inputs `first`..`last`
/// (all connected); fails with both shapes named when two do not broadcast.
bool broadcastInputs(InferContext &ctx, size_t first, size_t last, Shape &out) {
  out = ctx.in(first).shape;
  for (size_t i = first + 1; i <= last; ++i) {
    auto b = broadcastShapes(out, ctx.in(i).shape);
    if (!b)
      return ctx.fail(fmt::format("{}: input shapes {} and {} do not broadcast", ctx.node.type,
                                  shapeStr(out), shapeStr(ctx.in(i).shape)));
    out = std::move(*b);
  }
  return true;
}

/// For each output element, the index of the element each input reads.
class BroadcastIndexer {
public:
  BroadcastIndexer(const Shape &out, const Tensor &in) : out_(out), in_(in.shape()) {
    same_ = in_ == out_;
  }
  int64_t operator()(int64_t i) const { return same_ ? i : broadcastIndex(i, out_, in_); }

private:
  const Shape &out_;
  const Shape &in_;
  bool same_ = false;
};

// ---------------------------------------------------------------------------
// Comparisons.

enum class Order { Less, Equal, Greater, Unordered };

/// IEEE order of two elements of one dtype: floats compare as their exact
/// double values (so -0 == +0 and NaN is unordered), u64 unsigned, other
/// integers and bool as signed int64.
Order compareElements(DType t, const uint8_t *a, const uint8_t *b) {
  if (isFloat(t)) {
    double x = loadDouble(t, a), y = loadDouble(t, b);
    if (std::isnan(x) || std::isnan(y))
      return Order::Unordered;
    return x < y ? Order::Less : x > y ? Order::Greater : Order::Equal;
  }
  if (t == DType::U64) {
    uint64_t x = loadUInt(t, a), y = loadUInt(t, b);
    return x < y ? Order::Less : x > y ? Order::Greater : Order::Equal;
  }
  int64_t x = loadInt(t, a), y = loadInt(t, b);
  return x < y ? Order::Less : x > y ? Order::Greater : Order::Equal;
}

enum class CmpOp { Equal, Less, Greater, LessOrEqual, GreaterOrEqual };

template <CmpOp op> bool holds(Order o) {
  switch (op) {
  case CmpOp::Equal:
    return o == Order::Equal;
  case CmpOp::Less:
    return o == Order::Less;
  case CmpOp::Greater:
    return o == Order::Greater;
  case CmpOp::LessOrEqual:
    return o == Order::Less || o == Order::Equal;
  case CmpOp::GreaterOrEqual:
    return o == Order::Greater || o == Order::Equal;
  }
  return false;
}

/// Two inputs of one dtype (bool only when `allowBool`), broadcast; a bool
/// output of the broadcast shape.
template <bool allowBool> bool inferCompare(InferContext &ctx) {
  if (!checkInputCount(ctx, 2, 2) || !checkOutputCount(ctx, 1))
    return false;
  DType a = ctx.in(0).dtype, b = ctx.in(1).dtype;
  if (a != b)
    return ctx.fail(fmt::format("inputs of {} must have one dtype, got {} and {}", ctx.node.type,
                                dtypeName(a), dtypeName(b)));
  if (!allowBool && a == DType::Bool)
    return ctx.fail(fmt::format("{} does not compare bool inputs", ctx.node.type));
  Shape s;
  if (!broadcastInputs(ctx, 0, 1, s))
    return false;
  ctx.outputs = {TensorType{DType::Bool, std::move(s)}};
  return true;
}

template <CmpOp op> void compareKernel(KernelContext &ctx) {
  const Tensor &a = ctx.in(0), &b = ctx.in(1);
  Tensor &out = ctx.out(0);
  BroadcastIndexer ia(out.shape(), a), ib(out.shape(), b);
  DType t = a.dtype();
  for (int64_t i = 0; i < out.size(); ++i) {
    int64_t j = ia(i), k = ib(i);
    if (a.isUndef(j) || b.isUndef(k)) {
      out.setUndef(i);
      continue;
    }
    out.setInt(i, holds<op>(compareElements(t, a.at(j), b.at(k))) ? 1 : 0);
  }
}

// ---------------------------------------------------------------------------
// Boolean ops.

bool inferNot(InferContext &ctx) {
  if (!checkInputCount(ctx, 1, 1) || !checkOutputCount(ctx, 1) ||
      !checkDType(ctx, "input 0", ctx.in(0).dtype, {DType::Bool}))
    return false;
  ctx.outputs = {ctx.in(0)};
  return true;
}

void notKernel(KernelContext &ctx) {
  const Tensor &x = ctx.in(0);
  Tensor &out = ctx.out(0);
  for (int64_t i = 0; i < out.size(); ++i) {
    if (x.isUndef(i))
      out.setUndef(i);
    else
      out.setInt(i, x.getBool(i) ? 0 : 1);
  }
}

bool inferLogic(InferContext &ctx) {
  if (!checkInputCount(ctx, 2, 2) || !checkOutputCount(ctx, 1) ||
      !checkDType(ctx, "input 0", ctx.in(0).dtype, {DType::Bool}) ||
      !checkDType(ctx, "input 1", ctx.in(1).dtype, {DType::Bool}))
    return false;
  Shape s;
  if (!broadcastInputs(ctx, 0, 1, s))
    return false;
  ctx.outputs = {TensorType{DType::Bool, std::move(s)}};
  return true;
}

enum class LogicOp { And, Or, Xor };

template <LogicOp op> void logicKernel(KernelContext &ctx) {
  const Tensor &a = ctx.in(0), &b = ctx.in(1);
  Tensor &out = ctx.out(0);
  BroadcastIndexer ia(out.shape(), a), ib(out.shape(), b);
  for (int64_t i = 0; i < out.size(); ++i) {
    int64_t j = ia(i), k = ib(i);
    if (a.isUndef(j) || b.isUndef(k)) {
      out.setUndef(i);
      continue;
    }
    bool x = a.getBool(j), y = b.getBool(k);
    bool r = op == LogicOp::And ? (x && y) : op == LogicOp::Or ? (x || y) : (x != y);
    out.setInt(i, r ? 1 : 0);
  }
}

// ---------------------------------------------------------------------------
// Where.

bool inferWhere(InferContext &ctx) {
  if (!checkInputCount(ctx, 3, 3) || !checkOutputCount(ctx, 1) ||
      !checkDType(ctx, "input 0 (condition)", ctx.in(0).dtype, {DType::Bool}))
    return false;
  DType x = ctx.in(1).dtype, y = ctx.in(2).dtype;
  if (x != y)
    return ctx.fail(fmt::format("inputs 1 and 2 of Where must have one dtype, got {} and {}",
                                dtypeName(x), dtypeName(y)));
  Shape s;
  if (!broadcastInputs(ctx, 0, 2, s))
    return false;
  ctx.outputs = {TensorType{x, std::move(s)}};
  return true;
}

void whereKernel(KernelContext &ctx) {
  const Tensor &c = ctx.in(0), &x = ctx.in(1), &y = ctx.in(2);
  Tensor &out = ctx.out(0);
  BroadcastIndexer ic(out.shape(), c), ix(out.shape(), x), iy(out.shape(), y);
  for (int64_t i = 0; i < out.size(); ++i) {
    int64_t j = ic(i);
    if (c.isUndef(j)) // an indeterminate condition: the element is (§2)
      out.setUndef(i);
    else if (c.getBool(j))
      out.copyElement(i, x, ix(i));
    else
      out.copyElement(i, y, iy(i));
  }
}

// ---------------------------------------------------------------------------
// IsNaN, IsInf.

bool inferIsNaN(InferContext &ctx) {
  // ONNX IsNaN-13: float16, float, double, bfloat16.
  if (!checkInputCount(ctx, 1, 1) || !checkOutputCount(ctx, 1) ||
      !checkDType(ctx, "input 0", ctx.in(0).dtype,
                  {DType::F16, DType::BF16, DType::F32, DType::F64}))
    return false;
  ctx.outputs = {TensorType{DType::Bool, ctx.in(0).shape}};
  return true;
}

void isNaNKernel(KernelContext &ctx) {
  const Tensor &x = ctx.in(0);
  Tensor &out = ctx.out(0);
  for (int64_t i = 0; i < out.size(); ++i) {
    if (x.isUndef(i))
      out.setUndef(i);
    else
      out.setInt(i, std::isnan(x.getDouble(i)) ? 1 : 0);
  }
}

bool inferIsInf(InferContext &ctx) {
  // ONNX IsInf-10: float, double (f16/bf16 arrive with opset 20).
  if (!checkInputCount(ctx, 1, 1) || !checkOutputCount(ctx, 1) ||
      !checkDType(ctx, "input 0", ctx.in(0).dtype, {DType::F32, DType::F64}))
    return false;
  ctx.outputs = {TensorType{DType::Bool, ctx.in(0).shape}};
  return true;
}

void isInfKernel(KernelContext &ctx) {
  bool positive = attrInt(ctx.node, "detect_positive", 1) != 0;
  bool negative = attrInt(ctx.node, "detect_negative", 1) != 0;
  const Tensor &x = ctx.in(0);
  Tensor &out = ctx.out(0);
  for (int64_t i = 0; i < out.size(); ++i) {
    if (x.isUndef(i)) {
      out.setUndef(i);
      continue;
    }
    double v = x.getDouble(i);
    bool r = std::isinf(v) && (v > 0 ? positive : negative);
    out.setInt(i, r ? 1 : 0);
  }
}

constexpr std::span<const PortAlias> kNone{};

constexpr OpInfo kLogicOps[] = {
    {"Equal", OpKind::Ordinary, 1, kNone, kNone, false,
     "a == b element-wise (broadcast; IEEE: NaN is unequal to everything), bool output",
     inferCompare<true>, compareKernel<CmpOp::Equal>},
    {"Less", OpKind::Ordinary, 1, kNone, kNone, false,
     "a < b element-wise (broadcast; IEEE), bool output", inferCompare<false>,
     compareKernel<CmpOp::Less>},
    {"Greater", OpKind::Ordinary, 1, kNone, kNone, false,
     "a > b element-wise (broadcast; IEEE), bool output", inferCompare<false>,
     compareKernel<CmpOp::Greater>},
    {"LessOrEqual", OpKind::Ordinary, 1, kNone, kNone, false,
     "a <= b element-wise (broadcast; IEEE), bool output", inferCompare<false>,
     compareKernel<CmpOp::LessOrEqual>},
    {"GreaterOrEqual", OpKind::Ordinary, 1, kNone, kNone, false,
     "a >= b element-wise (broadcast; IEEE), bool output", inferCompare<false>,
     compareKernel<CmpOp::GreaterOrEqual>},
    {"Not", OpKind::Ordinary, 1, kNone, kNone, false, "logical not of a bool tensor", inferNot,
     notKernel},
    {"And", OpKind::Ordinary, 1, kNone, kNone, false, "logical and of two bool tensors (broadcast)",
     inferLogic, logicKernel<LogicOp::And>},
    {"Or", OpKind::Ordinary, 1, kNone, kNone, false, "logical or of two bool tensors (broadcast)",
     inferLogic, logicKernel<LogicOp::Or>},
    {"Xor", OpKind::Ordinary, 1, kNone, kNone, false, "logical xor of two bool tensors (broadcast)",
     inferLogic, logicKernel<LogicOp::Xor>},
    {"Where", OpKind::Ordinary, 1, kNone, kNone, false,
     "condition ? x : y element-wise (three-way broadcast)", inferWhere, whereKernel},
    {"IsNaN", OpKind::Ordinary, 1, kNone, kNone, false, "true where the element is a NaN",
     inferIsNaN, isNaNKernel},
    {"IsInf", OpKind::Ordinary, 1, kNone, kNone, false,
     "true where the element is +inf (detect_positive) or -inf (detect_negative)", inferIsInf,
     isInfKernel},
};

} // namespace

std::span<const OpInfo> logicOps() {
  static const std::vector<OpInfo> rows = [] {
    std::vector<OpInfo> r(std::begin(kLogicOps), std::end(kLogicOps));
    for (std::span<const OpInfo> part : {logicCastOps(), logicRandomOps()})
      r.insert(r.end(), part.begin(), part.end());
    return r;
  }();
  return rows;
}

} // namespace graphvet::ops
