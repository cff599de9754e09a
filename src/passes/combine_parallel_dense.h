// CombineParallelDensePass (`combine-parallel-dense`): several MatMul (or
// Gemm) nodes that read the same first input and differ only in their
// weights become one op on the weights concatenated along the output axis,
// followed by a Split that hands each branch its result; matching
// element-wise follow-ons (Add of a bias along the output axis, Relu...) are
// combined before the Split (docs/passes/combine-parallel-dense.md). Each
// output element is the same dot product as before, so the pass is exact.
#pragma once

#include "ir/graph.h"
#include "ir/types.h"
#include "passes/remark.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace graphvet {

inline constexpr std::string_view kCombineParallelDenseName = "combine-parallel-dense";
inline constexpr std::string_view kCombineParallelDenseMinBranchesOption =
    "combine_parallel_dense.min_num_branches";

struct CombineParallelDenseOptions {
  /// Fewest branches of one signature (op, attributes, dtype, reduction
  /// size, batch dimensions) worth combining (default 3, as TVM's pass).
  int64_t minNumBranches = 3;
  /// The module's types as the pass receives it, when the caller has them
  /// (the pass manager: the verifier's, after the pass before changed the
  /// module); the pass's first inference takes them instead of inferring.
  TypeHandoff *inputTypes = nullptr;
};

struct CombineParallelDenseStats {
  int64_t groupsCombined = 0;             ///< combined ops created
  int64_t branchesCombined = 0;           ///< MatMul/Gemm nodes replaced
  int64_t followOnsCombined = 0;          ///< element-wise follow-on levels combined
  int64_t nodesCreated = 0;               ///< nodes added (constants included)
  int64_t constsRemoved = 0;              ///< weight/bias constants left unused and removed
  std::map<std::string, int64_t> refused; ///< by remark tag
};

/// Runs the pass over every live graph of `m` to a fixpoint (a Split output
/// that feeds parallel dense ops is combined too). When `remarks` is given,
/// appends one remark per combined group, per follow-on decision and per
/// refused branch.
CombineParallelDenseStats runCombineParallelDense(Module &m,
                                                  const CombineParallelDenseOptions &options,
                                                  std::vector<Remark> *remarks);

} // namespace graphvet
