// Builds the scheduling domains: inlines PartitionedCall bodies, turns data
// edges through call boundaries into producer -> consumer edges, expands
// control edges to or from a call onto every node inside it, and computes
// each step's buffer accesses from the memory plan (a control-flow step
// accesses whatever any step of any of its subgraphs may access).
#include "oracle/inlined.h"

#include "ir/op_library.h"

#include <algorithm>
#include <fmt/format.h>
#include <functional>
#include <map>
#include <queue>

namespace graphvet::oracle {

size_t Domain::numEdges() const {
  size_t n = 0;
  for (const auto &s : succ)
    n += s.size();
  return n;
}

namespace {

constexpr unsigned kMaxNesting = 64;

void mergeAccesses(std::vector<Access> &acc) {
  std::sort(acc.begin(), acc.end(), [](const Access &a, const Access &b) {
    return a.buffer < b.buffer || (a.buffer == b.buffer && a.write > b.write);
  });
  // After sorting, the first entry per buffer carries the write if any.
  acc.erase(std::unique(acc.begin(), acc.end(),
                        [](const Access &a, const Access &b) { return a.buffer == b.buffer; }),
            acc.end());
}

} // namespace

class DomainBuilder {
public:
  DomainBuilder(const Module &m, const MemoryPlan &plan, InlinedModule &out)
      : m_(m), plan_(plan), out_(out) {
    out_.where_.assign(m.numGraphs(), {});
    for (GraphId g = 0; g < m.numGraphs(); ++g)
      out_.where_[g].assign(m.graph(g).capacity(), {UINT32_MAX, kNoStep});
  }

  DomainId build(GraphId g, DomainId parent, StepIndex parentStep, unsigned depth) {
    DomainId id = static_cast<DomainId>(out_.domains.size());
    out_.domains.emplace_back();
    out_.domains[id].graph = g;
    out_.domains[id].parentDomain = parent;
    out_.domains[id].parentStep = parentStep;

    // 1. Steps: nodes in id order, call bodies inlined in place.
    std::vector<std::pair<GraphId, NodeId>> inlinedNodes; // calls included
    std::map<std::pair<GraphId, NodeId>, std::vector<StepIndex>> members;
    collect(id, g, depth, inlinedNodes, members);

    // 2. Edges.
    Domain *d = &out_.domains[id];
    d->succ.assign(d->steps.size(), {});
    auto addEdge = [&](StepIndex a, StepIndex b) {
      if (a != kNoStep && b != kNoStep && a != b)
        out_.domains[id].succ[a].push_back(b);
    };
    for (StepIndex s = 0; s < out_.domains[id].steps.size(); ++s) {
      GraphId sg = out_.domains[id].steps[s].graph;
      const Node &n = m_.graph(sg).node(out_.domains[id].steps[s].node);
      for (const auto &src : n.inputs)
        if (src)
          addEdge(producerStep(id, sg, *src, 0), s);
      // A Data inside an inlined call body is fed by the producer of the
      // call's input (a data edge through the boundary).
      if (opKind(n) == OpKind::DataSource && sg != g) {
        const Graph &sub = m_.graph(sg);
        const Node &call = m_.graph(sub.parentGraph).node(sub.parentNode);
        auto p = n.intAttr("_parent_node_index");
        if (p && *p >= 0 && *p < static_cast<int64_t>(call.inputs.size()) && call.inputs[*p])
          addEdge(producerStep(id, sub.parentGraph, *call.inputs[*p], 0), s);
      }
    }
    auto stepsOf = [&](GraphId sg, NodeId n) -> std::vector<StepIndex> {
      auto it = members.find({sg, n});
      if (it != members.end())
        return it->second;
      auto [dom, st] = out_.where_[sg][n];
      if (dom == id)
        return {st};
      return {};
    };
    for (auto [sg, n] : inlinedNodes) {
      const Node &node = m_.graph(sg).node(n);
      if (node.ctrlOut.empty())
        continue;
      std::vector<StepIndex> from = stepsOf(sg, n);
      for (NodeId t : node.ctrlOut) {
        if (t >= m_.graph(sg).capacity() || !m_.graph(sg).node(t).alive)
          continue;
        for (StepIndex b : stepsOf(sg, t))
          for (StepIndex a : from)
            addEdge(a, b);
      }
    }
    for (auto &s : out_.domains[id].succ) {
      std::sort(s.begin(), s.end());
      s.erase(std::unique(s.begin(), s.end()), s.end());
    }

    // 3. Subdomains of control-flow steps (built before accesses: a
    // control-flow step accesses what its subgraphs access).
    for (StepIndex s = 0; s < out_.domains[id].steps.size(); ++s) {
      Step &st = out_.domains[id].steps[s];
      if (st.kind != StepKind::If && st.kind != StepKind::Case && st.kind != StepKind::While)
        continue;
      std::vector<GraphId> subs = m_.graph(st.graph).node(st.node).subgraphs;
      for (GraphId sub : subs) {
        if (!claim(sub, depth + 1))
          continue;
        DomainId child = build(sub, id, s, depth + 1);
        out_.domains[id].steps[s].subdomains.push_back(child);
      }
    }

    // 4. Accesses.
    for (StepIndex s = 0; s < out_.domains[id].steps.size(); ++s)
      computeAccesses(id, s);

    // 5. Reference order and cycle.
    order(out_.domains[id]);
    return id;
  }

