// LegalizePass (`legalize`): rewrites the ops a target does not support (by
// the target table, passes/targets.h) into ops it does, each rewrite
// bit-exact for every attribute combination it accepts: Gemm into MatMul and
// Add, HardSwish into HardSigmoid and Mul, Clip of f16/bf16 through f32,
// Conv with channel counts padded to the target's multiple then sliced
// (docs/passes/legalize.md). An op with no exact rewrite stays, with a
// remark. One Remark per decision.
#pragma once

#include "ir/graph.h"
#include "passes/remark.h"
#include "passes/targets.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace graphvet {

inline constexpr std::string_view kLegalizeName = "legalize";
/// Module option naming the target (`--option legalize.target=npu`); required.
inline constexpr std::string_view kLegalizeTargetOption = "legalize.target";
/// Module option naming a user's target table file, read instead of the
/// shipped one (`--option legalize.targets_file=PATH`).
inline constexpr std::string_view kLegalizeTargetsFileOption = "legalize.targets_file";

struct LegalizeOptions {
  /// The target the graph must run on (no default: the pass manager refuses
  /// to run the pass without one). Not owned.
  const Target *target = nullptr;
};

struct LegalizeStats {
  int64_t unsupported = 0;                  ///< nodes the target does not support, seen
  std::map<std::string, int64_t> legalized; ///< rewrites, by op type of the rewritten node
  std::map<std::string, int64_t> refused;   ///< nodes kept, by remark tag
  int64_t nodesCreated = 0;                 ///< nodes added (constants included)
};

/// Runs the pass over every live graph of `m`. When `remarks` is given,
/// appends one remark per unsupported node (rewritten or kept), in
/// topological order of each graph.
LegalizeStats runLegalize(Module &m, const LegalizeOptions &options, std::vector<Remark> *remarks);

} // namespace graphvet
