// TensorMoveDeletePass: the deletion surgery (surgery.h).
#include "passes/tensor_move_delete/surgery.h"

#include "passes/tensor_move_delete/naming.h"

#include <algorithm>

namespace graphvet::tmd {
namespace {

class Surgery {
public:
  Surgery(Analysis &a, NodeRef t, Verdict &v)
      : a_(a), m_(a.module()), t_(t), v_(v), g_(m_.graph(t.graph)) {
    const Node &tm = g_.node(t.node);
    producer_ = *tm.inputs[0];
    for (InPort c : tm.consumers[0])
      if (std::find(consumers_.begin(), consumers_.end(), c.node) == consumers_.end())
        consumers_.push_back(c.node);
    ctrlPreds_ = tm.ctrlIn;
    ctrlSuccs_ = tm.ctrlOut;
  }

  bool run(std::vector<std::string> &added, std::vector<std::string> &moved) {
    std::vector<std::string> movedA;
    if (!addWantedEdges(added) || !orderControlSuccessors(movedA))
      return false;
    relink();
    remakeOrderings(moved);
    moved.insert(moved.begin(), movedA.begin(), movedA.end());
    return true;
  }

private:
  std::string edgeText(NodeId a, NodeId b) const {
    return name(m_, t_.graph, a) + " -> " + name(m_, t_.graph, b);
  }
  bool ordered(NodeId from, NodeId to) const { return directlyOrdered(g_, from, to); }
  /// Phase A is undone: the graph is as it was.
  void rollback() {
    for (auto [pg, a, b] : phaseA_)
      m_.graph(pg).removeCtrlEdge(a, b);
  }
  bool addWantedEdges(std::vector<std::string> &added);
  bool orderControlSuccessors(std::vector<std::string> &movedA);
  void relink();
  void remakeOrderings(std::vector<std::string> &moved);

  Analysis &a_;
  Module &m_;
  const NodeRef t_;
  Verdict &v_;
  Graph &g_;
  OutPort producer_;
  std::vector<NodeId> consumers_, ctrlPreds_, ctrlSuccs_;
  std::vector<CtrlEdge> phaseA_;
  std::vector<NodeId> looseSuccs_; // successors left unordered with a consumer
};

// Phase A, with the TensorMove still in place so that nothing is lost if
// an edge would close a cycle: the scenario-5 edges (and an extension's),
// and the edges that keep the TensorMove's control successors after every
// reader of the memory (the consumers now read the source where the copy
// used to).
bool Surgery::addWantedEdges(std::vector<std::string> &added) {
  std::vector<CtrlEdge> wanted;
  for (auto [sib, succ] : v_.pending)
    wanted.push_back({t_.graph, sib, succ});
  wanted.insert(wanted.end(), v_.orderEdges.begin(), v_.orderEdges.end());
  for (auto [pg, sib, succ] : wanted) {
    if (directlyOrdered(m_.graph(pg), sib, succ))
      continue; // already ordered directly
    bool isNew = false;
    std::string text = name(m_, pg, sib) + " -> " + name(m_, pg, succ);
    if (!a_.addCtrlEdge(pg, sib, succ, &isNew)) {
      rollback();
      v_ = keepFor("rule3-cycle", "Rule 3: the control edge " + text + " would close a cycle");
      return false;
    }
    if (isNew) {
      phaseA_.push_back({pg, sib, succ});
      added.push_back(text);
    }
  }
  return true;
}

bool Surgery::orderControlSuccessors(std::vector<std::string> &movedA) {
  for (NodeId cs : ctrlSuccs_)
    for (NodeId c : consumers_) {
      if (c == cs || ordered(c, cs))
        continue;
      bool isNew = false;
      if (!a_.addCtrlEdge(t_.graph, c, cs, &isNew)) {
        if (v_.looseSuccessors) {
          if (std::find(looseSuccs_.begin(), looseSuccs_.end(), cs) == looseSuccs_.end())
            looseSuccs_.push_back(cs);
          continue;
        }
        rollback();
        v_ = keepFor("ctrl-order-cycle", "moving the control edge " + edgeText(t_.node, cs) +
                                             " onto consumer " + name(m_, t_.graph, c) +
                                             " would close a cycle");
        return false;
      }
      if (isNew) {
        phaseA_.push_back({t_.graph, c, cs});
        movedA.push_back(edgeText(c, cs));
      }
    }
  return true;
}

// Phase B: the consumers read the producer; the TensorMove goes. The
// sibling summaries follow the surgery: the TensorMove leaves the producer's
// consumers and its own consumers join them.
void Surgery::relink() {
  SiblingSummaries &siblings = a_.siblings();
  PortRef producerPort{t_.graph, producer_}, copyPort{t_.graph, {t_.node, 0}};
  std::vector<InPort> moving = g_.node(t_.node).consumers[0];
  siblings.summaryRemove(producerPort, {t_.graph, {t_.node, 0}});
  for (InPort c : moving)
    siblings.summaryRemove(copyPort, {t_.graph, c});
  siblings.forget(copyPort);
  g_.replaceAllUses({t_.node, 0}, producer_);
  g_.removeNode(t_.node);
  for (InPort c : moving)
    siblings.summaryAdd(producerPort, {t_.graph, c});
  if (g_.consumers(producer_).empty()) {
    // An aliasing output nobody reads any more stops passing memory on:
    // re-classify the producer where it is itself a sibling.
    const Node &pn = g_.node(producer_.node);
    for (uint32_t i = 0; i < pn.inputs.size(); ++i) {
      SlotRef slot{t_.graph, {pn.id, i}};
      if (!pn.inputs[i] || !siblings.counted(slot))
        continue;
      PortRef feeding{t_.graph, *pn.inputs[i]};
      siblings.summaryRemove(feeding, slot);
      siblings.summaryAdd(feeding, slot);
    }
  }
}

// The TensorMove's remaining orderings (pred -> consumer, producer -> succ,
// and pred -> succ when nothing consumed the copy) are re-made directly.
// Each of these was implied by a path through the TensorMove, so none can
// close a cycle and the topological index stays valid without re-numbering.
void Surgery::remakeOrderings(std::vector<std::string> &moved) {
  auto addMoved = [&](NodeId a, NodeId b) {
    if (a == b || ordered(a, b))
      return;
    bool isNew = false;
    a_.addCtrlEdge(t_.graph, a, b, &isNew);
    if (isNew)
      moved.push_back(edgeText(a, b));
  };
  for (NodeId cp : ctrlPreds_)
    for (NodeId c : consumers_)
      addMoved(cp, c);
  for (NodeId cs : ctrlSuccs_)
    addMoved(producer_.node, cs);
  if (consumers_.empty())
    for (NodeId cp : ctrlPreds_)
      for (NodeId cs : ctrlSuccs_)
        addMoved(cp, cs);
  else
    for (NodeId cp : ctrlPreds_)
      for (NodeId cs : looseSuccs_)
        addMoved(cp, cs);
}

} // namespace

bool deleteTensorMove(Analysis &a, NodeRef t, Verdict &v, std::vector<std::string> &added,
                      std::vector<std::string> &moved) {
  return Surgery(a, t, v).run(added, moved);
}

} // namespace graphvet::tmd
