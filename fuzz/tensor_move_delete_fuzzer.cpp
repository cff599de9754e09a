// libFuzzer target for TensorMoveDeletePass: every input that parses and is
// a race-free original (oracle::checkOriginal says Sound) is optimized by the
// pass and checked for refinement; a violation prints the verdict and aborts,
// so the crash file is the readable `.graph` that `graphvet check FILE`
// replays. Structure-aware: the custom mutator and crossover work on the
// graph (fuzz/graph_mutator.h) and only hand back valid, race-free graphs;
// now and then a byte-level libFuzzer mutation (using the dictionary) is
// tried and kept only if it passes the same filter.
#include "fuzz/graph_mutator.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "oracle/check.h"
#include "passes/pass_manager.h"
#include "passes/tensor_move_delete.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

// Provided by libFuzzer; absent (null) under the standalone replay driver.
extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize)
    __attribute__((weak));

namespace {

using namespace graphvet;

// Big graphs make each execution slow without exercising more of the pass.
constexpr size_t kMaxInputBytes = 16384;

/// FNV-1a of the input: picks the inputs that get the Z3 proof, so the
/// choice is a function of the input alone and a replay does the same.
uint64_t contentHash(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : text)
    h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ULL;
  return h;
}

/// The oracle budget per execution: a few seeded states for the value
/// comparison. The race verdict comes from exact reachability; the Z3 proof
/// of the same verdict costs ~25x more per execution, so it runs on one input
/// in 16 (enough to fuzz the SMT encoding for crashes and hangs), with a
/// budget well below the .options timeout. `graphvet check` always uses Z3.
oracle::CheckOptions targetCheckOptions(std::string_view input) {
  oracle::CheckOptions o;
  o.seed = 1;
  o.numStates = 4;
  o.z3TimeoutMs = 5000;
  o.useZ3 = contentHash(input) % 16 == 0;
  return o;
}

fuzz::MutatorOptions mutatorOptions() {
  fuzz::MutatorOptions o;
  o.check = fuzz::MutatorOptions::defaultCheckOptions();
  return o;
}

size_t emit(const std::string &text, uint8_t *data, size_t maxSize) {
  if (text.size() > maxSize)
    return 0;
  std::memcpy(data, text.data(), text.size());
  return text.size();
}

[[noreturn]] void report(const char *what, std::string_view input, const std::string &detail) {
  std::fprintf(stderr,
               "tensor_move_delete_fuzzer: %s\n%s\n--- original (replay: graphvet check FILE) "
               "---\n%.*s\n",
               what, detail.c_str(), static_cast<int>(input.size()), input.data());
  std::fflush(stderr);
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > kMaxInputBytes)
    return 0;
  std::string_view text(reinterpret_cast<const char *>(data), size);
  ParseResult parsed = parseModule(text);
  if (!parsed.module)
    return 0;
  const Module &original = *parsed.module;
  oracle::CheckOptions check = targetCheckOptions(text);
  if (oracle::checkOriginal(original, check).verdict != oracle::Verdict::Sound)
    return 0; // racy or faulting originals are not the pass's problem

  Module optimized = original;
  PipelineOptions pipeline;
  pipeline.passes = std::vector<std::string>{std::string(kTensorMoveDeleteName)};
  PipelineResult result = runPipeline(optimized, pipeline);
  // A pass that breaks the verifier still yields a module: the oracle calls
  // its defects `invalid-output` or `cycle`, like any other violation.
  oracle::CheckResult verdict = oracle::checkRefinement(original, optimized, check);
  if (verdict.verdict == oracle::Verdict::Violation) {
    std::string detail;
    if (!result.ok)
      detail += "failed pass: " + result.failedPass + "\n";
    report("refinement violation", text,
           detail + oracle::formatResult(verdict) + "\n--- optimized ---\n" +
               printModule(optimized));
  }
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t maxSize,
                                          unsigned int seed) {
  std::string_view input(reinterpret_cast<const char *>(data), size);
  fuzz::MutatorOptions opts = mutatorOptions();
  // One time in eight, let libFuzzer's byte mutations (and the dictionary)
  // reach values no structural mutation produces; keep only valid results.
  if (LLVMFuzzerMutate && seed % 8 == 0) {
    std::vector<uint8_t> scratch(data, data + size);
    scratch.resize(maxSize);
    size_t n = LLVMFuzzerMutate(scratch.data(), size, maxSize);
    ParseResult parsed =
        parseModule(std::string_view(reinterpret_cast<const char *>(scratch.data()), n));
    std::string printed;
    if (parsed.module &&
        fuzz::classifyModule(*parsed.module, maxSize, opts, &printed) == fuzz::Validity::Valid)
      return emit(printed, data, maxSize);
  }
  fuzz::MutationOutcome out = fuzz::mutateGraphText(input, seed, maxSize, opts);
  if (!out.text)
    return size; // nothing valid nearby: keep the input as it is
  return emit(*out.text, data, maxSize);
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1,
                                            const uint8_t *data2, size_t size2, uint8_t *out,
                                            size_t maxOutSize, unsigned int seed) {
  fuzz::MutationOutcome result =
      fuzz::crossOverGraphText(std::string_view(reinterpret_cast<const char *>(data1), size1),
                               std::string_view(reinterpret_cast<const char *>(data2), size2), seed,
                               maxOutSize, mutatorOptions());
  if (!result.text)
    return 0; // libFuzzer then tries another mutation
  return emit(*result.text, out, maxOutSize);
}
