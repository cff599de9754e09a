// ConstantFoldingPass (`fold-constant`): evaluates, with the interpreter's
// own kernels (OpInfo::kernel through evaluateNode), every node whose inputs
// are all constants, plus `Shape`/`Size` of statically typed tensors, and
// replaces it with a `Const`; inlines the taken branch of an `If` whose
// condition is a constant (docs/passes/fold-constant.md). MLIR-style entry
// point: an options struct and one run function returning statistics; each
// fold and each refusal is explained by one Remark.
#pragma once

#include "ir/graph.h"
#include "passes/remark.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace graphvet {

inline constexpr std::string_view kFoldConstantName = "fold-constant";
/// Module option overriding FoldConstantOptions::maxElements
/// (`--option fold_constant.max_elements=N`; option keys are identifiers, so
/// underscores, as tensor_move_delete.conservative).
inline constexpr std::string_view kFoldConstantMaxElementsOption = "fold_constant.max_elements";
/// Module options overriding foldShapeOps and inlineIf (`true` / `false`).
inline constexpr std::string_view kFoldConstantShapeOpsOption = "fold_constant.fold_shape_ops";
inline constexpr std::string_view kFoldConstantInlineIfOption = "fold_constant.inline_if";

struct FoldConstantOptions {
  /// Largest folded result, in elements (all materialized outputs of one
  /// node together). A larger result is refused (`size-cap`) unless it is
  /// smaller, in bytes, than the constants the fold frees. Default 1 Mi.
  int64_t maxElements = int64_t{1} << 20;
  /// Fold `Shape` and `Size` of any statically typed tensor, constant or not
  /// (default true).
  bool foldShapeOps = true;
  /// Inline the taken branch of an `If` whose condition is a constant
  /// (default true).
  bool inlineIf = true;
};

struct FoldConstantStats {
  int64_t folded = 0;        ///< nodes evaluated with their kernel and replaced by Consts
  int64_t shapeFolded = 0;   ///< Shape/Size nodes replaced by Consts
  int64_t ifsInlined = 0;    ///< If nodes replaced by their taken branch
  int64_t nodesInlined = 0;  ///< nodes moved out of inlined branches
  int64_t constsCreated = 0; ///< Const nodes the pass added
  int64_t copiesCreated = 0; ///< Identity copies feeding NetOutputs from new Consts
  int64_t constsRemoved = 0; ///< Const inputs removed when a fold took their last use
  /// Refusals by remark tag (`random`, `effect`, `size-cap`, ...).
  std::map<std::string, int64_t> refused;
  int64_t constBytesBefore = 0; ///< bytes of every valued Const of live graphs, before
  int64_t constBytesAfter = 0;  ///< the same after the pass
};

/// Runs the pass over every live graph of `m` (subgraphs included; a
/// subgraph's `Data` is never treated as a constant). When `remarks` is
/// given, appends one remark per fold, per inlined If and per refusal.
FoldConstantStats runFoldConstant(Module &m, const FoldConstantOptions &options,
                                  std::vector<Remark> *remarks);

} // namespace graphvet
