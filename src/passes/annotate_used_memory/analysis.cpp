// The memory timeline (analysis.h): schedule, buffer resolution, accesses
// and the live-bytes sweep. Ordered maps and vectors only: nothing depends on
// addresses or hash order.
#include "passes/annotate_used_memory/analysis.h"

#include "ir/diagnostic.h"
#include "ir/op_library.h"
#include "ir/types.h"

#include <algorithm>
#include <fmt/format.h>
#include <functional>
#include <map>
#include <queue>

namespace graphvet {
namespace {

constexpr unsigned kMaxNesting = 64;
using Owner = MemoryTimeline::Owner;
const Owner kOutside{};

class Builder {
public:
  Builder(const Module &m, MemoryTimeline &t) : m_(m), t_(t) {}

  void run() {
    t_.position.assign(m_.numGraphs(), {});
    t_.owners.assign(m_.numGraphs(), {});
    t_.portBytes.assign(m_.numGraphs(), {});
    for (GraphId g = 0; g < m_.numGraphs(); ++g) {
      t_.position[g].assign(m_.graph(g).capacity(), SIZE_MAX);
      t_.owners[g].assign(m_.graph(g).capacity(), {});
      t_.portBytes[g].assign(m_.graph(g).capacity(), {});
    }
    used_.assign(m_.numGraphs(), false);
    used_[0] = true;
    Diagnostics ignored;
    types_ = inferModuleTypes(m_, ignored);
    if (!collect(0, 0) || !edges() || !order() || !resolveAll() || !sweep())
      return;
    t_.ok = true;
  }

private:
  const Module &m_;
  MemoryTimeline &t_;
  ModuleTypes types_;
  std::vector<bool> used_;
  struct StepRef {
    GraphId graph;
    NodeId node;
  };
  std::vector<StepRef> steps_;
  std::map<std::pair<GraphId, NodeId>, std::vector<size_t>> members_; ///< call -> its steps
  std::vector<std::pair<GraphId, NodeId>> visited_;                   ///< calls included
  std::vector<std::vector<size_t>> succ_;
  std::vector<size_t> order_;
  std::map<std::pair<GraphId, OutPort>, Owner> resolved_;

  bool skip(std::string tag, std::string reason, GraphId g, NodeId n) {
    t_.skipTag = std::move(tag);
    t_.skipReason = std::move(reason);
    t_.skipGraph = g;
    t_.skipNode = n;
    return false;
  }

  /// Steps in id order with call bodies inlined in place; refuses control flow.
  bool collect(GraphId g, unsigned depth) {
    const Graph &graph = m_.graph(g);
    for (NodeId n : graph.liveNodes()) {
      const Node &node = graph.node(n);
      visited_.push_back({g, n});
      if (isControlFlow(node))
        return skip("control-flow",
                    fmt::format("{} {} runs a branch or loop chosen by values: the live bytes "
                                "are not static",
                                node.type, node.name),
                    g, n);
      if (opKind(node) == OpKind::Call) {
        if (node.subgraphs.size() != 1)
          return skip("malformed", fmt::format("{} must hold exactly one subgraph", node.name), g,
                      n);
        GraphId sub = node.subgraphs[0];
        if (sub >= m_.numGraphs() || !m_.graph(sub).alive || used_[sub] || depth >= kMaxNesting)
          return skip(
              "malformed",
              fmt::format("{} names a missing, shared or too deeply nested subgraph", node.name), g,
              n);
        used_[sub] = true;
        size_t first = steps_.size();
        if (!collect(sub, depth + 1))
          return false;
        std::vector<size_t> inside;
        for (size_t s = first; s < steps_.size(); ++s)
          inside.push_back(s);
        members_[{g, n}] = std::move(inside);
        continue;
      }
      t_.position[g][n] = steps_.size(); // the step index until sweep() reorders
      steps_.push_back({g, n});
    }
    return true;
  }

  /// The step producing `port` of graph g: through a call, the producer of
  /// the body's result for that output.
  size_t producerStep(GraphId g, OutPort port, unsigned depth) {
    if (depth > kMaxNesting || port.node >= m_.graph(g).capacity())
      return SIZE_MAX;
    const Node &p = m_.graph(g).node(port.node);
    if (opKind(p) == OpKind::Call) {
      if (p.subgraphs.size() != 1)
        return SIZE_MAX;
      auto res = callResult(p.subgraphs[0], port.index);
      return res ? producerStep(p.subgraphs[0], *res, depth + 1) : SIZE_MAX;
    }
    return t_.position[g][port.node];
  }

  /// The port a call body hands back as the call's output j.
  std::optional<OutPort> callResult(GraphId sub, uint32_t j) {
    const Graph &sg = m_.graph(sub);
    for (NodeId n : sg.liveNodes()) {
      const Node &out = sg.node(n);
      if (opKind(out) != OpKind::NetOutput)
        continue;
      for (uint32_t i = 0; i < out.inputs.size(); ++i) {
        auto idx = out.portIntAttr(false, i, "_parent_node_index");
        if (idx && *idx == static_cast<int64_t>(j))
          return out.inputs[i] ? std::optional<OutPort>(*out.inputs[i]) : std::nullopt;
      }
      return std::nullopt; // the first NetOutput decides
    }
    return std::nullopt;
  }

