// Type-preserving mutation of numeric `.graph` modules for midend_fuzzer's
// custom mutator: each mutation reads the module's inferred types and makes
// a change aimed at a way mid-end passes break (special constant values,
// equivalent and off-by-one axis spellings, absent `perm`, `keepdims`,
// `allowzero`, lossy Cast pairs, composed Transpose pairs, identity
// arithmetic with -0/NaN/broadcasting constants, duplicated nodes for CSE,
// extra graph outputs for multi-consumer cases, a typed splice of a fresh
// graph, pass options, the pipeline choice). A candidate is kept only when it
// passes the verifier, type inference and midend_fuzzer's size limits and
// round-trips through print/parse; otherwise the mutator retries, a bounded
// number of times, and falls back to a freshly generated typed graph when the
// input is no graph at all. Deterministic: same input and seed, same output.
#pragma once

#include "fuzz/graph_mutator.h"
#include "fuzz/midend_input.h"
#include "ir/graph.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace graphvet::fuzz {

enum class TypedMutationKind : uint8_t {
  ConstValue,          ///< one element or the whole Const to a special value of its dtype
  IntAttr,             ///< axis/axes/perm/keepdims/allowzero...: in range, negative, absent
  InsertUnary,         ///< an element-wise unary op on an edge
  InsertCastPair,      ///< Cast to another dtype and back on an edge
  InsertTransposePair, ///< Transpose by p then by p's inverse (or absent perm)
  InsertIdentityArith, ///< x + 0, x * 1, x - 0, x / 1 with -0/NaN/broadcasting constants
  DuplicateNode,       ///< a copy of a node on the same inputs, one reader moved to it
  AddOutput,           ///< a value becomes a graph output too
  RewireSameType,      ///< an input read from another value of the same type
  BypassNode,          ///< a one-in one-out node of equal types is removed
  SpliceFresh,         ///< a fragment of a fresh typed graph, fed by values of the same type
  ChangeOption,        ///< a pass option (layout target, fold limits, ...)
  ChangePipeline,      ///< the `# passes:` choice
};
inline constexpr size_t kNumTypedMutationKinds = 13;
std::string_view typedMutationName(TypedMutationKind kind);

/// A module and the pipeline choice its text carries.
struct MidendCase {
  Module module;
  std::string choice;
};

/// Applies one mutation of `kind` in place; false (and `c` unchanged) when it
/// does not apply. The result is not filtered: it may be ill-typed.
bool applyTypedMutation(MidendCase &c, TypedMutationKind kind, MutationRng &rng,
                        const MidendLimits &limits = {});

/// A fresh well-typed graph: one or two inputs of a random dtype and shape,
/// grown by a few type-preserving mutations; with a random pipeline choice.
MidendCase freshTypedCase(MutationRng &rng, const MidendLimits &limits = {});

/// Copies a window of `donor`'s root graph (no boundaries, no subgraph
/// holders) into `m`'s root graph, feeding each outside input from a value
/// of `m` of the same type (a new graph input when there is none) and making
/// the last value a graph output. False when nothing could be copied.
bool spliceTyped(Module &m, const Module &donor, MutationRng &rng, const MidendLimits &limits = {});

struct TypedMutatorOptions {
  MidendLimits limits;
  uint32_t maxAttempts = 8;            ///< candidates tried per call
  uint32_t maxMutationsPerAttempt = 3; ///< each candidate applies 1..this many
};

struct TypedMutationOutcome {
  /// The accepted candidate's text (pipeline header + printed module);
  /// nullopt when every attempt was discarded.
  std::optional<std::string> text;
  std::vector<TypedMutationKind> applied;
  uint32_t attempts = 0;
  /// Discarded candidates by InputStatus.
  std::array<uint32_t, kNumInputStatuses> discarded{};
  /// The input was no acceptable graph: the result grew from a fresh one.
  bool usedFallback = false;
};

/// Text of a case: the pipeline header, then the printed module.
std::string printCase(const MidendCase &c);

/// The custom mutator.
TypedMutationOutcome mutateTypedGraphText(std::string_view input, uint64_t seed, size_t maxSize,
                                          const TypedMutatorOptions &opts = {});
/// The custom crossover: a typed splice of `b` into `a` (pipeline of one of
/// them), sometimes followed by one more mutation.
TypedMutationOutcome crossOverTypedGraphText(std::string_view a, std::string_view b, uint64_t seed,
                                             size_t maxSize, const TypedMutatorOptions &opts = {});

} // namespace graphvet::fuzz
