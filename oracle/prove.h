// `graphvet prove`: an Alive-style proof of the simplify pass's rewrite
// rules (src/ir/rewrite_rule.h). Every instance a rule declares is
// instantiated (concrete shapes and dtypes, symbolic element values), both
// sides are encoded in Z3 (oracle/smt_rules.cpp) and the solver looks for an
// input on which the replacement does not refine the original
// (tensor-semantics.md §7). The verdict is then compared with the rule's
// precondition: a refuted instance the precondition allows is a bug (a
// disagreement), a proved one it refuses is a missed rewrite. Every
// counterexample is replayed with the interpreter's kernels; one that does
// not replay is an encoder error. No solver types in this header.
#pragma once

#include "ir/rewrite_rule.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace graphvet::oracle {

enum class ProofVerdict : uint8_t {
  Proved,       ///< the replacement refines the original on every input
  Refuted,      ///< a counterexample exists (and replays)
  Inconclusive, ///< the solver timed out or answered unknown: never a proof
  Error,        ///< the instance is ill-formed or the encoder is wrong
};
std::string_view proofVerdictName(ProofVerdict v); ///< "proved", ...

/// What the precondition's answer and the verdict say together.
enum class ProofFinding : uint8_t {
  None,                ///< allowed+proved, refused+refuted
  Disagreement,        ///< allowed but refuted: the rule is unsound (a bug)
  MissedRewrite,       ///< refused but proved: the precondition is too strict
  InconclusiveAllowed, ///< allowed but not proved in time
  RefusedInconclusive, ///< refused and not decided (harmless)
  EncoderError,        ///< verdict Error
};
std::string_view proofFindingName(ProofFinding f); ///< "disagreement", ...

/// One named input or output element of a counterexample, as text.
struct CounterexampleValue {
  std::string name;                  ///< "x", "original", "replacement"
  std::string type;                  ///< "f32[1]"
  std::vector<std::string> elements; ///< elementText of each element
};

struct Counterexample {
  std::string reason; ///< set when the result types differ
  std::vector<CounterexampleValue> inputs;
  int64_t element = -1;              ///< flat output element that differs
  std::string original, replacement; ///< the two results at `element` (replayed)
};

struct InstanceProof {
  std::string label;
  ProofVerdict verdict = ProofVerdict::Error;
  bool allowed = false;
  ProofFinding finding = ProofFinding::None;
  std::optional<Counterexample> counterexample;
  std::string note; ///< why inconclusive / the error
  bool bySimplification = false;
  double ms = 0; ///< wall time spent (reports only; no decision reads it)
};

struct RuleProof {
  std::string name;
  std::vector<InstanceProof> instances;
  unsigned proved = 0, refuted = 0, inconclusive = 0, errors = 0;
  unsigned disagreements = 0, missed = 0;
};

struct ProveOptions {
  unsigned timeoutMs = 10000; ///< per solver query
  /// Z3's resource limit per solver query (0: none). Unlike the timeout it
  /// counts work, not time, so a query stops at the same point on any
  /// machine (the test of an exhausted budget uses it).
  unsigned rlimit = 0;
  unsigned jobs = 1; ///< worker threads (each with its own Z3 context)
};

struct ProveReport {
  std::vector<RuleProof> rules;
  unsigned instances = 0, proved = 0, refuted = 0, inconclusive = 0, errors = 0;
  unsigned disagreements = 0, missed = 0, inconclusiveAllowed = 0;
  double seconds = 0;
  /// 1 on a disagreement or an encoder error, else 3 when an allowed
  /// instance is inconclusive, else 0.
  int exitCode() const;
};

/// Proves one instance of `rule`.
InstanceProof proveInstance(const rewrite::Rule &rule, const rewrite::Instance &inst,
                            const ProveOptions &opts);

/// Proves every instance of every rule given, in order (results are in rule
/// and instance order whatever the number of jobs).
ProveReport proveRules(std::span<const rewrite::Rule *const> rules, const ProveOptions &opts);

/// Text report: per rule a line of counts, then each refuted, inconclusive,
/// errored or missed instance (all instances when `all`), then the summary.
std::string proveReportText(const ProveReport &r, bool all);

/// "N instances: P proved, R refuted, I inconclusive; D disagreements, M
/// missed rewrites" (with ", E errors" when any).
std::string proveSummaryLine(const ProveReport &r);

} // namespace graphvet::oracle
