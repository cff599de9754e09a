// graphvet run: executes a graph in the reference interpreter under a
// schedule (reference topological order, seeded random, or an explicit node
// list) and prints both runs of the experiment: outputs, variables and user
// inputs as typed tensors the way numpy prints them (a summary line, nested
// rows, `...` past 1000 elements unless --full; `?` for an indeterminate
// element), the alias relation and, with --plan, the memory plan. --input
// feeds user inputs from .npy or raw files; --save writes the outputs as .npy;
// --outputs-dir writes them raw (the ONNX conformance runner's interface).
#include "ir/npy.h"
#include "ir/op_library.h"
#include "ir/types.h"
#include "oracle/interpreter.h"
#include "tools/graphvet/commands.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
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
  bool liveBytes = false;
  bool json = false;
  bool full = false;
  std::vector<std::string> inputs; ///< NAME=PATH or K=PATH (NAME: a Data node or ONNX input)
  std::string outputsDir;
  std::string saveDir;
  OnnxCmdOptions onnx;
};

/// Past this many elements a tensor is summarized (numpy's threshold)...
constexpr int64_t kSummarizeAbove = 1000;
/// ...to this many leading and trailing entries per dimension (edgeitems).
constexpr int64_t kEdgeItems = 3;
/// Rows of elements are wrapped past this width.
constexpr size_t kLineWidth = 100;

/// One location's elements as typed values, with their indeterminate flags.
struct Elements {
  const oracle::Bytes &bytes;
  const oracle::ElementView &view;
  uint32_t width;
  int64_t count;

  Elements(const oracle::Bytes &b, const oracle::ElementView &v)
      : bytes(b), view(v), width(std::max<uint32_t>(dtypeBytes(v.dtype), 1)),
        count(static_cast<int64_t>(b.size() / width)) {}
  bool undef(int64_t i) const {
    return !view.undef.empty() &&
           std::any_of(view.undef.begin() + i * width, view.undef.begin() + (i + 1) * width,
                       [](uint8_t u) { return u != 0; });
  }
  const uint8_t *at(int64_t i) const { return bytes.data() + i * width; }
  std::string text(int64_t i) const {
    if (undef(i))
      return "?";
    auto t = formatElement(view.dtype, at(i));
    return t ? *t : std::string("nan");
  }
  /// The shape the elements are printed in: the view's when it covers them.
  Shape shape() const {
    TensorType t{view.dtype, view.shape};
    std::optional<int64_t> n = t.checkedElements();
    if (!view.shape.empty() && n && *n == count)
      return view.shape;
    return view.shape.empty() && count == 1 ? Shape{} : Shape{count};
  }
};

/// `min -1.5  max 3  mean 0.75`, over determinate elements that are not NaN,
/// then the counts of NaN and indeterminate elements when there are any
/// (bool: how many are true).
std::string summaryText(const Elements &e) {
  if (e.count == 0)
    return "empty";
  int64_t nans = 0, undefs = 0, trues = 0, counted = 0, lo = -1, hi = -1;
  double sum = 0;
  for (int64_t i = 0; i < e.count; ++i) {
    if (e.undef(i)) {
      ++undefs;
      continue;
    }
    double v = loadDouble(e.view.dtype, e.at(i));
    if (std::isnan(v)) {
      ++nans;
      continue;
    }
    trues += v != 0;
    if (lo < 0 || v < loadDouble(e.view.dtype, e.at(lo)))
      lo = i;
    if (hi < 0 || v > loadDouble(e.view.dtype, e.at(hi)))
      hi = i;
    sum += v;
    ++counted;
  }
  std::string out;
  if (e.view.dtype == DType::Bool) {
    out = fmt::format("{} of {} true", trues, counted);
  } else if (counted > 0) {
    double mean = sum / static_cast<double>(counted);
    out = fmt::format("min {}  max {}  mean {}", e.text(lo), e.text(hi),
                      std::isnan(mean) ? std::string("nan") : fmt::format("{:.6g}", mean));
  }
  if (nans > 0)
    out += fmt::format("{}nan {}", out.empty() ? "" : "  ", nans);
  if (undefs > 0)
    out += fmt::format("{}indeterminate {}", out.empty() ? "" : "  ", undefs);
  return out;
}

