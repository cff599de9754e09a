// The annotate-used-memory driver: computes the timeline, writes the
// attributes, explains the peak, every change and every skip.
#include "passes/annotate_used_memory.h"

#include "ir/op_library.h"
#include "passes/annotate_used_memory/analysis.h"

#include <algorithm>
#include <fmt/format.h>
#include <functional>

namespace graphvet {
namespace {

constexpr std::string_view kPass = kAnnotateUsedMemoryName;

bool isNoop(const Node &n) {
  OpKind k = opKind(n);
  return k == OpKind::DataSource || k == OpKind::Variable || k == OpKind::Weight ||
         k == OpKind::NetOutput;
}

/// Sets an integer attribute; true when it was absent or different.
bool setInt(Node &n, const char *key, int64_t v) {
  auto cur = n.intAttr(key);
  if (cur && *cur == v)
    return false;
  n.attrs[key] = AttrValue::ofInt(v);
  return true;
}

} // namespace

AnnotateUsedMemoryStats runAnnotateUsedMemory(Module &m, const AnnotateUsedMemoryOptions &options,
                                              std::vector<Remark> *remarks) {
  AnnotateUsedMemoryStats stats;
  MemoryTimeline t = analyzeMemory(m);
  if (!t.ok) {
    stats.skipped = 1;
    if (remarks && m.numGraphs() > 0) {
      const Graph &g = m.graph(t.skipGraph);
      NodeId n = t.skipNode;
      if (n == kNoNode) {
        auto live = g.liveNodes();
        n = live.empty() ? kNoNode : live.front();
      }
      if (n != kNoNode)
        remarks->push_back(nodeRemark(kPass, g, g.node(n), "skipped", t.skipTag,
                                      fmt::format("skipped the module: {}", t.skipReason)));
    }
    // Figures of an earlier run no longer hold: remove them.
    for (GraphId gi = 0; gi < m.numGraphs(); ++gi) {
      Graph &g = m.graph(gi);
      if (!g.alive)
        continue;
      for (NodeId id : g.liveNodes()) {
        Node &n = g.node(id);
        for (const char *key : {kUsedMemoryAttr, kPeakMemoryAttr})
          if (n.attrs.erase(key)) {
            ++stats.removed;
            if (remarks)
              remarks->push_back(nodeRemark(
                  kPass, g, n, "removed", "stale",
                  fmt::format("removed {} from {}: the module is skipped", key, n.name)));
          }
      }
    }
    return stats;
  }
  stats.steps = static_cast<int64_t>(t.steps.size());
  stats.peak = static_cast<int64_t>(t.peak);
  auto note = [&](GraphId gi, Node &n, const char *key, int64_t v) {
    if (!setInt(n, key, v))
      return;
    ++stats.changed;
    if (remarks)
      remarks->push_back(nodeRemark(kPass, m.graph(gi), n, "annotated", "updated",
                                    fmt::format("annotated {}: {} = {}", n.name, key, v)));
  };
  // Nodes with a step, in schedule order; then calls (the largest figure of
  // any step inside, the call being those steps).
  for (const MemoryStep &s : t.steps) {
    Node &n = m.graph(s.graph).node(s.node);
    if (!options.annotateNoops && isNoop(n))
      continue;
    ++stats.annotated;
    note(s.graph, n, kUsedMemoryAttr, static_cast<int64_t>(s.liveBytes));
  }
  std::function<uint64_t(GraphId)> bodyMax = [&](GraphId gi) -> uint64_t {
    uint64_t best = 0;
    for (NodeId id : m.graph(gi).liveNodes()) {
      Node &n = m.graph(gi).node(id);
      uint64_t v = 0;
      if (opKind(n) == OpKind::Call && n.subgraphs.size() == 1) {
        v = bodyMax(n.subgraphs[0]);
        ++stats.annotated;
        note(gi, n, kUsedMemoryAttr, static_cast<int64_t>(v));
      } else if (t.position[gi][id] != SIZE_MAX) {
        v = t.steps[t.position[gi][id]].liveBytes;
      }
      best = std::max(best, v);
    }
    return best;
  };
  bodyMax(0);
  Graph &root = m.graph(0);
  for (NodeId id : root.liveNodes()) {
    Node &n = root.node(id);
    if (opKind(n) != OpKind::NetOutput)
      continue;
    note(0, n, kPeakMemoryAttr, static_cast<int64_t>(t.peak));
    break;
  }
  if (remarks && !t.steps.empty()) {
    const MemoryStep &p = t.steps[t.peakStep];
    remarks->push_back(
        nodeRemark(kPass, m.graph(p.graph), m.graph(p.graph).node(p.node), "annotated", "peak",
                   fmt::format("peak {} bytes while {} runs (step {} of {})", t.peak,
                               m.graph(p.graph).node(p.node).name, t.peakStep, t.steps.size())));
  }
  return stats;
}

} // namespace graphvet
