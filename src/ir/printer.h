// The canonical `.graph` printer: options sorted, root first, subgraphs in
// order of first reference, nodes in stable topological order, attributes
// sorted, control edges last and sorted, names quoted only when they must be.
#pragma once

#include "ir/graph.h"

#include <optional>
#include <string>

namespace graphvet {

std::string printModule(const Module &m);

/// A name as the format writes it: bare when it is an identifier that is not
/// a keyword, otherwise quoted with escapes.
std::string formatName(const std::string &name);

/// `[A-Za-z_][A-Za-z0-9_]*`: a name the format writes bare (graph-format.md).
bool isIdentifier(const std::string &s);

/// Compares two modules structurally: the same options, the same graphs in
/// canonical order (by name), and in each graph the same nodes by name with
/// equal type, output count, inputs (producer name and port), attributes,
/// subgraphs and control successors. Node ids, source locations and removed
/// nodes are ignored. Returns a description of the first difference, or
/// nullopt when the modules are structurally equal (then they print alike up
/// to topological tie-breaking).
std::optional<std::string> structuralDifference(const Module &a, const Module &b);

} // namespace graphvet
