// TensorMoveDeletePass: the sibling summaries (siblings.h).
#include "passes/tensor_move_delete/siblings.h"

#include "ir/op_library.h"

namespace graphvet::tmd {

SiblingKind SiblingSummaries::classifySibling(const SlotRef &s) {
  const Node &n = m_.graph(s.graph).node(s.slot.node);
  if (opKind(n) == OpKind::NetOutput)
    return SiblingKind::NetOutput;
  if (holdsSubgraphs(n))
    return SiblingKind::Holder;
  if (passesMemoryOn(m_, index_, s.graph, n.id, s.slot.index, budget_))
    return SiblingKind::PassesOn;
  if (writes(directAccess(n, s.slot.index)))
    return SiblingKind::Writer;
  return SiblingKind::Reader;
}

PortSummary &SiblingSummaries::summary(PortRef p) {
  auto [it, fresh] = summaries_.try_emplace(p);
  if (fresh)
    for (InPort c : m_.graph(p.graph).consumers(p.port)) {
      SlotRef s{p.graph, c};
      SiblingKind k = classifySibling(s);
      slotKinds_[s] = k;
      ++it->second.of(k)[c.node];
    }
  return it->second;
}

void SiblingSummaries::summaryAdd(PortRef p, const SlotRef &s) {
  auto it = summaries_.find(p);
  if (it == summaries_.end())
    return; // not summarized yet: built from the graph when first needed
  SiblingKind k = classifySibling(s);
  slotKinds_[s] = k;
  ++it->second.of(k)[s.slot.node];
}

void SiblingSummaries::summaryRemove(PortRef p, const SlotRef &s) {
  auto kind = slotKinds_.find(s);
  if (kind == slotKinds_.end())
    return;
  if (auto it = summaries_.find(p); it != summaries_.end()) {
    auto &nodes = it->second.of(kind->second);
    auto n = nodes.find(s.slot.node);
    if (n != nodes.end() && --n->second == 0)
      nodes.erase(n);
  }
  slotKinds_.erase(kind);
}

} // namespace graphvet::tmd
