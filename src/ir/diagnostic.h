// Diagnostics in the one shape every tool prints: FILE:LINE:COL: error: MESSAGE.
#pragma once

#include "ir/graph.h"

#include <string>
#include <vector>

namespace graphvet {

enum class Severity { Error, Warning };

struct Diagnostic {
  SourceLoc loc;
  std::string message;
  Severity severity = Severity::Error;

  /// "FILE:LINE:COL: error: MESSAGE" (LINE:COL omitted when loc is unknown).
  std::string format(const std::string &file) const;
};

using Diagnostics = std::vector<Diagnostic>;

bool hasErrors(const Diagnostics &diags);

} // namespace graphvet
