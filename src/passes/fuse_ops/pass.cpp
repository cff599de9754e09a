// The driver of fuse-ops: types once, then each graph that existed before
// the run (fused subgraphs of an earlier run excepted) is grouped, each
// group checked convex and outlined, with one remark per group and per
// refusal.
#include "passes/fuse_ops/internal.h"

#include "ir/diagnostic.h"

namespace graphvet {

using namespace fuse_ops;

namespace {

/// A subgraph of a call an earlier run of fuse-ops made: its ops are one
/// kernel already (a fused call is Opaque to fusion, so the pass is
/// idempotent).
bool isFusedBody(const Module &m, GraphId gid) {
  const Graph &g = m.graph(gid);
  if (g.parentNode == kNoNode || g.parentGraph == kNoGraph)
    return false;
  return m.graph(g.parentGraph).node(g.parentNode).attr("_fused") != nullptr;
}

std::string joinNames(const Graph &g, const std::vector<NodeId> &members) {
  std::string s;
  for (NodeId id : members)
    s += (s.empty() ? "" : ", ") + g.node(id).name;
  return s;
}

} // namespace

FuseOpsStats runFuseOps(Module &m, const FuseOpsOptions &options, std::vector<Remark> *remarks) {
  FuseOpsStats stats;
  std::shared_ptr<const ModuleTypes> typesOfInput = takeOrInferTypes(m, options.inputTypes);
  const ModuleTypes &types = *typesOfInput;
  GroupNames groupNames(m);
  auto remark = [&](GraphId gid, NodeId id, std::string decision, std::string tag,
                    std::string message) {
    if (remarks)
      remarks->push_back(nodeRemark(kFuseOpsName, m.graph(gid), m.graph(gid).node(id),
                                    std::move(decision), tag, std::move(message)));
  };
  auto refuse = [&](GraphId gid, NodeId id, const std::string &tag, const std::string &why) {
    ++stats.refused[tag];
    remark(gid, id, "kept", tag, "kept " + m.graph(gid).node(id).name + ": " + why);
  };

  std::vector<GraphId> graphs = m.canonicalGraphOrder();
  for (GraphId gid : graphs) {
    if (!m.graph(gid).alive || isFusedBody(m, gid))
      continue;
    Partition part = partitionGraph(m, gid, types, options);
    // Decide every group on the graph as grouped (convexity against the
    // original edges), then outline the accepted ones.
    std::vector<std::vector<NodeId>> accepted;
    for (std::vector<NodeId> &group : part.groups) {
      const Graph &g = m.graph(gid);
      if (!isConvex(g, group, part.topoIndex)) {
        for (NodeId id : group)
          refuse(gid, id, "non-convex",
                 "its group (" + joinNames(g, group) +
                     ") has a path that leaves it and comes back: outlining would make a cycle");
        continue;
      }
      if (!hasOutsideUse(g, group)) {
        for (NodeId id : group)
          refuse(gid, id, "unused",
                 "no value of its group (" + joinNames(g, group) + ") is used outside it");
        continue;
      }
      if (exportsViewOfInput(g, group)) {
        for (NodeId id : group)
          refuse(gid, id, "view-output",
                 "its group (" + joinNames(g, group) +
                     ") would return a view of its own input: a kernel's output owns its buffer");
        continue;
      }
      accepted.push_back(std::move(group));
    }
    for (const Refusal &r : part.refusals)
      refuse(gid, r.node, r.tag, r.message);
    for (const std::vector<NodeId> &group : accepted) {
      std::string names = joinNames(m.graph(gid), group);
      Outlined o = outlineGroup(m, gid, group, groupNames);
      ++stats.groups;
      stats.opsFused += static_cast<int64_t>(group.size());
      stats.constsCopied += static_cast<int64_t>(o.consts);
      remark(gid, o.call, "fused", "fused",
             "fused " + names + " into " + o.name + " (" + std::to_string(group.size()) + " ops, " +
                 std::to_string(o.inputs) + (o.inputs == 1 ? " input, " : " inputs, ") +
                 std::to_string(o.outputs) + (o.outputs == 1 ? " output" : " outputs") +
                 (o.consts ? ", " + std::to_string(o.consts) +
                                 (o.consts == 1 ? " constant" : " constants") + " copied in"
                           : "") +
                 ")");
    }
  }
  return stats;
}

} // namespace graphvet
