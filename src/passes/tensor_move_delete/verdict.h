// TensorMoveDeletePass: what deciding one TensorMove yields (a Verdict), and
// what the rules learn about the copy's successors on the way. Shared by the
// rules (rules.cpp), the extensions (extensions/), the surgery (surgery.cpp)
// and the driver (pass.cpp).
#pragma once

#include "passes/buffer_analysis.h"

#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace graphvet::tmd {

class Extension;

enum class Outcome { Delete, Keep, Skip };

/// A control edge of the module: (graph, from, to).
using CtrlEdge = std::tuple<GraphId, NodeId, NodeId>;

/// A TensorMove's successor (a node consuming its output), with what it does
/// to the memory it gets from the TensorMove.
struct SuccInfo {
  NodeId node = kNoNode;
  std::vector<uint32_t> slots;
  AccessClass access = AccessClass::ReadOnly; ///< effective, through aliases
  bool passesOn = false;
};

struct Verdict {
  Outcome outcome = Outcome::Keep;
  std::string rule;
  std::string reason; ///< for Keep/Skip: "Rule 3: sibling out is a NetOutput"
  SourceTrace trace;
  /// Scenario-5 control edges sibling -> successor to add before deleting.
  std::vector<std::pair<NodeId, NodeId>> pending;
  /// Control edges an extension adds before deleting, each in the innermost
  /// graph holding both ends (graph, from, to).
  std::vector<CtrlEdge> orderEdges;
  /// Set by the extensions, whose checks already order every writer of the
  /// source against the copy's readers: an edge consumer -> control
  /// successor of the copy that would close a cycle may then be left out
  /// (the successor writes neither the source nor, unordered, the copy);
  /// the copy's control predecessors are ordered before it directly.
  bool looseSuccessors = false;
  /// For an extension: every buffer the source can be (control flow
  /// resolved); empty for the design's rules (the trace's source).
  std::vector<SourceTrace> ends;
  /// Scenario 5 facts for naming the deletion: a sibling writes; a sibling
  /// holds subgraphs, admitted by this extension (ext-sibling-holder).
  bool writingSibling = false;
  const Extension *holderSibling = nullptr;
  /// The extension whose plan this deletion is (its remark gives the
  /// extension's argument); nullptr for the design's rules.
  const Extension *plannedBy = nullptr;
};

/// The verdict keeping the TensorMove for `rule` ("rule4-conflict").
inline Verdict keepFor(std::string rule, std::string reason) {
  Verdict v;
  v.outcome = Outcome::Keep;
  v.rule = std::move(rule);
  v.reason = std::move(reason);
  return v;
}

} // namespace graphvet::tmd
