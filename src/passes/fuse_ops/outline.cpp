// The surgery of fuse-ops: the convexity check of a group, its name, and
// the outlining of a group into a PartitionedCall whose subgraph holds the
// group's ops (each value used outside the group becomes one call output;
// valued constants the group reads are copied in).
#include "passes/fuse_ops/internal.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <unordered_set>

namespace graphvet::fuse_ops {
namespace {

/// Membership in one group: its ids sorted (a group holds at most
/// max_fuse_depth ops). A mask the size of the graph per group, as before,
/// made the pass quadratic: several per group, each zero-filled.
class MemberSet {
public:
  explicit MemberSet(const std::vector<NodeId> &members) : ids_(members) {
    std::sort(ids_.begin(), ids_.end());
  }
  bool operator[](NodeId id) const { return std::binary_search(ids_.begin(), ids_.end(), id); }

private:
  std::vector<NodeId> ids_;
};

MemberSet memberMask(const Graph &, const std::vector<NodeId> &members) {
  return MemberSet(members);
}

std::string lowerType(const std::string &type) {
  std::string s;
  for (char c : type)
    s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// `base`, or `base_1`, `base_2`... the first `taken` refuses (bounded by
/// the number of names in use, which `taken` can refuse at most).
template <typename F>
std::string uniqueName(const std::string &base, size_t bound, F taken, size_t &lowestFree) {
  if (!taken(base))
    return base;
  for (size_t k = std::max<size_t>(lowestFree, 1); k <= bound + 1; ++k) {
    std::string s = base + "_" + std::to_string(k);
    if (!taken(s)) {
      lowestFree = k; // every smaller suffix is taken
      return s;
    }
  }
  return base + "_" + std::to_string(bound + 2);
}

} // namespace

GroupNames::GroupNames(const Module &m) {
  for (GraphId gid = 0; gid < m.numGraphs(); ++gid)
    if (m.graph(gid).alive)
      graphs.insert(m.graph(gid).name);
}

void GroupNames::freed(const std::string &name) {
  size_t us = name.rfind('_');
  if (us == std::string::npos || us + 1 == name.size())
    return;
  size_t k = 0;
  for (size_t i = us + 1; i < name.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i])) || k > SIZE_MAX / 20)
      return;
    k = k * 10 + static_cast<size_t>(name[i] - '0');
  }
  auto it = lowestFree.find(name.substr(0, us));
  if (it != lowestFree.end())
    it->second = std::min(it->second, k);
}

bool copiedIntoGroup(const Graph &g, NodeId producer) {
  const Node &p = g.node(producer);
  return p.type == "Const" && p.attr("value") && p.attr("value")->isTensor() && p.ctrlIn.empty() &&
         p.ctrlOut.empty() && p.inputs.empty() && p.numOutputs == 1;
}

bool isConvex(const Graph &g, const std::vector<NodeId> &members,
              const std::vector<size_t> &topoIndex) {
  MemberSet in = memberMask(g, members);
  size_t last = 0;
  for (NodeId id : members)
    last = std::max(last, topoIndex[id]);
  // Walk forward from every outside successor of a member; a node after the
  // last member (topologically) cannot lead back into the group.
  std::unordered_set<NodeId> seen; // the walk stays between the group's ops
  std::vector<NodeId> stack;
  auto push = [&](NodeId v) {
    if (!in[v] && topoIndex[v] < last && seen.insert(v).second)
      stack.push_back(v);
  };
  for (NodeId id : members) {
    const Node &n = g.node(id);
    for (uint32_t k = 0; k < n.numOutputs; ++k)
      for (const InPort &c : g.consumers(OutPort{id, k}))
        push(c.node);
    for (NodeId c : n.ctrlOut)
      push(c);
  }
  while (!stack.empty()) {
    NodeId v = stack.back();
    stack.pop_back();
    const Node &n = g.node(v);
    auto reaches = [&](NodeId c) {
      if (in[c])
        return true;
      push(c);
      return false;
    };
    for (uint32_t k = 0; k < n.numOutputs; ++k)
      for (const InPort &c : g.consumers(OutPort{v, k}))
        if (reaches(c.node))
          return false;
    for (NodeId c : n.ctrlOut)
      if (reaches(c))
        return false;
  }
  return true;
}

std::string groupName(const Graph &g, const std::vector<NodeId> &members) {
  // Long groups keep their first ops' names and a count (names stay readable).
  constexpr size_t kNamedOps = 6;
  std::string name = "fused";
  for (size_t i = 0; i < members.size() && i < kNamedOps; ++i) {
    name.push_back('_');
    name.append(lowerType(g.node(members[i]).type));
  }
  if (members.size() > kNamedOps) {
    name.append("_and_");
    name.append(std::to_string(members.size() - kNamedOps));
    name.append("_more");
  }
  return name;
}

