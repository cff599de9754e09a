// The memory plan of semantics.md §1: every output port of every live node in
// every live graph is bound to a buffer before anything runs. Bindings are
// either static (one buffer) or dynamic (an If/Case output, decided when the
// node runs); the plan records every candidate a dynamic binding may take so
// that the race analysis can over-approximate. Derived from the op library and
// semantics.md only, never from a pass.
#pragma once

#include "ir/graph.h"
#include "ir/tensor.h"
#include "ir/types.h"

#include <cstdint>
#include <string>
#include <vector>

namespace graphvet::oracle {

using BufferId = uint32_t;
using PortId = uint32_t;
inline constexpr BufferId kNoBuffer = UINT32_MAX;
inline constexpr PortId kNoPort = UINT32_MAX;

/// What owns a buffer; decides how it is filled, observed and permitted.
enum class BufferKind : uint8_t {
  UserInput,    ///< root Data with `index = k`
  CallerMemory, ///< root Data without index: caller memory no option can name
  Variable,     ///< persistent, keyed by variable name
  Weight,       ///< immutable; any write is a fault
  Fresh,        ///< allocated for one output
};

std::string_view bufferKindName(BufferKind k);

struct BufferInfo {
  BufferKind kind = BufferKind::Fresh;
  std::string label; ///< input0, caller:x, var:v, weight:c, fresh:body/relu:0
  std::string key;   ///< fill key: name of the variable/weight/caller Data
  int64_t inputIndex = -1;
  uint32_t size = 0; ///< bytes
  /// Variables only: false when only `ref_var_src_var_name` names it and no
  /// Variable/VariableV2/RefData node declares it (a node whose output would
  /// live there faults when it runs).
  bool declared = true;
  /// The type of the first port that owns the buffer (its elements' dtype
  /// for filling and comparing, tensor-semantics.md §7).
  TensorType type;
  /// Weights only: the `value` literal of the Const that owns the buffer
  /// (the buffer holds it instead of seeded random bytes); null otherwise.
  const Tensor *literal = nullptr;
};

/// How an output port gets its buffer.
enum class BindRule : uint8_t {
  Own,     ///< bound to `own` (fresh, input, variable, weight)
  Alias,   ///< shares the buffer of port `aliasOf` (views, refs, boundaries, While)
  Dynamic, ///< If/Case output: chosen by the branch taken at run time
};

/// What executing the producing node writes through this port.
enum class PortWrite : uint8_t {
  None,    ///< sources, views, boundaries
  Compute, ///< computed bytes into the bound (fresh) buffer
  Copy,    ///< copy of input 0 into the bound (fresh) buffer
  Ref,     ///< computed bytes written in place into input `refInput`'s buffer
};

struct PortPlan {
  GraphId graph = kNoGraph;
  NodeId node = kNoNode;
  uint32_t index = 0;
  BindRule rule = BindRule::Own;
  PortWrite write = PortWrite::None;
  uint32_t refInput = 0;    ///< for PortWrite::Ref
  BufferId own = kNoBuffer; ///< Own: the buffer; Dynamic: fallback for branches without result
  PortId aliasOf = kNoPort; ///< Alias: the port whose buffer this one shares
  PortId root = kNoPort;    ///< end of the alias chain: an Own or Dynamic port
  std::vector<BufferId> candidates; ///< sorted, unique: every buffer this port may be bound to
};

/// The memory plan of one module. Build once, then query by (graph, port).
class MemoryPlan {
public:
  static MemoryPlan build(const Module &m);

  const std::vector<BufferInfo> &buffers() const { return buffers_; }
  const std::vector<PortPlan> &ports() const { return ports_; }
  const PortPlan &port(PortId p) const { return ports_[p]; }
  /// Port id of output `p` of a live node in live graph `g`; kNoPort otherwise.
  PortId portId(GraphId g, OutPort p) const;
  /// Human-readable buffer of an output: "input0", "var:v", "weight:c",
  /// "fresh:relu:0", or "{a|b}" for a dynamic binding; "" when unknown.
  std::string bufferLabel(GraphId g, OutPort p) const;
  /// The graph-qualified node name: "relu" in the root, "body/m" in a subgraph.
  std::string qualifiedName(GraphId g, NodeId n) const;
  /// Problems that make the module unusable for the oracle (malformed tensor
  /// descriptions, bad parent indices, alias cycles...).
  const std::vector<std::string> &errors() const { return errors_; }
  /// A multi-line listing: every output and its buffer, then every buffer.
  std::string describe(const Module &m) const;
  /// Buffer of a user input index, variable name, weight key; kNoBuffer if none.
  BufferId findBuffer(BufferKind kind, const std::string &key) const;
  /// The inferred type of an output port (tensor-semantics.md §1); the
  /// default description f32 [4] when inference could not type it.
  const TensorType &portType(PortId p) const;

private:
  friend class PlanBuilder;
  std::vector<BufferInfo> buffers_;
  std::vector<PortPlan> ports_;
  /// portBase_[g][n]: id of output 0 of node n in graph g (kNoPort if dead).
  std::vector<std::vector<PortId>> portBase_;
  std::vector<std::string> graphNames_;
  std::vector<std::vector<std::string>> nodeNames_;
  std::vector<std::string> errors_;
  ModuleTypes types_;
  TensorType defaultType_ = defaultPortType();
};

} // namespace graphvet::oracle
