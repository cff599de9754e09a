// The simplify pass's one worklist driver: applies the rule table to a
// fixpoint. Each sweep infers the module's types once, then walks every graph
// with a worklist seeded in topological order; a rewrite pushes the nodes it
// creates and the consumers of the replaced value, so chains collapse within
// one sweep. Sweeps repeat until one changes nothing (bounded by options).
#include "ir/op_library.h"
#include "passes/simplify/match.h"
#include "passes/simplify/simplify.h"

#include <algorithm>

#include <deque>
#include <set>

namespace graphvet {

using rewrite::Rule;
using simplify::Match;
using simplify::Refusal;

namespace {

class SimplifyDriver {
public:
  SimplifyDriver(Module &m, const SimplifyOptions &options, std::vector<Remark> *remarks)
      : m_(m), options_(options), remarks_(remarks) {}

  SimplifyStats run() {
    for (int sweep = 0; sweep < options_.maxSweeps; ++sweep) {
      ++stats_.sweeps;
      // A node whose type is unknown simply matches nothing.
      std::shared_ptr<const ModuleTypes> inferred = takeOrInferTypes(m_, options_.inputTypes);
      simplify::TypeTable types(*inferred);
      simplify::Safety safety(m_, options_.analysisBudget);
      bool changed = false;
      for (GraphId g : m_.canonicalGraphOrder())
        changed = runGraph(g, types, safety) || changed;
      if (!changed)
        return stats_;
    }
    stats_.boundReached = true;
    return stats_;
  }

private:
  bool runGraph(GraphId gid, simplify::TypeTable &types, simplify::Safety &safety) {
    Graph &g = m_.graph(gid);
    std::optional<std::vector<NodeId>> order = g.topoOrder();
    if (!order)
      return false;
    std::deque<NodeId> work(order->begin(), order->end());
    std::vector<bool> queued(g.capacity(), true);
    int64_t budget = static_cast<int64_t>(options_.maxRewritesPerNode) *
                     static_cast<int64_t>(g.numLiveNodes() + 1);
    bool changed = false;
    auto push = [&](NodeId n) {
      if (n >= queued.size())
        queued.resize(n + 1, false);
      if (!queued[n]) {
        queued[n] = true;
        work.push_back(n);
      }
    };
    while (!work.empty()) {
      NodeId id = work.front();
      work.pop_front();
      queued[id] = false;
      if (!g.node(id).alive)
        continue;
      if (budget <= 0) {
        stats_.boundReached = true;
        break;
      }
      std::vector<NodeId> touched;
      if (tryNode(gid, id, types, safety, touched)) {
        changed = true;
        --budget;
        for (NodeId t : touched)
          push(t);
      }
    }
    return changed;
  }

  /// Tries the rules in table order on node `id`; applies the first that
  /// matches and is allowed. On success `touched` lists the nodes to revisit.
  bool tryNode(GraphId gid, NodeId id, simplify::TypeTable &types, simplify::Safety &safety,
               std::vector<NodeId> &touched) {
    Graph &g = m_.graph(gid);
    std::optional<std::pair<const Rule *, Refusal>> firstRefusal;
    std::string alsoRefused; // the other rules refused, for the remark
    for (const Rule &rule : rewrite::simplifyRules()) {
      if (rule.pattern.kind != rewrite::Term::Kind::Op || rule.pattern.op != g.node(id).type)
        continue;
      Match match;
      if (!simplify::matchPattern(g, gid, types, rule.pattern, OutPort{id, rule.pattern.result},
                                  match))
        continue;
      ++stats_.matched;
      if (rule.derive)
        rule.derive(match.binding);
      std::optional<Refusal> refusal = check(gid, rule, match, types, safety);
      if (refusal) {
        if (worthReporting(rule, *refusal)) {
          if (!firstRefusal)
            firstRefusal.emplace(&rule, *refusal);
          else
            alsoRefused += ", " + std::string(rule.name);
        }
        continue;
      }
      apply(gid, rule, match, types, touched);
      return true;
    }
    if (firstRefusal && reported_.insert({gid, id}).second) {
      ++stats_.refused;
      const Node &n = g.node(id);
      const auto &[rule, r] = *firstRefusal;
      remark(g, n, "kept", std::string(rule->name) + ":" + r.tag,
             "kept " + n.name + ": matches " + std::string(rule->name) + " but " + r.why +
                 (alsoRefused.empty() ? "" : " (also refused: " + alsoRefused.substr(2) + ")"));
    }
    return false;
  }

