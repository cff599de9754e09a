// The IR reducer: enumerate single edits of the current module (coarse ones
// first), keep the first that stays interesting, repeat until no edit does or
// the budget is spent. Node ids are stable (tombstones), so an edit is plain
// data (graph, node, slot, key) applied to a copy.
#include "props/reduce.h"

#include "ir/op_library.h"
#include "ir/verifier.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace graphvet::props {
namespace {

enum class EditKind : uint8_t {
  RemoveHolder,
  Inline,
  DeleteNodes,
  DisconnectInput,
  EraseInput,
  DropCtrl,
  DropAttr,
  DropOption,
  SimplifyOption,
};

struct Edit {
  EditKind kind;
  GraphId graph = kNoGraph;
  NodeId node = kNoNode;
  uint32_t index = 0;        ///< input slot, subgraph index, control target, option group
  std::vector<NodeId> nodes; ///< DeleteNodes
  std::string key;           ///< attribute or option key
};

std::string uniqueName(const Graph &g, const std::string &base) {
  if (g.find(base) == kNoNode)
    return base;
  for (unsigned i = 1;; ++i) {
    std::string name = base + "_" + std::to_string(i);
    if (g.find(name) == kNoNode)
      return name;
  }
}

/// What replaces output `k` of a node that goes away: the input it aliases
/// (While: loop variable k), else its first input, else nothing.
std::optional<OutPort> bypass(const Node &n, uint32_t k) {
  if (opKind(n) == OpKind::While || opKind(n) == OpKind::Call)
    if (k < n.inputs.size())
      return n.inputs[k];
  if (auto in = aliasedInput(n, k))
    return n.inputs[*in];
  if (!n.inputs.empty())
    return n.inputs[0];
  return std::nullopt;
}

/// Deletes a node, reconnecting its consumers (see bypass) and bridging its
/// control edges so the order it imposed survives. Removes the subgraphs it
/// holds. False when the node must stay (a NetOutput, or already gone).
bool deleteNode(Module &m, GraphId gid, NodeId id) {
  Graph &g = m.graph(gid);
  if (id >= g.capacity() || !g.node(id).alive || opKind(g.node(id)) == OpKind::NetOutput)
    return false;
  Node n = g.node(id); // copy: edits below change the node
  for (uint32_t k = 0; k < n.numOutputs; ++k) {
    std::optional<OutPort> to = bypass(n, k);
    for (InPort c : std::vector<InPort>(g.consumers({id, k})))
      g.setInput(c, to);
  }
  for (NodeId p : n.ctrlIn)
    for (NodeId s : n.ctrlOut)
      g.addCtrlEdge(p, s);
  g.removeNode(id);
  for (GraphId sub : n.subgraphs)
    m.removeGraph(sub);
  return true;
}

/// Replaces holder `id` by the nodes of its subgraph `which`: subgraph Data
/// nodes become the holder's inputs, the NetOutput's inputs become its
/// outputs, and the holder's control edges reach every inlined node.
bool inlineSubgraph(Module &m, GraphId gid, NodeId id, uint32_t which) {
  if (id >= m.graph(gid).capacity() || !m.graph(gid).node(id).alive)
    return false;
  const Node holder = m.graph(gid).node(id);
  if (which >= holder.subgraphs.size())
    return false;
  GraphId sid = holder.subgraphs[which];
  const Graph sub = m.graph(sid); // copy: the module's graph list does not change, but be safe
  auto topo = sub.topoOrder();
  if (!topo)
    return false;
  Graph &g = m.graph(gid);

  std::vector<NodeId> mapped(sub.capacity(), kNoNode);
  std::vector<std::optional<OutPort>> dataValue(sub.capacity());
  std::vector<std::optional<OutPort>> results(holder.numOutputs);
  std::vector<bool> haveResult(holder.numOutputs, false);
  std::vector<NodeId> inlined;
  for (NodeId n : *topo) {
    const Node &node = sub.node(n);
    OpKind kind = opKind(node);
    if (kind == OpKind::DataSource) {
      auto p = node.intAttr("_parent_node_index");
      if (p && *p >= 0 && *p < static_cast<int64_t>(holder.inputs.size()))
        dataValue[n] = holder.inputs[*p];
      continue;
    }
    if (kind == OpKind::NetOutput)
      continue;
    NodeId nid = g.addNode(uniqueName(g, node.name), node.type, {}, node.numOutputs);
    g.node(nid).attrs = node.attrs;
    for (GraphId inner : node.subgraphs)
      m.attachSubgraph(gid, nid, inner);
    m.graph(sid).node(n).subgraphs.clear(); // moved: removeGraph(sid) must not take them
    mapped[n] = nid;
    inlined.push_back(nid);
  }
  auto translate = [&](const std::optional<OutPort> &src) -> std::optional<OutPort> {
    if (!src)
      return std::nullopt;
    if (mapped[src->node] != kNoNode)
      return OutPort{mapped[src->node], src->index};
    return dataValue[src->node];
  };
  for (NodeId n : *topo) {
    const Node &node = sub.node(n);
    if (mapped[n] != kNoNode) {
      for (const auto &in : node.inputs)
        g.appendInput(mapped[n], translate(in));
      for (NodeId t : node.ctrlOut)
        if (mapped[t] != kNoNode)
          g.addCtrlEdge(mapped[n], mapped[t]);
    } else if (opKind(node) == OpKind::NetOutput) {
      for (uint32_t k = 0; k < node.inputs.size(); ++k) {
        auto j = node.portIntAttr(false, k, "_parent_node_index");
        if (j && *j >= 0 && *j < static_cast<int64_t>(results.size())) {
          results[*j] = translate(node.inputs[k]);
          haveResult[*j] = true;
        }
      }
    }
  }
  for (NodeId p : holder.ctrlIn)
    for (NodeId n : inlined)
      g.addCtrlEdge(p, n);
  for (NodeId s : holder.ctrlOut)
    for (NodeId n : inlined)
      g.addCtrlEdge(n, s);
  for (uint32_t j = 0; j < holder.numOutputs; ++j) {
    std::optional<OutPort> to = haveResult[j] ? results[j] : bypass(holder, j);
    for (InPort c : std::vector<InPort>(g.consumers({id, j})))
      g.setInput(c, to);
  }
  g.removeNode(id);
  for (GraphId s : holder.subgraphs)
    m.removeGraph(s);
  return true;
}

std::vector<std::string> splitOption(const std::string &value, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t pos = value.find(sep, start);
    out.push_back(value.substr(start, pos == std::string::npos ? pos : pos - start));
    if (pos == std::string::npos)
      return out;
    start = pos + 1;
  }
}

