// Buffer analyses shared by the passes: where the memory behind an output
// port really comes from (a backward trace through views, ref outputs and
// subgraph boundaries), what happens to the memory handed to an input slot
// (a forward exploration through the same aliases), and the read/write
// classes of tensor-move-delete.md. Everything here is bounded by the size
// of the alias chain it follows, never by the size of the module.
#pragma once

#include "ir/graph.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <vector>

namespace graphvet {

/// A node of a module: graph and node id.
struct NodeRef {
  GraphId graph = kNoGraph;
  NodeId node = kNoNode;
  friend auto operator<=>(const NodeRef &, const NodeRef &) = default;
};

/// An output port of a module.
struct PortRef {
  GraphId graph = kNoGraph;
  OutPort port;
  friend auto operator<=>(const PortRef &, const PortRef &) = default;
};

/// An input slot of a module.
struct SlotRef {
  GraphId graph = kNoGraph;
  InPort slot;
  friend auto operator<=>(const SlotRef &, const SlotRef &) = default;
};

/// Lookup tables over a module's subgraph boundaries. They depend only on
/// attributes and on which nodes exist, so deleting TensorMoves (which are
/// never Data or NetOutput nodes) keeps them valid.
class ModuleIndex {
public:
  explicit ModuleIndex(const Module &m);