/// numpy's nested-bracket layout: rows of the last dimension, blank lines
/// between higher-dimensional blocks, `...` for the middle of a dimension
/// when the tensor is summarized.
void nestedText(const Elements &e, const Shape &shape, size_t dim, int64_t offset, bool summarize,
                const std::string &indent, std::string &out) {
  if (dim == shape.size()) {
    out += e.text(offset);
    return;
  }
  int64_t n = shape[dim], stride = 1;
  for (size_t d = dim + 1; d < shape.size(); ++d)
    stride *= shape[d];
  out += '[';
  std::string inner = indent + std::string(dim + 1, ' ');
  bool last = dim + 1 == shape.size();
  size_t lineStart = out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1;
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) {
      out += last ? "..., " : "...,\n" + std::string(shape.size() - dim - 2, '\n') + inner;
      i = n - kEdgeItems;
    }
    nestedText(e, shape, dim + 1, offset + i * stride, summarize, indent, out);
    if (i + 1 == n)
      break;
    if (last) {
      out += ", ";
      if (out.size() - lineStart > kLineWidth) {
        out.back() = '\n';
        out += inner;
        lineStart = out.size() - inner.size();
      }
    } else {
      out += ",\n" + std::string(shape.size() - dim - 2, '\n') + inner;
    }
  }
  out += ']';
}

/// `f32[2, 2]  min 1  max 4  mean 2.5` and, indented below, the values.
std::string valuesText(const oracle::Bytes &bytes, const oracle::ElementView &view, bool full) {
  if (view.dtype == DType::U8 && view.shape.empty())
    return oracle::toHex(bytes);
  Elements e(bytes, view);
  std::string out = TensorType{view.dtype, view.shape}.str() + "  " + summaryText(e) + "\n    ";
  nestedText(e, e.shape(), 0, 0, !full && e.count > kSummarizeAbove, "    ", out);
  return out;
}

/// The elements as JSON: numbers, "nan"/"inf"/"-inf" for floats without a
/// JSON number, null for an indeterminate element; nested like the shape.
nlohmann::ordered_json valuesJson(const Elements &e, const Shape &shape, size_t dim,
                                  int64_t offset) {
  if (dim == shape.size()) {
    if (e.undef(offset))
      return nullptr;
    double v = loadDouble(e.view.dtype, e.at(offset));
    if (e.view.dtype == DType::Bool)
      return v != 0;
    if (!isFloat(e.view.dtype))
      return isSignedInteger(e.view.dtype)
                 ? nlohmann::ordered_json(loadInt(e.view.dtype, e.at(offset)))
                 : nlohmann::ordered_json(static_cast<uint64_t>(v));
    if (std::isnan(v))
      return "nan";
    if (std::isinf(v))
      return v > 0 ? "inf" : "-inf";
    return v;
  }
  int64_t stride = 1;
  for (size_t d = dim + 1; d < shape.size(); ++d)
    stride *= shape[d];
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (int64_t i = 0; i < shape[dim]; ++i)
    arr.push_back(valuesJson(e, shape, dim + 1, offset + i * stride));
  return arr;
}

