// graphvet opt: runs the pass pipeline on a .graph file (or an ONNX model,
// imported in memory) and prints the optimized module canonically. --remarks explains every
// decision on stderr,
// --stats counts them (--json: as JSON on stdout, the graph then only goes to
// -o), --split-input-file runs each `# -----` chunk of the file on its own,
// --explore-orders ranks every order of the --passes set (cmd_explore_orders.cpp).
#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/pass_manager.h"
#include "tools/graphvet/commands.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <vector>

namespace graphvet::cli {
namespace {

struct OptOptions {
  std::string file;
  PipelineCmdOptions pipeline;
  bool verifyEach = true;
  std::string output;
  bool remarks = false;
  bool stats = false;
  bool timePasses = false;
  bool json = false;
  bool splitInputFile = false;
  OnnxCmdOptions onnx;
  ExploreCmdOptions explore;
};

constexpr std::string_view kSplitMarker = "# -----";

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos)
    return "";
  size_t e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

/// Splits on lines that read `# -----`. Each chunk is padded with the newlines
/// that precede it in the file, so diagnostics keep the file's line numbers.
std::vector<std::string> splitChunks(const std::string &text) {
  std::vector<std::string> chunks;
  std::string current;
  size_t linesBefore = 0, line = 0, pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    std::string_view l(text.data() + pos, (end == std::string::npos ? text.size() : end) - pos);
    if (trim(l) == kSplitMarker) {
      chunks.push_back(std::string(linesBefore, '\n') + current);
      current.clear();
      linesBefore = line + 1;
    } else {
      current.append(l);
      if (end != std::string::npos)
        current += '\n';
    }
    ++line;
    if (end == std::string::npos)
      break;
    pos = end + 1;
  }
  chunks.push_back(std::string(linesBefore, '\n') + current);
  return chunks;
}

std::optional<std::string> readInput(const std::string &path, std::ostream &err) {
  if (path == "-")
    return std::string(std::istreambuf_iterator<char>(std::cin), {});
  std::ifstream in(path, std::ios::binary);
  std::error_code dirError; // a directory opens but cannot be read
  if (!in || std::filesystem::is_directory(path, dirError)) {
    err << path << ": error: cannot open file\n";
    return std::nullopt;
  }
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string formatRemark(const std::string &file, const Remark &r) {
  std::string out = file;
  if (r.loc.line != 0)
    out += ":" + std::to_string(r.loc.line) + ":" + std::to_string(r.loc.col);
  return out + ": remark: " + r.message + " [" + r.pass + ":" + r.rule + "]";
}

/// Live nodes by op type over every live graph (--stats: before and after).
std::map<std::string, int64_t> opCounts(const Module &m) {
  std::map<std::string, int64_t> counts;
  for (GraphId g = 0; g < m.numGraphs(); ++g)
    if (m.graph(g).alive)
      for (NodeId n : m.graph(g).liveNodes())
        ++counts[m.graph(g).node(n).type];
  return counts;
}

int64_t total(const std::map<std::string, int64_t> &counts) {
  int64_t sum = 0;
  for (const auto &[op, n] : counts)
    sum += n;
  return sum;
}

/// Each op type's count before and after, by name.
std::map<std::string, std::pair<int64_t, int64_t>>
beforeAfter(const std::map<std::string, int64_t> &before,
            const std::map<std::string, int64_t> &after) {
  std::map<std::string, std::pair<int64_t, int64_t>> both;
  for (const auto &[op, n] : before)
    both[op].first = n;
  for (const auto &[op, n] : after)
    both[op].second = n;
  return both;
}

/// Op types whose count changed, "Cast 4 -> 0, Add 3 -> 1", by name.
std::string changedOps(const std::map<std::string, int64_t> &before,
                       const std::map<std::string, int64_t> &after) {
  std::string out;
  for (const auto &[op, ba] : beforeAfter(before, after))
    if (ba.first != ba.second)
      out += (out.empty() ? "" : ", ") + op + " " + std::to_string(ba.first) + " -> " +
             std::to_string(ba.second);
  return out.empty() ? "none" : out;
}

std::string statsText(const PipelineResult &result, const std::map<std::string, int64_t> &before,
                      const std::map<std::string, int64_t> &after) {
  std::string out;
  // Pipeline order; tensor-move-delete's counters in their historical order.
  for (const PassInfo &p : allPasses()) {
    auto found = result.stats.find(std::string(p.name));
    if (found == result.stats.end())
      continue;
    const auto &counters = found->second.counters;
    out += std::string(p.name) + ":";
    std::vector<std::string> order = {"tensor_moves", "deleted", "kept", "ctrl_edges_added"};
    for (const auto &[key, value] : counters)
      if (std::find(order.begin(), order.end(), key) == order.end())
        order.push_back(key);
    for (const std::string &key : order)
      if (auto it = counters.find(key); it != counters.end())
        out += " " + key + "=" + std::to_string(it->second);
    out += "\n";
  }
  if (out.empty())
    return "no pass ran\n";
  out += "nodes: " + std::to_string(total(before)) + " -> " + std::to_string(total(after)) + " (" +
         std::to_string(result.iterations) + " round" + (result.iterations == 1 ? "" : "s") +
         (result.reachedFixpoint ? "" : ", stopped by the round bound") + ")\n";
  out += "ops changed: " + changedOps(before, after) + "\n";
  return out;
}

/// --time-passes: the passes slowest first, then the verifier, the fixpoint
/// test and the total, in milliseconds with each one's share.
std::string timingText(const PipelineResult &result) {
  std::vector<std::pair<std::string, double>> rows(result.passSeconds.begin(),
                                                   result.passSeconds.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto &a, const auto &b) { return a.second > b.second; });
  rows.emplace_back("(verifier)", result.verifySeconds);
  rows.emplace_back("(fixpoint test)", result.fixpointSeconds);
  const double total = result.totalSeconds > 0 ? result.totalSeconds : 1e-12;
  std::string out = fmt::format("pass timing ({} round(s), {} pass run(s) skipped: input was "
                                "the pass's own last output):\n",
                                result.iterations, result.skippedPassRuns);
  for (const auto &[name, seconds] : rows)
    out += fmt::format("  {:<24} {:>10.3f} ms {:>6.1f}%\n", name, 1e3 * seconds,
                       100 * seconds / total);
  out += fmt::format("  {:<24} {:>10.3f} ms\n", "total", 1e3 * result.totalSeconds);
  return out;
}

