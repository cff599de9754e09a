// The reference interpreter (semantics.md §2-§3): explicit byte buffers from
// the memory plan, a run under a schedule (reference, seeded random or
// explicit), and the experiment a caller can perform: two runs, the overwrite
// of each graph output (alias relation) and everything observable recorded.
#pragma once

#include "ir/graph.h"
#include "oracle/inlined.h"
#include "oracle/memory_plan.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace graphvet::oracle {

using Bytes = std::vector<uint8_t>;

/// Lower-case hex, no separators ("" for no bytes).
std::string toHex(const Bytes &b);

/// How a location's bytes are compared element by element
/// (tensor-semantics.md §7): the dtype of its elements and which of its
/// bytes are indeterminate.
struct ElementView {
  DType dtype = DType::U8;
  Shape shape; ///< for naming elements in reports; empty when unknown
  Bytes undef; ///< one flag per byte (1 = indeterminate); empty when all are determinate
  /// Under the `approx` contract (Interpreter::setShadow), the distance each
  /// element may move in a refinement (magnitude.h); empty: bit for bit.
  std::vector<double> tolerance;
  bool anyUndef() const;
};

/// Everything the caller can observe after one run (semantics.md §3).
struct Observation {
  std::vector<Bytes> outputs;             ///< graph output k (root NetOutput input k)
  std::vector<std::string> outputBuffers; ///< label of the buffer output k was bound to
  std::vector<std::pair<std::string, Bytes>> variables;    ///< sorted by name
  std::vector<std::pair<int64_t, Bytes>> inputs;           ///< user inputs, by index
  std::vector<std::pair<std::string, Bytes>> callerMemory; ///< root Data without index
  std::vector<std::pair<std::string, Bytes>> weights;      ///< by qualified node name
  std::vector<ElementView> outputViews;                    ///< parallel to outputs
  /// Element views of the other locations by label ("var:v", "input0",
  /// "caller:x", "weight:c").
  std::map<std::string, ElementView> views;
};

struct WeightWrite {
  std::string node;   ///< qualified name of the writer (or the While doing write-back)
  std::string buffer; ///< weight buffer label
};

/// Output `output` shares memory with `location` ("output1", "input0",
/// "var:v", "weight:c", "caller:x"): overwriting the output changes it.
struct AliasPair {
  uint32_t output = 0;
  std::string location;
  friend auto operator<=>(const AliasPair &, const AliasPair &) = default;
};

/// The live bytes of one step of the root schedule (semantics.md §1): the
/// total size of the fresh buffers live while the step runs. A fresh buffer
/// is live from its first write to its last use (a read by a step that
/// computes, or an in-place write); a buffer bound to a graph output stays
/// live until the last step. User inputs, caller memory, variables and
/// weights are not fresh: they live outside the run and never count.
struct LiveStep {
  std::string name; ///< graph-qualified step name (call bodies inlined)
  GraphId graph = kNoGraph;
  NodeId node = kNoNode;
  uint64_t bytes = 0;
};

struct RunOutcome {
  Observation observation;
  /// One entry per root-domain step, in the order they ran (a control-flow
  /// step counts everything its subgraphs touch); empty when the run faulted.
  std::vector<LiveStep> liveSteps;
  uint64_t peakLiveBytes = 0; ///< the largest liveSteps[i].bytes
  std::vector<WeightWrite> weightWrites;
  bool crashed = false; ///< the interpreter faulted (see `crash`)
  std::string crash;
  bool budgetExceeded = false; ///< step budget ran out (a huge max_iterations)
};

struct ExperimentResult {
  RunOutcome run1, run2;
  std::vector<AliasPair> alias; ///< after run 1, sorted
  bool crashed() const { return run1.crashed || run2.crashed; }
  bool budgetExceeded() const { return run1.budgetExceeded || run2.budgetExceeded; }
  const std::string &crash() const { return run1.crashed ? run1.crash : run2.crash; }
};

