// PartitionGraphPass (`partition-graph`): TVM's AnnotateTarget +
// MergeCompilerRegions + PartitionGraph. Outlines maximal convex regions of
// the ops a target supports (by the target table, passes/targets.h) into
// `PartitionedCall`s marked `_target = "NAME"`, whose subgraphs are named
// `NAME_region_K`. Constants a region reads go inside it (cloned when the host
// reads them too); each value used outside a region is one call output; no two
// outputs of a region share a buffer (docs/passes/partition-graph.md). One
// Remark per region and per refusal.
#pragma once

#include "ir/buffer_root.h"
#include "ir/graph.h"
#include "passes/remark.h"
#include "passes/targets.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace graphvet {

inline constexpr std::string_view kPartitionGraphName = "partition-graph";
/// Module option naming the target (`--option partition_graph.target=npu`); required.
inline constexpr std::string_view kPartitionGraphTargetOption = "partition_graph.target";
/// Module option naming a user's target table file, read instead of the
/// shipped one (`--option partition_graph.targets_file=PATH`).
inline constexpr std::string_view kPartitionGraphTargetsFileOption = "partition_graph.targets_file";
/// Attribute marking a call as an outlined region: its value is the target name.
inline constexpr std::string_view kTargetAttr = "_target";
/// Attribute fuse-ops puts on its calls; such a call is opaque to this pass too.
inline constexpr std::string_view kFusedAttr = "_fused";

struct PartitionGraphOptions {
  /// The target regions are outlined for (no default: the pass manager
  /// refuses to run the pass without one). Not owned.
  const Target *target = nullptr;
};

struct PartitionGraphStats {
  int64_t regions = 0;                    ///< PartitionedCalls created
  int64_t opsPartitioned = 0;             ///< op nodes moved into regions (constants aside)
  int64_t constsMoved = 0;                ///< constants moved into a region (host had no other use)
  int64_t constsCloned = 0;               ///< constants copied into a region (host keeps its own)
  int64_t regionInputs = 0;               ///< call inputs created
  int64_t regionOutputs = 0;              ///< call outputs created
  std::map<std::string, int64_t> refused; ///< nodes or merges refused, by remark tag
};

// isOutlinedCall (ir/buffer_root.h): a call this pass or fuse-ops outlined,
// which the pass treats, with its subgraph, as opaque.

/// Runs the pass over every live graph of `m` (graphs of outlined calls
/// aside). When `remarks` is given, appends one remark per region created and
/// per refusal: per graph, admission refusals in topological order, then
/// refused merges, then regions.
PartitionGraphStats runPartitionGraph(Module &m, const PartitionGraphOptions &options,
                                      std::vector<Remark> *remarks);

} // namespace graphvet
