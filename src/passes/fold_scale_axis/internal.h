// Shared by the fold-scale-axis files: what the analysis decides about one
// `Mul` by a per-channel constant (a fold plan with its folded constants
// already computed, or a refusal with its remark tag) and the surgery that
// carries a plan out.
#pragma once

#include "ir/graph.h"
#include "ir/tensor.h"
#include "ir/types.h"

#include <optional>
#include <string>
#include <vector>

namespace graphvet::fold_scale_axis {

/// Why a direction is refused: the stable remark tag and the sentence.
struct Refusal {
  std::string tag;
  std::string why;
};

enum class Direction { Backward, Forward };

/// One fold, ready to apply: the Mul goes away, `op` takes `weight` (and,
/// backward, `bias`) as its new constant inputs.
struct FoldPlan {
  Direction dir = Direction::Backward;
  NodeId mul = kNoNode;
  OutPort unscaled;           ///< the Mul's operand that is not the scale
  NodeId op = kNoNode;        ///< the Conv/ConvTranspose/Gemm/MatMul absorbing the scale
  std::optional<NodeId> add;  ///< backward: the Add absorbed into the bias
  Tensor weight;              ///< the folded weights (op's input 1)
  std::optional<Tensor> bias; ///< backward: the new bias / C (op's input 2)
  bool setBetaOne = false;    ///< Gemm whose C is created from the Add's constant
  bool dropAlpha = false;     ///< backward Gemm whose alpha went into B
  std::string where;          ///< for the remark: "output channels (O)", ...
};

/// The ops a scale folds into.
bool isFoldTarget(const std::string &type);

/// The Mul `mul` of graph `gid` folded into the producer of one operand.
/// nullopt with `candidate` false: no operand comes from a fold target.
std::optional<Refusal> planBackward(const Graph &g, GraphId gid, const ModuleTypes &types,
                                    NodeId mul, FoldPlan &plan, bool &candidate);

/// The Mul folded into the consumer its result reaches through
/// Relu/LeakyRelu/MaxPool. nullopt with `candidate` false: it reaches none.
std::optional<Refusal> planForward(const Graph &g, GraphId gid, const ModuleTypes &types,
                                   NodeId mul, FoldPlan &plan, bool &candidate);

/// Carries a plan out; returns the constants created. The constants the
/// fold left unused are not removed here (the driver does).
int64_t applyFold(Graph &g, FoldPlan plan);

} // namespace graphvet::fold_scale_axis
