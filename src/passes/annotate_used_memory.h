// AnnotateUsedMemoryPass (`annotate-used-memory`): writes on every node the
// bytes of fresh buffers live while it runs under the reference schedule
// (`_used_memory`), and on the root NetOutput the peak (`_peak_memory`), from
// the pass's own memory timeline (annotate_used_memory/analysis.h). Values
// never change. Modules whose figures are not static (control flow, dynamic
// sizes, cycles) are skipped with a remark and stale annotations removed
// (docs/passes/annotate-used-memory.md).
#pragma once

#include "ir/graph.h"
#include "passes/remark.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace graphvet {

inline constexpr std::string_view kAnnotateUsedMemoryName = "annotate-used-memory";
inline constexpr const char *kUsedMemoryAttr = "_used_memory";
inline constexpr const char *kPeakMemoryAttr = "_peak_memory";

struct AnnotateUsedMemoryOptions {
  /// Also annotate Data, Const, Variable and NetOutput nodes, which run no
  /// kernel but have a step in the schedule (default true: every node).
  bool annotateNoops = true;
};

struct AnnotateUsedMemoryStats {
  int64_t annotated = 0; ///< nodes given `_used_memory` (calls included)
  int64_t changed = 0;   ///< annotations that were absent or different before
  int64_t removed = 0;   ///< stale annotations removed from a skipped module
  int64_t skipped = 0;   ///< 1 when the module was skipped
  int64_t peak = 0;      ///< the peak in bytes (0 when skipped)
  int64_t steps = 0;     ///< steps of the reference schedule
};

/// Runs the pass on `m`. One remark names the peak step
/// (`[annotate-used-memory:peak]`), one per changed annotation
/// (`[annotate-used-memory:updated]`), one for a skipped module
/// (`[annotate-used-memory:control-flow|dynamic-size|cyclic|malformed]`).
AnnotateUsedMemoryStats runAnnotateUsedMemory(Module &m, const AnnotateUsedMemoryOptions &options,
                                              std::vector<Remark> *remarks);

} // namespace graphvet
