// Conflict enumeration, transitive closure by bitsets in reverse reference
// order, constructive witness schedules and the layout check.
#include "oracle/races.h"

#include "ir/op_library.h"

#include <algorithm>
#include <map>
#include <optional>

namespace graphvet::oracle {

Reachability::Reachability(const Domain &d) : d_(d) {
  size_t n = d.steps.size();
  if (d.reference.size() != n)
    return; // cyclic: no closure (callers check acyclicity first)
  dense_ = n <= kDenseSteps;
  if (!dense_)
    return;
  words_ = (n + 63) / 64;
  bits_.assign(n * words_, 0);
  for (auto it = d.reference.rbegin(); it != d.reference.rend(); ++it) {
    StepIndex s = *it;
    uint64_t *row = bits_.data() + s * words_;
    for (StepIndex t : d.succ[s]) {
      row[t / 64] |= uint64_t{1} << (t % 64);
      const uint64_t *other = bits_.data() + t * words_;
      for (size_t w = 0; w < words_; ++w)
        row[w] |= other[w];
    }
  }
}

bool Reachability::reaches(StepIndex a, StepIndex b) const {
  if (dense_)
    return (bits_[a * words_ + b / 64] >> (b % 64)) & 1;
  if (cachedSource_ != a) {
    cachedSource_ = a;
    cachedReach_.assign(d_.steps.size(), false);
    std::vector<StepIndex> work(d_.succ[a].begin(), d_.succ[a].end());
    for (StepIndex t : work)
      cachedReach_[t] = true;
    while (!work.empty()) {
      StepIndex s = work.back();
      work.pop_back();
      for (StepIndex t : d_.succ[s])
        if (!cachedReach_[t]) {
          cachedReach_[t] = true;
          work.push_back(t);
        }
    }
  }
  return cachedReach_[b];
}

size_t RaceAnalysis::numRaces() const {
  return static_cast<size_t>(std::count_if(conflicts.begin(), conflicts.end(),
                                           [](const Conflict &c) { return c.unordered; }));
}

RaceAnalysis analyzeRaces(const InlinedModule &inl) {
  RaceAnalysis out;
  for (DomainId d = 0; d < inl.domains.size(); ++d) {
    const Domain &dom = inl.domains[d];
    size_t n = dom.steps.size();
    if (dom.reference.size() != n)
      continue;
    // Accessors per buffer, in reference order.
    std::map<BufferId, std::vector<std::pair<StepIndex, bool>>> byBuffer;
    for (StepIndex s : dom.reference)
      for (const Access &a : dom.steps[s].accesses)
        byBuffer[a.buffer].push_back({s, a.write});
    std::map<std::pair<StepIndex, StepIndex>, size_t> index;
    for (auto &[buf, acc] : byBuffer) {
      bool anyWrite = std::any_of(acc.begin(), acc.end(), [](auto &x) { return x.second; });
      if (!anyWrite || acc.size() < 2)
        continue;
      for (size_t i = 0; i < acc.size(); ++i)
        for (size_t j = i + 1; j < acc.size(); ++j) {
          if (!acc[i].second && !acc[j].second)
            continue;
          auto key = std::make_pair(acc[i].first, acc[j].first); // already in reference order
          auto it = index.find(key);
          if (it == index.end()) {
            Conflict c;
            c.domain = d;
            c.first = key.first;
            c.second = key.second;
            index.emplace(key, out.conflicts.size());
            out.conflicts.push_back(std::move(c));
            it = index.find(key);
          }
          out.conflicts[it->second].buffers.push_back(buf);
        }
    }
    Reachability reach(dom);
    for (auto &[key, i] : index)
      out.conflicts[i].unordered = !reach.reaches(key.first, key.second);
  }
  return out;
}

std::vector<StepIndex> orderWith(const Domain &d, StepIndex first, StepIndex /*second*/) {
  size_t n = d.steps.size();
  // Ancestors of `first` (and itself) go first, in reference order; the rest
  // follow in reference order. The ancestor set is closed under
  // predecessors, so both parts respect every edge.
  std::vector<std::vector<StepIndex>> pred(n);
  for (StepIndex s = 0; s < n; ++s)
    for (StepIndex t : d.succ[s])
      pred[t].push_back(s);
  std::vector<bool> early(n, false);
  std::vector<StepIndex> work{first};
  early[first] = true;
  while (!work.empty()) {
    StepIndex s = work.back();
    work.pop_back();
    for (StepIndex p : pred[s])
      if (!early[p]) {
        early[p] = true;
        work.push_back(p);
      }
  }
  std::vector<StepIndex> order;
  order.reserve(n);
  for (StepIndex s : d.reference)
    if (early[s])
      order.push_back(s);
  for (StepIndex s : d.reference)
    if (!early[s])
      order.push_back(s);
  return order;
}

std::string LayoutConflict::key() const {
  std::string who = output >= 0 ? "output" + std::to_string(output) : buffer;
  std::string other = kind == "output+weight" ? buffer : scopedNode;
  return kind + "|" + who + "|" + other;
}

namespace {

/// Node n of graph g named as if every call holding it were inlined: the
/// name in the innermost enclosing graph that is not a call's subgraph
/// (found by the --passes all campaign, issue 29: partition-graph outlined
/// a continuous op whose layout conflict the original already had, and the
/// conflict looked new under the region's name).
std::string scopedName(const Module &m, GraphId g, NodeId n) {
  GraphId scope = g;
  for (size_t depth = 0; depth < m.numGraphs() && scope != 0; ++depth) {
    const Graph &sg = m.graph(scope);
    if (sg.parentNode == kNoNode || sg.parentGraph == kNoGraph ||
        opKind(m.graph(sg.parentGraph).node(sg.parentNode)) != OpKind::Call)
      break;
    scope = sg.parentGraph;
  }
  const std::string &name = m.graph(g).node(n).name;
  return scope == 0 ? name : m.graph(scope).name + "/" + name;
}

} // namespace

std::vector<LayoutConflict> layoutConflicts(const Module &m, const MemoryPlan &plan) {
  const auto &buffers = plan.buffers();
  // Graph outputs each buffer may be bound to.
  std::vector<std::vector<int64_t>> outputsOf(buffers.size());
  const Graph &root = m.root();
  for (NodeId n : root.liveNodes()) {
    const Node &node = root.node(n);
    if (opKind(node) != OpKind::NetOutput)
      continue;
    for (uint32_t k = 0; k < node.inputs.size(); ++k)
      if (node.inputs[k])
        if (PortId p = plan.portId(0, *node.inputs[k]); p != kNoPort)
          for (BufferId b : plan.port(p).candidates)
            outputsOf[b].push_back(k);
    break;
  }
  std::vector<LayoutConflict> out;
  auto callerOwned = [&](BufferId b) {
    return buffers[b].kind == BufferKind::UserInput || buffers[b].kind == BufferKind::CallerMemory;
  };
  for (BufferId b = 0; b < buffers.size(); ++b)
    if (buffers[b].kind == BufferKind::Weight)
      for (int64_t k : outputsOf[b])
        out.push_back({buffers[b].label, "output+weight", "", "", k});
  for (GraphId g : m.canonicalGraphOrder()) {
    const Graph &graph = m.graph(g);
    for (NodeId n : graph.liveNodes()) {
      const Node &node = graph.node(n);
      if (!needsContinuousInput(node))
        continue;
      // Exempt when every input comes from one and the same buffer.
      std::vector<BufferId> ins;
      bool allSame = true;
      std::optional<std::vector<BufferId>> firstSet;
      for (const auto &src : node.inputs) {
        if (!src) {
          allSame = false;
          continue;
        }
        PortId p = plan.portId(g, *src);
        if (p == kNoPort)
          continue;
        const auto &c = plan.port(p).candidates;
        if (!firstSet)
          firstSet = c;
        else if (*firstSet != c)
          allSame = false;
        ins.insert(ins.end(), c.begin(), c.end());
      }
      if (allSame && firstSet && firstSet->size() == 1)
        continue;
      std::sort(ins.begin(), ins.end());
      ins.erase(std::unique(ins.begin(), ins.end()), ins.end());
      std::string who = plan.qualifiedName(g, n), scoped = scopedName(m, g, n);
      for (BufferId b : ins) {
        if (callerOwned(b))
          out.push_back({buffers[b].label, "input+continuous", who, scoped, -1});
        if (buffers[b].kind == BufferKind::Weight)
          out.push_back({buffers[b].label, "weight+continuous", who, scoped, -1});
        // A variable has a fixed address outside the graph's memory
        // (semantics.md §6): it cannot be placed in the op's allocation.
        if (buffers[b].kind == BufferKind::Variable)
          out.push_back({buffers[b].label, "variable+continuous", who, scoped, -1});
        for (int64_t k : outputsOf[b])
          out.push_back({buffers[b].label, "output+continuous", who, scoped, k});
      }
    }
  }
  return out;
}

} // namespace graphvet::oracle
