// fold-scale-axis, surgery: the absorbing op reads new weight (and bias)
// constants, the readers of the Mul (or of the absorbed Add) read the op's
// result (backward) or the Mul's unscaled operand (forward), and the Mul
// and Add are removed. The old constants are left to the driver.
#include "passes/fold_scale_axis/internal.h"
#include "passes/port_surgery.h"

#include <fmt/format.h>
#include <memory>

namespace graphvet::fold_scale_axis {
namespace {

OutPort addConst(Graph &g, NodeId near, const std::string &suffix, Tensor value) {
  NodeId c = g.addNode(freshNodeName(g, g.node(near).name + "_" + suffix), "Const", {}, 1);
  g.node(c).loc = g.node(near).loc;
  g.node(c).attrs["value"] = AttrValue::ofTensor(std::make_shared<const Tensor>(std::move(value)));
  return OutPort{c, 0};
}

} // namespace

int64_t applyFold(Graph &g, FoldPlan plan) {
  int64_t created = 0;
  OutPort w = addConst(g, plan.op, "folded_w", std::move(plan.weight));
  ++created;
  g.setInput(InPort{plan.op, 1}, w);
  if (plan.bias) {
    OutPort b = addConst(g, plan.op, "folded_b", std::move(*plan.bias));
    ++created;
    if (g.node(plan.op).inputs.size() > 2)
      g.setInput(InPort{plan.op, 2}, b);
    else
      g.appendInput(plan.op, b);
    if (plan.setBetaOne)
      g.node(plan.op).attrs["beta"] = AttrValue::ofFloat(1.0);
  }
  if (plan.dropAlpha)
    g.node(plan.op).attrs.erase("alpha");
  if (plan.dir == Direction::Backward) {
    NodeId last = plan.add ? *plan.add : plan.mul;
    g.replaceAllUses(OutPort{last, 0}, OutPort{plan.op, 0});
    if (plan.add)
      g.removeNode(*plan.add);
  } else {
    g.replaceAllUses(OutPort{plan.mul, 0}, plan.unscaled);
  }
  g.removeNode(plan.mul);
  return created;
}

} // namespace graphvet::fold_scale_axis
