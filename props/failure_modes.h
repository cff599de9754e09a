// The ten ways mid-end passes break (issue 29, from bug reports in TVM, ONNX
// Runtime, onnxoptimizer, XLA and PyTorch), and the one table that says which
// coverage feature and which pass rule tag exercises which of them. The
// campaign counts, over its feature-sampled cases, how many touched each
// mode (CampaignStats::failureModeCases); the report draws it as bars.
#pragma once

#include "props/features.h"

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace graphvet::props {

enum class FailureMode : uint8_t {
  EffectBlindness,        ///< a rewrite drops, duplicates or reorders a side effect
  ValueSetBlindness,      ///< dtypes, NaN, -0, 2^24, f16 range
  MultiConsumerBlindness, ///< a rewrite of a value other consumers still read
  AxisBookkeeping,        ///< negative axes, keepdims, perm order, rank, broadcast
  ScopeViolation,         ///< across branches and subgraphs, non-convex groups
  ModeAttributeBlindness, ///< training flags, absent attributes, reserved attributes
  WrongDtypeConstant,     ///< synthesized constants in the wrong dtype
  AliasingMemory,         ///< aliasing, in-place writes, copies that protected them
  NumericsChanging,       ///< "equivalences" that change the numbers
  FixpointIdempotence,    ///< a pass enabling another, a second run changing more
};
inline constexpr size_t kNumFailureModes =
    static_cast<size_t>(FailureMode::FixpointIdempotence) + 1;

/// Short stable key, e.g. "effect-blindness" (JSON keys, HTML ids).
std::string_view failureModeKey(FailureMode m);
/// Human title, e.g. "effect blindness".
std::string_view failureModeTitle(FailureMode m);

using FailureModeSet = std::array<bool, kNumFailureModes>;

/// The modes a graph feature exercises (none for most structural features).
FailureModeSet failureModesOfFeature(Feature f);

/// The modes a pass rule tag exercises, by keyword of the tag (the tags are
/// free-form per pass: "effect-ref-write", "rule3-fan-out", "cast-pair:refused").
FailureModeSet failureModesOfRule(std::string_view ruleTag);

/// The modes one case touched: the modes of its features, of the rule tags
/// its pipeline remarked, and fixpoint/idempotence when the pipeline needed a
/// further round after the first that changed something (iterations > 2) or
/// stopped before its fixpoint.
struct CaseModeInputs {
  const FeatureSet *features = nullptr;
  const std::vector<std::string_view> *ruleTags = nullptr;
  unsigned iterations = 0;
  bool reachedFixpoint = true;
};
FailureModeSet failureModesOfCase(const CaseModeInputs &in);

} // namespace graphvet::props
