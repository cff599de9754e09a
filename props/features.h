// Feature coverage: which of the graph features the generators promise does a
// module actually contain? Read off the built Module (not the recipe), so the
// coverage property checks what the pass and the oracle really see.
#pragma once

#include "ir/graph.h"

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace graphvet::props {

enum class Feature : uint8_t {
  RootDataIndexed,   ///< root Data family node with `index`
  RootDataUnindexed, ///< root Data without index (caller memory)
  Variable,          ///< Variable / VariableV2
  RefData,           ///< RefData
  Weight,            ///< Const / Constant / ConstPlaceHolder
  FileConstant,      ///< FileConstant
  RefVarSrcNode,     ///< node-level ref_var_src_var_name
  RefVarSrcOutput,   ///< outK.ref_var_src_var_name
  PartitionedCall,   ///< PartitionedCall / StatefulPartitionedCall
  NestedCall,        ///< a call inside a call inside a call's subgraph (2 deep)
  If,
  Case,
  While,
  Reshape,         ///< built-in view
  ReuseInputView,  ///< outK.reuse_input view
  MultiAliasRefOp, ///< two connected outputs aliasing the same input
  RefWriter,       ///< a ref output (Assign family or outK.ref_input)
  InputMutable,    ///< a node scribbling on its inputs
  MultiConsumer,   ///< an output with two or more consumers
  TensorMove,
  TensorMoveChain,    ///< TensorMove fed by a TensorMove
  TensorMoveSibling,  ///< TensorMove whose input has other consumers
  TensorMoveCtrlEdge, ///< TensorMove with a control edge in or out
  TensorMoveFromUserInput,
  TensorMoveFromVariable,
  TensorMoveFromWeight,
  TensorMoveFromRefVarSrc,
  TensorMoveFromSubgraphData,
  TensorMoveInSubgraph,
  TensorMoveToWriter, ///< a consumer writes the TensorMove's output in place
  TensorMoveToReader, ///< a consumer only reads it
  TensorMoveToNetOutput,
  TensorMoveToHolder, ///< a consumer holds subgraphs
  NetOutputRoot,
  NetOutputSubgraph,
  OptionValid, ///< a memory-reuse option that follows the grammar
  OptionMalformed,
  OptionMatching,    ///< well-formed, every index names an existing port
  OptionNonMatching, ///< well-formed, some index names nothing
  CannotBeDeleted,   ///< `_cannot_be_deleted` attribute
  NoNeedConstantFolding,
  ContinuousInput,        ///< continuous_input / _no_padding_continuous_input
  CtrlEdge,               ///< any control edge
  UnconnectedInput,       ///< an input slot left `_`
  TensorDesc,             ///< an outK.dtype / outK.shape tensor description
  TensorMoveDescMismatch, ///< a TensorMove whose output size differs from its input's
  /// A TensorMove of a variable feeding a call whose body writes that
  /// variable by name (a ref writer of a ref_var_src_var_name output).
  CallWritesCopiedVariable,
  /// In a call body, a TensorMove with a sibling, returned by the body, whose
  /// call output is written in place by a consumer outside.
  TensorMoveResultWrittenOutside,
  /// A written TensorMove of a view of an unconnected slot (`_`), or of a
  /// call body's Data whose slot in the call is unconnected.
  WrittenCopyOfUnconnected,

  // The rows of docs/ir-coverage.md beyond the ones above: every degree of
  // freedom the format and semantics.md allow. Names in featureName().
  // Sources.
  RootDataAippAnn,       ///< AippData / AnnData in the root
  RootDataIndexGap,      ///< root user indexes are not 0..n-1 (one left out)
  RootDataParentIndex,   ///< a root Data carrying `_parent_node_index` (ignored)
  SourceSecondOutput,    ///< a Data/Variable/Const family node with output 1 used
  SourceCtrlIn,          ///< a control edge into a source node
  VariableInSubgraph,    ///< a Variable family node in a subgraph
  VariableDeclaredTwice, ///< one variable name declared by nodes in two graphs
  QuotedName,            ///< a node name that must be quoted
  WeightInSubgraph,      ///< a Const family node in a subgraph
  // ref_var_src_var_name: where and how.
  RefVarSrcOutputK,       ///< `outK.ref_var_src_var_name` with K >= 1
  RefVarSrcNodeMulti,     ///< node-level name on a node with several outputs
  RefVarSrcBothLevels,    ///< node level and `outK.` on one node, different names
  RefVarSrcIdent,         ///< the name written as an identifier
  RefVarSrcAncestor,      ///< naming a variable declared in an enclosing graph only
  RefVarSrcOtherGraph,    ///< naming a variable declared only in unrelated graphs
  RefVarSrcUndeclared,    ///< naming a variable no node declares
  RefVarSrcOnTensorMove,  ///< a TensorMove's output bound to a variable
  RefVarSrcOnIdentity,    ///< an Identity / MemcpyAsync output bound to a variable
  RefVarSrcOnRefWriter,   ///< a ref output bound to a variable
  RefVarSrcOnView,        ///< a view output bound to a variable
  RefVarSrcOnCall,        ///< a PartitionedCall family output bound to a variable
  RefVarSrcOnControlFlow, ///< an If/Case/While output bound to a variable
  RefVarSrcOnSource,      ///< the attribute on a Data/Variable/Const node (ignored)
  RefVarSrcOnNetOutput,   ///< the attribute on a NetOutput
  TensorMoveOfBoundCopy,  ///< a TensorMove of a copy whose output is bound to a variable
  BoundCopyOfItsVariable, ///< a copy bound to the very variable it copies
  // Copies.
  Identity,
  MemcpyAsync,
  CopySecondOutput,   ///< a copy with `outputs = 2`
  CopyNoOutput,       ///< a copy with `outputs = 0`
  CopyOddInputs,      ///< Identity / MemcpyAsync without exactly one connected input
  InputMutableOnCopy, ///< `_input_mutable = true` on a copy
  ContinuousOnCopy,   ///< a layout attribute on a copy
  // Reserved attributes.
  ReservedFalse,   ///< `_cannot_be_deleted` / `no_need_constant_folding` = false
  ReservedNonBool, ///< ... with a value that is not a boolean
  ReservedOnOther, ///< ... on a node that is not a copy
  // Ref outputs.
  RefInputSlotK,        ///< a ref output writing input i >= 1
  RefInputOutputK,      ///< a ref output K >= 1
  RefInputOverride,     ///< `outK.ref_input` overriding an op's built-in ref slot
  TwoRefOutputs,        ///< two ref outputs writing different inputs
  RefInputUnconnected,  ///< a ref output whose written slot is `_`
  RefAndReuse,          ///< `ref_input` and `reuse_input` on one output
  RefWriteUserInput,    ///< a ref writer of a root user input (Data)
  RefWriteVariable,     ///< a ref writer of a variable (Variable node or bound output)
  RefWriteSubgraphData, ///< a ref writer of a subgraph Data (the parent's buffer)
  // Views.
  ReuseInputIndexK,  ///< a view of input i >= 1
  ReuseInputFalse,   ///< `outK.reuse_input = false`
  ViewOutputK,       ///< a view output K >= 1
  ViewOfUnconnected, ///< a view of a `_` slot
  ReuseIndexAlone,   ///< `reuse_input_index` without `reuse_input`
  // Scope writers.
  InputMutableAttr,     ///< `_input_mutable = true` on an op without the built-in
  InputMutableFalse,    ///< `_input_mutable = false`
  InputMutableOnHolder, ///< `_input_mutable = true` on a node holding subgraphs
  // Layout.
  NoPaddingContinuous,       ///< `_no_padding_continuous_input = true`
  ContinuousFalse,           ///< a layout attribute set to false
  ContinuousBoth,            ///< both layout attributes on one node
  ContinuousFromUserInput,   ///< a continuous op reading a root user input
  ContinuousFromVariable,    ///< ... a variable
  ContinuousFromWeight,      ///< ... a weight
  ContinuousFromGraphOutput, ///< ... a value that is also a graph output
  ContinuousSameValue,       ///< ... one value in every slot
  ContinuousUnconnected,     ///< ... with a `_` slot
  ContinuousOnHolder,        ///< a layout attribute on a node holding subgraphs
  // Nodes holding subgraphs.
  HolderVariantType,         ///< StatefulPartitionedCall, StatelessIf, _If, StatelessCase, ...
  CallInControlFlow,         ///< a call inside an If/Case/While subgraph
  ControlFlowInSubgraph,     ///< an If/Case/While inside any subgraph
  NestingDepth3,             ///< a graph three levels below the root
  CallNoInputs,              ///< a call without inputs
  HolderSameValueTwice,      ///< one value in two input slots of a holder
  AliasAttrOnHolder,         ///< `outK.ref_input` / `outK.reuse_input` on a holder
  SubgraphDataPermuted,      ///< subgraph Data nodes not in parent-index order
  SubgraphInputUnused,       ///< a holder input no Data of some subgraph reads
  SubgraphDataOfUnconnected, ///< a subgraph Data whose parent slot is `_`
  SubgraphDataIndexAttr,     ///< a subgraph Data carrying `index` (ignored)
  BranchConditionInBranch,   ///< an If/Case branch reading the condition (parent index 0)
  ResultsPermuted,           ///< `in<k>._parent_node_index != k`
  ResultUnmapped,            ///< a subgraph NetOutput input handed back to nobody
  HolderOutputUnproduced,    ///< a holder output no subgraph produces
  ResultUnconnected,         ///< a `_` subgraph result carrying a parent index
  SubgraphWithoutNetOutput,  ///< a subgraph without NetOutput
  ResultSameValueTwice,      ///< one value handed back as two holder outputs
  NetOutputWithOutputs,      ///< a NetOutput with `outputs >= 1`
  ConditionUnconnected,      ///< an If/Case whose condition is `_`
  CaseSingleBranch,
  CaseThreeBranches,
  CaseFourBranches,       ///< four or more
  WhileMaxIterations,     ///< `max_iterations` given
  WhileMaxIterationsZero, ///< `max_iterations = 0`: the body never runs
  WhileVarNotWrittenBack, ///< a loop variable no body result is handed back to
  // Control edges.
  CtrlIntoCall,
  CtrlOutOfCall,
  CtrlIntoControlFlow,
  CtrlOutOfControlFlow,
  CtrlInSubgraph,
  CtrlIntoNetOutput,
  CtrlFromNetOutput,
  CtrlParallelToData, ///< a control edge next to a data edge between the same nodes
  // Inputs and outputs.
  RootWithoutNetOutput,      ///< a root graph without NetOutput (no graph outputs)
  GraphOutputUnconnected,    ///< a `_` root NetOutput input
  GraphOutputSameValueTwice, ///< one value as two graph outputs
  GraphOutputUserInput,      ///< a root Data with index as a graph output
  GraphOutputVariable,       ///< a variable (node or bound output) as a graph output
  GraphOutputWeight,         ///< a weight as a graph output
  SameValueTwice,            ///< one value in two input slots of an ordinary op
  ZeroInputOp,               ///< an ordinary op without inputs
  MultiOutputOp,             ///< an ordinary op with `outputs >= 2`
  ZeroOutputOp,              ///< an ordinary op with `outputs = 0`
  // Tensor descriptions.
  TensorDescScalar,     ///< `shape = []`
  TensorDescEmpty,      ///< a zero dimension: zero bytes
  TensorDescOutputK,    ///< a description on output K >= 1
  TensorDescOtherDtype, ///< a dtype other than f32, f16, i32
  // Options.
  OptionOutputReuse, ///< ge.exec.outputReuseInputMemIndexes present
  OptionInputReuse,  ///< ge.exec.inputReuseMemIndexes present
  OptionSpaced,      ///< spaces around the tokens of a reuse option
  OptionUnknownKey,  ///< an option no pass reads
  OptionEmptyValue,  ///< a reuse option with an empty value (malformed)
  // Everything else.
  UnknownAttribute, ///< an attribute without a memory meaning (node or port level)

  // Numeric patterns (motif_features.h), made by the typed generator's
  // motifs; isTypedFeature() is true from here on.
  MotifConvBatchNorm,                   ///< Conv -> BatchNormalization
  MotifConvBatchNormRelu,               ///< Conv -> BatchNormalization -> Relu
  MotifChannelScaleForward,             ///< Mul(x, const) [-> Add/act/MaxPool] -> Conv/Gemm/MatMul
  MotifChannelScaleBackward,            ///< Conv/Gemm/MatMul -> Mul(y, const)
  MotifChannelScaleZeroNegative,        ///< such a scale holding a 0 and a negative entry
  MotifParallelDense,                   ///< 2+ MatMul/Gemm with constant weights on one input
  MotifParallelDenseSharedIntermediate, ///< ... one of them read twice (or an output too)
  MotifLayoutChain,                     ///< layout-sensitive op -> axis-carrying ops -> Conv
  LegalizeGemm,                         ///< a Gemm
  LegalizeHardSwish,                    ///< a HardSwish
  LegalizeClipF16,                      ///< a Clip with an f16 constant bound
  LegalizeConvUnaligned,                ///< a Conv whose C or M is not a multiple of 4
  NormInstance,                         ///< InstanceNormalization
  NormLayer,                            ///< LayerNormalization
  NormLayerNegativeAxis,                ///< LayerNormalization with a negative axis
  RandomTwins,                          ///< two random ops of one type, attributes and input
  RandomOnConstant,                     ///< a random op whose inputs are all constants
  RandomTwoReaders,                     ///< a random op read by two element-wise ops
  DropoutTraining,                      ///< Dropout with a constant training_mode true
  DropoutInference,                     ///< Dropout without training_mode, or a constant false
  // Chains (typed_ops_motifs_chains.cpp), detected with inferred dtypes.
  CastRoundTripExact,    ///< Cast(Cast(x, B), A), A = x's dtype, B holds every value of A
  CastRoundTripLossy,    ///< ... B does not hold every value of A
  CastChainOther,        ///< Cast(Cast(x, B), C), C neither x's dtype nor B
  CastChainThree,        ///< three Casts in a row
  CastChainOfSpecials,   ///< a two-Cast chain on a Const holding NaN, inf, -0 or an extreme
  TransposePairCancel,   ///< Transpose(Transpose(x, p), q) with the composition the identity
  TransposePairCompose,  ///< ... any other composition
  TransposeAbsentPerm,   ///< such a pair with a Transpose without `perm` (the reversal)
  ReshapeChain,          ///< Reshape of a Reshape
  SqueezeNegativeAxes,   ///< Squeeze / Unsqueeze with a negative axis
  ReshapeAllowZeroEmpty, ///< see motif_features.cpp (allowzero = 1 on an empty x, then a copy)
  HalfChain,             ///< an f16 element-wise op into an f16 MatMul/Gemm/reduction/Softmax
  BFloat16Chain,         ///< ... bf16
  // A shared reshape, in-place writes and If scopes (typed_ops_motifs_state.cpp).
  ReshapeSharedInner,           ///< a reshaping op read by a Reshape and by another reshaping op
  InplaceWriteVariable,         ///< an Assign-family write (value input) of a Variable
  InplaceWriteInput,            ///< ... of a graph input
  InplaceEqualReadsAroundWrite, ///< equal reads of a written buffer, one before, one after the
                                ///< write
  InplaceOrderThroughDuplicate, ///< a node after a writer by a control edge whose equal twin is not
  IfEqualBranches,              ///< both If branches apply one op to the same parent input
  IfBranchEqualToOuter, ///< a branch applies an op that the If's graph applies to that input
};
inline constexpr size_t kNumFeatures = static_cast<size_t>(Feature::IfBranchEqualToOuter) + 1;

std::string_view featureName(Feature f);

/// One flag per feature: does the module contain it?
using FeatureSet = std::array<bool, kNumFeatures>;
FeatureSet featuresOf(const Module &m);

/// Number of modules containing each feature.
struct FeatureCounts {
  std::array<uint64_t, kNumFeatures> counts{};
  uint64_t modules = 0;
  void add(const FeatureSet &s);
  /// Features no module had.
  std::vector<Feature> missing() const;
};

/// Result of reading one memory-reuse option value (semantics.md §4 grammar).
struct ParsedReuseOption {
  bool wellFormed = false;
  /// The indexes in order (pairs flattened for outputReuse).
  std::vector<int64_t> indexes;
};
/// `pairs` selects the "j,k|j2,k2" grammar, else "k,k2".
ParsedReuseOption parseReuseOption(std::string_view text, bool pairs);

} // namespace graphvet::props
