// fold-constant, If inlining: an `If` whose condition is a valued Const
// always takes the same branch (the then-branch when the condition's first
// byte is odd, as the interpreter decides, semantics.md §2). That branch's
// nodes move into the If's graph: a branch `Data` becomes the If input it
// stands for, the If's outputs are rewired to the branch results, nested
// subgraphs move with their holders, and the If's control edges are kept by
// edges into the first and out of the last moved nodes. A branch that holds
// a random op, a variable or a memory effect is not inlined: a random draw
// and a variable are identified by their names, which moving renames, and
// an effect ran inside the If's single step, an order moving would loosen.
#include "passes/fold_constant/fold_internal.h"

#include "ir/op_def.h"
#include "ir/op_library.h"

#include <fmt/format.h>

#include <map>
#include <set>

namespace graphvet::fold {
namespace {

/// Why the branch (and the subgraphs its nodes hold) must stay inside its If.
std::optional<Refusal> branchRefusal(const Module &m, GraphId branch) {
  std::vector<GraphId> work{branch};
  // Bounded: each graph is owned by one node, so each is pushed once.
  while (!work.empty()) {
    GraphId gid = work.back();
    work.pop_back();
    const Graph &g = m.graph(gid);
    for (NodeId id : g.liveNodes()) {
      const Node &n = g.node(id);
      if (lookupOp(n.type).nondeterministic)
        return Refusal{"if-random", fmt::format("branch {} holds the random op {}, whose draw "
                                                "is keyed by its name",
                                                g.name, n.name)};
      if (isVariableSource(n))
        return Refusal{"if-variable",
                       fmt::format("branch {} holds the variable {}", g.name, n.name)};
      bool varBound = false;
      for (uint32_t k = 0; k < n.numOutputs; ++k)
        varBound = varBound || refVarSrcName(n, k) != nullptr;
      if (isInputMutable(n) || !refWrittenInputs(n).empty() || varBound)
        return Refusal{"if-effect", fmt::format("branch {} holds {}, which writes memory "
                                                "within the If's single step",
                                                g.name, n.name)};
      for (GraphId sub : n.subgraphs)
        work.push_back(sub);
    }
  }
  return std::nullopt;
}

} // namespace

std::variant<std::monostate, Refusal, std::string> tryInlineIf(Env &env, GraphId gid, NodeId id,
                                                               std::vector<NodeId> &moved) {
  Module &m = env.m;
  Graph &parent = m.graph(gid);
  const Node &ifn = parent.node(id);
  if (opKind(ifn) != OpKind::If || ifn.subgraphs.size() != 2 || ifn.inputs.empty())
    return std::monostate{};
  std::optional<ConstantSource> condSource = constantSource(m, gid, ifn.inputs[0]);
  if (!condSource)
    return std::monostate{};
  const Tensor *cond = condSource->value;
  if (isReserved(ifn))
    return Refusal{"reserved", "a reserved attribute forbids folding it"};
  if (std::optional<Refusal> r = writtenConstant(env, *condSource))
    return *r;
  // An output the memory plan binds to a variable or an input (rather than
  // to the taken branch's result) has no place to go once the If is gone.
  for (uint32_t k = 0; k < ifn.numOutputs; ++k)
    if (refVarSrcName(ifn, k) || aliasedInput(ifn, k))
      return Refusal{"if-rebound", fmt::format("output {} is bound to a variable or an input, "
                                               "not to the branch result",
                                               k)};
  if (cond->bytes().empty())
    return Refusal{"if-empty-condition", "the condition has no element"};
  if (cond->isUndef(0))
    return Refusal{"indeterminate", "the condition is indeterminate"};
  const bool takeThen = cond->bytes()[0] % 2 == 1;
  const GraphId taken = ifn.subgraphs[takeThen ? 0 : 1];
  const GraphId dropped = ifn.subgraphs[takeThen ? 1 : 0];
  if (std::optional<Refusal> r = branchRefusal(m, taken))
    return *r;
  Graph &branch = m.graph(taken);
  std::optional<std::vector<NodeId>> order = branch.topoOrder();
  if (!order)
    return Refusal{"if-malformed", fmt::format("branch {} has a cycle", branch.name)};

  // What each branch Data stands for, and each If output's branch result.
  std::map<NodeId, std::optional<OutPort>> dataPort;
  std::map<uint32_t, OutPort> result; // If output j -> port in the branch
  size_t netOutputs = 0;
  for (NodeId b : *order) {
    const Node &bn = branch.node(b);
    if (opKind(bn) == OpKind::DataSource) {
      std::optional<int64_t> p = bn.intAttr("_parent_node_index");
      dataPort[b] = p && *p >= 0 && static_cast<size_t>(*p) < ifn.inputs.size()
                        ? ifn.inputs[static_cast<size_t>(*p)]
                        : std::nullopt;
    } else if (opKind(bn) == OpKind::NetOutput) {
      ++netOutputs;
      for (uint32_t k = 0; k < bn.inputs.size(); ++k) {
        const AttrValue *j = bn.portAttr(false, k, "_parent_node_index");
        if (j && j->isInt() && bn.inputs[k])
          result[static_cast<uint32_t>(j->asInt())] = *bn.inputs[k];
      }
    }
  }
  if (netOutputs != 1)
    return Refusal{"if-malformed",
                   fmt::format("branch {} has {} NetOutputs", branch.name, netOutputs)};
  // Resolves a branch port to the parent port it becomes (nullopt: none).
  std::map<NodeId, NodeId> newId;
  auto resolve = [&](const OutPort &p) -> std::optional<OutPort> {
    if (auto d = dataPort.find(p.node); d != dataPort.end())
      return d->second;
    if (auto c = newId.find(p.node); c != newId.end())
      return OutPort{c->second, p.index};
    return std::nullopt;
  };
  for (uint32_t j = 0; j < ifn.numOutputs; ++j) {
    if (ifn.consumers[j].empty())
      continue;
    auto r = result.find(j);
    bool dataUnconnected = r != result.end() && dataPort.count(r->second.node) &&
                           !dataPort[r->second.node].has_value();
    if (r == result.end() || dataUnconnected)
      return Refusal{"if-unmapped", fmt::format("output {} has no value in branch {} (it would be "
                                                "a zeroed fresh buffer)",
                                                j, branch.name)};
  }

  // Move the nodes, in the branch's topological order.
  const std::string ifName = ifn.name;
  const std::vector<NodeId> ifCtrlIn = ifn.ctrlIn, ifCtrlOut = ifn.ctrlOut;
  const std::vector<std::optional<OutPort>> ifInputs = ifn.inputs;
  for (NodeId b : *order) {
    const Node &bn = branch.node(b);
    OpKind kind = opKind(bn);
    if (kind == OpKind::DataSource || kind == OpKind::NetOutput)
      continue;
    std::vector<std::optional<OutPort>> inputs;
    for (const std::optional<OutPort> &src : bn.inputs)
      inputs.push_back(src ? resolve(*src) : std::nullopt);
    NodeId c = parent.addNode(freshNodeName(parent, bn.name), bn.type, inputs, bn.numOutputs);
    Node &cn = parent.node(c);
    cn.attrs = bn.attrs;
    cn.loc = bn.loc;
    newId[b] = c;
    moved.push_back(c);
    std::vector<GraphId> subs = branch.node(b).subgraphs;
    branch.node(b).subgraphs.clear(); // they now belong to the moved node
    for (GraphId sub : subs)
      m.attachSubgraph(gid, c, sub);
  }
  for (NodeId b : *order)
    for (NodeId t : branch.node(b).ctrlOut)
      if (newId.count(b) && newId.count(t))
        parent.addCtrlEdge(newId[b], newId[t]);
  for (uint32_t j = 0; j < parent.node(id).numOutputs; ++j) {
    if (parent.node(id).consumers[j].empty())
      continue;
    std::optional<OutPort> target = resolve(result[j]);
    parent.replaceAllUses(OutPort{id, j}, *target);
  }
  // The If's control edges now order the moved nodes: edges in to those
  // with no moved predecessor, edges out from those with no moved successor.
  std::set<NodeId> movedSet(moved.end() - static_cast<long>(newId.size()), moved.end());
  for (const auto &[b, c] : newId) {
    const Node &cn = parent.node(c);
    bool root = true, sink = true;
    for (const std::optional<OutPort> &src : cn.inputs)
      root = root && !(src && movedSet.count(src->node));
    for (NodeId p : cn.ctrlIn)
      root = root && !movedSet.count(p);
    for (const std::vector<InPort> &uses : cn.consumers)
      for (const InPort &u : uses)
        sink = sink && !movedSet.count(u.node);
    for (NodeId s : cn.ctrlOut)
      sink = sink && !movedSet.count(s);
    for (NodeId p : ifCtrlIn)
      if (root)
        parent.addCtrlEdge(p, c);
    for (NodeId s : ifCtrlOut)
      if (sink)
        parent.addCtrlEdge(c, s);
  }
  if (newId.empty()) // nothing moved: the If's predecessors still precede its successors
    for (NodeId p : ifCtrlIn)
      for (NodeId s : ifCtrlOut)
        parent.addCtrlEdge(p, s);
  parent.node(id).subgraphs.clear();
  parent.removeNode(id);
  m.removeGraph(taken);
  m.removeGraph(dropped);
  for (const std::optional<OutPort> &src : ifInputs)
    if (src)
      removeIfUnusedConstant(env, gid, src->node);
  // A moved node keeps the type it had in the branch (typed from the same
  // If inputs), so the module's types stay valid without a new inference.
  bool movedHolder = false;
  for (const auto &[b, c] : newId) {
    movedHolder = movedHolder || !parent.node(c).subgraphs.empty();
    if (env.typesStale)
      continue;
    std::vector<std::vector<TensorType>> &ports = env.types.ports[gid];
    const std::vector<std::vector<TensorType>> &from = env.types.ports[taken];
    if (ports.size() <= c)
      ports.resize(c + 1);
    if (b < from.size())
      ports[c] = from[b];
  }
  // The boundary tables key control-flow holders by graph and id: a moved
  // holder needs them rebuilt. Moving other nodes leaves them valid.
  if (movedHolder)
    env.index.reset();
  env.stats.nodesInlined += static_cast<int64_t>(newId.size());
  return fmt::format("inlined the {} branch {} of {} (condition {}): {} node(s) moved",
                     takeThen ? "then" : "else", branch.name, ifName, takeThen ? "true" : "false",
                     newId.size());
}

} // namespace graphvet::fold
