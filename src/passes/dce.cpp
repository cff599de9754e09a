// DeadCodeEliminationPass; see dce.h. Liveness flows backwards: a node is live
// when it is structural (NetOutput, Data), has an effect, or has a consumer or
// a control-edge target left. The sweep visits a graph in reverse topological
// order and removes a dead node at once, so every node's consumers are
// already decided (and the dead ones gone) when it is reached. A live holder
// is handled where it stands: its unused outputs are dropped with the
// subgraph results that produce them, its subgraphs are swept (recursively),
// then its inputs no subgraph reads are dropped, all before the sweep reaches
// the holder's producers. Each node is thus decided once: linear time, and
// one run reaches the fixpoint.
#include "passes/dce.h"

#include "ir/op_library.h"
#include "passes/port_surgery.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>

namespace graphvet {
namespace {

/// Why a node must stay even when nothing reads it.
struct Effect {
  std::string tag;
  std::string why;
};

/// The reserved attributes of tensor-move-delete.md that forbid deleting a
/// node whatever its type: `_cannot_be_deleted = true` (or "true") and any
/// `no_need_constant_folding`.
bool isReserved(const Node &n) {
  if (n.attr("no_need_constant_folding"))
    return true;
  const AttrValue *v = n.attr("_cannot_be_deleted");
  return v && ((v->isBool() && v->asBool()) || (v->isString() && v->asString() == "true"));
}

bool hasConsumer(const Node &n) {
  for (const std::vector<InPort> &cs : n.consumers)
    if (!cs.empty())
      return true;
  return false;
}

const char *const kParentIndex = "_parent_node_index";

/// Output k carries a memory attribute (a ref or view of an input, or a
/// variable binding): it is part of the node's memory contract, not only a
/// value, so it is never dropped.
bool aliasAttrs(const Node &n, uint32_t k) {
  for (const char *attr : {"ref_input", "reuse_input", "reuse_input_index"})
    if (n.portAttr(true, k, attr))
      return true;
  return refVarSrcName(n, k) != nullptr || aliasedInput(n, k).has_value();
}

class DcePass {
public:
  DcePass(Module &m, const DceOptions &options, std::vector<Remark> *remarks)
      : m_(m), options_(options), remarks_(remarks), effectful_(m.numGraphs(), 0) {}

  DceStats run() {
    std::vector<GraphId> order = m_.canonicalGraphOrder();
    for (GraphId g : order)
      stats_.nodesBefore += static_cast<int64_t>(m_.graph(g).numLiveNodes());
    // Children after parents in canonical order: reversed, a subgraph's
    // effects are known before its holder is looked at. Removing results
    // and inputs never removes an effect, so these stay true.
    for (auto it = order.rbegin(); it != order.rend(); ++it)
      effectful_[*it] = graphHasEffect(*it) ? 1 : 0;
    if (options_.naive && !order.empty())
      removeDeadIteratively(order.front());
    if (!order.empty())
      sweep(order.front());
    return stats_;
  }

private:
  std::optional<Effect> effectOf(const Node &n) const {
    if (isReserved(n))
      return Effect{"reserved-attr", "a reserved attribute forbids deleting it"};
    for (uint32_t k = 0; k < n.numOutputs; ++k)
      if (const std::string *var = refVarSrcName(n, k))
        return Effect{"effect-variable-bound",
                      "output " + std::to_string(k) + " writes variable " + *var};
    if (std::vector<uint32_t> written = refWrittenInputs(n); !written.empty())
      return Effect{"effect-ref-write",
                    "writes input " + std::to_string(written.front()) + " in place"};
    if (isInputMutable(n))
      return Effect{"effect-input-mutable", "scribbles on its inputs"};
    if (opKind(n) == OpKind::While)
      return Effect{"effect-loop", "a While writes its loop variables in place"};
    for (GraphId sub : n.subgraphs)
      if (sub < effectful_.size() && effectful_[sub])
        return Effect{"effect-subgraph", "subgraph " + m_.graph(sub).name + " has an effect"};
    if (opKind(n) == OpKind::Variable)
      return Effect{"variable", "a variable is part of the graph's interface"};
    if (!options_.removeUnusedWeights && opKind(n) == OpKind::Weight)
      return Effect{"weight", "unused weights are kept (removeUnusedWeights = false)"};
    return std::nullopt;
  }