  std::vector<bool> used_;

private:
  const Module &m_;
  const MemoryPlan &plan_;
  InlinedModule &out_;

  static StepKind kindOf(const Node &n) {
    switch (opKind(n)) {
    case OpKind::DataSource:
    case OpKind::Variable:
    case OpKind::Weight:
    case OpKind::NetOutput:
      return StepKind::Noop;
    case OpKind::If:
      return StepKind::If;
    case OpKind::Case:
      return StepKind::Case;
    case OpKind::While:
      return StepKind::While;
    default:
      return StepKind::Compute;
    }
  }

  void collect(DomainId id, GraphId g, unsigned depth,
               std::vector<std::pair<GraphId, NodeId>> &inlinedNodes,
               std::map<std::pair<GraphId, NodeId>, std::vector<StepIndex>> &members) {
    const Graph &graph = m_.graph(g);
    for (NodeId n : graph.liveNodes()) {
      const Node &node = graph.node(n);
      inlinedNodes.push_back({g, n});
      if (opKind(node) == OpKind::Call) {
        size_t first = out_.domains[id].steps.size();
        for (GraphId sub : node.subgraphs) {
          if (!claim(sub, depth + 1))
            continue;
          collect(id, sub, depth + 1, inlinedNodes, members);
        }
        std::vector<StepIndex> inside;
        for (size_t s = first; s < out_.domains[id].steps.size(); ++s)
          inside.push_back(static_cast<StepIndex>(s));
        members[{g, n}] = std::move(inside);
        continue;
      }
      Step st;
      st.graph = g;
      st.node = n;
      st.kind = kindOf(node);
      st.name = plan_.qualifiedName(g, n);
      out_.where_[g][n] = {id, static_cast<StepIndex>(out_.domains[id].steps.size())};
      out_.domains[id].steps.push_back(std::move(st));
    }
  }

  /// Every graph is scheduled exactly once (as a domain or inlined); a second
  /// use, a dead graph or runaway nesting is reported and skipped, which also
  /// keeps the work linear on malformed modules.
  bool claim(GraphId sub, unsigned depth) {
    if (sub >= m_.numGraphs() || !m_.graph(sub).alive) {
      out_.errors.push_back("a node holds a subgraph that does not exist");
      return false;
    }
    if (used_[sub] || depth > kMaxNesting) {
      out_.errors.push_back(
          fmt::format("subgraph {} is used more than once, recursively or nested too deeply",
                      m_.graph(sub).name));
      return false;
    }
    used_[sub] = true;
    return true;
  }

