// A cheap fingerprint of a module's state, for "did anything change?" tests
// that must not print or copy the module (the pass manager skips the
// verifier after a pass that left the module as it was last verified).
#pragma once

#include "ir/graph.h"

#include <cstdint>

namespace graphvet {

/// A 64-bit hash of every option, graph (name, parent, liveness) and node
/// (id, name, type, inputs, outputs, attributes, subgraphs, control edges,
/// liveness) of `m`. Tensor literals count by identity (the shared tensor
/// object), not by content: tensors are immutable, so a pass that changes a
/// value installs a new one. Equal fingerprints mean an unchanged module up
/// to a 64-bit collision; a pass that rebuilds an equal module in new
/// objects gets a new fingerprint (a false "changed", never a false
/// "unchanged" short of a collision).
uint64_t structuralFingerprint(const Module &m);

/// The structural fingerprint and, from the same walk, one that also covers
/// the order of every output's consumer list (which passes iterate, so two
/// states equal but for that order may lead a pass to other decisions).
struct ModuleFingerprints {
  uint64_t structure = 0;    ///< structuralFingerprint(m)
  uint64_t withUseOrder = 0; ///< also the consumer lists, in order
  friend bool operator==(const ModuleFingerprints &, const ModuleFingerprints &) = default;
};
ModuleFingerprints moduleFingerprints(const Module &m);

} // namespace graphvet
