// The `.graph` text format parser (graph-format.md): strict, never crashes,
// reports every error with its line and column. A successful parse has also
// passed the structural verifier.
#pragma once

#include "ir/diagnostic.h"
#include "ir/graph.h"

#include <optional>
#include <string>
#include <string_view>

namespace graphvet {

/// Largest output count a file may give a node (`outputs = N`, `name:k`);
/// keeps hostile input from allocating huge port tables.
inline constexpr uint32_t kMaxOutputs = 1024;

/// Deepest nesting of attribute lists the parser accepts.
inline constexpr int kMaxListDepth = 64;

struct ParseResult {
  std::optional<Module> module; ///< set when there are no errors
  Diagnostics diagnostics;      ///< errors (and warnings) in source order
};

/// Parses `text`; `fileName` is only used by callers to format diagnostics.
ParseResult parseModule(std::string_view text);

/// Reads and parses a file; an unreadable file is one error at 0:0.
ParseResult parseFile(const std::string &path);

/// Convenience for tests and tools: parses or returns nullopt, appending
/// formatted "FILE:LINE:COL: error: ..." lines to `errors`.
std::optional<Module> parseOrReport(std::string_view text, const std::string &fileName,
                                    std::string &errors);

} // namespace graphvet
