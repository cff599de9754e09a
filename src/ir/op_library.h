// The op library: each op type's memory behaviour (semantics.md §1) in one
// table, plus the attribute-driven behaviour every op can be given (ref
// outputs, views, input scribbles, variable-backed outputs, layout demands).
// Passes and the oracle both read memory behaviour from here and only here;
// to add an op, add one row to kOps in op_library.cpp.
#pragma once

#include "ir/graph.h"
#include "ir/op_def.h"

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace graphvet {

enum class OpKind : uint8_t {
  Ordinary,   ///< computes fresh outputs from its inputs (the default)
  DataSource, ///< Data family: user input in the root, parent input in a subgraph
  Variable,   ///< Variable family: persistent buffer keyed by node name
  Weight,     ///< Const family: immutable buffer
  Copy,       ///< TensorMove family: copies input 0 into a fresh buffer
  NetOutput,  ///< graph outputs (root) or subgraph results
  Call,       ///< PartitionedCall family: transparent subgraph
  If,         ///< two branches, then/else, chosen by input 0
  Case,       ///< N branches chosen by input 0
  While,      ///< cond + body, loop-carried in place
};

/// Output-to-input aliasing built into an op type.
struct PortAlias {
  uint32_t output;
  uint32_t input;
};

struct OpInfo {
  std::string_view type;
  OpKind kind;
  /// Default output count; kOutputsPerInput means "one per data input".
  uint32_t defaultOutputs;
  std::span<const PortAlias> refOutputs;  ///< outputs written in place into an input
  std::span<const PortAlias> viewOutputs; ///< outputs sharing an input's buffer, no write
  bool inputMutable;                      ///< scribbles on every input (scope write)
  std::string_view summary;
  /// Numeric ops (tensor-semantics.md): output types from input types and
  /// attributes, and the reference kernel. Both null for ops without numeric
  /// semantics, which keep semantics.md §2's placeholder arithmetic.
  InferFn infer = nullptr;
  KernelFn kernel = nullptr;
  /// Draws from the run's random stream (tensor-semantics.md §6).
  bool nondeterministic = false;
  /// Bit i set: input i is a shape operand (Reshape's shape, Slice's starts,
  /// Expand's shape...): the output type depends on its value, so it must be
  /// a constant in a statically shaped graph. The importer freezes graph
  /// inputs that feed such slots when asked to (TVM's freeze_params).
  uint64_t shapeOperands = 0;
  /// Ops that also have a GE form with version-1 placeholder meaning (the
  /// Assign family with other than two inputs, GE's one-input Reshape):
  /// when set, the numeric definition applies only to the nodes it accepts;
  /// the others keep semantics.md §2's placeholder meaning. Null: every node
  /// of the type is numeric and checked.
  bool (*numericForm)(const Node &) = nullptr;
};

inline constexpr uint32_t kOutputsPerInput = UINT32_MAX;

/// TVM's fusion pattern kind of an op (docs/passes/fuse-ops.md), ordered:
/// a larger kind is harder to fuse. ElemWise maps each output element to the
/// same-index input element; Broadcast to an element of a broadcast input;
/// Injective is any one-to-one index map (Reshape, Transpose, Concat...);
/// CommReduce a commutative reduction; OutEWiseFusable an op (Conv, MatMul)
/// whose output element-wise consumers can be fused into it; Tuple groups
/// values; Opaque is never fused (effects, randomness, control flow,
/// boundaries and every op not classified).
enum class OpPattern : uint8_t {
  ElemWise = 0,
  Broadcast = 1,
  Injective = 2,
  CommReduce = 3,
  OutEWiseFusable = 4,
  Tuple = 7,
  Opaque = 8,
};

/// The row for `type`; unknown types get the Ordinary row (one output).
const OpInfo &lookupOp(std::string_view type);
/// Every row of the tables, memory rows first, then each numeric family in
/// order (for --help, documentation and the uniqueness test).
std::vector<const OpInfo *> allOps();
/// True when the op type has a numeric definition (infer and kernel).
bool isNumericOp(std::string_view type);
/// The op's row when its numeric definition applies to this node (infer and
/// kernel set, arity as OpInfo::numericArity demands); nullptr otherwise.
const OpInfo *numericDefinition(const Node &n);

OpKind opKind(const Node &n);
/// The pattern column of the op table: the fusion pattern kind of `type`
/// (Opaque for every type the column does not classify).
OpPattern opPattern(std::string_view type);
/// "ElemWise", "Broadcast", ... (for remarks and --help).
std::string_view opPatternName(OpPattern p);
/// Default output count of a node of this type with `numInputs` inputs.
uint32_t defaultOutputCount(std::string_view type, size_t numInputs);

bool isCopy(const Node &n);         ///< TensorMove, Identity, MemcpyAsync
bool isTensorMove(const Node &n);   ///< exactly TensorMove
bool isControlFlow(const Node &n);  ///< If, Case, While and their variants
bool holdsSubgraphs(const Node &n); ///< Call or control flow
bool isVariableSource(const Node &n);
bool isWeightSource(const Node &n);

/// Input whose buffer output `out` is written in place (`outK.ref_input`, or
/// the op's built-in ref output); nullopt when the output is not a ref. The
/// memory plan's precedence applies to this and viewInput: an output bound
/// to a variable (`ref_var_src_var_name`) and output 0 of a copy
/// (TensorMove, Identity, MemcpyAsync) are never refs or views.
std::optional<uint32_t> refInput(const Node &n, uint32_t out);
/// Input whose buffer output `out` views without writing
/// (`outK.reuse_input = true` with `outK.reuse_input_index`, default 0, or the
/// op's built-in view); nullopt when the output is not a view.
std::optional<uint32_t> viewInput(const Node &n, uint32_t out);
/// refInput or viewInput: the input whose buffer the output shares.
std::optional<uint32_t> aliasedInput(const Node &n, uint32_t out);
/// Inputs written in place by ref outputs (sorted, unique, in range).
std::vector<uint32_t> refWrittenInputs(const Node &n);
/// True when the node scribbles on every input (`_input_mutable = true` or built in).
bool isInputMutable(const Node &n);
/// The variable named by `outK.ref_var_src_var_name` (falling back to the
/// node-level `ref_var_src_var_name`); nullptr when neither is set.
const std::string *refVarSrcName(const Node &n, uint32_t out);
/// True when the node demands contiguous inputs (`continuous_input` or
/// `_no_padding_continuous_input`).
bool needsContinuousInput(const Node &n);
/// False when the node has none of the attributes the functions above from
/// refInput on read (no `out<k>.` port attribute, `_input_mutable`,
/// `ref_var_src_var_name`, `continuous_input` or
/// `_no_padding_continuous_input`): then the op's row alone gives its refs,
/// views and scribbles, and nothing is variable-bound or demands contiguous
/// inputs. One pass over the keys, for a caller that asks all of them about
/// every node.
bool hasMemoryBehaviourAttrs(const Node &n);

/// Byte size of an element of `dtype` (f32, f16, bf16, f64, i8, u8, i16, u16,
/// i32, u32, i64, u64, bool); nullopt for an unknown dtype.
std::optional<uint32_t> dtypeSize(std::string_view dtype);
/// Largest buffer the interpreter allocates for one output.
inline constexpr uint64_t kMaxBufferBytes = uint64_t{1} << 26;
/// Byte size of output `out` from `outK.dtype` (default f32) and `outK.shape`
/// (default [4]); nullopt when the description is malformed or over
/// kMaxBufferBytes.
std::optional<uint64_t> outputBytes(const Node &n, uint32_t out);

/// The attribute keys with a memory meaning (for generators and docs).
std::span<const std::string_view> memoryAttributeKeys();

} // namespace graphvet