  bool graphHasEffect(GraphId g) const {
    const Graph &graph = m_.graph(g);
    for (NodeId id : graph.liveNodes())
      if (effectOf(graph.node(id)))
        return true;
    return false;
  }

  static bool structural(const Node &n) {
    OpKind k = opKind(n);
    return k == OpKind::NetOutput || k == OpKind::DataSource;
  }

  void remark(const Graph &g, const Node &n, const char *decision, std::string tag,
              std::string message) {
    if (!remarks_)
      return;
    remarks_->push_back(nodeRemark(kDceName, g, n, decision, std::move(tag), std::move(message)));
  }

  int64_t countNodes(GraphId g) const {
    int64_t count = 0;
    std::vector<GraphId> work{g};
    while (!work.empty()) {
      const Graph &graph = m_.graph(work.back());
      work.pop_back();
      if (!graph.alive)
        continue;
      count += static_cast<int64_t>(graph.numLiveNodes());
      for (NodeId id : graph.liveNodes())
        for (GraphId sub : graph.node(id).subgraphs)
          work.push_back(sub);
    }
    return count;
  }

  std::string subgraphNames(const Node &n) const {
    std::string names;
    for (GraphId sub : n.subgraphs)
      names += (names.empty() ? "" : ", ") + m_.graph(sub).name;
    return names;
  }

  void sweep(GraphId gid) {
    Graph &g = m_.graph(gid);
    std::optional<std::vector<NodeId>> order = g.topoOrder();
    if (!order)
      return; // a cyclic graph fails verification; leave it as it is
    // pending[p]: holders that p was ordered before through a removed input.
    Pending pending(g.capacity());
    for (auto it = order->rbegin(); it != order->rend(); ++it) {
      const NodeId id = *it;
      const Node &n = g.node(id);
      // Dead consumers and dead control-edge targets come later in the
      // topological order, so they are gone already: what is left is live.
      // A control edge orders the node before something that stays, and
      // removing it would drop the ordering of its own predecessors too.
      if (hasConsumer(n) || !n.ctrlOut.empty() || structural(n)) {
        keepOrder(g, id, pending);
        if (!n.subgraphs.empty())
          liveHolder(gid, id, pending);
        continue;
      }
      if (std::optional<Effect> e = effectOf(n)) {
        ++stats_.keptForEffect;
        if (options_.remarkKeptEffects)
          remark(g, n, "kept", e->tag, "kept " + n.name + ": unused but " + e->why);
        keepOrder(g, id, pending);
        if (!n.subgraphs.empty())
          liveHolder(gid, id, pending);
        continue;
      }
      if (g.numLiveNodes() == 1 && carriesCallOrder(g)) {
        remark(g, n, "kept", "call-order",
               "kept " + n.name +
                   ": the last node of a call body carries the call's "
                   "control edges");
        ++stats_.keptForEffect;
        continue;
      }
      passOrderOn(g, id, pending);
      removeDead(gid, id);
    }
  }

  /// The naive baseline: scans of graph `gid` in id order, each removing
  /// the nodes the sweep would remove that hold no subgraph and owe no
  /// order (nothing is pending before the sweep), until a scan removes
  /// nothing. A node is dead only once its consumers are gone, so a chain
  /// of k dead nodes takes k scans.
  void removeDeadIteratively(GraphId gid) {
    Graph &g = m_.graph(gid);
    for (bool changed = true; changed;) {
      changed = false;
      for (NodeId id : g.liveNodes()) {
        const Node &n = g.node(id);
        if (hasConsumer(n) || !n.ctrlOut.empty() || structural(n) || !n.subgraphs.empty() ||
            effectOf(n))
          continue;
        removeDead(gid, id);
        changed = true;
      }
    }
  }

  /// A call with control edges orders every node of its body; an empty body
  /// would order nothing, so the last node of such a body stays.
  bool carriesCallOrder(const Graph &g) const {
    const Node *call = callOf(g);
    return call && (!call->ctrlIn.empty() || !call->ctrlOut.empty());
  }

  using Pending = std::vector<std::vector<NodeId>>;

