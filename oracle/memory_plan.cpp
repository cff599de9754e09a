// Builds the memory plan of semantics.md §1 by resolving every output port to
// its buffer, following views, ref outputs and subgraph boundaries. Ports are
// resolved in a fixed order (canonical graph order, node id, output index) so
// buffer ids and labels are deterministic.
#include "oracle/memory_plan.h"

#include "ir/op_library.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace graphvet::oracle {

std::string_view bufferKindName(BufferKind k) {
  switch (k) {
  case BufferKind::UserInput:
    return "user-input";
  case BufferKind::CallerMemory:
    return "caller-memory";
  case BufferKind::Variable:
    return "variable";
  case BufferKind::Weight:
    return "weight";
  case BufferKind::Fresh:
    return "fresh";
  }
  return "?";
}

class PlanBuilder {
public:
  PlanBuilder(const Module &m, MemoryPlan &plan) : m_(m), p_(plan) {}

  void run() {
    // Types are the IR's (ir/types.h), like the op library: a fact of the
    // graph, not of any pass. Errors were the verifier's to report.
    Diagnostics ignored;
    p_.types_ = inferModuleTypes(m_, ignored);
    assignPortIds();
    state_.assign(p_.ports_.size(), kUnvisited);
    for (PortId id = 0; id < p_.ports_.size(); ++id)
      resolve(id);
    typeBuffers();
  }

private:
  enum : uint8_t { kUnvisited, kInProgress, kDone };
  const Module &m_;
  MemoryPlan &p_;
  std::vector<uint8_t> state_;
  std::map<int64_t, BufferId> inputs_;
  std::map<std::string, BufferId> caller_, vars_, weights_;

  void assignPortIds() {
    p_.portBase_.assign(m_.numGraphs(), {});
    p_.graphNames_.assign(m_.numGraphs(), {});
    p_.nodeNames_.assign(m_.numGraphs(), {});
    for (GraphId g : m_.canonicalGraphOrder()) {
      const Graph &graph = m_.graph(g);
      p_.graphNames_[g] = graph.name;
      p_.portBase_[g].assign(graph.capacity(), kNoPort);
      p_.nodeNames_[g].assign(graph.capacity(), {});
      for (NodeId n : graph.liveNodes()) {
        const Node &node = graph.node(n);
        p_.nodeNames_[g][n] = node.name;
        p_.portBase_[g][n] = static_cast<PortId>(p_.ports_.size());
        for (uint32_t k = 0; k < node.numOutputs; ++k) {
          PortPlan pp;
          pp.graph = g;
          pp.node = n;
          pp.index = k;
          p_.ports_.push_back(std::move(pp));
        }
      }
    }
  }

  std::string portName(const PortPlan &pp) const {
    return fmt::format("{}:{}", p_.qualifiedName(pp.graph, pp.node), pp.index);
  }

  void error(std::string msg) { p_.errors_.push_back(std::move(msg)); }

  BufferId newBuffer(BufferKind kind, std::string label, std::string key, uint32_t size,
                     int64_t inputIndex = -1) {
    BufferInfo b;
    b.kind = kind;
    b.label = std::move(label);
    b.key = std::move(key);
    b.size = size;
    b.inputIndex = inputIndex;
    p_.buffers_.push_back(std::move(b));
    return static_cast<BufferId>(p_.buffers_.size() - 1);
  }

  /// Each buffer takes the type of the first port (in port order) bound to
  /// it as its owner; a Const's literal fills its weight buffer.
  void typeBuffers() {
    std::vector<bool> typed(p_.buffers_.size(), false);
    for (PortId id = 0; id < p_.ports_.size(); ++id) {
      const PortPlan &pp = p_.ports_[id];
      if (pp.rule != BindRule::Own || pp.own == kNoBuffer || typed[pp.own])
        continue;
      typed[pp.own] = true;
      BufferInfo &b = p_.buffers_[pp.own];
      b.type = p_.portType(id);
      if (b.type.byteSize() != b.size) // a description the types could not follow
        b.type = TensorType{DType::U8, {static_cast<int64_t>(b.size)}};
      const Node &n = m_.graph(pp.graph).node(pp.node);
      if (b.kind == BufferKind::Weight && pp.index == 0)
        if (const Tensor *v = attrTensor(n, "value"); v && v->bytes().size() == b.size)
          b.literal = v;
    }
  }

