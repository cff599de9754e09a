// Formatting of diagnostics.
#include "ir/diagnostic.h"

#include <algorithm>

namespace graphvet {

std::string Diagnostic::format(const std::string &file) const {
  std::string out = file;
  if (loc.line != 0) {
    // Appended piecewise: `":" + std::to_string(...)` trips GCC 12's
    // false-positive -Wrestrict at -O3.
    out += ':';
    out += std::to_string(loc.line);
    out += ':';
    out += std::to_string(loc.col);
  }
  out += severity == Severity::Error ? ": error: " : ": warning: ";
  out += message;
  return out;
}

bool hasErrors(const Diagnostics &diags) {
  return std::any_of(diags.begin(), diags.end(),
                     [](const Diagnostic &d) { return d.severity == Severity::Error; });
}

} // namespace graphvet
