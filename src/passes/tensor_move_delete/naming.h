// TensorMoveDeletePass: how remarks name nodes and sources
// (docs/passes/tensor-move-delete.md, "Remarks").
#pragma once

#include "passes/buffer_analysis.h"

#include <string>
#include <vector>

namespace graphvet::tmd {

/// A node as remarks name it: plainly in the root graph, `graph/node` in a
/// subgraph.
std::string name(const Module &m, GraphId g, NodeId n);
/// `OpType name`.
std::string describe(const Module &m, GraphId g, NodeId n);
/// The source a trace ends at, with `:K` for a multi-output node.
std::string sourceName(const Module &m, const SourceTrace &t);
/// `source SRC[ (KIND)][ via STEP, ...]`.
std::string describeSource(const Module &m, const SourceTrace &t);
/// The first `limit` items joined by ", ", then `+N more`.
std::string joinLimited(const std::vector<std::string> &items, size_t limit);

} // namespace graphvet::tmd