nlohmann::ordered_json timingJson(const PipelineResult &result) {
  nlohmann::ordered_json passes = nlohmann::ordered_json::object();
  for (const auto &[name, seconds] : result.passSeconds)
    passes[name] = seconds;
  return {{"total_seconds", result.totalSeconds},
          {"passes_seconds", std::move(passes)},
          {"verify_seconds", result.verifySeconds},
          {"fixpoint_seconds", result.fixpointSeconds},
          {"skipped_pass_runs", result.skippedPassRuns}};
}

nlohmann::ordered_json opsJson(const std::map<std::string, int64_t> &before,
                               const std::map<std::string, int64_t> &after) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto &[op, ba] : beforeAfter(before, after))
    j[op] = {{"before", ba.first}, {"after", ba.second}};
  return j;
}

struct ChunkOutcome {
  int status = kExitOk;
  std::string graph; ///< printed module (empty when it could not be parsed)
  std::string json;  ///< --json report
};

/// Runs the pipeline on `m` in place: diagnostics and remarks on stderr,
/// the --json report in the outcome (not the printed graph).
ChunkOutcome optimize(const OptOptions &opts, const PipelineOptions &pipeline, Module &m,
                      const std::string &shownName) {
  ChunkOutcome out;
  std::map<std::string, int64_t> opsBefore = opts.stats ? opCounts(m) : decltype(opsBefore){};
  PipelineResult result = runPipeline(m, pipeline);
  std::map<std::string, int64_t> opsAfter = opts.stats ? opCounts(m) : decltype(opsAfter){};
  for (const Diagnostic &w : result.warnings)
    std::cerr << w.format(shownName) << "\n";
  if (opts.remarks && !opts.json)
    for (const Remark &r : result.remarks)
      std::cerr << formatRemark(shownName, r) << "\n";
  if (!result.ok) {
    for (const Diagnostic &d : result.diagnostics)
      std::cerr << d.format(shownName) << "\n";
    // A pass that breaks verification is a bug (a violation); a bad pass
    // name or level is a bad command line.
    out.status = result.failedPass.empty() ? kExitBadInput : kExitViolation;
    if (result.failedPass.empty())
      return out;
  }
  if (opts.stats && !opts.json)
    std::cerr << statsText(result, opsBefore, opsAfter);
  if (opts.timePasses && !opts.json)
    std::cerr << timingText(result);
  if (opts.json) {
    nlohmann::ordered_json j = pipelineStatsJson(result);
    if (opts.timePasses)
      j["time"] = timingJson(result);
    if (opts.stats) {
      j["nodes"] = {{"before", total(opsBefore)}, {"after", total(opsAfter)}};
      j["ops"] = opsJson(opsBefore, opsAfter);
    }
    if (opts.remarks) {
      nlohmann::ordered_json list = nlohmann::ordered_json::array();
      for (const Remark &r : result.remarks)
        list.push_back({{"pass", r.pass},
                        {"graph", r.graph},
                        {"node", r.node},
                        {"decision", r.decision},
                        {"rule", r.rule},
                        {"message", r.message},
                        {"line", r.loc.line},
                        {"col", r.loc.col}});
      j["remarks"] = std::move(list);
    }
    out.json = j.dump() + "\n";
  }
  return out;
}

