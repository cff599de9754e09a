// graphvet bench: measures TensorMoveDeletePass on a model-like graph of N
// nodes (time, peak memory, and with --compare the naive variant side by side
// and whether both decide alike), with --pipeline O3|LIST every pass of a
// pipeline on the numeric model graph (props/pipeline_bench.h), or with
// --oracle the harness's checks per second on default-size generated graphs.
// Exit 1 when --compare finds the two variants deciding differently.
#include "ir/printer.h"
#include "props/perf_harness.h"
#include "props/pipeline_bench.h"
#include "tools/graphvet/commands.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

namespace graphvet::cli {
namespace {

struct BenchOptions {
  size_t nodes = 100000;
  uint64_t seed = 1;
  bool naive = false;
  bool compare = false;
  double naiveBudget = 120;
  unsigned repeat = 1;
  bool json = false;
  bool oracle = false;
  uint64_t cases = 500;
  bool z3 = false;
  std::string pipeline;  ///< --pipeline: "O1".."O3" or a comma-separated pass list
  std::string emitModel; ///< --emit-model FILE: write the numeric model graph and stop
};

/// x rounded to `digits` decimals, for readable JSON.
double roundTo(double x, int digits) {
  double scale = std::pow(10.0, digits);
  return std::round(x * scale) / scale;
}
double round2(double x) {
  return roundTo(x, 2);
}

int runPassBench(const BenchOptions &o) {
  props::PassBenchOptions po;
  po.model.nodes = o.nodes;
  po.model.seed = o.seed;
  po.naive = o.naive;
  po.compare = o.compare;
  po.naiveBudgetSeconds = o.naiveBudget;
  po.repeat = o.repeat;
  props::PassBenchResult r = props::benchPass(po);

  bool naiveFinished = r.naive && r.naive->finished;
  double ratio = naiveFinished && r.run.passMs > 0 ? r.naive->passMs / r.run.passMs : 0;
  if (o.json) {
    nlohmann::ordered_json j;
    j["nodes"] = r.model.nodes;
    j["tensor_moves"] = r.tensorMoves;
    j["deleted"] = r.run.deleted;
    j["pass_ms"] = round2(r.run.passMs);
    j["pass_cpu_ms"] = round2(r.run.passCpuMs);
    j["peak_rss_mb"] = round2(r.peakRssMb);
    j["variant"] = o.naive && !o.compare ? "naive" : "fast";
    j["seed"] = o.seed;
    j["layers"] = r.model.layers;
    j["subgraphs"] = r.model.subgraphs;
    j["expected_removable"] = r.model.count(props::TensorMoveRole::Removable);
    j["necessary"] = r.model.count(props::TensorMoveRole::Necessary);
    j["conservative"] = r.model.count(props::TensorMoveRole::Conservative);
    j["ctrl_edges_added"] = r.run.ctrlEdgesAdded;
    if (r.passMsSamples.size() > 1) {
      j["pass_ms_min"] = round2(*std::min_element(r.passMsSamples.begin(), r.passMsSamples.end()));
      nlohmann::json samples = nlohmann::json::array();
      for (double ms : r.passMsSamples)
        samples.push_back(round2(ms));
      j["pass_ms_samples"] = samples;
    }
    j["build_ms"] = round2(r.buildMs);
    j["rss_before_pass_mb"] = round2(r.run.rssBeforeMb);
    if (r.run.passPeakMb >= 0)
      j["pass_peak_delta_mb"] = round2(r.run.passPeakMb - r.run.rssBeforeMb);
    if (r.naive) {
      if (naiveFinished) {
        j["naive_pass_ms"] = round2(r.naive->passMs);
        j["naive_pass_cpu_ms"] = round2(r.naive->passCpuMs);
        j["ratio"] = round2(ratio);
      } else {
        j["naive_pass_ms"] = nullptr;
        j["naive_over_budget_s"] = o.naiveBudget;
        j["ratio"] = nullptr;
      }
      if (r.sameDecisions)
        j["same_decisions"] = *r.sameDecisions;
    }
    std::cout << j.dump() << "\n";
  } else {
    std::printf("model: %zu nodes, %zu layers, %zu subgraphs, %lld TensorMoves "
                "(%zu removable, %zu necessary, %zu conservative by construction), seed %llu\n",
                r.model.nodes, r.model.layers, r.model.subgraphs,
                static_cast<long long>(r.tensorMoves),
                r.model.count(props::TensorMoveRole::Removable),
                r.model.count(props::TensorMoveRole::Necessary),
                r.model.count(props::TensorMoveRole::Conservative),
                static_cast<unsigned long long>(o.seed));
    std::printf("build: %.1f ms\n", r.buildMs);
    std::printf("pass (%s%s): %.1f ms (%.1f ms CPU), deleted %lld, kept %lld, %lld control edges "
                "added\n",
                o.naive && !o.compare ? "naive" : "fast",
                r.passMsSamples.size() > 1 ? ", median" : "", r.run.passMs, r.run.passCpuMs,
                static_cast<long long>(r.run.deleted), static_cast<long long>(r.run.kept),
                static_cast<long long>(r.run.ctrlEdgesAdded));
    std::printf("memory: peak RSS %.1f MiB (building included); %.1f MiB before the pass",
                r.peakRssMb, r.run.rssBeforeMb);
    if (r.run.passPeakMb >= 0)
      std::printf(", +%.1f MiB peak during the pass", r.run.passPeakMb - r.run.rssBeforeMb);
    std::printf("\n");
    if (r.naive) {
      if (naiveFinished)
        std::printf("naive: %.1f ms (%.1f ms CPU), ratio naive/fast %.1fx, decisions %s\n",
                    r.naive->passMs, r.naive->passCpuMs, ratio,
                    r.sameDecisions && *r.sameDecisions ? "identical" : "DIFFER");
      else
        std::printf("naive: > %.0f s (stopped at the time budget), ratio > %.0fx\n", o.naiveBudget,
                    o.naiveBudget * 1000 / std::max(r.run.passMs, 1e-3));
    }
  }
  return r.sameDecisions && !*r.sameDecisions ? kExitViolation : kExitOk;
}

/// "O3" -> level 3; "cse,dce" -> the list; anything else is a bad input.
std::optional<std::string> parsePipeline(const std::string &text, props::PipelineBenchOptions &po) {
  if (text.size() == 2 && (text[0] == 'O' || text[0] == 'o') && text[1] >= '0' && text[1] <= '3') {
    po.optLevel = static_cast<unsigned>(text[1] - '0');
    return std::nullopt;
  }
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos)
      comma = text.size();
    std::string name = text.substr(start, comma - start);
    if (name.empty())
      return fmt::format("--pipeline \"{}\": an empty pass name", text);
    names.push_back(std::move(name));
    start = comma + 1;
  }
  po.passes = std::move(names);
  return std::nullopt;
}

