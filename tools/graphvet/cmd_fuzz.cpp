// graphvet fuzz: the fuzz campaign (props/campaign.h). Parses the options,
// installs the SIGINT/SIGTERM handler that stops the campaign cleanly, shows
// a status line (refreshed in place on a terminal, periodic lines
// otherwise), and prints the figures, the findings and (--report) the HTML
// page. Exit: 0 nothing found, 1 findings, 2 bad command line or output.
#include "passes/pass_manager.h"
#include "props/campaign.h"
#include "props/report.h"
#include "tools/graphvet/commands.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <iostream>
#include <memory>
#include <sstream>

namespace graphvet::cli {
namespace {

struct FuzzCmdOptions {
  std::optional<double> seconds;
  std::optional<uint64_t> cases;
  uint64_t seed = 1;
  unsigned jobs = 1;
  PipelineCmdOptions pipeline;
  std::string outDir = "fuzz-out";
  std::string report;
  bool json = false;
  bool z3 = false;
  bool noConfirm = false;
  bool stopOnFirst = false;
  unsigned shrinkBudget = 1500;
  unsigned reduceBudget = 600;
  unsigned maxSteps = 18;
  bool missed = false;
  std::string missedOut;
  unsigned missedExamples = 3;
  unsigned missedReduceBudget = 300;
  unsigned missedStates = 8;
  unsigned missedArithmetics = 8;
  unsigned arithmetics = 1;
  bool outputDigest = false;
  bool noIdempotence = false;
  /// Empty: --generator was not given (memory; mixed with --passes all).
  std::string generator;
};

/// `--passes all`: every pass alone, then the -O pipeline of the other flags.
constexpr std::string_view kAllPasses = "all";

// The ranges of the campaign's size options.
constexpr double kMinSeconds = 0.001;
constexpr double kMaxSeconds = 604800; // one week
constexpr uint64_t kMaxCases = 1000000000;
constexpr uint64_t kMaxJobs = 256;

/// The campaign's settings as a command line (shown in the report).
std::string commandLine(const FuzzCmdOptions &c) {
  std::string out = "graphvet fuzz";
  if (c.seconds)
    out += fmt::format(" --time {}", *c.seconds);
  if (c.cases)
    out += fmt::format(" --cases {}", *c.cases);
  out += fmt::format(" --seed {} --jobs {}", c.seed, c.jobs);
  if (!c.generator.empty())
    out += " --generator " + c.generator;
  if (c.pipeline.passes)
    out += " --passes " + *c.pipeline.passes;
  out += pipelineReplayFlags(c.pipeline);
  if (c.z3)
    out += " --z3";
  if (c.arithmetics != 1)
    out += fmt::format(" --arithmetics {}", c.arithmetics);
  if (c.stopOnFirst)
    out += " --stop-on-first";
  if (c.noIdempotence)
    out += " --no-idempotence";
  if (c.missed)
    out += " --missed";
  if (!c.missedOut.empty())
    out += " --missed-out " + c.missedOut;
  return out + " --out " + c.outDir;
}

// The one piece of state a signal handler may touch.
std::atomic<bool> gStopRequested{false};

extern "C" void onStopSignal(int) {
  gStopRequested.store(true);
}

std::string statusLine(const props::CampaignStats &s, const char *phase) {
  size_t rulesSeen = 0;
  for (const auto &[rule, count] : s.rules)
    rulesSeen += count > 0;
  std::string line = fmt::format("fuzz [{}] {} cases, {:.0f}/s, {} violations, {} inconclusive | "
                                 "TensorMoves {} deleted, {} kept | {} rule tags seen",
                                 phase, s.cases, s.casesPerSecond(), s.violations, s.inconclusive,
                                 s.deleted, s.kept, rulesSeen);
  // With --missed: kept copies the oracle proves removable, and recall.
  if (s.missedCases > 0)
    line += fmt::format(" | missed {} (recall {:.2f}%)", s.missed, 100.0 * s.recall());
  return line;
}

nlohmann::ordered_json toJson(const props::CampaignResult &r, const props::CampaignOptions &o) {
  const props::CampaignStats &s = r.stats;
  nlohmann::ordered_json j;
  j["generator"] = props::caseGeneratorName(o.generator);
  if (!o.pipelines.empty()) {
    std::vector<std::string> labels;
    for (const PipelineOptions &p : o.pipelines)
      labels.push_back(props::pipelineLabel(p));
    j["pipelines"] = labels;
  }
  j["cases"] = s.cases;
  j["seconds"] = s.seconds;
  j["cases_per_second"] = s.casesPerSecond();
  j["violations"] = s.violations;
  j["inconclusive"] = s.inconclusive;
  std::vector<std::string> paths;
  for (const props::Finding &f : r.findings)
    paths.push_back(f.path.empty() ? f.fileName : f.path);
  j["findings"] = paths;
  j["tensor_moves"] = {{"total", s.tensorMoves}, {"deleted", s.deleted}, {"kept", s.kept}};
  if (o.missed) {
    // Over the sound cases: M kept-but-removable live copies, recall
    // D_live / (D_live + M); recall_all also counts dead copies (U).
    j["missed"] = s.missed;
    j["recall"] = s.recall();
    j["recall_all"] = s.recallAll();
    j["missed_by_rule"] = s.missedByRule;
    j["missed_rewrites"] = {{"missed", s.missedRewrites},
                            {"necessary", s.rewritesNecessary},
                            {"inconclusive", s.rewritesInconclusive},
                            {"missed_by_rule", s.missedRewritesByRule}};
    j["missed_details"] = {{"cases", s.missedCases},
                           {"deleted", s.missedDeleted},
                           {"deleted_unobserved", s.missedDeletedUnobserved},
                           {"deleted_unexercised", s.missedDeletedUnexercised},
                           {"necessary", s.missedNecessary},
                           {"unobserved", s.missedUnobserved},
                           {"unexercised", s.missedUnexercised},
                           {"inconclusive", s.missedInconclusive},
                           {"reserved", s.missedReserved},
                           {"untried", s.missedUntried},
                           {"states", o.missedStates},
                           {"arithmetics", o.missedArithmetics}};
    std::vector<std::string> examples;
    for (const props::MissedExample &ex : r.missedExamples)
      if (!ex.path.empty())
        examples.push_back(ex.path);
    j["missed_examples"] = examples;
  }
  // Beyond the documented keys: what a nightly dashboard wants as well.
  j["seed"] = o.seed;
  j["jobs"] = o.jobs;
  j["invalid"] = s.invalid;
  j["interrupted"] = r.interrupted;
  // Time to the first failing case (before shrinking), e.g. for mutation
  // testing; null when nothing failed.
  j["first_failure_seconds"] =
      r.firstFailureSeconds ? nlohmann::ordered_json(*r.firstFailureSeconds) : nullptr;
  j["first_failure_case"] =
      r.firstFailureCase ? nlohmann::ordered_json(*r.firstFailureCase) : nullptr;
  j["rules"] = s.rules;
  j["kinds"] = s.kinds;
  if (o.outputDigest)
    j["output_digest"] = fmt::format("{:016x}", s.outputDigest);
  nlohmann::ordered_json features;
  for (size_t i = 0; i < props::kNumFeatures; ++i)
    features[std::string(props::featureName(static_cast<props::Feature>(i)))] =
        s.features.counts[i];
  j["features"] = features;
  nlohmann::ordered_json byPipeline = nlohmann::ordered_json::object();
  for (const auto &[label, c] : s.byPipeline)
    byPipeline[label] = {{"cases", c.cases},
                         {"violations", c.violations},
                         {"inconclusive", c.inconclusive},
                         {"remarks", c.remarks}};
  j["by_pipeline"] = byPipeline;
  // Coverage per failure mode (props/failure_modes.h), over the same sampled
  // cases as the features; per pass, over every case.
  nlohmann::ordered_json modes;
  for (size_t i = 0; i < props::kNumFailureModes; ++i)
    modes[std::string(props::failureModeKey(static_cast<props::FailureMode>(i)))] =
        s.failureModeCases[i];
  j["failure_modes"] = {{"sampled_cases", s.features.modules}, {"cases", modes}};
  nlohmann::ordered_json passes;
  for (const auto &[name, pc] : s.passes)
    passes[name] = {{"ran", pc.ran},
                    {"remarked", pc.remarked},
                    {"changed", pc.changed},
                    {"remarks", pc.remarks},
                    {"rules", pc.rules.size()}};
  j["passes"] = passes;
  // Phase 1 over time (samples about every 0.5 s, at most 200).
  nlohmann::ordered_json timeline = nlohmann::ordered_json::array();
  for (const props::TimelinePoint &p : r.timeline)
    timeline.push_back({{"seconds", p.seconds},
                        {"cases", p.cases},
                        {"cases_per_second", p.casesPerSecond},
                        {"rules", p.rules},
                        {"features", p.features}});
  j["timeline"] = timeline;
  nlohmann::ordered_json details = nlohmann::ordered_json::array();
  for (const props::Finding &f : r.findings)
    details.push_back({{"path", f.path.empty() ? f.fileName : f.path},
                       {"kind", f.kind},
                       {"rules", f.rules},
                       {"pipeline", f.pipeline},
                       {"seed", f.seed},
                       {"nodes_before", f.nodesBefore},
                       {"nodes_after", f.nodesAfter},
                       {"duplicates", f.duplicates},
                       {"confirmed_with_z3", f.confirmedWithZ3},
                       {"replay", f.replay}});
  j["finding_details"] = details;
  return j;
}

void printSummary(const props::CampaignResult &r) {
  const props::CampaignStats &s = r.stats;
  std::cout << fmt::format("{} cases in {:.1f} s ({:.1f} cases/s): {} sound, {} violations, "
                           "{} inconclusive, {} invalid originals\n",
                           s.cases, s.seconds, s.casesPerSecond(), s.sound, s.violations,
                           s.inconclusive, s.invalid);
  std::cout << fmt::format("TensorMoves: {} seen, {} deleted, {} kept\n", s.tensorMoves, s.deleted,
                           s.kept);
  if (s.byPipeline.size() > 1)
    for (const auto &[label, c] : s.byPipeline)
      std::cout << fmt::format("  {:<24} {:7} cases, {} violations, {} inconclusive, {} remarks\n",
                               label, c.cases, c.violations, c.inconclusive, c.remarks);
  if (s.outputDigest != 0)
    std::cout << fmt::format("Output digest: {:016x}\n", s.outputDigest);
  if (s.missedCases > 0) {
    std::cout << fmt::format(
        "Missed (over {} sound cases): {} removable of the kept, {} unobserved (dead), "
        "{} unexercised (never ran), {} necessary, {} inconclusive, {} reserved\n",
        s.missedCases, s.missed, s.missedUnobserved, s.missedUnexercised, s.missedNecessary,
        s.missedInconclusive, s.missedReserved);
    uint64_t live = s.missedDeleted - s.missedDeletedUnobserved - s.missedDeletedUnexercised;
    std::cout << fmt::format(
        "Recall: {}/({}+{}) = {:.2f}% over observed, exercised copies; {}/({}+{}+{}+{}) = "
        "{:.2f}% with dead and unexercised copies\n",
        live, live, s.missed, 100.0 * s.recall(), s.missedDeleted, s.missedDeleted, s.missed,
        s.missedUnobserved, s.missedUnexercised, 100.0 * s.recallAll());
    for (const auto &[rule, n] : s.missedByRule)
      std::cout << fmt::format("  missed {:6}  kept by {}\n", n, rule);
    std::cout << fmt::format("Mid-end rewrites left open: {} missed, {} necessary, {} "
                             "inconclusive\n",
                             s.missedRewrites, s.rewritesNecessary, s.rewritesInconclusive);
    for (const auto &[rule, n] : s.missedRewritesByRule)
      std::cout << fmt::format("  missed {:6}  {}\n", n, rule);
    for (const props::MissedExample &ex : r.missedExamples)
      if (!ex.path.empty())
        std::cout << fmt::format("  example: {} ({} -> {} nodes)\n", ex.path, ex.nodesBefore,
                                 ex.nodesAfter);
  }
  if (r.findings.empty()) {
    std::cout << "no findings\n";
    return;
  }
  std::cout << r.findings.size() << " finding" << (r.findings.size() == 1 ? "" : "s") << ":\n";
  for (const props::Finding &f : r.findings) {
    std::cout << fmt::format("  {}  {} ({}), {} -> {} nodes, {} duplicate(s)\n",
                             f.path.empty() ? f.fileName : f.path, f.kind, f.rules, f.nodesBefore,
                             f.nodesAfter, f.duplicates);
    std::cout << "    replay: " << f.replay << "\n";
  }
}

int runFuzz(const FuzzCmdOptions &cmd) {
  props::CampaignOptions o;
  o.seed = cmd.seed;
  o.cases = cmd.cases;
  o.seconds = cmd.seconds;
  o.jobs = cmd.jobs;
  o.outDir = cmd.outDir;
  o.check.useZ3 = cmd.z3;
  o.confirmWithZ3 = !cmd.noConfirm;
  o.stopOnFirstFailure = cmd.stopOnFirst;
  o.recipeShrinkBudget = cmd.shrinkBudget;
  o.reduceBudget = cmd.reduceBudget;
  o.gen.maxSteps = cmd.maxSteps;
  o.missed = cmd.missed || !cmd.missedOut.empty();
  o.missedOutDir = cmd.missedOut;
  o.missedExamplesPerRule = cmd.missedExamples;
  o.missedReduceBudget = cmd.missedReduceBudget;
  o.missedStates = cmd.missedStates;
  o.missedArithmetics = cmd.missedArithmetics;
  o.check.arithmetics = cmd.arithmetics;
  o.outputDigest = cmd.outputDigest;
  o.checkIdempotence = !cmd.noIdempotence;
  const bool allPipelines = cmd.pipeline.passes == kAllPasses;
  o.generator =
      props::parseCaseGenerator(cmd.generator)
          .value_or(allPipelines ? props::CaseGenerator::Mixed : props::CaseGenerator::Memory);
  PipelineCmdOptions pipelineCmd = cmd.pipeline;
  if (allPipelines)
    pipelineCmd.passes.reset();
  if (!toPipelineOptions(pipelineCmd, "fuzz", o.pipeline, std::cerr) ||
      !pipelineCanRun(o.pipeline, "fuzz", std::cerr))
    return kExitBadInput;
  if (allPipelines)
    o.pipelines = props::everyPipeline(o.pipeline);

  gStopRequested = false;
  o.stop = &gStopRequested;
  const bool terminal = stderrIsTerminal();
  o.progressInterval = terminal ? 0.25 : 10.0;
  o.progress = [terminal](const props::CampaignStats &s, const char *phase) {
    if (terminal)
      std::cerr << "\r\033[K" << statusLine(s, phase) << std::flush;
    else
      std::cerr << statusLine(s, phase) << "\n";
  };
  std::cerr << fmt::format("graphvet fuzz: campaign seed {} (case i draws seed {}+i; redraw one "
                           "case with --seed <case seed> --cases 1), {} job{}, findings to {}\n",
                           o.seed, o.seed, o.jobs, o.jobs == 1 ? "" : "s", o.outDir);
  auto oldInt = std::signal(SIGINT, onStopSignal);
  auto oldTerm = std::signal(SIGTERM, onStopSignal);
  props::CampaignResult r = props::runCampaign(o);
  std::signal(SIGINT, oldInt);
  std::signal(SIGTERM, oldTerm);
  if (terminal)
    std::cerr << "\n";
  if (r.interrupted)
    std::cerr << "graphvet fuzz: interrupted; " << r.findings.size() << " finding(s) saved\n";

  int status = (r.findings.empty() && r.stats.violations == 0 && r.stats.invalid == 0)
                   ? kExitOk
                   : kExitViolation;
  for (const std::string &e : r.errors) {
    std::cerr << e << "\n";
    status = kExitBadInput;
  }
  if (!cmd.report.empty()) {
    props::ReportOptions ro;
    ro.commandLine = commandLine(cmd);
    if (!writeOutput(cmd.report, props::renderReport(r, o, ro), std::cerr))
      status = kExitBadInput;
  }
  if (cmd.json)
    std::cout << toJson(r, o).dump(2) << "\n";
  else
    printSummary(r);
  return status;
}

} // namespace

void registerFuzz(CLI::App &app, CommandContext &ctx) {
  auto opts = std::make_shared<FuzzCmdOptions>();
  CLI::App *sub = app.add_subcommand(
      "fuzz", "Run a fuzz campaign: generated graphs, the pass pipeline, the oracle");
  CLI::Option *time = addNumberOption(
      sub, "--time", kMinSeconds, kMaxSeconds, [opts](double s) { opts->seconds = s; }, "",
      "stop after SEC seconds of fuzzing");
  CLI::Option *cases = addIntOption(sub, "--cases", opts->cases, 1, kMaxCases,
                                    "run exactly N cases (seeds S..S+N-1)");
  time->excludes(cases);
  addIntOption(sub, "--seed", opts->seed, 0, kMaxSeed, "case i uses seed S+i");
  addIntOption(sub, "-j,--jobs", opts->jobs, 1, kMaxJobs,
               "worker threads (case i runs on job i mod J)");
  addPipelineOptions(sub, opts->pipeline);
  sub->add_option("--out", opts->outDir, "directory for the shrunk findings")
      ->capture_default_str();
  sub->add_option("--report", opts->report, "write a self-contained HTML report");
  sub->add_flag("--json", opts->json, "print the figures as JSON on stdout");
  sub->add_flag("--z3", opts->z3,
                "prove race freedom with Z3 on every case (slow; by default only findings are "
                "re-checked with Z3)");
  sub->add_flag("--no-confirm", opts->noConfirm, "do not re-check findings with Z3");
  sub->add_flag("--stop-on-first", opts->stopOnFirst,
                "stop drawing cases after the first failing case (it is still shrunk and saved)");
  addIntOption(sub, "--shrink-budget", opts->shrinkBudget, 0, kMaxBudget,
               "recipe shrink steps tried per finding");
  addIntOption(sub, "--reduce-budget", opts->reduceBudget, 0, kMaxBudget,
               "IR reduction evaluations per finding");
  sub->add_flag("--missed", opts->missed,
                "also try removing every TensorMove the pass kept (in sound cases) and count the "
                "ones the oracle proves removable: missed optimizations, reported with recall; "
                "and take every mid-end rewrite left open (a dead node, an equal pair, a node of "
                "constant inputs, a cast or transpose pair, an unfused element-wise pair; "
                "graphvet missed --help) and count the sound ones per rule; figures, not "
                "findings");
  sub->add_option("--missed-out", opts->missedOut,
                  "save reduced example graphs of missed optimizations here (implies --missed)");
  addIntOption(sub, "--missed-examples", opts->missedExamples, 1, 100,
               "examples saved per rule tag with --missed-out");
  addIntOption(sub, "--missed-reduce-budget", opts->missedReduceBudget, 0, kMaxBudget,
               "reduction evaluations per saved example (0: save unreduced)");
  addIntOption(sub, "--missed-states", opts->missedStates, 1, kMaxStates,
               "seeded initial states per missed-optimization check (a removal holds in "
               "all of them)");
  addArithmeticsOption(sub, "--missed-arithmetics", opts->missedArithmetics,
                       "variants of the placeholder arithmetic per missed-optimization check (a "
                       "removal holds under all of them)");
  addArithmeticsOption(sub, "--arithmetics", opts->arithmetics,
                       "variants of the placeholder arithmetic per soundness check, each on every "
                       "state (1: the documented mix)");
  sub->add_flag("--output-digest", opts->outputDigest,
                "debugging: also print a digest of every case's pipeline output (optimized "
                "graph and remarks; JSON key output_digest), to compare two builds");
  sub->add_flag("--no-idempotence", opts->noIdempotence,
                "do not run each case's pipeline a second time on its output (by default a "
                "second run that changes it is a not-idempotent finding)");
  sub->add_option("--generator", opts->generator,
                  "which generator draws the cases: memory (aliasing, in-place writes, "
                  "TensorMoves, control flow), typed (real dtypes, shapes and values for the "
                  "numeric passes) or mixed (odd cases typed); default memory, mixed with "
                  "--passes all")
      ->check(CLI::IsMember({"memory", "typed", "mixed"}));
  addIntOption(sub, "--max-steps", opts->maxSteps, 3, 200, "construction steps of the root graph");
  sub->footer("--passes all: every pass alone (once per target for convert-layout, legalize and "
              "partition-graph) and the -O pipeline (also with the NHWC layout target) take turns "
              "(cases 2k and "
              "2k+1 share one), over the mixed generator unless --generator says otherwise; "
              "figures per pipeline in the JSON key by_pipeline. "
              "Without --time or --cases: 1000 cases. SIGINT/SIGTERM stop the campaign; every "
              "finding is shrunk as far as time allows and saved. Exit status: 0 nothing "
              "found, 1 findings, 2 bad command line or unwritable output.");
  sub->callback([opts, &ctx] { ctx.status = runFuzz(*opts); });
}

} // namespace graphvet::cli