char optionSeparator(const std::string &key) {
  return key == "ge.exec.inputReuseMemIndexes" ? ',' : '|';
}

bool applyEdit(Module &m, const Edit &e) {
  switch (e.kind) {
  case EditKind::RemoveHolder:
    return deleteNode(m, e.graph, e.node);
  case EditKind::Inline:
    return inlineSubgraph(m, e.graph, e.node, e.index);
  case EditKind::DeleteNodes: {
    bool any = false;
    for (NodeId n : e.nodes)
      any = deleteNode(m, e.graph, n) || any;
    return any;
  }
  case EditKind::DisconnectInput: {
    Graph &g = m.graph(e.graph);
    if (!g.node(e.node).alive || e.index >= g.node(e.node).inputs.size() ||
        !g.node(e.node).inputs[e.index])
      return false;
    g.setInput({e.node, e.index}, std::nullopt);
    return true;
  }
  case EditKind::EraseInput: {
    Graph &g = m.graph(e.graph);
    Node &n = g.node(e.node);
    if (!n.alive || e.index >= n.inputs.size())
      return false;
    g.eraseInput({e.node, e.index});
    // Port attributes of later inputs move down with them.
    AttrMap renumbered;
    for (auto &[key, value] : g.node(e.node).attrs) {
      unsigned k = 0;
      size_t dot = key.find('.');
      if (key.rfind("in", 0) == 0 && dot != std::string::npos && dot > 2 &&
          std::all_of(key.begin() + 2, key.begin() + static_cast<long>(dot), ::isdigit)) {
        k = static_cast<unsigned>(std::stoul(key.substr(2, dot - 2)));
        if (k == e.index)
          continue;
        if (k > e.index) {
          renumbered["in" + std::to_string(k - 1) + key.substr(dot)] = value;
          continue;
        }
      }
      renumbered[key] = value;
    }
    g.node(e.node).attrs = std::move(renumbered);
    return true;
  }
  case EditKind::DropCtrl:
    return m.graph(e.graph).removeCtrlEdge(e.node, e.index);
  case EditKind::DropAttr:
    return m.graph(e.graph).node(e.node).attrs.erase(e.key) > 0;
  case EditKind::DropOption:
    m.optionLocs.erase(e.key);
    return m.options.erase(e.key) > 0;
  case EditKind::SimplifyOption: {
    auto it = m.options.find(e.key);
    if (it == m.options.end())
      return false;
    char sep = optionSeparator(e.key);
    auto parts = splitOption(it->second, sep);
    if (parts.size() < 2 || e.index >= parts.size())
      return false;
    parts.erase(parts.begin() + e.index);
    std::string value;
    for (const std::string &p : parts)
      value += (value.empty() ? "" : std::string(1, sep)) + p;
    it->second = value;
    return true;
  }
  }
  return false;
}

