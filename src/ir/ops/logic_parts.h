// The logic family's parts (internal to src/ir/ops/logic*.cpp): logic.cpp
// holds comparisons, logic, Where and the NaN/inf tests and hands out the
// family's rows; logic_cast.cpp holds Cast and CastLike; logic_random.cpp
// holds Dropout and the random ops. Small inference helpers they share.
#pragma once

#include "ir/op_def.h"
#include "ir/op_library.h"

#include <fmt/format.h>

#include <initializer_list>
#include <span>
#include <string>

namespace graphvet::ops {

std::span<const OpInfo> logicCastOps();
std::span<const OpInfo> logicRandomOps();

namespace logic_detail {

/// Fails unless the node has between `min` and `max` input slots, with the
/// first `min` connected (later ones are optional and may be `_`).
inline bool checkInputCount(InferContext &ctx, size_t min, size_t max) {
  const std::string &op = ctx.node.type;
  size_t n = ctx.numInputs();
  if (n < min || n > max) {
    if (min == max)
      return ctx.fail(fmt::format("{} takes {} input{}, got {}", op, min, min == 1 ? "" : "s", n));
    return ctx.fail(fmt::format("{} takes {} to {} inputs, got {}", op, min, max, n));
  }
  for (size_t i = 0; i < min; ++i)
    if (!ctx.has(i))
      return ctx.fail(fmt::format("input {} of {} must be connected", i, op));
  return true;
}

/// Fails when `t` is not one of `allowed`; `what` names the value
/// ("input 0", "output dtype").
inline bool checkDType(InferContext &ctx, const std::string &what, DType t,
                       std::initializer_list<DType> allowed) {
  for (DType a : allowed)
    if (a == t)
      return true;
  std::string list;
  for (DType a : allowed)
    list += (list.empty() ? "" : ", ") + std::string(dtypeName(a));
  return ctx.fail(
      fmt::format("{} of {} must be one of {}, got {}", what, ctx.node.type, list, dtypeName(t)));
}

/// Fails when the node has more than `max` outputs.
inline bool checkOutputCount(InferContext &ctx, uint32_t max) {
  if (ctx.node.numOutputs > max)
    return ctx.fail(fmt::format("{} has at most {} output{}, got {}", ctx.node.type, max,
                                max == 1 ? "" : "s", ctx.node.numOutputs));
  return true;
}

} // namespace logic_detail
} // namespace graphvet::ops
