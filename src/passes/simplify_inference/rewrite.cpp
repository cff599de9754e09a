// simplify-inference, surgery: builds the element-wise replacement of a
// planned node, moves every use of its output 0 to the replacement's last
// node, which takes the removed node's name and port description.
#include "passes/port_surgery.h"
#include "passes/simplify_inference/internal.h"

#include <fmt/format.h>
#include <memory>

namespace graphvet::simplify_inference {
namespace {

/// Adds nodes while remembering the removed node's location.
class Builder {
public:
  Builder(Graph &g, const Node &old) : g_(g), old_(old) {}

  OutPort constant(const std::string &suffix, Tensor value) {
    NodeId c = add(suffix, "Const", {});
    g_.node(c).attrs["value"] =
        AttrValue::ofTensor(std::make_shared<const Tensor>(std::move(value)));
    return OutPort{c, 0};
  }
  OutPort op(const std::string &suffix, const std::string &type,
             std::vector<std::optional<OutPort>> inputs) {
    return OutPort{add(suffix, type, std::move(inputs)), 0};
  }
  Node &node(OutPort p) { return g_.node(p.node); }
  int64_t created() const { return created_; }

  /// The replacement's last node takes the old name and port description,
  /// and every consumer of the old output 0.
  void finish(OutPort result) {
    Node &r = g_.node(result.node);
    if (g_.find(old_.name) == kNoNode)
      g_.rename(result.node, old_.name);
    for (const char *key : {"out0.dtype", "out0.shape"})
      if (const AttrValue *v = old_.attr(key))
        r.attrs[key] = *v;
    for (const InPort &use : old_.consumers[0])
      g_.setInput(use, result);
  }

private:
  NodeId add(const std::string &suffix, const std::string &type,
             std::vector<std::optional<OutPort>> inputs) {
    NodeId id = g_.addNode(freshNodeName(g_, old_.name + "_" + suffix), type, std::move(inputs), 1);
    g_.node(id).loc = old_.loc;
    ++created_;
    return id;
  }

  Graph &g_;
  const Node &old_;
  int64_t created_ = 0;
};

AttrValue intList(const std::vector<int64_t> &v) {
  AttrValue::List l;
  for (int64_t x : v)
    l.push_back(AttrValue::ofInt(x));
  return AttrValue::ofList(std::move(l));
}

} // namespace

int64_t rewriteBatchNorm(Graph &g, NodeId id, BatchNormPlan plan) {
  Node old = g.node(id); // a copy: the node is removed first, freeing its name
  g.removeNode(id);
  Builder b(g, old);
  OutPort scale = b.constant("scale", std::move(plan.scale));
  OutPort shift = b.constant("shift", std::move(plan.shift));
  OutPort mul = b.op("mul", "Mul", {plan.x, scale});
  OutPort add = b.op("add", "Add", {mul, shift});
  b.finish(add);
  return b.created();
}

int64_t rewriteNorm(Graph &g, NodeId id, const NormPlan &plan) {
  Node old = g.node(id);
  g.removeNode(id);
  Builder b(g, old);
  auto reduceMean = [&](const std::string &suffix, OutPort in) {
    OutPort r = b.op(suffix, "ReduceMean", {in});
    b.node(r).attrs["axes"] = intList(plan.axes);
    b.node(r).attrs["keepdims"] = AttrValue::ofInt(1);
    return r;
  };
  // The statistics in the stash type (LayerNormalization), else the data's.
  const DType compute = plan.stash.value_or(plan.dtype);
  auto cast = [&](const std::string &suffix, OutPort in, DType to) {
    OutPort c = b.op(suffix, "Cast", {in});
    b.node(c).attrs["to"] = AttrValue::ofIdent(std::string(dtypeName(to)));
    return c;
  };
  const OutPort x = compute == plan.dtype ? plan.x : cast("stash", plan.x, compute);
  OutPort mean = reduceMean("mean", x);
  OutPort centered = b.op("centered", "Sub", {x, mean});
  OutPort var;
  if (plan.varianceFromSquares) {
    OutPort square = b.op("square", "Mul", {x, x});
    OutPort meanSquare = reduceMean("mean_square", square);
    OutPort squareMean = b.op("square_mean", "Mul", {mean, mean});
    var = b.op("var", "Sub", {meanSquare, squareMean});
  } else {
    OutPort square = b.op("square", "Mul", {centered, centered});
    var = reduceMean("var", square);
  }
  Tensor epsValue(TensorType{compute, {}});
  epsValue.setDouble(0, plan.epsilon); // rounded once to the statistics' dtype
  OutPort eps = b.constant("epsilon", std::move(epsValue));
  OutPort varEps = b.op("var_eps", "Add", {var, eps});
  OutPort stddev = b.op("stddev", "Sqrt", {varEps});
  OutPort normed = b.op("normed", "Div", {centered, stddev});
  if (compute != plan.dtype)
    normed = cast("normed_cast", normed, plan.dtype);
  auto param = [&](const std::string &suffix, OutPort p) {
    if (plan.paramShape.empty())
      return p;
    Tensor shape(TensorType{DType::I64, {static_cast<int64_t>(plan.paramShape.size())}});
    for (size_t k = 0; k < plan.paramShape.size(); ++k)
      shape.setInt(static_cast<int64_t>(k), plan.paramShape[k]);
    OutPort s = b.constant(suffix + "_shape", std::move(shape));
    return b.op(suffix + "_reshaped", "Reshape", {p, s});
  };
  OutPort scaled = b.op("scaled", "Mul", {normed, param("scale", plan.scale)});
  OutPort result = scaled;
  if (plan.bias)
    result = b.op("shifted", "Add", {scaled, param("bias", *plan.bias)});
  b.finish(result);
  return b.created();
}

} // namespace graphvet::simplify_inference