  std::vector<size_t> stepsOf(GraphId g, NodeId n) {
    if (auto it = members_.find({g, n}); it != members_.end())
      return it->second;
    if (t_.position[g][n] != SIZE_MAX)
      return {t_.position[g][n]};
    return {};
  }

  bool edges() {
    succ_.assign(steps_.size(), {});
    auto add = [&](size_t a, size_t b) {
      if (a != SIZE_MAX && b != SIZE_MAX && a != b)
        succ_[a].push_back(b);
    };
    for (size_t s = 0; s < steps_.size(); ++s) {
      auto [g, id] = steps_[s];
      const Node &n = m_.graph(g).node(id);
      for (const auto &src : n.inputs)
        if (src)
          add(producerStep(g, *src, 0), s);
      if (opKind(n) == OpKind::DataSource && g != 0) {
        const Graph &sub = m_.graph(g);
        const Node &call = m_.graph(sub.parentGraph).node(sub.parentNode);
        auto p = n.intAttr("_parent_node_index");
        if (p && *p >= 0 && *p < static_cast<int64_t>(call.inputs.size()) && call.inputs[*p])
          add(producerStep(sub.parentGraph, *call.inputs[*p], 0), s);
      }
    }
    for (auto [g, id] : visited_) {
      const Node &node = m_.graph(g).node(id);
      std::vector<size_t> from = stepsOf(g, id);
      for (NodeId t : node.ctrlOut) {
        if (t >= m_.graph(g).capacity() || !m_.graph(g).node(t).alive)
          continue;
        for (size_t b : stepsOf(g, t))
          for (size_t a : from)
            add(a, b);
      }
    }
    return true;
  }

  bool order() {
    size_t n = steps_.size();
    std::vector<size_t> indeg(n, 0);
    for (const auto &s : succ_)
      for (size_t t : s)
        ++indeg[t];
    std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
    for (size_t s = 0; s < n; ++s)
      if (indeg[s] == 0)
        ready.push(s);
    while (!ready.empty()) {
      size_t s = ready.top();
      ready.pop();
      order_.push_back(s);
      for (size_t t : succ_[s])
        if (--indeg[t] == 0)
          ready.push(t);
    }
    if (order_.size() != n)
      return skip("cyclic", "the graph has a cycle: no schedule exists", 0, kNoNode);
    return true;
  }

  /// Bytes of output k of node n in graph g, as the memory plan sizes it:
  /// the inferred type, else the port description; nullopt when unknown.
  std::optional<uint64_t> sizeOf(GraphId g, NodeId n, uint32_t k) {
    if (const TensorType *t = types_.of(g, n, k);
        t && t->checkedElements() && t->byteSize() <= kMaxBufferBytes)
      return t->byteSize();
    return outputBytes(m_.graph(g).node(n), k);
  }

  /// The fresh buffer behind output `port` of graph g (kOutside for memory
  /// outside the run), following views, refs, call results and call-body Data.
  Owner resolve(GraphId g, OutPort port, unsigned depth) {
    if (depth > kMaxNesting || port.node >= m_.graph(g).capacity())
      return kOutside;
    if (auto it = resolved_.find({g, port}); it != resolved_.end())
      return it->second;
    const Node &n = m_.graph(g).node(port.node);
    const uint32_t k = port.index;
    Owner own{g, port.node, k};
    Owner r = own;
    switch (opKind(n)) {
    case OpKind::DataSource:
      if (k == 0) {
        if (g == 0) {
          r = kOutside;
        } else {
          const Graph &sub = m_.graph(g);
          const Node &call = m_.graph(sub.parentGraph).node(sub.parentNode);
          auto p = n.intAttr("_parent_node_index");
          if (p && *p >= 0 && *p < static_cast<int64_t>(call.inputs.size()) && call.inputs[*p])
            r = resolve(sub.parentGraph, *call.inputs[*p], depth + 1);
        }
      }
      break;
    case OpKind::Variable:
    case OpKind::Weight:
      if (k == 0)
        r = kOutside;
      break;
    default:
      if (refVarSrcName(n, k)) {
        r = kOutside;
      } else if (opKind(n) == OpKind::Copy && k == 0) {
        r = own;
      } else if (auto i = aliasedInput(n, k)) {
        if (*i < n.inputs.size() && n.inputs[*i])
          r = resolve(g, *n.inputs[*i], depth + 1);
      } else if (opKind(n) == OpKind::Call && n.subgraphs.size() == 1) {
        if (auto res = callResult(n.subgraphs[0], k))
          r = resolve(n.subgraphs[0], *res, depth + 1);
      }
    }
    resolved_[{g, port}] = r;
    return r;
  }

