// legalize, surgery: adds a rewrite's nodes next to the node they replace
// (fresh names derived from its name, its source location) and moves every
// use of its output 0 to the replacement's last node.
#include "passes/legalize/internal.h"
#include "passes/port_surgery.h"

#include <fmt/format.h>
#include <memory>

namespace graphvet::legalize {
namespace {} // namespace

OutPort Builder::constant(const std::string &suffix, Tensor value) {
  OutPort c = op(suffix, "Const", {});
  g_.node(c.node).attrs["value"] =
      AttrValue::ofTensor(std::make_shared<const Tensor>(std::move(value)));
  return c;
}

OutPort Builder::op(const std::string &suffix, const std::string &type,
                    std::vector<std::optional<OutPort>> inputs) {
  NodeId id = g_.addNode(freshNodeName(g_, old_.name + "_" + suffix), type, std::move(inputs), 1);
  g_.node(id).loc = old_.loc;
  ++created_;
  return OutPort{id, 0};
}

OutPort Builder::cast(const std::string &suffix, OutPort in, DType to) {
  OutPort c = op(suffix, "Cast", {in});
  node(c).attrs["to"] = AttrValue::ofIdent(std::string(dtypeName(to)));
  return c;
}

void Builder::finish(OutPort result) {
  Node &r = g_.node(result.node);
  if (g_.find(old_.name) == kNoNode)
    g_.rename(result.node, old_.name);
  for (const char *key : {"out0.dtype", "out0.shape"})
    if (const AttrValue *v = old_.attr(key))
      r.attrs[key] = *v;
  for (const InPort &use : old_.consumers[0])
    g_.setInput(use, result);
}

AttrValue intList(const std::vector<int64_t> &v) {
  AttrValue::List l;
  for (int64_t x : v)
    l.push_back(AttrValue::ofInt(x));
  return AttrValue::ofList(std::move(l));
}

Tensor scalarTensor(DType dtype, double value) {
  Tensor t(TensorType{dtype, {}});
  if (isFloat(dtype))
    t.setDouble(0, value);
  else
    t.setInt(0, static_cast<int64_t>(value));
  return t;
}

std::optional<Refusal> missingOps(const Target &t,
                                  const std::vector<std::pair<std::string, DType>> &needed) {
  for (const auto &[op, dtype] : needed)
    if (!t.supportsOp(op, dtype))
      return Refusal{"no-supported-form",
                     fmt::format("the exact rewrite needs {} of {}, which target {} lacks", op,
                                 dtypeName(dtype), t.name)};
  return std::nullopt;
}

} // namespace graphvet::legalize
