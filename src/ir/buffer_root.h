// Buffer sharing inside one graph, from the memory plan's rules alone: the
// port whose buffer a port is bound to through views and ref outputs, and
// the calls fuse-ops and partition-graph outline. Shared by the passes and
// the harness, which must agree on what "the same buffer" and "an outlined
// region" mean.
#pragma once

#include "ir/graph.h"

namespace graphvet {

/// The port whose buffer `p` of graph `g` is bound to, followed through views
/// and ref outputs inside `g` (`p` itself for a fresh result; bounded by the
/// node count: the graph is acyclic).
OutPort bufferRoot(const Graph &g, OutPort p);

/// Is `n` a call outlined by fuse-ops (`_fused`) or partition-graph
/// (`_target`), whose region's outputs own their buffers?
bool isOutlinedCall(const Node &n);

} // namespace graphvet
