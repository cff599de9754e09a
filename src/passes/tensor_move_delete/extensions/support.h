// TensorMoveDeletePass: what several extensions share beyond the analysis:
// planning the control edges that order one set of accesses before another,
// and the facts about loops that write a copy (extensions/support.cpp).
#pragma once

#include "passes/tensor_move_delete/analysis.h"
#include "passes/tensor_move_delete/verdict.h"

#include <functional>
#include <optional>
#include <set>
#include <vector>

namespace graphvet::tmd {

/// Control edges an extension asks for, each (graph, from, to).
struct Ordering {
  std::vector<CtrlEdge> edges;
};

/// The control edges that put every node of `firsts` before every node of
/// `seconds`: for each pair, in the innermost graph holding both, each
/// taken at the node of that graph holding it; nullopt when a pair shares
/// that node, an edge would close a cycle or more than 16 edges would be
/// needed. `excused(first, second)` names pairs that need no ordering. A
/// pair in two different branches of one If/Case needs none either when that
/// holder runs at most once per run of the copy `t` (no loop around it that
/// is not around `t`): only one branch runs.
std::optional<Ordering> orderBefore(Analysis &a, NodeRef t, const std::vector<NodeRef> &firsts,
                                    const std::vector<NodeRef> &seconds,
                                    const std::function<bool(NodeRef, NodeRef)> &excused = nullptr);
/// The control edges (reader -> writer) that put every reader of the copy's
/// memory before each writer in `late`, which may run after the copy;
/// nullopt when the copy is a graph output, an edge would close a cycle, or
/// more than a few edges or readers would be involved.
std::optional<Ordering> orderReadersBeforeWriters(Analysis &a, NodeRef t,
                                                  const std::vector<NodeRef> &late);
/// Every node accessing the buffer `end` ends at that may run after the
/// copy `t` (calls and `t` left out: a call's body nodes come in their own
/// right). nullopt when the exploration runs out of budget or finds more
/// than 64 accesses.
std::optional<std::vector<NodeRef>>
sourceAccessesAfterCopy(Analysis &a, NodeRef t, const SourceTrace &trace, const SourceTrace &end);
/// `w` is a While in graph `g` with a cond and a body that does not
/// scribble its inputs.
bool plainLoopIn(const Module &m, NodeRef w, GraphId g);
/// The copy's only writer (every entry of copy.writers), when it is a
/// While in the copy's graph with a cond and a body that does not
/// scribble its inputs (ext-dead-loop-pair, ext-loop-mirror).
std::optional<NodeRef> onlyLoopWriter(const Module &m, NodeRef t, const BufferUses &copy);
/// The inputs of the While `w` through which it takes the source's or the
/// copy's memory (its loop variables bound to either).
std::set<uint32_t> loopVariablesOf(NodeRef w, const BufferFacts &source, const BufferUses &copy);

} // namespace graphvet::tmd