enum class ScheduleKind { Reference, Random, Explicit };

struct ScheduleRequest {
  ScheduleKind kind = ScheduleKind::Reference;
  uint64_t seed = 0;              ///< Random: the order derives from it
  std::vector<std::string> names; ///< Explicit: qualified step names of the root domain,
                                  ///< in order; unlisted steps are placed as early as
                                  ///< the edges allow, after the listed ones
};

/// One order per domain; an empty entry means the domain's reference order.
using DomainOrders = std::vector<std::vector<StepIndex>>;

/// Largest number of step executions in one run; beyond it the run stops
/// with budgetExceeded (a check turns that into `inconclusive`).
inline constexpr uint64_t kStepBudget = uint64_t{1} << 20;
/// Largest total of buffer bytes the interpreter allocates; a bigger module
/// is not run (every run reports budgetExceeded).
inline constexpr uint64_t kMaxArenaBytes = uint64_t{256} << 20;

class Interpreter {
public:
  /// All three must outlive the interpreter.
  Interpreter(const Module &m, const MemoryPlan &plan, const InlinedModule &inl);
  ~Interpreter();
  Interpreter(const Interpreter &) = delete;
  Interpreter &operator=(const Interpreter &) = delete;

  /// An order of `domain` for the request; nullopt with `error` set when an
  /// explicit list names an unknown step, repeats one, or contradicts an edge.
  std::optional<std::vector<StepIndex>> schedule(DomainId domain, const ScheduleRequest &req,
                                                 std::string &error) const;

  /// Fills inputs, variables and weights from `stateSeed`, then runs once.
  RunOutcome runOnce(uint64_t stateSeed, const DomainOrders &orders = {});
  /// The full experiment of semantics.md §3.
  ExperimentResult experiment(uint64_t stateSeed, const DomainOrders &orders = {});
  /// Selects the variant of the placeholder arithmetic of ops without
  /// semantics of their own (semantics.md §2 fixes only that it is a
  /// deterministic mix of inputs, op type and output index): variant v keys
  /// the op type's hash by v. 0, the default, is the documented mix.
  void setArithmetic(uint64_t variant);
  /// Turns the shadow evaluation of the `approx` contract on or off (off by
  /// default): observations then carry each element's allowed distance
  /// (ElementView::tolerance), derived from the magnitudes behind it.
  void setShadow(bool on);
  /// Whether seeded fills mix in the specials of tensor-semantics.md §7 (on
  /// by default); off, every element is an ordinary value.
  void setSpecials(bool on);
  /// Replaces the seeded content of user input `index` in every later fill
  /// (`graphvet run --input`); the bytes are cut or zero-padded to the
  /// buffer's size. False when the module has no such input.
  bool setInputBytes(int64_t index, const Bytes &bytes);
  /// How many times each domain has started running since construction, over
  /// every run (a branch not taken and a loop body whose cond failed stay 0).
  const std::vector<uint64_t> &domainRuns() const;

private:
  struct Impl;
  Impl *impl_;
};

/// What `graphvet run` needs in one call.
struct RunOptions {
  uint64_t seed = 1;
  ScheduleRequest schedule;
  /// Bytes of user inputs by index, instead of seeded values (both runs).
  std::map<int64_t, Bytes> inputs;
};

struct RunReport {
  bool ok = false; ///< false: `error` says why (malformed, cyclic, bad schedule, unknown input)
  std::string error;
  std::vector<std::string> schedule; ///< root-domain order used
  ExperimentResult result;
  std::string plan; ///< MemoryPlan::describe
  /// The plan as data: (output port "node:k", buffer label) in plan order...
  std::vector<std::pair<std::string, std::string>> planPorts;
  /// ...and every buffer: label, kind name, size in bytes.
  struct Buffer {
    std::string label, kind;
    uint32_t size = 0;
  };
  std::vector<Buffer> planBuffers;
};

RunReport runModule(const Module &m, const RunOptions &opts);

} // namespace graphvet::oracle