  uint32_t sizeOf(const PortPlan &pp) {
    const Node &n = m_.graph(pp.graph).node(pp.node);
    if (const TensorType *t = p_.types_.of(pp.graph, OutPort{pp.node, pp.index});
        t && t->checkedElements() && t->byteSize() <= kMaxBufferBytes)
      return static_cast<uint32_t>(t->byteSize());
    auto bytes = outputBytes(n, pp.index);
    if (!bytes) {
      error(
          fmt::format("{}: malformed or oversized tensor description (dtype/shape)", portName(pp)));
      return 0;
    }
    return static_cast<uint32_t>(*bytes);
  }

  BufferId keyed(std::map<std::string, BufferId> &table, BufferKind kind, const std::string &prefix,
                 const std::string &key, uint32_t size, bool declares = true) {
    auto it = table.find(key);
    if (it != table.end()) {
      BufferInfo &b = p_.buffers_[it->second];
      b.size = std::max(b.size, size);
      b.declared = b.declared || declares;
      return it->second;
    }
    BufferId id = newBuffer(kind, prefix + key, key, size);
    p_.buffers_[id].declared = declares;
    table.emplace(key, id);
    return id;
  }

  void bindOwn(PortPlan &pp, BufferId b, PortWrite w) {
    pp.rule = BindRule::Own;
    pp.own = b;
    pp.write = w;
  }

  void bindFresh(PortPlan &pp, PortWrite w) {
    uint32_t size = sizeOf(pp);
    bindOwn(pp, newBuffer(BufferKind::Fresh, "fresh:" + portName(pp), {}, size), w);
  }

  /// Binds `pp` as an alias of input `i` of its node, or fresh (reading zero
  /// bytes) when that input is unconnected.
  void bindToInput(PortId self, const Node &node, uint32_t i, PortWrite w) {
    PortPlan &pp = p_.ports_[self];
    if (i >= node.inputs.size() || !node.inputs[i]) {
      bindFresh(pp, w == PortWrite::Ref ? PortWrite::Compute : PortWrite::None);
      return;
    }
    PortId src = p_.portId(pp.graph, *node.inputs[i]);
    if (src == kNoPort) {
      error(fmt::format("{}: input {} reads a port that does not exist", portName(pp), i));
      bindFresh(pp, PortWrite::None);
      return;
    }
    pp.rule = BindRule::Alias;
    pp.aliasOf = src;
    pp.write = w;
    pp.refInput = i;
  }

  /// The NetOutput of a subgraph and the input carrying `_parent_node_index = j`.
  std::optional<std::pair<NodeId, uint32_t>> subgraphResult(GraphId sub, uint32_t j) {
    const Graph &g = m_.graph(sub);
    NodeId found = kNoNode;
    for (NodeId n : g.liveNodes())
      if (opKind(g.node(n)) == OpKind::NetOutput) {
        if (found != kNoNode) {
          error(fmt::format("subgraph {} has more than one NetOutput", g.name));
          break;
        }
        found = n;
      }
    if (found == kNoNode)
      return std::nullopt;
    const Node &out = g.node(found);
    for (uint32_t m = 0; m < out.inputs.size(); ++m) {
      auto idx = out.portIntAttr(false, m, "_parent_node_index");
      if (idx && *idx == static_cast<int64_t>(j))
        return std::make_pair(found, m);
    }
    return std::nullopt;
  }

  void bindSubgraphData(PortId self, const Node &node) {
    PortPlan &pp = p_.ports_[self];
    const Graph &g = m_.graph(pp.graph);
    auto idx = node.intAttr("_parent_node_index");
    if (g.parentGraph == kNoGraph || g.parentNode == kNoNode) {
      error(fmt::format("{}: subgraph {} has no parent node", portName(pp), g.name));
      bindFresh(pp, PortWrite::None);
      return;
    }
    const Node &parent = m_.graph(g.parentGraph).node(g.parentNode);
    if (!idx || *idx < 0 || *idx >= static_cast<int64_t>(parent.inputs.size())) {
      error(fmt::format("{}: _parent_node_index missing or out of range for parent {}",
                        portName(pp), parent.name));
      bindFresh(pp, PortWrite::None);
      return;
    }
    auto i = static_cast<uint32_t>(*idx);
    if (!parent.inputs[i]) {
      bindFresh(pp, PortWrite::None); // the parent's slot is unconnected: zero bytes
      return;
    }
    PortId src = p_.portId(g.parentGraph, *parent.inputs[i]);
    if (src == kNoPort) {
      bindFresh(pp, PortWrite::None);
      return;
    }
    pp.rule = BindRule::Alias;
    pp.aliasOf = src;
  }

