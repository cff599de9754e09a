// graphvet reduce: shrinks a failing graph while the pipeline keeps failing
// the oracle with the same violation kind (props/reduce.h). The failure is
// decided exactly as `graphvet check FILE` decides it, with the same pipeline
// flags. Exit: 0 reduced graph written, 1 the budget ran out or a signal
// stopped it (the best graph so far is still written), 2 bad input or a file
// that does not fail.
#include "ir/printer.h"
#include "oracle/check.h"
#include "passes/pass_manager.h"
#include "props/evaluate.h"
#include "props/reduce.h"
#include "tools/graphvet/commands.h"

#include <fmt/format.h>

#include <atomic>
#include <csignal>
#include <iostream>
#include <memory>
#include <sstream>

namespace graphvet::cli {
namespace {

struct ReduceCmdOptions {
  std::string file;
  std::string output;
  PipelineCmdOptions pipeline;
  std::optional<std::string> kind;
  uint64_t seed = 1;
  unsigned states = 2;
  unsigned arithmetics = 1;
  bool noZ3 = false;
  unsigned budget = 3000;
};

std::atomic<bool> gReduceStop{false};
extern "C" void onReduceSignal(int) {
  gReduceStop.store(true);
}

int runReduce(const ReduceCmdOptions &cmd) {
  auto m = loadGraphFile(cmd.file, std::cerr);
  if (!m)
    return kExitBadInput;
  props::EvalOptions eo;
  if (!toPipelineOptions(cmd.pipeline, "reduce", eo.pipeline, std::cerr) ||
      !pipelineCanRun(eo.pipeline, "reduce", std::cerr))
    return kExitBadInput;
  // As for check: the original sees the same option overrides as the
  // pipeline (the permissions of semantics.md §4 come from its options), and
  // so does the reduced graph written out.
  writeOptionOverrides(*m, eo.pipeline);
  eo.check.seed = cmd.seed;
  eo.check.numStates = cmd.states;
  eo.check.arithmetics = cmd.arithmetics;
  eo.check.useZ3 = !cmd.noZ3;

  props::Evaluation first = props::evaluate(*m, eo);
  if (first.result.verdict != oracle::Verdict::Violation) {
    std::cerr << cmd.file << ": error: nothing to reduce: the pipeline's result is "
              << oracle::verdictName(first.result.verdict) << ", not a violation\n";
    return kExitBadInput;
  }
  std::string kind = cmd.kind.value_or(first.result.violations.front().kind);
  if (!props::hasViolationKind(first.result, kind)) {
    std::cerr << cmd.file << ": error: no '" << kind << "' violation to preserve (found "
              << first.result.violations.front().kind << ")\n";
    return kExitBadInput;
  }

  gReduceStop = false;
  auto oldInt = std::signal(SIGINT, onReduceSignal);
  auto oldTerm = std::signal(SIGTERM, onReduceSignal);
  props::ReduceOptions ro;
  ro.maxEvaluations = cmd.budget;
  ro.stop = &gReduceStop;
  props::ReduceResult r = props::reduceModule(*m, props::failsWithKind(eo, kind), ro);
  std::signal(SIGINT, oldInt);
  std::signal(SIGTERM, oldTerm);

  props::Evaluation last = props::evaluate(r.module, eo);
  std::string shown = cmd.output.empty() || cmd.output == "-" ? "REDUCED.graph" : cmd.output;
  std::string replay = oracle::replayPassesCommand(shown, cmd.pipeline.passes.value_or(""),
                                                   cmd.seed, cmd.arithmetics) +
                       pipelineReplayFlags(cmd.pipeline);
  if (cmd.noZ3)
    replay += " --no-z3";
  std::string header = fmt::format(
      "# graphvet reduce {}: {} violation kept; {} -> {} nodes ({} edits in {} evaluations{})\n",
      cmd.file, kind, props::countNodes(*m), props::countNodes(r.module), r.accepted, r.evaluations,
      r.exhausted ? ", budget exhausted" : ", fixpoint");
  header += "# deleting rules: " + props::joinRules(props::deletionRules(last.pipeline)) + "\n";
  for (const oracle::Violation &v : last.result.violations)
    header += "# " + v.kind + ": " + v.message + "\n";
  header += "# replay: " + replay + "\n\n";
  if (!writeOutput(cmd.output, header + printModule(r.module), std::cerr))
    return kExitBadInput;
  std::cerr << fmt::format("graphvet reduce: {} -> {} nodes, {} violation kept{}\n",
                           props::countNodes(*m), props::countNodes(r.module), kind,
                           r.exhausted ? " (stopped early: budget or signal)" : "");
  return r.exhausted ? kExitViolation : kExitOk;
}

} // namespace

void registerReduce(CLI::App &app, CommandContext &ctx) {
  auto opts = std::make_shared<ReduceCmdOptions>();
  CLI::App *sub = app.add_subcommand(
      "reduce", "Shrink a failing graph while the same kind of violation persists");
  sub->add_option("file", opts->file, "the failing .graph file")->required();
  sub->add_option("-o,--output", opts->output, "where to write the reduced graph (default stdout)");
  addPipelineOptions(sub, opts->pipeline);
  sub->add_option("--kind", opts->kind,
                  "the violation kind to preserve (default: the first one found)");
  addIntOption(sub, "--seed", opts->seed, 0, kMaxSeed,
               "initial states derive from this seed, as for check");
  addIntOption(sub, "--states", opts->states, 1, kMaxStates,
               "seeded initial states per experiment");
  addArithmeticsOption(sub, "--arithmetics", opts->arithmetics,
                       "variants of the placeholder arithmetic, each on every state, as for check");
  sub->add_flag("--no-z3", opts->noZ3, "decide races by reachability only (faster)");
  addIntOption(sub, "--budget", opts->budget, 0, kMaxBudget, "interestingness tests at most");
  sub->footer("Exit status: 0 reduced to a fixpoint, 1 stopped early by the budget or a "
              "signal (the best graph so far is written), 2 bad input or nothing to reduce.");
  sub->callback([opts, &ctx] { ctx.status = runReduce(*opts); });
}

} // namespace graphvet::cli
