// fold-scale-axis, driver: walks every live graph in topological order, asks
// the analysis about each Mul (backward first, then forward), applies the
// fold or records the refusal, and removes the constants a fold left unused.
#include "passes/fold_scale_axis.h"

#include "ir/types.h"
#include "passes/fold_scale_axis/internal.h"

#include <fmt/format.h>
#include <set>

namespace graphvet {
namespace {

using fold_scale_axis::Direction;
using fold_scale_axis::FoldPlan;
using fold_scale_axis::Refusal;

class FoldScaleAxisPass {
public:
  FoldScaleAxisPass(Module &m, const FoldScaleAxisOptions &options, std::vector<Remark> *remarks)
      : m_(m), options_(options), remarks_(remarks) {}

  FoldScaleAxisStats run() {
    // A Mul whose types are unknown is refused (unknown-type).
    // A fold can bring another scale next to the op (Mul(Mul(x, a), b) ->
    // MatMul: b folds, then a is next), so sweeps repeat while one folds
    // something: one run reaches the pass's fixpoint (the campaign's
    // idempotence test found a second run folding a, issue 29). Every fold
    // removes a Mul, so the sweeps are bounded by the Muls. Refusals are
    // reported once, from the last sweep. Within a sweep types are inferred
    // once: a fold changes no type.
    for (size_t sweep = 0; sweep <= m_.root().capacity(); ++sweep) {
      const int64_t foldsBefore = stats_.backwardFolds + stats_.forwardFolds;
      refusals_.clear();
      refusedTags_.clear();
      std::shared_ptr<const ModuleTypes> typesOfSweep = takeOrInferTypes(m_, options_.inputTypes);
      const ModuleTypes &types = *typesOfSweep;
      for (GraphId g : m_.canonicalGraphOrder())
        runGraph(g, types);
      if (stats_.backwardFolds + stats_.forwardFolds == foldsBefore)
        break;
    }
    for (const auto &[tag, n] : refusedTags_)
      stats_.refused[tag] += n;
    if (remarks_)
      remarks_->insert(remarks_->end(), refusals_.begin(), refusals_.end());
    return stats_;
  }

private:
  void runGraph(GraphId gid, const ModuleTypes &types) {
    Graph &g = m_.graph(gid);
    std::optional<std::vector<NodeId>> order = g.topoOrder();
    if (!order)
      return;
    for (NodeId id : *order) {
      if (!g.node(id).alive || g.node(id).type != "Mul")
        continue;
      FoldPlan plan;
      bool candidate = false;
      if (options_.backward) {
        std::optional<Refusal> r =
            fold_scale_axis::planBackward(g, gid, types, id, plan, candidate);
        if (candidate && !r) {
          apply(g, std::move(plan));
          continue;
        }
        if (candidate)
          refuse(g, g.node(id), "backward", *r);
      }
      if (options_.forward) {
        std::optional<Refusal> r = fold_scale_axis::planForward(g, gid, types, id, plan, candidate);
        if (candidate && !r)
          apply(g, std::move(plan));
        else if (candidate)
          refuse(g, g.node(id), "forward", *r);
      }
    }
  }

  void apply(Graph &g, FoldPlan plan) {
    const Node &mul = g.node(plan.mul);
    const Node &op = g.node(plan.op);
    bool backward = plan.dir == Direction::Backward;
    std::string message =
        fmt::format("folded {} {} into {} of {} {}{}", mul.name, backward ? "backward" : "forward",
                    plan.where, op.type, op.name,
                    plan.add ? fmt::format(", and {} into its bias", g.node(*plan.add).name)
                             : std::string(plan.bias ? ", bias rescaled" : ""));
    if (remarks_)
      remarks_->push_back(nodeRemark(kFoldScaleAxisName, g, mul, "rewritten",
                                     backward ? "backward" : "forward", message));
    // The constants the Mul, the Add and the op read before the fold.
    std::vector<std::optional<OutPort>> old = mul.inputs;
    if (plan.add)
      old.insert(old.end(), g.node(*plan.add).inputs.begin(), g.node(*plan.add).inputs.end());
    old.insert(old.end(), op.inputs.begin(), op.inputs.end());
    ++(backward ? stats_.backwardFolds : stats_.forwardFolds);
    stats_.addsAbsorbed += plan.add ? 1 : 0;
    stats_.constsCreated += fold_scale_axis::applyFold(g, std::move(plan));
    removeUnusedConstants(g, old);
  }

  void removeUnusedConstants(Graph &g, const std::vector<std::optional<OutPort>> &inputs) {
    std::set<NodeId> seen;
    for (const std::optional<OutPort> &src : inputs) {
      if (!src || !seen.insert(src->node).second)
        continue;
      const Node &c = g.node(src->node);
      if (!c.alive || c.type != "Const" || !c.ctrlIn.empty() || !c.ctrlOut.empty())
        continue;
      bool used = false;
      for (uint32_t k = 0; k < c.numOutputs; ++k)
        used = used || !c.consumers[k].empty();
      if (used)
        continue;
      g.removeNode(src->node);
      ++stats_.constsRemoved;
    }
  }

  void refuse(const Graph &g, const Node &n, std::string_view direction, const Refusal &r) {
    ++refusedTags_[r.tag];
    if (remarks_)
      refusals_.push_back(nodeRemark(kFoldScaleAxisName, g, n, "kept", r.tag,
                                     fmt::format("kept {} ({}): {}", n.name, direction, r.why)));
  }

  Module &m_;
  const FoldScaleAxisOptions &options_;
  std::vector<Remark> *remarks_;
  FoldScaleAxisStats stats_;
  /// The current sweep's refusals (only the last sweep's are reported).
  std::vector<Remark> refusals_;
  std::map<std::string, int64_t> refusedTags_;
};

} // namespace

FoldScaleAxisStats runFoldScaleAxis(Module &m, const FoldScaleAxisOptions &options,
                                    std::vector<Remark> *remarks) {
  return FoldScaleAxisPass(m, options, remarks).run();
}

} // namespace graphvet
