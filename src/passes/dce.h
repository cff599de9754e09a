// DeadCodeEliminationPass (`dce`): removes nodes whose results reach no
// output and that have no effect, in one reverse topological sweep per graph
// (docs/passes/dce.md). MLIR-style entry point: an options struct and one run
// function returning statistics; each removal and each node kept only for an
// effect is explained by one Remark.
#pragma once

#include "ir/graph.h"
#include "passes/remark.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace graphvet {

inline constexpr std::string_view kDceName = "dce";

struct DceOptions {
  /// Remove unused `Const` nodes (weights nobody reads). Default: true; a
  /// weight nobody reads is neither written nor observed through an output.
  bool removeUnusedWeights = true;
  /// Explain, with a remark, every node kept only because of an effect
  /// (default true); removals are always explained.
  bool remarkKeptEffects = true;
};

struct DceStats {
  int64_t nodesBefore = 0;      ///< live nodes of every live graph before the pass
  int64_t removed = 0;          ///< nodes removed (those inside removed subgraphs included)
  int64_t keptForEffect = 0;    ///< nodes with no live use kept for an effect
  int64_t subgraphsRemoved = 0; ///< subgraphs removed with their dead holder
};

/// Runs the pass over every graph of `m`. When `remarks` is given, appends
/// one remark per removed node (holders of removed subgraphs stand for their
/// contents) and, with DceOptions::remarkKeptEffects, one per node kept only
/// for an effect.
DceStats runDce(Module &m, const DceOptions &options, std::vector<Remark> *remarks);

} // namespace graphvet
