// legalize, driver: walks every live graph in topological order, asks the target whether
// each node is supported, and hands each unsupported one to the rule of its op type; a
// rewrite or a refusal is one remark. Constants a rewrite left unused are removed.
#include "passes/legalize.h"

#include "ir/types.h"
#include "passes/legalize/internal.h"

#include <fmt/format.h>
#include <set>

namespace graphvet {
namespace {

using legalize::Refusal;
using legalize::RuleResult;

using RuleFn = RuleResult (*)(legalize::RuleInput &);

RuleFn ruleFor(const std::string &op) {
  if (op == "Gemm")
    return legalize::legalizeGemm;
  if (op == "HardSwish")
    return legalize::legalizeHardSwish;
  if (op == "Clip")
    return legalize::legalizeClip;
  if (op == "Conv")
    return legalize::legalizeConv;
  return nullptr;
}

class LegalizePass {
public:
  LegalizePass(Module &m, const Target &target, std::vector<Remark> *remarks)
      : m_(m), target_(target), remarks_(remarks) {}

  LegalizeStats run() {
    Diagnostics ignored; // a node whose types are unknown is refused (unknown-type)
    ModuleTypes types = inferModuleTypes(m_, ignored);
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
    // A rewrite's last node carries the old node's output type; types were inferred
    // before the rewrites, so the new nodes' types are recorded here.
    std::map<NodeId, TensorType> replaced;
    auto typeOf = [&](const std::optional<OutPort> &p) -> const TensorType * {
      if (!p)
        return nullptr;
      if (auto it = replaced.find(p->node); it != replaced.end() && p->index == 0)
        return &it->second;
      return types.of(gid, *p);
    };
    for (NodeId id : *order) {
      const Node &n = g.node(id);
      if (!n.alive)
        continue;
      std::vector<const TensorType *> inputTypes;
      for (const std::optional<OutPort> &p : n.inputs)
        inputTypes.push_back(typeOf(p));
      std::optional<std::string> reason = target_.unsupportedReason(n, inputTypes);
      if (!reason)
        continue;
      ++stats_.unsupported;
      RuleFn rule = ruleFor(n.type);
      if (rule && (!n.ctrlIn.empty() || !n.ctrlOut.empty())) {
        refuse(g, n,
               Refusal{"control-edge", *reason + "; a node with control edges is not "
                                                 "replaced (the edges would be lost)"});
        continue;
      }
      if (!rule) {
        refuse(g, n,
               Refusal{"no-rule", fmt::format("{}; no exact rewrite of {}", *reason, n.type)});
        continue;
      }
      const TensorType *outType = n.numOutputs > 0 ? types.of(gid, id, 0) : nullptr;
      std::string type = n.type, name = n.name;
      std::vector<std::optional<OutPort>> oldInputs = n.inputs;
      Remark pending = nodeRemark(kLegalizeName, g, n, "rewritten", "", "");
      legalize::RuleInput in{g, id, inputTypes, target_};
      auto [refusal, done] = rule(in);
      if (refusal) {
        refuse(g, g.node(id), Refusal{refusal->tag, *reason + "; " + refusal->why});
        continue;
      }
      ++stats_.legalized[type];
      stats_.nodesCreated += done.created;
      pending.rule = lowerCase(type);
      pending.message = fmt::format("rewrote {} ({}) into {}", name, *reason, done.how);
      if (remarks_)
        remarks_->push_back(std::move(pending));
      NodeId last = g.find(name);
      if (last != kNoNode && outType)
        replaced[last] = *outType;
      removeUnusedConstants(g, oldInputs);
    }
  }

  static std::string lowerCase(std::string s) {
    for (char &c : s)
      if (c >= 'A' && c <= 'Z')
        c = static_cast<char>(c - 'A' + 'a');
    return s;
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
      if (!used)
        g.removeNode(src->node);
    }
  }

  void refuse(const Graph &g, const Node &n, const Refusal &r) {
    ++stats_.refused[r.tag];
    if (remarks_)
      remarks_->push_back(nodeRemark(kLegalizeName, g, n, "kept", r.tag,
                                     fmt::format("kept {}: {}", n.name, r.why)));
  }

  Module &m_;
  const Target &target_;
  std::vector<Remark> *remarks_;
  LegalizeStats stats_;
};

} // namespace

LegalizeStats runLegalize(Module &m, const LegalizeOptions &options, std::vector<Remark> *remarks) {
  if (!options.target)
    return {};
  return LegalizePass(m, *options.target, remarks).run();
}

} // namespace graphvet