/// dtype, shape, summary and (up to the summarizing threshold, or with
/// --full) the values of one location.
void addTensorJson(nlohmann::ordered_json &j, const oracle::Bytes &bytes,
                   const oracle::ElementView *view, bool full) {
  if (!view)
    return;
  Elements e(bytes, *view);
  j["dtype"] = std::string(dtypeName(view->dtype));
  j["shape"] = e.shape();
  j["summary"] = summaryText(e);
  if (full || e.count <= kSummarizeAbove)
    j["values"] = valuesJson(e, e.shape(), 0, 0);
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

nlohmann::ordered_json observationJson(const oracle::Observation &o, bool full) {
  nlohmann::ordered_json j;
  j["outputs"] = nlohmann::ordered_json::array();
  for (size_t k = 0; k < o.outputs.size(); ++k) {
    nlohmann::ordered_json out = {
        {"index", k}, {"buffer", o.outputBuffers[k]}, {"hex", oracle::toHex(o.outputs[k])}};
    addTensorJson(out, o.outputs[k], k < o.outputViews.size() ? &o.outputViews[k] : nullptr, full);
    j["outputs"].push_back(std::move(out));
  }
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

/// The root graph's user inputs: index, node name and type.
struct UserInput {
  int64_t index;
  std::string name;
  TensorType type;
};

std::vector<UserInput> userInputs(const Module &m) {
  std::vector<UserInput> out;
  Diagnostics ignored;
  ModuleTypes types = inferModuleTypes(m, ignored);
  const Graph &root = m.root();
  for (NodeId id = 0; id < root.capacity(); ++id) {
    const Node &n = root.node(id);
    if (!n.alive || opKind(n) != OpKind::DataSource)
      continue;
    std::optional<int64_t> index = n.intAttr("index");
    const TensorType *t = types.of(0, n.id, 0);
    if (index && t)
      out.push_back({*index, n.name, *t});
  }
  return out;
}

/// Reads `NAME=PATH` / `K=PATH` user input files: a .npy file must have the
/// input's dtype and shape; any other file is raw little-endian bytes. NAME
/// is a Data node's name or, for an ONNX model, one of its inputs' names.
bool readInputs(const Module &m, const std::vector<std::string> &specs,
                const std::vector<onnximport::ImportedInput> &named,
                std::map<int64_t, oracle::Bytes> &out, std::string &error) {
  std::vector<UserInput> known = userInputs(m);
  for (const std::string &spec : specs) {
    size_t eq = spec.find('=');
    std::string key = eq == std::string::npos ? std::string() : spec.substr(0, eq);
    const UserInput *input = nullptr;
    for (const onnximport::ImportedInput &in : named) {
      if (in.name != key)
        continue;
      if (!in.index) {
        error = fmt::format("graphvet run: error: --input '{}': input '{}' is frozen (a "
                            "constant)",
                            spec, in.name);
        return false;
      }
      for (const UserInput &u : known)
        if (u.index == *in.index)
          input = &u;
    }
    bool isIndex =
        !key.empty() && key.size() < 19 && key.find_first_not_of("0123456789") == std::string::npos;
    for (const UserInput &u : known)
      if (!input && (u.name == key || (isIndex && std::stoll(key) == u.index)))
        input = &u;
    if (!input) {
      std::string names;
      for (const UserInput &u : known)
        names += fmt::format("{}{} ({})", names.empty() ? "" : ", ", u.name, u.index);
      error = fmt::format("graphvet run: error: --input '{}': expected NAME=PATH or K=PATH "
                          "naming a user input "
                          "(the graph's inputs: {})",
                          spec, names.empty() ? "none" : names);
      return false;
    }
    std::string path = spec.substr(eq + 1);
    std::ifstream in(path, std::ios::binary);
    std::error_code dirError; // a directory opens but cannot be read
    if (!in || std::filesystem::is_directory(path, dirError)) {
      error = fmt::format("graphvet run: error: --input '{}': cannot read '{}'", spec, path);
      return false;
    }
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    if (path.ends_with(".npy")) {
      std::string why;
      std::optional<Tensor> t = parseNpy(bytes, why);
      if (!t) {
        error = fmt::format("{}: error: {}", path, why);
        return false;
      }
      // bf16 has no numpy dtype: its bits come as '<u2'.
      bool bf16Bits = input->type.dtype == DType::BF16 && t->dtype() == DType::U16 &&
                      t->shape() == input->type.shape;
      if (t->type() != input->type && !bf16Bits) {
        error = fmt::format("{}: error: input {} ({}) is {}, the file holds {}", path, input->name,
                            input->index, input->type.str(), t->type().str());
        return false;
      }
      out[input->index] = oracle::Bytes(t->bytes().begin(), t->bytes().end());
    } else {
      out[input->index] = oracle::Bytes(bytes.begin(), bytes.end());
    }
  }
  return true;
}

/// Writes run 1's graph outputs as .npy files (output_K.npy; indeterminate
/// elements keep the interpreter's bytes and are counted in outputs.json).
bool saveOutputs(const std::string &dir, const oracle::Observation &o, std::string &error) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (size_t k = 0; k < o.outputs.size(); ++k) {
    const oracle::ElementView &v = o.outputViews[k];
    Elements e(o.outputs[k], v);
    Tensor t(TensorType{v.dtype, e.shape()},
             std::vector<uint8_t>(o.outputs[k].begin(), o.outputs[k].end()));
    std::string file = fmt::format("output_{}.npy", k);
    std::ofstream f(std::filesystem::path(dir) / file, std::ios::binary);
    f << formatNpy(t);
    if (!f) {
      error = fmt::format("cannot write '{}' into '{}'", file, dir);
      return false;
    }
    int64_t undef = 0;
    for (int64_t i = 0; i < e.count; ++i)
      undef += e.undef(i);
    j.push_back({{"index", k},
                 {"file", file},
                 {"dtype", dtypeName(v.dtype)},
                 {"shape", e.shape()},
                 {"indeterminate", undef}});
  }
  std::ofstream f(std::filesystem::path(dir) / "outputs.json");
  f << j.dump(1) << "\n";
  if (!f) {
    error = fmt::format("cannot write the outputs into '{}'", dir);
    return false;
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
  if (!readInputs(*m, opts.inputs, named, ro.inputs, inputError)) {
    std::cerr << inputError << "\n";
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
  if (!opts.saveDir.empty() && !r.run1.crashed && !r.run1.budgetExceeded) {
    std::string error;
    if (!saveOutputs(opts.saveDir, r.run1.observation, error)) {
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
      j["runs"].push_back(observationJson(r.run1.observation, opts.full));
    if (!r.crashed() && !r.budgetExceeded())
      j["runs"].push_back(observationJson(r.run2.observation, opts.full));
    j["alias"] = nlohmann::ordered_json::array();
    for (const oracle::AliasPair &p : r.alias)
      j["alias"].push_back({{"output", p.output}, {"location", p.location}});
    j["weight_writes"] = nlohmann::ordered_json::array();
    for (const oracle::WeightWrite &w : weightWrites)
      j["weight_writes"].push_back({{"node", w.node}, {"buffer", w.buffer}});
    if (!fault.empty())
      j["fault"] = fault;
    if (opts.liveBytes && !r.run1.crashed && !r.run1.budgetExceeded) {
      nlohmann::ordered_json live;
      live["steps"] = nlohmann::ordered_json::array();
      for (const oracle::LiveStep &s : r.run1.liveSteps)
        live["steps"].push_back({{"node", s.name}, {"bytes", s.bytes}});
      live["peak"] = r.run1.peakLiveBytes;
      j["live_bytes"] = std::move(live);
    }
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
  if (opts.liveBytes && !r.run1.crashed && !r.run1.budgetExceeded) {
    for (const oracle::LiveStep &s : r.run1.liveSteps)
      out += fmt::format("live: {} {}\n", s.name, s.bytes);
    out += fmt::format("live peak: {}\n", r.run1.peakLiveBytes);
  }
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
  sub->add_flag("--live-bytes", opts->liveBytes,
                "also print the bytes of fresh buffers live at each step of run 1 (from first "
                "write to last read; graph outputs until the end) and their peak");
  sub->add_flag("--json", opts->json, "machine-readable output");
  sub->add_flag("--full", opts->full,
                fmt::format("print every element (default: tensors of more than {} elements "
                            "show the first and last {} of each dimension; --json lists values "
                            "up to that size)",
                            kSummarizeAbove, kEdgeItems));
  sub->add_option("--input", opts->inputs,
                  "NAME=PATH or K=PATH: the user input named NAME (its Data node, or for a "
                  ".onnx model the model's input) or with index K takes the tensor of PATH "
                  "instead of seeded values: a .npy file of the input's dtype and shape, or raw "
                  "little-endian bytes (repeatable)");
  sub->add_option("--save", opts->saveDir,
                  "write run 1's graph outputs to DIR as output_K.npy, with outputs.json "
                  "(dtypes, shapes, indeterminate counts)");
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
