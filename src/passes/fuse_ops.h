// FuseOpsPass (`fuse-ops`): TVM's FuseOps. Groups the ops of each graph into
// fused kernels by their pattern kinds (the op table's pattern column) over
// the post-dominator tree, in three phases (an OutEWiseFusable anchor takes
// its element-wise consumers; element-wise and broadcast ops fuse into
// injective or reduction sinks; injective ops fuse last), and outlines each
// group of two or more ops into a `PartitionedCall` whose subgraph is named
// after its ops and marked `_fused` (docs/passes/fuse-ops.md). One Remark
// per group and per refusal.
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

inline constexpr std::string_view kFuseOpsName = "fuse-ops";
/// Module option: most ops in one group (`--option fuse_ops.max_fuse_depth=N`).
inline constexpr std::string_view kFuseOpsMaxDepthOption = "fuse_ops.max_fuse_depth";
/// Module option: most distinct inputs of one group (`fuse_ops.max_args=N`).
inline constexpr std::string_view kFuseOpsMaxArgsOption = "fuse_ops.max_args";

struct FuseOpsOptions {
  /// Most ops one group may hold (TVM's max_fuse_depth, default 256).
  int64_t maxFuseDepth = 256;
  /// Most distinct values a group may read from outside (constants copied
  /// into the group do not count); TVM's max_function_args, default 256.
  int64_t maxArgs = 256;
  /// Benchmark baseline (`graphvet bench --compare`): find each node's
  /// immediate post-dominator and the pattern of its link by reachability
  /// searches (for each node reachable from it, in topological order, a
  /// search that avoids it) instead of the post-dominator tree's least
  /// common ancestors. O(nodes x reachable nodes x edges); same groups.
  bool naive = false;
  /// The module's types as the pass receives it, when the caller has them
  /// (the pass manager: the verifier's, after the pass before changed the
  /// module); the pass's first inference takes them instead of inferring.
  TypeHandoff *inputTypes = nullptr;
};

struct FuseOpsStats {
  int64_t groups = 0;                     ///< PartitionedCalls created
  int64_t opsFused = 0;                   ///< ops moved into them
  int64_t constsCopied = 0;               ///< Const nodes copied into groups
  std::map<std::string, int64_t> refused; ///< refusals, by remark tag
};

/// Runs the pass over every live graph of `m` (each graph on its own; the
/// subgraphs of calls it created before, marked `_fused`, are left alone).
/// When `remarks` is given, appends one remark per group and per refusal.
FuseOpsStats runFuseOps(Module &m, const FuseOpsOptions &options, std::vector<Remark> *remarks);

} // namespace graphvet
