// DeadCodeEliminationPass; see dce.h. Liveness flows backwards: a node is live
// when it is structural (NetOutput, Data), has an effect, or some consumer or
// control-edge target is live. One reverse topological sweep per graph
// decides every node, because all of a node's consumers come after it in
// that order; graphs are visited parents first, so a subgraph is swept only
// when its holder stayed.
#include "passes/dce.h"

#include "ir/op_library.h"

#include <optional>
#include <string>

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

class DcePass {
public:
  DcePass(Module &m, const DceOptions &options, std::vector<Remark> *remarks)
      : m_(m), options_(options), remarks_(remarks), effectful_(m.numGraphs(), 0) {}

  DceStats run() {
    std::vector<GraphId> order = m_.canonicalGraphOrder();
    for (GraphId g : order)
      stats_.nodesBefore += static_cast<int64_t>(m_.graph(g).numLiveNodes());
    // Children after parents in canonical order: reversed, a subgraph's
    // effects are known before its holder is looked at.
    for (auto it = order.rbegin(); it != order.rend(); ++it)
      effectful_[*it] = graphHasEffect(*it) ? 1 : 0;
    for (GraphId g : order)
      if (m_.graph(g).alive)
        sweep(g);
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

  void sweep(GraphId gid) {
    Graph &g = m_.graph(gid);
    std::optional<std::vector<NodeId>> order = g.topoOrder();
    if (!order)
      return; // a cyclic graph fails verification; leave it as it is
    std::vector<char> live(g.capacity(), 0);
    std::vector<NodeId> dead;
    for (auto it = order->rbegin(); it != order->rend(); ++it) {
      const Node &n = g.node(*it);
      bool used = false;
      for (const std::vector<InPort> &cs : n.consumers)
        for (const InPort &c : cs)
          used = used || live[c.node];
      // A control edge orders the node before something that stays: removing
      // it would drop the ordering of its own predecessors too.
      for (NodeId t : n.ctrlOut)
        used = used || live[t];
      if (used || structural(n)) {
        live[*it] = 1;
        continue;
      }
      if (std::optional<Effect> e = effectOf(n)) {
        live[*it] = 1;
        ++stats_.keptForEffect;
        if (options_.remarkKeptEffects)
          remark(g, n, "kept", e->tag, "kept " + n.name + ": unused but " + e->why);
        continue;
      }
      dead.push_back(*it);
    }
    // `dead` is in reverse topological order: consumers go before producers.
    for (NodeId id : dead) {
      const Node &n = g.node(id);
      if (n.subgraphs.empty()) {
        remark(g, n, "removed", "dead", "removed " + n.name + ": no use reaches an output");
        ++stats_.removed;
      } else {
        std::string names;
        for (GraphId sub : n.subgraphs) {
          names += (names.empty() ? "" : ", ") + m_.graph(sub).name;
          stats_.removed += countNodes(sub);
          ++stats_.subgraphsRemoved;
        }
        remark(g, n, "removed", "dead-holder",
               "removed " + n.name + " with subgraphs " + names + ": no use and no effect");
        ++stats_.removed;
        for (GraphId sub : std::vector<GraphId>(n.subgraphs))
          m_.removeGraph(sub);
      }
      g.removeNode(id);
    }
  }

  Module &m_;
  const DceOptions &options_;
  std::vector<Remark> *remarks_;
  std::vector<char> effectful_;
  DceStats stats_;
};

} // namespace

DceStats runDce(Module &m, const DceOptions &options, std::vector<Remark> *remarks) {
  return DcePass(m, options, remarks).run();
}

} // namespace graphvet
