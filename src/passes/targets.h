// The target table: which ops a hardware target supports, with dtype and
// attribute limits. `legalize` rewrites what a target lacks; `partition-graph`
// (issue 27) outlines what it has. The shipped table (data/targets.json) is
// embedded into the binary at build time; a user's table is loaded from a
// file of the same format (docs/passes/legalize.md describes it).
#pragma once

#include "ir/diagnostic.h"
#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/types.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace graphvet {

/// What a target accepts of one op.
struct TargetOp {
  /// dtypes accepted for input 0 (and Cast's `to`); empty: every dtype.
  std::set<DType> dtypes;
  /// Conv: the input channel count C and the output channel count M must be
  /// multiples of this (1: no limit).
  int64_t channelsMultipleOf = 1;
};

struct Target {
  std::string name;
  std::string description;
  std::map<std::string, TargetOp> ops; ///< by op type; an op not listed is unsupported

  /// True when `op` on data of dtype `dtype` is accepted, limits other than
  /// the dtype aside (what a rewrite checks of the ops it would create).
  bool supportsOp(std::string_view op, DType dtype) const;
  /// Why node `n` is not supported (nullopt: it is). `inputTypes[k]` is the
  /// type of input k (nullptr when absent or unknown). Graph structure
  /// (Data, Const, NetOutput) is always supported.
  std::optional<std::string>
  unsupportedReason(const Node &n, const std::vector<const TensorType *> &inputTypes) const;
};

struct TargetTable {
  std::map<std::string, Target> targets; ///< by name
  const Target *find(std::string_view name) const;
  /// "dsp, npu": the names, sorted.
  std::string names() const;
};

/// Parses a table from `text`; `file` names it in errors. On a malformed
/// table returns nullopt with errors whose messages start "FILE:LINE:COL:"
/// for syntax errors and "FILE: at targets.npu.ops.Conv: ..." for a wrong
/// entry.
std::optional<TargetTable> parseTargetTable(std::string_view text, const std::string &file,
                                            Diagnostics &errors);
/// Reads and parses the file at `path` (errors as parseTargetTable's).
std::optional<TargetTable> loadTargetTable(const std::string &path, Diagnostics &errors);
/// The table shipped with graphvet (data/targets.json, embedded at build time).
const TargetTable &builtinTargetTable();
/// The embedded text of data/targets.json (generated source).
std::string_view builtinTargetTableText();

} // namespace graphvet
