// The graphvet subcommands: each registers itself on the CLI11 app and runs
// one library call. Exit statuses follow the project-wide convention.
#pragma once

#include "ir/graph.h"
#include "onnx/importer.h"
#include "passes/cost_model.h"
#include "passes/pass_manager.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace graphvet::cli {

enum ExitStatus : int {
  kExitOk = 0,           ///< success, or `sound`
  kExitViolation = 1,    ///< a violation (or a finding) was found
  kExitBadInput = 2,     ///< malformed input, command line or racy original
  kExitInconclusive = 3, ///< a budget ran out before a verdict
};

/// Where a subcommand stores its exit status once it has run.
struct CommandContext {
  int status = kExitOk;
};

/// Reads a whole file ("-" for stdin); on failure prints "PATH: error:
/// cannot open file" to `err` and returns nullopt.
std::optional<std::string> readTextFile(const std::string &path, std::ostream &err);

/// Reads and parses a `.graph` file ("-" for stdin); on failure prints every
/// diagnostic as FILE:LINE:COL: error: ... to `err` and returns nullopt.
std::optional<Module> loadGraphFile(const std::string &path, std::ostream &err);

/// Writes `text` to `path`, or to stdout when path is empty or "-"; returns
/// false (after printing an error) when the file cannot be written.
bool writeOutput(const std::string &path, const std::string &text, std::ostream &err);

/// True when stderr is a terminal (progress display).
bool stderrIsTerminal();

/// A bad value on the command line (a number out of its range): main prints
/// what() as the one line on stderr and exits with kExitBadInput.
class CommandLineError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Adds an option NAME (e.g. "-j,--jobs") taking a whole decimal integer in
/// lo..hi (the range is shown in --help, with the target's value as default).
/// Anything else -- not a number, a sign, a fraction, out of range -- throws
/// CommandLineError "graphvet COMMAND: error: --NAME expects an integer in
/// LO..HI, got 'VALUE'" while parsing.
CLI::Option *addIntOption(CLI::App *sub, const std::string &name, uint64_t lo, uint64_t hi,
                          std::function<void(uint64_t)> store, const std::string &defaultShown,
                          const std::string &help);

template <class T>
CLI::Option *addIntOption(CLI::App *sub, const std::string &name, T &target, uint64_t lo,
                          uint64_t hi, const std::string &help) {
  static_assert(std::is_integral_v<T> && std::is_unsigned_v<T>);
  return addIntOption(
      sub, name, lo, std::min<uint64_t>(hi, std::numeric_limits<T>::max()),
      [&target](uint64_t v) { target = static_cast<T>(v); }, std::to_string(target), help);
}

template <class T>
CLI::Option *addIntOption(CLI::App *sub, const std::string &name, std::optional<T> &target,
                          uint64_t lo, uint64_t hi, const std::string &help) {
  static_assert(std::is_integral_v<T> && std::is_unsigned_v<T>);
  return addIntOption(
      sub, name, lo, std::min<uint64_t>(hi, std::numeric_limits<T>::max()),
      [&target](uint64_t v) { target = static_cast<T>(v); }, target ? std::to_string(*target) : "",
      help);
}

/// The same for a decimal number (e.g. "0.5", "60", "1e3") in lo..hi:
/// "... expects a number in LO..HI, got 'VALUE'".
CLI::Option *addNumberOption(CLI::App *sub, const std::string &name, double lo, double hi,
                             std::function<void(double)> store, const std::string &defaultShown,
                             const std::string &help);

/// The pass options of every subcommand that runs the pipeline (opt, check,
/// fuzz, missed, reduce): one spelling, one help text, one order.
struct PipelineCmdOptions {
  std::optional<std::string> passes; ///< --passes LIST
  unsigned optLevel = 3;             ///< -O/--opt-level N
  std::vector<std::string> disabled; ///< --disable-pass NAME (repeatable)
  std::vector<std::string> options;  ///< --option KEY=VALUE (repeatable)
  bool tmConservative = false;       ///< --tm-conservative
};

