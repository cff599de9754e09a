// graphvet check: runs the pass pipeline on each graph and asks the oracle
// whether the result refines the original (or, with --pair, checks a
// before/after pair produced by any tool). Prints the verdict with every
// violation's nodes, buffers, witness schedules, differing bytes and a
// replay command. Exit: 0 sound, 1 violation, 2 invalid input (including a
// racy original), 3 inconclusive.
#include "ir/graph.h"
#include "ir/parser.h"
#include "oracle/check.h"
#include "passes/pass_manager.h"
#include "props/contract.h"
#include "tools/graphvet/commands.h"

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>
#include <sstream>

namespace graphvet::cli {
namespace {

struct CheckCmdOptions {
  std::vector<std::string> files;
  std::vector<std::string> pair;
  PipelineCmdOptions pipeline;
  uint64_t seed = 1;
  unsigned states = 2;
  unsigned arithmetics = 1;
  unsigned z3TimeoutMs = 2000;
  bool noZ3 = false;
  bool noSpecials = false;
  bool idempotent = false;
  bool json = false;
  std::string contract; ///< "exact" / "approx"; empty: from the passes (--pair: exact)
  OnnxCmdOptions onnx;
};

int exitFor(oracle::Verdict v) {
  switch (v) {
  case oracle::Verdict::Sound:
    return kExitOk;
  case oracle::Verdict::Violation:
    return kExitViolation;
  case oracle::Verdict::Invalid:
    return kExitBadInput;
  case oracle::Verdict::Inconclusive:
    return kExitInconclusive;
  }
  return kExitBadInput;
}

/// Several files: bad input outranks a violation, which outranks inconclusive.
int worse(int a, int b) {
  auto rank = [](int s) {
    return s == kExitBadInput ? 3 : s == kExitViolation ? 2 : s == kExitInconclusive ? 1 : 0;
  };
  return rank(a) >= rank(b) ? a : b;
}

nlohmann::ordered_json resultJson(const oracle::CheckResult &r, const std::string &file) {
  nlohmann::ordered_json j;
  if (!file.empty())
    j["file"] = file;
  j["verdict"] = std::string(oracle::verdictName(r.verdict));
  j["kinds"] = oracle::violationKindsOf(r);
  j["violations"] = nlohmann::ordered_json::array();
  for (const oracle::Violation &v : r.violations) {
    nlohmann::ordered_json jv;
    jv["kind"] = v.kind;
    jv["nodes"] = v.nodes;
    jv["buffers"] = v.buffers;
    jv["schedule"] = v.schedules.empty() ? std::vector<std::string>{} : v.schedules.front();
    jv["schedules"] = v.schedules;
    jv["bytes"] = v.bytes;
    jv["message"] = v.message;
    jv["location"] = v.location;
    j["violations"].push_back(std::move(jv));
  }
  j["reason"] = r.reason;
  j["replay"] = r.replay;
  j["warnings"] = r.warnings;
  j["contract"] = std::string(contractName(r.contract));
  if (r.margin) {
    const oracle::ApproxMargin &m = *r.margin;
    j["approx_margin"] = {{"elements", m.elements},
                          {"moved", m.moved},
                          {"max_ulps", m.maxUlps},
                          {"max_relative", m.maxRelative},
                          {"max_absolute", m.maxDistance},
                          {"worst_bound_ratio", m.worstRatio},
                          {"distance_at_worst", m.distanceAtWorst},
                          {"bound_at_worst", m.boundAtWorst}};
  }
  return j;
}

/// With `pipeline` (FILE mode), --json also gives its decision counts, as
/// `opt --stats --json` does.
void print(const oracle::CheckResult &r, const std::string &file, bool json,
           const PipelineResult *pipeline = nullptr) {
  if (json) {
    nlohmann::ordered_json j = resultJson(r, file);
    if (pipeline)
      j["pipeline"] = pipelineStatsJson(*pipeline);
    std::cout << j.dump() << "\n";
  } else {
    if (!file.empty())
      std::cout << file << ": ";
    std::cout << oracle::formatResult(r);
  }
  std::cout.flush();
}

oracle::CheckOptions checkOptions(const CheckCmdOptions &opts) {
  oracle::CheckOptions co;
  co.seed = opts.seed;
  co.numStates = opts.states;
  co.arithmetics = opts.arithmetics;
  co.z3TimeoutMs = opts.z3TimeoutMs;
  co.useZ3 = !opts.noZ3;
  co.specials = !opts.noSpecials;
  if (auto c = parseContract(opts.contract))
    co.contract = *c;
  return co;
}

/// The oracle's budgets, as a replay must repeat them: the number of states
/// decides which witnesses exist, the Z3 budget whether a race is proven.
std::string checkReplayFlags(const CheckCmdOptions &opts) {
  const CheckCmdOptions defaults;
  std::string out;
  if (opts.states != defaults.states)
    out += " --states " + std::to_string(opts.states);
  if (opts.z3TimeoutMs != defaults.z3TimeoutMs)
    out += " --z3-timeout " + std::to_string(opts.z3TimeoutMs);
  if (opts.noZ3)
    out += " --no-z3";
  if (opts.noSpecials)
    out += " --no-specials";
  if (opts.idempotent)
    out += " --idempotent";
  if (!opts.contract.empty())
    out += " --contract " + opts.contract;
  return out;
}

int checkPair(const CheckCmdOptions &opts) {
  // The original is the user's input: unparsable or invalid is bad input.
  // The optimized graph is a tool's output: any defect of it is a violation
  // the oracle reports (invalid-output, cycle), so it is read as text.
  auto orig = loadModuleFile(opts.pair[0], opts.onnx, "check", std::cerr);
  std::optional<std::string> optText = readTextFile(opts.pair[1], std::cerr);
  if (!orig || !optText)
    return kExitBadInput;
  oracle::CheckOptions co = checkOptions(opts);
  co.optimizedName = opts.pair[1] == "-" ? "<stdin>" : opts.pair[1];
  oracle::CheckResult r = oracle::checkRefinementOfText(*orig, *optText, co);
  if (ParseResult opt = parseModule(*optText); opt.module) {
    props::checkReservedNodesKept(*orig, *opt.module, r);
    props::checkOutlinedCallOutputs(*orig, *opt.module, r);
  }
  r.replay = oracle::replayPairCommand(opts.pair[0], opts.pair[1], opts.seed, opts.arithmetics) +
             checkReplayFlags(opts) + onnxReplayFlags(opts.onnx);
  print(r, "", opts.json);
  return exitFor(r.verdict);
}

int checkFiles(const CheckCmdOptions &opts) {
  PipelineOptions pipeline;
  if (!toPipelineOptions(opts.pipeline, "check", pipeline, std::cerr))
    return kExitBadInput;
  const bool several = opts.files.size() > 1;
  int status = kExitOk;
  for (const std::string &file : opts.files) {
    auto original = loadModuleFile(file, opts.onnx, "check", std::cerr);
    if (!original) {
      status = worse(status, kExitBadInput);
      continue;
    }
    // The original sees the same option overrides as the pipeline: the
    // permissions of semantics.md §4 come from the original's options.
    writeOptionOverrides(*original, pipeline);
    Module optimized = *original;
    PipelineResult pr = runPipeline(optimized, pipeline);
    std::string shown = file == "-" ? "<stdin>" : file;
    for (const Diagnostic &w : pr.warnings)
      std::cerr << w.format(shown) << "\n";
    if (!pr.ok && pr.failedPass.empty()) {
      for (const Diagnostic &d : pr.diagnostics)
        std::cerr << d.format(shown) << "\n";
      status = worse(status, kExitBadInput);
      continue;
    }
    // A pass that broke the verifier still yields a module: the oracle
    // reports it as `invalid-output` (or `cycle`).
    oracle::CheckOptions co = checkOptions(opts);
    if (opts.contract.empty())
      co.contract = pipelineContract(pipeline);
    oracle::CheckResult r = oracle::checkRefinement(*original, optimized, co);
    props::checkReservedNodesKept(*original, optimized, r);
    props::checkOutlinedCallOutputs(*original, optimized, r);
    if (opts.idempotent)
      props::checkIdempotent(optimized, pipeline, pr, r, &*original);
    r.replay = oracle::replayPassesCommand(file, opts.pipeline.passes.value_or(""), opts.seed,
                                           opts.arithmetics) +
               pipelineReplayFlags(opts.pipeline) + checkReplayFlags(opts) +
               onnxReplayFlags(opts.onnx);
    print(r, several ? shown : "", opts.json, &pr);
    status = worse(status, exitFor(r.verdict));
  }
  return status;
}

int runCheck(const CheckCmdOptions &opts) {
  if (!opts.pair.empty()) {
    if (!opts.files.empty() || anyPipelineOption(opts.pipeline) || opts.idempotent) {
      std::cerr << "graphvet check: error: --pair takes exactly two files and no pass options "
                   "(--passes, -O, --disable-pass, --option, --tm-conservative, --idempotent)\n";
      return kExitBadInput;
    }
    return checkPair(opts);
  }
  if (opts.files.empty()) {
    std::cerr << "graphvet check: error: give FILE... or --pair ORIGINAL OPTIMIZED\n";
    return kExitBadInput;
  }
  return checkFiles(opts);
}

} // namespace

void registerCheck(CLI::App &app, CommandContext &ctx) {
  auto opts = std::make_shared<CheckCmdOptions>();
  CLI::App *sub = app.add_subcommand(
      "check", "Check that the passes (or any tool, with --pair) transform a graph soundly");
  sub->add_option("files", opts->files,
                  "the .graph files (or .onnx models, imported in memory) to optimize and check");
  sub->add_option("--pair", opts->pair, "check ORIGINAL OPTIMIZED instead of running passes")
      ->expected(2);
  addPipelineOptions(sub, opts->pipeline);
  addOnnxOptions(sub, opts->onnx);
  addIntOption(sub, "--seed", opts->seed, 0, kMaxSeed, "initial states derive from this seed");
  addIntOption(sub, "--states", opts->states, 1, kMaxStates,
               "seeded initial states per experiment");
  addArithmeticsOption(sub, "--arithmetics", opts->arithmetics,
                       "variants of the placeholder arithmetic of ops without semantics, each on "
                       "every state (a sound change is sound under every one; 1: the documented "
                       "mix)");
  addIntOption(sub, "--z3-timeout", opts->z3TimeoutMs, 1, kMaxZ3TimeoutMs,
               "total Z3 budget per check, in ms");
  sub->add_flag("--no-z3", opts->noZ3, "decide races by reachability only (no proof)");
  sub->add_flag("--no-specials", opts->noSpecials,
                "seed inputs with ordinary values only, no +-0/inf/NaN/subnormals/extremes (a "
                "real model, whose activations the specials would make NaN everywhere)");
  sub->add_flag("--idempotent", opts->idempotent,
                "also run the pipeline again on its output: a second run that changes it, or a "
                "level pipeline that never reached its fixpoint, is a not-idempotent violation");
  sub->add_option("--contract", opts->contract,
                  "numeric contract the values are judged by: exact (bit for bit, NaNs equal) "
                  "or approx (within a bound derived from the magnitudes behind each element); "
                  "default: approx when a selected pass declares it, else exact")
      ->check(CLI::IsMember({"exact", "approx"}));
  sub->add_flag(
      "--json", opts->json,
      "one JSON object per checked graph on stdout (with the pipeline's decision counts)");
  sub->footer("Exit status: 0 sound, 1 violation, 2 invalid input (unparsable, malformed, "
              "cyclic or racy original), 3 inconclusive (a budget ran out).");
  sub->callback([opts, &ctx] { ctx.status = runCheck(*opts); });
}

} // namespace graphvet::cli
