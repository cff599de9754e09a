// TensorMoveDeletePass: what merging the copy's buffer into its source's does
// to sizes and to the memory layout (semantics.md §6). The resize check of
// step 1 and the extensions ask these; Rule 5 (rules.cpp) has the design's
// own, narrower layout check.
#pragma once

#include "passes/tensor_move_delete/analysis.h"

#include <cstdint>
#include <optional>
#include <set>
#include <vector>

namespace graphvet::tmd {

/// True when the copy `t` may stand for a source of `sourceBytes` bytes:
/// the sizes agree, or (default mode) every reader of the copy would read
/// the same bytes from the source. Every reader of a copy of `copyBytes`
/// bytes from a source of `sourceBytes` bytes must take r bytes of it with
/// copyBytes >= min(sourceBytes, r): a loop condition (the cond's result 0,
/// r = 1), an If/Case condition (r = 1), a copy (TensorMove, Identity,
/// MemcpyAsync) of r bytes, a While write-back into a loop variable of r
/// bytes. Views of the copy, the Data of calls and branches that take it and
/// the outputs of calls and branches that return it are its buffer too:
/// their readers count instead. Each such reader gets the source's first
/// min(sourceBytes, r) bytes either way and, past the source's end, the
/// padding of a copy (Departure 13).
bool sizeFits(Analysis &a, NodeRef t, std::optional<uint64_t> sourceBytes);
/// The trace stopped at a call body's Data whose slot in the call is left
/// `_`, or at a view of an unconnected input: the memory plan gives that
/// port a fresh buffer of its own, reading zero bytes (semantics.md §2).
bool unconnectedOwnBuffer(const Module &m, const SourceTrace &trace);
/// The buffer a trace ends at is made afresh by a node: an ordinary
/// output, not a branch Data on an unconnected input (whose buffer keeps
/// what is written there for the next run: graphvet fuzz --seed 2938).
bool computedFresh(const Module &m, const SourceTrace &end);
/// The source is a user input whose content after the run the options
/// leave unspecified (semantics.md §4), and every graph output the copy
/// reaches may share it.
bool grantedForCopy(Analysis &a, const SourceTrace &end, const BufferUses &copy);
/// The copy's writes may land in the buffer `end` ends at: nobody
/// observes it (a fresh buffer, or a user input granted for the copy's
/// graph outputs; no graph output itself, no new §6 conflict).
bool writesMayLandIn(Analysis &a, NodeRef t, const SourceTrace &end, const BufferUses &copy,
                     bool oneBuffer);
/// True when the copy's continuous-input consumers may read the source
/// instead: no end is caller memory, a weight or a graph output.
bool continuousMergeAllowed(Analysis &a, NodeRef t, const std::vector<SourceTrace> &ends,
                            const BufferUses &copy);
/// The merged buffer, a graph output wherever the copy is one, would
/// conflict (semantics.md §6) with a continuous-input op reading the
/// source that the original does not have that conflict with.
bool sourceLayoutAddsConflict(Analysis &a, NodeRef t, const SourceTrace &end,
                              const BufferUses &copy, bool oneBuffer);
/// After the copy's deletion every input of continuous-input op `user` is
/// on one buffer (semantics.md §6 exempts it): each is the copy or the very
/// port the copy reads (in the copy's graph), or a port bound to the
/// copy's buffer or to the source's one buffer (oneBufferOf). The caller
/// checks that the port the copy reads is one buffer.
bool exemptAfterMerge(Analysis &a, NodeRef t, NodeRef user);
/// Every graph output in `outputs` takes the same port of the root graph.
bool onePort(Analysis &a, const std::set<uint32_t> &outputs);

} // namespace graphvet::tmd
