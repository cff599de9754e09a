// TensorMoveDeletePass: The deletion surgery: relinking, control edges moved to both sides, the
// cycle check.
#include "passes/tensor_move_delete/deleter.h"

#include "ir/op_library.h"
#include "ir/printer.h"

#include <algorithm>
#include <functional>
#include <set>
#include <string>

namespace graphvet::tmd {

bool TensorMoveDeleter::apply(NodeRef t, Verdict &v, std::vector<std::string> &added,
                              std::vector<std::string> &moved) {
  Graph &g = m_.graph(t.graph);
  const Node &tm = g.node(t.node);
  OutPort producer = *tm.inputs[0];
  std::vector<NodeId> consumers;
  for (InPort c : tm.consumers[0])
    if (std::find(consumers.begin(), consumers.end(), c.node) == consumers.end())
      consumers.push_back(c.node);
  std::vector<NodeId> ctrlPreds = tm.ctrlIn, ctrlSuccs = tm.ctrlOut;

  auto ordered = [&](NodeId from, NodeId to) { return directlyOrdered(g, from, to); };
  auto edgeText = [&](NodeId a, NodeId b) { return name(t.graph, a) + " -> " + name(t.graph, b); };

  // Phase A, with the TensorMove still in place so that nothing is lost if
  // an edge would close a cycle: the scenario-5 edges, and the edges that
  // keep the TensorMove's control successors after every reader of the
  // memory (the consumers now read the source where the copy used to).
  std::vector<std::tuple<GraphId, NodeId, NodeId>> phaseA;
  auto rollback = [&] {
    for (auto [pg, a, b] : phaseA)
      m_.graph(pg).removeCtrlEdge(a, b);
  };
  std::vector<std::tuple<GraphId, NodeId, NodeId>> wanted;
  for (auto [sib, succ] : v.pending)
    wanted.push_back({t.graph, sib, succ});
  wanted.insert(wanted.end(), v.orderEdges.begin(), v.orderEdges.end());
  for (auto [pg, sib, succ] : wanted) {
    if (directlyOrdered(m_.graph(pg), sib, succ))
      continue; // already ordered directly
    bool isNew = false;
    std::string text = name(pg, sib) + " -> " + name(pg, succ);
    if (!addCtrlEdge(pg, sib, succ, &isNew)) {
      rollback();
      v = keepFor("rule3-cycle", "Rule 3: the control edge " + text + " would close a cycle");
      return false;
    }
    if (isNew) {
      phaseA.push_back({pg, sib, succ});
      added.push_back(text);
    }
  }
  std::vector<std::string> movedA;
  std::vector<NodeId> looseSuccs; // successors left unordered with a consumer
  for (NodeId cs : ctrlSuccs)
    for (NodeId c : consumers) {
      if (c == cs || ordered(c, cs))
        continue;
      bool isNew = false;
      if (!addCtrlEdge(t.graph, c, cs, &isNew)) {
        if (v.looseSuccessors) {
          if (std::find(looseSuccs.begin(), looseSuccs.end(), cs) == looseSuccs.end())
            looseSuccs.push_back(cs);
          continue;
        }
        rollback();
        v = keepFor("ctrl-order-cycle", "moving the control edge " + edgeText(t.node, cs) +
                                            " onto consumer " + name(t.graph, c) +
                                            " would close a cycle");
        return false;
      }
      if (isNew) {
        phaseA.push_back({t.graph, c, cs});
        movedA.push_back(edgeText(c, cs));
      }
    }

  // Phase B: the consumers read the producer; the TensorMove goes; its
  // remaining orderings (pred -> consumer, producer -> succ, and pred -> succ
  // when nothing consumed the copy) are re-made directly. Each of these was
  // implied by a path through the TensorMove, so none can close a cycle and
  // the topological index stays valid without re-numbering.
  // The sibling summaries follow the surgery: the TensorMove leaves the
  // producer's consumers and its own consumers join them.
  PortRef producerPort{t.graph, producer}, copyPort{t.graph, {t.node, 0}};
  std::vector<InPort> moving = tm.consumers[0];
  summaryRemove(producerPort, {t.graph, {t.node, 0}});
  for (InPort c : moving)
    summaryRemove(copyPort, {t.graph, c});
  summaries_.erase(copyPort);
  g.replaceAllUses({t.node, 0}, producer);
  g.removeNode(t.node);
  for (InPort c : moving)
    summaryAdd(producerPort, {t.graph, c});
  if (g.consumers(producer).empty()) {
    // An aliasing output nobody reads any more stops passing memory on:
    // re-classify the producer where it is itself a sibling.
    const Node &pn = g.node(producer.node);
    for (uint32_t i = 0; i < pn.inputs.size(); ++i) {
      SlotRef slot{t.graph, {pn.id, i}};
      if (!pn.inputs[i] || !slotKinds_.count(slot))
        continue;
      PortRef feeding{t.graph, *pn.inputs[i]};
      summaryRemove(feeding, slot);
      summaryAdd(feeding, slot);
    }
  }
  auto addMoved = [&](NodeId a, NodeId b) {
    if (a == b || ordered(a, b))
      return;
    bool isNew = false;
    addCtrlEdge(t.graph, a, b, &isNew);
    if (isNew)
      moved.push_back(edgeText(a, b));
  };
  for (NodeId cp : ctrlPreds)
    for (NodeId c : consumers)
      addMoved(cp, c);
  for (NodeId cs : ctrlSuccs)
    addMoved(producer.node, cs);
  if (consumers.empty())
    for (NodeId cp : ctrlPreds)
      for (NodeId cs : ctrlSuccs)
        addMoved(cp, cs);
  else
    for (NodeId cp : ctrlPreds)
      for (NodeId cs : looseSuccs)
        addMoved(cp, cs);
  moved.insert(moved.begin(), movedA.begin(), movedA.end());
  stats_.ctrlEdgesAdded += static_cast<int64_t>(added.size() + moved.size());
  return true;
}

} // namespace graphvet::tmd
