// graphvet run: executes a graph in the reference interpreter under a
// schedule (reference topological order, seeded random, or an explicit node
// list) and prints both runs of the experiment: outputs, variables and user
// inputs as typed values (`?` for an indeterminate element; hex in --json),
// the alias relation and, with --plan, the memory plan. --input feeds user
// inputs from raw files; --outputs-dir writes the outputs as raw files (the
// ONNX conformance runner's interface).
#include "oracle/interpreter.h"
#include "tools/graphvet/commands.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
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
  bool full = false;
  std::vector<std::string> inputs; ///< K=PATH (K an index, or an ONNX input's name)
  std::string outputsDir;
  OnnxCmdOptions onnx;
};

/// Elements printed per location unless --full.
constexpr int64_t kShownElements = 32;

/// `f32[2, 2] {1, 2.5, ?, nan}`: the location's elements in its dtype.
std::string valuesText(const oracle::Bytes &bytes, const oracle::ElementView &view, bool full) {
  uint32_t w = dtypeBytes(view.dtype);
  if (view.dtype == DType::U8 && view.shape.empty())
    return oracle::toHex(bytes);
  int64_t n = static_cast<int64_t>(bytes.size() / w);
  std::string out = TensorType{view.dtype, view.shape}.str() + " {";
  for (int64_t i = 0; i < n; ++i) {
    if (!full && i == kShownElements) {
      out += fmt::format(", ... {} more", n - i);
      break;
    }
    if (i)
      out += ", ";
    const uint8_t *p = bytes.data() + i * w;
    bool undef = !view.undef.empty() &&
                 std::any_of(view.undef.begin() + i * w, view.undef.begin() + (i + 1) * w,
                             [](uint8_t u) { return u != 0; });
    auto text = formatElement(view.dtype, p);
    out += undef ? std::string("?") : text ? *text : std::string("nan");
  }
  return out + "}";
}

const oracle::ElementView *viewFor(const oracle::Observation &o, const std::string &label) {
  auto it = o.views.find(label);
  return it == o.views.end() ? nullptr : &it->second;
}

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

std::string observationText(const oracle::Observation &o, bool full) {
  std::string out;
  auto shown = [&](const oracle::Bytes &bytes, const oracle::ElementView *view) {
    return view ? valuesText(bytes, *view, full) : oracle::toHex(bytes);
  };
  for (size_t k = 0; k < o.outputs.size(); ++k)
    out += fmt::format("  output {} [{}]: {}\n", k,
                       o.outputBuffers[k].empty() ? "unconnected" : o.outputBuffers[k],
                       shown(o.outputs[k], k < o.outputViews.size() ? &o.outputViews[k] : nullptr));
  for (const auto &[name, bytes] : o.variables)
    out += fmt::format("  var:{}: {}\n", name, shown(bytes, viewFor(o, "var:" + name)));
  for (const auto &[index, bytes] : o.inputs)
    out += fmt::format("  input{}: {}\n", index,
                       shown(bytes, viewFor(o, fmt::format("input{}", index))));
  for (const auto &[name, bytes] : o.callerMemory)
    out += fmt::format("  caller:{}: {}\n", name, shown(bytes, viewFor(o, "caller:" + name)));
  return out;
}

/// Reads `K=PATH` user input files; K is a user input index or, for an
/// ONNX model, the name of one of its (not frozen) inputs.
bool readInputs(const std::vector<std::string> &specs,
                const std::vector<onnximport::ImportedInput> &named,
                std::map<int64_t, oracle::Bytes> &out, std::string &error) {
  for (const std::string &spec : specs) {
    size_t eq = spec.find('=');
    int64_t index = -1;
    auto byName = std::find_if(named.begin(), named.end(), [&](const auto &in) {
      return eq != std::string::npos && in.name == spec.substr(0, eq);
    });
    if (byName != named.end()) {
      if (!byName->index) {
        error = fmt::format("--input '{}': input '{}' is frozen (a constant)", spec, byName->name);
        return false;
      }
      index = *byName->index;
    } else if (eq != std::string::npos && eq > 0) {
      try {
        size_t used = 0;
        index = std::stoll(spec.substr(0, eq), &used);
        if (used != eq)
          index = -1;
      } catch (const std::exception &) {
        index = -1;
      }
    }
    if (index < 0) {
      error = fmt::format("--input '{}': expected K=PATH with K a user input index{}", spec,
                          named.empty() ? "" : " or an input name of the model");
      return false;
    }
    std::ifstream in(spec.substr(eq + 1), std::ios::binary);
    if (!in) {
      error = fmt::format("--input '{}': cannot read '{}'", spec, spec.substr(eq + 1));
      return false;
    }
    out[index] = oracle::Bytes((std::istreambuf_iterator<char>(in)), {});
  }
  return true;
}