  /// Sources that execute nothing (semantics.md §2): an ordering edge from
  /// one constrains nothing unless control edges order it after something.
  /// Not so a parameter of a call body: the call is transparent, so the
  /// parameter stands for the caller's producer, which its readers must
  /// follow (the edge also keeps the parameter, hence the call's input).
  /// A branch or loop parameter is ordered by its holder's input edge,
  /// whose removal carries the obligation one level up.
  bool inertSource(const Graph &g, const Node &n) const {
    OpKind k = opKind(n);
    if (!n.ctrlIn.empty())
      return false;
    if (k == OpKind::Variable || k == OpKind::Weight)
      return true;
    if (k != OpKind::DataSource)
      return false;
    if (g.parentGraph == kNoGraph || g.parentGraph >= m_.numGraphs())
      return true; // the root: a user input
    const Graph &parent = m_.graph(g.parentGraph);
    return g.parentNode < parent.capacity() && opKind(parent.node(g.parentNode)) != OpKind::Call;
  }

  static void sortUnique(std::vector<NodeId> &v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }

  /// Live node `id` was ordered before the holders in pending[id] by a data
  /// edge into an input that was removed: a control edge keeps that order
  /// (unless another edge already does, or `id` executes nothing).
  void keepOrder(Graph &g, NodeId id, Pending &pending) {
    if (pending[id].empty())
      return;
    sortUnique(pending[id]);
    const Node &n = g.node(id);
    if (deferToCaller(g, n)) {
      // The parameter goes with its call input; the caller's producer of
      // that input is then ordered before the whole call (trimInputs).
      obligedParams_.insert({g.id, id});
      pending[id].clear();
      return;
    }
    if (!inertSource(g, n))
      for (NodeId h : pending[id]) {
        const Node &holder = g.node(h);
        bool ordered =
            std::find(holder.ctrlIn.begin(), holder.ctrlIn.end(), id) != holder.ctrlIn.end();
        // A data edge from a call orders only the body node producing that
        // result; a control edge from it orders every node inside.
        if (opKind(n) != OpKind::Call)
          for (const std::optional<OutPort> &in : holder.inputs)
            ordered = ordered || (in && in->node == id);
        if (ordered || !g.addCtrlEdge(id, h))
          continue;
        ++stats_.orderEdgesAdded;
        remark(g, holder, "kept", "order-kept",
               "added control edge " + n.name + " -> " + holder.name + ": " + n.name +
                   " was ordered before " + holder.name + " through a removed input");
      }
    pending[id].clear();
  }

  /// The holder of graph `g` when `g` is a call body, else nullptr.
  const Node *callOf(const Graph &g) const {
    if (g.parentGraph == kNoGraph || g.parentGraph >= m_.numGraphs())
      return nullptr;
    const Graph &parent = m_.graph(g.parentGraph);
    if (g.parentNode >= parent.capacity())
      return nullptr;
    const Node &h = parent.node(g.parentNode);
    return opKind(h) == OpKind::Call ? &h : nullptr;
  }

  /// An unread parameter of a call body whose input the call will drop: an
  /// order it owes is owed by the caller's producer instead (a control edge
  /// to the call applies to every node inside it).
  bool deferToCaller(const Graph &g, const Node &n) const {
    const Node *call = callOf(g);
    return call && opKind(n) == OpKind::DataSource && !hasConsumer(n) && n.ctrlOut.empty() &&
           n.ctrlIn.empty() && !isReserved(n) && inputsTrimmable(*call);
  }

  /// Dead node `id` goes; the holders it was ordered before through a
  /// removed input must still come after its own predecessors.
  static void passOrderOn(const Graph &g, NodeId id, Pending &pending) {
    if (pending[id].empty())
      return;
    sortUnique(pending[id]);
    const Node &n = g.node(id);
    for (const std::optional<OutPort> &in : n.inputs)
      if (in)
        pending[in->node].insert(pending[in->node].end(), pending[id].begin(), pending[id].end());
    for (NodeId c : n.ctrlIn)
      pending[c].insert(pending[c].end(), pending[id].begin(), pending[id].end());
    pending[id].clear();
  }

  void removeDead(GraphId gid, NodeId id) {
    Graph &g = m_.graph(gid);
    const Node &n = g.node(id);
    if (n.subgraphs.empty()) {
      remark(g, n, "removed", "dead", "removed " + n.name + ": no use reaches an output");
      ++stats_.removed;
    } else {
      for (GraphId sub : n.subgraphs) {
        stats_.removed += countNodes(sub);
        ++stats_.subgraphsRemoved;
      }
      remark(g, n, "removed", "dead-holder",
             "removed " + n.name + " with subgraphs " + subgraphNames(n) +
                 ": no use and no effect");
      ++stats_.removed;
      for (GraphId sub : std::vector<GraphId>(n.subgraphs))
        m_.removeGraph(sub);
    }
    g.removeNode(id);
  }

