// Properties every mid-end pass holds on typed random graphs (real dtypes,
// shapes and values, props/typed_graph.h): each pass of the table alone and
// each -O level is sound by the oracle's value check, leaves a graph the
// verifier accepts, and is idempotent (a second run prints the same text);
// the level pipelines reach their fixpoint within their iteration bound.
#include "prop_support.h"

#include "ir/printer.h"
#include "ir/verifier.h"
#include "oracle/check.h"
#include "passes/pass_manager.h"
#include "props/evaluate.h"
#include "props/typed_graph.h"

namespace graphvet::props {
namespace {

/// Each pass alone, the numeric rewrites together, then -O1, -O2 and -O3.
std::vector<PipelineOptions> pipelines() {
  std::vector<PipelineOptions> out;
  for (const PassInfo &p : allPasses()) {
    PipelineOptions po;
    po.passes = std::vector<std::string>{std::string(p.name)};
    if (p.name == "legalize") // a pass that needs an option to run
      po.optionOverrides["legalize.target"] = "npu";
    if (p.name == "partition-graph") // needs its target too
      po.optionOverrides["partition_graph.target"] = "npu";
    out.push_back(po);
  }
  // The numeric rewrites in the order they feed each other (a BatchNorm's
  // Mul and Add reach fold-scale-axis, whose folded constants fold-constant
  // may then fold further).
  PipelineOptions numeric;
  numeric.passes =
      std::vector<std::string>{"simplify-inference", "fold-scale-axis", "fold-constant"};
  out.push_back(numeric);
  // convert-layout does nothing without a target layout: once per target.
  for (const char *target : {"NHWC", "NCHW"}) {
    PipelineOptions po;
    po.passes = std::vector<std::string>{"convert-layout"};
    po.optionOverrides["convert_layout.target"] = target;
    out.push_back(po);
  }
  for (unsigned level = 1; level <= kMaxOptLevel; ++level) {
    PipelineOptions po;
    po.optLevel = level;
    out.push_back(po);
  }
  return out;
}

std::string describe(const PipelineOptions &po) {
  std::string s = po.passes ? "--passes " + passesFlag(po) : "-O" + std::to_string(po.optLevel);
  for (const auto &[key, value] : po.optionOverrides)
    s += " --option " + key + "=" + value;
  return s;
}

oracle::CheckOptions fastCheck(uint64_t seed) {
  oracle::CheckOptions co;
  co.useZ3 = false;
  co.seed = seed;
  return co;
}

/// The optimized module of `po` on `m`, asserting the verifier passed.
Module optimize(const Module &m, const PipelineOptions &po) {
  Module opt = m;
  PipelineResult r = runPipeline(opt, po);
  RC_LOG() << describe(po) << ": " << (r.ok ? "ok" : "failed in " + r.failedPass) << "\n";
  for (const Diagnostic &d : r.diagnostics)
    RC_LOG() << d.format("<generated>") << "\n";
  RC_ASSERT(r.ok);
  return opt;
}

GRAPHVET_PROP(TypedPassProps, EveryPassIsSoundOnTypedGraphs, 1500, ()) {
  TypedModule tm = buildTypedModule(*genTypedRecipe());
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  size_t changed = 0;
  for (const PipelineOptions &po : pipelines()) {
    Evaluation e = evaluate(tm.module, EvalOptions{po, fastCheck(seed)});
    RC_LOG() << describe(po) << ":\n" << oracle::formatResult(e.result);
    RC_ASSERT(e.result.verdict == oracle::Verdict::Sound);
    changed += countNodes(e.optimized) != countNodes(tm.module);
  }
  RC_TAG(changed == 0 ? "no pass changed the node count" : "some pass changed the node count");
}

GRAPHVET_PROP(TypedPassProps, EveryPassIsVerifierCleanAndIdempotent, 1000, ()) {
  TypedModule tm = buildTypedModule(*genTypedRecipe());
  for (const PipelineOptions &po : pipelines()) {
    Module once = optimize(tm.module, po);
    RC_ASSERT(!hasErrors(verifyModule(once)));
    std::string first = printModule(once);
    // Each pass reaches its own fixpoint and a level pipeline repeats its
    // rounds until nothing changes; an explicit list of several passes runs
    // once, and a later pass may enable an earlier one (fold-constant folding
    // a Shape leaves a Conv with one consumer, which fold-scale-axis may then
    // fold): only verifier-clean is promised there.
    if (po.passes && po.passes->size() > 1)
      continue;
    Module twice = optimize(once, po);
    std::string second = printModule(twice);
    RC_LOG() << describe(po) << " first run:\n" << first << "\nsecond run:\n" << second;
    RC_ASSERT(first == second);
  }
}

GRAPHVET_PROP(TypedPassProps, LevelPipelinesReachTheirFixpoint, 500, ()) {
  TypedModule tm = buildTypedModule(*genTypedRecipe());
  for (unsigned level = 1; level <= kMaxOptLevel; ++level) {
    PipelineOptions po;
    po.optLevel = level;
    Module opt = tm.module;
    PipelineResult r = runPipeline(opt, po);
    RC_ASSERT(r.ok);
    RC_LOG() << "-O" << level << ": " << r.iterations << " iterations\n";
    RC_ASSERT(r.reachedFixpoint);
    RC_ASSERT(r.iterations <= po.maxIterations);
  }
}

} // namespace
} // namespace graphvet::props