int runPipelineBench(const BenchOptions &o) {
  props::PipelineBenchOptions po;
  po.model.nodes = o.nodes;
  po.model.seed = o.seed;
  if (!o.emitModel.empty()) {
    std::ofstream out(o.emitModel);
    out << printModule(props::buildNumericModelGraph(po.model));
    if (!out) {
      std::fprintf(stderr, "%s: error: cannot write the model\n", o.emitModel.c_str());
      return kExitBadInput;
    }
    return kExitOk;
  }
  po.repeat = o.repeat;
  po.compare = o.compare;
  po.naiveBudgetSeconds = o.naiveBudget;
  if (std::optional<std::string> error = parsePipeline(o.pipeline, po)) {
    std::fprintf(stderr, "error: %s\n", error->c_str());
    return kExitBadInput;
  }
  props::PipelineBenchResult r = props::benchPipeline(po);
  if (!r.ok) {
    std::fprintf(stderr, "error: %s\n", r.error.c_str());
    return kExitBadInput;
  }
  const props::PassBenchRow *slowest = nullptr;
  for (const props::PassBenchRow &row : r.passes)
    if (!slowest || row.ms > slowest->ms)
      slowest = &row;
  double share = slowest && r.passesTotalMs > 0 ? slowest->ms / r.passesTotalMs : 0;
  auto ratio = [](const props::PassBenchRow &row) {
    return row.ms > 0 ? row.naiveMs / row.ms : 0.0;
  };
  if (o.json) {
    nlohmann::ordered_json j;
    j["pipeline"] = r.pipelineName;
    j["nodes"] = r.model.nodes;
    j["seed"] = o.seed;
    j["repeats"] = o.repeat;
    j["build_ms"] = round2(r.buildMs);
    j["model"] = {{"cnn_blocks", r.model.cnnBlocks},
                  {"transformer_blocks", r.model.transformerBlocks},
                  {"predicted_nodes_after_cleanup", r.model.predictedNodesAfterCleanup()}};
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const props::PassBenchRow &row : r.passes) {
      nlohmann::ordered_json p;
      p["pass"] = row.pass;
      p["ms"] = round2(row.ms);
      p["ms_min"] = round2(row.msMin);
      p["cpu_ms"] = round2(row.cpuMs);
      p["peak_delta_mb"] = row.peakDeltaMb < 0 ? nlohmann::ordered_json(nullptr)
                                               : nlohmann::ordered_json(round2(row.peakDeltaMb));
      p["nodes_before"] = row.nodesBefore;
      p["nodes_after"] = row.nodesAfter;
      if (row.naiveRun) {
        p["naive_ms"] = row.naiveFinished ? nlohmann::ordered_json(round2(row.naiveMs)) : nullptr;
        if (!row.naiveFinished)
          p["naive_over_budget_s"] = o.naiveBudget;
        p["ratio"] = row.naiveFinished ? nlohmann::ordered_json(round2(ratio(row))) : nullptr;
        p["same_result"] = row.sameResult ? nlohmann::ordered_json(*row.sameResult) : nullptr;
      }
      rows.push_back(std::move(p));
    }
    j["passes"] = std::move(rows);
    j["passes_total_ms"] = round2(r.passesTotalMs);
    j["slowest_pass"] = slowest ? slowest->pass : "";
    j["slowest_share"] = roundTo(share, 3);
    j["pipeline_ms"] = round2(r.pipelineMs);
    j["pipeline_cpu_ms"] = round2(r.pipelineCpuMs);
    j["rounds"] = r.rounds;
    j["nodes_before"] = r.nodesBefore;
    j["nodes_after"] = r.nodesAfter;
    j["peak_rss_mb"] = round2(r.peakRssMb);
    j["rss_before_pipeline_mb"] = round2(r.rssBeforePipelineMb);
    j["pipeline_peak_delta_mb"] = r.pipelinePeakDeltaMb < 0
                                      ? nlohmann::ordered_json(nullptr)
                                      : nlohmann::ordered_json(round2(r.pipelinePeakDeltaMb));
    j["load_average"] = r.loadAverage;
    if (o.compare)
      j["same_results"] = r.allSame;
    std::cout << j.dump() << "\n";
  } else {
    std::printf("numeric model: %zu nodes (%zu CNN, %zu transformer blocks), seed %llu, built in "
                "%.1f ms; pipeline %s, %u repeat(s), load average %.2f\n",
                r.model.nodes, r.model.cnnBlocks, r.model.transformerBlocks,
                static_cast<unsigned long long>(o.seed), r.buildMs, r.pipelineName.c_str(),
                o.repeat, r.loadAverage);
    std::printf("%-24s %10s %10s %10s %10s %10s", "pass", "ms", "min ms", "peak +MiB", "nodes in",
                "nodes out");
    if (o.compare)
      std::printf(" %10s %8s %6s", "naive ms", "ratio", "same");
    std::printf("\n");
    for (const props::PassBenchRow &row : r.passes) {
      std::printf("%-24s %10.1f %10.1f %10.1f %10zu %10zu", row.pass.c_str(), row.ms, row.msMin,
                  std::max(row.peakDeltaMb, 0.0), row.nodesBefore, row.nodesAfter);
      if (row.naiveRun && row.naiveFinished)
        std::printf(" %10.1f %7.1fx %6s", row.naiveMs, ratio(row),
                    row.sameResult && *row.sameResult ? "yes" : "NO");
      else if (row.naiveRun)
        std::printf(" %9s> %7s %6s", fmt::format("{:.0f}", o.naiveBudget * 1000).c_str(), "-", "-");
      std::printf("\n");
    }
    std::printf("passes, one round: %.1f ms; slowest %s (%.0f%%)\n", r.passesTotalMs,
                slowest ? slowest->pass.c_str() : "-", share * 100);
    std::printf("whole pipeline (as graphvet opt, no verifier): %.1f ms (%.1f ms CPU), %u "
                "round(s), %zu -> %zu nodes; %.1f MiB before it, +%.1f MiB peak during it; "
                "process peak RSS %.1f MiB\n",
                r.pipelineMs, r.pipelineCpuMs, r.rounds, r.nodesBefore, r.nodesAfter,
                r.rssBeforePipelineMb, std::max(r.pipelinePeakDeltaMb, 0.0), r.peakRssMb);
    if (o.compare)
      std::printf("naive variants: %s\n", r.allSame ? "identical results" : "RESULTS DIFFER");
  }
  return o.compare && !r.allSame ? kExitViolation : kExitOk;
}

