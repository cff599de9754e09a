// The soundness verdict of semantics.md §5: is a graph a valid original, and
// is an optimized graph a sound refinement of its original? Queries run in a
// fixed order (docs/oracle.md): malformed -> cycle -> race (Z3) -> layout ->
// experiments on N seeded initial states. Never throws.
#pragma once

#include "ir/contract.h"
#include "ir/graph.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace graphvet::oracle {

enum class Verdict { Sound, Violation, Inconclusive, Invalid };

/// "sound", "violation", "inconclusive", "invalid".
std::string_view verdictName(Verdict);

/// The violation kinds, most specific first: a report leads with the first
/// kind it holds. Structural defects of the optimized graph come first
/// (nothing else about it can be trusted), then writes to memory the graph
/// must not write, then ordering, layout, faults, and last the differences
/// in what the caller sees, which are usually their consequence.
/// `malformed` is an original's defect (bad input); `invalid-output` the
/// same defect in the optimized graph (the pass's fault).
inline constexpr std::string_view kViolationKinds[] = {
    "invalid-output", "malformed", "cycle", "weight-written", "input-clobbered",
    "race",           "layout",    "crash", "alias",          "value"};

/// Rank of `kind` in kViolationKinds (unknown kinds rank last).
size_t violationRank(std::string_view kind);

struct Violation {
  /// One of kViolationKinds; the harness adds "reserved-deleted" (props/contract.h).
  std::string kind;
  std::vector<std::string> nodes;   ///< graph-qualified node names ("body/m" in a subgraph)
  std::vector<std::string> buffers; ///< buffer labels ("input0", "var:v", "fresh:r:0")
  std::vector<std::vector<std::string>> schedules; ///< witness schedules (node names)
  std::string bytes;                               ///< differing bytes, "expected <hex> got <hex>"
  std::string message;                             ///< one line
  /// FILE:LINE:COL of the defect in the optimized graph, when it has one
  /// (invalid-output, cycle); FILE is CheckOptions::optimizedName.
  std::string location = {};
};

struct CheckOptions {
  uint64_t seed = 1;           ///< initial states derive from it
  unsigned numStates = 2;      ///< seeded initial states per experiment
  unsigned z3TimeoutMs = 2000; ///< total Z3 budget per check
  bool useZ3 = true;           ///< false: race analysis by reachability only (fast path)
  /// Variants of the placeholder arithmetic of ops without semantics of their
  /// own, each run on every state (Interpreter::setArithmetic). semantics.md
  /// fixes only that such an op computes a deterministic mix of its inputs,
  /// so a sound change is sound under every mix; 1 checks the documented one.
  unsigned arithmetics = 1;
  /// How locations in the optimized graph name it (Violation::location).
  std::string optimizedName = "optimized";
  /// The contract of the transformation under check (tensor-semantics.md
  /// §7): Approx accepts an element within the bound derived from the
  /// original's shadow evaluation (oracle/magnitude.h); Exact, bit for bit.
  NumericContract contract = NumericContract::Exact;
  /// Seeded inputs mix in the specials (±0, ±inf, NaN, subnormals,
  /// extremes). Off (`--no-specials`), only ordinary values: for a real
  /// model, whose activations the specials would turn into NaN everywhere.
  bool specials = true;
};

/// Under the `approx` contract: how far the optimized graph's float output
/// elements moved from the original's, over every run, state and arithmetic
/// variant the check compared, next to the derived bound (magnitude.h).
struct ApproxMargin {
  int64_t elements = 0;       ///< float output elements compared
  int64_t moved = 0;          ///< of them, not bit-identical (NaNs count as equal)
  double maxDistance = 0;     ///< largest |original - optimized|
  double maxRelative = 0;     ///< largest |original - optimized| / |original|, original != 0
  uint64_t maxUlps = 0;       ///< largest distance in units in the last place of the dtype
  double worstRatio = 0;      ///< largest distance / bound (1 would be at the bound)
  double distanceAtWorst = 0; ///< the distance and bound of that element
  double boundAtWorst = 0;
};

struct CheckResult {
  Verdict verdict = Verdict::Sound;
  std::vector<Violation> violations;
  std::string reason; ///< for invalid / inconclusive
  std::string replay; ///< one-line replay command (filled by callers that know file names)
  std::vector<std::string> warnings; ///< e.g. a malformed option that grants nothing
  unsigned z3Queries = 0;            ///< solver calls made (0 without Z3)
  NumericContract contract = NumericContract::Exact; ///< the contract the values were judged by
  std::optional<ApproxMargin> margin; ///< under `approx`, when the outputs were compared
};

/// Is this graph valid as an original (well-formed, acyclic, race-free, runs
/// without faults)? Sound or Invalid (or Inconclusive when a budget ran out).
/// Race freedom is decided by exact reachability; Z3 is not needed here.
CheckResult checkOriginal(const Module &m, const CheckOptions &opts);

/// Refinement: is `optimized` sound for `original`? An original that is not
/// valid gives Invalid. Permissions come from the original's options.
/// Every kind of violation that applies is reported, most specific first
/// (kViolationKinds): a structural defect of the optimized graph
/// (`invalid-output`, `cycle`) stops the check, since nothing can run; races,
/// layout conflicts and the experiments' differences are all collected.
CheckResult checkRefinement(const Module &original, const Module &optimized,
                            const CheckOptions &opts);

/// The same for an optimized graph given as text, as a pass or any tool
/// wrote it. The original is the user's input (its defects give Invalid);
/// the optimized text is the tool's output, so any defect of it -- a syntax
/// error, a dangling or duplicated name, a cycle, a subgraph that no longer
/// matches its holder, a port that does not exist -- is a violation
/// (`invalid-output`, or `cycle`) located at opts.optimizedName:LINE:COL.
CheckResult checkRefinementOfText(const Module &original, std::string_view optimizedText,
                                  const CheckOptions &opts);

/// Which graphs of `m` ran in the experiments a check with `opts` performs
/// on the original (opts.numStates seeded states, both runs of each), indexed
/// by GraphId: false for a branch never taken and a loop body never entered,
/// so values there were never tested. A call body counts as its caller's
/// graph. Empty when `m` cannot run (malformed, cyclic, faulting).
std::vector<bool> executedGraphs(const Module &m, const CheckOptions &opts);

/// `graphvet check --pair ORIGINAL OPTIMIZED --seed S`, plus `--arithmetics N`
/// when the check ran under more than the documented mix (N > 1).
std::string replayPairCommand(const std::string &original, const std::string &optimized,
                              uint64_t seed, unsigned arithmetics = 1);
/// `graphvet check FILE --passes LIST --seed S` (LIST omitted when empty),
/// plus `--arithmetics N` when N > 1.
std::string replayPassesCommand(const std::string &file, const std::string &passes, uint64_t seed,
                                unsigned arithmetics = 1);

/// The distinct kinds of r.violations, in report order (most specific first).
std::vector<std::string> violationKindsOf(const CheckResult &r);

/// Multi-line human-readable report (verdict, each violation, replay).
std::string formatResult(const CheckResult &r);

} // namespace graphvet::oracle