  /// Whether output k of node n writes computed or copied bytes (the plan's
  /// Compute, Copy and Ref writes), and into which buffer.
  std::optional<Owner> writeOf(GraphId g, const Node &n, uint32_t k) {
    switch (opKind(n)) {
    case OpKind::DataSource:
    case OpKind::Variable:
    case OpKind::Weight:
    case OpKind::NetOutput:
    case OpKind::Call:
      return std::nullopt;
    default:
      break;
    }
    if (refVarSrcName(n, k))
      return std::nullopt;
    if (opKind(n) == OpKind::Copy && k == 0)
      return Owner{g, n.id, k};
    if (auto i = refInput(n, k)) {
      if (*i < n.inputs.size() && n.inputs[*i])
        return resolve(g, *n.inputs[*i], 0);
      return Owner{g, n.id, k};
    }
    if (viewInput(n, k))
      return std::nullopt;
    return Owner{g, n.id, k};
  }

  bool resolveAll() {
    for (auto [g, id] : visited_) {
      const Node &n = m_.graph(g).node(id);
      for (uint32_t k = 0; k < n.numOutputs; ++k) {
        t_.owners[g][id].push_back(resolve(g, {id, k}, 0));
        auto bytes = sizeOf(g, id, k);
        t_.portBytes[g][id].push_back(bytes ? *bytes : 0);
      }
    }
    return true;
  }

  bool sweep() {
    size_t n = order_.size();
    std::map<Owner, size_t> firstWrite, lastUse;
    std::vector<std::vector<Owner>> reads(n), writes(n);
    for (size_t pos = 0; pos < n; ++pos) {
      auto [g, id] = steps_[order_[pos]];
      const Node &node = m_.graph(g).node(id);
      if (opKind(node) == OpKind::DataSource || opKind(node) == OpKind::Variable ||
          opKind(node) == OpKind::Weight || opKind(node) == OpKind::NetOutput)
        continue;
      bool computes = isInputMutable(node);
      for (uint32_t k = 0; k < node.numOutputs; ++k)
        if (auto w = writeOf(g, node, k)) {
          computes = true;
          writes[pos].push_back(*w);
        }
      if (computes || node.numOutputs == 0)
        for (const auto &src : node.inputs)
          if (src)
            reads[pos].push_back(resolve(g, *src, 0));
      if (isInputMutable(node))
        for (const auto &src : node.inputs)
          if (src)
            writes[pos].push_back(resolve(g, *src, 0));
    }
    // A step reads its inputs (a snapshot) before it writes.
    for (size_t pos = 0; pos < n; ++pos) {
      for (const Owner &b : reads[pos])
        if (b != kOutside && firstWrite.count(b))
          lastUse[b] = pos;
      for (const Owner &b : writes[pos])
        if (b != kOutside) {
          firstWrite.emplace(b, pos);
          lastUse[b] = pos;
        }
    }
    // Graph outputs stay live until the end.
    const Graph &root = m_.graph(0);
    for (NodeId id : root.liveNodes()) {
      const Node &out = root.node(id);
      if (opKind(out) != OpKind::NetOutput)
        continue;
      for (const auto &src : out.inputs)
        if (src) {
          Owner b = resolve(0, *src, 0);
          if (b != kOutside && firstWrite.count(b) && n > 0)
            lastUse[b] = n - 1;
        }
      break;
    }
    std::vector<int64_t> delta(n + 1, 0);
    for (const auto &[b, first] : firstWrite) {
      auto bytes = sizeOf(b.graph, b.node, b.index);
      if (!bytes)
        return skip("dynamic-size",
                    fmt::format("output {} of {} has no static size (dynamic or malformed shape)",
                                b.index, m_.graph(b.graph).node(b.node).name),
                    b.graph, b.node);
      // The plan sizes a buffer as a 32-bit byte count.
      uint64_t size = *bytes;
      delta[first] += static_cast<int64_t>(size);
      delta[std::min(lastUse[b], n - 1) + 1] -= static_cast<int64_t>(size);
    }
    int64_t live = 0;
    for (size_t pos = 0; pos < n; ++pos) {
      live += delta[pos];
      auto [g, id] = steps_[order_[pos]];
      t_.steps.push_back({g, id, static_cast<uint64_t>(live)});
      t_.position[g][id] = pos;
      if (static_cast<uint64_t>(live) > t_.peak) {
        t_.peak = static_cast<uint64_t>(live);
        t_.peakStep = pos;
      }
    }
    return true;
  }
};

} // namespace

MemoryTimeline analyzeMemory(const Module &m) {
  MemoryTimeline t;
  if (m.numGraphs() == 0) {
    t.skipTag = "malformed";
    t.skipReason = "the module has no graph";
    return t;
  }
  Builder(m, t).run();
  return t;
}

} // namespace graphvet
