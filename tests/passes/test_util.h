// Helpers for the pass unit tests: parse a module from text, run a pipeline,
// find a remark or a node.
#pragma once

#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/pass_manager.h"

#include <gtest/gtest.h>

#include <string>

namespace graphvet::testing {

struct Optimized {
  Module module;
  PipelineResult result;
};

inline Optimized optimize(const std::string &text, PipelineOptions options = {}) {
  ParseResult parsed = parseModule(text);
  std::string errors;
  for (const Diagnostic &d : parsed.diagnostics)
    errors += d.format("test") + "\n";
  EXPECT_TRUE(parsed.module) << errors;
  Optimized out{parsed.module ? std::move(*parsed.module) : Module{}, {}};
  if (parsed.module || out.module.numGraphs() > 0)
    out.result = runPipeline(out.module, options);
  return out;
}

inline const Remark *remarkFor(const PipelineResult &r, const std::string &node) {
  for (const Remark &rm : r.remarks)
    if (rm.node == node)
      return &rm;
  return nullptr;
}

inline bool alive(const Module &m, const std::string &graph, const std::string &node) {
  GraphId g = m.findGraph(graph);
  return g != kNoGraph && m.graph(g).find(node) != kNoNode;
}

} // namespace graphvet::testing