  void bindCallOutput(PortId self, const Node &node) {
    PortPlan &pp = p_.ports_[self];
    if (node.subgraphs.size() != 1) {
      error(fmt::format("{}: {} must hold exactly one subgraph", portName(pp), node.type));
      bindFresh(pp, PortWrite::None);
      return;
    }
    GraphId sub = node.subgraphs[0];
    auto res = subgraphResult(sub, pp.index);
    if (!res) {
      bindFresh(pp, PortWrite::None);
      return;
    }
    const Node &out = m_.graph(sub).node(res->first);
    if (!out.inputs[res->second]) {
      bindFresh(pp, PortWrite::None);
      return;
    }
    PortId src = p_.portId(sub, *out.inputs[res->second]);
    if (src == kNoPort) {
      bindFresh(pp, PortWrite::None);
      return;
    }
    pp.rule = BindRule::Alias;
    pp.aliasOf = src;
  }

  void bindBranchOutput(PortId self, const Node &node) {
    PortPlan &pp = p_.ports_[self];
    pp.rule = BindRule::Dynamic;
    pp.write = PortWrite::None;
    bool needFallback = node.subgraphs.empty();
    for (GraphId sub : node.subgraphs) {
      auto res = subgraphResult(sub, pp.index);
      const Node *out = res ? &m_.graph(sub).node(res->first) : nullptr;
      if (!out || !out->inputs[res->second] || p_.portId(sub, *out->inputs[res->second]) == kNoPort)
        needFallback = true;
    }
    if (needFallback) {
      uint32_t size = sizeOf(pp);
      // Re-fetch: sizeOf may not reallocate ports_, but newBuffer is safe.
      p_.ports_[self].own =
          newBuffer(BufferKind::Fresh, "fresh:" + portName(p_.ports_[self]), {}, size);
    }
  }

  void bindPort(PortId self) {
    PortPlan &pp = p_.ports_[self];
    const Graph &g = m_.graph(pp.graph);
    const Node &node = g.node(pp.node);
    const uint32_t k = pp.index;
    const bool isRoot = pp.graph == 0;
    switch (opKind(node)) {
    case OpKind::DataSource:
      if (k != 0)
        return bindFresh(pp, PortWrite::None);
      if (isRoot) {
        uint32_t size = sizeOf(pp);
        const AttrValue *idx = node.attr("index");
        if (idx && idx->isInt() && idx->asInt() >= 0) {
          int64_t i = idx->asInt();
          auto it = inputs_.find(i);
          BufferId b;
          if (it == inputs_.end()) {
            b = newBuffer(BufferKind::UserInput, fmt::format("input{}", i), std::to_string(i), size,
                          i);
            inputs_.emplace(i, b);
          } else {
            b = it->second;
            p_.buffers_[b].size = std::max(p_.buffers_[b].size, size);
          }
          return bindOwn(p_.ports_[self], b, PortWrite::None);
        }
        if (idx)
          error(fmt::format("{}: `index` must be a non-negative integer", node.name));
        return bindOwn(p_.ports_[self],
                       keyed(caller_, BufferKind::CallerMemory, "caller:", node.name, size),
                       PortWrite::None);
      }
      return bindSubgraphData(self, node);
    case OpKind::Variable:
      if (k != 0)
        return bindFresh(pp, PortWrite::None);
      return bindOwn(pp, keyed(vars_, BufferKind::Variable, "var:", node.name, sizeOf(pp)),
                     PortWrite::None);
    case OpKind::Weight: {
      if (k != 0)
        return bindFresh(pp, PortWrite::None);
      std::string q = p_.qualifiedName(pp.graph, pp.node);
      return bindOwn(pp, keyed(weights_, BufferKind::Weight, "weight:", q, sizeOf(pp)),
                     PortWrite::None);
    }
    default:
      break;
    }
    // The output lives in variable V's buffer. §2 lists what a node writes
    // (fresh outputs, ref inputs, scribbles): this binding is none of them,
    // so the node writes nothing here; its output is the variable's content.
    if (const std::string *var = refVarSrcName(node, k))
      return bindOwn(pp, keyed(vars_, BufferKind::Variable, "var:", *var, sizeOf(pp), false),
                     PortWrite::None);
    OpKind kind = opKind(node);
    if (kind == OpKind::Copy && k == 0)
      return bindFresh(pp, PortWrite::Copy);
    if (auto i = refInput(node, k))
      return bindToInput(self, node, *i, PortWrite::Ref);
    if (auto i = viewInput(node, k))
      return bindToInput(self, node, *i, PortWrite::None);
    switch (kind) {
    case OpKind::Call:
      return bindCallOutput(self, node);
    case OpKind::If:
    case OpKind::Case:
      return bindBranchOutput(self, node);
    case OpKind::While:
      return bindToInput(self, node, k, PortWrite::None);
    case OpKind::NetOutput:
      return bindFresh(pp, PortWrite::None);
    default:
      return bindFresh(pp, PortWrite::Compute);
    }
  }