  /// A holder that stays: trims what its subgraphs compute for nobody and
  /// what they never read, and sweeps them.
  void liveHolder(GraphId gid, NodeId id, Pending &pending) {
    const Node &n = m_.graph(gid).node(id);
    OpKind kind = opKind(n);
    bool trimmable = portsTrimmable(n);
    if (kind == OpKind::While)
      keepLoopOutputs(gid, id);
    if (trimmable)
      trimOutputs(gid, id);
    for (GraphId sub : std::vector<GraphId>(m_.graph(gid).node(id).subgraphs))
      if (sub < m_.numGraphs() && m_.graph(sub).alive)
        sweep(sub);
    if (trimmable && inputsTrimmable(m_.graph(gid).node(id)))
      trimInputs(gid, id, pending);
  }

  static bool portsTrimmable(const Node &h) {
    OpKind kind = opKind(h);
    return (kind == OpKind::Call || kind == OpKind::If || kind == OpKind::Case) && !isReserved(h);
  }

  /// Output attributes naming an input (`outK.ref_input`,
  /// `outK.reuse_input_index`, a default view of input 0) and a demand for
  /// contiguous inputs make the input list part of the memory contract.
  static bool inputsTrimmable(const Node &h) {
    if (!portsTrimmable(h) || needsContinuousInput(h))
      return false;
    for (uint32_t k = 0; k < h.numOutputs; ++k)
      if (aliasAttrs(h, k))
        return false;
    return true;
  }

  /// A While's output j is its loop variable j, written in place by every
  /// iteration and read by the next one: an unused output is still state of
  /// the loop, so it stays; the remark says so.
  void keepLoopOutputs(GraphId gid, NodeId id) {
    const Graph &g = m_.graph(gid);
    const Node &n = g.node(id);
    std::string unused;
    int64_t count = 0;
    for (uint32_t k = 0; k < n.numOutputs; ++k)
      if (n.consumers[k].empty()) {
        unused += (unused.empty() ? "" : ", ") + std::to_string(k);
        ++count;
      }
    if (count == 0)
      return;
    stats_.loopOutputsKept += count;
    remark(g, n, "kept", "loop-carried",
           "kept unused outputs " + unused + " of " + n.name +
               ": loop-carried state (written in place and read by the next iteration)");
  }

  /// Drops the holder's outputs nobody reads, with the NetOutput inputs of
  /// every subgraph that hand them back; the rest are renumbered.
  void trimOutputs(GraphId gid, NodeId id) {
    Graph &g = m_.graph(gid);
    const Node &h = g.node(id);
    std::vector<char> keep(h.numOutputs, 1);
    bool any = false;
    for (uint32_t k = 0; k < h.numOutputs; ++k)
      if (h.consumers[k].empty() && !aliasAttrs(h, k)) {
        keep[k] = 0;
        any = true;
      }
    if (!any)
      return;
    PortMap map = compactingMap(keep);
    for (GraphId sub : h.subgraphs) {
      Graph &sg = m_.graph(sub);
      for (NodeId o : sg.liveNodes()) {
        if (opKind(sg.node(o)) != OpKind::NetOutput)
          continue;
        const size_t numIn = sg.node(o).inputs.size();
        std::vector<char> keepIn(numIn, 1);
        for (size_t i = 0; i < numIn; ++i) {
          auto j = sg.node(o).portIntAttr(false, static_cast<uint32_t>(i), kParentIndex);
          if (j && *j >= 0 && *j < static_cast<int64_t>(keep.size()) && !keep[*j])
            keepIn[i] = 0;
        }
        compactInputs(sg, o, keepIn);
        Node &out = sg.node(o);
        for (uint32_t i = 0; i < out.inputs.size(); ++i) {
          std::string key = Node::portKey(false, i, kParentIndex);
          auto j = out.intAttr(key);
          if (j && *j >= 0 && *j < static_cast<int64_t>(map.size()))
            out.attrs[key] = AttrValue::ofInt(map[*j]);
        }
      }
    }
    for (uint32_t k = 0; k < keep.size(); ++k)
      if (!keep[k]) {
        ++stats_.deadOutputsRemoved;
        remark(g, h, "removed", "dead-output",
               "removed output " + std::to_string(k) + " of " + h.name +
                   " and its result in subgraphs " + subgraphNames(h) + ": no use");
      }
    compactOutputs(g, id, keep);
  }

