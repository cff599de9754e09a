// Shared pieces of fuse-ops: which nodes may be fused at all, the grouping
// of one graph (post-dominator tree and the three phases, partition.cpp), the
// convexity check and the outlining of one group into a PartitionedCall
// (outline.cpp).
#pragma once

#include "ir/graph.h"
#include "ir/op_library.h"
#include "ir/types.h"
#include "passes/fuse_ops.h"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace graphvet::fuse_ops {

/// Why `n` may not be fused although its op has a fusible pattern kind: a
/// remark tag ("effect", "ctrl-edge", "multi-output", "no-kernel"), or empty
/// when it may. Ops the pattern column marks Opaque are not asked.
std::string exclusion(const Node &n);
/// The pattern kind fusion uses for `n`: the op table's, or Opaque when the
/// node is excluded.
OpPattern fusionPattern(const Node &n);
/// True for a producer the outlining copies into a group that reads it
/// instead of passing it in: a valued `Const` without control edges. Copying
/// a deterministic constant changes no value.
bool copiedIntoGroup(const Graph &g, NodeId producer);

/// A fusible node left out of every group, and why.
struct Refusal {
  NodeId node;
  std::string tag;
  std::string message;
};

/// The grouping of one graph: groups of two or more nodes (members in
/// topological order; groups ordered by their first member), and one
/// refusal per fusible node left alone, in topological order.
struct Partition {
  std::vector<std::vector<NodeId>> groups;
  std::vector<Refusal> refusals;
  /// Topological index of each node id (SIZE_MAX for removed nodes).
  std::vector<size_t> topoIndex;
};

Partition partitionGraph(const Module &m, GraphId g, const ModuleTypes &types,
                         const FuseOpsOptions &options);

/// True when no path of data or control edges leaves the group and comes
/// back into it (outlining it then creates no cycle).
bool isConvex(const Graph &g, const std::vector<NodeId> &members,
              const std::vector<size_t> &topoIndex);

/// What outlining one group made.
struct Outlined {
  std::string name; ///< the subgraph's (and the call's) name, also its `_fused` value
  NodeId call = kNoNode;
  size_t inputs = 0;  ///< call inputs
  size_t outputs = 0; ///< call outputs (one per value used outside the group)
  size_t consts = 0;  ///< Const nodes copied in
};

/// The group's name before uniquing: `fused_` and its op types, lower case.
std::string groupName(const Graph &g, const std::vector<NodeId> &members);
/// Number of distinct outside values the group reads that stay call inputs.
size_t countArgs(const Graph &g, const std::vector<NodeId> &members);
/// True when some member's value is used outside the group.
bool hasOutsideUse(const Graph &g, const std::vector<NodeId> &members);
/// True when a value used outside the group is, through views inside it only,
/// a buffer the group reads from outside: the call would hand back (a view
/// of) its own input, which a kernel's output may not be (it owns its buffer).
bool exportsViewOfInput(const Graph &g, const std::vector<NodeId> &members);

/// The names taken while one run of the pass outlines groups: the module's
/// live graph names (a set, where Module::findGraph scans every graph) and,
/// per group name, the lowest suffix `_k` that may still be free (every
/// smaller one is taken), so the k-th group of a common name does not try
/// the k-1 taken ones again. A removed node's name lowers the hint of its
/// base again, so the name chosen is still the smallest free one.
struct GroupNames {
  explicit GroupNames(const Module &m);
  std::unordered_set<std::string> graphs;
  std::unordered_map<std::string, size_t> lowestFree;
  /// A node named `name` was removed: `base_k` may be free again.
  void freed(const std::string &name);
};

/// Outlines `members` of graph `g` (convex, each with one output) into a
/// PartitionedCall with a new subgraph; outside uses of each member's value
/// read one call output.
Outlined outlineGroup(Module &m, GraphId g, const std::vector<NodeId> &members, GroupNames &names);

} // namespace graphvet::fuse_ops
