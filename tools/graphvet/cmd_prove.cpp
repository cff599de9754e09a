// graphvet prove: proves or refutes every instance of the simplify pass's
// rewrite rules with Z3 (oracle/prove.h) and compares each verdict with the
// rule's precondition. Exit: 0 no disagreement and every allowed instance
// proved, 1 a disagreement (an allowed instance refuted) or an encoder
// error, 2 bad command line (unknown rule), 3 an allowed instance
// inconclusive.
#include "ir/rewrite_rule.h"
#include "oracle/prove.h"
#include "tools/graphvet/commands.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace graphvet::cli {
namespace {

struct ProveCmdOptions {
  std::vector<std::string> rules;
  bool json = false;
  unsigned timeoutMs = 10000;
  unsigned jobs = 2;
  std::optional<std::string> instances; ///< all | failing
};

bool shown(const oracle::InstanceProof &p, bool all) {
  return all || p.verdict != oracle::ProofVerdict::Proved ||
         p.finding != oracle::ProofFinding::None;
}

nlohmann::ordered_json valueJson(const oracle::CounterexampleValue &v) {
  nlohmann::ordered_json j;
  j["name"] = v.name;
  j["type"] = v.type;
  j["elements"] = v.elements;
  return j;
}

nlohmann::ordered_json reportJson(const oracle::ProveReport &r, bool all) {
  nlohmann::ordered_json rules = nlohmann::ordered_json::array();
  for (const oracle::RuleProof &rp : r.rules) {
    nlohmann::ordered_json jr;
    jr["name"] = rp.name;
    jr["instances_total"] = rp.instances.size();
    jr["proved"] = rp.proved;
    jr["refuted"] = rp.refuted;
    jr["inconclusive"] = rp.inconclusive;
    jr["errors"] = rp.errors;
    jr["disagreements"] = rp.disagreements;
    jr["missed_rewrites"] = rp.missed;
    nlohmann::ordered_json insts = nlohmann::ordered_json::array();
    for (const oracle::InstanceProof &p : rp.instances) {
      if (!shown(p, all))
        continue;
      nlohmann::ordered_json ji;
      ji["label"] = p.label;
      ji["verdict"] = std::string(oracle::proofVerdictName(p.verdict));
      ji["allowed"] = p.allowed;
      ji["finding"] = std::string(oracle::proofFindingName(p.finding));
      if (!p.note.empty())
        ji["note"] = p.note;
      ji["ms"] = p.ms;
      if (p.counterexample) {
        const oracle::Counterexample &c = *p.counterexample;
        nlohmann::ordered_json jc;
        if (!c.reason.empty())
          jc["reason"] = c.reason;
        nlohmann::ordered_json ins = nlohmann::ordered_json::array();
        for (const oracle::CounterexampleValue &v : c.inputs)
          ins.push_back(valueJson(v));
        jc["inputs"] = ins;
        if (c.element >= 0) {
          jc["element"] = c.element;
          jc["original"] = c.original;
          jc["replacement"] = c.replacement;
        }
        ji["counterexample"] = jc;
      }
      insts.push_back(std::move(ji));
    }
    jr["instances"] = insts;
    rules.push_back(std::move(jr));
  }
  nlohmann::ordered_json j;
  j["rules"] = rules;
  nlohmann::ordered_json t;
  t["instances"] = r.instances;
  t["proved"] = r.proved;
  t["refuted"] = r.refuted;
  t["inconclusive"] = r.inconclusive;
  t["errors"] = r.errors;
  t["disagreements"] = r.disagreements;
  t["missed_rewrites"] = r.missed;
  t["inconclusive_allowed"] = r.inconclusiveAllowed;
  t["seconds"] = r.seconds;
  j["totals"] = t;
  j["exit"] = r.exitCode();
  return j;
}

int runProve(const ProveCmdOptions &cmd) {
  std::vector<const rewrite::Rule *> rules;
  if (cmd.rules.empty()) {
    for (const rewrite::Rule &r : rewrite::simplifyRules())
      rules.push_back(&r);
  }
  for (const std::string &name : cmd.rules) {
    const rewrite::Rule *r = rewrite::findRule(name);
    if (!r) {
      std::string known;
      for (const rewrite::Rule &k : rewrite::simplifyRules())
        known += (known.empty() ? "" : ", ") + std::string(k.name);
      std::cerr << "graphvet prove: error: unknown rule '" << name << "' (known rules: " << known
                << ")\n";
      return kExitBadInput;
    }
    rules.push_back(r);
  }
  if (cmd.instances && *cmd.instances != "all" && *cmd.instances != "failing") {
    std::cerr << "graphvet prove: error: --instances expects 'all' or 'failing', got '"
              << *cmd.instances << "'\n";
    return kExitBadInput;
  }
  oracle::ProveOptions o;
  o.timeoutMs = cmd.timeoutMs;
  o.jobs = cmd.jobs;
  oracle::ProveReport report = oracle::proveRules(rules, o);
  if (cmd.json) {
    bool all = !cmd.instances || *cmd.instances == "all";
    std::cout << reportJson(report, all).dump(1) << "\n";
  } else {
    bool all = cmd.instances && *cmd.instances == "all";
    std::cout << oracle::proveReportText(report, all);
  }
  std::cout.flush();
  return report.exitCode();
}

} // namespace

void registerProve(CLI::App &app, CommandContext &ctx) {
  auto opts = std::make_shared<ProveCmdOptions>();
  CLI::App *sub = app.add_subcommand(
      "prove", "Prove or refute the simplify pass's rewrite rules with Z3, instance by instance");
  sub->add_option("rules", opts->rules, "rule names (default: every rule of the table)");
  sub->add_flag("--json", opts->json, "one JSON object on stdout");
  addIntOption(sub, "--timeout-ms", opts->timeoutMs, 1, kMaxZ3TimeoutMs,
               "Z3 budget per instance, in ms (a budget that runs out is inconclusive)");
  addIntOption(sub, "-j,--jobs", opts->jobs, 1, 64, "worker threads, each with its own Z3 context");
  sub->add_option("--instances", opts->instances,
                  "which instances to list: all, or failing (refuted, inconclusive, errors, "
                  "missed rewrites; the text default; JSON lists all by default)");
  sub->footer(
      "Each instance of a rule (concrete dtypes, shapes and attributes) is encoded element by "
      "element in Z3, and the solver looks for an input on which the replacement does not refine "
      "the original (tensor-semantics.md §7). Verdicts: proved, refuted (with a counterexample "
      "replayed on the interpreter's kernels), inconclusive (timeout), error (ill-formed "
      "instance or encoder bug). Against the precondition: allowed but refuted is a "
      "DISAGREEMENT, refused but proved a missed rewrite. Exit status: 0 sound table, 1 a "
      "disagreement or an error, 2 bad command line, 3 an allowed instance inconclusive.");
  sub->callback([opts, &ctx] { ctx.status = runProve(*opts); });
}

} // namespace graphvet::cli
