// The numeric-pattern features: the multi-node patterns the mid-end passes
// act on (the typed generator's motifs make them on purpose), read off the
// root graph of a built module. featuresOf (features.h) includes them.
#pragma once

#include "props/features.h"

namespace graphvet::props {

/// Sets the motif and legalize/norm features `m`'s root graph contains.
void addMotifFeatures(const Module &m, FeatureSet &f);

/// The features only the typed generator makes (numeric patterns); the
/// memory generator's coverage promise leaves them out.
bool isTypedFeature(Feature f);

} // namespace graphvet::props