  /// The step that produces `port` of graph `g` as seen from domain `id`:
  /// the node itself, or through a call, the producer of the call body's
  /// result for that output.
  StepIndex producerStep(DomainId id, GraphId g, OutPort port, unsigned depth) {
    if (depth > kMaxNesting || port.node >= m_.graph(g).capacity())
      return kNoStep;
    const Node &p = m_.graph(g).node(port.node);
    if (opKind(p) == OpKind::Call) {
      if (p.subgraphs.size() != 1)
        return kNoStep;
      GraphId sub = p.subgraphs[0];
      const Graph &sg = m_.graph(sub);
      for (NodeId n : sg.liveNodes()) {
        const Node &out = sg.node(n);
        if (opKind(out) != OpKind::NetOutput)
          continue;
        for (uint32_t i = 0; i < out.inputs.size(); ++i) {
          auto idx = out.portIntAttr(false, i, "_parent_node_index");
          if (idx && *idx == static_cast<int64_t>(port.index) && out.inputs[i])
            return producerStep(id, sub, *out.inputs[i], depth + 1);
        }
      }
      return kNoStep;
    }
    auto [dom, st] = out_.where_[g][port.node];
    return dom == id ? st : kNoStep;
  }

  const std::vector<BufferId> &candidatesOf(GraphId g, OutPort src) {
    static const std::vector<BufferId> kEmpty;
    PortId p = plan_.portId(g, src);
    return p == kNoPort ? kEmpty : plan_.port(p).candidates;
  }

  void computeAccesses(DomainId id, StepIndex s) {
    Step &st = out_.domains[id].steps[s];
    const Node &node = m_.graph(st.graph).node(st.node);
    std::vector<Access> acc;
    if (st.kind == StepKind::Noop) {
      st.accesses.clear();
      return;
    }
    // A node whose outputs are all views computes nothing and reads nothing:
    // its consumers' reads of the shared buffer are what count.
    bool computes = st.kind != StepKind::Compute || isInputMutable(node);
    for (uint32_t k = 0; k < node.numOutputs && !computes; ++k) {
      PortId p = plan_.portId(st.graph, {st.node, k});
      computes = p != kNoPort && plan_.port(p).write != PortWrite::None;
    }
    if (computes || node.numOutputs == 0)
      for (const auto &src : node.inputs)
        if (src)
          for (BufferId b : candidatesOf(st.graph, *src))
            acc.push_back({b, false});
    if (st.kind == StepKind::Compute) {
      for (uint32_t k = 0; k < node.numOutputs; ++k) {
        PortId p = plan_.portId(st.graph, {st.node, k});
        if (p == kNoPort)
          continue;
        const PortPlan &pp = plan_.port(p);
        if (pp.write != PortWrite::None)
          for (BufferId b : pp.candidates)
            acc.push_back({b, true});
      }
      if (isInputMutable(node))
        for (const auto &src : node.inputs)
          if (src)
            for (BufferId b : candidatesOf(st.graph, *src))
              acc.push_back({b, true});
    } else {
      // Control flow: everything any subgraph step may access...
      for (DomainId sub : st.subdomains)
        for (const Step &inner : out_.domains[sub].steps)
          acc.insert(acc.end(), inner.accesses.begin(), inner.accesses.end());
      // ...the fallback results it zero-fills...
      for (uint32_t k = 0; k < node.numOutputs; ++k) {
        PortId p = plan_.portId(st.graph, {st.node, k});
        if (p != kNoPort && plan_.port(p).rule == BindRule::Dynamic &&
            plan_.port(p).own != kNoBuffer)
          acc.push_back({plan_.port(p).own, true});
      }
      // ...and for While, the write-back of each body result into its loop
      // variable (unless the result already is that buffer).
      if (st.kind == StepKind::While && node.subgraphs.size() == 2)
        for (auto [j, result] : bodyResults(node.subgraphs[1])) {
          std::vector<BufferId> loopVar = loopVarCandidates(st.graph, node, j);
          if (result != loopVar || loopVar.size() != 1)
            for (BufferId b : loopVar)
              acc.push_back({b, true});
        }
    }
    mergeAccesses(acc);
    out_.domains[id].steps[s].accesses = std::move(acc);
  }

public:
  /// (loop variable j, candidate buffers of the body's result for j).
  std::vector<std::pair<uint32_t, std::vector<BufferId>>> bodyResults(GraphId body) {
    std::vector<std::pair<uint32_t, std::vector<BufferId>>> out;
    const Graph &g = m_.graph(body);
    for (NodeId n : g.liveNodes()) {
      const Node &no = g.node(n);
      if (opKind(no) != OpKind::NetOutput)
        continue;
      for (uint32_t i = 0; i < no.inputs.size(); ++i) {
        auto j = no.portIntAttr(false, i, "_parent_node_index");
        if (!j || *j < 0 || !no.inputs[i])
          continue;
        out.push_back({static_cast<uint32_t>(*j), candidatesOf(body, *no.inputs[i])});
      }
      break;
    }
    return out;
  }

