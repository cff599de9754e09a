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
};
inline constexpr size_t kNumFeatures = static_cast<size_t>(Feature::WrittenCopyOfUnconnected) + 1;

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
