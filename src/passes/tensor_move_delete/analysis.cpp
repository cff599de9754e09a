// TensorMoveDeletePass: the analysis (analysis.h) -- its tables, the
// topological index per graph, the TensorMoves in order and the per-decision
// and per-variable caches. Buffers are in buffers.cpp, ordering questions in
// ordering.cpp.
#include "passes/tensor_move_delete/analysis.h"

#include "ir/op_library.h"

namespace graphvet::tmd {

Analysis::Analysis(Module &m, const TensorMoveDeleteOptions &options)
    : m_(m), opts_(options), index_(m), orders_(m.numGraphs()),
      siblings_(m, index_, options.analysisBudget) {
  for (GraphId g = 0; g < m.numGraphs(); ++g)
    maxTraceSteps_ += m.graph(g).capacity();
  maxTraceSteps_ += 1;
}

const ModuleTypes &Analysis::types() {
  if (!types_) {
    // The module passed the verifier; a port inference could not type has
    // the default description, the same in every decision.
    Diagnostics ignored;
    types_ = inferModuleTypes(m_, ignored);
  }
  return *types_;
}

OrderIndex &Analysis::order(GraphId g) {
  if (!orders_[g]) {
    if (topo_.size() <= g || !topo_[g])
      orders_[g] = std::make_unique<OrderIndex>(m_.graph(g), stableTopoOrder(m_.graph(g)));
    else
      orders_[g] = std::make_unique<OrderIndex>(m_.graph(g), topo_[g]);
  }
  return *orders_[g];
}

std::vector<NodeRef> Analysis::tensorMovesInOrder() {
  // Depth-first over the graph nesting: a subgraph's nodes take the place of
  // the node holding it, so "topological order" spans the whole module.
  std::vector<NodeRef> out;
  topo_.assign(m_.numGraphs(), std::nullopt);
  std::vector<bool> seen(m_.numGraphs(), false);
  // Per graph only the nodes that matter here: TensorMoves and holders of
  // subgraphs, picked out while the order is computed (one scan per graph).
  struct Frame {
    GraphId g;
    std::vector<NodeId> nodes;
    size_t next = 0;
  };
  std::vector<Frame> stack;
  auto enter = [&](GraphId g) {
    if (g >= m_.numGraphs() || seen[g] || !m_.graph(g).alive)
      return;
    seen[g] = true;
    std::vector<NodeId> picked;
    topo_[g] = stableTopoOrder(
        m_.graph(g), [](const Node &n) { return isTensorMove(n) || !n.subgraphs.empty(); }, picked);
    stack.push_back({g, std::move(picked), 0});
  };
  if (m_.numGraphs() > 0)
    enter(0);
  while (!stack.empty()) {
    Frame &f = stack.back();
    if (f.next == f.nodes.size()) {
      stack.pop_back();
      continue;
    }
    GraphId g = f.g;
    const Node &n = m_.graph(g).node(f.nodes[f.next++]);
    if (isTensorMove(n))
      out.push_back({g, n.id});
    for (auto it = n.subgraphs.rbegin(); it != n.subgraphs.rend(); ++it)
      enter(*it); // pushed in reverse: the first subgraph runs first
  }
  return out;
}

bool Analysis::reaches(GraphId g, NodeId from, NodeId to) {
  if (opts_.naiveReachability)
    return from != to && m_.graph(g).reaches(from, to);
  return order(g).reaches(from, to);
}

bool Analysis::addCtrlEdge(GraphId g, NodeId from, NodeId to, bool *added) {
  if (!opts_.naiveReachability)
    return order(g).addCtrlEdge(from, to, added);
  // OrderIndex::addCtrlEdge's contract, with a whole-graph cycle check.
  *added = false;
  Graph &graph = m_.graph(g);
  if (from == to)
    return false;
  if (graph.hasCtrlEdge(from, to))
    return true;
  if (graph.reaches(to, from))
    return false;
  graph.addCtrlEdge(from, to);
  *added = true;
  return true;
}

SourceTrace Analysis::trace(GraphId g, OutPort start) const {
  return traceSource(m_, index_, g, start, maxTraceSteps_);
}

BufferUses Analysis::explore(std::span<const SlotRef> slots, std::vector<SlotRef> *visited,
                             bool whileResultsCopied) const {
  return exploreUses(m_, index_, slots, opts_.analysisBudget, visited, whileResultsCopied);
}

bool Analysis::passesOn(GraphId g, NodeId n, uint32_t slot) const {
  return passesMemoryOn(m_, index_, g, n, slot, opts_.analysisBudget);
}

const BufferUses &Analysis::tensorMoveUses(NodeRef t) {
  if (!tmUses_) {
    std::vector<SlotRef> slots = consumerSlots(m_, {t.graph, {t.node, 0}});
    tmUses_ = exploreUses(m_, index_, slots, opts_.analysisBudget, nullptr,
                          /*whileResultsCopied=*/preciseWhileResults_);
  }
  return *tmUses_;
}

const std::optional<std::vector<NodeRef>> &Analysis::variableWriters(const std::string &var) {
  auto cached = variableWriters_.find(var);
  if (cached == variableWriters_.end()) {
    std::vector<SlotRef> slots;
    for (const PortRef &p : index_.variablePorts(var))
      for (const SlotRef &s : consumerSlots(m_, p))
        slots.push_back(s);
    BufferUses uses = exploreUses(m_, index_, slots, opts_.analysisBudget);
    // A holder binding an output to the variable writes it (a While writes
    // each iteration's result there).
    for (const PortRef &p : index_.variableReboundBy(var))
      uses.writers.push_back({p.graph, p.port.node});
    cached = variableWriters_
                 .emplace(var, uses.overBudget ? std::nullopt
                                               : std::optional<std::vector<NodeRef>>(uses.writers))
                 .first;
  }
  return cached->second;
}

void Analysis::startSweep() {
  facts_.clear();
  if (!opts_.conservative)
    dead_.clear();
}

} // namespace graphvet::tmd
