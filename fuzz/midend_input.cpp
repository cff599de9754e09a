// The pipeline choice, input filter and oracle check of midend_fuzzer.
#include "fuzz/midend_input.h"

#include "ir/op_library.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/types.h"
#include "ir/verifier.h"
#include "props/contract.h"

#include <vector>

namespace graphvet::fuzz {

namespace {

/// FNV-1a: the choice and the Z3 sampling are functions of the bytes alone,
/// so a replay decides the same.
uint64_t contentHash(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : text)
    h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ULL;
  return h;
}

/// Passes that only annotate (no rewrite to judge) are left out.
bool isRewritingPass(std::string_view name) {
  return name != "annotate-used-memory";
}

std::vector<std::string_view> makeChoices() {
  std::vector<std::string_view> choices;
  for (const PassInfo &p : allPasses())
    if (isRewritingPass(p.name))
      choices.push_back(p.name);
  for (std::string_view level : {"-O1", "-O2", "-O3"})
    choices.push_back(level);
  return choices;
}

std::optional<unsigned> levelOf(std::string_view choice) {
  if (choice.size() == 3 && choice[0] == '-' && choice[1] == 'O' && choice[2] >= '1' &&
      choice[2] <= '3')
    return static_cast<unsigned>(choice[2] - '0');
  return std::nullopt;
}

size_t firstLineEnd(std::string_view text) {
  size_t nl = text.find('\n');
  return nl == std::string_view::npos ? text.size() : nl;
}

} // namespace

std::span<const std::string_view> midendPipelineChoices() {
  static const std::vector<std::string_view> choices = makeChoices();
  return choices;
}

std::optional<std::string> pipelineHeader(std::string_view text) {
  if (!text.starts_with(kPassesHeader))
    return std::nullopt;
  std::string_view name = text.substr(0, firstLineEnd(text)).substr(kPassesHeader.size());
  while (!name.empty() && (name.back() == ' ' || name.back() == '\r'))
    name.remove_suffix(1);
  for (std::string_view c : midendPipelineChoices())
    if (c == name)
      return std::string(c);
  return std::nullopt;
}

std::string choosePipeline(std::string_view text) {
  if (auto named = pipelineHeader(text))
    return *named;
  std::span<const std::string_view> choices = midendPipelineChoices();
  return std::string(choices[contentHash(text) % choices.size()]);
}

std::string_view withoutPipelineHeader(std::string_view text) {
  if (!text.starts_with(kPassesHeader))
    return text;
  size_t end = firstLineEnd(text);
  return end == text.size() ? std::string_view() : text.substr(end + 1);
}

std::string withPipelineHeader(std::string_view text, std::string_view choice) {
  std::string out(kPassesHeader);
  out += choice;
  out += '\n';
  out += withoutPipelineHeader(text);
  return out;
}

PipelineOptions pipelineOptionsFor(std::string_view choice) {
  PipelineOptions o;
  o.verifyEach = true;
  if (auto level = levelOf(choice))
    o.optLevel = *level;
  else
    o.passes = std::vector<std::string>{std::string(choice)};
  return o;
}

std::string replayFlags(std::string_view choice) {
  if (auto level = levelOf(choice))
    return "-O " + std::to_string(*level);
  std::string flags = "--passes ";
  flags += choice;
  return flags;
}

std::string_view inputStatusName(InputStatus s) {
  switch (s) {
  case InputStatus::Accepted:
    return "accepted";
  case InputStatus::Unparsable:
    return "unparsable";
  case InputStatus::IllTyped:
    return "ill-typed";
  case InputStatus::TooLarge:
    return "too-large";
  case InputStatus::ReadsFiles:
    return "reads-files";
  case InputStatus::Excluded:
    return "excluded";
  }
  return "?";
}

