// Properties every pass must hold on generated graphs: the originals are
// valid (race-free), each pass is sound by the oracle, the verifier accepts
// its result, a second run changes nothing, results and printed text are the
// same run after run, and the result round-trips through the text format.
// Each property runs every pass of the table alone and the default pipeline.
#include "prop_support.h"

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "oracle/check.h"
#include "passes/pass_manager.h"
#include "props/build_module.h"
#include "props/evaluate.h"
#include "props/gen_recipe.h"

namespace graphvet::props {
namespace {

/// Each pass alone, then the default pipeline.
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
  out.push_back(PipelineOptions{});
  // The reference design's narrower scope, which users may ask for, keeps
  // every property too.
  PipelineOptions conservative;
  conservative.conservative = true;
  out.push_back(conservative);
  return out;
}

std::string describe(const PipelineOptions &po) {
  std::string flag = passesFlag(po);
  std::string mode = po.conservative ? " --tm-conservative" : "";
  return (flag.empty() ? "the default pipeline" : "--passes " + flag) + mode;
}

oracle::CheckOptions fastCheck() {
  oracle::CheckOptions co;
  co.useZ3 = false;
  return co;
}

GRAPHVET_PROP(PassProps, GeneratedOriginalsAreValidAndRaceFree, 300, ()) {
  Module m = buildModule(*genRecipe());
  oracle::CheckResult r = oracle::checkOriginal(m, fastCheck());
  RC_ASSERT(r.verdict == oracle::Verdict::Sound);
}

GRAPHVET_PROP(PassProps, EveryPassIsSoundByTheOracle, 1500, ()) {
  Module m = buildModule(*genRecipe(GenOptions{}));
  for (const PipelineOptions &po : pipelines()) {
    Evaluation e = evaluate(m, EvalOptions{po, fastCheck()});
    RC_LOG() << describe(po) << ":\n" << oracle::formatResult(e.result);
    RC_ASSERT(e.result.verdict == oracle::Verdict::Sound);
  }
}

GRAPHVET_PROP(PassProps, EveryPassIsSoundWithTheZ3Proof, 20, ()) {
  Module m = buildModule(*genRecipe(GenOptions{}));
  oracle::CheckOptions co;
  co.useZ3 = true;
  Evaluation e = evaluate(m, EvalOptions{PipelineOptions{}, co});
  RC_LOG() << oracle::formatResult(e.result);
  RC_ASSERT(e.result.verdict != oracle::Verdict::Violation);
}

GRAPHVET_PROP(PassProps, TheVerifierAcceptsEveryPassResult, 300, ()) {
  Module m = buildModule(*genRecipe());
  for (PipelineOptions po : pipelines()) {
    po.verifyEach = true;
    Module opt = m;
    PipelineResult r = runPipeline(opt, po);
    RC_LOG() << describe(po) << " failed in " << r.failedPass;
    RC_ASSERT(r.ok);
    RC_ASSERT_FALSE(hasErrors(verifyModule(opt)));
  }
}

// 3,000 cases (about 1 s): the re-decision gaps this property found each
// needed 1,700 to 3,100 cases of one seed to show.
GRAPHVET_PROP(PassProps, ASecondRunChangesNothing, 3000, ()) {
  Module m = buildModule(*genRecipe());
  for (const PipelineOptions &po : pipelines()) {
    // The reference design's fixpoint is not idempotent, and conservative
    // mode reproduces its decisions exactly (golden remarks): a deletion
    // can leave a view without consumers, which no longer passes the memory
    // on, and the design does not revisit the copy beside it.
    if (po.conservative)
      continue;
    Module once = m;
    runPipeline(once, po);
    Module twice = once;
    PipelineResult second = runPipeline(twice, po);
    RC_LOG() << describe(po);
    RC_ASSERT(printModule(twice) == printModule(once));
  }
}

GRAPHVET_PROP(PassProps, ResultsAreDeterministic, 200, ()) {
  Module m = buildModule(*genRecipe());
  for (const PipelineOptions &po : pipelines()) {
    Module a = m, b = m;
    PipelineResult ra = runPipeline(a, po);
    PipelineResult rb = runPipeline(b, po);
    RC_LOG() << describe(po);
    RC_ASSERT(printModule(a) == printModule(b));
    RC_ASSERT(ra.remarks.size() == rb.remarks.size());
    for (size_t i = 0; i < ra.remarks.size(); ++i) {
      RC_ASSERT(ra.remarks[i].message == rb.remarks[i].message);
      RC_ASSERT(ra.remarks[i].rule == rb.remarks[i].rule);
    }
  }
}

GRAPHVET_PROP(PassProps, PassResultsRoundTripThroughText, 200, ()) {
  Module m = buildModule(*genRecipe());
  Module opt = m;
  runPipeline(opt, PipelineOptions{});
  std::string text = printModule(opt);
  ParseResult parsed = parseModule(text);
  RC_ASSERT(parsed.module.has_value());
  RC_ASSERT(printModule(*parsed.module) == text);
}

} // namespace
} // namespace graphvet::props
