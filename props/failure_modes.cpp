// The feature -> failure mode and rule tag -> failure mode tables (see
// failure_modes.h). A feature is listed under a mode when graphs with it are
// where passes of that mode's bug reports went wrong; a feature may exercise
// several modes and most structural ones exercise none. Features not listed
// (e.g. ones added later) map to no mode, which the report shows as
// uncovered rather than guessing.
#include "props/failure_modes.h"

namespace graphvet::props {

std::string_view failureModeKey(FailureMode m) {
  switch (m) {
  case FailureMode::EffectBlindness:
    return "effect-blindness";
  case FailureMode::ValueSetBlindness:
    return "value-set-blindness";
  case FailureMode::MultiConsumerBlindness:
    return "multi-consumer-blindness";
  case FailureMode::AxisBookkeeping:
    return "axis-bookkeeping";
  case FailureMode::ScopeViolation:
    return "scope-violation";
  case FailureMode::ModeAttributeBlindness:
    return "mode-attribute-blindness";
  case FailureMode::WrongDtypeConstant:
    return "wrong-dtype-constant";
  case FailureMode::AliasingMemory:
    return "aliasing-memory";
  case FailureMode::NumericsChanging:
    return "numerics-changing";
  case FailureMode::FixpointIdempotence:
    return "fixpoint-idempotence";
  }
  return "unknown";
}

std::string_view failureModeTitle(FailureMode m) {
  switch (m) {
  case FailureMode::EffectBlindness:
    return "effect blindness";
  case FailureMode::ValueSetBlindness:
    return "value-set blindness";
  case FailureMode::MultiConsumerBlindness:
    return "multi-consumer blindness";
  case FailureMode::AxisBookkeeping:
    return "axis bookkeeping";
  case FailureMode::ScopeViolation:
    return "scope violations";
  case FailureMode::ModeAttributeBlindness:
    return "mode/attribute blindness";
  case FailureMode::WrongDtypeConstant:
    return "constants in the wrong dtype";
  case FailureMode::AliasingMemory:
    return "aliasing and memory";
  case FailureMode::NumericsChanging:
    return "numerics-changing equivalences";
  case FailureMode::FixpointIdempotence:
    return "fixpoint/idempotence";
  }
  return "unknown";
}

namespace {

FailureModeSet modes(std::initializer_list<FailureMode> ms) {
  FailureModeSet s{};
  for (FailureMode m : ms)
    s[static_cast<size_t>(m)] = true;
  return s;
}

using FM = FailureMode;

} // namespace

FailureModeSet failureModesOfFeature(Feature f) {
  switch (f) {
  // Effects: writers, in-place scribblers, random ops next to their twins.
  case Feature::RefWriter:
  case Feature::InputMutable:
  case Feature::InputMutableAttr:
  case Feature::InputMutableOnHolder:
  case Feature::TwoRefOutputs:
  case Feature::RefWriteUserInput:
  case Feature::RefWriteVariable:
  case Feature::RefWriteSubgraphData:
  case Feature::CallWritesCopiedVariable:
  case Feature::RandomOnConstant:
    return modes({FM::EffectBlindness});
  case Feature::TensorMoveToWriter:
    return modes({FM::EffectBlindness, FM::AliasingMemory});
  case Feature::RandomTwins:
  case Feature::RandomTwoReaders:
    return modes({FM::EffectBlindness, FM::MultiConsumerBlindness});
  // Value sets and dtypes.
  case Feature::TensorDescScalar:
  case Feature::TensorDescEmpty:
    return modes({FM::ValueSetBlindness});
  case Feature::TensorDescOtherDtype:
    return modes({FM::ValueSetBlindness, FM::WrongDtypeConstant});
  case Feature::MotifChannelScaleZeroNegative:
    return modes({FM::ValueSetBlindness, FM::NumericsChanging});
  case Feature::LegalizeClipF16:
    return modes({FM::ValueSetBlindness, FM::WrongDtypeConstant});
  case Feature::TensorMoveDescMismatch:
    return modes({FM::WrongDtypeConstant, FM::AliasingMemory});
  // Several consumers of one value.
  case Feature::MultiConsumer:
  case Feature::SameValueTwice:
  case Feature::HolderSameValueTwice:
  case Feature::GraphOutputSameValueTwice:
  case Feature::ResultSameValueTwice:
    return modes({FM::MultiConsumerBlindness});
  case Feature::TensorMoveSibling:
  case Feature::ContinuousSameValue:
    return modes({FM::MultiConsumerBlindness, FM::AliasingMemory});
  case Feature::MotifParallelDense:
  case Feature::MotifParallelDenseSharedIntermediate:
    return modes({FM::MultiConsumerBlindness, FM::NumericsChanging});
  // Axes, shapes and layouts.
  case Feature::Reshape:
    return modes({FM::AxisBookkeeping, FM::AliasingMemory});
  case Feature::MotifLayoutChain:
    return modes({FM::AxisBookkeeping, FM::FixpointIdempotence});
  case Feature::NormLayerNegativeAxis:
  case Feature::LegalizeConvUnaligned:
    return modes({FM::AxisBookkeeping});
  case Feature::MotifChannelScaleForward:
  case Feature::MotifChannelScaleBackward:
    return modes({FM::AxisBookkeeping, FM::NumericsChanging});
  // Scopes: subgraphs, branches, control edges.
  case Feature::If:
  case Feature::Case:
  case Feature::While:
  case Feature::PartitionedCall:
  case Feature::NestedCall:
  case Feature::CallInControlFlow:
  case Feature::ControlFlowInSubgraph:
  case Feature::NestingDepth3:
  case Feature::CtrlEdge:
  case Feature::CtrlIntoCall:
  case Feature::CtrlOutOfCall:
  case Feature::CtrlIntoControlFlow:
  case Feature::CtrlOutOfControlFlow:
  case Feature::CtrlInSubgraph:
  case Feature::VariableInSubgraph:
  case Feature::WeightInSubgraph:
  case Feature::BranchConditionInBranch:
    return modes({FM::ScopeViolation});
  case Feature::TensorMoveInSubgraph:
  case Feature::TensorMoveResultWrittenOutside:
    return modes({FM::ScopeViolation, FM::AliasingMemory});
  // Modes and attributes.
  case Feature::DropoutTraining:
  case Feature::DropoutInference:
  case Feature::CannotBeDeleted:
  case Feature::NoNeedConstantFolding:
  case Feature::ReservedFalse:
  case Feature::ReservedNonBool:
  case Feature::ReservedOnOther:
  case Feature::UnknownAttribute:
  case Feature::OptionMalformed:
  case Feature::OptionNonMatching:
  case Feature::OptionUnknownKey:
  case Feature::OptionEmptyValue:
  case Feature::InputMutableFalse:
  case Feature::ReuseInputFalse:
  case Feature::ContinuousFalse:
  case Feature::WhileMaxIterations:
  case Feature::WhileMaxIterationsZero:
  case Feature::LegalizeGemm:
    return modes({FM::ModeAttributeBlindness});
  case Feature::LegalizeHardSwish:
    return modes({FM::ModeAttributeBlindness, FM::NumericsChanging});
  // Constants the passes synthesize: folded batch norms and normalizations.
  case Feature::MotifConvBatchNorm:
  case Feature::MotifConvBatchNormRelu:
    return modes({FM::WrongDtypeConstant, FM::NumericsChanging});
  case Feature::NormInstance:
  case Feature::NormLayer:
    return modes({FM::NumericsChanging});
  // Aliasing and memory.
  case Feature::TensorMove:
  case Feature::TensorMoveFromUserInput:
  case Feature::TensorMoveFromVariable:
  case Feature::TensorMoveFromWeight:
  case Feature::TensorMoveFromRefVarSrc:
  case Feature::TensorMoveFromSubgraphData:
  case Feature::TensorMoveToReader:
  case Feature::TensorMoveToNetOutput:
  case Feature::TensorMoveToHolder:
  case Feature::TensorMoveCtrlEdge:
  case Feature::ReuseInputView:
  case Feature::MultiAliasRefOp:
  case Feature::RefVarSrcNode:
  case Feature::RefVarSrcOutput:
  case Feature::TensorMoveOfBoundCopy:
  case Feature::BoundCopyOfItsVariable:
  case Feature::WrittenCopyOfUnconnected:
  case Feature::Identity:
  case Feature::MemcpyAsync:
  case Feature::ContinuousInput:
  case Feature::NoPaddingContinuous:
  case Feature::ContinuousFromUserInput:
  case Feature::ContinuousFromVariable:
  case Feature::ContinuousFromWeight:
  case Feature::ContinuousFromGraphOutput:
  case Feature::GraphOutputUserInput:
  case Feature::GraphOutputVariable:
  case Feature::GraphOutputWeight:
  case Feature::OptionOutputReuse:
  case Feature::OptionInputReuse:
  case Feature::RefAndReuse:
    return modes({FM::AliasingMemory});
  // A chain of copies: deleting one enables deleting the next.
  case Feature::TensorMoveChain:
    return modes({FM::AliasingMemory, FM::FixpointIdempotence});
  // Cast chains: which round trips keep every value, and what a collapsed
  // chain's one Cast computes on NaN, -0, inf, 2^24 + 1 and the extremes.
  case Feature::CastRoundTripExact:
    return modes({FM::ValueSetBlindness, FM::WrongDtypeConstant});
  case Feature::CastRoundTripLossy:
  case Feature::CastChainOther:
    return modes({FM::ValueSetBlindness, FM::NumericsChanging});
  case Feature::CastChainOfSpecials:
    return modes({FM::ValueSetBlindness});
  case Feature::CastChainThree: // collapsing one pair makes the next
    return modes({FM::ValueSetBlindness, FM::FixpointIdempotence});
  // Transpose pairs: the composition's order, `perm` absent means reverse.
  case Feature::TransposePairCancel:
    return modes({FM::AxisBookkeeping, FM::FixpointIdempotence});
  case Feature::TransposePairCompose:
    return modes({FM::AxisBookkeeping});
  case Feature::TransposeAbsentPerm:
    return modes({FM::AxisBookkeeping, FM::ModeAttributeBlindness});
  // Reshape / Squeeze chains: 0 copies, -1, negative axes, allowzero.
  case Feature::ReshapeChain:
  case Feature::SqueezeNegativeAxes:
    return modes({FM::AxisBookkeeping});
  case Feature::ReshapeAllowZeroEmpty:
    return modes({FM::ModeAttributeBlindness, FM::AxisBookkeeping, FM::ValueSetBlindness});
  // Whole f16 / bf16 chains: constants synthesized in f32, f32 rounding
  // assumed, the narrow ranges overflowed.
  case Feature::HalfChain:
  case Feature::BFloat16Chain:
    return modes({FM::ValueSetBlindness, FM::WrongDtypeConstant, FM::NumericsChanging});
  // One rewrite frees another that was refused (a second reader went):
  // a pass that does not look again stops short of its fixpoint.
  case Feature::ReshapeSharedInner:
    return modes({FM::MultiConsumerBlindness, FM::FixpointIdempotence, FM::AxisBookkeeping});
  // Numeric ops around an in-place write: equal-looking reads differ in
  // time, and the order a read keeps may live on a duplicate.
  case Feature::InplaceWriteVariable:
  case Feature::InplaceWriteInput:
  case Feature::InplaceEqualReadsAroundWrite:
    return modes({FM::EffectBlindness, FM::AliasingMemory});
  case Feature::InplaceOrderThroughDuplicate:
    return modes({FM::EffectBlindness});
  // Equal subexpressions in two scopes: neither may use the other's value.
  case Feature::IfEqualBranches:
  case Feature::IfBranchEqualToOuter:
    return modes({FM::ScopeViolation});
  default:
    return {};
  }
}

FailureModeSet failureModesOfRule(std::string_view tag) {
  // Keywords of the tags the passes use (docs/passes/*.md), most specific
  // first; a tag may match several rows.
  struct Row {
    std::string_view keyword;
    FailureModeSet modes;
  };
  static const Row kRows[] = {
      {"effect", modes({FM::EffectBlindness})},
      {"random", modes({FM::EffectBlindness})},
      {"ref-write", modes({FM::EffectBlindness, FM::AliasingMemory})},
      {"written", modes({FM::EffectBlindness, FM::AliasingMemory})},
      {"writes", modes({FM::EffectBlindness, FM::AliasingMemory})},
      {"negative-scale", modes({FM::ValueSetBlindness})},
      {"range", modes({FM::ValueSetBlindness})},
      {"cast", modes({FM::ValueSetBlindness, FM::WrongDtypeConstant})},
      {"type-changed", modes({FM::WrongDtypeConstant})},
      {"dtype", modes({FM::WrongDtypeConstant})},
      {"consumers", modes({FM::MultiConsumerBlindness})},
      {"fan-out", modes({FM::MultiConsumerBlindness})},
      {"sibling", modes({FM::MultiConsumerBlindness})},
      {"shared", modes({FM::MultiConsumerBlindness})},
      {"other-output-used", modes({FM::MultiConsumerBlindness})},
      {"multi-output", modes({FM::MultiConsumerBlindness})},
      {"anchor-consumer", modes({FM::MultiConsumerBlindness})},
      {"layout", modes({FM::AxisBookkeeping})},
      {"axis", modes({FM::AxisBookkeeping})},
      {"perm", modes({FM::AxisBookkeeping})},
      {"transpose", modes({FM::AxisBookkeeping})},
      {"shape", modes({FM::AxisBookkeeping})},
      {"squeeze", modes({FM::AxisBookkeeping})},
      {"flatten", modes({FM::AxisBookkeeping})},
      {"expand", modes({FM::AxisBookkeeping})},
      {"control-flow", modes({FM::ScopeViolation})},
      {"subgraph", modes({FM::ScopeViolation})},
      {"ctrl-edge", modes({FM::ScopeViolation})},
      {"loop", modes({FM::ScopeViolation})},
      {"on-path", modes({FM::ScopeViolation})},
      {"convex", modes({FM::ScopeViolation})},
      {"branch", modes({FM::ScopeViolation})},
      {"dropout", modes({FM::ModeAttributeBlindness})},
      {"training", modes({FM::ModeAttributeBlindness})},
      {"reserved", modes({FM::ModeAttributeBlindness})},
      {"attrs", modes({FM::ModeAttributeBlindness})},
      {"allowzero", modes({FM::ModeAttributeBlindness})},
      {"folded", modes({FM::WrongDtypeConstant})},
      {"scenario", modes({FM::AliasingMemory})},
      {"ext-", modes({FM::AliasingMemory})},
      {"rule1", modes({FM::AliasingMemory})},
      {"rule2", modes({FM::AliasingMemory})},
      {"rule3", modes({FM::AliasingMemory})},
      {"rule4", modes({FM::AliasingMemory})},
      {"rule5", modes({FM::AliasingMemory})},
      {"alias", modes({FM::AliasingMemory})},
      {"fresh-buffer", modes({FM::AliasingMemory})},
      {"tensor-move", modes({FM::AliasingMemory})},
      {"variable", modes({FM::AliasingMemory})},
      {"fused", modes({FM::NumericsChanging})},
      {"combined", modes({FM::NumericsChanging})},
      {"stats", modes({FM::NumericsChanging})},
      {"bias", modes({FM::NumericsChanging})},
      {"follow-on", modes({FM::FixpointIdempotence})},
      {"fixpoint", modes({FM::FixpointIdempotence})},
  };
  FailureModeSet out{};
  for (const Row &r : kRows)
    if (tag.find(r.keyword) != std::string_view::npos)
      for (size_t i = 0; i < kNumFailureModes; ++i)
        out[i] = out[i] || r.modes[i];
  return out;
}

FailureModeSet failureModesOfCase(const CaseModeInputs &in) {
  FailureModeSet out{};
  auto add = [&](const FailureModeSet &s) {
    for (size_t i = 0; i < kNumFailureModes; ++i)
      out[i] = out[i] || s[i];
  };
  if (in.features)
    for (size_t f = 0; f < kNumFeatures; ++f)
      if ((*in.features)[f])
        add(failureModesOfFeature(static_cast<Feature>(f)));
  if (in.ruleTags)
    for (std::string_view tag : *in.ruleTags)
      add(failureModesOfRule(tag));
  if (in.iterations > 2 || !in.reachedFixpoint)
    out[static_cast<size_t>(FailureMode::FixpointIdempotence)] = true;
  return out;
}

} // namespace graphvet::props
