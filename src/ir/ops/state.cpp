// In-place state updates (GE's Assign family): output 0 is input 0's buffer,
// written in place (semantics.md §1) with the value of input 1 (Assign), or
// input 0 plus or minus input 1 (AssignAdd, AssignSub), element-wise on
// tensors of one type. The numeric form is GE's two-input one; a node with
// another number of inputs keeps the version-1 placeholder ref write.
#include "ir/ops/families.h"

#include <fmt/format.h>

namespace graphvet::ops {
namespace {

constexpr PortAlias kOut0RefIn0[] = {{0, 0}};

/// GE's Assign family is numeric in its two-input form (ref, value).
bool twoInputs(const Node &n) {
  return n.inputs.size() == 2;
}

bool inferAssign(InferContext &ctx) {
  if (ctx.numInputs() != 2 || !ctx.has(0) || !ctx.has(1))
    return ctx.fail(fmt::format("{} takes two connected inputs (the written tensor and the value)",
                                ctx.node.type));
  if (ctx.in(0) != ctx.in(1))
    return ctx.fail(fmt::format("{} writes {} with a value of type {}; the types must be equal",
                                ctx.node.type, ctx.in(0).str(), ctx.in(1).str()));
  if (ctx.node.type != "Assign" && ctx.in(0).dtype == DType::Bool)
    return ctx.fail(fmt::format("{} does not take bool tensors", ctx.node.type));
  ctx.outputs = {ctx.in(0)};
  return true;
}

void runAssign(KernelContext &ctx) {
  Tensor &out = ctx.out(0);
  for (int64_t i = 0; i < out.size(); ++i)
    out.copyElement(i, ctx.in(1), i);
}

/// ref ± value in the dtype's arithmetic (tensor-semantics.md §3): floats
/// rounded once (f16/bf16 through f32), integers wrapping.
template <int Sign> void runAccumulate(KernelContext &ctx) {
  const Tensor &a = ctx.in(0), &b = ctx.in(1);
  Tensor &out = ctx.out(0);
  DType t = out.dtype();
  for (int64_t i = 0; i < out.size(); ++i) {
    if (a.isUndef(i) || b.isUndef(i)) {
      out.setUndef(i);
      continue;
    }
    if (t == DType::F64) {
      out.setDouble(i, a.getDouble(i) + Sign * b.getDouble(i));
    } else if (isFloat(t)) {
      float x = static_cast<float>(a.getDouble(i)), y = static_cast<float>(b.getDouble(i));
      out.setDouble(i, static_cast<double>(Sign > 0 ? x + y : x - y));
    } else {
      auto x = static_cast<uint64_t>(a.getInt(i)), y = static_cast<uint64_t>(b.getInt(i));
      out.setInt(i, static_cast<int64_t>(Sign > 0 ? x + y : x - y));
    }
  }
}

// clang-format off
constexpr OpInfo kStateOps[] = {
    {"Assign", OpKind::Ordinary, 1, kOut0RefIn0, {}, false,
     "writes input 1 into input 0 in place", inferAssign, runAssign, false, 0, twoInputs},
    {"AssignAdd", OpKind::Ordinary, 1, kOut0RefIn0, {}, false,
     "adds input 1 to input 0 in place", inferAssign, runAccumulate<1>, false, 0, twoInputs},
    {"AssignSub", OpKind::Ordinary, 1, kOut0RefIn0, {}, false,
     "subtracts input 1 from input 0 in place", inferAssign, runAccumulate<-1>, false, 0, twoInputs},
};
// clang-format on

} // namespace

std::span<const OpInfo> stateOps() {
  return kStateOps;
}

} // namespace graphvet::ops
