// graphvet missed: for each TensorMove the pass kept, remove it alone from the
// pass's output (adding the fewest reader-before-writer control edges that
// repair races) and ask the oracle whether that is still sound
// (props/missed.h). Prints one line per kept copy and a summary. Exit: 0
// nothing missed, 1 something missed (a finding), 2 bad input, 3 only
// inconclusive answers stood in the way.
#include "passes/pass_manager.h"
#include "props/missed.h"
#include "props/missed_rewrites.h"
#include "tools/graphvet/commands.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>
#include <sstream>

namespace graphvet::cli {
namespace {

struct MissedCmdOptions {
  std::vector<std::string> files;
  PipelineCmdOptions pipeline;
  bool json = false;
  uint64_t seed = 1;
  unsigned states = 8;      // as graphvet fuzz --missed-states: see props/campaign.h
  unsigned arithmetics = 8; // as graphvet fuzz --missed-arithmetics
  unsigned z3TimeoutMs = 2000;
  bool noZ3 = false;
  unsigned maxCandidates = 256;
};

std::string joined(const std::vector<std::string> &v) {
  std::string out;
  for (const std::string &s : v)
    out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string itemLine(const props::MissedItem &item) {
  std::string head = fmt::format("{} [{}]: ", item.node, item.rule);
  switch (item.status) {
  case props::MissedStatus::Removable:
    return head + (item.addedEdges.empty()
                       ? "removable"
                       : "removable (added ctrl " + joined(item.addedEdges) + ")");
  case props::MissedStatus::Unobserved:
    return head + "unobserved (removable, but the copy is dead code)";
  case props::MissedStatus::Unexercised:
    return head + "unexercised (removable on the checked states, where the copy never ran)";
  case props::MissedStatus::Necessary:
    return head + "necessary: " + item.violationKind + ": " + item.message;
  case props::MissedStatus::Inconclusive:
    return head + "inconclusive: " + item.message;
  case props::MissedStatus::Reserved:
    return head + "reserved (not removable by contract)";
  case props::MissedStatus::Untried:
    return head + "untried (candidate cap reached)";
  }
  return head;
}

std::string summaryLine(const props::MissedReport &r) {
  std::string line = fmt::format(
      "summary: {} TensorMoves, {} deleted, {} kept, {} missed, {} unobserved, {} unexercised, "
      "{} necessary, {} inconclusive, {} reserved",
      r.tensorMoves, r.deleted, r.kept, r.missed, r.unobserved, r.unexercised, r.necessary,
      r.inconclusive, r.reserved);
  if (r.untried)
    line += fmt::format(", {} untried (capped)", r.untried);
  return line + fmt::format("; recall {:.1f}%", 100.0 * r.recall());
}

nlohmann::ordered_json reportJson(const props::MissedReport &r, const std::string &file) {
  nlohmann::ordered_json j;
  j["file"] = file;
  j["pass_verdict"] = std::string(oracle::verdictName(r.passVerdict));
  if (!r.passViolation.empty())
    j["pass_violation"] = r.passViolation;
  j["tensor_moves"] = r.tensorMoves;
  j["deleted"] = r.deleted;
  j["kept"] = r.kept;
  j["missed"] = r.missed;
  j["unobserved"] = r.unobserved;
  j["unexercised"] = r.unexercised;
  j["necessary"] = r.necessary;
  j["inconclusive"] = r.inconclusive;
  j["reserved"] = r.reserved;
  j["untried"] = r.untried;
  j["capped"] = r.capped;
  j["deleted_unobserved"] = r.deletedUnobserved;
  j["deleted_unexercised"] = r.deletedUnexercised;
  j["recall"] = r.recall();
  j["recall_all"] = r.recallAll();
  j["missed_by_rule"] = r.missedByRule;
  nlohmann::ordered_json items = nlohmann::ordered_json::array();
  for (const props::MissedItem &item : r.items) {
    nlohmann::ordered_json ji;
    ji["node"] = item.node;
    ji["graph"] = item.graph;
    ji["line"] = item.loc.line;
    ji["rule"] = item.rule;
    ji["status"] = std::string(props::missedStatusName(item.status));
    ji["moved_ctrl"] = item.movedEdges;
    ji["added_ctrl"] = item.addedEdges;
    ji["violation"] = item.violationKind;
    ji["message"] = item.message;
    ji["pass_message"] = item.passMessage;
    items.push_back(std::move(ji));
  }
  j["items"] = items;
  return j;
}

std::string rewriteLine(const props::MissedRewrite &item) {
  std::string line = fmt::format("rewrite [{}] {}: {}", item.rule, joined(item.nodes),
                                 props::rewriteStatusName(item.status));
  if (!item.violationKind.empty())
    line += " (" + item.violationKind + ")";
  return line + ": " + item.message;
}

std::string rewriteSummary(const props::MissedRewriteReport &r) {
  std::string byRule;
  for (const auto &[rule, n] : r.missedByRule)
    byRule += fmt::format("{}{} {}", byRule.empty() ? "" : ", ", rule, n);
  return fmt::format("rewrites: {} opportunities, {} missed{}, {} necessary, {} inconclusive, "
                     "{} untried",
                     r.items.size(), r.missed, byRule.empty() ? "" : " (" + byRule + ")",
                     r.necessary, r.inconclusive, r.untried);
}

nlohmann::ordered_json rewritesJson(const props::MissedRewriteReport &r) {
  nlohmann::ordered_json j;
  j["missed"] = r.missed;
  j["necessary"] = r.necessary;
  j["inconclusive"] = r.inconclusive;
  j["untried"] = r.untried;
  j["missed_by_rule"] = r.missedByRule;
  nlohmann::ordered_json items = nlohmann::ordered_json::array();
  for (const props::MissedRewrite &item : r.items)
    items.push_back({{"rule", item.rule},
                     {"nodes", item.nodes},
                     {"status", std::string(props::rewriteStatusName(item.status))},
                     {"violation", item.violationKind},
                     {"message", item.message}});
  j["items"] = items;
  return j;
}

/// Several files: bad input outranks a finding, which outranks inconclusive.
int worse(int a, int b) {
  auto rank = [](int s) {
    return s == kExitBadInput ? 3 : s == kExitViolation ? 2 : s == kExitInconclusive ? 1 : 0;
  };
  return rank(a) >= rank(b) ? a : b;
}

int runMissed(const MissedCmdOptions &cmd) {
  props::MissedOptions o;
  o.check.seed = cmd.seed;
  o.check.numStates = cmd.states;
  o.check.arithmetics = cmd.arithmetics;
  o.check.z3TimeoutMs = cmd.z3TimeoutMs;
  o.check.useZ3 = !cmd.noZ3;
  o.maxCandidates = cmd.maxCandidates;
  if (!toPipelineOptions(cmd.pipeline, "missed", o.pipeline, std::cerr) ||
      !pipelineCanRun(o.pipeline, "missed", std::cerr))
    return kExitBadInput;
  const bool several = cmd.files.size() > 1;
  int status = kExitOk;
  for (const std::string &file : cmd.files) {
    std::string shown = file == "-" ? "<stdin>" : file;
    auto original = loadGraphFile(file, std::cerr);
    if (!original) {
      status = worse(status, kExitBadInput);
      continue;
    }
    props::MissedReport r = props::findMissed(*original, o);
    if (!r.ok) {
      std::cerr << shown << ": error: " << r.error << "\n";
      status = worse(status, kExitBadInput);
      continue;
    }
    props::MissedRewriteOptions ro;
    ro.pipeline = o.pipeline;
    ro.check = o.check;
    ro.maxCandidates = cmd.maxCandidates;
    props::MissedRewriteReport rewrites = props::findMissedRewrites(*original, ro);
    if (cmd.json) {
      nlohmann::ordered_json j = reportJson(r, shown);
      j["rewrites"] = rewritesJson(rewrites);
      std::cout << j.dump() << "\n";
    } else {
      std::string prefix = several ? shown + ": " : "";
      if (r.passVerdict != oracle::Verdict::Sound)
        std::cout << prefix << "warning: the pass output itself is "
                  << oracle::verdictName(r.passVerdict) << " (" << r.passViolation
                  << "); candidates are built on it\n";
      for (const props::MissedItem &item : r.items)
        std::cout << prefix << itemLine(item) << "\n";
      std::cout << prefix << summaryLine(r) << "\n";
      for (const props::MissedRewrite &item : rewrites.items)
        std::cout << prefix << rewriteLine(item) << "\n";
      std::cout << prefix << rewriteSummary(rewrites) << "\n";
    }
    uint64_t missed = r.missed + rewrites.missed;
    uint64_t inconclusive = r.inconclusive + rewrites.inconclusive;
    int one = missed > 0 ? kExitViolation : inconclusive > 0 ? kExitInconclusive : kExitOk;
    status = worse(status, one);
  }
  std::cout.flush();
  return status;
}

} // namespace

void registerMissed(CLI::App &app, CommandContext &ctx) {
  auto opts = std::make_shared<MissedCmdOptions>();
  CLI::App *sub = app.add_subcommand(
      "missed", "List the TensorMoves the pass kept, and the rewrites the mid-end passes left, "
                "that the oracle proves sound to take");
  sub->add_option("files", opts->files, "the .graph files to examine")->required();
  addPipelineOptions(sub, opts->pipeline);
  sub->add_flag("--json", opts->json, "one JSON object per file on stdout");
  addIntOption(sub, "--seed", opts->seed, 0, kMaxSeed,
               "initial states of the oracle derive from this seed");
  addIntOption(sub, "--states", opts->states, 1, kMaxStates,
               "seeded initial states per experiment");
  addArithmeticsOption(sub, "--arithmetics", opts->arithmetics,
                       "variants of the placeholder arithmetic of ops without semantics, each on "
                       "every state: a removal is claimed only when it holds under all of them");
  addIntOption(sub, "--z3-timeout", opts->z3TimeoutMs, 1, kMaxZ3TimeoutMs,
               "total Z3 budget per check, in ms");
  sub->add_flag("--no-z3", opts->noZ3, "decide races by reachability only (no proof)");
  addIntOption(sub, "--max-candidates", opts->maxCandidates, 1, 100000,
               "kept copies tried per file at most");
  sub->footer(
      "Each kept TensorMove is removed alone from the pass's output: its consumers read the "
      "copy's input, its orderings are carried over, and reader-before-writer control edges are "
      "added while they repair a race without closing a cycle; the oracle then checks the result "
      "against the original. Lines: 'removable' (a missed optimization, with the edges added), "
      "'unobserved' (removable dead code, not counted as missed), 'unexercised' (removable on "
      "the checked states, but the copy's branch or loop body never ran on them; not counted "
      "as missed), 'necessary: KIND: MESSAGE', "
      "'inconclusive', 'reserved'. Then, for the mid-end passes of the pipeline, every rewrite "
      "still open in its output, one line each ('rewrite [RULE] NODES: STATUS: WHAT'): a dead "
      "node (dce:dead-node), two equal nodes (cse:equal-nodes), a node of constant inputs "
      "(fold-constant:constant-inputs), a cast pair or transpose pair that gives back its input "
      "(simplify:cast-pair, simplify:transpose-pair), taken by the harness and checked by the "
      "oracle ('missed' when sound, 'necessary' when not), and two adjacent element-wise ops "
      "in different kernels (fuse-ops:unfused-chain, missed by structure). "
      "Exit status: 0 nothing missed, 1 "
      "something is missed (a finding), 2 bad input (unparsable or invalid original), 3 nothing "
      "missed but some answers were inconclusive.");
  sub->callback([opts, &ctx] { ctx.status = runMissed(*opts); });
}

} // namespace graphvet::cli
