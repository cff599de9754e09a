// libFuzzer target for the mid-end passes: an input is a numeric `.graph`
// (format version 2) whose first line `# passes: CHOICE` names one mid-end
// pass or a level pipeline (-O1..-O3; without the line a hash of the bytes
// picks one). An input that parses, is well typed and small enough is run
// through that pipeline (verifier on) and the result checked by the oracle
// under the pipeline's numeric contract (fuzz/midend_input.h); a violation
// prints the verdict with its `graphvet check` replay command and aborts, so
// the crash file is the `.graph` that replays it. Structure-aware: the
// custom mutator and crossover (fuzz/typed_graph_mutator.h) hand back only
// well-typed graphs; now and then a byte-level libFuzzer mutation (with the
// dictionary) is tried and kept only if it passes the same filter.
#include "fuzz/midend_input.h"
#include "fuzz/typed_graph_mutator.h"
#include "oracle/check.h"

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

/// The target's limits: the defaults, and skipConstOutputs from the
/// environment (LLVMFuzzerInitialize), for runs that step around the open
/// cse finding. libFuzzer's C entry points leave no other place for it.
fuzz::MidendLimits targetLimits;

size_t emit(const std::string &text, uint8_t *data, size_t maxSize) {
  if (text.size() > maxSize)
    return 0;
  std::memcpy(data, text.data(), text.size());
  return text.size();
}

[[noreturn]] void report(std::string_view input, const fuzz::MidendResult &r) {
  std::string detail;
  if (!r.failedPass.empty())
    detail += "verifier failed after pass: " + r.failedPass + "\n";
  std::fprintf(stderr,
               "midend_fuzzer: refinement violation by %s\n%s%s\n"
               "--- original (replay: graphvet check FILE %s) ---\n%.*s\n"
               "--- optimized ---\n%s\n",
               r.choice.c_str(), detail.c_str(), oracle::formatResult(r.check).c_str(),
               fuzz::replayFlags(r.choice).c_str(), static_cast<int>(input.size()), input.data(),
               r.optimizedText.c_str());
  std::fflush(stderr);
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  const char *skip = std::getenv("MIDEND_FUZZER_SKIP_CONST_OUTPUTS");
  targetLimits.skipConstOutputs = skip && std::string_view(skip) == "1";
  if (targetLimits.skipConstOutputs)
    std::fprintf(stderr, "midend_fuzzer: skipping inputs with a Const graph output\n");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  fuzz::MidendResult r = fuzz::checkMidendInput(text, targetLimits);
  if (r.outcome == fuzz::MidendOutcome::Violation)
    report(text, r);
  return 0; // skipped, sound and inconclusive inputs are all fine
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t maxSize,
                                          unsigned int seed) {
  std::string_view input(reinterpret_cast<const char *>(data), size);
  fuzz::TypedMutatorOptions opts;
  opts.limits = targetLimits;
  // One time in eight, libFuzzer's byte mutations (and the dictionary) reach
  // values and spellings no typed mutation makes; keep only well-typed ones.
  if (LLVMFuzzerMutate && seed % 8 == 0) {
    std::vector<uint8_t> scratch(data, data + size);
    scratch.resize(maxSize);
    size_t n = LLVMFuzzerMutate(scratch.data(), size, maxSize);
    std::string_view mutated(reinterpret_cast<const char *>(scratch.data()), n);
    if (fuzz::classifyMidendInput(mutated, opts.limits) == fuzz::InputStatus::Accepted)
      return emit(std::string(mutated), data, maxSize);
  }
  fuzz::TypedMutationOutcome out = fuzz::mutateTypedGraphText(input, seed, maxSize, opts);
  if (!out.text)
    return size; // nothing well typed nearby: keep the input as it is
  return emit(*out.text, data, maxSize);
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1,
                                            const uint8_t *data2, size_t size2, uint8_t *out,
                                            size_t maxOutSize, unsigned int seed) {
  fuzz::TypedMutatorOptions opts;
  opts.limits = targetLimits;
  fuzz::TypedMutationOutcome result = fuzz::crossOverTypedGraphText(
      std::string_view(reinterpret_cast<const char *>(data1), size1),
      std::string_view(reinterpret_cast<const char *>(data2), size2), seed, maxOutSize, opts);
  if (!result.text)
    return 0; // libFuzzer then tries another mutation
  return emit(*result.text, out, maxOutSize);
}
