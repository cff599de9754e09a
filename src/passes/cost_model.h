// The cost model of midend-passes.md (`graphvet cost`): for the reference
// schedule, kernel launches, bytes kernels read and write, peak live bytes
// (from annotate-used-memory's timeline), constant bytes and FLOPs. A library
// call so that passes, the campaign and the CLI compare pipelines by the same
// figures. docs/cost.md gives every formula.
#pragma once

#include "ir/graph.h"

#include <cstdint>
#include <map>
#include <string>

namespace graphvet {

struct CostReport {
  int64_t kernels = 0;        ///< kernel launches (a `_fused` call is one)
  uint64_t bytesRead = 0;     ///< bytes kernels read from memory (per input slot)
  uint64_t bytesWritten = 0;  ///< bytes kernels write to memory (per written output)
  uint64_t constantBytes = 0; ///< bytes of every Const-family node's value
  uint64_t flops = 0;         ///< floating-point (or integer) operations, docs/cost.md
  bool peakKnown = false;     ///< false: the timeline was skipped (see peakSkip)
  uint64_t peakLiveBytes = 0; ///< peak of the memory timeline
  std::string peakSkip;       ///< why the peak is unknown ("control-flow", ...)
  int64_t fusedGroups = 0;    ///< `_fused` PartitionedCalls counted as one kernel each
  int64_t unsizedPorts = 0;   ///< kernel ports without a static size (counted as 0 bytes)
  std::map<std::string, int64_t> kernelsByOp; ///< op type (or "fused") -> launches
};

/// The cost of `m` (a verified module). Bounded by the module's size.
CostReport computeCost(const Module &m);

/// True when the node runs no kernel of its own: Data, Variable, Const
/// families, NetOutput, calls (transparent or fused, counted separately) and
/// nodes whose every output is a view (Reshape): docs/cost.md.
bool isFreeNode(const Node &n);

} // namespace graphvet
