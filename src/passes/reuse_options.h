// Strict parsers of the two memory-reuse compile options (semantics.md §4):
// `ge.exec.outputReuseInputMemIndexes = "j,k|j2,k2"` and
// `ge.exec.inputReuseMemIndexes = "k,k2"`. A malformed value is a warning
// naming the option and the offending token, and grants nothing at all.
#pragma once

#include "ir/diagnostic.h"
#include "ir/graph.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace graphvet {

inline constexpr std::string_view kOutputReuseInputMemIndexes =
    "ge.exec.outputReuseInputMemIndexes";
inline constexpr std::string_view kInputReuseMemIndexes = "ge.exec.inputReuseMemIndexes";

/// The permissions the two options grant (empty = nothing granted).
struct ReuseGrants {
  /// (graph output j, user input k) pairs of outputReuseInputMemIndexes.
  std::set<std::pair<uint32_t, uint32_t>> outputInputPairs;
  /// User inputs k of inputReuseMemIndexes.
  std::set<uint32_t> reusableInputs;

  /// True when any option lets user input k's memory be reused at all.
  bool mentionsInput(uint32_t k) const;
  /// Graph outputs allowed to share memory with user input k by
  /// outputReuseInputMemIndexes (inputReuseMemIndexes allows all of them).
  std::set<uint32_t> outputsFor(uint32_t k) const;
};

/// Parses `outputReuseInputMemIndexes`: pairs `j,k` separated by `|`, each
/// number a non-negative decimal integer below 2^31 with optional spaces or
/// tabs around it. An empty (or all-blank) value is valid and grants nothing.
/// On a malformed value returns nullopt and sets `badToken` to the offending
/// piece (a number, or a whole pair when its shape is wrong).
std::optional<std::set<std::pair<uint32_t, uint32_t>>>
parseOutputReuseInputMemIndexes(std::string_view value, std::string &badToken, std::string &why);
/// Parses `inputReuseMemIndexes`: `k,k2,...` with the same number grammar.
std::optional<std::set<uint32_t>>
parseInputReuseMemIndexes(std::string_view value, std::string &badToken, std::string &why);

/// Reads both options from a module's options block. Each malformed option
/// adds one warning (located at the option when it was parsed from a file)
/// to `warnings` and contributes nothing to the result.
ReuseGrants readReuseGrants(const std::map<std::string, std::string> &options,
                            const std::map<std::string, SourceLoc> &optionLocs,
                            Diagnostics &warnings);

} // namespace graphvet
