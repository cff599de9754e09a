// Shared by the partition-graph files: which nodes may join a region
// (admission), the grouping of admitted nodes into maximal convex regions,
// and the surgery that outlines one region into a PartitionedCall.
#pragma once

#include "ir/graph.h"
#include "ir/types.h"
#include "passes/targets.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace graphvet::partition {

/// Why a node stays in the host: the stable remark tag and the sentence. An
/// empty tag is graph structure (Data, Const, NetOutput, variables, holders),
/// kept silently.
struct Refusal {
  std::string tag;
  std::string why;
};

/// True when `n` carries an attribute that forbids deleting it
/// (`no_need_constant_folding`, or `_cannot_be_deleted = true`): such a node
/// keeps its place (graph and name), so it is never moved into a region.
bool isReservedNode(const Node &n);

/// nullopt when `n` may join a region for `target`; otherwise why not.
std::optional<Refusal> admission(const Node &n, const Target &target,
                                 const std::vector<const TensorType *> &inputTypes);

/// A merge the convexity rule refused: node `node` was kept out of the
/// region of its producer `producer`, because a path from that region reaches
/// `node` (or the other way round) through host node `through`.
struct NonConvexMerge {
  NodeId node, producer, through;
};

struct Grouping {
  /// Regions, each its members in topological order; regions ordered by the
  /// topological position of their first member.
  std::vector<std::vector<NodeId>> regions;
  std::vector<NonConvexMerge> refusedMerges; ///< in topological order of `node`
};

/// Groups the admitted nodes of `g` (`admitted[id]`) into maximal convex
/// regions: in topological order, each admitted node starts a region and is
/// merged with the region of each admitted producer, in input order, unless
/// the merged set would be non-convex (a path leaves it and comes back).
Grouping groupRegions(const Graph &g, const std::vector<NodeId> &order,
                      const std::vector<bool> &admitted);

/// What outlining one region made.
struct Outlined {
  NodeId call = kNoNode; ///< the PartitionedCall in the host graph
  std::string graphName; ///< its subgraph (also the call's name)
  int64_t inputs = 0;    ///< call inputs
  int64_t outputs = 0;   ///< call outputs (one per value used outside)
  int64_t constsMoved = 0;
  int64_t constsCloned = 0;
};

/// Outlines `members` (topological order) of graph `gid` into a
/// PartitionedCall marked `_target = target`, its subgraph named
/// `TARGET_region_K` with the first K >= `nextIndex` free (advanced past it).
Outlined outlineRegion(Module &m, GraphId gid, const std::vector<NodeId> &members,
                       const std::string &target, int64_t &nextIndex);

} // namespace graphvet::partition
