// `graphvet prove`'s driver (oracle/prove.h): instantiate each instance,
// check result types, ask smt_rules.cpp for a non-refinement, replay the
// counterexample with the kernels, and weigh the verdict against the rule's
// precondition. Instances run on worker threads; results keep rule and
// instance order.
#include "oracle/prove.h"

#include "oracle/rule_instance.h"
#include "oracle/smt_rules.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace graphvet::oracle {
namespace {

CounterexampleValue valueText(std::string name, const Tensor &t) {
  CounterexampleValue v{std::move(name), t.type().str(), {}};
  for (int64_t i = 0; i < t.size(); ++i)
    v.elements.push_back(elementText(t, i));
  return v;
}

/// Whether element k of the replacement fails to refine the original's.
bool violates(const Tensor &orig, const Tensor &repl, int64_t k) {
  if (orig.isUndef(k))
    return false;
  return repl.isUndef(k) || !elementsEqual(orig.dtype(), orig.at(k), repl.at(k));
}

ProofFinding findingOf(ProofVerdict v, bool allowed) {
  switch (v) {
  case ProofVerdict::Proved:
    return allowed ? ProofFinding::None : ProofFinding::MissedRewrite;
  case ProofVerdict::Refuted:
    return allowed ? ProofFinding::Disagreement : ProofFinding::None;
  case ProofVerdict::Inconclusive:
    return allowed ? ProofFinding::InconclusiveAllowed : ProofFinding::RefusedInconclusive;
  case ProofVerdict::Error:
    return ProofFinding::EncoderError;
  }
  return ProofFinding::None;
}

/// Decides the verdict of one instance (without the precondition).
void decide(const rewrite::Rule &rule, const rewrite::Instance &inst, const ProveOptions &opts,
            InstanceProof &out) {
  std::string error, replacementError;
  std::optional<InstGraph> g = instantiate(rule, inst, error, replacementError);
  if (!g) {
    out.verdict = ProofVerdict::Error;
    out.note = error;
    return;
  }
  if (!replacementError.empty()) {
    out.verdict = ProofVerdict::Refuted;
    out.counterexample = Counterexample{replacementError, {}, -1, {}, {}};
    return;
  }
  const TensorType &to = g->typeOf(g->original), &tr = g->typeOf(g->replacement);
  if (to != tr) {
    out.verdict = ProofVerdict::Refuted;
    out.counterexample = Counterexample{
        fmt::format("the result types differ: original {}, replacement {}", to.str(), tr.str()),
        {},
        -1,
        {},
        {}};
    return;
  }
  SmtRefinement smt = checkRefinement(*g, opts.timeoutMs, opts.rlimit);
  switch (smt.kind) {
  case SmtRefinement::Kind::Proved:
    out.verdict = ProofVerdict::Proved;
    out.bySimplification = smt.bySimplification;
    return;
  case SmtRefinement::Kind::Unknown:
    out.verdict = ProofVerdict::Inconclusive;
    out.note = smt.note.empty() ? "unknown" : smt.note;
    return;
  case SmtRefinement::Kind::Error:
    out.verdict = ProofVerdict::Error;
    out.note = smt.note;
    return;
  case SmtRefinement::Kind::Refuted:
    break;
  }
  // Replay the witness with the kernels: it must really break refinement.
  Counterexample cex;
  for (int id : g->operands) {
    const InstNode &n = g->nodes[static_cast<size_t>(id)];
    cex.inputs.push_back(valueText(n.name, smt.inputs.at(n.name)));
  }
  cex.element = smt.element;
  auto values = evaluateInstance(*g, smt.inputs, error);
  if (!values) {
    out.verdict = ProofVerdict::Error;
    out.note = "the counterexample does not replay: " + error;
    out.counterexample = std::move(cex);
    return;
  }
  const Tensor &ro = (*values)[static_cast<size_t>(g->original.node)][g->original.port];
  const Tensor &rr = (*values)[static_cast<size_t>(g->replacement.node)][g->replacement.port];
  if (smt.element >= 0 && smt.element < ro.size()) {
    cex.original = elementText(ro, smt.element);
    cex.replacement = elementText(rr, smt.element);
  }
  out.counterexample = std::move(cex);
  if (smt.element < 0 || smt.element >= ro.size() || ro.type() != rr.type() ||
      !violates(ro, rr, smt.element)) {
    out.verdict = ProofVerdict::Error;
    out.note = "encoder bug: the solver's counterexample does not replay with the kernels "
               "(the two sides agree there)";
    return;
  }
  out.verdict = ProofVerdict::Refuted;
}

std::string inputsText(const Counterexample &c) {
  std::string s;
  for (const CounterexampleValue &v : c.inputs) {
    s += s.empty() ? "" : ", ";
    if (v.elements.size() == 1) {
      s += v.name + " = " + v.elements[0];
    } else {
      s += v.name + " = [";
      for (size_t i = 0; i < v.elements.size(); ++i)
        s += (i ? ", " : "") + v.elements[i];
      s += "]";
    }
  }
  return s;
}

std::string instanceLine(const InstanceProof &p) {
  std::string tag;
  switch (p.finding) {
  case ProofFinding::Disagreement:
    tag = "DISAGREEMENT";
    break;
  case ProofFinding::MissedRewrite:
    tag = "missed rewrite";
    break;
  case ProofFinding::EncoderError:
    tag = "ERROR";
    break;
  default:
    tag = std::string(proofVerdictName(p.verdict));
  }
  std::string line = fmt::format("  [{}] {} ({}, {})", tag, p.label, proofVerdictName(p.verdict),
                                 p.allowed ? "allowed" : "refused");
  if (!p.note.empty())
    line += ": " + p.note;
  if (p.counterexample) {
    const Counterexample &c = *p.counterexample;
    if (!c.reason.empty())
      line += ": " + c.reason;
    if (!c.inputs.empty())
      line += ": " + inputsText(c);
    if (c.element >= 0)
      line += fmt::format("; element {}: original {}, replacement {}", c.element, c.original,
                          c.replacement);
  }
  return line;
}

} // namespace