  static void unite(std::vector<BufferId> &into, const std::vector<BufferId> &from) {
    std::vector<BufferId> merged;
    merged.reserve(into.size() + from.size());
    std::set_union(into.begin(), into.end(), from.begin(), from.end(), std::back_inserter(merged));
    into.swap(merged);
  }

  /// The branch results an If/Case output may take (ports in the branches).
  std::vector<PortId> branchResults(const PortPlan &pp) {
    std::vector<PortId> out;
    const Node &node = m_.graph(pp.graph).node(pp.node);
    for (GraphId sub : node.subgraphs) {
      auto res = subgraphResult(sub, pp.index);
      if (!res)
        continue;
      const Node &netOutput = m_.graph(sub).node(res->first);
      if (!netOutput.inputs[res->second])
        continue;
      PortId src = p_.portId(sub, *netOutput.inputs[res->second]);
      if (src != kNoPort)
        out.push_back(src);
    }
    return out;
  }

  /// Ports whose binding must be final before this one's.
  std::vector<PortId> dependencies(PortId self) {
    const PortPlan &pp = p_.ports_[self];
    if (pp.rule == BindRule::Alias)
      return {pp.aliasOf};
    if (pp.rule == BindRule::Dynamic)
      return branchResults(pp);
    return {};
  }

  /// A cycle of aliases (only possible in a cyclic or malformed module):
  /// break it with a fresh buffer so the analysis can go on.
  void breakCycle(PortId self) {
    PortPlan &pp = p_.ports_[self];
    error(fmt::format("{}: its buffer binding is cyclic", portName(pp)));
    pp.rule = BindRule::Own;
    pp.aliasOf = kNoPort;
    pp.own = newBuffer(BufferKind::Fresh, "fresh:" + portName(pp), {}, 0);
    pp.root = self;
    pp.candidates = {pp.own};
  }

  /// Root and candidates, once every dependency is final.
  void finish(PortId self) {
    PortPlan &pp = p_.ports_[self];
    switch (pp.rule) {
    case BindRule::Own:
      pp.root = self;
      pp.candidates = {pp.own};
      break;
    case BindRule::Alias:
      pp.root = p_.ports_[pp.aliasOf].root;
      pp.candidates = p_.ports_[pp.aliasOf].candidates;
      break;
    case BindRule::Dynamic: {
      std::vector<BufferId> cands;
      if (pp.own != kNoBuffer)
        cands.push_back(pp.own);
      for (PortId src : branchResults(pp))
        unite(cands, p_.ports_[src].candidates);
      pp.root = self;
      pp.candidates = std::move(cands);
      break;
    }
    }
  }

