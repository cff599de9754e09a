// Structure-aware mutation of `.graph` modules for the libFuzzer custom
// mutator (and anything else that wants a valid neighbour of a graph): add or
// remove a node, rewire an input, add or remove a control edge, insert or
// remove a TensorMove, flip a memory attribute, wrap a node into a
// PartitionedCall subgraph, change a compile option, and a crossover that
// splices a fragment of one module into another. Every decision comes from a
// seeded generator, so the same input and seed give the same output on any
// machine. Results are filtered: only graphs that pass the verifier, survive a
// print/parse round trip and that the oracle accepts as race-free originals
// are handed back.
#pragma once

#include "ir/graph.h"
#include "oracle/check.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace graphvet::fuzz {

/// splitmix64: tiny, fast and identical everywhere (the standard library's
/// distributions are not portable across implementations, so none are used).
class MutationRng {
public:
  explicit MutationRng(uint64_t seed) : state_(seed) {}
  uint64_t next();
  /// Uniform in [0, n); 0 when n == 0.
  uint32_t below(uint32_t n);
  /// True with probability num/den.
  bool chance(uint32_t num, uint32_t den) { return below(den) < num; }
  template <typename T> const T &pick(const std::vector<T> &v) {
    return v[below(static_cast<uint32_t>(v.size()))];
  }

private:
  uint64_t state_;
};

/// Applies the row of `kind` of a mutation table (rows with `kind` and `fn`)
/// to a copy of `subject`, kept only when the mutation succeeds: a mutation
/// may give up half-way, and a refusal leaves the subject untouched. Shared by
/// the memory mutator and the typed one.
template <typename Row, size_t N, typename Subject, typename Limits>
bool applyFromTable(const Row (&table)[N], decltype(table[0].kind) kind, Subject &subject,
                    MutationRng &rng, const Limits &limits) {
  for (const Row &w : table)
    if (w.kind == kind) {
      Subject copy = subject;
      if (!w.fn(copy, rng, limits))
        return false;
      subject = std::move(copy);
      return true;
    }
  return false;
}

/// Draws rows of a weighted mutation table (rows with `kind` and `weight`)
/// until `tryRow(row)` applies one, at most 16 draws; the kind applied.
/// Shared by the memory mutator and the typed one.
template <typename Row, size_t N, typename TryRow>
auto drawWeighted(const Row (&table)[N], MutationRng &rng, TryRow tryRow)
    -> std::optional<decltype(table[0].kind)> {
  uint32_t total = 0;
  for (const Row &w : table)
    total += w.weight;
  for (int tries = 0; tries < 16; ++tries) {
    uint32_t r = rng.below(total);
    for (const Row &w : table) {
      if (r >= w.weight) {
        r -= w.weight;
        continue;
      }
      if (tryRow(w))
        return w.kind;
      break;
    }
  }
  return std::nullopt;
}

enum class MutationKind : uint8_t {
  AddNode,
  RemoveNode,
  RewireInput,
  AddControlEdge,
  RemoveControlEdge,
  InsertTensorMove,
  RemoveTensorMove,
  FlipMemoryAttr,
  WrapInSubgraph,
  ChangeOption,
};
inline constexpr size_t kNumMutationKinds = 10;
std::string_view mutationName(MutationKind kind);

/// Bounds that keep mutated graphs small enough for the oracle to judge
/// quickly.
struct MutationLimits {
  uint32_t maxNodesPerGraph = 48;
  uint32_t maxGraphs = 8;
  uint32_t maxInputsPerNode = 6;
};

/// Applies one mutation of `kind` to `m` in place. Returns false when the
/// mutation does not apply to this module (then `m` is unchanged). The result
/// is not verified: it may be cyclic-free but racy or otherwise invalid, which
/// the filter of mutateGraphText catches.
bool applyMutation(Module &m, MutationKind kind, MutationRng &rng,
                   const MutationLimits &limits = {});

/// Picks mutation kinds at random until one applies (bounded); returns the
/// kind applied, or nullopt when none did.
std::optional<MutationKind> mutateOnce(Module &m, MutationRng &rng,
                                       const MutationLimits &limits = {});

/// Copies a fragment of `donor`'s root graph (a window of its topological
/// order, up to a few nodes, without subgraph holders or graph boundaries)
/// into a random graph of `m`, feeds the fragment from existing values of `m`
/// and makes its last value observable (a new root graph output, or a
/// replaced input of a node that cannot reach the fragment). Also merges
/// option keys `m` lacks. Returns false when nothing could be spliced.
bool spliceFragment(Module &m, const Module &donor, MutationRng &rng,
                    const MutationLimits &limits = {});

/// Why a candidate module is (not) an acceptable fuzz input.
enum class Validity : uint8_t {
  Valid,         ///< verifier clean, round-trips, and a race-free original
  Unparsable,    ///< text does not parse (or the printed form does not re-parse)
  VerifierError, ///< structurally invalid
  TooLarge,      ///< printed text longer than the size limit
  NotSound,      ///< the oracle rejects it as an original (racy, faulting, ...)
};
std::string_view validityName(Validity v);

struct MutatorOptions {
  MutationLimits limits;
  /// Candidate modules tried per call before giving up (the input is then
  /// returned unchanged). Each attempt applies 1..maxMutationsPerAttempt
  /// mutations.
  uint32_t maxAttempts = 8;
  uint32_t maxMutationsPerAttempt = 3;
  /// Run oracle::checkOriginal and keep only `Sound` originals; without it
  /// only the verifier and the round trip filter.
  bool requireRaceFree = true;
  oracle::CheckOptions check = defaultCheckOptions();

  /// Cheap oracle settings for filtering candidates: a couple of states and
  /// a short Z3 budget (an inconclusive candidate is discarded, never kept).
  static oracle::CheckOptions defaultCheckOptions();
};

/// Classifies a module: verifier, print/parse round trip, size and (with
/// requireRaceFree) the oracle. On Valid, `printed` (if given) receives the
/// canonical text.
Validity classifyModule(const Module &m, size_t maxSize, const MutatorOptions &opts,
                        std::string *printed = nullptr);

struct MutationOutcome {
  /// Canonical text of the accepted candidate; nullopt when every attempt was
  /// discarded (the caller keeps its input).
  std::optional<std::string> text;
  /// Mutations applied to the accepted candidate, in order.
  std::vector<MutationKind> applied;
  uint32_t attempts = 0;
  /// Discarded candidates by reason, indexed by Validity.
  std::array<uint32_t, 5> discarded{};
  /// True when the input itself was not a valid original and the result was
  /// built from the fallback seed graph instead.
  bool usedFallback = false;
};

/// The custom mutator: parses `input`, applies seeded mutations, filters and
/// re-serializes. An input that does not parse (or is not a valid original)
/// is replaced by a mutation of fallbackSeedGraph().
MutationOutcome mutateGraphText(std::string_view input, uint64_t seed, size_t maxSize,
                                const MutatorOptions &opts = {});

/// The custom crossover: splices a fragment of `b` into `a` (then possibly
/// one more mutation), with the same filter. Unparsable parents are replaced
/// by the fallback seed graph.
MutationOutcome crossOverGraphText(std::string_view a, std::string_view b, uint64_t seed,
                                   size_t maxSize, const MutatorOptions &opts = {});

/// A small valid original with a redundant TensorMove, used when an input is
/// not a graph at all (e.g. libFuzzer's initial empty input).
std::string_view fallbackSeedGraph();

} // namespace graphvet::fuzz
