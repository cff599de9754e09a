// Helpers shared by the subcommands: loading graph files (and importing ONNX
// models), writing output, the pass options, the ONNX options and the
// numeric options every subcommand spells alike.
#include "ir/parser.h"
#include "ir/verifier.h"
#include "tools/graphvet/commands.h"

#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <unistd.h>

namespace graphvet::cli {

std::optional<std::string> readTextFile(const std::string &path, std::ostream &err) {
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), {});
    return text;
  }
  std::ifstream in(path, std::ios::binary);
  std::error_code dirError; // a directory opens but cannot be read
  if (!in || std::filesystem::is_directory(path, dirError)) {
    err << path << ": error: cannot open file\n";
    return std::nullopt;
  }
  text.assign(std::istreambuf_iterator<char>(in), {});
  return text;
}

std::optional<Module> loadGraphFile(const std::string &path, std::ostream &err) {
  std::optional<std::string> text = readTextFile(path, err);
  if (!text)
    return std::nullopt;
  std::string shownName = path == "-" ? "<stdin>" : path;
  std::string errors;
  auto m = parseOrReport(*text, shownName, errors);
  err << errors;
  return m;
}

void addOnnxOptions(CLI::App *sub, OnnxCmdOptions &opts) {
  const std::string group = "ONNX models";
  sub->add_option("--input-shape", opts.inputShapes,
                  "for a .onnx model: fix inputs' shapes, NAME=1x3x224x224 (an empty shape is a "
                  "scalar; several as NAME=DIMS,NAME=DIMS; repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group(group);
  sub->add_option("--freeze", opts.freeze,
                  "for a .onnx model: make an input a constant holding NUMBER in every element, "
                  "NAME=NUMBER (e.g. sr=16000; several as NAME=N,NAME=N; repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group(group);
}

namespace {

/// Splits `a=1,b=2` items into (name, text) pairs; false on an item without
/// a name or `=`.
bool splitAssignments(const std::vector<std::string> &items,
                      std::vector<std::pair<std::string, std::string>> &out, std::string &bad) {
  for (const std::string &item : items) {
    std::stringstream parts(item);
    for (std::string part; std::getline(parts, part, ',');) {
      size_t eq = part.find('=');
      if (eq == std::string::npos || eq == 0) {
        bad = part;
        return false;
      }
      out.emplace_back(part.substr(0, eq), part.substr(eq + 1));
    }
  }
  return true;
}

} // namespace

bool toImportOptions(const OnnxCmdOptions &opts, std::string_view command,
                     onnximport::ImportOptions &io, std::ostream &err) {
  std::vector<std::pair<std::string, std::string>> shapes, frozen;
  std::string bad;
  if (!splitAssignments(opts.inputShapes, shapes, bad)) {
    err << "graphvet " << command
        << ": error: --input-shape expects NAME=DIMS (e.g. x=1x3x224x224), got '" << bad << "'\n";
    return false;
  }
  for (const auto &[name, text] : shapes) {
    auto shape = onnximport::parseShapeText(text);
    if (!shape) {
      err << "graphvet " << command
          << ": error: --input-shape expects NAME=DIMS (e.g. x=1x3x224x224), got '" << name << "="
          << text << "'\n";
      return false;
    }
    io.inputShapes[name] = *shape;
  }
  if (!splitAssignments(opts.freeze, frozen, bad)) {
    err << "graphvet " << command << ": error: --freeze expects NAME=NUMBER (e.g. sr=16000), got '"
        << bad << "'\n";
    return false;
  }
  for (const auto &[name, text] : frozen)
    io.freezeValues[name] = text;
  return true;
}

std::string onnxReplayFlags(const OnnxCmdOptions &opts) {
  std::string out;
  for (const std::string &s : opts.inputShapes)
    out += " --input-shape '" + s + "'";
  for (const std::string &f : opts.freeze)
    out += " --freeze '" + f + "'";
  return out;
}

bool isOnnxFile(const std::string &path) {
  return path.size() > 5 && path.compare(path.size() - 5, 5, ".onnx") == 0;
}

std::optional<Module> loadModuleFile(const std::string &path, const OnnxCmdOptions &onnx,
                                     std::string_view command, std::ostream &err,
                                     std::vector<onnximport::ImportedInput> *inputs,
                                     std::vector<std::string> *outputs) {
  if (!isOnnxFile(path)) {
    if (onnx.any()) {
      err << "graphvet " << command
          << ": error: --input-shape and --freeze apply to .onnx models only\n";
      return std::nullopt;
    }
    return loadGraphFile(path, err);
  }
  onnximport::ImportOptions io;
  if (!toImportOptions(onnx, command, io, err))
    return std::nullopt;
  onnximport::ImportResult r = onnximport::importOnnx(path, io);
  for (const std::string &e : r.errors)
    err << path << ": error: " << e << "\n";
  if (!r.ok())
    return std::nullopt;
  if (inputs)
    *inputs = r.inputs;
  if (outputs)
    *outputs = r.outputs;
  return std::move(r.module);
}

bool checkPrintableInline(const Module &m, const std::string &path, std::ostream &err) {
  uint64_t count = 0, bytes = 0;
  for (GraphId g = 0; g < m.numGraphs(); ++g)
    for (NodeId id : m.graph(g).liveNodes())
      for (const auto &[key, value] : m.graph(g).node(id).attrs)
        if (value.isTensor() && value.asTensor().bytes().size() > kInlineLimitBytes) {
          ++count;
          bytes += value.asTensor().bytes().size();
        }
  if (count == 0)
    return true;
  err << path << ": error: the model has " << count
      << (count == 1 ? " weight tensor" : " weight tensors") << " over " << kInlineLimitBytes
      << " bytes (" << bytes
      << " bytes in all), not printed as text: write it with -o OUT.graph (weights go to "
         "OUT.weights)\n";
  return false;
}

bool writeOutput(const std::string &path, const std::string &text, std::ostream &err) {
  if (path.empty() || path == "-") {
    std::cout << text;
    std::cout.flush();
    return true;
  }
  std::ofstream out(path, std::ios::binary);
  if (!(out << text)) {
    err << path << ": error: cannot write file\n";
    return false;
  }
  return true;
}

bool stderrIsTerminal() {
  return isatty(STDERR_FILENO) != 0;
}

namespace {

/// "--jobs" for "-j,--jobs": the name an error message shows.
std::string longName(const std::string &names) {
  std::string first;
  std::stringstream items(names);
  for (std::string item; std::getline(items, item, ',');) {
    if (first.empty())
      first = item;
    if (item.rfind("--", 0) == 0)
      return item;
  }
  return first;
}

/// The offending value as the message quotes it: a very long one is cut.
std::string quotedValue(const std::string &text) {
  constexpr size_t kMaxShown = 40;
  return text.size() <= kMaxShown ? text : text.substr(0, kMaxShown) + "...";
}

[[noreturn]] void throwBadValue(const CLI::App *sub, const std::string &option,
                                const std::string &expects, const std::string &text) {
  throw CommandLineError(fmt::format("graphvet {}: error: {} expects {}, got '{}'", sub->get_name(),
                                     option, expects, quotedValue(text)));
}

std::optional<uint64_t> parseInteger(std::string_view text, uint64_t lo, uint64_t hi) {
  uint64_t value = 0;
  const char *end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || value < lo || value > hi)
    return std::nullopt;
  return value;
}

std::optional<double> parseNumber(std::string_view text, double lo, double hi) {
  double value = 0;
  const char *end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value, std::chars_format::general);
  // The negated test also rejects NaN.
  if (ec != std::errc() || ptr != end || !(value >= lo && value <= hi))
    return std::nullopt;
  return value;
}

/// An option read as text and parsed by `parse` within lo..hi; any other
/// value is one CommandLineError naming the option, `what` and the range.
template <typename T, typename Parse>
CLI::Option *addRangeOption(CLI::App *sub, const std::string &name, T lo, T hi,
                            std::function<void(T)> store, const std::string &defaultShown,
                            const std::string &help, const char *what, const char *typeName,
                            Parse parse) {
  std::string range = fmt::format("{}..{}", lo, hi);
  CLI::Option *opt = sub->add_option_function<std::string>(
      name,
      [sub, option = longName(name), range, lo, hi, what, parse,
       store = std::move(store)](const std::string &text) {
        std::optional<T> value = parse(text, lo, hi);
        if (!value)
          throwBadValue(sub, option, std::string(what) + " in " + range, text);
        store(*value);
      },
      help);
  opt->type_name(std::string(typeName) + " in " + range);
  if (!defaultShown.empty())
    opt->default_str(defaultShown);
  return opt;
}

} // namespace

