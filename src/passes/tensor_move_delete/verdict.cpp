// TensorMoveDeletePass: verdicts and the helpers every unit uses.
#include "passes/tensor_move_delete/deleter.h"

#include "ir/op_library.h"

namespace graphvet::tmd {

Verdict extensionDelete(std::string rule, const Verdict &kept, SourceTrace trace,
                        std::vector<SourceTrace> ends,
                        std::vector<std::tuple<GraphId, NodeId, NodeId>> orderEdges) {
  Verdict v;
  v.outcome = Outcome::Delete;
  v.rule = std::move(rule);
  v.looseSuccessors = true;
  v.reason = kept.rule;
  v.orderEdges = std::move(orderEdges);
  v.trace = std::move(trace);
  v.ends = std::move(ends);
  return v;
}

/// True when an edge from `from` to `to` already orders all of `from` before
/// all of `to`: a control edge, or a data edge between two nodes that are not
/// calls. (A call is transparent: a data edge into it orders the producer
/// only before the subgraph's readers of that input, and a data edge out of
/// it only orders what produced that result. A control edge to or from a
/// call covers every node inside.)
bool directlyOrdered(const Graph &g, NodeId from, NodeId to) {
  if (g.hasCtrlEdge(from, to))
    return true;
  if (opKind(g.node(from)) == OpKind::Call || opKind(g.node(to)) == OpKind::Call)
    return false;
  for (const auto &in : g.node(to).inputs)
    if (in && in->node == from)
      return true;
  return false;
}

Verdict keepFor(std::string rule, std::string reason) {
  Verdict v;
  v.outcome = Outcome::Keep;
  v.rule = std::move(rule);
  v.reason = std::move(reason);
  return v;
}

std::string joinLimited(const std::vector<std::string> &items, size_t limit) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < limit; ++i)
    out += (i ? ", " : "") + items[i];
  if (items.size() > limit)
    out += ", +" + std::to_string(items.size() - limit) + " more";
  return out;
}

} // namespace graphvet::tmd
