// Backward source tracing, forward use exploration and the read/write
// classes; see buffer_analysis.h.
#include "passes/buffer_analysis.h"

#include "ir/op_library.h"

#include <algorithm>

namespace graphvet {
namespace {

bool isRootGraph(const Module &m, GraphId g) {
  return g == 0 && m.graph(g).parentNode == kNoNode;
}

std::optional<uint32_t> nonNegativeIndex(const Node &n, const std::string &key) {
  auto v = n.intAttr(key);
  if (!v || *v < 0 || *v > INT32_MAX)
    return std::nullopt;
  return static_cast<uint32_t>(*v);
}

template <typename T> std::span<const T> spanOf(const std::vector<T> *v) {
  return v ? std::span<const T>(*v) : std::span<const T>();
}

} // namespace

ModuleIndex::ModuleIndex(const Module &m) : graphs_(m.numGraphs()) {
  for (GraphId gid = 0; gid < m.numGraphs(); ++gid) {
    const Graph &g = m.graph(gid);
    if (!g.alive)
      continue;
    PerGraph &per = graphs_[gid];
    bool root = isRootGraph(m, gid);
    for (NodeId id = 0; id < g.capacity(); ++id) {
      const Node &n = g.node(id);
      if (!n.alive)
        continue;
      OpKind kind = opKind(n);
      if (kind == OpKind::DataSource) {
        if (root) {
          if (auto k = nonNegativeIndex(n, "index"))
            rootDataByIndex_[*k].push_back(id);
        } else if (auto p = nonNegativeIndex(n, "_parent_node_index")) {
          per.dataByParentIndex[*p].push_back(id);
        }
      } else if (kind == OpKind::Variable) {
        variablePorts_[n.name].push_back({gid, {id, 0}});
      }
      // (Most nodes carry no memory attribute: skip the per-output lookups,
      // which then find no variable name, and a non-holder nothing else.)
      const bool lookUp = hasMemoryBehaviourAttrs(n) || holdsSubgraphs(n);
      for (uint32_t k = 0; k < n.numOutputs && kind != OpKind::Variable && lookUp; ++k) {
        const std::string *v = refVarSrcName(n, k);
        if (v)
          variablePorts_[*v].push_back({gid, {id, k}});
        if (holdsSubgraphs(n) && (v || aliasedInput(n, k))) {
          rebound_.insert({gid, id});
          if (v)
            reboundVariables_[*v].push_back({gid, {id, k}});
        }
      }
      if (kind == OpKind::NetOutput && per.netOutput == kNoNode) {
        per.netOutput = id;
        for (uint32_t k = 0; k < n.inputs.size(); ++k)
          if (auto j = nonNegativeIndex(n, Node::portKey(false, k, "_parent_node_index")))
            per.slotsByParentOutput[*j].push_back(k);
      }
    }
  }
}

std::span<const PortRef> ModuleIndex::variableReboundBy(const std::string &name) const {
  auto it = reboundVariables_.find(name);
  return spanOf(it == reboundVariables_.end() ? nullptr : &it->second);
}

std::span<const NodeId> ModuleIndex::dataForParentInput(GraphId g, uint32_t i) const {
  if (g >= graphs_.size())
    return {};
  auto it = graphs_[g].dataByParentIndex.find(i);
  return spanOf(it == graphs_[g].dataByParentIndex.end() ? nullptr : &it->second);
}

NodeId ModuleIndex::netOutput(GraphId g) const {
  return g < graphs_.size() ? graphs_[g].netOutput : kNoNode;
}

std::span<const uint32_t> ModuleIndex::resultSlots(GraphId g, uint32_t j) const {
  if (g >= graphs_.size())
    return {};
  auto it = graphs_[g].slotsByParentOutput.find(j);
  return spanOf(it == graphs_[g].slotsByParentOutput.end() ? nullptr : &it->second);
}

std::span<const PortRef> ModuleIndex::variablePorts(const std::string &name) const {
  auto it = variablePorts_.find(name);
  return spanOf(it == variablePorts_.end() ? nullptr : &it->second);
}

std::span<const NodeId> ModuleIndex::rootDataWithIndex(uint32_t k) const {
  auto it = rootDataByIndex_.find(k);
  return spanOf(it == rootDataByIndex_.end() ? nullptr : &it->second);
}

const char *sourceKindName(SourceKind k) {
  switch (k) {
  case SourceKind::Ordinary:
    return "ordinary";
  case SourceKind::UserInput:
    return "user input";
  case SourceKind::UnnamedUserInput:
    return "user input without index";
  case SourceKind::Variable:
    return "variable";
  case SourceKind::VariableRef:
    return "variable reference";
  case SourceKind::Weight:
    return "weight";
  case SourceKind::ControlFlow:
    return "control flow";
  case SourceKind::None:
    return "none";
  }
  return "?";
}

SourceTrace traceSource(const Module &m, const ModuleIndex &index, GraphId g, OutPort start,
                        size_t maxSteps) {
  SourceTrace t;
  GraphId gid = g;
  OutPort port = start;
  auto fail = [&](std::string why) {
    t.kind = SourceKind::None;
    t.failure = std::move(why);
    return t;
  };
  for (size_t step = 0; step < maxSteps; ++step) {
    const Graph &graph = m.graph(gid);
    if (port.node >= graph.capacity() || !graph.node(port.node).alive)
      return fail("a link names a removed node");
    const Node &n = graph.node(port.node);
    t.steps.push_back({gid, port});
    OpKind kind = opKind(n);
    // Only output 0 of a Data, Variable or weight node is the input, the
    // variable or the weight: any other output is a buffer of its own that
    // nothing writes, which keeps what is written into it between runs
    // (the memory plan; found by the generator's coverage, issue 21).
    if ((kind == OpKind::DataSource || kind == OpKind::Variable || kind == OpKind::Weight) &&
        port.index != 0)
      return fail("output " + std::to_string(port.index) + " of " + n.name +
                  " is a buffer of its own, not the node's input, variable or weight");
    switch (kind) {
    case OpKind::DataSource: {
      if (isRootGraph(m, gid)) {
        if (auto k = nonNegativeIndex(n, "index")) {
          t.kind = SourceKind::UserInput;
          t.userInput = *k;
        } else {
          t.kind = SourceKind::UnnamedUserInput;
        }
        return t;
      }
      auto p = nonNegativeIndex(n, "_parent_node_index");
      if (!p)
        return fail("subgraph Data " + n.name + " has no _parent_node_index");
      GraphId parentGraph = graph.parentGraph;
      NodeId parent = graph.parentNode;
      if (parentGraph == kNoGraph || parent == kNoNode)
        return fail("subgraph " + graph.name + " has no parent node");
      const Node &pn = m.graph(parentGraph).node(parent);
      if (isControlFlow(pn)) {
        t.kind = SourceKind::ControlFlow;
        t.controlFlow = {parentGraph, parent};
        return t;
      }
      if (*p >= pn.inputs.size() || !pn.inputs[*p])
        return fail("input " + std::to_string(*p) + " of " + pn.name + " is not connected");
      gid = parentGraph;
      port = *pn.inputs[*p];
      continue;
    }
    case OpKind::Variable:
      t.kind = SourceKind::Variable;
      return t;
    case OpKind::Weight:
      t.kind = SourceKind::Weight;
      return t;
    default:
      break;
    }
    if (refVarSrcName(n, port.index)) {
      t.kind = SourceKind::VariableRef;
      return t;
    }
    // A ref or view output shares its input's buffer even on a node that
    // holds subgraphs: the memory plan binds it before a call's or a
    // branch's result (semantics.md §1; found by libFuzzer, issue 21).
    if (auto in = aliasedInput(n, port.index)) {
      if (refInput(n, port.index))
        t.refOnPath = true;
      if (!n.inputs[*in])
        return fail("input " + std::to_string(*in) + " of " + n.name + " (aliased by its output " +
                    std::to_string(port.index) + ") is not connected");
      port = *n.inputs[*in];
      continue;
    }
    if (kind == OpKind::Call) {
      if (n.subgraphs.empty())
        return fail(n.name + " holds no subgraph");
      GraphId sub = n.subgraphs[0];
      NodeId out = index.netOutput(sub);
      auto slots = index.resultSlots(sub, port.index);
      if (out == kNoNode || slots.size() != 1)
        return fail("subgraph " + m.graph(sub).name + " has no single result for output " +
                    std::to_string(port.index) + " of " + n.name);
      const Node &netOut = m.graph(sub).node(out);
      if (slots[0] >= netOut.inputs.size() || !netOut.inputs[slots[0]])
        return fail("result " + std::to_string(port.index) + " of subgraph " + m.graph(sub).name +
                    " is not connected");
      gid = sub;
      port = *netOut.inputs[slots[0]];
      continue;
    }
    if (isControlFlow(n)) {
      t.kind = SourceKind::ControlFlow;
      t.controlFlow = {gid, port.node};
      return t;
    }
    t.kind = SourceKind::Ordinary;
    return t;
  }
  return fail("the trace is longer than the module");
}

const char *accessClassName(AccessClass c) {
  switch (c) {
  case AccessClass::ReadOnly:
    return "ReadOnly";
  case AccessClass::Writeable:
    return "Writeable";
  case AccessClass::ScopeWriteable:
    return "ScopeWriteable";
  case AccessClass::Invalid:
    return "Invalid";
  }
  return "?";
}

const char *outputClassName(OutputClass c) {
  switch (c) {
  case OutputClass::ReadOnlyConst:
    return "ReadOnlyConst";
  case OutputClass::ReadOnly:
    return "ReadOnly";
  case OutputClass::SoftRead:
    return "SoftRead";
  case OutputClass::Writeable:
    return "Writeable";
  case OutputClass::Invalid:
    return "Invalid";
  }
  return "?";
}

AccessClass combine(AccessClass a, AccessClass b) {
  if (a == AccessClass::Invalid || b == AccessClass::Invalid)
    return AccessClass::Invalid;
  if (a == AccessClass::ReadOnly)
    return b;
  if (b == AccessClass::ReadOnly || a == b)
    return a;
  return AccessClass::Invalid; // Writeable + ScopeWriteable
}

bool writes(AccessClass c) {
  return c != AccessClass::ReadOnly;
}

bool conflicts(OutputClass out, AccessClass in) {
  if (out == OutputClass::Invalid || in == AccessClass::Invalid)
    return true;
  switch (out) {
  case OutputClass::ReadOnlyConst:
    return in != AccessClass::ReadOnly;
  case OutputClass::ReadOnly:
  case OutputClass::Writeable:
    return in == AccessClass::ScopeWriteable;
  case OutputClass::SoftRead:
    return false;
  case OutputClass::Invalid:
    return true;
  }
  return true;
}

AccessClass directAccess(const Node &n, uint32_t input) {
  if (opKind(n) == OpKind::While || isInputMutable(n))
    return AccessClass::ScopeWriteable;
  for (uint32_t k = 0; k < n.numOutputs; ++k)
    if (refInput(n, k) == input)
      return AccessClass::Writeable;
  return AccessClass::ReadOnly;
}

std::vector<SlotRef> consumerSlots(const Module &m, PortRef p) {
  std::vector<SlotRef> out;
  for (InPort c : m.graph(p.graph).consumers(p.port))
    out.push_back({p.graph, c});
  return out;
}

BufferUses exploreUses(const Module &m, const ModuleIndex &index, std::span<const SlotRef> slots,
                       size_t budget, std::vector<SlotRef> *visited, bool whileResultsCopied) {
  BufferUses uses;
  // Most explorations reach a handful of slots: a list searched linearly
  // until it grows, then a set.
  constexpr size_t kSmall = 32;
  std::vector<SlotRef> seenFew;
  std::set<SlotRef> seenMany;
  std::vector<SlotRef> work;
  auto push = [&](SlotRef s) {
    if (seenFew.size() <= kSmall) {
      if (std::find(seenFew.begin(), seenFew.end(), s) != seenFew.end())
        return;
      seenFew.push_back(s);
      if (seenFew.size() > kSmall)
        seenMany.insert(seenFew.begin(), seenFew.end());
    } else if (!seenMany.insert(s).second) {
      return;
    }
    work.push_back(s);
  };
  auto pushConsumers = [&](GraphId g, OutPort p) {
    const Node &n = m.graph(g).node(p.node);
    if (p.index >= n.consumers.size())
      return;
    for (InPort c : n.consumers[p.index])
      push({g, c});
  };
  for (const SlotRef &s : slots)
    push(s);
  size_t count = 0;
  // Depth-first in a fixed order; the result is a set-like summary, so the
  // visiting order does not matter for the answer.
  while (!work.empty()) {
    if (++count > budget) {
      uses.overBudget = true;
      uses.access = AccessClass::Invalid;
      return uses;
    }
    SlotRef s = work.back();
    work.pop_back();
    if (visited)
      visited->push_back(s);
    const Graph &graph = m.graph(s.graph);
    const Node &n = graph.node(s.slot.node);
    uint32_t i = s.slot.index;
    // A node without memory attributes whose op has no ref or view row
    // shares no input with an output, writes an input only by scribbling
    // (its row, or a While) and demands no placement: the questions below
    // then need no attribute lookups.
    const OpInfo &op = lookupOp(n.type);
    const bool plain =
        op.refOutputs.empty() && op.viewOutputs.empty() && !hasMemoryBehaviourAttrs(n);
    OpKind kind = op.kind;
    AccessClass direct = !plain                                     ? directAccess(n, i)
                         : kind == OpKind::While || op.inputMutable ? AccessClass::ScopeWriteable
                                                                    : AccessClass::ReadOnly;
    uses.access = combine(uses.access, direct);
    if (writes(direct)) {
      uses.writers.push_back({s.graph, n.id});
      uses.writerSlots.push_back(s);
    }
    if (!plain && needsContinuousInput(n))
      uses.continuousUsers.push_back({s.graph, n.id});
    if (kind == OpKind::NetOutput) {
      if (isRootGraph(m, s.graph)) {
        uses.rootOutputs.insert(i);
      } else if (graph.parentNode != kNoNode) {
        // A subgraph result: the holder's output j is (or, for If/Case, may
        // be) this memory.
        if (auto j = nonNegativeIndex(n, Node::portKey(false, i, "_parent_node_index"))) {
          const Node &parent = m.graph(graph.parentGraph).node(graph.parentNode);
          if (*j < parent.numOutputs && !parent.consumers[*j].empty() &&
              !(whileResultsCopied && opKind(parent) == OpKind::While)) {
            uses.passedOnBy.insert({graph.parentGraph, parent.id});
            pushConsumers(graph.parentGraph, {parent.id, *j});
          }
        }
      }
      continue;
    }
    for (uint32_t k = 0; k < n.numOutputs && !plain; ++k)
      if (aliasedInput(n, k) == i && !n.consumers[k].empty()) {
        uses.passedOnBy.insert({s.graph, n.id});
        pushConsumers(s.graph, {n.id, k});
      }
    if (kind == OpKind::While && i < n.numOutputs && !n.consumers[i].empty()) {
      uses.passedOnBy.insert({s.graph, n.id});
      pushConsumers(s.graph, {n.id, i});
    }
    if (kind == OpKind::Call || kind == OpKind::If || kind == OpKind::Case ||
        kind == OpKind::While) // holdsSubgraphs
      for (GraphId sub : n.subgraphs)
        for (NodeId d : index.dataForParentInput(sub, i)) {
          const Node &data = m.graph(sub).node(d);
          for (uint32_t k = 0; k < data.numOutputs; ++k)
            pushConsumers(sub, {d, k});
        }
  }
  return uses;
}

bool passesMemoryOn(const Module &m, const ModuleIndex &index, GraphId g, NodeId n, uint32_t input,
                    size_t budget) {
  const Node &node = m.graph(g).node(n);
  for (uint32_t k = 0; k < node.numOutputs; ++k)
    if (aliasedInput(node, k) == input && !node.consumers[k].empty())
      return true;
  if (opKind(node) == OpKind::While && input < node.numOutputs && !node.consumers[input].empty())
    return true;
  if (!holdsSubgraphs(node))
    return false;
  SlotRef start{g, {n, input}};
  BufferUses uses = exploreUses(m, index, std::span<const SlotRef>(&start, 1), budget);
  return uses.overBudget || uses.passedOnBy.count({g, n}) > 0;
}

SourceWrites::Answer SourceWrites::of(const SourceTrace &trace) {
  const TraceStep &src = trace.steps.back();
  const bool userInput = trace.kind == SourceKind::UserInput;
  PortRef key = userInput ? PortRef{kNoGraph, OutPort{kNoNode, trace.userInput}}
                          : PortRef{src.graph, src.port};
  auto [it, fresh] = cache_.try_emplace(key, Answer::NotWritten);
  if (!fresh)
    return it->second;
  std::vector<SlotRef> slots;
  if (userInput) {
    for (NodeId d : index_.rootDataWithIndex(trace.userInput))
      for (uint32_t k = 0; k < m_.root().node(d).numOutputs; ++k)
        for (const SlotRef &s : consumerSlots(m_, PortRef{0, OutPort{d, k}}))
          slots.push_back(s);
  } else {
    slots = consumerSlots(m_, key);
  }
  BufferUses uses = exploreUses(m_, index_, slots, budget_);
  it->second = uses.overBudget       ? Answer::OverBudget
               : writes(uses.access) ? Answer::Written
                                     : Answer::NotWritten;
  return it->second;
}

} // namespace graphvet