  /// A failed precondition of a one-op pattern over plain operands or shape
  /// operands (a Cast to another dtype, a Transpose that permutes, a Reshape
  /// that reshapes) is no near miss: the rule does not apply, and saying so
  /// on every such node is noise. A refused chain, a refused splat constant
  /// (x * 1 broadcasting larger) and every graph-level refusal are remarked.
  static bool worthReporting(const Rule &rule, const Refusal &r) {
    if (r.tag != "refused")
      return true;
    for (const rewrite::Term &arg : rule.pattern.args)
      if (arg.kind == rewrite::Term::Kind::Op ||
          (arg.kind == rewrite::Term::Kind::Constant && !arg.anyValue))
        return true;
    return false;
  }

  std::optional<Refusal> check(GraphId gid, const Rule &rule, const Match &match,
                               const simplify::TypeTable &types, simplify::Safety &safety) {
    const Graph &g = m_.graph(gid);
    for (NodeId n : match.opNodes)
      if (std::optional<Refusal> r = safety.impure(g.node(n)))
        return r;
    const Node &root = g.node(match.root.node);
    for (uint32_t k = 0; k < root.numOutputs; ++k)
      if (k != match.root.index && !g.consumers(OutPort{root.id, k}).empty())
        return Refusal{"other-output-used", "its output " + std::to_string(k) + " is used"};
    if (!rule.allows(match.binding))
      return Refusal{"refused", "the precondition fails: " + std::string(rule.precondition)};
    // A bare operand replacement must have the result's type (a rule never
    // allows otherwise; this guards the table).
    if (rule.replacement.kind == rewrite::Term::Kind::Var) {
      const TensorType *before = types.of(gid, match.root);
      auto x = match.binding.operands.find(rule.replacement.var);
      if (!before || x == match.binding.operands.end() || !(*before == x->second))
        return Refusal{"type-changed", "the operand's type differs from the result's"};
    }
    // A replacement reads its operands where the pattern's inner nodes read
    // them: an operand written in place could be read at another time.
    for (const auto &[name, port] : match.ports)
      if (match.binding.operands.count(name))
        if (std::optional<Refusal> r = safety.writtenOperand(gid, port))
          return r;
    // A pattern whose result is a view (Reshape) of an inner pattern node:
    // the result shares that node's buffer, which the replacement, built
    // from the operands, does not. Where the inner result has a use outside
    // the pattern (another graph output, a reader of the same memory), the
    // sharing was observable and would end (found by the typed campaign:
    // Reshape(Flatten(x)) with the Flatten also a graph output).
    if (std::optional<size_t> depth = simplify::viewedInnerOp(rule.pattern)) {
      NodeId inner = match.opNodes.at(*depth);
      for (uint32_t k = 0; k < g.node(inner).numOutputs; ++k)
        for (const InPort &use : g.consumers(OutPort{inner, k}))
          if (std::find(match.opNodes.begin(), match.opNodes.end(), use.node) ==
              match.opNodes.end())
            return Refusal{"shared-view", "its result is a view of " + g.node(inner).name +
                                              ", whose buffer is also used by " +
                                              g.node(use.node).name +
                                              "; the replacement would not share it"};
    }
    // A replacement sharing an operand's buffer that the pattern did not
    // share: the result becomes an alias of the operand.
    std::string aliased = simplify::aliasedVar(rule.replacement);
    // The result then holds the bytes of the operand's buffer: where that
    // buffer's size is not the operand's (a version-1 Reshape reinterprets
    // its input under its own port description), a graph output or a reader
    // would see another byte count (found by the mixed campaign:
    // Identity(Reshape(TransData)) with an f16 producer and an f32 view).
    if (!aliased.empty() && simplify::aliasedVar(rule.pattern) != aliased) {
      OutPort x = match.ports.at(aliased);
      std::optional<TraceStep> src = safety.bufferSource(gid, x);
      const TensorType *xType = types.of(gid, x);
      const TensorType *srcType = src ? types.of(src->graph, src->port) : nullptr;
      if (!xType || !srcType || xType->byteSize() != srcType->byteSize())
        return Refusal{"resized-view", "the operand's buffer does not have the operand's size "
                                       "(a view reinterprets it), so forwarding would expose "
                                       "another byte count"};
    }
    if (!aliased.empty() && simplify::aliasedVar(rule.pattern) != aliased)
      if (std::optional<Refusal> r = safety.forwarding(gid, match.root, match.ports.at(aliased)))
        return r;
    return std::nullopt;
  }