  /// Drops the holder's inputs whose parameter (`Data` with that
  /// `_parent_node_index`) no subgraph reads; the branch selector of an
  /// If or Case is never dropped.
  void trimInputs(GraphId gid, NodeId id, Pending &pending) {
    Graph &g = m_.graph(gid);
    const Node &h = g.node(id);
    OpKind kind = opKind(h);
    const size_t numIn = h.inputs.size();
    std::vector<char> keep(numIn, 0);
    if (kind == OpKind::If || kind == OpKind::Case)
      for (size_t p = 0; p < numIn && p < 1; ++p)
        keep[p] = 1;
    // Parameters by parent index, over every subgraph.
    std::vector<std::vector<std::pair<GraphId, NodeId>>> params(numIn);
    for (GraphId sub : h.subgraphs) {
      const Graph &sg = m_.graph(sub);
      for (NodeId d : sg.liveNodes()) {
        const Node &dn = sg.node(d);
        if (opKind(dn) != OpKind::DataSource)
          continue;
        auto p = dn.intAttr(kParentIndex);
        if (!p || *p < 0 || *p >= static_cast<int64_t>(numIn))
          continue;
        params[*p].push_back({sub, d});
        if (hasConsumer(dn) || !dn.ctrlOut.empty() || !dn.ctrlIn.empty() || isReserved(dn))
          keep[*p] = 1;
      }
    }
    // Control edges to or from a call order every node inside it, so they
    // order nothing through an empty body: a call with control edges keeps
    // at least one node in each subgraph (the first parameter that would go).
    if (kind == OpKind::Call && (!h.ctrlIn.empty() || !h.ctrlOut.empty()))
      for (GraphId sub : h.subgraphs) {
        size_t going = 0;
        size_t first = numIn;
        for (size_t p = 0; p < numIn; ++p)
          for (auto [psub, d] : params[p])
            if (psub == sub && !keep[p]) {
              ++going;
              first = std::min(first, p);
            }
        if (going > 0 && going == m_.graph(sub).numLiveNodes())
          keep[first] = 1;
      }
    bool any = false;
    for (char k : keep)
      any = any || !k;
    if (!any)
      return;
    for (size_t p = 0; p < numIn; ++p) {
      if (keep[p])
        continue;
      ++stats_.unusedInputsRemoved;
      remark(g, h, "removed", "unused-input",
             "removed input " + std::to_string(p) + " of " + h.name + ": no subgraph of " +
                 subgraphNames(h) + " reads it");
      // A data edge into a branch node orders its producer before the
      // whole step; one into a (transparent) call orders it only before the
      // parameter's readers, which are gone, unless the parameter owed an
      // order to a node of the body (deferToCaller).
      bool owed = kind != OpKind::Call;
      for (auto [sub, d] : params[p]) {
        owed = owed || obligedParams_.count({sub, d}) > 0;
        m_.graph(sub).removeNode(d);
        ++stats_.removed;
      }
      if (const std::optional<OutPort> &src = h.inputs[p]; src && owed)
        pending[src->node].push_back(id);
    }
    compactInputs(g, id, keep);
    PortMap map = compactingMap(keep);
    for (GraphId sub : g.node(id).subgraphs) {
      Graph &sg = m_.graph(sub);
      for (NodeId d : sg.liveNodes()) {
        Node &dn = sg.node(d);
        if (opKind(dn) != OpKind::DataSource)
          continue;
        auto p = dn.intAttr(kParentIndex);
        if (p && *p >= 0 && *p < static_cast<int64_t>(map.size()))
          dn.attrs[kParentIndex] = AttrValue::ofInt(map[*p]);
      }
    }
  }

  Module &m_;
  const DceOptions &options_;
  std::vector<Remark> *remarks_;
  std::vector<char> effectful_;
  /// Call-body parameters whose call input owes an order (deferToCaller).
  std::set<std::pair<GraphId, NodeId>> obligedParams_;
  DceStats stats_;
};

} // namespace

DceStats runDce(Module &m, const DceOptions &options, std::vector<Remark> *remarks) {
  return DcePass(m, options, remarks).run();
}

} // namespace graphvet
