// The canonical `.graph` printer: options sorted, root first, subgraphs in
// order of first reference, nodes in stable topological order, attributes
// sorted, control edges last and sorted, names quoted only when they must be.
#pragma once

#include "ir/graph.h"

#include <string>

namespace graphvet {

std::string printModule(const Module &m);

/// A name as the format writes it: bare when it is an identifier that is not
/// a keyword, otherwise quoted with escapes.
std::string formatName(const std::string &name);

} // namespace graphvet