  void apply(GraphId gid, const Rule &rule, const Match &match, simplify::TypeTable &types,
             std::vector<NodeId> &touched) {
    Graph &g = m_.graph(gid);
    std::string rootName = g.node(match.root.node).name;
    std::vector<NodeId> created;
    std::optional<OutPort> result =
        simplify::buildReplacement(g, rule.replacement, match, rootName, created);
    if (!result) { // the binding lacked a value: undo (never expected)
      for (NodeId n : created)
        g.removeNode(n);
      return;
    }
    if (const TensorType *t = types.of(gid, match.root))
      types.set(gid, *result, *t);
    SourceLoc loc = g.node(match.root.node).loc;
    for (NodeId n : created) {
      g.node(n).loc = loc; // remarks on the new node point at the replaced one
      const Node &node = g.node(n);
      if (const AttrValue *v = node.attr("value"); v && v->isTensor())
        types.set(gid, OutPort{n, 0}, v->asTensor().type());
    }
    g.replaceAllUses(match.root, *result);
    ++stats_.rewritten;
    ++stats_.perRule[std::string(rule.name)];
    remark(g, g.node(match.root.node), "rewritten", std::string(rule.name),
           "rewrote " + rootName + " by " + std::string(rule.name) + ": " +
               rewrite::termText(rule.pattern) + " -> " + rewrite::termText(rule.replacement));
    // Erase the pattern's nodes the rewrite left unused (they are pure and
    // without control edges: checked above); shared ones stay.
    for (NodeId n : match.opNodes) {
      const Node &node = g.node(n);
      if (!node.alive || node.id == result->node)
        continue;
      bool used = false;
      for (uint32_t k = 0; k < node.numOutputs && !used; ++k)
        used = !g.consumers(OutPort{n, k}).empty();
      if (used)
        continue;
      for (const std::optional<OutPort> &in : node.inputs)
        if (in)
          touched.push_back(in->node);
      g.removeNode(n);
      ++stats_.erased;
    }
    // The new root takes the replaced node's name, so names stay stable.
    if (!created.empty() && result->node == created.back() && g.find(rootName) == kNoNode)
      g.rename(result->node, rootName);
    for (NodeId n : created)
      touched.push_back(n);
    for (const InPort &c : g.consumers(*result))
      touched.push_back(c.node);
  }

  void remark(const Graph &g, const Node &n, const char *decision, std::string tag,
              std::string message) {
    if (remarks_)
      remarks_->push_back(
          nodeRemark(kSimplifyName, g, n, decision, std::move(tag), std::move(message)));
  }

  Module &m_;
  const SimplifyOptions &options_;
  std::vector<Remark> *remarks_;
  SimplifyStats stats_;
  std::set<std::pair<GraphId, NodeId>> reported_;
};

} // namespace

SimplifyStats runSimplify(Module &m, const SimplifyOptions &options, std::vector<Remark> *remarks) {
  return SimplifyDriver(m, options, remarks).run();
}

} // namespace graphvet