/// Every edit of the current module, coarse first.
std::vector<Edit> enumerateEdits(const Module &m) {
  std::vector<Edit> edits;
  std::vector<GraphId> graphs = m.canonicalGraphOrder();
  auto nodesOf = [&](GraphId gid) {
    const Graph &g = m.graph(gid);
    auto topo = g.topoOrder();
    return topo ? *topo : g.liveNodes();
  };
  for (GraphId gid : graphs)
    for (NodeId n : nodesOf(gid))
      if (holdsSubgraphs(m.graph(gid).node(n)))
        edits.push_back({EditKind::RemoveHolder, gid, n});
  for (GraphId gid : graphs)
    for (NodeId n : nodesOf(gid)) {
      const Node &node = m.graph(gid).node(n);
      for (uint32_t b = 0; b < node.subgraphs.size(); ++b)
        edits.push_back({EditKind::Inline, gid, n, b});
    }
  // Node deletion, ddmin style: chunks of halving size, sinks first.
  for (GraphId gid : graphs) {
    std::vector<NodeId> order = nodesOf(gid);
    std::reverse(order.begin(), order.end());
    std::erase_if(order,
                  [&](NodeId n) { return opKind(m.graph(gid).node(n)) == OpKind::NetOutput; });
    for (size_t chunk = order.size() / 2; chunk >= 1; chunk /= 2) {
      for (size_t start = 0; start < order.size(); start += chunk) {
        Edit e{EditKind::DeleteNodes, gid};
        e.nodes.assign(order.begin() + start,
                       order.begin() + std::min(order.size(), start + chunk));
        edits.push_back(std::move(e));
      }
      if (chunk == 1)
        break;
    }
  }
  for (GraphId gid : graphs)
    for (NodeId n : nodesOf(gid)) {
      const Node &node = m.graph(gid).node(n);
      // Erasing an input of a holder would shift its subgraphs' parent
      // indexes: only its last input goes.
      if (holdsSubgraphs(node)) {
        if (!node.inputs.empty())
          edits.push_back(
              {EditKind::EraseInput, gid, n, static_cast<uint32_t>(node.inputs.size() - 1)});
      } else {
        for (uint32_t i = static_cast<uint32_t>(node.inputs.size()); i-- > 0;)
          edits.push_back({EditKind::EraseInput, gid, n, i});
      }
      for (uint32_t i = 0; i < node.inputs.size(); ++i)
        if (node.inputs[i])
          edits.push_back({EditKind::DisconnectInput, gid, n, i});
    }
  for (GraphId gid : graphs)
    for (NodeId n : nodesOf(gid))
      for (NodeId t : m.graph(gid).node(n).ctrlOut)
        edits.push_back({EditKind::DropCtrl, gid, n, t});
  for (GraphId gid : graphs)
    for (NodeId n : nodesOf(gid))
      for (const auto &[key, value] : m.graph(gid).node(n).attrs)
        edits.push_back({EditKind::DropAttr, gid, n, 0, {}, key});
  for (const auto &[key, value] : m.options) {
    edits.push_back({EditKind::DropOption, kNoGraph, kNoNode, 0, {}, key});
    auto parts = splitOption(value, optionSeparator(key));
    for (uint32_t i = 0; parts.size() > 1 && i < parts.size(); ++i)
      edits.push_back({EditKind::SimplifyOption, kNoGraph, kNoNode, i, {}, key});
  }
  return edits;
}

} // namespace

ReduceResult reduceModule(const Module &m, const Interesting &interesting,
                          const ReduceOptions &opts) {
  ReduceResult r{m};
  auto outOfBudget = [&] {
    return r.evaluations >= opts.maxEvaluations ||
           (opts.stop && opts.stop->load(std::memory_order_relaxed));
  };
  bool progress = true;
  while (progress) {
    progress = false;
    std::vector<Edit> edits = enumerateEdits(r.module);
    size_t i = 0;
    while (i < edits.size()) {
      Module candidate = r.module;
      if (!applyEdit(candidate, edits[i]) || hasErrors(verifyModule(candidate))) {
        ++i;
        continue;
      }
      if (outOfBudget()) {
        r.exhausted = true;
        return r;
      }
      ++r.evaluations;
      if (!interesting(candidate)) {
        ++i;
        continue;
      }
      r.module = std::move(candidate);
      ++r.accepted;
      progress = true;
      // The old list may name nodes that are gone; re-enumerate and resume
      // at the same position (the outer loop reaches the fixpoint).
      edits = enumerateEdits(r.module);
    }
  }
  return r;
}

Interesting failsWithKind(const EvalOptions &opts, const std::string &kind) {
  return [opts, kind](const Module &m) { return hasViolationKind(evaluate(m, opts).result, kind); };
}

} // namespace graphvet::props