ChunkOutcome runChunk(const OptOptions &opts, const PipelineOptions &pipeline,
                      const std::string &text, const std::string &shownName) {
  std::string errors;
  auto m = parseOrReport(text, shownName, errors);
  std::cerr << errors;
  if (!m) {
    ChunkOutcome out;
    out.status = kExitBadInput;
    return out;
  }
  ChunkOutcome out = optimize(opts, pipeline, *m, shownName);
  if (out.status != kExitBadInput)
    out.graph = printModule(*m);
  return out;
}

/// An ONNX model: imported in memory, optimized, written with its weights
/// in a sidecar (-o), or printed when it has no large weights. Also any
/// input written as an ONNX model (-o OUT.onnx: exported).
int runOnnx(const OptOptions &opts, const PipelineOptions &pipeline) {
  if (opts.splitInputFile) {
    std::cerr
        << "graphvet opt: error: --split-input-file applies to .graph files written as .graph "
           "(not to a .onnx model or -o OUT.onnx)\n";
    return kExitBadInput;
  }
  std::vector<std::string> outputs; // the model's output names, kept by an export
  auto m = loadModuleFile(opts.file, opts.onnx, "opt", std::cerr, nullptr, &outputs);
  if (!m)
    return kExitBadInput;
  ChunkOutcome c = optimize(opts, pipeline, *m, opts.file);
  if (c.status == kExitBadInput)
    return c.status;
  if (opts.json) {
    std::cout << c.json;
    std::cout.flush();
  }
  if (isOnnxFile(opts.output)) {
    int status = exportModule(*m, opts.output, opts.file, outputs, 17, std::cerr);
    return std::max(status, c.status);
  }
  if (!opts.output.empty() && opts.output != "-") {
    if (std::string error; !writeModuleFile(*m, opts.output, error, kInlineLimitBytes)) {
      std::cerr << "graphvet opt: error: " << error << "\n";
      return kExitBadInput;
    }
  } else if (!opts.json) {
    if (!checkPrintableInline(*m, opts.file, std::cerr))
      return kExitBadInput;
    std::cout << printModule(*m);
    std::cout.flush();
  }
  return c.status;
}