/// Adds --passes, -O/--opt-level, --disable-pass, --option and
/// --tm-conservative to `sub`, in this order.
void addPipelineOptions(CLI::App *sub, PipelineCmdOptions &opts);

/// True when any pass option differs from its default.
bool anyPipelineOption(const PipelineCmdOptions &opts);

/// Builds `pipeline` (level, pass list, disabled passes, option overrides,
/// conservative mode) from the options. On a malformed --option or an
/// unknown pass name prints "graphvet COMMAND: error: ..." to `err` and
/// returns false.
bool toPipelineOptions(const PipelineCmdOptions &opts, std::string_view command,
                       PipelineOptions &pipeline, std::ostream &err);

/// The pass options other than --passes as they must appear in a replay
/// command: " -O N" (when not 3), " --disable-pass P"..., " --option 'K=V'"...,
/// " --tm-conservative".
std::string pipelineReplayFlags(const PipelineCmdOptions &opts);

/// The pipeline's decision counts as `opt --stats --json` prints them: the
/// tensor-move-delete counters first, in the documented order
/// (tensor_moves, deleted, kept, ctrl_edges_added), then any other counter.
nlohmann::ordered_json pipelineStatsJson(const PipelineResult &result);

/// The cost model's figures as `graphvet cost --json` prints them.
nlohmann::ordered_json costJson(const CostReport &c);

/// Applies `--passes a,b,...` (names trimmed, empty items dropped) to
/// `pipeline.passes` and checks that every listed and every disabled name is
/// a known pass. On an unknown name prints "graphvet COMMAND: error: unknown
/// pass 'X' (known passes: ...)" to `err` and returns false.
bool applyPassList(const std::optional<std::string> &list, const std::vector<std::string> &disabled,
                   std::string_view command, PipelineOptions &pipeline, std::ostream &err);

/// Runs `pipeline` once on an empty graph: a pass that cannot run as asked
/// (legalize without a target, an unreadable target table) says so before a
/// campaign starts, instead of leaving every case unchanged and "sound".
/// Prints "graphvet COMMAND: error: ..." per problem and returns false.
bool pipelineCanRun(const PipelineOptions &pipeline, std::string_view command, std::ostream &err);

/// Applies `--option KEY=VALUE` items (key trimmed) to
/// `pipeline.optionOverrides`. On an item without `=` or with an empty key
/// prints "graphvet COMMAND: error: --option expects KEY=VALUE, got '...'" to
/// `err` and returns false.
bool applyOptionOverrides(const std::vector<std::string> &items, std::string_view command,
                          PipelineOptions &pipeline, std::ostream &err);

/// Ranges shared by the options of the same meaning across subcommands.
inline constexpr uint64_t kMaxSeed = std::numeric_limits<uint64_t>::max();
inline constexpr uint64_t kMaxStates = 1000;         ///< --states, --missed-states
inline constexpr uint64_t kMaxArithmetics = 16;      ///< --arithmetics, --missed-arithmetics
inline constexpr uint64_t kMaxZ3TimeoutMs = 3600000; ///< --z3-timeout: one hour
inline constexpr uint64_t kMaxBudget = 1000000;      ///< shrink / reduce budgets

/// Adds `NAME N` (1..16, default shown): how many variants of the
/// interpreter's placeholder arithmetic a check runs (oracle::CheckOptions::
/// arithmetics).
void addArithmeticsOption(CLI::App *sub, const std::string &name, unsigned &value,
                          const std::string &help);

/// The options of the commands that read ONNX models (import, run, check,
/// opt): a `.onnx` file is imported in memory with them.
struct OnnxCmdOptions {
  std::vector<std::string> inputShapes; ///< --input-shape NAME=DIMS[,NAME=DIMS...]
  std::vector<std::string> freeze;      ///< --freeze NAME=NUMBER[,NAME=NUMBER...]
  bool any() const { return !inputShapes.empty() || !freeze.empty(); }
};