int runOracleBench(const BenchOptions &o) {
  props::OracleBenchOptions oo;
  oo.seed = o.seed;
  oo.cases = o.cases;
  oo.check.useZ3 = o.z3;
  props::OracleBenchResult r = props::benchOracle(oo);
  if (o.json) {
    nlohmann::ordered_json j;
    j["checks"] = r.checks;
    j["seconds"] = roundTo(r.seconds, 4);
    j["checks_per_second"] = round2(r.checksPerSecond);
    j["cpu_seconds"] = roundTo(r.cpuSeconds, 4);
    j["checks_per_cpu_second"] = round2(r.checksPerCpuSecond);
    j["z3"] = o.z3;
    j["mean_nodes"] = round2(r.meanNodes);
    j["generate_seconds"] = roundTo(r.generateSeconds, 4);
    j["pass_seconds"] = roundTo(r.passSeconds, 4);
    j["check_seconds"] = roundTo(r.checkSeconds, 4);
    j["sound"] = r.sound;
    j["violations"] = r.violations;
    j["inconclusive"] = r.inconclusive;
    j["invalid"] = r.invalid;
    std::cout << j.dump() << "\n";
  } else {
    std::printf("oracle: %llu checks in %.3f s = %.1f checks/s; %.3f s CPU = %.1f checks per CPU "
                "second (%s; mean %.1f nodes per graph)\n",
                static_cast<unsigned long long>(r.checks), r.seconds, r.checksPerSecond,
                r.cpuSeconds, r.checksPerCpuSecond,
                o.z3 ? "Z3 race proof" : "reachability race analysis, the campaign default",
                r.meanNodes);
    std::printf("time: generate %.3f s, pass %.3f s, check %.3f s\n", r.generateSeconds,
                r.passSeconds, r.checkSeconds);
    std::printf("verdicts: %llu sound, %llu violations, %llu inconclusive, %llu invalid\n",
                static_cast<unsigned long long>(r.sound),
                static_cast<unsigned long long>(r.violations),
                static_cast<unsigned long long>(r.inconclusive),
                static_cast<unsigned long long>(r.invalid));
  }
  return kExitOk;
}

} // namespace

