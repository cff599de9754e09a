// What passes report besides the rewritten module: one remark per decision
// (for `graphvet opt --remarks` and the fuzz campaign's rule coverage) and
// named counters.
#pragma once

#include "ir/graph.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace graphvet {

/// One decision a pass explains.
struct Remark {
  std::string pass;     ///< "tensor-move-delete"
  std::string node;     ///< the node decided on, e.g. "tm3" (unqualified)
  std::string decision; ///< "deleted" | "kept" | "skipped"
  /// Short stable tag: "scenario1".."scenario4", "scenario5-read-write",
  /// "scenario5-read-read", "scenario5-write-read", "rule1-...", "rule2-...",
  /// "rule3-...", "rule4-conflict", "rule5-layout", "reserved-attr", ...
  /// (docs/passes/tensor-move-delete.md lists them all).
  std::string rule;
  /// The full line, e.g. "deleted tm3 (source relu via Reshape r1; added ctrl
  /// sib -> w)" or "kept tm5: Rule 3: sibling out is a NetOutput".
  std::string message;
  std::string graph; ///< name of the graph holding the node
  SourceLoc loc;     ///< where the node was parsed ({0,0} if it was not)
};

/// The remark of `pass` deciding on node `n` of graph `g`.
inline Remark nodeRemark(std::string_view pass, const Graph &g, const Node &n, std::string decision,
                         std::string rule, std::string message) {
  return Remark{std::string(pass),
                n.name,
                std::move(decision),
                std::move(rule),
                std::move(message),
                g.name,
                n.loc};
}

/// Named counters of one pass run (tensor-move-delete: tensor_moves, deleted,
/// kept, ctrl_edges_added).
struct PassStats {
  std::map<std::string, int64_t> counters;
};

} // namespace graphvet
