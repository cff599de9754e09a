// graphvet opt --explore-orders: every order of the --passes set, each result
// checked by the oracle and costed, ranked best first (props/explore_orders.h).
// Parses, calls props::exploreOrders, prints; the exit status is the worst
// verdict (1 when an order is unsound, 3 when one is inconclusive).
#include "props/explore_orders.h"
#include "tools/graphvet/commands.h"

#include <fmt/format.h>

#include <iostream>

namespace graphvet::cli {
namespace {

std::string joined(const std::vector<std::string> &names, const char *sep) {
  std::string out;
  for (const std::string &n : names)
    out += (out.empty() ? "" : sep) + n;
  return out;
}

/// "sound", or the verdict and its violation kinds ("violation: value, race").
std::string verdictText(const props::OrderOutcome &o) {
  std::string v(oracle::verdictName(o.check.verdict));
  std::vector<std::string> kinds = oracle::violationKindsOf(o.check);
  if (!kinds.empty())
    v += ": " + joined(kinds, ", ");
  else if (!o.check.reason.empty() && o.check.verdict != oracle::Verdict::Sound)
    v += ": " + o.check.reason;
  if (!o.pipelineOk && !o.failedPass.empty())
    v += " (verifier failed after " + o.failedPass + ")";
  return v;
}

std::string peakText(const CostReport &c) {
  return c.peakKnown ? std::to_string(c.peakLiveBytes) : "?";
}

std::string costLine(const CostReport &c, size_t nodes) {
  return fmt::format("{} kernels, {} bytes moved, peak {} bytes, {} FLOPs, {} nodes", c.kernels,
                     c.bytesRead + c.bytesWritten, peakText(c), c.flops, nodes);
}

nlohmann::ordered_json toJson(const props::ExploreResult &r, const std::string &file) {
  nlohmann::ordered_json j;
  j["file"] = file;
  j["orders"] = r.outcomes.size();
  j["distinct_results"] = r.distinctResults;
  j["original"] = costJson(r.original);
  j["original"]["nodes"] = r.originalNodes;
  j["results"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < r.outcomes.size(); ++i) {
    const props::OrderOutcome &o = r.outcomes[i];
    nlohmann::ordered_json e;
    e["rank"] = i + 1;
    e["order"] = o.order;
    e["verdict"] = oracle::verdictName(o.check.verdict);
    e["violations"] = oracle::violationKindsOf(o.check);
    if (!o.pipelineOk)
      e["failed_pass"] = o.failedPass;
    e["same_result_as_rank"] = o.sameAs ? nlohmann::ordered_json(*o.sameAs + 1) : nullptr;
    e["nodes"] = o.nodes;
    e["cost"] = costJson(o.cost);
    j["results"].push_back(std::move(e));
  }
  return j;
}

std::string toText(const props::ExploreResult &r, const std::string &file) {
  std::map<std::string, size_t> verdicts;
  for (const props::OrderOutcome &o : r.outcomes)
    ++verdicts[std::string(oracle::verdictName(o.check.verdict))];
  std::string counts;
  for (const auto &[v, n] : verdicts)
    counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, v);
  std::string out = fmt::format("{}: {} orders, {} distinct results ({})\n", file,
                                r.outcomes.size(), r.distinctResults, counts);
  out += "original: " + costLine(r.original, r.originalNodes) + "\n";
  out += fmt::format("{:>4}  {:>8}  {:>12}  {:>12}  {:>14}  {:>6}  {}\n", "rank", "kernels",
                     "bytes moved", "peak bytes", "FLOPs", "nodes", "order  [verdict]");
  for (size_t i = 0; i < r.outcomes.size(); ++i) {
    const props::OrderOutcome &o = r.outcomes[i];
    std::string note = o.sameAs ? fmt::format("  (same result as {})", *o.sameAs + 1) : "";
    out += fmt::format("{:>4}  {:>8}  {:>12}  {:>12}  {:>14}  {:>6}  {}  [{}]{}\n", i + 1,
                       o.cost.kernels, o.cost.bytesRead + o.cost.bytesWritten, peakText(o.cost),
                       o.cost.flops, o.nodes, joined(o.order, ","), verdictText(o), note);
  }
  for (const props::OrderOutcome &o : r.outcomes)
    if (o.check.verdict == oracle::Verdict::Violation && !o.sameAs)
      out += fmt::format("replay: graphvet check {} --passes {}\n", file, joined(o.order, ","));
  return out;
}

} // namespace

void addExploreOptions(CLI::App *sub, ExploreCmdOptions &opts) {
  const std::string group = "Pass-order exploration";
  sub->add_flag("--explore-orders", opts.explore,
                "run every order of the --passes set, check each result and cost it; print the "
                "orders best first (by bytes moved, kernels, peak, FLOPs; unsound last)")
      ->group(group);
  addIntOption(sub, "--max-orders", opts.maxOrders, 1, 40320,
               "refuse a set with more distinct orders than this (720: six passes)")
      ->group(group);
  addIntOption(sub, "--seed", opts.seed, 0, kMaxSeed,
               "with --explore-orders: the check's initial states derive from this seed")
      ->group(group);
  sub->add_flag("--no-specials", opts.noSpecials,
                "with --explore-orders: seed inputs with ordinary values only (a real model)")
      ->group(group);
}

int runExploreOrders(const std::string &file, const OnnxCmdOptions &onnx,
                     const PipelineOptions &pipeline, const ExploreCmdOptions &opts, bool json) {
  auto m = loadModuleFile(file, onnx, "opt", std::cerr);
  if (!m)
    return kExitBadInput;
  props::ExploreOptions eo;
  eo.eval.pipeline = pipeline;
  eo.eval.check.seed = opts.seed;
  eo.eval.check.specials = !opts.noSpecials;
  eo.maxOrders = opts.maxOrders;
  props::ExploreResult r = props::exploreOrders(*m, eo);
  if (!r.error.empty()) {
    std::cerr << "graphvet opt: error: " << r.error << "\n";
    return kExitBadInput;
  }
  std::cout << (json ? toJson(r, file).dump() + "\n" : toText(r, file));
  std::cout.flush();
  int status = kExitOk;
  for (const props::OrderOutcome &o : r.outcomes) {
    if (o.check.verdict == oracle::Verdict::Violation)
      status = kExitViolation;
    else if (o.check.verdict == oracle::Verdict::Invalid)
      return kExitBadInput; // the original itself is not a valid graph
    else if (o.check.verdict == oracle::Verdict::Inconclusive && status == kExitOk)
      status = kExitInconclusive;
  }
  return status;
}

} // namespace graphvet::cli
