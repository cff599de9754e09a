// Structure-aware graph mutations and the validity filter behind the
// libFuzzer custom mutator of tensor_move_delete_fuzzer.
#include "fuzz/graph_mutator.h"

#include "ir/op_library.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"

#include <algorithm>
#include <set>

namespace graphvet::fuzz {

uint64_t MutationRng::next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint32_t MutationRng::below(uint32_t n) {
  if (n == 0)
    return 0;
  // Multiply-shift: unbiased enough for mutation choices, and portable.
  return static_cast<uint32_t>(((next() >> 32) * static_cast<uint64_t>(n)) >> 32);
}

std::string_view mutationName(MutationKind kind) {
  switch (kind) {
  case MutationKind::AddNode:
    return "add-node";
  case MutationKind::RemoveNode:
    return "remove-node";
  case MutationKind::RewireInput:
    return "rewire-input";
  case MutationKind::AddControlEdge:
    return "add-control-edge";
  case MutationKind::RemoveControlEdge:
    return "remove-control-edge";
  case MutationKind::InsertTensorMove:
    return "insert-tensor-move";
  case MutationKind::RemoveTensorMove:
    return "remove-tensor-move";
  case MutationKind::FlipMemoryAttr:
    return "flip-memory-attr";
  case MutationKind::WrapInSubgraph:
    return "wrap-in-subgraph";
  case MutationKind::ChangeOption:
    return "change-option";
  }
  return "?";
}

std::string_view validityName(Validity v) {
  switch (v) {
  case Validity::Valid:
    return "valid";
  case Validity::Unparsable:
    return "unparsable";
  case Validity::VerifierError:
    return "verifier-error";
  case Validity::TooLarge:
    return "too-large";
  case Validity::NotSound:
    return "not-sound";
  }
  return "?";
}

namespace {

constexpr const char *kOutputReuseKey = "ge.exec.outputReuseInputMemIndexes";
constexpr const char *kInputReuseKey = "ge.exec.inputReuseMemIndexes";

bool isRoot(GraphId g) {
  return g == 0;
}

bool isBoundary(const Node &n) {
  OpKind k = opKind(n);
  return k == OpKind::DataSource || k == OpKind::NetOutput;
}

/// Live graphs reachable from the root, in canonical (deterministic) order.
std::vector<GraphId> liveGraphs(const Module &m) {
  return m.canonicalGraphOrder();
}

GraphId pickGraph(const Module &m, MutationRng &rng) {
  std::vector<GraphId> gs = liveGraphs(m);
  // Favour the root: most of the pass's decisions happen there.
  if (gs.size() == 1 || rng.chance(1, 2))
    return 0;
  return rng.pick(gs);
}

std::string uniqueNodeName(const Graph &g, const std::string &prefix) {
  // Bounded: at most capacity()+1 names can be taken.
  for (size_t i = 0; i <= g.capacity() + 1; ++i) {
    std::string name = prefix + std::to_string(i);
    if (g.find(name) == kNoNode)
      return name;
  }
  return prefix + "_" + std::to_string(g.capacity() + 2);
}

std::string uniqueGraphName(const Module &m, const std::string &prefix) {
  for (size_t i = 0; i <= m.numGraphs() + 1; ++i) {
    std::string name = prefix + std::to_string(i);
    bool taken = false;
    for (size_t g = 0; g < m.numGraphs(); ++g)
      taken = taken || m.graph(static_cast<GraphId>(g)).name == name;
    if (!taken)
      return name;
  }
  return prefix + "_" + std::to_string(m.numGraphs() + 2);
}

/// Every output port of a live node of `g`, in id order.
std::vector<OutPort> outputPorts(const Graph &g) {
  std::vector<OutPort> ports;
  for (NodeId id : g.liveNodes())
    for (uint32_t k = 0; k < g.node(id).numOutputs; ++k)
      ports.push_back({id, k});
  return ports;
}

/// Output ports whose node is not `x` and cannot be reached from `x`: feeding
/// one of them into `x` keeps the graph acyclic.
std::vector<OutPort> portsUsableBy(const Graph &g, NodeId x) {
  std::vector<OutPort> ports;
  for (OutPort p : outputPorts(g))
    if (p.node != x && !g.reaches(x, p.node))
      ports.push_back(p);
  return ports;
}

NodeId rootNetOutput(const Graph &g) {
  std::vector<NodeId> outs = g.nodesOfType("NetOutput");
  return outs.empty() ? kNoNode : outs.front();
}

/// Inputs the node writes: ref inputs, or every input of a scribbling node.
std::vector<uint32_t> writtenInputs(const Node &n) {
  if (isInputMutable(n)) {
    std::vector<uint32_t> all(n.inputs.size());
    for (uint32_t i = 0; i < all.size(); ++i)
      all[i] = i;
    return all;
  }
  return refWrittenInputs(n);
}

/// A writer that is unordered with another reader of the buffer it writes
/// makes the graph racy and the candidate useless; order every such reader
/// before the writer (a control edge reader -> writer never closes a cycle
/// when the writer cannot reach the reader). Aliases through views are left
/// to the oracle's filter.
void orderReadersBeforeWriter(Graph &g, NodeId writer) {
  for (uint32_t i : writtenInputs(g.node(writer))) {
    const auto &src = g.node(writer).inputs[i];
    if (!src)
      continue;
    std::vector<InPort> readers = g.consumers(*src);
    for (InPort r : readers)
      if (r.node != writer && !g.reaches(writer, r.node) && !g.reaches(r.node, writer))
        g.addCtrlEdge(r.node, writer);
  }
}

/// Connects every control predecessor of `n` to every control successor, so
/// removing `n` loses no ordering.
void bridgeControlEdges(Graph &g, NodeId n) {
  std::vector<NodeId> preds = g.node(n).ctrlIn;
  std::vector<NodeId> succs = g.node(n).ctrlOut;
  for (const auto &src : g.node(n).inputs)
    if (src)
      preds.push_back(src->node);
  for (NodeId p : preds)
    for (NodeId s : succs)
      if (p != s && p != n && s != n)
        g.addCtrlEdge(p, s);
}

// ---------------------------------------------------------------------------
// The mutations.

struct OpRecipe {
  const char *type;
  const char *prefix;
  uint32_t minInputs, maxInputs;
};

constexpr OpRecipe kRecipes[] = {
    {"ReLU", "relu", 1, 1},
    {"AddD", "add", 2, 2},
    {"MulD", "mul", 2, 2},
    {"CastD", "cast", 1, 1},
    {"ConcatD", "concat", 2, 3},
    {"ScatterUpdate", "assign", 2, 2},
    {"ScatterAdd", "assign_add", 2, 2},
    {"ScatterUpdate", "scatter", 3, 3},
    {"Reshape", "reshape", 1, 1},
    {"HcomAllReduce", "allreduce", 1, 1},
    {"Identity", "identity", 1, 1},
    {"TensorMove", "tm", 1, 1},
    {"Const", "const", 0, 0},
    {"Variable", "var", 0, 0},
    {"Data", "data", 0, 0},
};

int64_t nextUserInputIndex(const Graph &root) {
  int64_t next = 0;
  for (NodeId id : root.nodesOfType("Data"))
    if (auto idx = root.node(id).intAttr("index"))
      next = std::max(next, *idx + 1);
  return next;
}

bool addNode(Module &m, MutationRng &rng, const MutationLimits &limits) {
  GraphId gid = pickGraph(m, rng);
  Graph &g = m.graph(gid);
  if (g.numLiveNodes() >= limits.maxNodesPerGraph)
    return false;
  const OpRecipe &r = kRecipes[rng.below(std::size(kRecipes))];
  std::string type = r.type;
  if (type == "Data" && !isRoot(gid))
    return false; // a subgraph Data is a parent input: see wrapInSubgraph
  std::vector<OutPort> ports = outputPorts(g);
  uint32_t numInputs = r.minInputs + rng.below(r.maxInputs - r.minInputs + 1);
  if (numInputs > 0 && ports.empty())
    return false;
  std::vector<std::optional<OutPort>> inputs;
  for (uint32_t i = 0; i < numInputs; ++i)
    inputs.push_back(rng.pick(ports));
  NodeId id = g.addNode(uniqueNodeName(g, r.prefix), type, inputs);
  Node &n = g.node(id);
  if (type == "Data")
    n.attrs["index"] = AttrValue::ofInt(nextUserInputIndex(g));
  if (type == "ConcatD" && rng.chance(1, 3))
    n.attrs["continuous_input"] = AttrValue::ofBool(true);

  // Make the new value matter: a new graph output, or a replacement input of
  // a node that cannot reach the new node (no cycle).
  uint32_t how = rng.below(4);
  NodeId out = rootNetOutput(g);
  if (how == 0 && isRoot(gid) && out != kNoNode &&
      g.node(out).inputs.size() < limits.maxInputsPerNode) {
    g.appendInput(out, OutPort{id, 0});
  } else if (how <= 2) {
    std::vector<InPort> slots;
    for (NodeId x : g.liveNodes()) {
      if (x == id || opKind(g.node(x)) == OpKind::DataSource)
        continue;
      bool cyclic = false;
      for (const auto &src : inputs)
        cyclic = cyclic || src->node == x || g.reaches(x, src->node);
      if (cyclic)
        continue;
      for (uint32_t i = 0; i < g.node(x).inputs.size(); ++i)
        slots.push_back({x, i});
    }
    if (!slots.empty())
      g.setInput(rng.pick(slots), OutPort{id, 0});
  }
  orderReadersBeforeWriter(g, id);
  return true;
}

bool removeNode(Module &m, MutationRng &rng, const MutationLimits &) {
  GraphId gid = pickGraph(m, rng);
  Graph &g = m.graph(gid);
  std::vector<NodeId> candidates;
  for (NodeId id : g.liveNodes())
    if (!isBoundary(g.node(id)))
      candidates.push_back(id);
  if (candidates.empty())
    return false;
  NodeId victim = rng.pick(candidates);
  // Consumers of each output read what the output aliased, else input 0,
  // else nothing: the graph stays connected where it can.
  const Node &n = g.node(victim);
  for (uint32_t k = 0; k < n.numOutputs; ++k) {
    std::optional<OutPort> replacement;
    if (auto a = aliasedInput(n, k))
      replacement = n.inputs[*a];
    else if (!n.inputs.empty())
      replacement = n.inputs[0];
    std::vector<InPort> consumers = g.consumers({victim, k});
    for (InPort c : consumers)
      g.setInput(c, replacement);
  }
  bridgeControlEdges(g, victim);
  std::vector<GraphId> subs = g.node(victim).subgraphs;
  g.node(victim).subgraphs.clear();
  g.removeNode(victim);
  for (GraphId s : subs)
    m.removeGraph(s);
  return true;
}

bool rewireInput(Module &m, MutationRng &rng, const MutationLimits &limits) {
  GraphId gid = pickGraph(m, rng);
  Graph &g = m.graph(gid);
  std::vector<NodeId> candidates;
  for (NodeId id : g.liveNodes())
    if (!g.node(id).inputs.empty() || (isRoot(gid) && opKind(g.node(id)) == OpKind::NetOutput))
      candidates.push_back(id);
  if (candidates.empty())
    return false;
  NodeId x = rng.pick(candidates);
  Node &n = g.node(x);
  // Ordinary ops and the root NetOutput take any number of inputs: sometimes
  // grow or shrink the list instead of moving an edge.
  bool variadic =
      (opKind(n) == OpKind::Ordinary && refWrittenInputs(n).empty() && !viewInput(n, 0)) ||
      (isRoot(gid) && opKind(n) == OpKind::NetOutput);
  std::vector<OutPort> usable = portsUsableBy(g, x);
  if (variadic && rng.chance(1, 4)) {
    if (n.inputs.size() > 1 && rng.chance(1, 2)) {
      g.eraseInput({x, static_cast<uint32_t>(rng.below(static_cast<uint32_t>(n.inputs.size())))});
      return true;
    }
    if (n.inputs.size() < limits.maxInputsPerNode && !usable.empty()) {
      g.appendInput(x, rng.pick(usable));
      orderReadersBeforeWriter(g, x);
      return true;
    }
  }
  if (n.inputs.empty())
    return false;
  InPort slot{x, rng.below(static_cast<uint32_t>(n.inputs.size()))};
  std::optional<OutPort> src;
  if (!isCopy(n) && rng.chance(1, 8))
    src = std::nullopt; // an unconnected slot reads zeros
  else if (!usable.empty())
    src = rng.pick(usable);
  else
    return false;
  if (src == n.inputs[slot.index])
    return false;
  g.setInput(slot, src);
  orderReadersBeforeWriter(g, x);
  return true;
}

bool addControlEdge(Module &m, MutationRng &rng, const MutationLimits &) {
  GraphId gid = pickGraph(m, rng);
  Graph &g = m.graph(gid);
  std::vector<NodeId> nodes = g.liveNodes();
  if (nodes.size() < 2)
    return false;
  for (int tries = 0; tries < 8; ++tries) {
    NodeId a = rng.pick(nodes), b = rng.pick(nodes);
    if (a == b || g.hasCtrlEdge(a, b) || g.reaches(b, a))
      continue;
    return g.addCtrlEdge(a, b);
  }
  return false;
}

bool removeControlEdge(Module &m, MutationRng &rng, const MutationLimits &) {
  GraphId gid = pickGraph(m, rng);
  Graph &g = m.graph(gid);
  std::vector<std::pair<NodeId, NodeId>> edges;
  for (NodeId a : g.liveNodes())
    for (NodeId b : g.node(a).ctrlOut)
      edges.push_back({a, b});
  if (edges.empty())
    return false;
  auto [a, b] = rng.pick(edges);
  return g.removeCtrlEdge(a, b);
}

bool insertTensorMove(Module &m, MutationRng &rng, const MutationLimits &limits) {
  GraphId gid = pickGraph(m, rng);
  Graph &g = m.graph(gid);
  if (g.numLiveNodes() >= limits.maxNodesPerGraph)
    return false;
  std::vector<OutPort> used;
  for (OutPort p : outputPorts(g))
    if (!g.consumers(p).empty())
      used.push_back(p);
  if (used.empty())
    return false;
  OutPort src = rng.pick(used);
  std::vector<InPort> consumers = g.consumers(src);
  NodeId tm = g.addNode(uniqueNodeName(g, "tm"), "TensorMove", {src});
  if (rng.chance(1, 16))
    g.node(tm).attrs["_cannot_be_deleted"] = AttrValue::ofBool(true);
  if (rng.chance(1, 2)) {
    for (InPort c : consumers)
      g.setInput(c, OutPort{tm, 0});
  } else {
    g.setInput(rng.pick(consumers), OutPort{tm, 0});
  }
  return true;
}

bool removeTensorMove(Module &m, MutationRng &rng, const MutationLimits &) {
  GraphId gid = pickGraph(m, rng);
  Graph &g = m.graph(gid);
  std::vector<NodeId> copies;
  for (NodeId id : g.liveNodes())
    if (isCopy(g.node(id)))
      copies.push_back(id);
  if (copies.empty())
    return false;
  NodeId tm = rng.pick(copies);
  std::optional<OutPort> src = g.node(tm).inputs.empty() ? std::nullopt : g.node(tm).inputs[0];
  for (uint32_t k = 0; k < g.node(tm).numOutputs; ++k) {
    std::vector<InPort> consumers = g.consumers({tm, k});
    for (InPort c : consumers)
      g.setInput(c, src);
  }
  bridgeControlEdges(g, tm);
  g.removeNode(tm);
  return true;
}

/// Toggles a boolean node attribute: absent -> true -> false -> absent.
void toggleBool(Node &n, const std::string &key) {
  auto it = n.attrs.find(key);
  if (it == n.attrs.end())
    n.attrs[key] = AttrValue::ofBool(true);
  else if (it->second.isBool() && it->second.asBool())
    it->second = AttrValue::ofBool(false);
  else
    n.attrs.erase(it);
}

std::vector<std::string> variableNames(const Module &m) {
  std::vector<std::string> names;
  for (GraphId gid : liveGraphs(m)) {
    const Graph &g = m.graph(gid);
    for (NodeId id : g.liveNodes())
      if (isVariableSource(g.node(id)))
        names.push_back(g.node(id).name);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

bool flipMemoryAttr(Module &m, MutationRng &rng, const MutationLimits &) {
  std::vector<std::string> vars = variableNames(m);
  GraphId gid = pickGraph(m, rng);
  Graph &g = m.graph(gid);
  std::vector<NodeId> candidates;
  for (NodeId id : g.liveNodes())
    if (!isBoundary(g.node(id)))
      candidates.push_back(id);
  if (candidates.empty())
    return false;
  NodeId id = rng.pick(candidates);
  Node &n = g.node(id);
  uint32_t numIn = static_cast<uint32_t>(n.inputs.size());
  uint32_t out = rng.below(std::max<uint32_t>(n.numOutputs, 1));
  auto port = [&](const char *attr) { return Node::portKey(true, out, attr); };
  switch (rng.below(7)) {
  case 0: { // ref_input: the output is input i, written in place
    if (n.attrs.erase(port("ref_input")))
      break;
    if (numIn == 0)
      return false;
    n.attrs[port("ref_input")] = AttrValue::ofInt(rng.below(numIn));
    break;
  }
  case 1: { // reuse_input: the output views input i
    if (n.attrs.erase(port("reuse_input"))) {
      n.attrs.erase(port("reuse_input_index"));
      break;
    }
    if (numIn == 0)
      return false;
    n.attrs[port("reuse_input")] = AttrValue::ofBool(true);
    n.attrs[port("reuse_input_index")] = AttrValue::ofInt(rng.below(numIn));
    break;
  }
  case 2:
    toggleBool(n, "_input_mutable");
    break;
  case 3: { // ref_var_src_var_name: the output is a variable's buffer
    std::string key = rng.chance(1, 2) ? port("ref_var_src_var_name") : "ref_var_src_var_name";
    if (n.attrs.erase(key))
      break;
    if (vars.empty())
      return false;
    n.attrs[key] = AttrValue::ofString(rng.pick(vars));
    break;
  }
  case 4:
    toggleBool(n, rng.chance(3, 4) ? "continuous_input" : "_no_padding_continuous_input");
    break;
  case 5:
    if (!isCopy(n))
      return false;
    toggleBool(n, "_cannot_be_deleted");
    break;
  case 6: { // tensor description: buffer sizes the pass must not confuse
    static const std::vector<std::string> kDtypes = {"f16", "f32", "i8", "i64", "bool"};
    if (n.numOutputs == 0)
      return false;
    if (rng.chance(1, 2)) {
      if (!n.attrs.erase(port("dtype")))
        n.attrs[port("dtype")] = AttrValue::ofIdent(rng.pick(kDtypes));
    } else if (!n.attrs.erase(port("shape"))) {
      AttrValue::List dims;
      for (uint32_t d = 0, rank = 1 + rng.below(2); d < rank; ++d)
        dims.push_back(AttrValue::ofInt(1 + rng.below(4)));
      n.attrs[port("shape")] = AttrValue::ofList(std::move(dims));
    }
    break;
  }
  }
  orderReadersBeforeWriter(g, id);
  return true;
}

/// Moves `region` (nodes of graph `gid`, in topological order) into a new
/// PartitionedCall subgraph. The caller guarantees that no path leaves the
/// region and comes back.
bool wrapRegion(Module &m, GraphId gid, const std::vector<NodeId> &region) {
  std::string subName = uniqueGraphName(m, "sg");
  GraphId sid = m.addGraph(subName); // invalidates Graph references: re-fetch below
  Graph &g = m.graph(gid);
  Graph &sub = m.graph(sid);
  auto inRegion = [&](NodeId id) {
    return std::find(region.begin(), region.end(), id) != region.end();
  };

  // Parent inputs: each distinct external source port, in order of use.
  std::vector<OutPort> external;
  for (NodeId id : region)
    for (const auto &src : g.node(id).inputs)
      if (src && !inRegion(src->node) &&
          std::find(external.begin(), external.end(), *src) == external.end())
        external.push_back(*src);
  // Parent outputs: every region port with a consumer outside the region.
  std::vector<OutPort> exported;
  for (NodeId id : region)
    for (uint32_t k = 0; k < g.node(id).numOutputs; ++k)
      for (InPort c : g.consumers({id, k}))
        if (!inRegion(c.node)) {
          exported.push_back({id, k});
          break;
        }
  if (exported.empty() && g.node(region.back()).numOutputs > 0)
    exported.push_back({region.back(), 0});

  std::vector<NodeId> dataNodes;
  for (uint32_t i = 0; i < external.size(); ++i) {
    NodeId d = sub.addNode("arg" + std::to_string(i), "Data");
    sub.node(d).attrs["_parent_node_index"] = AttrValue::ofInt(i);
    dataNodes.push_back(d);
  }
  std::vector<std::pair<NodeId, NodeId>> copies; // (outer, inner)
  for (NodeId id : region) {
    const Node &o = g.node(id);
    std::string name = o.name;
    if (sub.find(name) != kNoNode)
      name = uniqueNodeName(sub, name + "_");
    NodeId c = sub.addNode(name, o.type, {}, o.numOutputs);
    sub.node(c).attrs = o.attrs;
    copies.push_back({id, c});
  }
  auto innerOf = [&](NodeId outer) {
    for (auto [o, i] : copies)
      if (o == outer)
        return i;
    return kNoNode;
  };
  for (auto [outer, inner] : copies) {
    for (const auto &src : g.node(outer).inputs) {
      std::optional<OutPort> mapped;
      if (src && inRegion(src->node))
        mapped = OutPort{innerOf(src->node), src->index};
      else if (src)
        mapped = OutPort{
            dataNodes[std::find(external.begin(), external.end(), *src) - external.begin()], 0};
      sub.appendInput(inner, mapped);
    }
    for (NodeId s : g.node(outer).ctrlOut)
      if (inRegion(s))
        sub.addCtrlEdge(inner, innerOf(s));
    // Subgraphs held by a wrapped node move with it.
    std::vector<GraphId> held = g.node(outer).subgraphs;
    g.node(outer).subgraphs.clear();
    for (GraphId h : held)
      m.attachSubgraph(sid, inner, h);
  }
  NodeId result = sub.addNode("out", "NetOutput");
  for (uint32_t j = 0; j < exported.size(); ++j) {
    sub.appendInput(result, OutPort{innerOf(exported[j].node), exported[j].index});
    sub.node(result).attrs[Node::portKey(false, j, "_parent_node_index")] = AttrValue::ofInt(j);
  }

  std::vector<std::optional<OutPort>> callInputs(external.begin(), external.end());
  NodeId call = g.addNode(uniqueNodeName(g, "call"), "PartitionedCall", callInputs,
                          static_cast<uint32_t>(exported.size()));
  m.attachSubgraph(gid, call, sid);
  for (uint32_t j = 0; j < exported.size(); ++j) {
    std::vector<InPort> consumers = g.consumers(exported[j]);
    for (InPort c : consumers)
      if (!inRegion(c.node))
        g.setInput(c, OutPort{call, j});
  }
  // Control edges crossing the region boundary now attach to the call.
  for (NodeId id : region) {
    for (NodeId p : std::vector<NodeId>(g.node(id).ctrlIn))
      if (!inRegion(p))
        g.addCtrlEdge(p, call);
    for (NodeId s : std::vector<NodeId>(g.node(id).ctrlOut))
      if (!inRegion(s))
        g.addCtrlEdge(call, s);
  }
  // Keep the wrapped node's name on the call when a single node was wrapped,
  // so the text stays recognisable.
  std::string keepName = region.size() == 1 ? g.node(region[0]).name : std::string();
  for (NodeId id : region)
    g.removeNode(id);
  if (!keepName.empty())
    g.rename(call, keepName);
  return true;
}

bool wrapInSubgraph(Module &m, MutationRng &rng, const MutationLimits &limits) {
  if (liveGraphs(m).size() >= limits.maxGraphs)
    return false;
  GraphId gid = pickGraph(m, rng);
  const Graph &g = m.graph(gid);
  std::vector<NodeId> candidates;
  for (NodeId id : g.liveNodes())
    if (!isBoundary(g.node(id)))
      candidates.push_back(id);
  if (candidates.empty())
    return false;
  NodeId first = rng.pick(candidates);
  std::vector<NodeId> region{first};
  if (rng.chance(1, 3)) {
    // Grow to a direct consumer when no outside path joins the two.
    std::vector<NodeId> next;
    for (const auto &cs : g.node(first).consumers)
      for (InPort c : cs)
        if (!isBoundary(g.node(c.node)) &&
            std::find(next.begin(), next.end(), c.node) == next.end())
          next.push_back(c.node);
    if (!next.empty()) {
      NodeId second = rng.pick(next);
      bool detour = false;
      for (NodeId x : g.liveNodes())
        if (x != first && x != second && g.reaches(first, x) && g.reaches(x, second))
          detour = true;
      if (!detour)
        region.push_back(second);
    }
  }
  return wrapRegion(m, gid, region);
}

/// Number of user inputs (root Data indices) and graph outputs.
std::pair<uint32_t, uint32_t> rootInterface(const Module &m) {
  const Graph &root = m.root();
  auto inputs = static_cast<uint32_t>(std::max<int64_t>(nextUserInputIndex(root), 0));
  NodeId out = rootNetOutput(root);
  auto outputs = out == kNoNode ? 0u : static_cast<uint32_t>(root.node(out).inputs.size());
  return {inputs, outputs};
}

bool changeOption(Module &m, MutationRng &rng, const MutationLimits &) {
  auto [numInputs, numOutputs] = rootInterface(m);
  const char *key = rng.chance(1, 2) ? kOutputReuseKey : kInputReuseKey;
  uint32_t variant = rng.below(8);
  if (variant == 0 || (variant == 1 && m.options.count(key))) {
    return m.options.erase(key) > 0;
  }
  std::string value;
  if (variant == 2) {
    // Malformed values grant nothing (and warn): the pass must agree.
    static const std::vector<std::string> kMalformed = {"0,x", "-1", "", "0,,1", "1|", "99999"};
    value = rng.pick(kMalformed);
  } else if (numInputs == 0) {
    return false;
  } else if (key == kOutputReuseKey) {
    if (numOutputs == 0)
      return false;
    for (uint32_t i = 0, pairs = 1 + rng.below(2); i < pairs; ++i) {
      if (i)
        value += "|";
      value += std::to_string(rng.below(numOutputs)) + "," + std::to_string(rng.below(numInputs));
    }
  } else {
    for (uint32_t i = 0, count = 1 + rng.below(2); i < count; ++i) {
      if (i)
        value += ",";
      value += std::to_string(rng.below(numInputs));
    }
  }
  auto it = m.options.find(key);
  if (it != m.options.end() && it->second == value)
    return false;
  m.options[key] = value;
  return true;
}

using MutationFn = bool (*)(Module &, MutationRng &, const MutationLimits &);

struct WeightedMutation {
  MutationKind kind;
  MutationFn fn;
  uint32_t weight;
};

// TensorMove insertion and memory attributes are what the pass decides on,
// so they are drawn most often.
constexpr WeightedMutation kMutations[] = {
    {MutationKind::AddNode, addNode, 3},
    {MutationKind::RemoveNode, removeNode, 2},
    {MutationKind::RewireInput, rewireInput, 3},
    {MutationKind::AddControlEdge, addControlEdge, 2},
    {MutationKind::RemoveControlEdge, removeControlEdge, 1},
    {MutationKind::InsertTensorMove, insertTensorMove, 4},
    {MutationKind::RemoveTensorMove, removeTensorMove, 2},
    {MutationKind::FlipMemoryAttr, flipMemoryAttr, 4},
    {MutationKind::WrapInSubgraph, wrapInSubgraph, 2},
    {MutationKind::ChangeOption, changeOption, 2},
};
static_assert(std::size(kMutations) == kNumMutationKinds);

Module parseOrFallback(std::string_view text, bool &usedFallback) {
  ParseResult r = parseModule(text);
  if (r.module) {
    usedFallback = false;
    return std::move(*r.module);
  }
  usedFallback = true;
  return std::move(*parseModule(fallbackSeedGraph()).module);
}

} // namespace

bool applyMutation(Module &m, MutationKind kind, MutationRng &rng, const MutationLimits &limits) {
  return applyFromTable(kMutations, kind, m, rng, limits);
}

std::optional<MutationKind> mutateOnce(Module &m, MutationRng &rng, const MutationLimits &limits) {
  return drawWeighted(kMutations, rng, [&](const WeightedMutation &w) {
    return applyMutation(m, w.kind, rng, limits);
  });
}

bool spliceFragment(Module &m, const Module &donor, MutationRng &rng,
                    const MutationLimits &limits) {
  // Options the recipient lacks come along.
  for (const auto &[key, value] : donor.options)
    if (!m.options.count(key) && rng.chance(1, 2))
      m.options[key] = value;

  const Graph &dg = donor.root();
  std::optional<std::vector<NodeId>> order = dg.topoOrder();
  if (!order)
    return false;
  std::vector<NodeId> movable;
  for (NodeId id : *order)
    if (!isBoundary(dg.node(id)) && !holdsSubgraphs(dg.node(id)))
      movable.push_back(id);
  if (movable.empty())
    return false;
  uint32_t len = 1 + rng.below(std::min<uint32_t>(4, static_cast<uint32_t>(movable.size())));
  uint32_t start = rng.below(static_cast<uint32_t>(movable.size()) - len + 1);
  std::vector<NodeId> window(movable.begin() + start, movable.begin() + start + len);

  GraphId gid = pickGraph(m, rng);
  Graph &g = m.graph(gid);
  if (g.numLiveNodes() + window.size() > limits.maxNodesPerGraph)
    return false;
  std::vector<OutPort> hostPorts = outputPorts(g); // fragment inputs come from these only
  std::vector<std::pair<NodeId, NodeId>> copies;   // (donor, host)
  auto hostOf = [&](NodeId d) {
    for (auto [a, b] : copies)
      if (a == d)
        return b;
    return kNoNode;
  };
  for (NodeId d : window) {
    const Node &dn = dg.node(d);
    std::vector<std::optional<OutPort>> inputs;
    for (const auto &src : dn.inputs) {
      if (src && hostOf(src->node) != kNoNode)
        inputs.push_back(OutPort{hostOf(src->node), src->index});
      else if (src && !hostPorts.empty())
        inputs.push_back(rng.pick(hostPorts));
      else if (isCopy(dn))
        return false; // a TensorMove needs a connected input
      else
        inputs.push_back(std::nullopt);
    }
    NodeId h = g.addNode(uniqueNodeName(g, dn.name + "_x"), dn.type, inputs, dn.numOutputs);
    g.node(h).attrs = dn.attrs;
    copies.push_back({d, h});
  }
  for (auto [d, h] : copies)
    for (NodeId s : dg.node(d).ctrlOut)
      if (hostOf(s) != kNoNode)
        g.addCtrlEdge(h, hostOf(s));
  for (auto [d, h] : copies) {
    (void)d;
    orderReadersBeforeWriter(g, h);
  }

  // Observe the fragment's last value.
  NodeId last = copies.back().second;
  if (g.node(last).numOutputs == 0)
    return true;
  NodeId out = rootNetOutput(g);
  if (isRoot(gid) && out != kNoNode && rng.chance(1, 2)) {
    g.appendInput(out, OutPort{last, 0});
    return true;
  }
  std::vector<InPort> slots;
  for (NodeId x : g.liveNodes()) {
    if (hostOf(x) != kNoNode || x == last || opKind(g.node(x)) == OpKind::DataSource)
      continue;
    if (g.reaches(x, last))
      continue;
    for (uint32_t i = 0; i < g.node(x).inputs.size(); ++i)
      slots.push_back({x, i});
  }
  if (!slots.empty())
    g.setInput(rng.pick(slots), OutPort{last, 0});
  return true;
}

oracle::CheckOptions MutatorOptions::defaultCheckOptions() {
  oracle::CheckOptions o;
  o.seed = 1;
  o.numStates = 2;
  o.z3TimeoutMs = 2000;
  return o;
}

Validity classifyModule(const Module &m, size_t maxSize, const MutatorOptions &opts,
                        std::string *printed) {
  if (hasErrors(verifyModule(m)))
    return Validity::VerifierError;
  std::string text = printModule(m);
  if (text.size() > maxSize)
    return Validity::TooLarge;
  ParseResult reparsed = parseModule(text);
  if (!reparsed.module)
    return Validity::Unparsable;
  if (opts.requireRaceFree &&
      oracle::checkOriginal(*reparsed.module, opts.check).verdict != oracle::Verdict::Sound)
    return Validity::NotSound;
  if (printed)
    *printed = std::move(text);
  return Validity::Valid;
}

namespace {

/// Runs up to opts.maxAttempts candidates made by `makeCandidate` through the
/// filter; the first valid one wins.
template <typename MakeCandidate>
MutationOutcome searchValid(size_t maxSize, const MutatorOptions &opts,
                            MakeCandidate &&makeCandidate) {
  MutationOutcome outcome;
  for (uint32_t attempt = 0; attempt < opts.maxAttempts; ++attempt) {
    ++outcome.attempts;
    std::vector<MutationKind> applied;
    std::optional<Module> candidate = makeCandidate(applied);
    if (!candidate)
      continue;
    std::string text;
    Validity v = classifyModule(*candidate, maxSize, opts, &text);
    if (v == Validity::Valid) {
      outcome.text = std::move(text);
      outcome.applied = std::move(applied);
      return outcome;
    }
    ++outcome.discarded[static_cast<size_t>(v)];
  }
  return outcome;
}

} // namespace

MutationOutcome mutateGraphText(std::string_view input, uint64_t seed, size_t maxSize,
                                const MutatorOptions &opts) {
  bool usedFallback = false;
  Module base = parseOrFallback(input, usedFallback);
  MutationRng rng(seed);
  MutationOutcome outcome = searchValid(maxSize, opts, [&](std::vector<MutationKind> &applied) {
    Module candidate = base;
    uint32_t count = 1 + rng.below(std::max<uint32_t>(opts.maxMutationsPerAttempt, 1));
    for (uint32_t i = 0; i < count; ++i)
      if (auto kind = mutateOnce(candidate, rng, opts.limits))
        applied.push_back(*kind);
    return applied.empty() ? std::nullopt : std::optional<Module>(std::move(candidate));
  });
  outcome.usedFallback = usedFallback;
  // A non-graph input is still worth replacing by the (valid) seed graph.
  if (!outcome.text && usedFallback && fallbackSeedGraph().size() <= maxSize)
    outcome.text = printModule(base);
  return outcome;
}

MutationOutcome crossOverGraphText(std::string_view a, std::string_view b, uint64_t seed,
                                   size_t maxSize, const MutatorOptions &opts) {
  bool fallbackA = false, fallbackB = false;
  Module recipient = parseOrFallback(a, fallbackA);
  Module donor = parseOrFallback(b, fallbackB);
  MutationRng rng(seed);
  MutationOutcome outcome = searchValid(maxSize, opts, [&](std::vector<MutationKind> &applied) {
    Module candidate = recipient;
    if (!spliceFragment(candidate, donor, rng, opts.limits))
      return std::optional<Module>();
    if (rng.chance(1, 4))
      if (auto kind = mutateOnce(candidate, rng, opts.limits))
        applied.push_back(*kind);
    return std::optional<Module>(std::move(candidate));
  });
  outcome.usedFallback = fallbackA || fallbackB;
  return outcome;
}

std::string_view fallbackSeedGraph() {
  return R"(# Fallback seed: a redundant TensorMove between two readers.
graph root {
  x   = Data() {index = 0}
  r   = ReLU(x)
  tm  = TensorMove(r)
  y   = AddD(tm, x)
  out = NetOutput(y)
}
)";
}

} // namespace graphvet::fuzz
