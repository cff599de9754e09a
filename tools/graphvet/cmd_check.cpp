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
  std::optional<std::string> passes;
  unsigned optLevel = 3;
  std::vector<std::string> disabled;
  std::vector<std::string> options;
  uint64_t seed = 1;
  unsigned states = 2;
  unsigned arithmetics = 1;
  unsigned z3TimeoutMs = 2000;
  bool noZ3 = false;
  bool json = false;
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
  return j;
}

void print(const oracle::CheckResult &r, const std::string &file, bool json) {
  if (json) {
    std::cout << resultJson(r, file).dump() << "\n";
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
  return co;
}

/// The flags that change the pipeline, as they must appear in a replay.
std::string pipelineFlags(const CheckCmdOptions &opts) {
  std::string out;
  if (opts.optLevel != 3)
    out += " -O " + std::to_string(opts.optLevel);
  for (const std::string &d : opts.disabled)
    out += " --disable-pass " + d;
  for (const std::string &o : opts.options)
    out += " --option '" + o + "'";
  return out;
}

int checkPair(const CheckCmdOptions &opts) {
  // The original is the user's input: unparsable or invalid is bad input.
  // The optimized graph is a tool's output: any defect of it is a violation
  // the oracle reports (invalid-output, cycle), so it is read as text.
  auto orig = loadGraphFile(opts.pair[0], std::cerr);
  std::optional<std::string> optText = readTextFile(opts.pair[1], std::cerr);
  if (!orig || !optText)
    return kExitBadInput;
  oracle::CheckOptions co = checkOptions(opts);
  co.optimizedName = opts.pair[1] == "-" ? "<stdin>" : opts.pair[1];
  oracle::CheckResult r = oracle::checkRefinementOfText(*orig, *optText, co);
  if (ParseResult opt = parseModule(*optText); opt.module)
    props::checkReservedNodesKept(*orig, *opt.module, r);
  r.replay = oracle::replayPairCommand(opts.pair[0], opts.pair[1], opts.seed, opts.arithmetics);
  print(r, "", opts.json);
  return exitFor(r.verdict);
}

int checkFiles(const CheckCmdOptions &opts) {
  PipelineOptions pipeline;
  pipeline.optLevel = opts.optLevel;
  pipeline.disabled = opts.disabled;
  if (!applyOptionOverrides(opts.options, "check", pipeline, std::cerr))
    return kExitBadInput;
  if (!applyPassList(opts.passes, opts.disabled, "check", pipeline, std::cerr))
    return kExitBadInput;
  const bool several = opts.files.size() > 1;
  int status = kExitOk;
  for (const std::string &file : opts.files) {
    auto original = loadGraphFile(file, std::cerr);
    if (!original) {
      status = worse(status, kExitBadInput);
      continue;
    }
    // The original sees the same option overrides as the pipeline: the
    // permissions of semantics.md §4 come from the original's options.
    for (const auto &[k, v] : pipeline.optionOverrides)
      original->options[k] = v;
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
    // reports it as `malformed`.
    oracle::CheckResult r = oracle::checkRefinement(*original, optimized, checkOptions(opts));
    props::checkReservedNodesKept(*original, optimized, r);
    r.replay =
        oracle::replayPassesCommand(file, opts.passes.value_or(""), opts.seed, opts.arithmetics) +
        pipelineFlags(opts);
    print(r, several ? shown : "", opts.json);
    status = worse(status, exitFor(r.verdict));
  }
  return status;
}

int runCheck(const CheckCmdOptions &opts) {
  if (!opts.pair.empty()) {
    if (!opts.files.empty() || opts.passes) {
      std::cerr << "graphvet check: error: --pair takes exactly two files and no --passes\n";
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
  sub->add_option("files", opts->files, "the .graph files to optimize and check");
  sub->add_option("--pair", opts->pair, "check ORIGINAL OPTIMIZED instead of running passes")
      ->expected(2);
  sub->add_option("--passes", opts->passes,
                  "comma-separated passes to run, in order (overrides -O)");
  sub->add_option("-O,--opt-level", opts->optLevel, "optimization level 0..3")
      ->check(CLI::Range(0u, kMaxOptLevel))
      ->capture_default_str();
  sub->add_option("--disable-pass", opts->disabled, "do not run this pass (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sub->add_option("--option", opts->options,
                  "set a compile option KEY=VALUE over the file's options block (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sub->add_option("--seed", opts->seed, "initial states derive from this seed")
      ->capture_default_str();
  sub->add_option("--states", opts->states, "seeded initial states per experiment")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  addArithmeticsOption(sub, "--arithmetics", opts->arithmetics,
                       "variants of the placeholder arithmetic of ops without semantics, each on "
                       "every state (a sound change is sound under every one; 1: the documented "
                       "mix)");
  sub->add_option("--z3-timeout", opts->z3TimeoutMs, "total Z3 budget per check, in ms")
      ->capture_default_str();
  sub->add_flag("--no-z3", opts->noZ3, "decide races by reachability only (no proof)");
  sub->add_flag("--json", opts->json, "one JSON object per checked graph on stdout");
  sub->footer("Exit status: 0 sound, 1 violation, 2 invalid input (unparsable, malformed, "
              "cyclic or racy original), 3 inconclusive (a budget ran out).");
  sub->callback([opts, &ctx] { ctx.status = runCheck(*opts); });
}

} // namespace graphvet::cli
