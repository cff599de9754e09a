// Pass contracts the oracle's semantics cannot see. Deleting a node the
// original marks as reserved (`_cannot_be_deleted = true`, or any
// `no_need_constant_folding`) leaves memory and values intact, so the oracle
// finds nothing; the pass contract still forbids it. The harness (campaign,
// reducer, `graphvet check`) adds this check after the oracle's.
#pragma once

#include "ir/graph.h"
#include "oracle/check.h"
#include "passes/pass_manager.h"

#include <string_view>

namespace graphvet::props {

/// Violation kind of a reserved node missing after the pipeline.
inline constexpr std::string_view kReservedDeletedKind = "reserved-deleted";

/// True when `n` carries a reserved attribute that forbids deleting it.
bool isReservedNode(const Node &n);

/// Appends one `reserved-deleted` violation per reserved node of `original`
/// that `optimized` no longer has (same graph name, same node name), and
/// turns a sound or inconclusive verdict into a violation. An invalid
/// original is left alone (nothing about it is a finding of the pass).
void checkReservedNodesKept(const Module &original, const Module &optimized,
                            oracle::CheckResult &result);

/// Violation kind of an outlined call (`_target` or `_fused`) whose outputs
/// share a buffer: two outputs the same value or views of one buffer, or an
/// output a view of one of the call's inputs (midend-passes.md: a region's
/// outputs never alias each other; each value used outside is one output).
inline constexpr std::string_view kRegionAliasKind = "region-alias";

/// Appends one `region-alias` violation per such output of a call marked
/// `_target` or `_fused` that `optimized` has and `original` has not (same
/// graph name, same node name), and turns a sound or inconclusive verdict
/// into a violation. An invalid original is left alone.
void checkOutlinedCallOutputs(const Module &original, const Module &optimized,
                              oracle::CheckResult &result);

/// Violation kind of a pipeline that is not at its fixpoint: run again on its
/// own output it changes it, or a level pipeline stopped at maxIterations
/// with the module still changing (midend-passes.md: -O1..-O3 run to a
/// fixpoint; every pass alone does all its work in one run).
inline constexpr std::string_view kNotIdempotentKind = "not-idempotent";

/// Runs `pipeline` again on a copy of `optimized` (its output, `first` the
/// result of that run) and appends a `not-idempotent` violation when the
/// second run changes the module (naming the first printed line that
/// differs) or when `first` did not reach the fixpoint; turns a sound or
/// inconclusive verdict into a violation. An invalid original, an output the
/// verifier rejected (the oracle speaks for them), an explicit list of
/// several passes (run once, it promises no fixpoint) and the reference
/// design of `--tm-conservative` (documented as not idempotent) are left
/// alone.
///
/// `input`, when given, is the module the first run started from: a first
/// run that left it unchanged is not run again (passes are deterministic, so
/// a second run on the same module would again change nothing).
void checkIdempotent(const Module &optimized, const PipelineOptions &pipeline,
                     const PipelineResult &first, oracle::CheckResult &result,
                     const Module *input = nullptr);

} // namespace graphvet::props
