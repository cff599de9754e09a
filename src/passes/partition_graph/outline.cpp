// partition-graph, surgery: outlines one region into a PartitionedCall. The
// members move into a new subgraph with their names; constants they read are
// moved in (cloned when the host reads them too); every other value they read
// becomes a subgraph Data (one per distinct host port, in order of first
// use); every member output read outside the region becomes exactly one call
// output, which all its outside consumers then read.
#include "ir/op_library.h"
#include "passes/partition_graph.h"
#include "passes/partition_graph/internal.h"

#include <fmt/format.h>
#include <map>
#include <set>

namespace graphvet::partition {
namespace {

/// `base`, or `base_1`, `base_2`... : the first name free in `g`.
std::string freeName(const Graph &g, const std::string &base) {
  if (g.find(base) == kNoNode)
    return base;
  for (int64_t k = 1;; ++k)
    if (std::string name = fmt::format("{}_{}", base, k); g.find(name) == kNoNode)
      return name;
}

/// A constant a region may carry inside: a Const with its value, no inputs
/// and no control edges, not reserved (a placeholder weight or a reserved
/// constant is passed in as an input).
bool isMovableConstant(const Node &n) {
  return opKind(n) == OpKind::Weight && !isReservedNode(n) && n.inputs.empty() &&
         n.ctrlIn.empty() && n.ctrlOut.empty() && n.numOutputs == 1 && n.attr("value") &&
         n.attr("value")->isTensor();
}

} // namespace

Outlined outlineRegion(Module &m, GraphId gid, const std::vector<NodeId> &members,
                       const std::string &target, int64_t &nextIndex) {
  Outlined out;
  std::string name;
  for (;; ++nextIndex) {
    name = fmt::format("{}_region_{}", target, nextIndex);
    if (m.findGraph(name) == kNoGraph && m.graph(gid).find(name) == kNoNode)
      break;
  }
  ++nextIndex;
  out.graphName = name;
  GraphId sid = m.addGraph(name); // may move graphs: take references after
  Graph &g = m.graph(gid);
  Graph &sub = m.graph(sid);
  std::set<NodeId> inRegion(members.begin(), members.end());

  // Members first, so they keep their names.
  std::map<NodeId, NodeId> copyOf;
  for (NodeId id : members) {
    const Node &n = g.node(id);
    NodeId c = sub.addNode(n.name, n.type, {}, n.numOutputs);
    sub.node(c).attrs = n.attrs;
    sub.node(c).loc = n.loc;
    copyOf[id] = c;
  }
  std::map<NodeId, NodeId> constCopy;
  std::map<OutPort, NodeId> dataFor;
  std::vector<std::optional<OutPort>> callInputs;
  for (NodeId id : members) {
    const Node &n = g.node(id);
    for (const std::optional<OutPort> &src : n.inputs) {
      std::optional<OutPort> mapped;
      if (!src) {
        mapped = std::nullopt;
      } else if (inRegion.count(src->node)) {
        mapped = OutPort{copyOf[src->node], src->index};
      } else if (isMovableConstant(g.node(src->node))) {
        auto [it, fresh] = constCopy.try_emplace(src->node, kNoNode);
        if (fresh) {
          const Node &k = g.node(src->node);
          it->second = sub.addNode(freeName(sub, k.name), k.type, {}, 1);
          sub.node(it->second).attrs = k.attrs;
          sub.node(it->second).loc = k.loc;
        }
        mapped = OutPort{it->second, 0};
      } else {
        auto [it, fresh] = dataFor.try_emplace(*src, kNoNode);
        if (fresh) {
          const Node &p = g.node(src->node);
          std::string base = src->index == 0 ? p.name : fmt::format("{}_{}", p.name, src->index);
          it->second = sub.addNode(freeName(sub, base), "Data", {}, 1);
          sub.node(it->second).attrs["_parent_node_index"] =
              AttrValue::ofInt(static_cast<int64_t>(callInputs.size()));
          callInputs.push_back(*src);
        }
        mapped = OutPort{it->second, 0};
      }
      sub.appendInput(copyOf[id], mapped);
    }
  }

  // Exports: each member output read outside the region, once.
  std::vector<OutPort> exports;
  for (NodeId id : members) {
    const Node &n = g.node(id);
    for (uint32_t k = 0; k < n.numOutputs; ++k)
      for (const InPort &c : n.consumers[k])
        if (!inRegion.count(c.node)) {
          exports.push_back(OutPort{id, k});
          break;
        }
  }
  std::vector<std::optional<OutPort>> results;
  for (const OutPort &p : exports)
    results.push_back(OutPort{copyOf[p.node], p.index});
  NodeId result = sub.addNode(freeName(sub, "out"), "NetOutput", results, 0);
  for (size_t j = 0; j < exports.size(); ++j)
    sub.node(result).attrs[Node::portKey(false, static_cast<uint32_t>(j), "_parent_node_index")] =
        AttrValue::ofInt(static_cast<int64_t>(j));

  NodeId call =
      g.addNode(name, "PartitionedCall", callInputs, static_cast<uint32_t>(exports.size()));
  g.node(call).attrs[std::string(kTargetAttr)] = AttrValue::ofString(target);
  m.attachSubgraph(gid, call, sid);
  for (size_t j = 0; j < exports.size(); ++j) {
    std::vector<InPort> readers = g.node(exports[j].node).consumers[exports[j].index];
    for (const InPort &c : readers)
      if (!inRegion.count(c.node))
        g.setInput(c, OutPort{call, static_cast<uint32_t>(j)});
  }

  for (NodeId id : members)
    g.removeNode(id);
  for (const auto &[host, copy] : constCopy) {
    bool used = !g.node(host).consumers[0].empty();
    if (used) {
      ++out.constsCloned;
    } else {
      ++out.constsMoved;
      g.removeNode(host);
    }
  }
  out.call = call;
  out.inputs = static_cast<int64_t>(callInputs.size());
  out.outputs = static_cast<int64_t>(exports.size());
  return out;
}

} // namespace graphvet::partition
