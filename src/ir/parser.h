// The `.graph` text format parser (graph-format.md): strict, never crashes,
// reports every error with its line and column. A successful parse has also
// passed the structural verifier.
//
// What the parser builds: graph ids and node ids follow file order (the first
// graph is the root, GraphId 0); Node::loc and Graph::loc are the locations of
// their names. The `outputs` attribute is consumed into Node::numOutputs and
// `subgraphs` into Node::subgraphs (via Module::attachSubgraph): neither stays
// in Node::attrs, and the printer writes both back from those fields.
//
// Errors come in three phases, each run only when the previous one is clean,
// so one mistake is never reported as a cascade: syntax (with recovery at the
// next statement, several errors per file), name resolution (all unknown
// names at once), then verifyModule. A lexical error (bad character, string or
// integer) stops the parse.
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

struct ParseOptions {
  /// Run verifyModule as the third phase (default). Off, a module that
  /// survives syntax and name resolution is returned with the verifier's
  /// findings left to the caller: translation validation reads a pass's
  /// output this way, where a structural defect is the pass's violation,
  /// not the user's bad input (oracle::checkRefinementOfText).
  bool verify = true;
  /// Folder that `file("NAME", offset)` tensor literals are relative to (the
  /// `.graph` file's folder; empty = the working directory).
  std::string baseDir;
};

/// Largest tensor literal (bytes) a file may hold.
inline constexpr uint64_t kMaxLiteralBytes = uint64_t{1} << 28;

/// Parses `text`; `fileName` is only used by callers to format diagnostics.
ParseResult parseModule(std::string_view text, const ParseOptions &opts = {});

/// Reads and parses a file; an unreadable file is one error at 0:0.
ParseResult parseFile(const std::string &path);

/// Convenience for tests and tools: parses or returns nullopt, appending
/// formatted "FILE:LINE:COL: error: ..." lines to `errors`.
std::optional<Module> parseOrReport(std::string_view text, const std::string &fileName,
                                    std::string &errors);

} // namespace graphvet
