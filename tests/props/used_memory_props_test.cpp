// annotate-used-memory against the interpreter: on every generated graph
// (the memory generator and the typed generator) and every corpus and lit
// graph, the `_used_memory` of each node equals the live bytes the
// interpreter measures at that node's step of the reference schedule, the
// root NetOutput's `_peak_memory` equals the measured peak, and annotating
// again changes nothing. The pass never includes oracle code: this test is
// where the two independent readings of semantics.md meet.
#include "prop_support.h"

#include "ir/op_library.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "oracle/inlined.h"
#include "oracle/interpreter.h"
#include "oracle/memory_plan.h"
#include "passes/annotate_used_memory.h"
#include "props/build_module.h"
#include "props/gen_recipe.h"
#include "props/typed_graph.h"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

namespace graphvet::props {
namespace {

enum class Outcome { Equal, Mismatch, NotRunnable, PassSkipped };

struct Comparison {
  Outcome outcome = Outcome::NotRunnable;
  std::string detail; ///< the first difference, or why nothing was compared
  size_t steps = 0;
};

/// Runs the interpreter and the pass on `m` and compares step by step.
Comparison compare(const Module &m) {
  Comparison c;
  oracle::MemoryPlan plan = oracle::MemoryPlan::build(m);
  if (!plan.errors().empty()) {
    c.detail = "plan: " + plan.errors().front();
    return c;
  }
  oracle::InlinedModule inl = oracle::InlinedModule::build(m, plan);
  if (!inl.errors.empty() || !inl.acyclic()) {
    c.detail = "not schedulable";
    return c;
  }
  oracle::Interpreter interp(m, plan, inl);
  oracle::RunOutcome run = interp.runOnce(7);
  if (run.crashed || run.budgetExceeded) {
    c.detail = run.crashed ? "crashed: " + run.crash : "over budget";
    return c;
  }
  Module annotated = m;
  AnnotateUsedMemoryStats s = runAnnotateUsedMemory(annotated, {}, nullptr);
  if (s.skipped) {
    c.outcome = Outcome::PassSkipped;
    c.detail = "pass skipped";
    return c;
  }
  c.outcome = Outcome::Mismatch;
  for (const oracle::LiveStep &ls : run.liveSteps) {
    const Node &n = annotated.graph(ls.graph).node(ls.node);
    auto v = n.intAttr(kUsedMemoryAttr);
    if (!v || static_cast<uint64_t>(*v) != ls.bytes) {
      c.detail = fmt::format("step {}: interpreter {} bytes, annotation {}", ls.name, ls.bytes,
                             v ? std::to_string(*v) : "missing");
      return c;
    }
    ++c.steps;
  }
  const Graph &root = annotated.graph(0);
  for (NodeId id : root.liveNodes())
    if (opKind(root.node(id)) == OpKind::NetOutput) {
      auto p = root.node(id).intAttr(kPeakMemoryAttr);
      if (!p || static_cast<uint64_t>(*p) != run.peakLiveBytes) {
        c.detail = fmt::format("peak: interpreter {}, annotation {}", run.peakLiveBytes,
                               p ? std::to_string(*p) : "missing");
        return c;
      }
      break;
    }
  // Idempotent: a second run changes no attribute.
  std::string once = printModule(annotated);
  Module twice = annotated;
  runAnnotateUsedMemory(twice, {}, nullptr);
  if (printModule(twice) != once) {
    c.detail = "not idempotent";
    return c;
  }
  c.outcome = Outcome::Equal;
  return c;
}

void assertAgrees(const Module &m) {
  Comparison c = compare(m);
  RC_LOG() << printModule(m) << "\n" << c.detail << "\n";
  switch (c.outcome) {
  case Outcome::Equal:
    RC_TAG("equal");
    break;
  case Outcome::PassSkipped:
    RC_TAG("pass skipped (control flow or no static size)");
    break;
  case Outcome::NotRunnable:
    RC_TAG("not runnable");
    break;
  case Outcome::Mismatch:
    RC_FAIL(c.detail);
  }
}

GRAPHVET_PROP(UsedMemoryProps, AnnotationEqualsInterpreterOnMemoryGraphs, 2000, ()) {
  assertAgrees(buildModule(*genRecipe()));
}

GRAPHVET_PROP(UsedMemoryProps, AnnotationEqualsInterpreterOnTypedGraphs, 1000, ()) {
  assertAgrees(buildTypedModule(*genTypedRecipe()).module);
}

/// The sections of a lit file (split at `# -----` lines).
std::vector<std::string> sections(const std::string &text) {
  std::vector<std::string> out(1);
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# -----", 0) == 0) {
      out.emplace_back();
      continue;
    }
    out.back() += line + "\n";
  }
  return out;
}

TEST(UsedMemoryCorpus, AnnotationEqualsInterpreterOnEveryCorpusAndLitGraph) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const char *dir : {"corpus", "tests/lit"})
    for (const auto &e : fs::recursive_directory_iterator(fs::path(GRAPHVET_SOURCE_DIR) / dir))
      if (e.is_regular_file() && e.path().extension() == ".graph")
        files.push_back(e.path());
  std::sort(files.begin(), files.end());
  size_t equal = 0, skipped = 0, notRunnable = 0;
  for (const fs::path &f : files) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    for (const std::string &sec : sections(ss.str())) {
      ParseOptions po;
      po.baseDir = f.parent_path().string();
      ParseResult r = parseModule(sec, po);
      if (!r.module)
        continue; // an invalid-input test case
      Comparison c = compare(*r.module);
      EXPECT_NE(c.outcome, Outcome::Mismatch) << f << ": " << c.detail;
      equal += c.outcome == Outcome::Equal;
      skipped += c.outcome == Outcome::PassSkipped;
      notRunnable += c.outcome == Outcome::NotRunnable;
    }
  }
  std::cout << "[corpus] " << files.size() << " files: " << equal << " graphs equal, " << skipped
            << " skipped by the pass, " << notRunnable << " not runnable\n";
  EXPECT_GT(equal, 100u);
}

} // namespace
} // namespace graphvet::props
