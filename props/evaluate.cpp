// Pipeline + oracle evaluation and small helpers about its outcome.
#include "props/evaluate.h"

#include "props/contract.h"

#include <algorithm>

namespace graphvet::props {

Evaluation evaluate(const Module &original, const EvalOptions &opts) {
  // As graphvet check: the original sees the pipeline's option overrides
  // (semantics.md §4 takes the permissions from the original's options).
  if (opts.overridesReachOriginal && !opts.pipeline.optionOverrides.empty()) {
    Module overridden = original;
    writeOptionOverrides(overridden, opts.pipeline);
    EvalOptions plain = opts;
    plain.pipeline.optionOverrides.clear(); // already written
    return evaluate(overridden, plain);
  }
  Evaluation e{original, {}, {}};
  e.pipeline = runPipeline(e.optimized, opts.pipeline);
  e.result = checkOptimized(original, e.optimized, opts);
  if (opts.checkIdempotence)
    checkIdempotent(e.optimized, opts.pipeline, e.pipeline, e.result, &original);
  return e;
}

oracle::CheckResult checkOptimized(const Module &original, const Module &optimized,
                                   const EvalOptions &opts) {
  // As graphvet check: a pipeline holding an approx pass is judged by the
  // approx contract (pipelineContract), whatever the caller's default.
  oracle::CheckOptions check = opts.check;
  if (pipelineContract(opts.pipeline) == NumericContract::Approx)
    check.contract = NumericContract::Approx;
  oracle::CheckResult result = oracle::checkRefinement(original, optimized, check);
  checkReservedNodesKept(original, optimized, result);
  checkOutlinedCallOutputs(original, optimized, result);
  return result;
}

bool hasViolationKind(const oracle::CheckResult &r, const std::string &kind) {
  if (r.verdict != oracle::Verdict::Violation)
    return false;
  return std::any_of(r.violations.begin(), r.violations.end(),
                     [&](const oracle::Violation &v) { return v.kind == kind; });
}

std::vector<std::string> deletionRules(const PipelineResult &p) {
  std::vector<std::string> rules;
  for (const Remark &r : p.remarks)
    if (r.decision == "deleted")
      rules.push_back(r.rule);
  std::sort(rules.begin(), rules.end());
  rules.erase(std::unique(rules.begin(), rules.end()), rules.end());
  return rules;
}

std::string joinRules(const std::vector<std::string> &rules) {
  if (rules.empty())
    return "none";
  std::string out;
  for (const std::string &r : rules)
    out += (out.empty() ? "" : "+") + r;
  return out;
}

size_t countNodes(const Module &m) {
  size_t n = 0;
  for (GraphId g : m.canonicalGraphOrder())
    n += m.graph(g).numLiveNodes();
  return n;
}

std::string passesFlag(const PipelineOptions &opts) {
  if (!opts.passes)
    return "";
  std::string out;
  for (const std::string &p : *opts.passes)
    out += (out.empty() ? "" : ",") + p;
  return out;
}

} // namespace graphvet::props