/// Writes run 1's graph outputs as raw files: output_K.bin, output_K.undef
/// (one flag byte per element) and outputs.json (dtype and shape of each).
bool writeOutputs(const std::string &dir, const oracle::Observation &o, std::string &error) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (size_t k = 0; k < o.outputs.size(); ++k) {
    const oracle::ElementView &v = o.outputViews[k];
    uint32_t w = dtypeBytes(v.dtype);
    oracle::Bytes flags(o.outputs[k].size() / w, 0);
    for (size_t i = 0; i < flags.size(); ++i)
      for (uint32_t b = 0; b < w && !v.undef.empty(); ++b)
        flags[i] |= v.undef[i * w + b];
    auto write = [&](const std::string &name, const oracle::Bytes &bytes) {
      std::ofstream f(std::filesystem::path(dir) / name, std::ios::binary);
      f.write(reinterpret_cast<const char *>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
      return static_cast<bool>(f);
    };
    if (!write(fmt::format("output_{}.bin", k), o.outputs[k]) ||
        !write(fmt::format("output_{}.undef", k), flags)) {
      error = fmt::format("cannot write the outputs into '{}'", dir);
      return false;
    }
    j.push_back({{"index", k}, {"dtype", dtypeName(v.dtype)}, {"shape", v.shape}});
  }
  std::ofstream f(std::filesystem::path(dir) / "outputs.json");
  f << j.dump() << "\n";
  if (!f) {
    error = fmt::format("cannot write the outputs into '{}'", dir);
    return false;
  }
  return true;
}

int runRun(const RunCmdOptions &opts) {
  std::vector<onnximport::ImportedInput> named;
  auto m = loadModuleFile(opts.file, opts.onnx, "run", std::cerr, &named);
  if (!m)
    return kExitBadInput;
  oracle::RunOptions ro;
  ro.seed = opts.seed;
  ro.schedule = parseSchedule(opts.schedule, opts.seed);
  std::string shown = opts.file == "-" ? "<stdin>" : opts.file;
  std::string inputError;
  if (!readInputs(opts.inputs, named, ro.inputs, inputError)) {
    std::cerr << "graphvet run: error: " << inputError << "\n";
    return kExitBadInput;
  }
  oracle::RunReport rep = oracle::runModule(*m, ro);
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
  if (!opts.outputsDir.empty() && !r.run1.crashed && !r.run1.budgetExceeded) {
    std::string error;
    if (!writeOutputs(opts.outputsDir, r.run1.observation, error)) {
      std::cerr << "graphvet run: error: " << error << "\n";
      return kExitBadInput;
    }
  }

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
    out += "run 1:\n" + observationText(r.run1.observation, opts.full);
  if (!r.crashed() && !r.budgetExceeded())
    out += "run 2 (inputs refilled, variables kept):\n" +
           observationText(r.run2.observation, opts.full);
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
  sub->add_option("file", opts->file,
                  "the .graph file ('-' for stdin), or a .onnx model (imported in memory)")
      ->required();
  addIntOption(sub, "--seed", opts->seed, 0, kMaxSeed,
               "seed of the initial state (and of --schedule random)");
  sub->add_option("--schedule", opts->schedule,
                  "topo (reference order), random (seeded by --seed), or a comma-separated "
                  "list of node names (subgraph nodes as graph/node) run in that order")
      ->capture_default_str();
  sub->add_flag("--plan", opts->plan, "also print the memory plan (every output's buffer)");
  sub->add_flag("--json", opts->json, "machine-readable output");
  sub->add_flag("--full", opts->full,
                fmt::format("print every element (default: the first {})", kShownElements));
  sub->add_option("--input", opts->inputs,
                  "K=PATH: user input K (root Data with index = K; for a .onnx model also the "
                  "input's name) takes the raw little-endian bytes of PATH instead of seeded "
                  "values (repeatable)");
  addOnnxOptions(sub, opts->onnx);
  sub->add_option("--outputs-dir", opts->outputsDir,
                  "write run 1's graph outputs to DIR: output_K.bin (raw bytes), output_K.undef "
                  "(one byte per element, 1 = indeterminate) and outputs.json (dtypes, shapes)");
  sub->footer("Exit status: 0 ran, 1 the interpreter faulted or a weight was written, "
              "2 bad input (parse error, cycle, bad schedule), 3 budget exhausted (steps or buffer "
              "memory).");
  sub->callback([opts, &ctx] { ctx.status = runRun(*opts); });
}

} // namespace graphvet::cli
