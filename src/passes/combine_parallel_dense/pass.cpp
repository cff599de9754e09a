// combine-parallel-dense, driver: walks every live graph in topological
// order, gathers the MatMul/Gemm nodes reading each output port as their
// first input, groups them by signature (in node order), and combines each
// group of at least min_num_branches branches. Rounds repeat until nothing
// changes, so the pass is idempotent (a Split output feeding parallel dense
// ops is combined in the next round).
#include "passes/combine_parallel_dense.h"

#include "ir/dtype.h"
#include "ir/types.h"
#include "passes/combine_parallel_dense/internal.h"

#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <set>
#include <tuple>

namespace graphvet {
namespace {

using combine_parallel_dense::Branch;
using combine_parallel_dense::GroupPlan;
using combine_parallel_dense::Refusal;
using combine_parallel_dense::Signature;

class CombineParallelDensePass {
public:
  CombineParallelDensePass(Module &m, const CombineParallelDenseOptions &options,
                           std::vector<Remark> *remarks)
      : m_(m), minBranches_(std::max<int64_t>(2, options.minNumBranches)),
        inputTypes_(options.inputTypes), remarks_(remarks) {
    for (GraphId gid = 0; gid < m_.numGraphs(); ++gid)
      initialCapacity_.push_back(m_.graph(gid).capacity());
  }

  CombineParallelDenseStats run() {
    // Each productive round removes at least one dense node (groups have
    // two or more branches and become one node): the bound is never reached.
    size_t bound = 1;
    for (GraphId gid = 0; gid < m_.numGraphs(); ++gid)
      bound += m_.graph(gid).numLiveNodes();
    for (size_t round = 0; round < bound; ++round) {
      // A node whose types are unknown is refused (unknown-type).
      std::shared_ptr<const ModuleTypes> typesOfRound = takeOrInferTypes(m_, inputTypes_);
      const ModuleTypes &types = *typesOfRound;
      combine_parallel_dense::ReadGuard guard(m_);
      guard_ = &guard;
      bool changed = false;
      for (GraphId gid : m_.canonicalGraphOrder())
        changed = runGraph(gid, types) || changed;
      guard_ = nullptr;
      if (!changed)
        break;
    }
    return stats_;
  }

private:
  bool runGraph(GraphId gid, const ModuleTypes &types) {
    Graph &g = m_.graph(gid);
    std::optional<std::vector<NodeId>> order = g.topoOrder();
    if (!order)
      return false;
    std::vector<size_t> position(g.capacity(), std::numeric_limits<size_t>::max());
    for (size_t i = 0; i < order->size(); ++i)
      position[(*order)[i]] = i;
    auto positionOf = [&](NodeId id) {
      return id < position.size() ? position[id] : std::numeric_limits<size_t>::max();
    };
    bool changed = false;
    for (NodeId id : *order) {
      if (!g.node(id).alive)
        continue;
      for (uint32_t k = 0; k < g.node(id).numOutputs; ++k) {
        OutPort port{id, k};
        std::vector<NodeId> dense;
        for (const InPort &use : g.consumers(port)) {
          const Node &c = g.node(use.node);
          if (use.index == 0 && c.alive && (c.type == "MatMul" || c.type == "Gemm") &&
              std::find(dense.begin(), dense.end(), use.node) == dense.end())
            dense.push_back(use.node);
        }
        std::sort(dense.begin(), dense.end(), [&](NodeId a, NodeId b) {
          return std::pair(positionOf(a), a) < std::pair(positionOf(b), b);
        });
        if (!dense.empty())
          changed = runPort(g, gid, types, port, dense) || changed;
      }
    }
    return changed;
  }

  /// Groups the dense consumers of `port` and combines the large groups.
  bool runPort(Graph &g, GraphId gid, const ModuleTypes &types, OutPort port,
               const std::vector<NodeId> &dense) {
    std::vector<std::pair<Signature, std::vector<Branch>>> groups; // by first appearance
    for (NodeId d : dense) {
      Branch b;
      if (std::optional<Refusal> r =
              combine_parallel_dense::analyzeBranch(g, gid, types, *guard_, d, b)) {
        refuse(g, d, *r);
        continue;
      }
      auto it = std::find_if(groups.begin(), groups.end(),
                             [&](const auto &grp) { return grp.first == b.sig; });
      if (it == groups.end())
        groups.emplace_back(b.sig, std::vector<Branch>{b});
      else
        it->second.push_back(b);
    }
    size_t largest = 0;
    for (size_t i = 1; i < groups.size(); ++i)
      if (groups[i].second.size() > groups[largest].second.size())
        largest = i;
    bool changed = false;
    for (size_t gi = 0; gi < groups.size(); ++gi) {
      std::vector<Branch> &branches = groups[gi].second;
      if (static_cast<int64_t>(branches.size()) < minBranches_) {
        refuseSmallGroup(g, branches, groups[gi].first, groups[largest].first, gi == largest);
        continue;
      }
      // A weight (or C) computed from another branch's result would make the
      // combined op depend on itself.
      std::vector<NodeId> members;
      for (const Branch &b : branches)
        members.push_back(b.dense);
      std::vector<Branch> kept;
      for (const Branch &b : branches) {
        bool dependent = combine_parallel_dense::dependsOnAny(g, b.weight, members) ||
                         (b.bias && combine_parallel_dense::dependsOnAny(g, *b.bias, members));
        if (dependent)
          refuse(g, b.dense,
                 Refusal{"dependent-weight",
                         "its weight or C is computed from another branch's result"});
        else
          kept.push_back(b);
      }
      if (static_cast<int64_t>(kept.size()) < minBranches_) {
        refuseSmallGroup(g, kept, groups[gi].first, groups[gi].first, true);
        continue;
      }
      combine(g, gid, types, port, std::move(kept));
      changed = true;
    }
    return changed;
  }

