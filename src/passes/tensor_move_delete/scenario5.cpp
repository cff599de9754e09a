// TensorMoveDeletePass: scenario 5's parts (rules.h). A TensorMove whose
// producer output has other consumers (siblings) is deleted only under the
// design's sibling rules; scenario5Siblings (rules.cpp) asks these in order.
#include "passes/tensor_move_delete/naming.h"
#include "passes/tensor_move_delete/rules.h"

#include "ir/op_library.h"

namespace graphvet::tmd {

std::vector<NodeId> Siblings::others(SiblingKind k) const {
  std::vector<NodeId> nodes;
  for (const auto &[n, count] : summary.of(k))
    if (n != tm)
      nodes.push_back(n);
  return nodes;
}

NodeId Siblings::first(SiblingKind k) const {
  for (const auto &[n, count] : summary.of(k))
    if (n != tm)
      return n;
  return kNoNode;
}

std::optional<Verdict> holderSiblings(Analysis &a, const Extensions &extensions, NodeRef t,
                                      Verdict &v, const Siblings &siblings, HolderRoles &roles) {
  NodeId n = siblings.first(SiblingKind::Holder);
  if (n == kNoNode)
    return std::nullopt;
  const Extension *widening = holderWidening(extensions);
  std::optional<HolderRoles> sorted =
      widening ? widening->holderRoles(a, t, v.trace.steps.front().port,
                                       siblings.others(SiblingKind::Holder))
               : std::nullopt;
  if (!sorted || sorted->refused != kNoNode)
    return keepFor("rule3-sibling-subgraph",
                   "Rule 3: sibling " + name(a.module(), t.graph, sorted ? sorted->refused : n) +
                       " holds subgraphs");
  roles = std::move(*sorted);
  v.holderSibling = widening;
  return std::nullopt;
}

std::optional<Verdict> writingSiblings(Analysis &a, NodeRef t, Verdict &v,
                                       const std::vector<SuccInfo> &succs,
                                       const std::vector<NodeId> &writers,
                                       const std::vector<const SuccInfo *> &writingSuccs) {
  const Module &m = a.module();
  const Graph &g = m.graph(t.graph);
  v.writingSibling = !writers.empty();
  for (NodeId sib : writers) {
    std::string sibName = name(m, t.graph, sib);
    if (!writingSuccs.empty())
      return keepFor("rule3-both-write", "Rule 3: sibling " + sibName + " and successor " +
                                             name(m, t.graph, writingSuccs[0]->node) +
                                             " both write the memory");
    for (const SuccInfo &succ : succs) {
      std::string succName = name(m, t.graph, succ.node);
      if (succ.passesOn)
        return keepFor("rule3-successor-passes-memory", "Rule 3: sibling " + sibName +
                                                            " writes the memory and successor " +
                                                            succName + " passes it on");
      // A NetOutput is not a reader that a control edge can order: the root
      // one is observed after the whole run, a subgraph's hands the memory to
      // the holder's consumers outside. An edge `NetOutput -> sibling` (one
      // the pass itself may have moved there) orders no read before the
      // write (found by graphvet fuzz --seed 1).
      if (opKind(g.node(succ.node)) == OpKind::NetOutput)
        return keepFor("rule3-successor-netoutput",
                       "Rule 3: sibling " + sibName + " writes the memory and successor " +
                           succName + " is a NetOutput, which no control edge orders before it");
      if (!g.hasCtrlEdge(succ.node, sib))
        return keepFor("rule3-no-order", "Rule 3: sibling " + sibName +
                                             " writes the memory and no control edge " + succName +
                                             " -> " + sibName + " orders it");
    }
  }
  return std::nullopt;
}

std::optional<Verdict> readingSiblings(Analysis &a, NodeRef t, Verdict &v,
                                       const std::vector<NodeId> &readers,
                                       const std::vector<const SuccInfo *> &writingSuccs) {
  const Module &m = a.module();
  for (NodeId sib : readers) {
    std::string sibName = name(m, t.graph, sib);
    for (const SuccInfo *succ : writingSuccs) {
      std::string succName = name(m, t.graph, succ->node);
      if (succ->node == sib)
        return keepFor("rule3-successor-is-sibling",
                       "Rule 3: successor " + succName +
                           " writes the copy and also reads the source directly");
      // A subgraph NetOutput "writes" only because a writer outside the
      // subgraph receives the memory; an edge to the NetOutput orders nothing
      // outside the call (found by tensor_move_delete_fuzzer).
      if (opKind(m.graph(t.graph).node(succ->node)) == OpKind::NetOutput)
        return keepFor("rule3-writer-outside-subgraph",
                       "Rule 3: sibling " + sibName + " reads the memory and " + succName +
                           " hands it to a writer outside the subgraph");
      if (a.reaches(t.graph, succ->node, sib))
        return keepFor("rule3-cycle", "Rule 3: the control edge " + sibName + " -> " + succName +
                                          " would close a cycle");
      v.pending.push_back({sib, succ->node});
    }
  }
  return std::nullopt;
}

} // namespace graphvet::tmd
