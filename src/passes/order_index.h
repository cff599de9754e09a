// A topological index of one graph kept valid while a pass adds edges
// (Pearce–Kelly dynamic topological order). It answers "does a path lead from
// a to b?" with a search pruned to the nodes whose index lies between the two
// ends, and inserts control edges with an exact cycle check that only
// re-numbers the affected region. Removing nodes or edges never invalidates
// an order, so passes may delete freely.
#pragma once

#include "ir/graph.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace graphvet {

/// Exactly g.topoOrder() (the stable order, ties broken by node id), in
/// linear time when every edge leads from a lower id to a higher one -- as in
/// graphs built or parsed in dependency order, where the id order is that
/// topological order -- and through g.topoOrder() otherwise.
std::optional<std::vector<NodeId>> stableTopoOrder(const Graph &g);

/// stableTopoOrder, also appending to `selected` the nodes for which
/// `select(node)` holds, in that order (in id order when g is cyclic) -- in
/// the same scan when the fast path applies, so a pass that needs both reads
/// each node once.
template <typename Select>
std::optional<std::vector<NodeId>> stableTopoOrder(const Graph &g, Select &&select,
                                                   std::vector<NodeId> &selected) {
  std::vector<NodeId> order;
  order.reserve(g.numLiveNodes());
  size_t firstSelected = selected.size();
  for (NodeId n = 0; n < g.capacity(); ++n) {
    const Node &node = g.node(n);
    if (!node.alive)
      continue;
    // Every edge is some node's input or control predecessor; reading those
    // (one block per node) is cheaper than the nested consumer lists.
    bool monotone = true;
    for (const auto &in : node.inputs)
      monotone = monotone && (!in || in->node < n);
    for (NodeId p : node.ctrlIn)
      monotone = monotone && p < n;
    if (!monotone) {
      // Not in dependency order: the heap-based order, then a filtering pass.
      selected.resize(firstSelected);
      std::optional<std::vector<NodeId>> sorted = g.topoOrder();
      for (NodeId id : sorted ? *sorted : g.liveNodes())
        if (select(g.node(id)))
          selected.push_back(id);
      return sorted;
    }
    order.push_back(n);
    if (select(node))
      selected.push_back(n);
  }
  return order;
}

class OrderIndex {
public:
  /// Builds the index from `order` (g.topoOrder(), computed by the caller);
  /// valid() is false when it is nullopt (g is cyclic). The graph must not
  /// gain nodes while the index is in use.
  OrderIndex(Graph &g, const std::optional<std::vector<NodeId>> &order);

  bool valid() const { return valid_; }
  /// Position of a live node in the current order.
  uint32_t position(NodeId n) const { return ord_[n]; }

  /// True when a non-empty path of data or control edges leads from `from` to
  /// `to`. Visits only nodes ordered between the two ends, at most once each.
  bool reaches(NodeId from, NodeId to);

  /// Adds the control edge from -> to unless it would close a cycle; returns
  /// false (changing nothing) in that case or when from == to. Returns true
  /// when the edge exists afterwards (`added` says whether it is new).
  bool addCtrlEdge(NodeId from, NodeId to, bool *added = nullptr);

  /// Records a data edge the caller is about to add (producer -> consumer);
  /// returns false when it would close a cycle. Only needed when the producer
  /// might be ordered after the consumer.
  bool orderBefore(NodeId from, NodeId to);

private:
  template <typename F> void forEachSucc(NodeId n, F &&f) const;
  template <typename F> void forEachPred(NodeId n, F &&f) const;
  uint32_t nextStamp();

  Graph &g_;
  bool valid_ = false;
  std::vector<uint32_t> ord_;
  std::vector<uint32_t> stamp_; ///< visit marks; a fresh stamp per search
  uint32_t stampNow_ = 0;
  std::vector<NodeId> work_, forward_, backward_;
};

} // namespace graphvet
