// Dynamic topological order (Pearce & Kelly, "A dynamic topological sort
// algorithm for directed acyclic graphs", JEA 2006) over a Graph's data and
// control edges.
#include "passes/order_index.h"

#include <algorithm>

namespace graphvet {

std::optional<std::vector<NodeId>> stableTopoOrder(const Graph &g) {
  // When every edge goes up in id, a node's predecessors all have smaller
  // ids, so Kahn's algorithm taking the smallest ready id (topoOrder) emits
  // the live nodes in id order: no heap needed. One scan both checks that
  // and collects the order.
  std::vector<NodeId> none;
  return stableTopoOrder(
      g, [](const Node &) { return false; }, none);
}

OrderIndex::OrderIndex(Graph &g, const std::optional<std::vector<NodeId>> &order) : g_(g) {
  ord_.assign(g.capacity(), UINT32_MAX);
  stamp_.assign(g.capacity(), 0);
  if (!order)
    return;
  for (uint32_t i = 0; i < order->size(); ++i)
    ord_[(*order)[i]] = i;
  valid_ = true;
}

template <typename F> void OrderIndex::forEachSucc(NodeId n, F &&f) const {
  const Node &node = g_.node(n);
  for (const auto &cs : node.consumers)
    for (InPort c : cs)
      f(c.node);
  for (NodeId s : node.ctrlOut)
    f(s);
}

template <typename F> void OrderIndex::forEachPred(NodeId n, F &&f) const {
  const Node &node = g_.node(n);
  for (const auto &in : node.inputs)
    if (in)
      f(in->node);
  for (NodeId p : node.ctrlIn)
    f(p);
}

uint32_t OrderIndex::nextStamp() {
  if (++stampNow_ == 0) { // wrapped: clear every mark once
    std::fill(stamp_.begin(), stamp_.end(), 0);
    stampNow_ = 1;
  }
  return stampNow_;
}

bool OrderIndex::reaches(NodeId from, NodeId to) {
  if (!valid_ || from == to)
    return false;
  uint32_t limit = ord_[to];
  if (ord_[from] >= limit)
    return false; // a path only ever goes up the order
  uint32_t s = nextStamp();
  work_.clear();
  work_.push_back(from);
  stamp_[from] = s;
  while (!work_.empty()) {
    NodeId n = work_.back();
    work_.pop_back();
    bool found = false;
    forEachSucc(n, [&](NodeId m) {
      if (m == to)
        found = true;
      else if (stamp_[m] != s && ord_[m] < limit) {
        stamp_[m] = s;
        work_.push_back(m);
      }
    });
    if (found)
      return true;
  }
  return false;
}

bool OrderIndex::orderBefore(NodeId from, NodeId to) {
  if (!valid_ || from == to)
    return false;
  uint32_t lower = ord_[to], upper = ord_[from];
  if (upper < lower)
    return true; // already consistent
  // Forward region: nodes reachable from `to` ordered at most `upper`; if it
  // contains `from` the new edge closes a cycle.
  uint32_t s = nextStamp();
  forward_.clear();
  work_.assign(1, to);
  stamp_[to] = s;
  while (!work_.empty()) {
    NodeId n = work_.back();
    work_.pop_back();
    forward_.push_back(n);
    bool cycle = false;
    forEachSucc(n, [&](NodeId m) {
      if (m == from)
        cycle = true;
      else if (stamp_[m] != s && ord_[m] <= upper) {
        stamp_[m] = s;
        work_.push_back(m);
      }
    });
    if (cycle)
      return false;
  }
  // Backward region: nodes reaching `from` ordered at least `lower`.
  backward_.clear();
  work_.assign(1, from);
  stamp_[from] = s;
  while (!work_.empty()) {
    NodeId n = work_.back();
    work_.pop_back();
    backward_.push_back(n);
    forEachPred(n, [&](NodeId m) {
      if (stamp_[m] != s && ord_[m] >= lower) {
        stamp_[m] = s;
        work_.push_back(m);
      }
    });
  }
  // Re-number: the backward region keeps its relative order and goes first,
  // then the forward region, into the union of the positions they held.
  auto byOrd = [&](NodeId a, NodeId b) { return ord_[a] < ord_[b]; };
  std::sort(forward_.begin(), forward_.end(), byOrd);
  std::sort(backward_.begin(), backward_.end(), byOrd);
  std::vector<uint32_t> slots;
  slots.reserve(forward_.size() + backward_.size());
  for (NodeId n : backward_)
    slots.push_back(ord_[n]);
  for (NodeId n : forward_)
    slots.push_back(ord_[n]);
  std::sort(slots.begin(), slots.end());
  size_t i = 0;
  for (NodeId n : backward_)
    ord_[n] = slots[i++];
  for (NodeId n : forward_)
    ord_[n] = slots[i++];
  return true;
}

bool OrderIndex::addCtrlEdge(NodeId from, NodeId to, bool *added) {
  if (added)
    *added = false;
  if (!valid_ || from == to)
    return false;
  if (g_.hasCtrlEdge(from, to))
    return true;
  if (!orderBefore(from, to))
    return false;
  g_.addCtrlEdge(from, to);
  if (added)
    *added = true;
  return true;
}

} // namespace graphvet
