// DeadCodeEliminationPass (`dce`): removes nodes whose results reach no
// output and that have no effect, results of subgraph holders nobody reads
// and holder inputs no subgraph reads, in one reverse topological sweep that
// descends into a live holder's subgraphs (docs/passes/dce.md). MLIR-style entry point: an options
// struct and one run function returning statistics; each removal and each node kept only for an
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
  /// Benchmark baseline (`graphvet bench --compare`): before the sweep,
  /// remove the root graph's plain dead nodes the textbook way, by scanning
  /// it in id order again and again until a scan removes nothing (a dead
  /// chain of length k takes k scans). Same nodes removed, same result; the
  /// remarks come in another order.
  bool naive = false;
};

struct DceStats {
  int64_t nodesBefore = 0;         ///< live nodes of every live graph before the pass
  int64_t removed = 0;             ///< nodes removed (those inside removed subgraphs included)
  int64_t keptForEffect = 0;       ///< nodes with no live use kept for an effect
  int64_t subgraphsRemoved = 0;    ///< subgraphs removed with their dead holder
  int64_t deadOutputsRemoved = 0;  ///< holder outputs removed (with each subgraph's result)
  int64_t unusedInputsRemoved = 0; ///< holder inputs removed (with each subgraph's Data)
  int64_t loopOutputsKept = 0;     ///< unused While outputs kept (loop-carried state)
  int64_t orderEdgesAdded = 0;     ///< control edges standing for removed input edges
};

/// Runs the pass over every graph of `m` reachable from the root. When
/// `remarks` is given, appends one remark per removed node (holders of removed
/// subgraphs stand for their contents), per removed holder output or input,
/// per While whose unused outputs are kept and, with
/// DceOptions::remarkKeptEffects, one per node kept only for an effect. One
/// run reaches the fixpoint: a second run changes nothing.
DceStats runDce(Module &m, const DceOptions &options, std::vector<Remark> *remarks);

} // namespace graphvet
