// simplify-inference, driver: walks every live graph in topological order,
// asks the analysis about each normalization node, rewrites it or records
// the refusal, and removes the statistics constants a rewrite left unused.
#include "passes/simplify_inference.h"

#include "ir/types.h"
#include "passes/simplify_inference/internal.h"

#include <fmt/format.h>
#include <map>
#include <set>

namespace graphvet {
namespace {

using simplify_inference::Refusal;

class SimplifyInferencePass {
public:
  SimplifyInferencePass(Module &m, const SimplifyInferenceOptions &options,
                        std::vector<Remark> *remarks)
      : m_(m), options_(options), remarks_(remarks) {}

  SimplifyInferenceStats run() {
    // A node whose types are unknown is refused (unknown-type).
    // Types are inferred once: a rewrite changes no type, but the value a
    // rewritten node produced now comes from a new port, whose type
    // `carried_` keeps (a normalization reading it would otherwise be
    // refused as unknown-type, and a second run would rewrite it: not
    // idempotent).
    std::shared_ptr<const ModuleTypes> typesOfInput = takeOrInferTypes(m_, options_.inputTypes);
    const ModuleTypes &types = *typesOfInput;
    for (GraphId g : m_.canonicalGraphOrder())
      runGraph(g, types);
    return stats_;
  }

private:
  void runGraph(GraphId gid, const ModuleTypes &types) {
    Graph &g = m_.graph(gid);
    std::optional<std::vector<NodeId>> order = g.topoOrder();
    if (!order)
      return;
    for (NodeId id : *order) {
      const Node &n = g.node(id);
      if (!n.alive)
        continue;
      bool bn = n.type == "BatchNormalization";
      bool in = n.type == "InstanceNormalization";
      bool ln = n.type == "LayerNormalization";
      if (!bn && !in && !ln)
        continue;
      if (!(bn ? options_.batchNorm : in ? options_.instanceNorm : options_.layerNorm)) {
        refuse(g, n,
               {"disabled",
                fmt::format("the option {} is false", bn   ? kSimplifyInferenceBatchNormOption
                                                      : in ? kSimplifyInferenceInstanceNormOption
                                                           : kSimplifyInferenceLayerNormOption)});
        continue;
      }
      auto typeOf = [&](size_t k) -> const TensorType * {
        if (k >= n.inputs.size() || !n.inputs[k])
          return nullptr;
        if (const TensorType *t = types.of(gid, *n.inputs[k]))
          return t;
        auto it = carried_.find({gid, *n.inputs[k]});
        return it == carried_.end() ? nullptr : &it->second;
      };
      const TensorType *xType = typeOf(0);
      std::optional<Refusal> refusal = simplify_inference::commonRefusal(g, n, xType);
      if (refusal) {
        refuse(g, n, *refusal);
        continue;
      }
      if (bn) {
        simplify_inference::BatchNormPlan plan;
        if ((refusal = simplify_inference::planBatchNorm(g, n, *xType, plan))) {
          refuse(g, n, *refusal);
          continue;
        }
        std::vector<std::optional<OutPort>> inputs = n.inputs;
        note(g, n, "batch-norm",
             fmt::format("rewrote {} into Mul and Add by folded per-channel constants ({})", n.name,
                         dtypeName(xType->dtype)));
        std::vector<InPort> readers = g.consumers(OutPort{id, 0});
        std::optional<TensorType> outType = typeOfOutput(gid, id, types);
        stats_.nodesCreated += simplify_inference::rewriteBatchNorm(g, id, std::move(plan));
        carryType(gid, g, readers, outType);
        ++stats_.batchNorms;
        removeUnusedConstants(g, inputs);
        continue;
      }
      simplify_inference::NormPlan plan;
      refusal = in ? simplify_inference::planInstanceNorm(g, n, *xType, plan)
                   : simplify_inference::planLayerNorm(g, n, *xType, typeOf(1), typeOf(2), plan);
      if (refusal) {
        refuse(g, n, *refusal);
        continue;
      }
      std::string axes;
      for (int64_t a : plan.axes)
        axes += (axes.empty() ? "" : ", ") + std::to_string(a);
      note(g, n, in ? "instance-norm" : "layer-norm",
           fmt::format("rewrote {} into ReduceMean over axes [{}] and element-wise steps ({})",
                       n.name, axes, dtypeName(xType->dtype)));
      std::vector<InPort> readers = g.consumers(OutPort{id, 0});
      std::optional<TensorType> outType = typeOfOutput(gid, id, types);
      stats_.nodesCreated += simplify_inference::rewriteNorm(g, id, plan);
      carryType(gid, g, readers, outType);
      ++(in ? stats_.instanceNorms : stats_.layerNorms);
    }
  }

  std::optional<TensorType> typeOfOutput(GraphId gid, NodeId id, const ModuleTypes &types) const {
    if (const TensorType *t = types.of(gid, OutPort{id, 0}))
      return *t;
    auto it = carried_.find({gid, OutPort{id, 0}});
    return it == carried_.end() ? std::nullopt : std::optional<TensorType>(it->second);
  }

  /// Records `type` for the port the former readers of a rewritten node's
  /// output 0 read now.
  void carryType(GraphId gid, const Graph &g, const std::vector<InPort> &readers,
                 const std::optional<TensorType> &type) {
    if (!type)
      return;
    for (const InPort &r : readers) {
      const Node &reader = g.node(r.node);
      if (reader.alive && r.index < reader.inputs.size() && reader.inputs[r.index])
        carried_.emplace(std::pair{gid, *reader.inputs[r.index]}, *type);
    }
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

  void note(const Graph &g, const Node &n, std::string rule, std::string message) {
    if (remarks_)
      remarks_->push_back(nodeRemark(kSimplifyInferenceName, g, n, "rewritten", std::move(rule),
                                     std::move(message)));
  }

  void refuse(const Graph &g, const Node &n, const Refusal &r) {
    ++stats_.refused[r.tag];
    if (remarks_)
      remarks_->push_back(nodeRemark(kSimplifyInferenceName, g, n, "kept", r.tag,
                                     fmt::format("kept {}: {}", n.name, r.why)));
  }

  Module &m_;
  const SimplifyInferenceOptions &options_;
  std::vector<Remark> *remarks_;
  SimplifyInferenceStats stats_;
  std::map<std::pair<GraphId, OutPort>, TensorType> carried_; ///< types of the rewrites' results
};

} // namespace

SimplifyInferenceStats runSimplifyInference(Module &m, const SimplifyInferenceOptions &options,
                                            std::vector<Remark> *remarks) {
  return SimplifyInferencePass(m, options, remarks).run();
}

} // namespace graphvet