/// Producers some member reads through an input its output aliases (a
/// Reshape's data input is a view): a copy inside would be another buffer,
/// and what the member's value aliases would change, so these stay call
/// inputs even when they are constants.
static std::set<NodeId> aliasedProducers(const Graph &g, const std::vector<NodeId> &members) {
  std::set<NodeId> out;
  for (NodeId id : members) {
    const Node &n = g.node(id);
    for (uint32_t k = 0; k < n.numOutputs; ++k)
      if (auto slot = aliasedInput(n, k); slot && n.inputs[*slot])
        out.insert(n.inputs[*slot]->node);
  }
  return out;
}

size_t countArgs(const Graph &g, const std::vector<NodeId> &members) {
  MemberSet in = memberMask(g, members);
  std::set<NodeId> aliased = aliasedProducers(g, members);
  std::set<OutPort> args;
  for (NodeId id : members)
    for (const std::optional<OutPort> &src : g.node(id).inputs)
      if (src && !in[src->node] && (aliased.count(src->node) || !copiedIntoGroup(g, src->node)))
        args.insert(*src);
  return args.size();
}

bool hasOutsideUse(const Graph &g, const std::vector<NodeId> &members) {
  MemberSet in = memberMask(g, members);
  for (NodeId id : members) {
    const Node &n = g.node(id);
    for (uint32_t k = 0; k < n.numOutputs; ++k)
      for (const InPort &c : g.consumers(OutPort{id, k}))
        if (!in[c.node])
          return true;
  }
  return false;
}

bool exportsViewOfInput(const Graph &g, const std::vector<NodeId> &members) {
  MemberSet in = memberMask(g, members);
  for (NodeId id : members) {
    const Node &n = g.node(id);
    for (uint32_t k = 0; k < n.numOutputs; ++k) {
      bool outside = false;
      for (const InPort &c : g.consumers(OutPort{id, k}))
        outside = outside || !in[c.node];
      if (!outside)
        continue;
      // Follow views back while they stay inside the group (bounded by the
      // group's size: each step moves to an earlier member).
      OutPort p{id, k};
      for (size_t step = 0; step <= members.size(); ++step) {
        const Node &prod = g.node(p.node);
        std::optional<uint32_t> v = viewInput(prod, p.index);
        if (!v || *v >= prod.inputs.size() || !prod.inputs[*v])
          break;
        p = *prod.inputs[*v];
        if (!in[p.node])
          return true;
      }
    }
  }
  return false;
}