void registerBench(CLI::App &app, CommandContext &ctx) {
  auto opts = std::make_shared<BenchOptions>();
  CLI::App *cmd = app.add_subcommand(
      "bench",
      "Measure TensorMoveDeletePass on a model-like graph (with --pipeline, every pass of a "
      "pipeline on a numeric model graph; with --oracle, the harness's checks per second)");
  addIntOption(cmd, "--nodes", opts->nodes, 1, 100000000, "Nodes of the model-like graph");
  addIntOption(cmd, "--seed", opts->seed, 0, kMaxSeed,
               "Seed of the model (with --oracle: of the first case)");
  CLI::Option *naive =
      cmd->add_flag("--naive", opts->naive,
                    "Time the naive variant (whole-graph reachability per TensorMove and per "
                    "candidate edge) instead of the fast one");
  cmd->add_flag("--compare", opts->compare,
                "Also run the naive variant on the same graph and report the ratio and "
                "whether both decide alike")
      ->excludes(naive);
  addNumberOption(
      cmd, "--naive-budget", 0.001, 86400, [opts](double s) { opts->naiveBudget = s; },
      fmt::format("{}", opts->naiveBudget),
      "Seconds the naive variant may take with --compare before it is stopped");
  addIntOption(cmd, "--repeat,--repeats", opts->repeat, 1, 1000,
               "Run the pass this many times (on fresh copies of the model) and report the "
               "median");
  cmd->add_flag("--json", opts->json, "Print one JSON object");
  cmd->add_flag("--oracle", opts->oracle,
                "Measure checks per second: generate + pass + refinement check");
  addIntOption(cmd, "--cases", opts->cases, 1, 100000000, "Cases for --oracle");
  cmd->add_flag("--z3", opts->z3, "With --oracle: prove race freedom with Z3 (slower)");
  CLI::Option *pipeline = cmd->add_option(
      "--pipeline", opts->pipeline,
      "Measure a pipeline on the numeric model graph instead: O1, O2, O3 or a comma-separated "
      "pass list; per pass time (median of --repeat), peak memory and nodes before/after, then "
      "the whole pipeline; with --compare the naive variants of cse, dce and fuse-ops too");
  pipeline->excludes(naive);
  cmd->add_option("--emit-model", opts->emitModel,
                  "Write the numeric model graph of --nodes/--seed to FILE (the input --pipeline "
                  "measures, to run other commands on) and stop")
      ->option_text("FILE");
  cmd->callback([opts, &ctx] {
    ctx.status = opts->oracle                                          ? runOracleBench(*opts)
                 : !opts->pipeline.empty() || !opts->emitModel.empty() ? runPipelineBench(*opts)
                                                                       : runPassBench(*opts);
  });
}

} // namespace graphvet::cli
