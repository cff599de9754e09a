// Static analyses over the scheduling domains: conflicting accesses (two
// steps touching one buffer, at least one writing), which of them the
// ordering edges leave unordered (races, by transitive closure in bitsets),
// constructive witness schedules, cycles, and the memory-layout conflicts of
// semantics.md §6.
#pragma once

#include "ir/graph.h"
#include "oracle/inlined.h"
#include "oracle/memory_plan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace graphvet::oracle {

/// Transitive closure of one domain's ordering edges: a bitset row per step
/// for domains up to kDenseSteps steps; beyond that (the rows would need
/// too much memory) a search per source, cached for the last source asked.
class Reachability {
public:
  static constexpr size_t kDenseSteps = 16384;
  explicit Reachability(const Domain &d);
  /// True when a path of edges leads from `a` to `b` (a != b).
  bool reaches(StepIndex a, StepIndex b) const;
  bool ordered(StepIndex a, StepIndex b) const { return reaches(a, b) || reaches(b, a); }

private:
  const Domain &d_;
  bool dense_ = false;
  size_t words_ = 0;
  std::vector<uint64_t> bits_;
  mutable StepIndex cachedSource_ = kNoStep;
  mutable std::vector<bool> cachedReach_;
};

/// Two steps of one domain that access a common buffer, at least one writing.
/// `first` precedes `second` in the domain's reference order.
struct Conflict {
  DomainId domain = 0;
  StepIndex first = kNoStep, second = kNoStep;
  std::vector<BufferId> buffers; ///< every buffer they conflict on
  bool unordered = false;        ///< by reachability: a race
};

struct RaceAnalysis {
  std::vector<Conflict> conflicts; ///< every conflicting pair, ordered or not
  size_t numRaces() const;
};

/// Conflicting pairs of every acyclic domain, with reachability verdicts.
RaceAnalysis analyzeRaces(const InlinedModule &inl);

/// A schedule of `d` in which `first` runs before `second` (they must be
/// unordered, or `first` must precede `second`): `second` is delayed as long
/// as the edges allow. Built without a solver.
std::vector<StepIndex> orderWith(const Domain &d, StepIndex first, StepIndex second);

/// One memory-layout conflict of semantics.md §6.
struct LayoutConflict {
  std::string buffer; ///< buffer label
  std::string kind;   ///< "input+continuous", "weight+continuous", "variable+continuous",
                      ///< "output+weight", "output+continuous"
  std::string node;   ///< the continuous op involved (qualified), or "" for output+weight
  /// The continuous op's name with the subgraphs of calls left out (a call
  /// is transparent, and outlining moves an op into one without making it
  /// another op): what key() compares.
  std::string scopedNode;
  int64_t output = -1; ///< the graph output involved (output+...), else -1
  /// Identity across an original and its optimized graph: built from what
  /// survives a transformation (user input and weight labels, graph output
  /// indices, continuous op names), never from a fresh buffer's label, which
  /// changes when a pass merges buffers.
  std::string key() const;
};

std::vector<LayoutConflict> layoutConflicts(const Module &m, const MemoryPlan &plan);

} // namespace graphvet::oracle
