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
  friend bool operator==(const Body &, const Body &) = default;
};

struct Step {
  StepKind kind = StepKind::Compute;
  /// Picks among the op types / attribute spellings of the kind.
  uint8_t variant = 0;
  /// Kind-specific switches (reserved attributes, control edges, ...).
  uint8_t flags = 0;
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
};
inline constexpr unsigned kNumSwarmBits = 13;
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
