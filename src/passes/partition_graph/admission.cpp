// partition-graph, admission: which nodes may be outlined for a target. Graph
// structure stays silently; reserved nodes, effects, random draws, copies into fresh buffers,
// views and nodes with control edges stay with a reason tag; the rest is
// what the target table supports.
#include "ir/op_library.h"
#include "passes/partition_graph/internal.h"

#include <fmt/format.h>

namespace graphvet::partition {

bool isReservedNode(const Node &n) {
  if (n.attr("no_need_constant_folding"))
    return true;
  const AttrValue *v = n.attr("_cannot_be_deleted");
  return v && ((v->isBool() && v->asBool()) || (v->isString() && v->asString() == "true"));
}

std::optional<Refusal> admission(const Node &n, const Target &target,
                                 const std::vector<const TensorType *> &inputTypes) {
  switch (opKind(n)) {
  case OpKind::DataSource:
  case OpKind::Variable:
  case OpKind::Weight:
  case OpKind::NetOutput:
  case OpKind::Call:
  case OpKind::If:
  case OpKind::Case:
  case OpKind::While:
    return Refusal{"", ""};
  case OpKind::Copy:
    // A TensorMove or MemcpyAsync exists for its fresh buffer; only a target that
    // lists the op (Identity on both shipped targets) takes it.
    if (n.type != "Identity")
      return Refusal{"memory", fmt::format("{} is a {}: a copy into a fresh buffer stays in "
                                           "the host",
                                           n.name, n.type)};
    break;
  case OpKind::Ordinary:
    break;
  }
  if (isReservedNode(n))
    return Refusal{"reserved", fmt::format("{} is reserved (_cannot_be_deleted or "
                                           "no_need_constant_folding): it keeps its graph and name",
                                           n.name)};
  bool effect = isInputMutable(n) || !refWrittenInputs(n).empty();
  for (uint32_t k = 0; k < n.numOutputs && !effect; ++k)
    effect = refVarSrcName(n, k) != nullptr;
  if (effect)
    return Refusal{"effect", fmt::format("{} writes memory it does not own (a ref output, a "
                                         "variable or a scribbled input)",
                                         n.name)};
  if (lookupOp(n.type).nondeterministic)
    return Refusal{"random", fmt::format("{} draws from the run's random stream; its draw "
                                         "order stays in the host",
                                         n.name)};
  for (uint32_t k = 0; k < n.numOutputs; ++k)
    if (auto i = viewInput(n, k))
      return Refusal{"view", fmt::format("output {} of {} is a view of input {}: a region "
                                         "output must own its buffer",
                                         k, n.name, *i)};
  if (!n.ctrlIn.empty() || !n.ctrlOut.empty())
    return Refusal{
        "control-edge",
        fmt::format("{} has control edges (a call would order its whole region)", n.name)};
  if (!numericDefinition(n) && opKind(n) != OpKind::Copy)
    return Refusal{"unsupported", fmt::format("{} has no numeric definition", n.type)};
  if (std::optional<std::string> reason = target.unsupportedReason(n, inputTypes))
    return Refusal{"unsupported", *reason};
  return std::nullopt;
}

} // namespace graphvet::partition