CLI::Option *addIntOption(CLI::App *sub, const std::string &name, uint64_t lo, uint64_t hi,
                          std::function<void(uint64_t)> store, const std::string &defaultShown,
                          const std::string &help) {
  return addRangeOption<uint64_t>(sub, name, lo, hi, std::move(store), defaultShown, help,
                                  "an integer", "INT", parseInteger);
}

CLI::Option *addNumberOption(CLI::App *sub, const std::string &name, double lo, double hi,
                             std::function<void(double)> store, const std::string &defaultShown,
                             const std::string &help) {
  return addRangeOption<double>(sub, name, lo, hi, std::move(store), defaultShown, help, "a number",
                                "NUM", parseNumber);
}

void addArithmeticsOption(CLI::App *sub, const std::string &name, unsigned &value,
                          const std::string &help) {
  addIntOption(sub, name, value, 1, kMaxArithmetics, help);
}

void addPipelineOptions(CLI::App *sub, PipelineCmdOptions &opts) {
  const std::string group = "Pass options";
  sub->add_option("--passes", opts.passes,
                  "comma-separated passes to run, in order (overrides -O; default: the -O3 "
                  "pipeline)")
      ->group(group);
  addIntOption(sub, "-O,--opt-level", opts.optLevel, 0, kMaxOptLevel,
               "optimization level: run the passes of level N and below")
      ->group(group);
  sub->add_option("--disable-pass", opts.disabled, "do not run this pass (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group(group);
  sub->add_option("--option", opts.options,
                  "set a compile option KEY=VALUE over the graph's options block (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group(group);
  sub->add_flag("--tm-conservative", opts.tmConservative,
                "tensor-move-delete decides like the reference design: every soundness fix, no "
                "extension")
      ->group(group);
}

nlohmann::ordered_json costJson(const CostReport &c) {
  nlohmann::ordered_json j;
  j["kernels"] = c.kernels;
  j["bytes_read"] = c.bytesRead;
  j["bytes_written"] = c.bytesWritten;
  j["bytes_moved"] = c.bytesRead + c.bytesWritten;
  if (c.peakKnown)
    j["peak_live_bytes"] = c.peakLiveBytes;
  else
    j["peak_live_bytes"] = nullptr;
  if (!c.peakKnown)
    j["peak_unknown_because"] = c.peakSkip;
  j["constant_bytes"] = c.constantBytes;
  j["flops"] = c.flops;
  j["fused_groups"] = c.fusedGroups;
  j["unsized_ports"] = c.unsizedPorts;
  j["kernels_by_op"] = nlohmann::ordered_json::object();
  for (const auto &[op, n] : c.kernelsByOp)
    j["kernels_by_op"][op] = n;
  return j;
}

nlohmann::ordered_json pipelineStatsJson(const PipelineResult &result) {
  nlohmann::ordered_json j;
  // tensor-move-delete's counters stay at the top level, where scripts
  // written for the first pass read them; every pass's are under "passes".
  auto tmd = result.stats.find("tensor-move-delete");
  for (const char *key : {"tensor_moves", "deleted", "kept", "ctrl_edges_added"}) {
    int64_t value = 0;
    if (tmd != result.stats.end())
      if (auto it = tmd->second.counters.find(key); it != tmd->second.counters.end())
        value = it->second;
    j[key] = value;
  }
  nlohmann::ordered_json passes = nlohmann::ordered_json::object();
  for (const auto &[pass, stats] : result.stats)
    passes[pass] = stats.counters;
  j["passes"] = std::move(passes);
  j["rounds"] = result.iterations;
  j["fixpoint"] = result.reachedFixpoint;
  return j;
}

bool anyPipelineOption(const PipelineCmdOptions &opts) {
  return opts.passes || opts.optLevel != PipelineOptions{}.optLevel || !opts.disabled.empty() ||
         !opts.options.empty() || opts.tmConservative;
}

bool toPipelineOptions(const PipelineCmdOptions &opts, std::string_view command,
                       PipelineOptions &pipeline, std::ostream &err) {
  pipeline.optLevel = opts.optLevel;
  pipeline.disabled = opts.disabled;
  pipeline.conservative = opts.tmConservative;
  return applyOptionOverrides(opts.options, command, pipeline, err) &&
         applyPassList(opts.passes, opts.disabled, command, pipeline, err);
}

std::string pipelineReplayFlags(const PipelineCmdOptions &opts) {
  std::string out;
  if (opts.optLevel != PipelineOptions{}.optLevel)
    out += " -O " + std::to_string(opts.optLevel);
  for (const std::string &d : opts.disabled)
    out += " --disable-pass " + d;
  for (const std::string &o : opts.options)
    out += " --option '" + o + "'";
  if (opts.tmConservative)
    out += " --tm-conservative";
  return out;
}

bool applyOptionOverrides(const std::vector<std::string> &items, std::string_view command,
                          PipelineOptions &pipeline, std::ostream &err) {
  auto trim = [](std::string_view v) {
    size_t b = v.find_first_not_of(" \t");
    if (b == std::string_view::npos)
      return std::string();
    size_t e = v.find_last_not_of(" \t");
    return std::string(v.substr(b, e - b + 1));
  };
  for (const std::string &kv : items) {
    size_t eq = kv.find('=');
    std::string key = eq == std::string::npos ? "" : trim(std::string_view(kv).substr(0, eq));
    if (key.empty()) {
      err << "graphvet " << command << ": error: --option expects KEY=VALUE, got '" << kv << "'\n";
      return false;
    }
    key = canonicalOptionKey(key);
    if (!isValidKey(key)) {
      err << "graphvet " << command << ": error: --option key '" << key
          << "' is not a valid option name (identifiers joined by '.'; a pass is named as in "
             "--passes)\n";
      return false;
    }
    pipeline.optionOverrides[key] = kv.substr(eq + 1);
  }
  return true;
}

bool pipelineCanRun(const PipelineOptions &pipeline, std::string_view command, std::ostream &err) {
  ParseResult probe = parseModule("graph main {\n  out = NetOutput()\n}\n");
  if (!probe.module)
    return true;
  Module m = std::move(*probe.module);
  PipelineResult r = runPipeline(m, pipeline);
  if (r.ok || !r.failedPass.empty())
    return true; // a verifier failure depends on the graph, not on the options
  for (const Diagnostic &d : r.diagnostics)
    err << "graphvet " << command << ": error: " << d.message << "\n";
  return false;
}

bool applyPassList(const std::optional<std::string> &list, const std::vector<std::string> &disabled,
                   std::string_view command, PipelineOptions &pipeline, std::ostream &err) {
  if (list) {
    std::vector<std::string> names;
    std::stringstream items(*list);
    for (std::string item; std::getline(items, item, ',');) {
      size_t first = item.find_first_not_of(" \t");
      if (first != std::string::npos)
        names.push_back(item.substr(first, item.find_last_not_of(" \t") - first + 1));
    }
    pipeline.passes = std::move(names);
  }
  std::vector<std::string> named = pipeline.passes.value_or(std::vector<std::string>{});
  named.insert(named.end(), disabled.begin(), disabled.end());
  for (const std::string &name : named)
    if (!findPass(name)) {
      std::string known;
      for (const PassInfo &p : allPasses())
        known += (known.empty() ? "" : ", ") + std::string(p.name);
      err << "graphvet " << command << ": error: unknown pass '" << name
          << "' (known passes: " << known << ")\n";
      return false;
    }
  return true;
}

} // namespace graphvet::cli
