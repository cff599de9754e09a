// TensorMoveDeletePass: the extensions -- rewrites beyond the reference
// design, each deleting copies the rules keep although they are provably
// redundant (docs/passes/tensor-move-delete.md, "Extensions"). Each is one
// file of extensions/ behind the interface below, and the ONE list of them,
// in the order they are tried, is extensions/registry.cpp. Conservative mode
// (--tm-conservative) runs with that list empty.
//
// An extension is asked after the rules kept a copy (with a rule that is no
// final keep: not reserved, malformed, variable-bound, cyclic or a
// resize). Its precondition reads the facts every extension shares (the
// ExtensionCase, computed once per copy, on first demand); its plan proves
// the copy redundant from facts it checks itself and says which buffers the
// copy merges into and which control edges must be added first. The first
// plan wins; the surgery (surgery.cpp) then deletes the copy as for the
// rules. One extension, ext-sibling-holder, widens a rule instead: scenario 5
// asks it to sort siblings that hold subgraphs into readers and writers.
#pragma once

#include "passes/tensor_move_delete/analysis.h"
#include "passes/tensor_move_delete/verdict.h"

#include <optional>
#include <string_view>
#include <vector>

namespace graphvet::tmd {

/// What an extension plans: the buffers the copy's memory merges into (the
/// analysis learns the copy's accesses there) and the control edges to add
/// before the deletion, each in the innermost graph holding both ends.
struct Plan {
  std::vector<SourceTrace> ends;
  std::vector<CtrlEdge> edges;
};

/// Siblings holding subgraphs, sorted by what their subgraphs do with the
/// memory (scenario 5 then orders them like any reader or writer); or the
/// sibling that keeps the copy (`refused`).
struct HolderRoles {
  std::vector<NodeId> readers, writers;
  NodeId refused = kNoNode;
};

/// Every writer of the source that may run after the copy, for a copy that
/// is never written (extensions/readonly_merge.cpp).
struct ReadOnlyMerge {
  std::vector<NodeRef> late;   ///< writers of the source that may run after the copy
  bool grantedOutputs = false; ///< a graph output the copy reaches shares a granted user input
};

/// The facts of one kept TensorMove that every extension may read, computed
/// once, in stages, when first asked -- in the order the extensions are
/// tried, so each stage is computed exactly where the list reaches it.
class ExtensionCase {
public:
  ExtensionCase(Analysis &a, NodeRef t, const Verdict &kept);

  Analysis &a;
  const NodeRef t;
  const Verdict &kept; ///< the rules' keep (named in the remark)
  /// The source trace (a buffer of its own behind an unconnected slot made
  /// an ordinary source: unconnectedOwnBuffer).
  SourceTrace trace;
  bool viaControlFlow = false; ///< the trace ended at control flow

  /// Stage 1. No extension can take the copy (no source it may read).
  bool closed() const { return closed_; }
  /// Stage 1. The trace ends at a loop's cond or body Data, which
  /// resolveControlFlow does not follow: the loop-variable extensions' case.
  bool loopVariableSource() const { return !closed_ && viaControlFlow && !ends_; }
  /// Stage 2. Every buffer the source can be (a loop Data followed to its
  /// variable after the loop-variable extensions), each of the copy's byte
  /// size; nullptr when unknown.
  const std::vector<SourceTrace> *sources();
  /// Stage 2. The sources were found through a loop's Data.
  bool viaLoopVariable() const { return viaLoopVariable_; }
  /// Stage 2. Something writes the copy's memory (its writers that really
  /// write; the exploration within budget).
  bool copyWritten();
  /// Stage 3 (an unwritten copy). The writers of the sources that may run
  /// after the copy; nullptr when some source may not take the copy's place
  /// (budget, graph outputs, caller memory, layout).
  const ReadOnlyMerge *readOnlyMerge();

private:
  bool closed_ = false;
  std::optional<std::vector<SourceTrace>> ends_;
  bool stage2_ = false, sourcesOk_ = false, written_ = false, viaLoopVariable_ = false;
  bool stage3_ = false;
  std::optional<ReadOnlyMerge> readOnly_;
};

class Extension {
public:
  virtual ~Extension() = default;
  /// Its name (the docs' heading), e.g. "loop-mirror".
  virtual std::string_view name() const = 0;
  /// The remark tag of the deletions it plans, e.g. "ext-loop-mirror".
  virtual std::string_view tag() const = 0;
  /// Why such a deletion is sound, as the remark says it.
  virtual std::string_view argument() const { return {}; }
  /// Precondition: is plan() tried for this copy at all? Reads the case's
  /// shared facts only.
  virtual bool applies(ExtensionCase &c) const {
    (void)c;
    return false;
  }
  /// The plan of the deletion, or nullopt when the copy cannot be proven
  /// redundant this way.
  virtual std::optional<Plan> plan(ExtensionCase &c) const {
    (void)c;
    return std::nullopt;
  }
  /// A widening of scenario 5 instead (ext-sibling-holder): the roles of the
  /// siblings `holders` of TensorMove `t`, which read its producer output
  /// `producer`; nullopt when it does not widen scenario 5.
  virtual std::optional<HolderRoles> holderRoles(Analysis &a, NodeRef t, OutPort producer,
                                                 const std::vector<NodeId> &holders) const {
    (void)a, (void)t, (void)producer, (void)holders;
    return std::nullopt;
  }
  virtual bool widensHolderSiblings() const { return false; }
};

using Extensions = std::vector<const Extension *>;

/// The extensions, in the order they are tried; empty in conservative mode
/// (extensions/registry.cpp).
const Extensions &extensionsFor(const TensorMoveDeleteOptions &options);
/// The extension that widens scenario 5 to siblings holding subgraphs.
const Extension *holderWidening(const Extensions &extensions);
/// Asks the extensions in order about a copy the rules kept (`kept`): the
/// verdict of the first plan, or nullopt.
std::optional<Verdict> tryExtensions(Analysis &a, const Extensions &extensions, NodeRef t,
                                     const Verdict &kept);

} // namespace graphvet::tmd
