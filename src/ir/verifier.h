// The structural verifier: everything graph-format.md calls an error, the
// consistency of subgraph parent indices, connected TensorMove inputs and
// acyclicity. Run by the parser and after every pass.
#pragma once

#include "ir/diagnostic.h"
#include "ir/graph.h"

namespace graphvet {

/// Returns every error found (empty when the module is valid). Errors carry
/// the location of the offending entity when it was parsed, else {0,0}.
Diagnostics verifyModule(const Module &m);

} // namespace graphvet