int runOpt(const OptOptions &opts) {
  PipelineOptions pipeline;
  pipeline.verifyEach = opts.verifyEach;
  // Reject unknown pass names before touching the input.
  if (!toPipelineOptions(opts.pipeline, "opt", pipeline, std::cerr))
    return kExitBadInput;
  if (opts.explore.explore) {
    if (!opts.output.empty() || opts.splitInputFile || opts.remarks || opts.stats) {
      std::cerr << "graphvet opt: error: --explore-orders prints a ranking of orders; it takes "
                   "no -o, --split-input-file, --remarks or --stats\n";
      return kExitBadInput;
    }
    return runExploreOrders(opts.file, opts.onnx, pipeline, opts.explore, opts.json);
  }
  if (isOnnxFile(opts.file) || opts.onnx.any() || isOnnxFile(opts.output))
    return runOnnx(opts, pipeline);

  auto text = readInput(opts.file, std::cerr);
  if (!text)
    return kExitBadInput;
  std::string shownName = opts.file == "-" ? "<stdin>" : opts.file;
  std::vector<std::string> chunks =
      opts.splitInputFile ? splitChunks(*text) : std::vector<std::string>{*text};
  // On stdout each chunk's graph follows its own remarks (stderr is
  // unbuffered), so `2>&1 | FileCheck` sees them chunk by chunk.
  bool streamGraphs = !opts.json && (opts.output.empty() || opts.output == "-");
  int status = kExitOk;
  std::string graphs, reports;
  for (size_t i = 0; i < chunks.size(); ++i) {
    std::string separator = i > 0 ? std::string(kSplitMarker) + "\n" : std::string();
    if (streamGraphs) {
      std::cout << separator; // before the chunk's own diagnostics
      std::cout.flush();
    } else {
      graphs += separator;
    }
    ChunkOutcome c = runChunk(opts, pipeline, chunks[i], shownName);
    status = std::max(status, c.status);
    if (streamGraphs) {
      std::cout << c.graph;
      std::cout.flush();
    } else {
      graphs += c.graph;
    }
    reports += c.json;
  }
  if (opts.json) {
    std::cout << reports;
    std::cout.flush();
  }
  if (!streamGraphs && !opts.output.empty() && !writeOutput(opts.output, graphs, std::cerr))
    return kExitBadInput;
  return status;
}

std::string passTable() {
  std::string out = "Passes (in pipeline order; -O<level> runs those with level <= it; the "
                    "numeric contract graphvet check holds each to):\n";
  for (const PassInfo &p : allPasses()) {
    out += "  " + std::string(p.name) + "  [" +
           (p.minLevel == kExplicitOnly ? std::string("--passes only")
                                        : "O" + std::to_string(p.minLevel)) +
           ", " + std::string(contractName(p.contract)) + "]  " + std::string(p.summary) + "\n";
    // One line per option the pass reads from the module (--option KEY=VALUE).
    for (std::string_view rest = p.options; !rest.empty();) {
      size_t nl = rest.find('\n');
      out += "      --option " + std::string(rest.substr(0, nl)) + "\n";
      rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
    }
  }
  return out;
}

} // namespace

void registerOpt(CLI::App &app, CommandContext &ctx) {
  auto opts = std::make_shared<OptOptions>();
  CLI::App *sub = app.add_subcommand(
      "opt", "Run the pass pipeline on a .graph file and print the optimized graph");
  sub->add_option("file", opts->file,
                  "the .graph file ('-' for stdin), or a .onnx model (imported first)")
      ->required();
  addPipelineOptions(sub, opts->pipeline);
  addOnnxOptions(sub, opts->onnx);
  sub->add_flag("--verify-each,!--no-verify", opts->verifyEach,
                "run the structural verifier after every pass (default: on)");
  sub->add_option("-o,--output", opts->output,
                  "write the optimized graph here (default: stdout); a path ending in .onnx "
                  "writes an ONNX model (as graphvet export does)");
  sub->add_flag("--remarks", opts->remarks,
                "explain every decision on stderr (FILE:LINE:COL: remark: ... [pass:rule])");
  sub->add_flag("--stats", opts->stats, "print decision counts (stderr, or stdout with --json)");
  sub->add_flag("--time-passes", opts->timePasses,
                "print each pass's wall time summed over the rounds, the verifier's, the fixpoint "
                "test's and the pipeline's (stderr, or stdout with --json)");
  sub->add_flag("--json", opts->json,
                "machine-readable report on stdout: the counts (and remarks with --remarks); "
                "the graph then only goes to -o");
  sub->add_flag("--split-input-file", opts->splitInputFile,
                "run each chunk separated by a `# -----` line on its own; outputs are "
                "separated the same way");
  addExploreOptions(sub, opts->explore);
  sub->footer(passTable());
  sub->callback([opts, &ctx] { ctx.status = runOpt(*opts); });
}

} // namespace graphvet::cli
