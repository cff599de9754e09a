// Liveness for the missed-optimization figures: which nodes compute nothing
// any caller can observe (semantics.md §3). A removable copy that is dead code
// is dead-code elimination's business, not the TensorMove pass's, so the
// measurement counts it apart from the missed ones.
#pragma once

#include "ir/graph.h"

#include <utility>
#include <vector>

namespace graphvet::props {

/// Nodes whose execution can never be observed. A step is live when one of
/// its writes matters; a write matters when its buffer is caller-visible at
/// the end of a run (user input whose content after a run is specified,
/// caller memory, variable, weight, anything bound to a root NetOutput
/// input) or a live step may read it afterwards. "Afterwards" is
/// flow-sensitive only where that is safe: for a buffer every run refills
/// before reading it (a produced fresh buffer, a user input with unspecified
/// content), outside loops. A live If/Case reads its condition, and so does
/// one whose consumed output may name a live buffer; a live While reads its
/// condition and each body result whose loop variable is live. A scribbler
/// whose outputs are dead reads only the buffers whose scribble matters.
/// Over-approximates liveness (a control-flow step accesses everything its
/// subgraphs do), so "unobserved" is certain; LivenessProps checks that by
/// perturbing every node called unobserved.
struct UnobservedNodes {
  std::vector<std::pair<GraphId, NodeId>> nodes; ///< sorted
  bool contains(GraphId g, NodeId n) const;
};

/// Deterministic; bounded by the module's size. An unusable module (memory
/// plan or scheduling errors) has nothing certainly unobserved.
UnobservedNodes unobservedNodes(const Module &m);

} // namespace graphvet::props
