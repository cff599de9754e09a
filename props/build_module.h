// buildModule: the deterministic interpretation of a recipe as a graph.
//
// Any recipe builds: references are taken modulo what exists, steps of
// switched-off feature families are skipped, and a writer whose target would
// be an immutable weight picks another target (or becomes a plain op). The
// result is race-free by construction: the builder models every buffer the
// memory plan of semantics.md §1 creates, and orders every pair of accesses
// to one buffer (at least one a write) in generation order, adding a control
// edge wherever data and control edges do not already order them.
#pragma once

#include "ir/graph.h"
#include "props/recipe.h"

namespace graphvet::props {

Module buildModule(const Recipe &recipe);

} // namespace graphvet::props
