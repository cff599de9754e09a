// Shared by the legalize files: the builder that adds a rewrite's nodes, and
// the rules (one function per op type) that either rewrite a node or say why
// they refuse.
#pragma once

#include "ir/graph.h"
#include "ir/tensor.h"
#include "ir/types.h"
#include "passes/targets.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace graphvet::legalize {

/// Why a node is left alone: the stable remark tag and the sentence.
struct Refusal {
  std::string tag;
  std::string why;
};

/// What a rule reads: the node, the types of its inputs, the target.
struct RuleInput {
  Graph &g;
  NodeId id;
  std::vector<const TensorType *> inputTypes; ///< per input slot; nullptr: absent or unknown
  const Target &target;
};

/// A rewrite done: the sentence of its remark and the nodes it created.
struct Rewritten {
  std::string how;
  int64_t created = 0;
};

using RuleResult = std::pair<std::optional<Refusal>, Rewritten>;

/// Adds the nodes of a rewrite of `old`, then moves every use of its output 0
/// to the replacement's last node, which takes the old name.
class Builder {
public:
  Builder(Graph &g, const Node &old) : g_(g), old_(old) {}

  OutPort constant(const std::string &suffix, Tensor value);
  OutPort op(const std::string &suffix, const std::string &type,
             std::vector<std::optional<OutPort>> inputs);
  OutPort cast(const std::string &suffix, OutPort in, DType to);
  Node &node(OutPort p) { return g_.node(p.node); }
  int64_t created() const { return created_; }
  void finish(OutPort result);

private:
  Graph &g_;
  const Node &old_;
  int64_t created_ = 0;
};

AttrValue intList(const std::vector<int64_t> &v);
/// A scalar constant of `dtype` holding `value` (exact in every use here).
Tensor scalarTensor(DType dtype, double value);

/// The rules. Each checks every precondition first and touches the graph
/// only when it rewrites.
RuleResult legalizeGemm(RuleInput &in);
RuleResult legalizeHardSwish(RuleInput &in);
RuleResult legalizeClip(RuleInput &in);
RuleResult legalizeConv(RuleInput &in);

/// A refusal when the target lacks any of `needed` (op, dtype) pairs.
std::optional<Refusal> missingOps(const Target &t,
                                  const std::vector<std::pair<std::string, DType>> &needed);

} // namespace graphvet::legalize