InputStatus classifyModuleForMidend(const Module &m, const MidendLimits &limits) {
  if (hasErrors(verifyModule(m)))
    return InputStatus::Unparsable;
  // A targets file is read from disk: the input would depend on the machine.
  for (const auto &[key, value] : m.options)
    if (key.ends_with("targets_file"))
      return InputStatus::ReadsFiles;
  std::vector<GraphId> graphs = m.canonicalGraphOrder();
  if (graphs.size() > limits.maxGraphs)
    return InputStatus::TooLarge;
  size_t nodes = 0;
  for (GraphId g : graphs)
    nodes += m.graph(g).numLiveNodes();
  if (nodes > limits.maxNodes)
    return InputStatus::TooLarge;
  if (limits.skipConstOutputs)
    for (NodeId out : m.root().nodesOfType("NetOutput"))
      for (const auto &src : m.root().node(out).inputs)
        if (src && opKind(m.root().node(src->node)) == OpKind::Weight)
          return InputStatus::Excluded;
  Diagnostics diags;
  ModuleTypes types = inferModuleTypes(m, diags);
  if (hasErrors(diags))
    return InputStatus::IllTyped;
  int64_t total = 0;
  for (GraphId g : graphs)
    for (NodeId n : m.graph(g).liveNodes())
      for (uint32_t k = 0; k < m.graph(g).node(n).numOutputs; ++k) {
        const TensorType *t = types.of(g, n, k);
        if (!t)
          return InputStatus::IllTyped;
        std::optional<int64_t> elements = t->checkedElements();
        if (!elements || *elements > limits.maxElements)
          return InputStatus::TooLarge;
        total += *elements;
        if (total > limits.maxTotalElements)
          return InputStatus::TooLarge;
      }
  return InputStatus::Accepted;
}

InputStatus classifyMidendInput(std::string_view text, const MidendLimits &limits,
                                std::optional<Module> *module) {
  if (text.size() > limits.maxInputBytes)
    return InputStatus::TooLarge;
  // `file("NAME", offset)` literals read the disk (parser.h).
  if (text.find("file(") != std::string_view::npos)
    return InputStatus::ReadsFiles;
  ParseResult parsed = parseModule(text);
  if (!parsed.module)
    return InputStatus::Unparsable;
  InputStatus status = classifyModuleForMidend(*parsed.module, limits);
  if (status == InputStatus::Accepted && module)
    *module = std::move(parsed.module);
  return status;
}

oracle::CheckOptions midendCheckOptions(std::string_view text) {
  oracle::CheckOptions o; // graphvet check's defaults: seed 1, 2 states
  o.seed = 1;
  o.numStates = 2;
  o.z3TimeoutMs = 2000;
  o.useZ3 = contentHash(text) % 16 == 0;
  return o;
}

MidendResult checkMidendInput(std::string_view text, const MidendLimits &limits) {
  MidendResult r;
  r.choice = choosePipeline(text);
  std::optional<Module> original;
  r.status = classifyMidendInput(text, limits, &original);
  if (r.status != InputStatus::Accepted)
    return r;

  PipelineOptions pipeline = pipelineOptionsFor(r.choice);
  Module optimized = *original;
  PipelineResult run = runPipeline(optimized, pipeline);
  if (!run.ok)
    r.failedPass = run.failedPass;

  // As props::checkOptimized (`graphvet check`): the approx contract when a
  // selected pass declares it, then the pass contracts the oracle cannot
  // see. props/ itself needs RapidCheck, which the fuzz build lacks.
  oracle::CheckOptions check = midendCheckOptions(text);
  check.contract = pipelineContract(pipeline);
  r.check = oracle::checkRefinement(*original, optimized, check);
  props::checkReservedNodesKept(*original, optimized, r.check);
  props::checkOutlinedCallOutputs(*original, optimized, r.check);

  switch (r.check.verdict) {
  case oracle::Verdict::Sound:
    r.outcome = MidendOutcome::Sound;
    break;
  case oracle::Verdict::Inconclusive:
    r.outcome = MidendOutcome::Inconclusive;
    break;
  case oracle::Verdict::Violation:
    r.outcome = MidendOutcome::Violation;
    r.optimizedText = printModule(optimized);
    break;
  case oracle::Verdict::Invalid: // an invalid original (racy, faulting) is not the pass's problem
    r.outcome = MidendOutcome::Skipped;
    break;
  }
  return r;
}

} // namespace graphvet::fuzz
