// The structural verifier. It trusts nothing about the module: it works on
// parsed modules, on modules built by generators (no source locations) and on
// modules rewritten by passes (tombstoned nodes, removed graphs, possibly
// broken bookkeeping), and never indexes out of range on a malformed one.
// Checks run in a fixed order (graphs by id, nodes by id), so the diagnostics
// are deterministic.
#include "ir/verifier.h"

#include "ir/op_library.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/types.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

namespace graphvet {
namespace {

std::string plural(uint64_t n, const char *word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

/// Values that print as text which parses back to themselves.
bool isPrintableValue(const AttrValue &v, int depth) {
  if (v.isIdent())
    return isIdentifier(v.asIdent()) && v.asIdent() != "true" && v.asIdent() != "false";
  if (v.isList()) {
    if (depth > kMaxListDepth)
      return false;
    for (const AttrValue &e : v.asList())
      if (!isPrintableValue(e, depth + 1))
        return false;
  }
  return true;
}

/// A port attribute key `in<k>.<attr>` / `out<k>.<attr>`, split.
struct PortKey {
  bool output;
  uint64_t index;
  bool canonical; ///< digits without leading zeros
};

std::optional<PortKey> parsePortKey(const std::string &key) {
  size_t digits;
  bool output;
  if (key.rfind("out", 0) == 0) {
    output = true;
    digits = 3;
  } else if (key.rfind("in", 0) == 0) {
    output = false;
    digits = 2;
  } else {
    return std::nullopt;
  }
  size_t end = digits;
  while (end < key.size() && key[end] >= '0' && key[end] <= '9')
    ++end;
  if (end == digits || end >= key.size() || key[end] != '.')
    return std::nullopt;
  PortKey pk{output, 0, !(key[digits] == '0' && end - digits > 1)};
  for (size_t i = digits; i < end; ++i) {
    pk.index = pk.index * 10 + static_cast<uint64_t>(key[i] - '0');
    if (pk.index > UINT32_MAX) {
      pk.index = UINT64_MAX;
      break;
    }
  }
  return pk;
}

std::string indexList(const std::set<int64_t> &s) {
  std::string out = "[";
  bool first = true;
  for (int64_t v : s) {
    out += fmt::format("{}{}", first ? "" : ", ", v);
    first = false;
  }
  return out + "]";
}

class Verifier {
public:
  Verifier(const Module &m, ModuleTypes *typesOut) : m_(m), typesOut_(typesOut) {}

  Diagnostics run() {
    if (m_.numGraphs() == 0) {
      diags_.push_back({SourceLoc{}, "module has no graphs"});
      return std::move(diags_);
    }
    if (!m_.root().alive)
      diags_.push_back({SourceLoc{}, "the root graph is removed"});
    checkOptions();
    checkGraphNames();
    computeOwners();
    for (GraphId g = 0; g < m_.numGraphs(); ++g)
      if (m_.graph(g).alive)
        checkGraph(m_.graph(g));
    // Types are inferred over a structurally sound module only: edges,
    // subgraph indices and acyclicity are what inference walks.
    if (!hasErrors(diags_))
      checkTypes();
    return std::move(diags_);
  }

private:
  struct Owner {
    GraphId graph = kNoGraph;
    NodeId node = kNoNode;
  };

  void report(const Graph *g, SourceLoc loc, std::string msg) {
    // Without a location the graph name is the only clue where to look.
    if (loc.line == 0 && g)
      msg = fmt::format("graph '{}': {}", g->name, msg);
    diags_.push_back({loc, std::move(msg)});
  }

  void checkTypes() {
    ModuleTypes types = inferModuleTypes(m_, diags_);
    if (hasErrors(diags_))
      return;
    for (GraphId g = 0; g < m_.numGraphs(); ++g) {
      const Graph &graph = m_.graph(g);
      if (!graph.alive)
        continue;
      for (NodeId id : graph.liveNodes())
        for (uint32_t k = 0; k < graph.node(id).numOutputs; ++k)
          if (const TensorType *t = types.of(g, id, k); t && t->byteSize() > kMaxBufferBytes)
            report(&graph, graph.node(id).loc,
                   fmt::format("output {} of '{}' ({}) is larger than {} bytes", k,
                               graph.node(id).name, t->str(), kMaxBufferBytes));
    }
    if (typesOut_)
      *typesOut_ = std::move(types);
  }

  void checkOptions() {
    for (const auto &[key, value] : m_.options) {
      if (isValidKey(key))
        continue;
      auto it = m_.optionLocs.find(key);
      report(nullptr, it == m_.optionLocs.end() ? SourceLoc{} : it->second,
             fmt::format("option name '{}' is not a valid key", key));
    }
  }

  void checkGraphNames() {
    std::map<std::string, GraphId> seen;
    for (GraphId g = 0; g < m_.numGraphs(); ++g) {
      const Graph &graph = m_.graph(g);
      if (!graph.alive)
        continue;
      if (graph.name.empty())
        report(&graph, graph.loc, "graph name must not be empty");
      else if (!seen.emplace(graph.name, g).second)
        report(&graph, graph.loc, fmt::format("duplicate graph '{}'", graph.name));
    }
  }

  /// Finds the owner of every subgraph from the nodes' subgraph lists (the
  /// Graph::parentNode links are only cross-checked), then reports
  /// unreferenced subgraphs and nesting cycles.
  void computeOwners() {
    owner_.assign(m_.numGraphs(), Owner{});
    for (GraphId g = 0; g < m_.numGraphs(); ++g) {
      const Graph &graph = m_.graph(g);
      if (!graph.alive)
        continue;
      for (NodeId id : graph.liveNodes()) {
        const Node &n = graph.node(id);
        for (GraphId sub : n.subgraphs) {
          if (sub >= m_.numGraphs()) {
            report(&graph, n.loc, fmt::format("'{}' holds unknown graph #{}", n.name, sub));
          } else if (!m_.graph(sub).alive) {
            report(&graph, n.loc,
                   fmt::format("'{}' holds removed graph '{}'", n.name, m_.graph(sub).name));
          } else if (sub == 0) {
            report(&graph, n.loc,
                   fmt::format("root graph '{}' cannot be a subgraph", m_.graph(sub).name));
          } else if (owner_[sub].graph != kNoGraph) {
            report(&graph, n.loc,
                   fmt::format("subgraph '{}' referenced twice", m_.graph(sub).name));
          } else {
            owner_[sub] = {g, id};
          }
        }
      }
    }
    for (GraphId s = 1; s < m_.numGraphs(); ++s) {
      const Graph &sub = m_.graph(s);
      if (!sub.alive)
        continue;
      if (owner_[s].graph == kNoGraph) {
        report(&sub, sub.loc, fmt::format("subgraph '{}' is not referenced by any node", sub.name));
        continue;
      }
      if (sub.parentGraph != owner_[s].graph || sub.parentNode != owner_[s].node)
        report(
            &sub, sub.loc,
            fmt::format("subgraph '{}' has a parent link that disagrees with its owner", sub.name));
    }
    // Nesting cycles: follow owners upwards; a walk that comes back to a
    // graph of the same walk without reaching the root is a cycle. Each graph
    // is walked once (linear even for deep nesting). Each cycle is reported
    // once, at its smallest graph id.
    enum : uint8_t { Unvisited, OnWalk, Done };
    std::vector<uint8_t> state(m_.numGraphs(), Unvisited);
    for (GraphId s = 0; s < m_.numGraphs(); ++s) {
      std::vector<GraphId> walk;
      GraphId cur = s;
      while (cur != kNoGraph && state[cur] == Unvisited) {
        state[cur] = OnWalk;
        walk.push_back(cur);
        cur = owner_[cur].graph;
      }
      if (cur != kNoGraph && state[cur] == OnWalk) {
        // walk[i..] is the cycle, each graph held by the next one.
        auto start = std::find(walk.begin(), walk.end(), cur);
        std::vector<GraphId> cycle(start, walk.end());
        auto first = std::min_element(cycle.begin(), cycle.end());
        std::rotate(cycle.begin(), first, cycle.end());
        // Print holders first: a -> b means a node of a holds b.
        std::string text = formatName(m_.graph(cycle[0]).name);
        for (auto it = cycle.rbegin(); it != cycle.rend(); ++it)
          text += fmt::format(" -> {}", formatName(m_.graph(*it).name));
        const Graph &g = m_.graph(cycle[0]);
        report(&g, g.loc, fmt::format("subgraphs nest in a cycle: {}", text));
      }
      for (GraphId w : walk)
        state[w] = Done;
    }
  }

  const Node *ownerNode(GraphId g) const {
    const Owner &o = owner_[g];
    if (o.graph == kNoGraph)
      return nullptr;
    return &m_.graph(o.graph).node(o.node);
  }

  void checkGraph(const Graph &g) {
    const std::vector<NodeId> live = g.liveNodes();
    bool consistent = checkEdges(g, live);
    startNames(live.size());
    const Node *netOutput = nullptr;
    std::map<int64_t, const Node *> dataIndex;
    const Node *parent = g.id == 0 ? nullptr : ownerNode(g.id);
    for (NodeId id : live) {
      const Node &n = g.node(id);
      if (n.name.empty())
        report(&g, n.loc, "node name must not be empty");
      else if (!addName(g, id))
        report(&g, n.loc, fmt::format("duplicate node '{}'", n.name));
      OpKind kind = opKind(n);
      checkNode(g, n, kind);
      if (kind == OpKind::NetOutput) {
        if (netOutput)
          report(&g, n.loc,
                 fmt::format("graph '{}' has more than one NetOutput ('{}' and '{}')", g.name,
                             netOutput->name, n.name));
        else
          netOutput = &n;
        if (parent)
          checkSubgraphNetOutput(g, n, *parent);
      }
      if (kind == OpKind::DataSource) {
        if (g.id == 0)
          checkRootData(g, n, dataIndex);
        else if (parent)
          checkSubgraphData(g, n, *parent, dataIndex);
      }
      if (consistent)
        checkHolder(g, n, kind);
    }
    // Only a cyclic graph pays the search for the cycle to report.
    if (consistent) {
      std::vector<NodeId> cycle;
      if (!acyclic(g, live))
        cycle = g.findCycle();
      if (!cycle.empty()) {
        // Start the cycle at its earliest node (file order) so the message
        // and location do not depend on the search order.
        cycle.pop_back();
        auto first = std::min_element(cycle.begin(), cycle.end());
        std::rotate(cycle.begin(), first, cycle.end());
        cycle.push_back(cycle.front());
        std::string text;
        for (size_t i = 0; i < cycle.size(); ++i)
          text += fmt::format("{}{}", i ? " -> " : "", formatName(g.node(cycle[i]).name));
        report(&g, g.node(cycle.front()).loc, fmt::format("cycle through {}", text));
      }
    }
  }

  /// Data edges, consumer lists and control edges agree and only name live
  /// nodes of this graph. Returns false when the bookkeeping is broken (then
  /// cycle and subgraph checks that walk edges are skipped).
  bool checkEdges(const Graph &g, const std::vector<NodeId> &live) {
    bool ok = true;
    // Each connected input slot is one edge (producer, port, consumer,
    // slot); the consumer lists must hold exactly these edges, each once.
    // They do when every consumer entry names a connected slot that reads
    // that very port, no slot is named twice, and there are as many entries
    // as edges: checked with a mark per slot instead of sorting both lists.
    size_t edges = 0, entries = 0;
    auto liveId = [&](NodeId id) { return id < g.capacity() && g.node(id).alive; };
    for (NodeId id : live) {
      const Node &n = g.node(id);
      for (uint32_t i = 0; i < n.inputs.size(); ++i) {
        const auto &in = n.inputs[i];
        if (!in)
          continue;
        if (!liveId(in->node)) {
          report(&g, n.loc, fmt::format("input {} of '{}' refers to a removed node", i, n.name));
          ok = false;
          continue;
        }
        const Node &p = g.node(in->node);
        if (in->index >= p.numOutputs) {
          report(&g, n.loc,
                 fmt::format("input index {} out of range for '{}' with {}", in->index, p.name,
                             plural(p.numOutputs, "output")));
          ok = false;
          continue;
        }
        ++edges;
      }
      if (n.consumers.size() != n.numOutputs) {
        report(&g, n.loc,
               fmt::format("consumer table of '{}' does not match its {}", n.name,
                           plural(n.numOutputs, "output")));
        ok = false;
      }
      for (const std::vector<InPort> &cs : n.consumers)
        entries += cs.size();
    }
    if (ok && !consumersMatchInputs(g, live, edges, entries)) {
      report(&g, g.loc, "consumer lists disagree with the node inputs");
      ok = false;
    }
    std::vector<std::pair<NodeId, NodeId>> outs, ins;
    for (NodeId id : live) {
      const Node &n = g.node(id);
      for (NodeId to : n.ctrlOut)
        outs.emplace_back(id, to);
      for (NodeId from : n.ctrlIn)
        ins.emplace_back(from, id);
    }
    std::sort(outs.begin(), outs.end());
    std::sort(ins.begin(), ins.end());
    bool ctrlOk = outs == ins && std::adjacent_find(outs.begin(), outs.end()) == outs.end();
    for (auto [from, to] : outs)
      if (!liveId(from) || !liveId(to) || from == to)
        ctrlOk = false;
    if (!ctrlOk) {
      report(&g, g.loc, "control edge lists are inconsistent");
      ok = false;
    }
    return ok;
  }

  /// The node names of one graph seen so far, as an open-addressing set of
  /// node ids (no allocation per name).
  void startNames(size_t count) {
    size_t slots = 16;
    while (slots < 2 * count)
      slots *= 2;
    nameSlots_.assign(slots, kNoNode);
  }
  /// Adds node `id`'s (non-empty) name; false when an earlier node has it.
  bool addName(const Graph &g, NodeId id) {
    const std::string &name = g.node(id).name;
    const size_t mask = nameSlots_.size() - 1;
    for (size_t i = std::hash<std::string_view>{}(name)&mask;; i = (i + 1) & mask) {
      if (nameSlots_[i] == kNoNode) {
        nameSlots_[i] = id;
        return true;
      }
      if (g.node(nameSlots_[i]).name == name)
        return false;
    }
  }

  /// Kahn's algorithm over data and control edges (as Graph::findCycle
  /// follows them), counting only: it removes every live node exactly when
  /// there is no cycle. The edges must name live nodes (checkEdges).
  bool acyclic(const Graph &g, const std::vector<NodeId> &live) {
    indegree_.assign(g.capacity(), 0);
    for (NodeId id : live) {
      const Node &n = g.node(id);
      for (const std::vector<InPort> &cs : n.consumers)
        for (InPort c : cs)
          ++indegree_[c.node];
      for (NodeId t : n.ctrlOut)
        ++indegree_[t];
    }
    ready_.clear();
    for (NodeId id : live)
      if (indegree_[id] == 0)
        ready_.push_back(id);
    size_t removed = 0;
    while (!ready_.empty()) {
      const Node &n = g.node(ready_.back());
      ready_.pop_back();
      ++removed;
      for (const std::vector<InPort> &cs : n.consumers)
        for (InPort c : cs)
          if (--indegree_[c.node] == 0)
            ready_.push_back(c.node);
      for (NodeId t : n.ctrlOut)
        if (--indegree_[t] == 0)
          ready_.push_back(t);
    }
    return removed == live.size();
  }

  /// The consumer lists of `g` hold exactly the edges of its connected
  /// input slots (`edges` of them, `entries` list entries in all; every
  /// input names a live node and an existing port).
  bool consumersMatchInputs(const Graph &g, const std::vector<NodeId> &live, size_t edges,
                            size_t entries) {
    if (edges != entries)
      return false;
    // The first slot of each node in one flat array of marks.
    slotBase_.assign(g.capacity(), 0);
    size_t slots = 0;
    for (NodeId id : live) {
      slotBase_[id] = slots;
      slots += g.node(id).inputs.size();
    }
    slotSeen_.assign(slots, 0);
    for (NodeId id : live) {
      const Node &n = g.node(id);
      for (uint32_t k = 0; k < n.consumers.size(); ++k)
        for (InPort c : n.consumers[k]) {
          if (c.node >= g.capacity() || !g.node(c.node).alive)
            return false;
          const Node &reader = g.node(c.node);
          if (c.index >= reader.inputs.size() || reader.inputs[c.index] != OutPort{id, k})
            return false;
          uint8_t &seen = slotSeen_[slotBase_[c.node] + c.index];
          if (seen)
            return false;
          seen = 1;
        }
    }
    return true;
  }

  void checkNode(const Graph &g, const Node &n, OpKind kind) {
    if (!isIdentifier(n.type))
      report(&g, n.loc, fmt::format("op type '{}' of '{}' is not an identifier", n.type, n.name));
    // Whether some key is one checkMemoryAttrs reads (it finds nothing to
    // check otherwise).
    bool memoryKeys = false;
    for (const auto &[key, value] : n.attrs) {
      memoryKeys = memoryKeys || readByCheckMemoryAttrs(key);
      if (!isValidKey(key)) {
        report(&g, n.loc,
               fmt::format("attribute name '{}' of '{}' is not a valid key", key, n.name));
        continue;
      }
      if (key == "outputs" || key == "subgraphs") {
        report(&g, n.loc,
               fmt::format("attribute '{}' of '{}' is held by the node itself, not its "
                           "attribute map",
                           key, n.name));
        continue;
      }
      if (!isPrintableValue(value, 0))
        report(&g, n.loc,
               fmt::format("attribute '{}' of '{}' holds an invalid identifier", key, n.name));
      if (auto pk = parsePortKey(key)) {
        uint64_t limit = pk->output ? n.numOutputs : n.inputs.size();
        if (!pk->canonical)
          report(&g, n.loc, fmt::format("malformed port attribute '{}' of '{}'", key, n.name));
        else if (pk->index >= limit)
          report(&g, n.loc,
                 fmt::format("attribute '{}' names {} {} but '{}' has {}", key,
                             pk->output ? "output" : "input", pk->index, n.name,
                             plural(limit, pk->output ? "output" : "input")));
      }
    }
    if (memoryKeys)
      checkMemoryAttrs(g, n);

    if (isTensorMove(n)) {
      if (n.inputs.size() != 1)
        report(&g, n.loc,
               fmt::format("TensorMove '{}' must have exactly one input, has {}", n.name,
                           n.inputs.size()));
      else if (!n.inputs[0])
        report(&g, n.loc, fmt::format("input of TensorMove '{}' is not connected", n.name));
    }

    size_t subs = n.subgraphs.size();
    switch (kind) {
    case OpKind::Call:
      if (subs != 1)
        report(&g, n.loc, fmt::format("{} '{}' needs 1 subgraph, has {}", n.type, n.name, subs));
      break;
    case OpKind::If:
      if (subs != 2)
        report(&g, n.loc,
               fmt::format("{} '{}' needs 2 subgraphs (then, else), has {}", n.type, n.name, subs));
      break;
    case OpKind::While:
      if (subs != 2)
        report(&g, n.loc,
               fmt::format("{} '{}' needs 2 subgraphs (cond, body), has {}", n.type, n.name, subs));
      break;
    case OpKind::Case:
      if (subs < 1)
        report(&g, n.loc, fmt::format("{} '{}' needs at least 1 subgraph", n.type, n.name));
      break;
    default:
      if (subs != 0)
        report(&g, n.loc, fmt::format("{} '{}' cannot hold subgraphs", n.type, n.name));
    }
    if ((kind == OpKind::If || kind == OpKind::Case) && n.inputs.empty())
      report(&g, n.loc, fmt::format("{} '{}' needs its condition as input 0", n.type, n.name));
    if (kind == OpKind::While && n.numOutputs != n.inputs.size())
      report(&g, n.loc,
             fmt::format("{} '{}' has {} but {} (output j is input j)", n.type, n.name,
                         plural(n.numOutputs, "output"), plural(n.inputs.size(), "input")));
  }

  /// `v` is `n`'s attribute `name()` (the name is built only for a message).
  template <typename Name>
  void checkBool(const Graph &g, const Node &n, const AttrValue *v, Name name) {
    if (v && !v->isBool())
      report(&g, n.loc, fmt::format("{} of '{}' must be true or false", name(), n.name));
  }

  /// An attribute naming an input of `n`.
  template <typename Name>
  void checkInputIndex(const Graph &g, const Node &n, const AttrValue *v, Name name) {
    if (!v)
      return;
    if (!v->isInt()) {
      report(&g, n.loc, fmt::format("{} of '{}' must be an integer", name(), n.name));
      return;
    }
    if (v->asInt() < 0 || v->asInt() >= static_cast<int64_t>(n.inputs.size()))
      report(&g, n.loc,
             fmt::format("{} = {} out of range for '{}' with {}", name(), v->asInt(), n.name,
                         plural(n.inputs.size(), "input")));
  }

  /// The keys checkMemoryAttrs looks up: without one, every lookup finds
  /// nothing and no check applies.
  static bool readByCheckMemoryAttrs(const std::string &key) {
    return key.starts_with("out") || key == "_input_mutable" || key == "continuous_input" ||
           key == "_no_padding_continuous_input" || key == "ref_var_src_var_name" ||
           key == "max_iterations";
  }

  void checkMemoryAttrs(const Graph &g, const Node &n) {
    for (const char *key : {"_input_mutable", "continuous_input", "_no_padding_continuous_input"})
      checkBool(g, n, n.attr(key), [&] { return std::string(key); });
    if (const AttrValue *v = n.attr("ref_var_src_var_name"); v && !v->text())
      report(&g, n.loc, fmt::format("ref_var_src_var_name of '{}' must be a name", n.name));
    if (const AttrValue *v = n.attr("max_iterations"); v && (!v->isInt() || v->asInt() < 0))
      report(&g, n.loc,
             fmt::format("max_iterations of '{}' must be a non-negative integer", n.name));
    for (uint32_t k = 0; k < n.numOutputs; ++k) {
      auto key = [&](const char *attr) { return Node::portKey(true, k, attr); };
      auto named = [&](const char *attr) { return [&key, attr] { return key(attr); }; };
      checkInputIndex(g, n, n.portAttr(true, k, "ref_input"), named("ref_input"));
      const AttrValue *reuse = n.portAttr(true, k, "reuse_input");
      const AttrValue *reuseIndex = n.portAttr(true, k, "reuse_input_index");
      checkBool(g, n, reuse, named("reuse_input"));
      checkInputIndex(g, n, reuseIndex, named("reuse_input_index"));
      if (reuse && reuse->isBool() && reuse->asBool() && !reuseIndex && n.inputs.empty())
        report(&g, n.loc,
               fmt::format("{} of '{}' views input 0, but it has no inputs", key("reuse_input"),
                           n.name));
      if (const AttrValue *v = n.portAttr(true, k, "ref_var_src_var_name"); v && !v->text())
        report(&g, n.loc,
               fmt::format("{} of '{}' must be a name", key("ref_var_src_var_name"), n.name));
      bool described = true;
      const AttrValue *d = n.portAttr(true, k, "dtype");
      if (d) {
        const std::string *t = d->text();
        if (!t || !dtypeSize(*t)) {
          report(&g, n.loc,
                 t ? fmt::format("unknown dtype '{}' in {} of '{}'", *t, key("dtype"), n.name)
                   : fmt::format("{} of '{}' must be a dtype name", key("dtype"), n.name));
          described = false;
        }
      }
      const AttrValue *s = n.portAttr(true, k, "shape");
      if (s) {
        bool ok = s->isList();
        if (ok)
          for (const AttrValue &dim : s->asList())
            if (!dim.isInt() || dim.asInt() < 0)
              ok = false;
        if (!ok) {
          report(&g, n.loc,
                 fmt::format("{} of '{}' must be a list of non-negative integers", key("shape"),
                             n.name));
          described = false;
        }
      }
      // Without a dtype or shape the port's default size is tiny.
      if ((d || s) && described && !outputBytes(n, k))
        report(
            &g, n.loc,
            fmt::format("output {} of '{}' is larger than {} bytes", k, n.name, kMaxBufferBytes));
    }
  }

  void checkRootData(const Graph &g, const Node &n, std::map<int64_t, const Node *> &seen) {
    const AttrValue *v = n.attr("index");
    if (!v)
      return;
    if (!v->isInt() || v->asInt() < 0) {
      report(&g, n.loc,
             fmt::format("index of {} '{}' must be a non-negative integer", n.type, n.name));
      return;
    }
    auto [it, fresh] = seen.emplace(v->asInt(), &n);
    if (!fresh)
      report(&g, n.loc,
             fmt::format("duplicate {} index {} (also on '{}')", n.type, v->asInt(),
                         it->second->name));
  }

  void checkSubgraphData(const Graph &g, const Node &n, const Node &parent,
                         std::map<int64_t, const Node *> &seen) {
    const AttrValue *v = n.attr("_parent_node_index");
    if (!v) {
      report(&g, n.loc,
             fmt::format("{} '{}' in subgraph '{}' has no _parent_node_index", n.type, n.name,
                         g.name));
      return;
    }
    if (!v->isInt()) {
      report(&g, n.loc, fmt::format("_parent_node_index of '{}' must be an integer", n.name));
      return;
    }
    int64_t p = v->asInt();
    if (p < 0 || p >= static_cast<int64_t>(parent.inputs.size())) {
      report(&g, n.loc,
             fmt::format("_parent_node_index {} of '{}' out of range for '{}' with {}", p, n.name,
                         parent.name, plural(parent.inputs.size(), "input")));
      return;
    }
    auto [it, fresh] = seen.emplace(p, &n);
    if (!fresh)
      report(&g, n.loc,
             fmt::format("duplicate _parent_node_index {} in subgraph '{}' (also on '{}')", p,
                         g.name, it->second->name));
  }

  void checkSubgraphNetOutput(const Graph &g, const Node &n, const Node &parent) {
    std::map<int64_t, uint32_t> seen;
    for (uint32_t k = 0; k < n.inputs.size(); ++k) {
      std::string key = Node::portKey(false, k, "_parent_node_index");
      const AttrValue *v = n.attr(key);
      if (!v)
        continue;
      if (!v->isInt()) {
        report(&g, n.loc, fmt::format("{} of '{}' must be an integer", key, n.name));
        continue;
      }
      int64_t j = v->asInt();
      if (j < 0 || j >= static_cast<int64_t>(parent.numOutputs)) {
        report(&g, n.loc,
               fmt::format("{} = {} of '{}' out of range for '{}' with {}", key, j, n.name,
                           parent.name, plural(parent.numOutputs, "output")));
        continue;
      }
      auto [it, fresh] = seen.emplace(j, k);
      if (!fresh)
        report(&g, n.loc,
               fmt::format("NetOutput '{}' hands back output {} of '{}' twice (inputs {} and {})",
                           n.name, j, parent.name, it->second, k));
    }
  }

  /// The parent output indices a subgraph's NetOutput produces (valid ones).
  std::set<int64_t> producedOutputs(const Graph &sub, const Node &parent) const {
    std::set<int64_t> out;
    for (NodeId id : sub.liveNodes()) {
      const Node &n = sub.node(id);
      if (opKind(n) != OpKind::NetOutput)
        continue;
      for (uint32_t k = 0; k < n.inputs.size(); ++k)
        if (auto j = n.portIntAttr(false, k, "_parent_node_index"))
          if (*j >= 0 && *j < static_cast<int64_t>(parent.numOutputs))
            out.insert(*j);
    }
    return out;
  }

  /// Subgraph outputs agree with the holder: used outputs of a call or
  /// branch node are produced, branches agree, a While cond has a condition.
  void checkHolder(const Graph &g, const Node &n, OpKind kind) {
    if (kind != OpKind::Call && kind != OpKind::If && kind != OpKind::Case && kind != OpKind::While)
      return;
    std::vector<const Graph *> subs;
    for (GraphId s : n.subgraphs) {
      if (s >= m_.numGraphs() || !m_.graph(s).alive || s == 0 || owner_[s].graph != g.id ||
          owner_[s].node != n.id)
        return; // already reported
      subs.push_back(&m_.graph(s));
    }
    if (subs.empty())
      return;
    if (kind == OpKind::While) {
      if (subs.size() != 2)
        return;
      bool hasCondition = false;
      for (NodeId id : subs[0]->liveNodes()) {
        const Node &c = subs[0]->node(id);
        if (opKind(c) == OpKind::NetOutput && !c.inputs.empty() && c.inputs[0])
          hasCondition = true;
      }
      if (!hasCondition)
        report(&g, n.loc,
               fmt::format("cond subgraph '{}' of {} '{}' has no NetOutput input 0 for the "
                           "condition",
                           subs[0]->name, n.type, n.name));
      return;
    }
    std::set<int64_t> first = producedOutputs(*subs[0], n);
    for (size_t b = 1; b < subs.size(); ++b) {
      std::set<int64_t> other = producedOutputs(*subs[b], n);
      if (other != first) {
        report(&g, n.loc,
               fmt::format("branches of '{}' disagree on outputs: '{}' produces {}, '{}' "
                           "produces {}",
                           n.name, subs[0]->name, indexList(first), subs[b]->name,
                           indexList(other)));
        return;
      }
    }
    for (uint32_t j = 0; j < n.numOutputs && j < n.consumers.size(); ++j)
      if (!n.consumers[j].empty() && !first.count(j))
        report(&g, n.loc,
               fmt::format("output {} of '{}' is used but subgraph '{}' does not produce it", j,
                           n.name, subs[0]->name));
  }

  const Module &m_;
  ModuleTypes *typesOut_; ///< where a caller wants the inferred types
  Diagnostics diags_;
  std::vector<Owner> owner_;
  /// consumersMatchInputs' and acyclic's scratch, kept across graphs.
  std::vector<size_t> slotBase_;
  std::vector<uint8_t> slotSeen_;
  std::vector<uint32_t> indegree_;
  std::vector<NodeId> ready_;
  std::vector<NodeId> nameSlots_; ///< startNames / addName
};

} // namespace

// key := ident ('.' ident)*
bool isValidKey(const std::string &key) {
  size_t start = 0;
  while (true) {
    size_t dot = key.find('.', start);
    std::string_view part(key);
    part = part.substr(start, dot == std::string::npos ? dot : dot - start);
    if (!isIdentifier(part))
      return false;
    if (dot == std::string::npos)
      return true;
    start = dot + 1;
  }
}

Diagnostics verifyModule(const Module &m, ModuleTypes *types) {
  return Verifier(m, types).run();
}

} // namespace graphvet