std::string_view proofVerdictName(ProofVerdict v) {
  switch (v) {
  case ProofVerdict::Proved:
    return "proved";
  case ProofVerdict::Refuted:
    return "refuted";
  case ProofVerdict::Inconclusive:
    return "inconclusive";
  case ProofVerdict::Error:
    return "error";
  }
  return "?";
}

std::string_view proofFindingName(ProofFinding f) {
  switch (f) {
  case ProofFinding::None:
    return "none";
  case ProofFinding::Disagreement:
    return "disagreement";
  case ProofFinding::MissedRewrite:
    return "missed rewrite";
  case ProofFinding::InconclusiveAllowed:
    return "inconclusive allowed";
  case ProofFinding::RefusedInconclusive:
    return "inconclusive refused";
  case ProofFinding::EncoderError:
    return "encoder error";
  }
  return "?";
}

int ProveReport::exitCode() const {
  if (disagreements || errors)
    return 1;
  return inconclusiveAllowed ? 3 : 0;
}

InstanceProof proveInstance(const rewrite::Rule &rule, const rewrite::Instance &inst,
                            const ProveOptions &opts) {
  auto start = std::chrono::steady_clock::now();
  InstanceProof out;
  out.label = inst.label;
  try {
    out.allowed = rule.allows && rule.allows(inst.binding);
    decide(rule, inst, opts, out);
  } catch (const std::exception &e) {
    out.verdict = ProofVerdict::Error;
    out.note = std::string("exception: ") + e.what();
  }
  out.finding = findingOf(out.verdict, out.allowed);
  out.ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

ProveReport proveRules(std::span<const rewrite::Rule *const> rules, const ProveOptions &opts) {
  auto start = std::chrono::steady_clock::now();
  ProveReport report;
  struct Job {
    size_t rule;
    size_t index;
  };
  std::vector<std::vector<rewrite::Instance>> instances;
  std::vector<Job> jobs;
  for (size_t r = 0; r < rules.size(); ++r) {
    instances.push_back(rules[r]->instances ? rules[r]->instances()
                                            : std::vector<rewrite::Instance>{});
    RuleProof rp;
    rp.name = std::string(rules[r]->name);
    rp.instances.resize(instances.back().size());
    report.rules.push_back(std::move(rp));
    for (size_t i = 0; i < instances.back().size(); ++i)
      jobs.push_back({r, i});
  }
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t j; (j = next.fetch_add(1)) < jobs.size();) {
      const Job &job = jobs[j];
      report.rules[job.rule].instances[job.index] =
          proveInstance(*rules[job.rule], instances[job.rule][job.index], opts);
    }
  };
  unsigned n = std::max(1u, std::min<unsigned>(opts.jobs, static_cast<unsigned>(jobs.size())));
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < n; ++t)
    threads.emplace_back(worker);
  worker();
  for (std::thread &t : threads)
    t.join();
  for (RuleProof &rp : report.rules) {
    for (const InstanceProof &p : rp.instances) {
      rp.proved += p.verdict == ProofVerdict::Proved;
      rp.refuted += p.verdict == ProofVerdict::Refuted;
      rp.inconclusive += p.verdict == ProofVerdict::Inconclusive;
      rp.errors += p.verdict == ProofVerdict::Error;
      rp.disagreements += p.finding == ProofFinding::Disagreement;
      rp.missed += p.finding == ProofFinding::MissedRewrite;
      report.inconclusiveAllowed += p.finding == ProofFinding::InconclusiveAllowed;
    }
    report.instances += static_cast<unsigned>(rp.instances.size());
    report.proved += rp.proved;
    report.refuted += rp.refuted;
    report.inconclusive += rp.inconclusive;
    report.errors += rp.errors;
    report.disagreements += rp.disagreements;
    report.missed += rp.missed;
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

std::string proveSummaryLine(const ProveReport &r) {
  std::string s = fmt::format("{} instances: {} proved, {} refuted, {} inconclusive", r.instances,
                              r.proved, r.refuted, r.inconclusive);
  if (r.errors)
    s += fmt::format(", {} errors", r.errors);
  return s + fmt::format("; {} disagreements, {} missed rewrites", r.disagreements, r.missed);
}

std::string proveReportText(const ProveReport &r, bool all) {
  std::string out;
  for (const RuleProof &rp : r.rules) {
    out += fmt::format("{}: {} instances: {} proved, {} refuted, {} inconclusive", rp.name,
                       rp.instances.size(), rp.proved, rp.refuted, rp.inconclusive);
    if (rp.errors)
      out += fmt::format(", {} errors", rp.errors);
    out += fmt::format("; {} disagreements, {} missed rewrites\n", rp.disagreements, rp.missed);
    for (const InstanceProof &p : rp.instances)
      if (all || p.verdict != ProofVerdict::Proved || p.finding != ProofFinding::None)
        out += instanceLine(p) + "\n";
  }
  return out + proveSummaryLine(r) + "\n";
}

} // namespace graphvet::oracle
