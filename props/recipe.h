// A recipe: a graph described as a sequence of construction steps rather than
// as nodes and edges. Generators produce recipes, shrinking simplifies them
// (drops steps, lowers choices), and buildModule turns any recipe -- including
// every shrunk one -- into a valid, race-free Module. Every field is a plain
// number interpreted modulo what is available, so no recipe is ever invalid.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <vector>

namespace graphvet::props {

/// What a construction step adds to the graph it belongs to.
enum class StepKind : uint8_t {
  Compute,      ///< ordinary op (ReLU, Add, ...), 0-3 inputs, maybe several outputs
  UserInput,    ///< root: Data {index = k} (or AippData/AnnData, or no index); subgraph: a parent
                ///< input
  Variable,     ///< Variable / VariableV2 / RefData
  Weight,       ///< Const / Constant / ConstPlaceHolder / FileConstant
  RefVarSource, ///< ordinary op whose output is bound to a variable (ref_var_src_var_name)
  TensorMove,   ///< TensorMove (sometimes Identity/MemcpyAsync), maybe reserved attrs
  TensorMoveChain, ///< two or three TensorMoves in a row
  View,            ///< Reshape, or an op with outK.reuse_input
  MultiAliasRefOp, ///< an op with two outputs aliasing the same input
  RefWrite,        ///< Assign family, or an op with out0.ref_input: writes input 0 in place
  ScopeWrite,      ///< HcomAllReduce family or `_input_mutable = true`: scribbles on inputs
  Continuous,      ///< an op demanding contiguous inputs (continuous_input)
  Call,            ///< PartitionedCall / StatefulPartitionedCall with a nested body; its flags
                   ///< pick a shape (CallShape) beyond a plain call
  If,              ///< If with then/else branches
  Case,            ///< Case with two or three branches
  While,           ///< While with cond and body
  CtrlEdge,        ///< an extra control edge between two earlier nodes
};
inline constexpr unsigned kNumStepKinds = static_cast<unsigned>(StepKind::CtrlEdge) + 1;

/// What a Call step builds around its body, chosen by `flags % 8` (0 and
/// anything unlisted: a plain call, the simplest, so shrinking lowers towards
/// it). Every shape is race-free by construction and only occurs while the
/// families it uses are on.
enum class CallShape : uint8_t {
  Plain = 0,
  /// (Variables, Writers) the call's input 0 is a new TensorMove of a
  /// variable, and its body writes that variable by name (a
  /// ref_var_src_var_name node and an Assign) and then reads the argument.
  WritesCopiedVariable = 1,
  /// (Writers) the body ends in `r = ReLU(..); tm = TensorMove(r); c = Abs(r)`
  /// (or Concat/Add, before or after tm) and returns tm as result 0, which an
  /// Assign-family op in the parent writes; only the data edge through the
  /// call orders the copy before that writer.
  ResultWrittenOutside = 2,
  /// (Unconnected, Writers) the body starts with a copy of a buffer behind an
  /// unconnected slot, `tm = TensorMove(Reshape(_))` or, with the call's
  /// input 0 left `_`, `tm = TensorMove(arg)` of that slot's Data; an
  /// Assign-family op writes tm, and the body returns it as result 0. Such a
  /// buffer keeps what is written into it from one run to the next, so the
  /// copy is needed (mutant 61 merged it).
  WrittenCopyOfUnconnected = 3,
};

/// Twists of Compute steps.
enum class ComputeTwist : uint8_t {
  ZeroOutputs = 1,    ///< `outputs = 0`: a pure sink
  SecondOutputDesc,   ///< two outputs, a tensor description on output 1
  UnknownAttributes,  ///< attributes without a memory meaning (node and port level)
  ReservedOnOrdinary, ///< (Reserved) `_cannot_be_deleted` / `no_need_constant_folding` here
  SameValueTwice,     ///< one value in two input slots
};

/// Twists of the source steps (UserInput, Variable, Weight).
enum class SourceTwist : uint8_t {
  /// UserInput: the index skips one (root), or (in a subgraph) a Variable
  /// node declaring a variable of another graph; Variable: that, declaring
  /// one name in two graphs (one buffer).
  Elsewhere = 1,
  /// UserInput: `_parent_node_index` on a root Data (ignored); Variable: a
  /// name that must be quoted.
  OddAttribute,
  SecondOutput,   ///< (ExtraOutputs) `outputs = 2`: output 1 is a fresh buffer nobody writes
  CtrlIn,         ///< (CtrlEdges) a control edge into the new source
  RefVarSrcNamed, ///< (Variables) `ref_var_src_var_name` on the source (the source wins)
};

/// Twists of RefVarSource steps (all in the Variables family).
enum class RefVarTwist : uint8_t {
  SecondOutput = 1, ///< `out1.ref_var_src_var_name` on a two-output op
  NodeLevelMulti,   ///< node-level name on a two-output op: both outputs bound
  BothLevels,       ///< node level names one variable, `out0.` another
  Identifier,       ///< the name written as an identifier, not a string
  Elsewhere,        ///< a variable declared in another graph only (not an ancestor)
  Undeclared,       ///< in a graph that never runs: a variable nobody declares
  OnView,           ///< on a Reshape's output (bound to the variable, not a view)
  OnRefWriter,      ///< on an Assign's ref output (bound to the variable)
};

/// Twists of TensorMove and TensorMoveChain steps.
enum class TensorMoveTwist : uint8_t {
  /// (Variables, BoundCopies) `out0.ref_var_src_var_name`: the copy's
  /// output is the variable's buffer (issue 21's shape)
  BoundOutput = 1,
  BoundNode,     ///< (Variables, BoundCopies) the same at node level
  BoundToSource, ///< (Variables, BoundCopies) bound to the very variable it copies
  CopyOfBound,   ///< (Variables, BoundCopies) a bound copy, then a plain TensorMove of it
  InputMutable,  ///< (Writers) `_input_mutable = true`: scribbles on its input
  /// (ExtraOutputs) `outputs = 2` (Identity/MemcpyAsync: `outputs = 0`
  /// when variant % 3 == 0)
  SecondOutput,
  Continuous,      ///< (Layout) `continuous_input = true`
  ReservedNonBool, ///< (Reserved) `_cannot_be_deleted = 1` / `no_need_constant_folding = "x"`
  /// Identity/MemcpyAsync with no input, `_` or two inputs (and, with
  /// ExtraOutputs, sometimes `outputs = 0`)
  OddInputs,
};

/// Twists of View steps.
enum class ViewTwist : uint8_t {
  ReuseFalse = 1, ///< `out0.reuse_input = false` on a Reshape: not a view
  OfUnconnected,  ///< (Unconnected) a view of a `_` slot
  IndexAlone,     ///< `out0.reuse_input_index` without `reuse_input`: not a view
  RefVarSrc,      ///< (Variables) `out0.ref_var_src_var_name` on a view
  RefAndReuse,    ///< (Writers) `out0.ref_input` and `out0.reuse_input` on one output
};

/// Twists of RefWrite steps.
enum class RefWriteTwist : uint8_t {
  SlotOne = 1,     ///< `out0.ref_input = 1` (or 2, of three inputs): writes that input
  OutputOne,       ///< two outputs, `out1.ref_input = 0`
  OverrideBuiltIn, ///< an Assign whose `out0.ref_input = 1` overrides the built-in slot 0
  TwoRefOutputs,   ///< `out0.ref_input = 0`, `out1.ref_input = 1`
  Unconnected,     ///< (Unconnected) the written slot is `_`
  RefVarSrc,       ///< (Variables) the ref output bound to a variable by name
  RefAndReuse,     ///< `out0.ref_input` and `out0.reuse_input` together
};

/// Twists of Continuous steps.
enum class ContinuousTwist : uint8_t {
  FromSources = 1, ///< every input from the Source pool (user inputs, variables, weights)
  SameValue,       ///< one value in every slot
  Unconnected,     ///< (Unconnected) a `_` slot
  False,           ///< `continuous_input = false`: no demand
  BothAttributes,  ///< both layout attributes
};

/// Twists of the nodes holding subgraphs (Call, If, Case, While); a twist a
/// holder kind cannot take is the usual spelling. Calls take twists only in
/// the plain CallShape.
enum class HolderTwist : uint8_t {
  DataReversed = 1, ///< the subgraph Data nodes in reverse parent-index order
  InputUnused,      ///< the last holder input has no Data in any subgraph
  ResultsPermuted,  ///< `in<k>._parent_node_index = (k + 1) mod n`
  ResultUnmapped,   ///< an extra NetOutput input without `_parent_node_index`
  /// one more holder output than results (never used); While: result 0
  /// is not written back
  OutputUnproduced,
  ResultUnconnected, ///< (Unconnected) result 0 of the first subgraph is `_`
  NoNetOutput,       ///< Call, While body: no NetOutput at all
  DataIndexAttr,     ///< subgraph Data nodes also carry `index = p` (ignored)
  InputMutable,      ///< (Writers, HolderAttributes) `_input_mutable = true` on the holder
  RefVarSrc,         ///< (Variables, HolderAttributes) holder output 0 bound to a variable
  /// (Views, HolderAttributes) `out0.reuse_input = true` on a Call/If/Case:
  /// output 0 views an input
  AliasAttr,
  SameValueTwice, ///< Call/If/Case: one value in two input slots
  /// (CtrlEdges) a reader after the first subgraph's NetOutput, ordered by
  /// a control edge from it
  TrailingNode,
  NetOutputOutputs, ///< the first subgraph's NetOutput has `outputs = 1`
  /// If/Case: the condition is `_` (then-branch / branches >= 1 never run;
  /// also when the condition's reference is to the Unconnected pool);
  /// While: `max_iterations = 0` (the body never runs; also when
  /// `flags % 8 == 4`). If/Case need the Unconnected family.
  NeverRuns,
  Continuous, ///< (Layout, HolderAttributes) `continuous_input = true` on the holder
};

/// Twists of CtrlEdge steps (all in the CtrlEdges family).
enum class CtrlTwist : uint8_t {
  FromHolder = 1, ///< from a node holding subgraphs
  ToHolder,       ///< into a node holding subgraphs
  ToNetOutput,    ///< into the graph's NetOutput
  ParallelToData, ///< parallel to a data edge (producer -> newest node)
};

/// Twists of the root graph (the root Body's `twist`; a subgraph's boundary
/// takes its twist from its holder's HolderTwist).
enum class RootTwist : uint8_t {
  UnconnectedOutput = 1, ///< (Unconnected) the last graph output is `_`
  RefVarSrcNamed,        ///< (Variables) node-level `ref_var_src_var_name` on the NetOutput
  /// (CtrlEdges) a reader after the NetOutput, ordered by a control edge
  /// from it
  TrailingNode,
  NoNetOutput, ///< no NetOutput at all: the graph has no outputs
};

/// Which earlier values a reference prefers; the builder falls back to Any
/// when the pool is empty.
enum class Pool : uint8_t {
  Any,        ///< every value of the graph so far
  TensorMove, ///< outputs of TensorMoves (and other copies)
  Source,     ///< special sources: user inputs, variables, weights, subgraph inputs
  Holder,     ///< outputs of nodes holding subgraphs
  Alias,      ///< outputs aliasing an input: views and in-place writers
  /// Leave the input slot unconnected (`_`) where the op allows it (ordinary
  /// ops, calls, branch inputs, continuous ops); elsewhere the same as Any.
  Unconnected,
};
inline constexpr unsigned kNumPools = static_cast<unsigned>(Pool::Unconnected) + 1;

/// A reference to an earlier value: `back` counts from the most recent value
/// of the pool (0 = the newest), modulo the pool's size.
struct Ref {
  Pool pool = Pool::Any;
  uint8_t back = 0;
  friend bool operator==(const Ref &, const Ref &) = default;
};

struct Step;

/// The steps of one graph and the values its NetOutput returns.
struct Body {
  std::vector<Step> steps;
  std::vector<Ref> outputs;
  /// RootTwist of the root body; 0 (unused) in subgraph bodies.
  uint8_t twist = 0;
  friend bool operator==(const Body &, const Body &) = default;
};

struct Step {
  StepKind kind = StepKind::Compute;
  /// Picks among the op types / attribute spellings of the kind.
  uint8_t variant = 0;
  /// Kind-specific switches (reserved attributes, control edges, ...).
  uint8_t flags = 0;
  /// An unusual but legal spelling of the step (docs/ir-coverage.md): 0 is
  /// the usual one, so shrinking lowers towards it; each kind lists its
  /// twists in its `*Twist` enum below, and a value it does not list is the
  /// usual spelling. Only while SwarmBit::Twists is on (and the twist's own
  /// families).
  uint8_t twist = 0;
  std::vector<Ref> refs;
  /// Nested graphs of Call (1), If (2), Case (2-3) and While (cond, body).
  std::vector<Body> bodies;
  friend bool operator==(const Step &, const Step &) = default;
};

/// How one of the two memory-reuse options is spelled.
enum class OptionMode : uint8_t {
  Absent,
  Matching,    ///< well-formed, naming existing outputs / inputs
  NonMatching, ///< well-formed, naming indexes that do not exist
  Malformed,   ///< violates the grammar (grants nothing)
};

struct OptionRecipe {
  OptionMode mode = OptionMode::Absent;
  /// Index pairs (outputReuse) or single indexes (inputReuse, first of each).
  std::vector<std::pair<uint8_t, uint8_t>> pairs;
  uint8_t malformedVariant = 0;
  /// (Twists) non-zero: also set an option no pass reads (an unknown key).
  uint8_t unrelated = 0;
  friend bool operator==(const OptionRecipe &, const OptionRecipe &) = default;
};

/// Feature families that swarm testing switches on and off per case.
enum class SwarmBit : uint32_t {
  Subgraphs = 1u << 0,   ///< PartitionedCall
  ControlFlow = 1u << 1, ///< If, Case, While
  Views = 1u << 2,       ///< views and multi-alias RefOps
  Writers = 1u << 3,     ///< ref writers and scope writers
  Variables = 1u << 4,   ///< Variable family and ref_var_src_var_name
  Weights = 1u << 5,     ///< Const family
  CtrlEdges = 1u << 6,   ///< extra control edges
  Options = 1u << 7,     ///< the two memory-reuse options
  Reserved = 1u << 8,    ///< _cannot_be_deleted / no_need_constant_folding
  Layout = 1u << 9,      ///< continuous-input ops
  TensorMoveChains = 1u << 10,
  Unconnected = 1u << 11, ///< `_` input slots
  TensorDescs = 1u << 12, ///< outK.dtype / outK.shape on sources, ops and TensorMoves
  Twists = 1u << 13,      ///< unusual spellings of steps (Step::twist)
  /// Copies whose own output is bound to a variable by name
  /// (TensorMoveTwist::Bound*, CopyOfBound; a bound first copy of a chain).
  BoundCopies = 1u << 14,
  /// A second output on sources and copies (SourceTwist::SecondOutput,
  /// TensorMoveTwist::SecondOutput).
  ExtraOutputs = 1u << 15,
  /// Attributes on a holder that override its subgraphs or add to them
  /// (HolderTwist::InputMutable, RefVarSrc, AliasAttr, Continuous).
  HolderAttributes = 1u << 16,
};
inline constexpr unsigned kNumSwarmBits = 17;
inline constexpr uint32_t kAllSwarmBits = (1u << kNumSwarmBits) - 1;

struct Recipe {
  /// Enabled SwarmBits; steps of a disabled family are skipped by the builder.
  uint32_t swarm = kAllSwarmBits;
  Body root;
  OptionRecipe outputReuse; ///< ge.exec.outputReuseInputMemIndexes
  OptionRecipe inputReuse;  ///< ge.exec.inputReuseMemIndexes
  friend bool operator==(const Recipe &, const Recipe &) = default;
};

const char *stepKindName(StepKind k);
/// Number of steps in the recipe, nested bodies included.
size_t countSteps(const Recipe &r);

/// RapidCheck prints counterexamples with this: the graph the recipe builds.
void showValue(const Recipe &r, std::ostream &os);

} // namespace graphvet::props
