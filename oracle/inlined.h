// The scheduling view of a module (semantics.md §2): PartitionedCall bodies
// inlined, If/Case/While as single steps. Each "domain" is one set of steps
// that a schedule orders: the root graph, and each control-flow subgraph
// (branch, cond, body) which runs as part of its owner's single step. Every
// step carries the buffers it may read and write, from the memory plan.
#pragma once

#include "ir/graph.h"
#include "oracle/memory_plan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace graphvet::oracle {

using StepIndex = uint32_t;
using DomainId = uint32_t;
inline constexpr StepIndex kNoStep = UINT32_MAX;

struct Access {
  BufferId buffer = kNoBuffer;
  bool write = false;
  friend bool operator==(const Access &, const Access &) = default;
};

enum class StepKind : uint8_t {
  Noop,    ///< Data, Variable, Const, NetOutput: no reads, no writes
  Compute, ///< ordinary ops, copies, ref writers, scribblers
  If,
  Case,
  While,
};

struct Step {
  GraphId graph = kNoGraph;
  NodeId node = kNoNode;
  StepKind kind = StepKind::Noop;
  std::string name;                 ///< graph-qualified node name
  std::vector<DomainId> subdomains; ///< control flow: one per subgraph, in order
  std::vector<Access> accesses;     ///< sorted by buffer, one entry per buffer
};

struct Domain {
  GraphId graph = kNoGraph;
  DomainId parentDomain = UINT32_MAX;
  StepIndex parentStep = kNoStep;
  std::vector<Step> steps;
  /// Ordering edges (data, boundary, control) as successor lists, sorted.
  std::vector<std::vector<StepIndex>> succ;
  /// The reference schedule: Kahn's algorithm, ties by step index (node id
  /// order with call bodies inlined in place). Empty when cyclic.
  std::vector<StepIndex> reference;
  /// A cycle (first step repeated at the end) when no schedule exists.
  std::vector<StepIndex> cycle;
  size_t numEdges() const;
};

class InlinedModule {
public:
  static InlinedModule build(const Module &m, const MemoryPlan &plan);

  std::vector<Domain> domains; ///< [0] is the root domain
  std::vector<std::string> errors;

  /// Where the step of a (non-call) node lives; {UINT32_MAX, kNoStep} if none.
  std::pair<DomainId, StepIndex> stepOf(GraphId g, NodeId n) const;
  /// Finds a step of `domain` by its qualified name; kNoStep if absent.
  StepIndex findStep(DomainId domain, const std::string &name) const;
  std::vector<std::string> names(DomainId d, const std::vector<StepIndex> &order) const;
  bool acyclic() const;

private:
  friend class DomainBuilder;
  std::vector<std::vector<std::pair<DomainId, StepIndex>>> where_;
};

} // namespace graphvet::oracle