  /// Depth-first with an explicit stack: alias chains can be as long as the
  /// graph (a chain of views), far deeper than the call stack allows. The
  /// ports in progress are exactly the current path, so meeting one again
  /// is a cycle.
  void resolve(PortId start) {
    std::vector<PortId> stack{start};
    while (!stack.empty()) {
      PortId self = stack.back();
      if (state_[self] == kDone) {
        stack.pop_back();
        continue;
      }
      if (state_[self] == kUnvisited) {
        state_[self] = kInProgress;
        bindPort(self);
        bool cyclic = false;
        for (PortId d : dependencies(self)) {
          if (state_[d] == kInProgress)
            cyclic = true;
          else if (state_[d] == kUnvisited)
            stack.push_back(d);
        }
        if (cyclic) {
          breakCycle(self);
          state_[self] = kDone;
          stack.pop_back();
        }
        continue;
      }
      // Back at a port in progress: everything it depends on is final.
      finish(self);
      state_[self] = kDone;
      stack.pop_back();
    }
  }
};

MemoryPlan MemoryPlan::build(const Module &m) {
  MemoryPlan plan;
  PlanBuilder(m, plan).run();
  return plan;
}

const TensorType &MemoryPlan::portType(PortId p) const {
  const PortPlan &pp = ports_[p];
  const TensorType *t = types_.of(pp.graph, OutPort{pp.node, pp.index});
  return t ? *t : defaultType_;
}

PortId MemoryPlan::portId(GraphId g, OutPort p) const {
  if (g >= portBase_.size() || p.node >= portBase_[g].size())
    return kNoPort;
  PortId base = portBase_[g][p.node];
  if (base == kNoPort)
    return kNoPort;
  PortId id = base + p.index;
  if (id >= ports_.size() || ports_[id].graph != g || ports_[id].node != p.node)
    return kNoPort;
  return id;
}

std::string MemoryPlan::qualifiedName(GraphId g, NodeId n) const {
  if (g >= nodeNames_.size() || n >= nodeNames_[g].size())
    return "?";
  const std::string &name = nodeNames_[g][n];
  if (g == 0)
    return name;
  return graphNames_[g] + "/" + name;
}

std::string MemoryPlan::bufferLabel(GraphId g, OutPort p) const {
  PortId id = portId(g, p);
  if (id == kNoPort)
    return {};
  const PortPlan &pp = ports_[id];
  const PortPlan &root = ports_[pp.root];
  if (root.rule == BindRule::Own)
    return buffers_[root.own].label;
  std::string out = "{";
  for (size_t i = 0; i < pp.candidates.size(); ++i) {
    if (i)
      out += "|";
    out += buffers_[pp.candidates[i]].label;
  }
  return out + "}";
}

BufferId MemoryPlan::findBuffer(BufferKind kind, const std::string &key) const {
  for (BufferId b = 0; b < buffers_.size(); ++b)
    if (buffers_[b].kind == kind && buffers_[b].key == key)
      return b;
  return kNoBuffer;
}

std::string MemoryPlan::describe(const Module &m) const {
  std::string out = "memory plan:\n  outputs:\n";
  for (PortId id = 0; id < ports_.size(); ++id) {
    const PortPlan &pp = ports_[id];
    const Node &node = m.graph(pp.graph).node(pp.node);
    std::string how;
    switch (pp.write) {
    case PortWrite::None:
      how = pp.rule == BindRule::Dynamic ? "bound by the branch taken"
            : pp.rule == BindRule::Alias ? "shares, no write"
                                         : "no write";
      break;
    case PortWrite::Compute:
      how = "computed";
      break;
    case PortWrite::Copy:
      how = "copy of input 0";
      break;
    case PortWrite::Ref:
      how = fmt::format("writes input {} in place", pp.refInput);
      break;
    }
    if (pp.rule == BindRule::Alias) {
      const PortPlan &src = ports_[pp.aliasOf];
      how += fmt::format(", alias of {}:{}", qualifiedName(src.graph, src.node), src.index);
    }
    out += fmt::format("    {}:{} ({}) -> {}  [{}]\n", qualifiedName(pp.graph, pp.node), pp.index,
                       node.type, bufferLabel(pp.graph, {pp.node, pp.index}), how);
  }
  out += "  buffers:\n";
  for (const BufferInfo &b : buffers_)
    out += fmt::format("    {}  {}, {} bytes{}\n", b.label, bufferKindName(b.kind), b.size,
                       b.declared ? "" : " (no Variable node declares it)");
  for (const std::string &e : errors_)
    out += "  error: " + e + "\n";
  return out;
}

} // namespace graphvet::oracle