  void refuseSmallGroup(const Graph &g, const std::vector<Branch> &branches, const Signature &sig,
                        const Signature &largest, bool isLargest) {
    std::optional<Refusal> diff;
    if (!isLargest)
      diff = combine_parallel_dense::signatureDifference(sig, largest);
    Refusal r =
        diff
            ? *diff
            : Refusal{"too-few-branches",
                      fmt::format("{} branch{} of this signature, fewer than "
                                  "min_num_branches = {}",
                                  branches.size(), branches.size() == 1 ? "" : "es", minBranches_)};
    if (diff)
      r.why += fmt::format(" (the largest group on this input has {})",
                           largest.op + ", " + std::string(dtypeName(largest.dtype)) +
                               ", K = " + std::to_string(largest.reduction));
    for (const Branch &b : branches)
      refuse(g, b.dense, r);
  }

  void combine(Graph &g, GraphId gid, const ModuleTypes &types, OutPort port,
               std::vector<Branch> branches) {
    GroupPlan plan;
    plan.input = port;
    plan.branches = std::move(branches);
    const Branch &first = plan.branches[0];
    plan.outRank = types.of(gid, OutPort{first.dense, 0})->rank();
    if (first.sig.op == "Gemm")
      plan.weightAxis = first.sig.gemmAttrs[1] != 0 ? 0 : 1;
    else
      plan.weightAxis = static_cast<int64_t>(first.sig.batch.size()) + 1;
    combine_parallel_dense::planFollowOns(g, gid, types, *guard_, plan);

    const Node &d0 = g.node(first.dense);
    std::vector<std::string> names, sizes;
    for (const Branch &b : plan.branches) {
      names.push_back(g.node(b.dense).name);
      sizes.push_back(std::to_string(b.outSize));
    }
    std::string combinedName = d0.name + "_combined";
    note(g, d0, "combined",
         fmt::format("combined {} ({} x{}, {}, K = {}) into one {} on weights concatenated "
                     "along the output axis, split into [{}]",
                     fmt::join(names, ", "), first.sig.op, plan.branches.size(),
                     dtypeName(first.sig.dtype), first.sig.reduction, first.sig.op,
                     fmt::join(sizes, ", ")));
    for (const combine_parallel_dense::FollowOnLevel &lv : plan.followOns) {
      std::vector<std::string> fs;
      for (NodeId f : lv.nodes)
        fs.push_back(g.node(f).name);
      note(g, g.node(lv.nodes[0]), "follow-on",
           fmt::format("combined the follow-ons {} ({}) before the split", fmt::join(fs, ", "),
                       g.node(lv.nodes[0]).type));
    }
    if (plan.followOnStop)
      refuse(g, plan.followOnStopNode,
             Refusal{plan.followOnStop->tag, fmt::format("not absorbed into the combined {}: {}",
                                                         d0.name, plan.followOnStop->why)});
    ++stats_.groupsCombined;
    stats_.branchesCombined += static_cast<int64_t>(plan.branches.size());
    stats_.followOnsCombined += static_cast<int64_t>(plan.followOns.size());
    stats_.nodesCreated += combine_parallel_dense::rewriteGroup(g, plan, stats_.constsRemoved);
  }

  void note(const Graph &g, const Node &n, std::string rule, std::string message) {
    if (remarks_)
      remarks_->push_back(nodeRemark(kCombineParallelDenseName, g, n, "combined", std::move(rule),
                                     std::move(message)));
  }

  /// Records a refusal once per node and tag (later rounds repeat them).
  void refuse(const Graph &g, NodeId id, const Refusal &r) {
    // The pass's own combined nodes are alone on their input by design.
    bool created = g.id >= initialCapacity_.size() || id >= initialCapacity_[g.id];
    if (created || !refused_.insert({g.id, id, r.tag}).second)
      return;
    const Node &n = g.node(id);
    ++stats_.refused[r.tag];
    if (remarks_)
      remarks_->push_back(nodeRemark(kCombineParallelDenseName, g, n, "kept", r.tag,
                                     fmt::format("kept {}: {}", n.name, r.why)));
  }

  Module &m_;
  int64_t minBranches_;
  TypeHandoff *inputTypes_; ///< the types as given, for the first round
  std::vector<Remark> *remarks_;
  CombineParallelDenseStats stats_;
  combine_parallel_dense::ReadGuard *guard_ = nullptr; ///< the current round's
  std::set<std::tuple<GraphId, NodeId, std::string>> refused_;
  std::vector<size_t> initialCapacity_; ///< per graph: ids from here on are the pass's
};

} // namespace

CombineParallelDenseStats runCombineParallelDense(Module &m,
                                                  const CombineParallelDenseOptions &options,
                                                  std::vector<Remark> *remarks) {
  return CombineParallelDensePass(m, options, remarks).run();
}

} // namespace graphvet
