// Extension ext-sibling-holder: a sibling that holds subgraphs, by what they
// do (docs/passes/tensor-move-delete.md, "ext-sibling-holder"). The design
// keeps the copy when another consumer of the producer output holds
// subgraphs (rule3-sibling-subgraph). A control edge to or from a call
// covers every node inside it, and control flow runs as one step, so a
// holder that does not hand the memory on can be classified by exploring its
// subgraphs at decision time (deleting copies inside can change the answer,
// so it is never cached) as a reader or a writer, and scenario 5's rules
// then apply to it unchanged. The one extension that widens a rule instead
// of lifting a keep: scenario 5 (rules.cpp) asks it.
#include "passes/tensor_move_delete/extension.h"

namespace graphvet::tmd {
namespace {

constexpr size_t kMaxHolderSiblings = 8; // explorations per copy (cost bound)

class SiblingHolder final : public Extension {
public:
  std::string_view name() const override { return "sibling-holder"; }
  std::string_view tag() const override { return "ext-sibling-holder"; }
  bool widensHolderSiblings() const override { return true; }
  std::optional<HolderRoles> holderRoles(Analysis &a, NodeRef t, OutPort producer,
                                         const std::vector<NodeId> &holders) const override;
};

std::optional<HolderRoles> SiblingHolder::holderRoles(Analysis &a, NodeRef t, OutPort producer,
                                                      const std::vector<NodeId> &holders) const {
  HolderRoles roles;
  if (holders.size() > kMaxHolderSiblings) {
    roles.refused = holders.front();
    return roles;
  }
  const Graph &g = a.module().graph(t.graph);
  for (NodeId h : holders) {
    const Node &hn = g.node(h);
    for (uint32_t i = 0; i < hn.inputs.size(); ++i) {
      if (!hn.inputs[i] || *hn.inputs[i] != producer)
        continue;
      if (a.passesOn(t.graph, h, i)) {
        roles.refused = h;
        return roles;
      }
      SlotRef slot{t.graph, {h, i}};
      BufferUses uses = a.explore(std::span<const SlotRef>(&slot, 1));
      (writes(uses.access) ? roles.writers : roles.readers).push_back(h);
    }
  }
  return roles;
}

} // namespace

const Extension &siblingHolderExtension() {
  static const SiblingHolder e;
  return e;
}

} // namespace graphvet::tmd