Outlined outlineGroup(Module &m, GraphId gid, const std::vector<NodeId> &members,
                      GroupNames &names) {
  Outlined result;
  MemberSet in = memberMask(m.graph(gid), members);
  // What the group reads from outside (call inputs, or constants copied in)
  // and what it hands back (one output per value used outside), in the
  // order the members read and define them.
  std::vector<OutPort> args;
  std::map<OutPort, size_t> argIndex;
  std::vector<NodeId> copies; // producers before their readers
  std::vector<OutPort> exports;
  // A copied producer's own inputs are copied first (a Const has none).
  auto addCopy = [&](const Graph &g, NodeId id) {
    std::vector<NodeId> stack{id};
    for (size_t steps = 0; !stack.empty() && steps <= 2 * g.capacity(); ++steps) {
      NodeId v = stack.back();
      if (std::find(copies.begin(), copies.end(), v) != copies.end()) {
        stack.pop_back();
        continue;
      }
      bool ready = true;
      for (const std::optional<OutPort> &src : g.node(v).inputs)
        if (src && std::find(copies.begin(), copies.end(), src->node) == copies.end()) {
          stack.push_back(src->node);
          ready = false;
        }
      if (ready) {
        copies.push_back(v);
        stack.pop_back();
      }
    }
  };
  {
    const Graph &g = m.graph(gid);
    std::set<NodeId> aliased = aliasedProducers(g, members);
    for (NodeId id : members)
      for (const std::optional<OutPort> &src : g.node(id).inputs) {
        if (!src || in[src->node])
          continue;
        if (!aliased.count(src->node) && copiedIntoGroup(g, src->node)) {
          addCopy(g, src->node);
        } else if (argIndex.emplace(*src, args.size()).second) {
          args.push_back(*src);
        }
      }
    for (NodeId id : members) {
      const Node &n = g.node(id);
      for (uint32_t k = 0; k < n.numOutputs; ++k) {
        const std::vector<InPort> &uses = g.consumers(OutPort{id, k});
        if (std::any_of(uses.begin(), uses.end(), [&](const InPort &c) { return !in[c.node]; }))
          exports.push_back(OutPort{id, k});
      }
    }
    std::string base = groupName(g, members);
    result.name = uniqueName(
        base, m.numGraphs() + g.capacity(),
        [&](const std::string &s) { return names.graphs.count(s) || g.find(s) != kNoNode; },
        names.lowestFree[base]);
  }

  // The subgraph (adding a graph may move the module's graphs: look the
  // parent up again afterwards).
  GraphId sid = m.addGraph(result.name);
  names.graphs.insert(result.name);
  Graph &sub = m.graph(sid);
  const Graph &g = m.graph(gid);
  std::set<std::string> used;
  for (NodeId id : members)
    used.insert(g.node(id).name);
  for (NodeId id : copies)
    used.insert(g.node(id).name);
  auto fresh = [&](const std::string &base) {
    size_t fromOne = 1; // a group's few inner names: no hint kept
    std::string s = uniqueName(
        base, used.size(), [&](const std::string &t) { return used.count(t) != 0; }, fromOne);
    used.insert(s);
    return s;
  };
  std::map<OutPort, OutPort> inside; // parent port -> port in the subgraph
  for (size_t i = 0; i < args.size(); ++i) {
    NodeId d = sub.addNode(fresh("in" + std::to_string(i)), "Data", {}, 1);
    sub.node(d).attrs["_parent_node_index"] = AttrValue::ofInt(static_cast<int64_t>(i));
    inside[args[i]] = OutPort{d, 0};
  }
  for (NodeId id : copies) {
    const Node &c = g.node(id);
    std::vector<std::optional<OutPort>> ins;
    for (const std::optional<OutPort> &src : c.inputs)
      ins.push_back(src ? std::optional<OutPort>(inside.at(*src)) : std::nullopt);
    NodeId d = sub.addNode(c.name, c.type, std::move(ins), c.numOutputs);
    sub.node(d).attrs = c.attrs;
    sub.node(d).loc = c.loc;
    for (uint32_t k = 0; k < c.numOutputs; ++k)
      inside[OutPort{id, k}] = OutPort{d, k};
  }
  for (NodeId id : members) {
    const Node &n = g.node(id);
    std::vector<std::optional<OutPort>> ins;
    for (const std::optional<OutPort> &src : n.inputs)
      ins.push_back(src ? std::optional<OutPort>(inside.at(*src)) : std::nullopt);
    NodeId c = sub.addNode(n.name, n.type, std::move(ins), n.numOutputs);
    sub.node(c).attrs = n.attrs;
    sub.node(c).loc = n.loc;
    for (uint32_t k = 0; k < n.numOutputs; ++k)
      inside[OutPort{id, k}] = OutPort{c, k};
  }
  std::vector<std::optional<OutPort>> results;
  for (const OutPort &p : exports)
    results.push_back(inside.at(p));
  NodeId out = sub.addNode(fresh("out"), "NetOutput", std::move(results), 0);
  for (size_t j = 0; j < exports.size(); ++j)
    sub.node(out).attrs[Node::portKey(false, static_cast<uint32_t>(j), "_parent_node_index")] =
        AttrValue::ofInt(static_cast<int64_t>(j));

  // The call, then every outside use of an exported value reads its output.
  Graph &pg = m.graph(gid);
  std::vector<std::optional<OutPort>> callInputs(args.begin(), args.end());
  NodeId call = pg.addNode(result.name, "PartitionedCall", std::move(callInputs),
                           static_cast<uint32_t>(exports.size()));
  pg.node(call).attrs["_fused"] = AttrValue::ofString(result.name);
  pg.node(call).loc = pg.node(members.front()).loc;
  m.attachSubgraph(gid, call, sid);
  for (size_t j = 0; j < exports.size(); ++j) {
    std::vector<InPort> uses = pg.consumers(exports[j]);
    for (const InPort &c : uses)
      if (!in[c.node])
        pg.setInput(c, OutPort{call, static_cast<uint32_t>(j)});
  }
  for (size_t i = members.size(); i-- > 0;) {
    names.freed(pg.node(members[i]).name);
    pg.removeNode(members[i]);
  }
  // An original nothing reads any more goes (readers before producers).
  for (size_t i = copies.size(); i-- > 0;) {
    const Node &c = pg.node(copies[i]);
    bool read = false;
    for (uint32_t k = 0; k < c.numOutputs; ++k)
      read = read || !pg.consumers(OutPort{copies[i], k}).empty();
    if (!read) {
      names.freed(c.name);
      pg.removeNode(copies[i]);
    }
  }
  result.call = call;
  result.inputs = args.size();
  result.outputs = exports.size();
  result.consts = copies.size();
  return result;
}

} // namespace graphvet::fuse_ops
