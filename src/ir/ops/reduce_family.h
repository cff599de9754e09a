// The reduce family's parts (reductions and ArgMax/ArgMin in reduce.cpp, the
// softmax family and CumSum in softmax.cpp, MatMul and Gemm in matmul.cpp)
// and the small helpers they share. Private to src/ir/ops/: reduceOps() in
// reduce.cpp hands the rows of all three files to the op library.
//
// Numeric conventions of the whole family (tensor-semantics.md §3):
// - f16/bf16/f32 inputs accumulate in float, f64 inputs in double; integer
//   inputs in 64 bits with two's-complement wrap, narrowed (wrapped) at the end.
// - A sum starts with its first term (a sum of one term is that term, so a
//   reduction over a size-1 axis is the identity, -0 included); an empty sum
//   is +0, an empty product 1.
// - Terms are taken in increasing row-major order of the reduced logical
//   indices (for a dot product: increasing k).
// - An output element that depends on an indeterminate input element is
//   indeterminate as a whole.
#pragma once

#include "ir/op_library.h"

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

namespace graphvet::ops::reduce_detail {

std::span<const OpInfo> softmaxOps(); // softmax.cpp
std::span<const OpInfo> matmulOps();  // matmul.cpp

/// The accumulation type is double for f64, float for the other float dtypes.
inline bool accumulatesInDouble(DType t) {
  return t == DType::F64;
}

/// Checks the input count (between `min` and `max`, the first `min` connected)
/// and fails with a short message otherwise.
inline bool checkInputCount(InferContext &ctx, size_t min, size_t max) {
  const std::string &op = ctx.node.type;
  if (ctx.numInputs() < min || ctx.numInputs() > max) {
    std::string want =
        min == max ? std::to_string(min) : std::to_string(min) + " to " + std::to_string(max);
    return ctx.fail(op + " takes " + want + " inputs, got " + std::to_string(ctx.numInputs()));
  }
  for (size_t i = 0; i < min; ++i)
    if (!ctx.has(i))
      return ctx.fail("input " + std::to_string(i) + " of " + op + " must be connected");
  return true;
}

/// Checks that input `i` has one of the `allowed` dtypes.
inline bool checkDType(InferContext &ctx, size_t i, std::initializer_list<DType> allowed) {
  DType t = ctx.in(i).dtype;
  std::string names;
  for (DType a : allowed) {
    if (a == t)
      return true;
    names += (names.empty() ? "" : ", ") + std::string(dtypeName(a));
  }
  return ctx.fail("input " + std::to_string(i) + " of " + ctx.node.type + " has dtype " +
                  std::string(dtypeName(t)) + "; expected one of " + names);
}

/// Float dtypes of ONNX's `tensor(float16), tensor(float), tensor(double),
/// tensor(bfloat16)` constraint.
inline constexpr std::initializer_list<DType> kFloatTypes = {DType::F16, DType::BF16, DType::F32,
                                                             DType::F64};
/// The numeric types of ONNX's reductions, MatMul, Gemm and CumSum.
inline constexpr std::initializer_list<DType> kNumericTypes = {DType::I32, DType::U32, DType::I64,
                                                               DType::U64, DType::F16, DType::BF16,
                                                               DType::F32, DType::F64};

/// The value of a constant integer operand (i32 or i64, rank <= 1, all
/// determinate) as int64s; fails with a message naming `what` otherwise.
inline bool constantInts(InferContext &ctx, size_t i, const std::string &what,
                         std::vector<int64_t> &out) {
  const Tensor *c = ctx.constant(i);
  const std::string slot = "input " + std::to_string(i) + " (" + what + ") of " + ctx.node.type;
  if (!c)
    return ctx.fail(slot + " must be a constant");
  if (c->dtype() != DType::I64 && c->dtype() != DType::I32)
    return ctx.fail(slot + " must be i64 or i32, not " + std::string(dtypeName(c->dtype())));
  if (c->shape().size() > 1)
    return ctx.fail(slot + " must have rank 0 or 1");
  if (c->anyUndef())
    return ctx.fail(slot + " has indeterminate elements");
  out.clear();
  for (int64_t k = 0; k < c->size(); ++k)
    out.push_back(c->getInt(k));
  return true;
}

} // namespace graphvet::ops::reduce_detail
