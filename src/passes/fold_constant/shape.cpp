// fold-constant, shape operators: `Shape` and `Size` read only their input's
// type, and every type is static (tensor-semantics.md §1), so they fold
// whatever produces the input — a graph input, a variable, a random draw —
// without reading or repeating it. The value comes from the op's own kernel
// run on a stand-in tensor of the input's type (its bytes are never read),
// so the `start`/`end` rules of Shape are the interpreter's.
#include "passes/fold_constant/fold_internal.h"

#include "ir/op_def.h"
#include "ir/op_library.h"

#include <fmt/format.h>

namespace graphvet::fold {

Outcome tryShape(Env &env, GraphId gid, NodeId id) {
  const Graph &g = env.m.graph(gid);
  const Node &n = g.node(id);
  if ((n.type != "Shape" && n.type != "Size") || !numericDefinition(n) || n.inputs.size() != 1 ||
      !n.inputs[0])
    return std::monostate{};
  if (isReserved(n))
    return Refusal{"reserved", "a reserved attribute forbids folding it"};
  const OutPort src = *n.inputs[0];
  const TensorType *type = nullptr;
  if (std::optional<ConstantSource> c = constantSource(env.m, gid, src))
    type = &c->value->type();
  else
    type = env.typeOf(gid, src);
  if (!type)
    return Refusal{"no-type", "its input's type is unknown"};
  std::optional<int64_t> elements = type->checkedElements();
  if (!elements || static_cast<uint64_t>(*elements) * dtypeBytes(type->dtype) > kMaxBufferBytes)
    return Refusal{"size-cap", fmt::format("its input {} is larger than any buffer", type->str())};
  // A stand-in of the input's type: Shape and Size read its type only.
  Tensor standIn(*type);
  const Tensor *inputs[] = {&standIn};
  std::string error;
  std::optional<std::vector<Tensor>> values = evaluateNode(n, inputs, error);
  if (!values)
    return Refusal{"eval-error", error};
  return Folded{std::move(*values), fmt::format("{} of {}", n.type, type->str())};
}

} // namespace graphvet::fold
