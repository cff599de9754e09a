// partition-graph, regions: groups admitted nodes into maximal convex
// regions. Nodes are visited in topological order; each admitted node is a
// region of its own, then merged with the region of each admitted producer.
// Convexity of a merge A+B: no path leaves A+B and comes back. Both A and B
// are convex already, so such a path runs from one into the other through a
// host node q, and q is then an outside producer of a member of the other;
// each node keeps the set of regions it is reachable from (`reach`), and the
// merge is refused when an outside producer of A is reachable from B or one
// of B from A.
#include "passes/partition_graph/internal.h"

#include <algorithm>
#include <map>
#include <set>

namespace graphvet::partition {
namespace {

class Grouper {
public:
  Grouper(const Graph &g, const std::vector<NodeId> &order, const std::vector<bool> &admitted)
      : g_(g), order_(order), admitted_(admitted), regionOf_(g.capacity(), -1),
        reach_(g.capacity()) {}

  Grouping run() {
    Grouping out;
    for (NodeId id : order_)
      visit(id, out);
    std::map<int, std::vector<NodeId>> byRoot;
    std::vector<int> roots; // in order of first member
    for (NodeId id : order_) {
      if (regionOf_[id] < 0)
        continue;
      int r = find(regionOf_[id]);
      if (byRoot[r].empty())
        roots.push_back(r);
      byRoot[r].push_back(id);
    }
    for (int r : roots)
      out.regions.push_back(std::move(byRoot[r]));
    return out;
  }

private:
  int find(int r) {
    while (parent_[r] != r) {
      parent_[r] = parent_[parent_[r]];
      r = parent_[r];
    }
    return r;
  }

  /// Distinct producers of `n` (data inputs in slot order, then control sources).
  std::vector<NodeId> producers(const Node &n) const {
    std::vector<NodeId> ps;
    for (const std::optional<OutPort> &p : n.inputs)
      if (p && std::find(ps.begin(), ps.end(), p->node) == ps.end())
        ps.push_back(p->node);
    for (NodeId c : n.ctrlIn)
      if (std::find(ps.begin(), ps.end(), c) == ps.end())
        ps.push_back(c);
    return ps;
  }

  bool reachedFrom(NodeId q, int region) {
    for (int r : reach_[q])
      if (find(r) == region)
        return true;
    return false;
  }

  /// A host node through which a path runs between regions a and b, or
  /// kNoNode when merging them keeps convexity.
  NodeId obstacle(int a, int b) {
    for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}})
      for (NodeId q : outside_[static_cast<size_t>(to)]) {
        int rq = regionOf_[q] < 0 ? -1 : find(regionOf_[q]);
        if (rq != a && rq != b && reachedFrom(q, from))
          return q;
      }
    return kNoNode;
  }

  void merge(int a, int b) {
    parent_[b] = a;
    std::set<NodeId> all = outside_[static_cast<size_t>(a)];
    all.insert(outside_[static_cast<size_t>(b)].begin(), outside_[static_cast<size_t>(b)].end());
    outside_[static_cast<size_t>(b)].clear();
    std::set<NodeId> kept;
    for (NodeId q : all)
      if (regionOf_[q] < 0 || find(regionOf_[q]) != a)
        kept.insert(q);
    outside_[static_cast<size_t>(a)] = std::move(kept);
  }

  void visit(NodeId id, Grouping &out) {
    const Node &n = g_.node(id);
    std::vector<NodeId> preds = producers(n);
    std::set<int> reach;
    for (NodeId p : preds) {
      for (int r : reach_[p])
        reach.insert(find(r));
      if (regionOf_[p] >= 0)
        reach.insert(find(regionOf_[p]));
    }
    reach_[id] = std::move(reach);
    if (!admitted_[id])
      return;
    int mine = static_cast<int>(parent_.size());
    parent_.push_back(mine);
    outside_.emplace_back(preds.begin(), preds.end());
    regionOf_[id] = mine;
    for (NodeId p : preds) {
      if (regionOf_[p] < 0)
        continue;
      int a = find(mine), b = find(regionOf_[p]);
      if (a == b)
        continue;
      if (NodeId q = obstacle(a, b); q != kNoNode) {
        out.refusedMerges.push_back(NonConvexMerge{id, p, q});
        continue;
      }
      // The older region keeps its id: region numbering follows first members.
      if (b < a)
        std::swap(a, b);
      merge(a, b);
    }
  }

  const Graph &g_;
  const std::vector<NodeId> &order_;
  const std::vector<bool> &admitted_;
  std::vector<int> regionOf_;             ///< by node id: the region created for it, or -1
  std::vector<std::set<int>> reach_;      ///< by node id: regions it is reachable from
  std::vector<int> parent_;               ///< union-find over region ids
  std::vector<std::set<NodeId>> outside_; ///< by region root: producers outside it
};

} // namespace

Grouping groupRegions(const Graph &g, const std::vector<NodeId> &order,
                      const std::vector<bool> &admitted) {
  return Grouper(g, order, admitted).run();
}

} // namespace graphvet::partition
