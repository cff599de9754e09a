// Helpers shared by the oracle tests: parse inline graph text or a file of
// tests/oracle/pairs, failing the test with the diagnostics when it does not
// parse.
#pragma once

#include "ir/parser.h"

#include <gtest/gtest.h>

#include <string>

namespace graphvet::oracle::testing {

inline Module parseText(const std::string &text) {
  std::string errors;
  auto m = parseOrReport(text, "<test>", errors);
  EXPECT_TRUE(m.has_value()) << errors;
  return m ? std::move(*m) : Module{};
}

inline std::string pairPath(const std::string &file) {
  return std::string(GRAPHVET_SOURCE_DIR) + "/tests/oracle/pairs/" + file;
}

inline Module parsePairFile(const std::string &file) {
  ParseResult r = parseFile(pairPath(file));
  std::string errors;
  for (const Diagnostic &d : r.diagnostics)
    errors += d.format(file) + "\n";
  EXPECT_TRUE(r.module.has_value()) << errors;
  return r.module ? std::move(*r.module) : Module{};
}

} // namespace graphvet::oracle::testing