  /// Subgraph Data nodes of `g` carrying `_parent_node_index = i` (id order).
  std::span<const NodeId> dataForParentInput(GraphId g, uint32_t i) const;
  /// The NetOutput of `g` (lowest id), or kNoNode.
  NodeId netOutput(GraphId g) const;
  /// The NetOutput input slots of `g` carrying `_parent_node_index = j`.
  std::span<const uint32_t> resultSlots(GraphId g, uint32_t j) const;
  /// Root Data-family nodes with `index = k` (id order).
  std::span<const NodeId> rootDataWithIndex(uint32_t k) const;
  /// Every output port bound to the buffer of variable `name`: the outputs of
  /// Variable-family nodes so named (in any graph) and outputs with
  /// `ref_var_src_var_name = name` (graph order, then id order).
  std::span<const PortRef> variablePorts(const std::string &name) const;
  /// A node holding subgraphs with an output the memory plan binds elsewhere
  /// than the pass's call, loop and branch rules assume (a variable by
  /// ref_var_src_var_name, or an input by a ref or view attribute): a While
  /// writes each iteration's result there. In a module with such a node the
  /// pass decides by the design's rules alone, and counts the node a writer
  /// of every variable it binds.
  bool isRebound(GraphId g, NodeId n) const { return rebound_.count({g, n}) > 0; }
  /// Whether some graph holds a rebound control-flow node.
  bool anyRebound() const { return !rebound_.empty(); }
  /// Rebound control-flow nodes binding an output to variable `name`.
  std::span<const PortRef> variableReboundBy(const std::string &name) const;

private:
  struct PerGraph {
    std::map<uint32_t, std::vector<NodeId>> dataByParentIndex;
    NodeId netOutput = kNoNode;
    std::map<uint32_t, std::vector<uint32_t>> slotsByParentOutput;
  };
  std::vector<PerGraph> graphs_;
  std::map<uint32_t, std::vector<NodeId>> rootDataByIndex_;
  std::map<std::string, std::vector<PortRef>> variablePorts_;
  std::set<std::pair<GraphId, NodeId>> rebound_;
  std::map<std::string, std::vector<PortRef>> reboundVariables_;
};

/// What the buffer behind a traced port is, by its real source.
enum class SourceKind {
  Ordinary,         ///< a fresh buffer (any computing op, TensorMove included)
  UserInput,        ///< root Data family with `index`
  UnnamedUserInput, ///< root Data family without a usable `index`
  Variable,         ///< Variable family
  VariableRef,      ///< an output with ref_var_src_var_name
  Weight,           ///< Const family
  ControlFlow,      ///< the trace ended at If/Case/While (or their variants)
  None,             ///< no path: an unconnected or inconsistent link
};

const char *sourceKindName(SourceKind k);

/// One step of a trace: an output port, the step's node and what it does.
struct TraceStep {
  GraphId graph = kNoGraph;
  OutPort port;
};

struct SourceTrace {
  /// From the traced port (steps[0]) up to the source (steps.back()).
  std::vector<TraceStep> steps;
  SourceKind kind = SourceKind::None;
  /// For ControlFlow: the control-flow node that ended the trace (the
  /// producer itself, or the parent of the subgraph the trace left).
  NodeRef controlFlow;
  /// For UserInput: the `index`.
  uint32_t userInput = 0;
  /// True when some step is a ref output (the memory is written in place
  /// along the way).
  bool refOnPath = false;
  /// For None: what broke the path.
  std::string failure;
};

/// Traces the buffer behind `start` (an output port of graph `g`) backwards:
/// through views and ref outputs to the input they alias, out of a subgraph
/// through its Data to the parent's producer, into a PartitionedCall through
/// its NetOutput input for the traced output. Stops at sources and at control
/// flow. At most `maxSteps` steps.
SourceTrace traceSource(const Module &m, const ModuleIndex &index, GraphId g, OutPort start,
                        size_t maxSteps);

/// Read/write classes of tensor-move-delete.md.
enum class AccessClass { ReadOnly, Writeable, ScopeWriteable, Invalid };
enum class OutputClass { ReadOnlyConst, ReadOnly, SoftRead, Writeable, Invalid };

const char *accessClassName(AccessClass c);
const char *outputClassName(OutputClass c);
/// ReadOnly + X = X; X + X = X; Writeable + ScopeWriteable = Invalid.
AccessClass combine(AccessClass a, AccessClass b);
/// True for Writeable, ScopeWriteable and Invalid.
bool writes(AccessClass c);
/// The table of Rule 4 (Invalid on either side is a conflict).
bool conflicts(OutputClass out, AccessClass in);

/// The class of one input slot taken alone: ScopeWriteable for While inputs
/// and input-mutable nodes, Writeable for an input written by a ref output,
/// otherwise ReadOnly. (Subgraph holders are resolved by exploreUses.)
AccessClass directAccess(const Node &n, uint32_t input);

/// Everything the forward exploration from a set of input slots found.
struct BufferUses {
  /// Combined class of every access to the buffer: the slots themselves,
  /// and, through views, ref outputs and subgraph boundaries, every slot the
  /// same memory reaches. Invalid when the budget ran out.
  AccessClass access = AccessClass::ReadOnly;
  /// Root NetOutput slots bound to the buffer (graph outputs).
  std::set<uint32_t> rootOutputs;
  /// Ops demanding contiguous inputs that receive the buffer.
  std::vector<NodeRef> continuousUsers;
  /// Nodes that write or scribble on the buffer (a Writeable or
  /// ScopeWriteable slot), in visiting order.
  std::vector<NodeRef> writers;
  /// The slot through which each of `writers` accesses the buffer (same
  /// order and length).
  std::vector<SlotRef> writerSlots;
  /// Nodes that hand the memory on to a consumer through one of their
  /// outputs (a connected view or ref output, a connected While output, or a
  /// subgraph result the holder's consumers read). An aliasing output nobody
  /// consumes does not pass anything on.
  std::set<NodeRef> passedOnBy;
  bool overBudget = false;
};

/// Explores forward from `slots` (each an input slot of its graph). Visits
/// each slot at most once and at most `budget` slots in all. When `visited`
/// is given, every slot reached is appended to it (in visiting order).
/// The memory returned by a subgraph NetOutput is followed to the holder's
/// output; with `whileResultsCopied`, not for a While's cond or body, whose
/// results the While copies into its loop variables (semantics.md §2): the
/// memory itself goes nowhere (the NetOutput slot is still visited, the
/// read at the end of the subgraph).
BufferUses exploreUses(const Module &m, const ModuleIndex &index, std::span<const SlotRef> slots,
                       size_t budget, std::vector<SlotRef> *visited = nullptr,
                       bool whileResultsCopied = false);

/// The consumers of one output port as module slots.
std::vector<SlotRef> consumerSlots(const Module &m, PortRef p);

/// True when the memory handed to input `input` of node `n` (graph `g`)
/// reaches another consumer through one of the node's outputs: a connected
/// view or ref output on that input, a connected While output, or a
/// subgraph result of a holder that its consumers read.
bool passesMemoryOn(const Module &m, const ModuleIndex &index, GraphId g, NodeId n, uint32_t input,
                    size_t budget);

/// Whether the buffer a source trace ends at is written in place anywhere in
/// the module, cached per source: the question cse and simplify ask before
/// letting a value be read at another time. The trace must end at an
/// ordinary port, a weight or a user input (every root Data of that index
/// shares the caller's buffer).
class SourceWrites {
public:
  enum class Answer { NotWritten, Written, OverBudget };
  SourceWrites(const Module &m, const ModuleIndex &index, size_t budget)
      : m_(m), index_(index), budget_(budget) {}
  Answer of(const SourceTrace &trace);

private:
  const Module &m_;
  const ModuleIndex &index_;
  size_t budget_;
  std::map<PortRef, Answer> cache_;
};

} // namespace graphvet
