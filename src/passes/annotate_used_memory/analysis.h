// The memory timeline of a module under the reference schedule, computed by
// the passes' own reading of semantics.md §1-§2 (never the oracle's code):
// steps in the reference order (PartitionedCall bodies inlined, Kahn's
// algorithm with ties by step index), each output port resolved to the fresh
// buffer it lives in (through views, ref outputs and call boundaries), and
// the bytes of fresh buffers live at each step. A fresh buffer is live from
// its first write to its last use (a read by a computing step, an in-place
// write); a graph output's buffer stays live until the last step.
#pragma once

#include "ir/graph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace graphvet {

struct MemoryStep {
  GraphId graph = kNoGraph;
  NodeId node = kNoNode;
  uint64_t liveBytes = 0;
};

struct MemoryTimeline {
  /// False when the figures cannot be decided statically; `skipTag` and
  /// `skipReason` say why and `skipGraph`/`skipNode` where.
  bool ok = false;
  std::string skipTag; ///< "control-flow", "dynamic-size", "malformed", "cyclic"
  std::string skipReason;
  GraphId skipGraph = 0;
  NodeId skipNode = kNoNode;
  std::vector<MemoryStep> steps; ///< the reference schedule, in order
  uint64_t peak = 0;
  size_t peakStep = 0; ///< first step reaching the peak
  /// Per graph and node: the position of its step (SIZE_MAX for calls and dead nodes).
  std::vector<std::vector<size_t>> position;
  /// Per graph and node: the (graph, node) of the owner of each output's
  /// fresh buffer, or kNoGraph for memory outside the run (inputs,
  /// variables, weights); filled for every live port.
  struct Owner {
    GraphId graph = kNoGraph;
    NodeId node = kNoNode;
    uint32_t index = 0;
    friend auto operator<=>(const Owner &, const Owner &) = default;
  };
  std::vector<std::vector<std::vector<Owner>>> owners;
  /// Size in bytes of each output port (0 when unknown).
  std::vector<std::vector<std::vector<uint64_t>>> portBytes;
};

/// Computes the timeline of `m`. Bounded by the module's size.
MemoryTimeline analyzeMemory(const Module &m);

} // namespace graphvet
