// CommonSubexpressionEliminationPass (`cse`): merges nodes of one graph with
// the same op type, equal attributes (by value) and the same inputs, when
// nothing can tell the two results apart (docs/passes/cse.md). MLIR-style
// entry point: an options struct and one run function returning statistics;
// each merge and each refused merge is explained by one Remark.
#pragma once

#include "ir/graph.h"
#include "passes/remark.h"

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace graphvet {

inline constexpr std::string_view kCseName = "cse";

struct CseOptions {
  /// Most input slots one buffer exploration (is this buffer ever written?
  /// does it reach a graph output?) may visit; beyond it the node is not
  /// merged (remark tag `budget`). Default 2^16, as tensor-move-delete.
  size_t analysisBudget = size_t{1} << 16;
  /// Merge `Const` nodes whose values are equal bit for bit (default true).
  bool mergeConstants = true;
  /// Benchmark baseline (`graphvet bench --compare`): look each candidate up
  /// by comparing it with every earlier table entry instead of hashing, so
  /// the pass costs O(candidates^2). Same merges, same order, same result.
  bool naive = false;
};

struct CseStats {
  int64_t candidates = 0; ///< nodes looked up in the table (Ordinary, Const, copies, holders)
  int64_t merged = 0;     ///< nodes replaced by an equal earlier node and removed
  int64_t refused = 0;    ///< nodes equal to an earlier one but kept (a remark says why)
};

/// Runs the pass over every live graph of `m`, each graph on its own (a
/// node is never replaced by a node of another graph, so never across
/// branch scopes). When `remarks` is given, appends one remark per merge and
/// per refused merge, in topological order of each graph.
CseStats runCse(Module &m, const CseOptions &options, std::vector<Remark> *remarks);

} // namespace graphvet
