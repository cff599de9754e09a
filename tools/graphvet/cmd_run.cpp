// graphvet run: executes a graph in the reference interpreter under a
// schedule (reference topological order, seeded random, or an explicit node
// list) and prints both runs of the experiment: outputs, variables and user
// inputs in hex, the alias relation and, with --plan, the memory plan.
#include "oracle/interpreter.h"
#include "tools/graphvet/commands.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fmt/format.h>
#include <iostream>
#include <memory>
#include <sstream>

namespace graphvet::cli {
namespace {

struct RunCmdOptions {
  std::string file;
  uint64_t seed = 1;
  std::string schedule = "topo";
  bool plan = false;
  bool json = false;
};

oracle::ScheduleRequest parseSchedule(const std::string &text, uint64_t seed) {
  oracle::ScheduleRequest req;
  if (text == "topo" || text.empty())
    return req;
  if (text == "random") {
    req.kind = oracle::ScheduleKind::Random;
    req.seed = seed;
    return req;
  }
  req.kind = oracle::ScheduleKind::Explicit;
  std::stringstream list(text);
  for (std::string name; std::getline(list, name, ',');) {
    size_t b = name.find_first_not_of(" \t");
    size_t e = name.find_last_not_of(" \t");
    if (b != std::string::npos)
      req.names.push_back(name.substr(b, e - b + 1));
  }
  return req;
}

nlohmann::ordered_json observationJson(const oracle::Observation &o) {
  nlohmann::ordered_json j;
  j["outputs"] = nlohmann::ordered_json::array();
  for (size_t k = 0; k < o.outputs.size(); ++k)
    j["outputs"].push_back(
        {{"index", k}, {"buffer", o.outputBuffers[k]}, {"hex", oracle::toHex(o.outputs[k])}});
  j["variables"] = nlohmann::ordered_json::object();
  for (const auto &[name, bytes] : o.variables)
    j["variables"][name] = oracle::toHex(bytes);
  j["inputs"] = nlohmann::ordered_json::object();
  for (const auto &[index, bytes] : o.inputs)
    j["inputs"][std::to_string(index)] = oracle::toHex(bytes);
  for (const auto &[name, bytes] : o.callerMemory)
    j["inputs"][name] = oracle::toHex(bytes);
  return j;
}

std::string observationText(const oracle::Observation &o) {
  std::string out;
  for (size_t k = 0; k < o.outputs.size(); ++k)
    out += fmt::format("  output {} [{}]: {}\n", k,
                       o.outputBuffers[k].empty() ? "unconnected" : o.outputBuffers[k],
                       oracle::toHex(o.outputs[k]));
  for (const auto &[name, bytes] : o.variables)
    out += fmt::format("  var:{}: {}\n", name, oracle::toHex(bytes));
  for (const auto &[index, bytes] : o.inputs)
    out += fmt::format("  input{}: {}\n", index, oracle::toHex(bytes));
  for (const auto &[name, bytes] : o.callerMemory)
    out += fmt::format("  caller:{}: {}\n", name, oracle::toHex(bytes));
  return out;
}

int runRun(const RunCmdOptions &opts) {
  auto m = loadGraphFile(opts.file, std::cerr);
  if (!m)
    return kExitBadInput;
  oracle::RunOptions ro;
  ro.seed = opts.seed;
  ro.schedule = parseSchedule(opts.schedule, opts.seed);
  oracle::RunReport rep = oracle::runModule(*m, ro);
  std::string shown = opts.file == "-" ? "<stdin>" : opts.file;
  if (!rep.ok) {
    std::cerr << shown << ": error: " << rep.error << "\n";
    return kExitBadInput;
  }
  const oracle::ExperimentResult &r = rep.result;
  int status = kExitOk;
  std::string fault;
  if (r.crashed()) {
    status = kExitViolation;
    fault = "the interpreter faults: " + r.crash();
  } else if (r.budgetExceeded()) {
    status = kExitInconclusive;
    fault = fmt::format("budget exhausted ({} steps, {} MiB of buffers)", oracle::kStepBudget,
                        oracle::kMaxArenaBytes >> 20);
  }
  std::vector<oracle::WeightWrite> weightWrites = r.run1.weightWrites;
  for (const oracle::WeightWrite &w : r.run2.weightWrites)
    if (std::none_of(weightWrites.begin(), weightWrites.end(), [&](const oracle::WeightWrite &x) {
          return x.node == w.node && x.buffer == w.buffer;
        }))
      weightWrites.push_back(w);
  if (!weightWrites.empty() && status == kExitOk)
    status = kExitViolation;

  if (opts.json) {
    nlohmann::ordered_json j;
    j["schedule"] = rep.schedule;
    j["seed"] = opts.seed;
    j["runs"] = nlohmann::ordered_json::array();
    if (!r.run1.crashed && !r.run1.budgetExceeded)
      j["runs"].push_back(observationJson(r.run1.observation));
    if (!r.crashed() && !r.budgetExceeded())
      j["runs"].push_back(observationJson(r.run2.observation));
    j["alias"] = nlohmann::ordered_json::array();
    for (const oracle::AliasPair &p : r.alias)
      j["alias"].push_back({{"output", p.output}, {"location", p.location}});
    j["weight_writes"] = nlohmann::ordered_json::array();
    for (const oracle::WeightWrite &w : weightWrites)
      j["weight_writes"].push_back({{"node", w.node}, {"buffer", w.buffer}});
    if (!fault.empty())
      j["fault"] = fault;
    if (opts.plan) {
      nlohmann::ordered_json plan;
      plan["outputs"] = nlohmann::ordered_json::array();
      for (const auto &[port, label] : rep.planPorts)
        plan["outputs"].push_back({{"port", port}, {"buffer", label}});
      plan["buffers"] = nlohmann::ordered_json::array();
      for (const auto &b : rep.planBuffers)
        plan["buffers"].push_back({{"label", b.label}, {"kind", b.kind}, {"size", b.size}});
      j["plan"] = std::move(plan);
    }
    std::cout << j.dump() << "\n";
    return status;
  }
  std::string out;
  if (opts.plan)
    out += rep.plan;
  std::string sched;
  for (const std::string &s : rep.schedule)
    sched += (sched.empty() ? "" : ", ") + s;
  out += "schedule: " + sched + "\n";
  if (!r.run1.crashed && !r.run1.budgetExceeded)
    out += "run 1:\n" + observationText(r.run1.observation);
  if (!r.crashed() && !r.budgetExceeded())
    out += "run 2 (inputs refilled, variables kept):\n" + observationText(r.run2.observation);
  for (const oracle::AliasPair &p : r.alias)
    out += fmt::format("alias: output {} shares memory with {}\n", p.output, p.location);
  for (const oracle::WeightWrite &w : weightWrites)
    out += fmt::format("fault: {} writes the immutable weight {}\n", w.node, w.buffer);
  std::cout << out;
  std::cout.flush();
  if (!fault.empty())
    std::cerr << shown << ": error: " << fault << "\n";
  return status;
}

} // namespace

void registerRun(CLI::App &app, CommandContext &ctx) {
  auto opts = std::make_shared<RunCmdOptions>();
  CLI::App *sub = app.add_subcommand(
      "run", "Run a graph in the reference interpreter and print outputs, variables and inputs");
  sub->add_option("file", opts->file, "the .graph file ('-' for stdin)")->required();
  addIntOption(sub, "--seed", opts->seed, 0, kMaxSeed,
               "seed of the initial state (and of --schedule random)");
  sub->add_option("--schedule", opts->schedule,
                  "topo (reference order), random (seeded by --seed), or a comma-separated "
                  "list of node names (subgraph nodes as graph/node) run in that order")
      ->capture_default_str();
  sub->add_flag("--plan", opts->plan, "also print the memory plan (every output's buffer)");
  sub->add_flag("--json", opts->json, "machine-readable output");
  sub->footer("Exit status: 0 ran, 1 the interpreter faulted or a weight was written, "
              "2 bad input (parse error, cycle, bad schedule), 3 budget exhausted (steps or buffer "
              "memory).");
  sub->callback([opts, &ctx] { ctx.status = runRun(*opts); });
}

} // namespace graphvet::cli
