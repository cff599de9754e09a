// fold-constant, surgery: a folded node becomes one new `Const` per consumed
// output. Each Const owns its tensor (a fresh copy of the computed value,
// never shared with another literal), so no constant aliases another. The
// Const takes the node's name (output k of a multi-output node:
// `NAME_k`), made unique with a numeric suffix, so names depend only on the
// graph. A use by a NetOutput reads the Const through an `Identity` copy
// named `NAME_copy`, as a graph output must not be a weight. The node's control edges move to the
// Consts (they keep ordering what they ordered), and a Const input whose last use was the folded
// node is removed at once (the pass does not leave its own leftovers to dce).
#include "passes/fold_constant/fold_internal.h"

#include "ir/op_library.h"

#include <fmt/format.h>

#include <memory>
#include <set>

namespace graphvet::fold {

int64_t bytesFreedByFolding(const Graph &g, const Node &n) {
  std::set<NodeId> seen;
  int64_t freed = 0;
  for (const std::optional<OutPort> &src : n.inputs) {
    const Tensor *v = constantValue(g, src);
    if (!v || !seen.insert(src->node).second)
      continue;
    const Node &c = g.node(src->node);
    bool onlyThis = c.ctrlIn.empty() && c.ctrlOut.empty();
    for (uint32_t k = 0; onlyThis && k < c.numOutputs; ++k)
      for (const InPort &use : c.consumers[k])
        onlyThis = onlyThis && use.node == n.id;
    if (onlyThis)
      freed += static_cast<int64_t>(v->bytes().size());
  }
  return freed;
}

const ModuleIndex &Env::moduleIndex() {
  if (!index)
    index = std::make_unique<ModuleIndex>(m);
  return *index;
}

std::optional<Refusal> resultRefusal(Env &env, GraphId gid, NodeId id) {
  // As tensor-move-delete and cse: at most 2^16 slots per exploration.
  constexpr size_t kBudget = size_t{1} << 16;
  const Graph &g = env.m.graph(gid);
  const Node &n = g.node(id);
  for (uint32_t k = 0; k < n.numOutputs; ++k) {
    // An output that views a constant input (a Reshape of a weight) shares
    // the weight's buffer in the original: where it reaches a graph output,
    // that output aliases the weight, which a folded copy would end (found
    // by TypedPassProps.EveryPassIsSoundOnTypedGraphs). Its NetOutput uses
    // count then; otherwise they read a copy of the new Const.
    const bool viewsConstant = aliasedInput(n, k).has_value();
    std::vector<SlotRef> slots;
    for (const InPort &use : n.consumers[k])
      if (viewsConstant || opKind(g.node(use.node)) != OpKind::NetOutput)
        slots.push_back(SlotRef{gid, use});
    if (slots.empty())
      continue;
    BufferUses uses = exploreUses(env.m, env.moduleIndex(), slots, kBudget);
    if (uses.overBudget)
      return Refusal{"budget", fmt::format("the uses of output {} exceed the exploration budget "
                                           "of {} slots",
                                           k, kBudget)};
    if (writes(uses.access)) {
      std::string by = uses.writers.empty() ? std::string("a consumer")
                                            : env.m.qualifiedName(uses.writers.front().graph,
                                                                  uses.writers.front().node);
      return Refusal{"written-result",
                     fmt::format("output {} is written in place by {}, which a weight must "
                                 "never be",
                                 k, by)};
    }
    if (!uses.rootOutputs.empty() && viewsConstant)
      return Refusal{"output-alias",
                     fmt::format("output {} views a constant and reaches graph output {}: the "
                                 "output aliases that weight, which a folded copy would not",
                                 k, *uses.rootOutputs.begin())};
    if (!uses.rootOutputs.empty())
      return Refusal{"output-alias", fmt::format("output {} reaches graph output {} through a "
                                                 "view or subgraph, which a weight must not",
                                                 k, *uses.rootOutputs.begin())};
    if (!uses.continuousUsers.empty())
      return Refusal{"continuous",
                     fmt::format("output {} feeds {}, which needs contiguous inputs (a weight "
                                 "cannot be placed there)",
                                 k,
                                 env.m.qualifiedName(uses.continuousUsers.front().graph,
                                                     uses.continuousUsers.front().node))};
  }
  return std::nullopt;
}

void removeIfUnusedConstant(Env &env, GraphId gid, NodeId c) {
  Graph &g = env.m.graph(gid);
  const Node &node = g.node(c);
  if (!node.alive || opKind(node) != OpKind::Weight || !attrTensor(node, "value") ||
      !node.ctrlIn.empty() || !node.ctrlOut.empty())
    return;
  for (uint32_t k = 0; k < node.numOutputs; ++k)
    if (!node.consumers[k].empty())
      return;
  g.removeNode(c);
  ++env.stats.constsRemoved;
}

std::vector<NodeId> replaceWithConstants(Env &env, GraphId gid, NodeId id, Folded folded) {
  Graph &g = env.m.graph(gid);
  Node old = g.node(id); // a copy: the node is removed below
  std::vector<NodeId> created;
  // Remove first so that a single-output node's name is free for its Const.
  g.removeNode(id);
  for (uint32_t k = 0; k < old.numOutputs && k < folded.values.size(); ++k) {
    if (old.consumers[k].empty())
      continue;
    std::string base = old.numOutputs == 1 ? old.name : fmt::format("{}_{}", old.name, k);
    NodeId c = g.addNode(freshNodeName(g, base), "Const", {}, 1);
    Node &cn = g.node(c);
    cn.loc = old.loc;
    cn.attrs["value"] =
        AttrValue::ofTensor(std::make_shared<const Tensor>(std::move(folded.values[k])));
    created.push_back(c);
    ++env.stats.constsCreated;
    // A NetOutput reads a fresh buffer through a copy: a graph output (or
    // a branch or call result, which the holder's output is bound to) must
    // not become the immutable weight's buffer (semantics.md §6).
    std::optional<NodeId> copy;
    for (const InPort &use : old.consumers[k]) {
      if (opKind(g.node(use.node)) == OpKind::NetOutput && !copy) {
        const TensorType &t = g.node(c).attr("value")->asTensor().type();
        copy =
            g.addNode(freshNodeName(g, g.node(c).name + "_copy"), "Identity", {OutPort{c, 0}}, 1);
        Node &cp = g.node(*copy);
        cp.loc = old.loc;
        cp.attrs["out0.dtype"] = AttrValue::ofIdent(std::string(dtypeName(t.dtype)));
        AttrValue::List dims;
        for (int64_t d : t.shape)
          dims.push_back(AttrValue::ofInt(d));
        cp.attrs["out0.shape"] = AttrValue::ofList(std::move(dims));
        created.push_back(*copy);
        ++env.stats.copiesCreated;
      }
      bool toOutput = opKind(g.node(use.node)) == OpKind::NetOutput;
      g.setInput(use, OutPort{toOutput ? *copy : c, 0});
    }
  }
  for (NodeId c : created) {
    if (g.node(c).type != "Const")
      continue; // a copy is ordered after its Const by the data edge
    for (NodeId p : old.ctrlIn)
      g.addCtrlEdge(p, c);
    for (NodeId s : old.ctrlOut)
      g.addCtrlEdge(c, s);
  }
  std::set<NodeId> inputs;
  for (const std::optional<OutPort> &src : old.inputs)
    if (src)
      inputs.insert(src->node);
  for (NodeId in : inputs)
    removeIfUnusedConstant(env, gid, in);
  return created;
}

} // namespace graphvet::fold