/// Adds --input-shape and --freeze (group "ONNX models") to `sub`.
void addOnnxOptions(CLI::App *sub, OnnxCmdOptions &opts);

/// Parses the ONNX options into `io` (inputShapes, freezeValues). On a
/// malformed item prints "graphvet COMMAND: error: ..." and returns false.
bool toImportOptions(const OnnxCmdOptions &opts, std::string_view command,
                     onnximport::ImportOptions &io, std::ostream &err);

/// The ONNX options as a replay command repeats them (" --input-shape
/// 'x=1x3'", " --freeze 'sr=16000'").
std::string onnxReplayFlags(const OnnxCmdOptions &opts);

/// True for a path naming an ONNX model (`.onnx`).
bool isOnnxFile(const std::string &path);

/// loadGraphFile, or for a `.onnx` model its import (ONNX's checker and
/// shape inference, the options above): every import error is printed as
/// "PATH: error: ..." to `err`. ONNX options given for a `.graph` file are an
/// error. `inputs`, when given, receives the imported model's inputs (empty
/// for a `.graph` file); `outputs`, the model's graph output names.
std::optional<Module> loadModuleFile(const std::string &path, const OnnxCmdOptions &onnx,
                                     std::string_view command, std::ostream &err,
                                     std::vector<onnximport::ImportedInput> *inputs = nullptr,
                                     std::vector<std::string> *outputs = nullptr);

/// Tensors larger than this go to a sidecar weights file (graph-format.md
/// v2's `file(...)`) when a command writes a module from an ONNX model.
inline constexpr uint64_t kInlineLimitBytes = 1024;

/// When `m` holds tensor literals over kInlineLimitBytes (a real model's
/// weights), prints "PATH: error: ... write it with -o OUT.graph" to `err`
/// and returns false: they are not printed as text on stdout.
bool checkPrintableInline(const Module &m, const std::string &path, std::ostream &err);

void registerShow(CLI::App &app, CommandContext &ctx);
void registerOpt(CLI::App &app, CommandContext &ctx);
void registerRun(CLI::App &app, CommandContext &ctx);
void registerCheck(CLI::App &app, CommandContext &ctx);
void registerFuzz(CLI::App &app, CommandContext &ctx);
void registerReduce(CLI::App &app, CommandContext &ctx);
void registerBench(CLI::App &app, CommandContext &ctx);
void registerMissed(CLI::App &app, CommandContext &ctx);
void registerImport(CLI::App &app, CommandContext &ctx);
void registerProve(CLI::App &app, CommandContext &ctx);
void registerCost(CLI::App &app, CommandContext &ctx);
void registerExport(CLI::App &app, CommandContext &ctx);

/// Writes `m` as the ONNX model `path` (`graphvet export`, and `graphvet opt
/// -o OUT.onnx`): the graph outputs named `outputNames` (an imported model's,
/// or empty), ONNX's checker run on the result. Every error is printed as
/// "SHOWN: error: ..." to `err`; returns kExitOk or kExitBadInput. `summary`,
/// when given, receives the `--json` summary.
int exportModule(const Module &m, const std::string &path, const std::string &shownName,
                 const std::vector<std::string> &outputNames, int64_t opset, std::ostream &err,
                 nlohmann::ordered_json *summary = nullptr);

/// `graphvet opt --explore-orders`: the options it adds to opt and its run.
struct ExploreCmdOptions {
  bool explore = false;
  size_t maxOrders = 720;
  uint64_t seed = 1;
  bool noSpecials = false;
};
void addExploreOptions(CLI::App *sub, ExploreCmdOptions &opts);
/// Loads `file`, explores every order of the --passes set, prints the ranking
/// (text or --json); the exit status follows the worst verdict.
int runExploreOrders(const std::string &file, const OnnxCmdOptions &onnx,
                     const PipelineOptions &pipeline, const ExploreCmdOptions &opts, bool json);

} // namespace graphvet::cli
