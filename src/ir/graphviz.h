// Rendering DOT text with graphviz's `dot` program (SVG for `graphvet show`
// and the campaign report).
#pragma once

#include <optional>
#include <string>

namespace graphvet {

/// True when graphviz's `dot` is on PATH.
bool graphvizAvailable();

/// Runs `dot -T<format>` on `dotText`; nullopt with `error` set when dot is
/// missing or fails.
std::optional<std::string> renderDot(const std::string &dotText, const std::string &format,
                                     std::string &error);

} // namespace graphvet
