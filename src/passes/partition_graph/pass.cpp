// partition-graph, driver: for every live graph (outlined calls' subgraphs
// aside) admits nodes by the target table, groups them into maximal convex
// regions and outlines each region; a region or a refusal is one remark.
#include "passes/partition_graph.h"

#include "passes/partition_graph/internal.h"

#include <fmt/format.h>

namespace graphvet {

namespace {

using partition::Refusal;

class PartitionGraphPass {
public:
  PartitionGraphPass(Module &m, const Target &target, std::vector<Remark> *remarks)
      : m_(m), target_(target), remarks_(remarks) {}

  PartitionGraphStats run() {
    Diagnostics ignored; // a node whose types are unknown is refused by the target's check
    ModuleTypes types = inferModuleTypes(m_, ignored);
    for (GraphId g : m_.canonicalGraphOrder())
      if (!insideOutlinedCall(g))
        runGraph(g, types);
    return stats_;
  }

private:
  /// True when `gid` is (nested in) the subgraph of a call outlined by this
  /// pass or by fuse-ops: such a call is opaque (the pass is idempotent).
  bool insideOutlinedCall(GraphId gid) const {
    for (size_t depth = 0; depth < m_.numGraphs() && gid != kNoGraph; ++depth) {
      const Graph &g = m_.graph(gid);
      if (g.parentGraph == kNoGraph || g.parentNode == kNoNode)
        return false;
      if (isOutlinedCall(m_.graph(g.parentGraph).node(g.parentNode)))
        return true;
      gid = g.parentGraph;
    }
    return false;
  }

  void runGraph(GraphId gid, const ModuleTypes &types) {
    std::optional<std::vector<NodeId>> order = m_.graph(gid).topoOrder();
    if (!order)
      return;
    std::vector<bool> admitted(m_.graph(gid).capacity(), false);
    for (NodeId id : *order) {
      const Graph &g = m_.graph(gid);
      const Node &n = g.node(id);
      std::vector<const TensorType *> inputTypes;
      for (const std::optional<OutPort> &p : n.inputs)
        inputTypes.push_back(p ? types.of(gid, *p) : nullptr);
      std::optional<Refusal> refusal = partition::admission(n, target_, inputTypes);
      if (!refusal) {
        admitted[id] = true;
      } else if (!refusal->tag.empty()) {
        refuse(g, n, refusal->tag, fmt::format("kept {} in the host: {}", n.name, refusal->why));
      }
    }
    partition::Grouping grouping = partition::groupRegions(m_.graph(gid), *order, admitted);
    for (const partition::NonConvexMerge &r : grouping.refusedMerges) {
      const Graph &g = m_.graph(gid);
      refuse(g, g.node(r.node), "non-convex",
             fmt::format("kept {} out of the region of {}: a path between them runs through {} "
                         "in the host (merging would make a cycle through the call)",
                         g.node(r.node).name, g.node(r.producer).name, g.node(r.through).name));
    }
    for (const std::vector<NodeId> &members : grouping.regions) {
      std::vector<std::string> names;
      for (NodeId id : members)
        names.push_back(m_.graph(gid).node(id).name);
      partition::Outlined o = partition::outlineRegion(m_, gid, members, target_.name, nextIndex_);
      ++stats_.regions;
      stats_.opsPartitioned += static_cast<int64_t>(members.size());
      stats_.constsMoved += o.constsMoved;
      stats_.constsCloned += o.constsCloned;
      stats_.regionInputs += o.inputs;
      stats_.regionOutputs += o.outputs;
      if (!remarks_)
        continue;
      const Graph &g = m_.graph(gid);
      remarks_->push_back(nodeRemark(
          kPartitionGraphName, g, g.node(o.call), "outlined", "region",
          fmt::format("outlined {} op{} ({}) for target {} into {} with {} input{} and {} "
                      "output{}; {} constant{} moved in, {} cloned",
                      names.size(), names.size() == 1 ? "" : "s", fmt::join(names, ", "),
                      target_.name, o.graphName, o.inputs, o.inputs == 1 ? "" : "s", o.outputs,
                      o.outputs == 1 ? "" : "s", o.constsMoved, o.constsMoved == 1 ? "" : "s",
                      o.constsCloned)));
    }
  }

  void refuse(const Graph &g, const Node &n, const std::string &tag, std::string message) {
    ++stats_.refused[tag];
    if (remarks_)
      remarks_->push_back(nodeRemark(kPartitionGraphName, g, n, "kept", tag, std::move(message)));
  }

  Module &m_;
  const Target &target_;
  std::vector<Remark> *remarks_;
  PartitionGraphStats stats_;
  int64_t nextIndex_ = 0;
};

} // namespace

PartitionGraphStats runPartitionGraph(Module &m, const PartitionGraphOptions &options,
                                      std::vector<Remark> *remarks) {
  if (!options.target)
    return {};
  return PartitionGraphPass(m, *options.target, remarks).run();
}

} // namespace graphvet
