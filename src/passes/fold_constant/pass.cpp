// fold-constant, the driver: each live graph is swept once in topological
// order (parents before subgraphs, as canonicalGraphOrder lists them). A
// node is folded before any of its consumers is visited, so a chain of
// constant computations folds in the same sweep; the nodes an inlined If
// brings in are queued right after it, before the If's consumers. Every
// node is visited at most once, and inlining only moves existing nodes, so
// the sweep is bounded by the module's size.
#include "passes/fold_constant/fold_internal.h"

#include "ir/op_library.h"

#include <fmt/format.h>

#include <deque>

namespace graphvet::fold {

void Env::remark(GraphId g, NodeId n, std::string decision, std::string tag, std::string message) {
  if (!remarks)
    return;
  const Graph &graph = m.graph(g);
  remarks->push_back(nodeRemark(kPass, graph, graph.node(n), std::move(decision), std::move(tag),
                                std::move(message)));
}

const TensorType *Env::typeOf(GraphId g, OutPort p) {
  if (typesStale) {
    Diagnostics ignored; // the verifier reports type errors; here they only hide a type
    types = inferModuleTypes(m, ignored);
    typesStale = false;
  }
  return types.of(g, p);
}

namespace {

int64_t constantBytes(const Module &m) {
  int64_t bytes = 0;
  for (GraphId g : m.canonicalGraphOrder())
    for (NodeId n : m.graph(g).liveNodes()) {
      const Node &node = m.graph(g).node(n);
      if (opKind(node) == OpKind::Weight)
        if (const Tensor *v = attrTensor(node, "value"))
          bytes += static_cast<int64_t>(v->bytes().size());
    }
  return bytes;
}

bool hasConsumers(const Node &n) {
  for (const std::vector<InPort> &uses : n.consumers)
    if (!uses.empty())
      return true;
  return false;
}

class Driver {
public:
  explicit Driver(Env &env) : env_(env) {}

  void run() {
    std::vector<GraphId> graphs = env_.m.canonicalGraphOrder();
    for (GraphId g : graphs)
      if (env_.m.graph(g).alive)
        sweep(g);
  }

private:
  void sweep(GraphId gid) {
    std::optional<std::vector<NodeId>> order = env_.m.graph(gid).topoOrder();
    if (!order)
      return; // the verifier reports the cycle
    std::deque<NodeId> work(order->begin(), order->end());
    // Each pop consumes one node; nodes are queued once each (the graph's
    // own, then each moved one), so the loop ends.
    while (!work.empty()) {
      NodeId id = work.front();
      work.pop_front();
      const Graph &g = env_.m.graph(gid);
      if (!g.node(id).alive || !hasConsumers(g.node(id)))
        continue;
      if (env_.options.inlineIf && opKind(g.node(id)) == OpKind::If) {
        std::vector<NodeId> moved;
        std::string ifName = g.node(id).name;
        SourceLoc loc = g.node(id).loc;
        auto r = tryInlineIf(env_, gid, id, moved);
        if (auto *refusal = std::get_if<Refusal>(&r)) {
          refuse(gid, id, *refusal);
        } else if (auto *message = std::get_if<std::string>(&r)) {
          ++env_.stats.ifsInlined;
          if (env_.remarks) {
            Remark rm{std::string(kPass),     ifName, "inlined", "if-inlined", *message,
                      env_.m.graph(gid).name, loc};
            env_.remarks->push_back(std::move(rm));
          }
          work.insert(work.begin(), moved.begin(), moved.end());
        }
        continue;
      }
      const Node &n = g.node(id);
      bool shapeOp = env_.options.foldShapeOps && (n.type == "Shape" || n.type == "Size");
      Outcome outcome = shapeOp ? tryShape(env_, gid, id) : tryEvaluate(env_, gid, id);
      if (auto *refusal = std::get_if<Refusal>(&outcome)) {
        refuse(gid, id, *refusal);
      } else if (auto *folded = std::get_if<Folded>(&outcome)) {
        if (std::optional<Refusal> r = resultRefusal(env_, gid, id)) {
          refuse(gid, id, *r);
          continue;
        }
        std::string name = n.name, how = folded->how;
        std::string what = describe(*folded, n);
        std::vector<NodeId> consts = replaceWithConstants(env_, gid, id, std::move(*folded));
        if (shapeOp)
          ++env_.stats.shapeFolded;
        else
          ++env_.stats.folded;
        if (!consts.empty())
          env_.remark(gid, consts.front(), "folded", shapeOp ? "shape" : "folded",
                      fmt::format("folded {} into {}: {}", name, what, how));
      }
    }
  }

  /// "Const f32[2], f32[2]": the types of the Consts that replace the node.
  static std::string describe(const Folded &f, const Node &n) {
    std::string s;
    for (size_t k = 0; k < f.values.size(); ++k) {
      if (k >= n.consumers.size() || n.consumers[k].empty())
        continue;
      s += (s.empty() ? "" : ", ") + f.values[k].type().str();
    }
    return "Const " + s;
  }

  void refuse(GraphId g, NodeId n, const Refusal &r) {
    ++env_.stats.refused[r.tag];
    env_.remark(g, n, "kept", r.tag,
                fmt::format("kept {}: {}", env_.m.graph(g).node(n).name, r.why));
  }

  Env &env_;
};

} // namespace
} // namespace graphvet::fold

namespace graphvet {

FoldConstantStats runFoldConstant(Module &m, const FoldConstantOptions &options,
                                  std::vector<Remark> *remarks) {
  FoldConstantStats stats;
  stats.constBytesBefore = fold::constantBytes(m);
  fold::Env env{m, options, remarks, stats, {}, true, nullptr, {}};
  fold::Driver(env).run();
  stats.constBytesAfter = fold::constantBytes(m);
  return stats;
}

} // namespace graphvet