  std::vector<BufferId> loopVarCandidates(GraphId g, const Node &node, uint32_t j) {
    if (j < node.numOutputs) {
      PortId p = plan_.portId(g, {node.id, j});
      if (p != kNoPort)
        return plan_.port(p).candidates;
    }
    if (j < node.inputs.size() && node.inputs[j])
      return candidatesOf(g, *node.inputs[j]);
    return {};
  }

private:
  static void order(Domain &d) {
    size_t n = d.steps.size();
    std::vector<uint32_t> indeg(n, 0);
    for (const auto &s : d.succ)
      for (StepIndex t : s)
        ++indeg[t];
    std::priority_queue<StepIndex, std::vector<StepIndex>, std::greater<>> ready;
    for (StepIndex s = 0; s < n; ++s)
      if (indeg[s] == 0)
        ready.push(s);
    d.reference.clear();
    d.reference.reserve(n);
    while (!ready.empty()) {
      StepIndex s = ready.top();
      ready.pop();
      d.reference.push_back(s);
      for (StepIndex t : d.succ[s])
        if (--indeg[t] == 0)
          ready.push(t);
    }
    if (d.reference.size() == n)
      return;
    d.reference.clear();
    // Every step left with indegree > 0 has a predecessor also left: walk
    // predecessors until a step repeats, which closes a cycle.
    std::vector<std::vector<StepIndex>> pred(n);
    for (StepIndex s = 0; s < n; ++s)
      for (StepIndex t : d.succ[s])
        if (indeg[t] > 0 && indeg[s] > 0)
          pred[t].push_back(s);
    StepIndex start = kNoStep;
    for (StepIndex s = 0; s < n && start == kNoStep; ++s)
      if (indeg[s] > 0 && !pred[s].empty())
        start = s;
    if (start == kNoStep)
      return;
    std::vector<size_t> seenAt(n, SIZE_MAX);
    std::vector<StepIndex> walk;
    StepIndex cur = start;
    while (seenAt[cur] == SIZE_MAX && walk.size() <= n) {
      seenAt[cur] = walk.size();
      walk.push_back(cur);
      cur = pred[cur].front();
    }
    // walk[seenAt[cur]..] followed backwards is the cycle; reverse it into
    // edge direction.
    std::vector<StepIndex> cyc(walk.begin() + static_cast<long>(seenAt[cur]), walk.end());
    std::reverse(cyc.begin(), cyc.end());
    cyc.push_back(cyc.front());
    d.cycle = std::move(cyc);
  }
};

InlinedModule InlinedModule::build(const Module &m, const MemoryPlan &plan) {
  InlinedModule out;
  if (m.numGraphs() == 0)
    return out;
  DomainBuilder b(m, plan, out);
  b.used_.assign(m.numGraphs(), false);
  b.used_[0] = true;
  b.build(0, UINT32_MAX, kNoStep, 0);
  return out;
}

std::pair<DomainId, StepIndex> InlinedModule::stepOf(GraphId g, NodeId n) const {
  if (g >= where_.size() || n >= where_[g].size())
    return {UINT32_MAX, kNoStep};
  return where_[g][n];
}

StepIndex InlinedModule::findStep(DomainId domain, const std::string &name) const {
  const auto &steps = domains[domain].steps;
  for (StepIndex s = 0; s < steps.size(); ++s)
    if (steps[s].name == name)
      return s;
  return kNoStep;
}

std::vector<std::string> InlinedModule::names(DomainId d,
                                              const std::vector<StepIndex> &order) const {
  std::vector<std::string> out;
  out.reserve(order.size());
  for (StepIndex s : order)
    out.push_back(domains[d].steps[s].name);
  return out;
}

bool InlinedModule::acyclic() const {
  for (const Domain &d : domains)
    if (!d.cycle.empty() || d.reference.size() != d.steps.size())
      return false;
  return true;
}

} // namespace graphvet::oracle
