// The `simplify` pass (docs/passes/simplify.md): the redundant-op rewriter.
// Every rewrite is an instance of a rule of the declarative table
// (src/ir/rewrite_rule.h, simplifyRules()): one generic matcher binds a
// rule's pattern on the graph, the rule's precondition decides, the pass's
// graph-level checks (purity, aliasing of a forwarded operand, graph outputs)
// decide, and one generic builder makes the replacement. One worklist driver
// applies the table to a fixpoint, in every graph (If/While branches too).
#pragma once

#include "ir/graph.h"
#include "ir/types.h"
#include "passes/remark.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace graphvet {

inline constexpr std::string_view kSimplifyName = "simplify";

struct SimplifyOptions {
  /// Most sweeps over the module (each re-infers types and walks every graph
  /// with a worklist); the pass stops earlier when a sweep changes nothing.
  /// Default 8: a sweep already revisits what its rewrites expose, so a
  /// second sweep normally only confirms the fixpoint.
  int maxSweeps = 8;
  /// Most rewrites in one sweep of one graph, per live node of the graph
  /// (bounds the worklist: each rewrite removes at least one op or makes
  /// the replacement the last of a chain). Default 4.
  int maxRewritesPerNode = 4;
  /// Most input slots one buffer exploration may visit (as cse and
  /// tensor-move-delete); beyond it a forwarding is refused (tag `budget`).
  size_t analysisBudget = size_t{1} << 16;
  /// The module's types as the pass receives it, when the caller has them
  /// (the pass manager: the verifier's, after the pass before changed the
  /// module); the pass's first inference takes them instead of inferring.
  TypeHandoff *inputTypes = nullptr;
};

struct SimplifyStats {
  int64_t matched = 0;   ///< (node, rule) pattern matches
  int64_t rewritten = 0; ///< rewrites applied
  int64_t refused = 0;   ///< nodes matched but kept, one remark each (a one-op pattern over plain
                         ///< operands failing its precondition does not count)
  int64_t erased = 0;    ///< nodes erased because a rewrite left them unused
  int64_t sweeps = 0;    ///< sweeps run
  bool boundReached = false; ///< stopped by maxSweeps / maxRewritesPerNode, not a fixpoint
  std::map<std::string, int64_t> perRule; ///< rewrites by rule name
};

/// Runs the pass over every live graph of `m`. When `remarks` is given,
/// appends one remark per rewrite (`[simplify:<rule>]`) and one per node
/// whose match was refused (`[simplify:<rule>:refused]` for a precondition,
/// `[simplify:<rule>:<tag>]` for a graph condition).
SimplifyStats runSimplify(Module &m, const SimplifyOptions &options, std::vector<Remark> *remarks);

} // namespace graphvet
