// The verdict. Each module is analysed once (verifier, memory plan, domains,
// races); the original must be valid; then the optimized module is checked
// in the documented order and the first stage that finds violations decides.
// Budgets (Z3, interpreter steps) give `inconclusive`, never `sound`.
#include "oracle/check.h"

#include <cmath>
#include <cstring>

#include "ir/op_library.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "oracle/inlined.h"
#include "oracle/interpreter.h"
#include "oracle/memory_plan.h"
#include "oracle/permissions.h"
#include "oracle/races.h"
#include "oracle/smt_order.h"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <set>

namespace graphvet::oracle {

std::string_view verdictName(Verdict v) {
  switch (v) {
  case Verdict::Sound:
    return "sound";
  case Verdict::Violation:
    return "violation";
  case Verdict::Inconclusive:
    return "inconclusive";
  case Verdict::Invalid:
    return "invalid";
  }
  return "?";
}

size_t violationRank(std::string_view kind) {
  for (size_t i = 0; i < std::size(kViolationKinds); ++i)
    if (kViolationKinds[i] == kind)
      return i;
  return std::size(kViolationKinds);
}

namespace {

constexpr size_t kMaxViolations = 16;
constexpr size_t kMaxHexBytes = 64;
/// Beyond this many conflicting pairs the proof query alone would exhaust
/// any reasonable budget; the check says so instead of trying.
constexpr size_t kMaxZ3Pairs = 100000;

/// Experiments per module: every state under every arithmetic variant.
unsigned experimentCount(const CheckOptions &opts) {
  return std::max(1u, opts.numStates) * std::max(1u, opts.arithmetics);
}

/// State 0 is the seed itself, so `graphvet run --seed S` shows the bytes a
/// check with --seed S reports; further states derive from it.
uint64_t stateSeed(uint64_t seed, unsigned state) {
  if (state == 0)
    return seed;
  uint64_t x = seed * 0x9E3779B97F4A7C15ULL + state;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ULL;
  return x ^ (x >> 29);
}

std::string hexOf(const Bytes &b) {
  if (b.size() <= kMaxHexBytes)
    return toHex(b);
  return toHex(Bytes(b.begin(), b.begin() + kMaxHexBytes)) + fmt::format("...({} bytes)", b.size());
}

std::string expectedGot(const Bytes &a, const Bytes &b) {
  return fmt::format("expected {} got {}", a.empty() ? "(empty)" : hexOf(a),
                     b.empty() ? "(empty)" : hexOf(b));
}

/// A structural defect: the verifier's message and where it is.
struct Defect {
  SourceLoc loc;
  std::string message;
};

/// One module, analysed once. Heap-allocated so the interpreter's references
/// stay valid.
struct Analysis {
  const Module *m = nullptr;
  std::vector<Defect> malformed;
  std::vector<Violation> cycles;
  std::vector<SourceLoc> cycleLocs; ///< where each of `cycles` starts (may be unknown)
  MemoryPlan plan;
  InlinedModule inl;
  std::unique_ptr<Interpreter> interp;
  bool usable() const { return malformed.empty() && cycles.empty(); }
};

std::string diagText(const Defect &d) {
  if (d.loc.line)
    return fmt::format("{}:{}: {}", d.loc.line, d.loc.col, d.message);
  return d.message;
}

std::string locationOf(const std::string &file, SourceLoc loc) {
  if (!loc.line)
    return file;
  return fmt::format("{}:{}:{}", file, loc.line, loc.col);
}

std::unique_ptr<Analysis> analyze(const Module &m) {
  auto a = std::make_unique<Analysis>();
  a->m = &m;
  std::vector<Defect> verifierCycles;
  for (const Diagnostic &d : verifyModule(m)) {
    if (d.severity != Severity::Error)
      continue;
    if (d.message.find("cycle through") != std::string::npos)
      verifierCycles.push_back({d.loc, d.message});
    else
      a->malformed.push_back({d.loc, d.message});
  }
  // A module whose bookkeeping is broken cannot be walked safely.
  if (!a->malformed.empty())
    return a;
  a->plan = MemoryPlan::build(m);
  a->inl = InlinedModule::build(m, a->plan);
  for (DomainId d = 0; d < a->inl.domains.size(); ++d) {
    const Domain &dom = a->inl.domains[d];
    if (dom.cycle.empty())
      continue;
    Violation v;
    v.kind = "cycle";
    v.nodes = a->inl.names(d, dom.cycle);
    std::string path;
    for (const std::string &n : v.nodes)
      path += (path.empty() ? "" : " -> ") + n;
    v.message = "no schedule exists: cycle " + path;
    const Step &first = dom.steps[dom.cycle.front()];
    a->cycleLocs.push_back(m.graph(first.graph).node(first.node).loc);
    a->cycles.push_back(std::move(v));
  }
  if (a->cycles.empty())
    for (const Defect &c : verifierCycles) {
      a->cycles.push_back({"cycle", {}, {}, {}, {}, "no schedule exists: " + c.message});
      a->cycleLocs.push_back(c.loc);
    }
  if (!a->cycles.empty())
    return a;
  for (const std::string &e : a->plan.errors())
    a->malformed.push_back({{}, "memory plan: " + e});
  for (const std::string &e : a->inl.errors)
    a->malformed.push_back({{}, e});
  if (a->malformed.empty())
    a->interp = std::make_unique<Interpreter>(m, a->plan, a->inl);
  return a;
}

std::vector<std::string> labels(const MemoryPlan &plan, const std::vector<BufferId> &bufs) {
  std::vector<std::string> out;
  for (BufferId b : bufs)
    out.push_back(plan.buffers()[b].label);
  return out;
}

// -- observation differences ---------------------------------------------------

struct Difference {
  std::string kind; ///< "output", "variable", "input", "caller", "weight"
  std::string name; ///< "output 0", "var:v", "input1", ...
  Bytes expected, got;
  int64_t index = -1;   ///< output / input index
  std::string elements; ///< the first differing elements, with values and bits
};

/// `[1, 2]` for flat index 5 of shape [2, 3]; the flat index without a shape.
std::string elementIndex(int64_t flat, const Shape &shape) {
  if (shape.empty())
    return std::to_string(flat);
  Shape idx(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    int64_t d = std::max<int64_t>(shape[i], 1);
    idx[i] = flat % d;
    flat /= d;
  }
  return shapeStr(idx);
}

std::string elementText(DType t, const uint8_t *p) {
  std::string bits;
  for (uint32_t b = dtypeBytes(t); b-- > 0;)
    bits += fmt::format("{:02x}", p[b]);
  auto text = formatElement(t, p);
  return fmt::format("{} (0x{})", text ? *text : std::string("nan"), bits);
}

/// Does `y` refine `x` (tensor-semantics.md §7)? Element by element of the
/// original's dtype: equal bit for bit, or both NaN, or the original's
/// element indeterminate, or (under the `approx` contract, when the view
/// carries tolerances) within the element's derived bound. Records the first
/// differing elements in `detail`.
/// An order-preserving integer of a float element's bits (adjacent floats
/// differ by 1), for distances in ulps.
int64_t orderedBits(DType t, const uint8_t *p) {
  uint32_t w = dtypeBytes(t);
  uint64_t bits = 0;
  std::memcpy(&bits, p, std::min<uint32_t>(w, 8));
  uint64_t sign = uint64_t{1} << (8 * w - 1);
  auto magnitude = static_cast<int64_t>(bits & (sign - 1));
  return (bits & sign) ? -magnitude : magnitude;
}

/// Adds element `i` (original `a`, optimized `b`, bound `bound`) to `m`.
void recordMargin(ApproxMargin &m, DType t, const uint8_t *a, const uint8_t *b, double bound) {
  ++m.elements;
  if (elementsEqual(t, a, b))
    return;
  ++m.moved;
  double x = loadDouble(t, a), y = loadDouble(t, b);
  if (!std::isfinite(x) || !std::isfinite(y))
    return;
  double distance = std::fabs(x - y);
  m.maxDistance = std::max(m.maxDistance, distance);
  if (x != 0)
    m.maxRelative = std::max(m.maxRelative, distance / std::fabs(x));
  int64_t ulps = orderedBits(t, a) - orderedBits(t, b);
  m.maxUlps = std::max(m.maxUlps, static_cast<uint64_t>(ulps < 0 ? -ulps : ulps));
  if (bound > 0 && std::isfinite(bound) && distance / bound > m.worstRatio) {
    m.worstRatio = distance / bound;
    m.distanceAtWorst = distance;
    m.boundAtWorst = bound;
  }
}

bool refinesLocation(const Bytes &x, const Bytes &y, const ElementView *view, std::string &detail,
                     ApproxMargin *margin = nullptr) {
  if (x.size() != y.size() || !view)
    return x == y;
  DType t = view->dtype;
  uint32_t w = dtypeBytes(t);
  if (w == 0 || x.size() % w != 0)
    return x == y;
  bool same = true;
  int shown = 0;
  for (size_t i = 0; i < x.size() / w; ++i) {
    const uint8_t *a = x.data() + i * w, *b = y.data() + i * w;
    bool undef =
        !view->undef.empty() && std::any_of(view->undef.begin() + static_cast<long>(i * w),
                                            view->undef.begin() + static_cast<long>((i + 1) * w),
                                            [](uint8_t u) { return u != 0; });
    if (margin && !undef && isFloat(t) && !view->tolerance.empty())
      recordMargin(*margin, t, a, b, i < view->tolerance.size() ? view->tolerance[i] : 0);
    if (undef || elementsEqual(t, a, b))
      continue;
    double bound = i < view->tolerance.size() ? view->tolerance[i] : 0;
    double distance = bound > 0 ? std::fabs(loadDouble(t, a) - loadDouble(t, b)) : 0;
    if (bound > 0 && (std::isinf(bound) || distance <= bound))
      continue;
    same = false;
    if (shown++ < 4) {
      detail += fmt::format("{}element {}: expected {}, got {}", detail.empty() ? "" : "; ",
                            elementIndex(static_cast<int64_t>(i), view->shape), elementText(t, a),
                            elementText(t, b));
      if (bound > 0)
        detail +=
            fmt::format(" (distance {:.6g} exceeds the approx bound {:.6g})", distance, bound);
    }
  }
  if (shown > 4)
    detail += fmt::format("; {} more", shown - 4);
  return same;
}

std::vector<Difference> differences(const Observation &a, const Observation &b,
                                    ApproxMargin *margin = nullptr) {
  std::vector<Difference> out;
  size_t outputs = std::max(a.outputs.size(), b.outputs.size());
  for (size_t k = 0; k < outputs; ++k) {
    const Bytes empty;
    const Bytes &x = k < a.outputs.size() ? a.outputs[k] : empty;
    const Bytes &y = k < b.outputs.size() ? b.outputs[k] : empty;
    const ElementView *view = k < a.outputViews.size() ? &a.outputViews[k] : nullptr;
    const ElementView *viewB = k < b.outputViews.size() ? &b.outputViews[k] : nullptr;
    std::string detail;
    // An output's type is observable too: the same bytes as another shape
    // (a Reshape appended, a layout change left half done) or another dtype
    // are not the same tensor.
    if (view && viewB && !x.empty() && !y.empty() &&
        (view->dtype != viewB->dtype || view->shape != viewB->shape)) {
      detail = fmt::format("the output's type changed from {}{} to {}{}", dtypeName(view->dtype),
                           shapeStr(view->shape), dtypeName(viewB->dtype), shapeStr(viewB->shape));
      out.push_back({"output", fmt::format("output {}", k), x, y, static_cast<int64_t>(k), detail});
      continue;
    }
    if (!refinesLocation(x, y, view, detail, margin))
      out.push_back({"output", fmt::format("output {}", k), x, y, static_cast<int64_t>(k), detail});
  }
  auto byKey = [&](const auto &xs, const auto &ys, const char *kind, auto name) {
    for (const auto &[key, bytes] : xs)
      for (const auto &[key2, bytes2] : ys) {
        if (key != key2)
          continue;
        std::string label = name(key), detail;
        auto it = a.views.find(label);
        if (refinesLocation(bytes, bytes2, it == a.views.end() ? nullptr : &it->second, detail))
          continue;
        Difference d{kind, label, bytes, bytes2, -1, detail};
        if constexpr (std::is_integral_v<std::decay_t<decltype(key)>>)
          d.index = key;
        out.push_back(std::move(d));
      }
  };
  byKey(a.variables, b.variables, "variable", [](const std::string &k) { return "var:" + k; });
  byKey(a.inputs, b.inputs, "input", [](int64_t k) { return fmt::format("input{}", k); });
  byKey(a.callerMemory, b.callerMemory, "caller",
        [](const std::string &k) { return "caller:" + k; });
  byKey(a.weights, b.weights, "weight", [](const std::string &k) { return "weight:" + k; });
  return out;
}

std::string summarize(const std::vector<Difference> &diffs) {
  std::string out;
  for (const Difference &d : diffs) {
    if (!out.empty())
      out += "; ";
    out += d.name + ": " + expectedGot(d.expected, d.got);
    if (out.size() > 600) {
      out += "; ...";
      break;
    }
  }
  return out;
}

// -- races ---------------------------------------------------------------------

struct RaceFindings {
  std::vector<Violation> races;
  bool inconclusive = false;
  std::string reason;
  unsigned queries = 0;
};

std::vector<StepIndex> domainOrderFromPositions(const Domain &d, uint32_t base,
                                                const std::vector<int64_t> &positions) {
  std::vector<int64_t> local(positions.begin() + base,
                             positions.begin() + base + static_cast<long>(d.steps.size()));
  std::vector<uint32_t> order = scheduleFromPositions(local);
  return std::vector<StepIndex>(order.begin(), order.end());
}

bool validOrder(const Domain &d, const std::vector<StepIndex> &order) {
  if (order.size() != d.steps.size())
    return false;
  std::vector<uint32_t> pos(order.size(), UINT32_MAX);
  for (uint32_t i = 0; i < order.size(); ++i) {
    if (order[i] >= order.size() || pos[order[i]] != UINT32_MAX)
      return false;
    pos[order[i]] = i;
  }
  for (StepIndex s = 0; s < d.succ.size(); ++s)
    for (StepIndex t : d.succ[s])
      if (pos[s] >= pos[t])
        return false;
  return true;
}

RaceFindings findRaces(Analysis &a, const CheckOptions &opts, bool useZ3) {
  RaceFindings f;
  RaceAnalysis ra = analyzeRaces(a.inl);
  const auto &domains = a.inl.domains;
  std::vector<bool> race(ra.conflicts.size(), false);
  for (size_t i = 0; i < ra.conflicts.size(); ++i)
    race[i] = ra.conflicts[i].unordered;

  if (useZ3 && ra.conflicts.size() > kMaxZ3Pairs) {
    f.inconclusive = true;
    f.reason = fmt::format("{} conflicting pairs: too many to prove with Z3 (limit {})",
                           ra.conflicts.size(), kMaxZ3Pairs);
  } else if (useZ3 && !ra.conflicts.empty()) {
    OrderProblem p;
    std::vector<uint32_t> base(domains.size(), 0);
    for (DomainId d = 0; d < domains.size(); ++d) {
      base[d] = p.numNodes;
      p.numNodes += static_cast<uint32_t>(domains[d].steps.size());
      for (StepIndex s = 0; s < domains[d].succ.size(); ++s)
        for (StepIndex t : domains[d].succ[s])
          p.edges.push_back({base[d] + s, base[d] + t});
      for (StepIndex s : domains[d].reference)
        p.reference.push_back(base[d] + s);
    }
    for (const Conflict &c : ra.conflicts)
      p.pairs.push_back({base[c.domain] + c.first, base[c.domain] + c.second});
    OrderAnswer ans = solveOrder(p, opts.z3TimeoutMs);
    f.queries = ans.queries;
    for (size_t i = 0; i < ra.conflicts.size(); ++i) {
      const Conflict &c = ra.conflicts[i];
      const Domain &dom = domains[c.domain];
      switch (ans.pairs[i]) {
      case PairOrder::Ordered:
        if (c.unordered) {
          f.inconclusive = true;
          f.reason = fmt::format("internal disagreement: Z3 proves {} and {} ordered, "
                                 "reachability does not",
                                 dom.steps[c.first].name, dom.steps[c.second].name);
        }
        break;
      case PairOrder::Unordered: {
        auto w1 = domainOrderFromPositions(dom, base[c.domain], ans.aFirst[i]);
        auto w2 = domainOrderFromPositions(dom, base[c.domain], ans.bFirst[i]);
        auto before = [](const std::vector<StepIndex> &o, StepIndex x, StepIndex y) {
          return std::find(o.begin(), o.end(), x) < std::find(o.begin(), o.end(), y);
        };
        if (!c.unordered || !validOrder(dom, w1) || !validOrder(dom, w2) ||
            !before(w1, c.first, c.second) || !before(w2, c.second, c.first)) {
          f.inconclusive = true;
          f.reason = fmt::format("internal disagreement: Z3 finds {} and {} unordered, "
                                 "reachability does not",
                                 dom.steps[c.first].name, dom.steps[c.second].name);
          race[i] = false;
          break;
        }
        // The models prove both orders possible; the reported witnesses are
        // the canonical schedules for each order (built below), because a
        // model depends on the solver's history and output must not.
        if (!(validOrder(dom, orderWith(dom, c.first, c.second)) &&
              validOrder(dom, orderWith(dom, c.second, c.first)))) {
          f.inconclusive = true;
          f.reason = "internal error: no canonical witness for a race Z3 found";
          race[i] = false;
        }
        break;
      }
      case PairOrder::Unknown:
        if (!c.unordered) {
          f.inconclusive = true;
          f.reason =
              fmt::format("Z3 budget ({} ms) exhausted before proving {} and {} "
                          "ordered{}",
                          opts.z3TimeoutMs, dom.steps[c.first].name, dom.steps[c.second].name,
                          ans.note.empty() ? "" : " (" + ans.note + ")");
        }
        break;
      }
    }
  }

  uint64_t seed0 = stateSeed(opts.seed, 0);
  for (size_t i = 0; i < ra.conflicts.size() && f.races.size() < kMaxViolations; ++i) {
    if (!race[i])
      continue;
    const Conflict &c = ra.conflicts[i];
    const Domain &dom = domains[c.domain];
    std::vector<StepIndex> w1 = orderWith(dom, c.first, c.second);
    std::vector<StepIndex> w2 = orderWith(dom, c.second, c.first);
    Violation v;
    v.kind = "race";
    v.nodes = {dom.steps[c.first].name, dom.steps[c.second].name};
    v.buffers = labels(a.plan, c.buffers);
    v.schedules = {a.inl.names(c.domain, w1), a.inl.names(c.domain, w2)};
    std::string bufs;
    for (const std::string &b : v.buffers)
      bufs += (bufs.empty() ? "" : ", ") + b;
    v.message = fmt::format("{} and {} both access {} (at least one writes) and no data or "
                            "control edge orders them",
                            v.nodes[0], v.nodes[1], bufs);
    if (a.interp) {
      DomainOrders o1(domains.size()), o2(domains.size());
      o1[c.domain] = w1;
      o2[c.domain] = w2;
      RunOutcome r1 = a.interp->runOnce(seed0, o1);
      RunOutcome r2 = a.interp->runOnce(seed0, o2);
      if (r1.crashed || r2.crashed || r1.budgetExceeded || r2.budgetExceeded) {
        v.bytes = "the witness runs did not finish";
      } else {
        auto diffs = differences(r1.observation, r2.observation);
        v.bytes = diffs.empty() ? fmt::format("no byte difference for seed {} (the race is still a "
                                              "violation: another state may differ)",
                                              opts.seed)
                                : "schedule 1 vs schedule 2: " + summarize(diffs);
      }
    }
    f.races.push_back(std::move(v));
  }
  return f;
}

// -- the original --------------------------------------------------------------

struct OriginalState {
  std::unique_ptr<Analysis> a;
  std::vector<ExperimentResult> experiments;
};

/// Fills `r` and returns false when the original is not usable.
bool validateOriginal(OriginalState &o, const Module &m, const CheckOptions &opts, CheckResult &r) {
  o.a = analyze(m);
  Analysis &a = *o.a;
  if (!a.malformed.empty()) {
    r.verdict = Verdict::Invalid;
    r.reason = "the original is malformed: " + diagText(a.malformed.front());
    for (size_t i = 0; i < a.malformed.size() && i < kMaxViolations; ++i)
      r.violations.push_back({"malformed", {}, {}, {}, {}, diagText(a.malformed[i])});
    return false;
  }
  if (!a.cycles.empty()) {
    r.verdict = Verdict::Invalid;
    r.reason = "the original has a cycle: " + a.cycles.front().message;
    r.violations = a.cycles;
    return false;
  }
  RaceFindings races = findRaces(a, opts, false);
  if (!races.races.empty()) {
    r.verdict = Verdict::Invalid;
    r.reason = "the original is racy: " + races.races.front().message;
    r.violations = std::move(races.races);
    return false;
  }
  // The approx contract's bounds come from the original's shadow evaluation.
  a.interp->setShadow(opts.contract == NumericContract::Approx);
  a.interp->setSpecials(opts.specials);
  // Every arithmetic variant, each on every state (in that order: the
  // experiments are indexed variant * states + state).
  for (unsigned i = 0; i < experimentCount(opts); ++i) {
    a.interp->setArithmetic(i / std::max(1u, opts.numStates));
    ExperimentResult e =
        a.interp->experiment(stateSeed(opts.seed, i % std::max(1u, opts.numStates)));
    if (e.crashed()) {
      r.verdict = Verdict::Invalid;
      r.reason = "the original faults in the interpreter: " + e.crash();
      r.violations.push_back({"crash", {}, {}, {}, {}, e.crash()});
      return false;
    }
    if (e.budgetExceeded()) {
      r.verdict = Verdict::Inconclusive;
      r.reason = fmt::format("the original exceeds the interpreter's budget ({} steps, {} MiB of "
                             "buffers)",
                             kStepBudget, kMaxArenaBytes >> 20);
      return false;
    }
    for (const RunOutcome *run : {&e.run1, &e.run2})
      if (!run->weightWrites.empty()) {
        const WeightWrite &w = run->weightWrites.front();
        r.verdict = Verdict::Invalid;
        r.reason = fmt::format("the original writes weight {} (in {})", w.buffer, w.node);
        r.violations.push_back({"weight-written", {w.node}, {w.buffer}, {}, {}, r.reason});
        return false;
      }
    o.experiments.push_back(std::move(e));
  }
  a.interp->setArithmetic(0);
  return true;
}

// -- refinement stages -----------------------------------------------------------

struct Interface {
  std::map<int64_t, uint32_t> inputs; ///< index -> size
  size_t outputs = 0;
  std::set<std::string> variables;
};

Interface interfaceOf(const Module &m, const MemoryPlan &plan) {
  Interface i;
  for (const BufferInfo &b : plan.buffers()) {
    if (b.kind == BufferKind::UserInput)
      i.inputs[b.inputIndex] = b.size;
    if (b.kind == BufferKind::Variable && b.declared)
      i.variables.insert(b.key);
  }
  for (NodeId n : m.root().liveNodes())
    if (opKind(m.root().node(n)) == OpKind::NetOutput)
      i.outputs = m.root().node(n).inputs.size();
  return i;
}

std::vector<std::string> interfaceDifferences(const Interface &a, const Interface &b) {
  std::vector<std::string> out;
  for (auto [k, size] : a.inputs) {
    auto it = b.inputs.find(k);
    if (it == b.inputs.end())
      out.push_back(fmt::format("user input {} is gone", k));
    else if (it->second != size)
      out.push_back(
          fmt::format("user input {} changed size from {} to {} bytes", k, size, it->second));
  }
  for (auto [k, size] : b.inputs)
    if (!a.inputs.count(k))
      out.push_back(fmt::format("user input {} is new", k));
  if (a.outputs != b.outputs)
    out.push_back(fmt::format("the graph has {} outputs, the original {}", b.outputs, a.outputs));
  for (const std::string &v : a.variables)
    if (!b.variables.count(v))
      out.push_back(fmt::format("variable {} is gone", v));
  for (const std::string &v : b.variables)
    if (!a.variables.count(v))
      out.push_back(fmt::format("variable {} is new", v));
  return out;
}

/// The root NetOutput's producer of output k, qualified ("" when none).
std::string outputProducer(const Module &m, const MemoryPlan &plan, size_t k) {
  for (NodeId n : m.root().liveNodes()) {
    const Node &node = m.root().node(n);
    if (opKind(node) != OpKind::NetOutput)
      continue;
    if (k < node.inputs.size() && node.inputs[k])
      return plan.qualifiedName(0, node.inputs[k]->node);
    return {};
  }
  return {};
}

std::optional<int64_t> inputOfLocation(const std::string &loc) {
  if (loc.rfind("input", 0) != 0 || loc.size() == 5)
    return std::nullopt;
  int64_t v = 0;
  for (size_t i = 5; i < loc.size(); ++i) {
    if (loc[i] < '0' || loc[i] > '9' || v > INT32_MAX)
      return std::nullopt;
    v = v * 10 + (loc[i] - '0');
  }
  return v;
}

std::optional<int64_t> outputOfLocation(const std::string &loc) {
  if (loc.rfind("output", 0) != 0 || loc.size() == 6)
    return std::nullopt;
  int64_t v = 0;
  for (size_t i = 6; i < loc.size(); ++i) {
    if (loc[i] < '0' || loc[i] > '9' || v > INT32_MAX)
      return std::nullopt;
    v = v * 10 + (loc[i] - '0');
  }
  return v;
}

/// May the caller see this sharing? Output-input pairs need a grant;
/// output-output pairs are permitted when both outputs share a granted input.
bool permittedAlias(const AliasPair &p, const std::vector<AliasPair> &relation,
                    const Permissions &perms) {
  if (auto k = inputOfLocation(p.location))
    return perms.mayShare(p.output, *k);
  if (auto other = outputOfLocation(p.location)) {
    for (const AliasPair &q : relation) {
      auto k = inputOfLocation(q.location);
      if (q.output != p.output || !k || !perms.mayShare(p.output, *k))
        continue;
      AliasPair mirror{static_cast<uint32_t>(*other), q.location};
      if (std::binary_search(relation.begin(), relation.end(), mirror) &&
          perms.mayShare(*other, *k))
        return true;
    }
  }
  return false;
}

void compareExperiments(const Analysis &b, const ExperimentResult &ea, const ExperimentResult &eb,
                        const Permissions &perms, const CheckOptions &opts, unsigned state,
                        unsigned arithmetic, std::vector<Violation> &out, ApproxMargin *margin) {
  std::vector<std::string> schedule = b.inl.names(0, b.inl.domains[0].reference);
  std::string stateNote =
      arithmetic != 0 ? fmt::format(" (initial state {} of seed {}, arithmetic variant {})", state,
                                    opts.seed, arithmetic)
      : state == 0    ? ""
                      : fmt::format(" (initial state {} of seed {})", state, opts.seed);
  if (eb.crashed()) {
    out.push_back({"crash", {}, {}, {schedule}, {}, "the optimized graph faults: " + eb.crash()});
    return;
  }
  // Weight writes.
  std::set<std::pair<std::string, std::string>> seen;
  for (const RunOutcome *run : {&eb.run1, &eb.run2})
    for (const WeightWrite &w : run->weightWrites)
      if (seen.insert({w.node, w.buffer}).second)
        out.push_back({"weight-written",
                       {w.node},
                       {w.buffer},
                       {schedule},
                       {},
                       fmt::format("{} writes the immutable weight {}", w.node, w.buffer)});
  // Observations, both runs.
  const RunOutcome *ra[2] = {&ea.run1, &ea.run2}, *rb[2] = {&eb.run1, &eb.run2};
  for (int run = 0; run < 2; ++run) {
    for (const Difference &d : differences(ra[run]->observation, rb[run]->observation, margin)) {
      Violation v;
      v.schedules = {schedule};
      v.bytes = expectedGot(d.expected, d.got);
      std::string when = fmt::format("after run {}{}", run + 1, stateNote);
      if (d.kind == "output") {
        v.kind = "value";
        auto k = static_cast<size_t>(d.index);
        std::string producer = outputProducer(*b.m, b.plan, k);
        if (!producer.empty())
          v.nodes.push_back(producer);
        if (k < rb[run]->observation.outputBuffers.size())
          v.buffers.push_back(rb[run]->observation.outputBuffers[k]);
        v.message = fmt::format("graph output {} differs {}", k, when);
        if (!d.elements.empty())
          v.message += ": " + d.elements;
      } else if (d.kind == "variable") {
        v.kind = "value";
        v.nodes.push_back(d.name.substr(4));
        v.buffers.push_back(d.name);
        v.message = fmt::format("variable {} differs {}", d.name.substr(4), when);
        if (!d.elements.empty())
          v.message += ": " + d.elements;
      } else if (d.kind == "input" || d.kind == "caller") {
        if (d.kind == "input" && perms.inputUnspecified(d.index))
          continue;
        v.kind = "input-clobbered";
        v.buffers.push_back(d.name);
        v.message = fmt::format("caller memory {} is changed {} and no option makes its "
                                "content unspecified",
                                d.name, when);
      } else {
        if (!seen.empty())
          continue; // already reported with the writer
        v.kind = "weight-written";
        v.buffers.push_back(d.name);
        v.message = fmt::format("weight {} changed {}", d.name, when);
      }
      out.push_back(std::move(v));
    }
  }
  // Alias relation.
  for (const AliasPair &p : eb.alias)
    if (!std::binary_search(ea.alias.begin(), ea.alias.end(), p) &&
        !permittedAlias(p, eb.alias, perms)) {
      Violation v;
      v.kind = "alias";
      std::string producer = outputProducer(*b.m, b.plan, p.output);
      if (!producer.empty())
        v.nodes.push_back(producer);
      v.buffers.push_back(p.location);
      v.schedules = {schedule};
      v.message = fmt::format(
          "overwriting graph output {} now changes {}{}", p.output, p.location,
          inputOfLocation(p.location) ? " (no memory-reuse option grants this sharing)" : "");
      out.push_back(std::move(v));
    }
  for (const AliasPair &p : ea.alias)
    if (!std::binary_search(eb.alias.begin(), eb.alias.end(), p) &&
        !permittedAlias(p, ea.alias, perms)) {
      Violation v;
      v.kind = "alias";
      v.buffers.push_back(p.location);
      v.message = fmt::format("overwriting graph output {} no longer changes {}, as it does in "
                              "the original",
                              p.output, p.location);
      out.push_back(std::move(v));
    }
}

/// Orders `found` by the kind vocabulary (most specific first, stable within
/// a kind) and keeps at most kMaxViolations of each kind, so a flood of one
/// kind never hides another.
void finish(CheckResult &r, std::vector<Violation> found) {
  std::stable_sort(found.begin(), found.end(), [](const Violation &x, const Violation &y) {
    return violationRank(x.kind) < violationRank(y.kind);
  });
  std::map<std::string, size_t> perKind;
  std::vector<Violation> kept;
  for (Violation &v : found)
    if (++perKind[v.kind] <= kMaxViolations)
      kept.push_back(std::move(v));
  r.verdict = Verdict::Violation;
  r.violations = std::move(kept);
}

/// The optimized graph's structural defects as violations located in it.
std::vector<Violation> structuralViolations(const Analysis &b, const CheckOptions &opts) {
  std::vector<Violation> out;
  for (const Defect &d : b.malformed)
    out.push_back(
        {"invalid-output", {}, {}, {}, {}, d.message, locationOf(opts.optimizedName, d.loc)});
  for (size_t i = 0; i < b.cycles.size(); ++i) {
    Violation v = b.cycles[i];
    v.location = locationOf(opts.optimizedName, b.cycleLocs[i]);
    out.push_back(std::move(v));
  }
  return out;
}

/// Layout conflicts (semantics.md §6) of the optimized graph that the
/// original did not have.
std::vector<Violation> newLayoutConflicts(const Analysis &a, const Analysis &b) {
  std::set<std::string> before;
  for (const LayoutConflict &c : layoutConflicts(*a.m, a.plan))
    before.insert(c.key());
  std::vector<Violation> layout;
  for (const LayoutConflict &c : layoutConflicts(*b.m, b.plan)) {
    if (before.count(c.key()))
      continue;
    Violation v;
    v.kind = "layout";
    if (!c.node.empty())
      v.nodes.push_back(c.node);
    v.buffers.push_back(c.buffer);
    if (c.kind == "output+weight")
      v.message = fmt::format("graph output bound to the immutable weight {}", c.buffer);
    else
      v.message =
          fmt::format("{} is {} and an input of {}, which needs contiguous inputs", c.buffer,
                      c.kind == "input+continuous"      ? "caller-owned user memory"
                      : c.kind == "weight+continuous"   ? "an immutable weight"
                      : c.kind == "variable+continuous" ? "a variable (fixed address)"
                                                        : "a graph output",
                      c.node);
    layout.push_back(std::move(v));
  }
  return layout;
}

CheckResult refine(const Module &original, const Module &optimized, const CheckOptions &opts) {
  CheckResult r;
  r.contract = opts.contract;
  Permissions perms = parsePermissions(original.options);
  r.warnings = perms.warnings;
  OriginalState o;
  // An invalid original keeps its violations: they say what is wrong with it.
  if (!validateOriginal(o, original, opts, r))
    return r;
  Analysis &a = *o.a;
  std::unique_ptr<Analysis> bp;
  try {
    bp = analyze(optimized);
  } catch (const std::exception &ex) {
    finish(r, {{"crash",
                {},
                {},
                {},
                {},
                std::string("analysing the optimized graph faults: ") + ex.what()}});
    return r;
  }
  Analysis &b = *bp;
  // 1. Structure: with a defect or a cycle nothing can run, but a cycle
  // leaves a memory plan whose layout conflicts still count.
  std::vector<Violation> found = structuralViolations(b, opts);
  if (!b.malformed.empty()) {
    finish(r, std::move(found));
    return r;
  }
  if (!b.cycles.empty()) {
    for (Violation &v : newLayoutConflicts(a, b))
      found.push_back(std::move(v));
    finish(r, std::move(found));
    return r;
  }
  // The same user inputs, graph outputs and variables (semantics.md §5.1).
  std::vector<std::string> iface =
      interfaceDifferences(interfaceOf(original, a.plan), interfaceOf(optimized, b.plan));
  if (!iface.empty()) {
    for (const std::string &e : iface)
      found.push_back({"invalid-output",
                       {},
                       {},
                       {},
                       {},
                       "interface differs from the original: " + e,
                       opts.optimizedName});
    finish(r, std::move(found));
    return r;
  }
  std::vector<std::string> inconclusive;
  // 2. Races (Z3 over every schedule).
  RaceFindings races = findRaces(b, opts, opts.useZ3);
  r.z3Queries = races.queries;
  for (Violation &v : races.races)
    found.push_back(std::move(v));
  if (races.inconclusive)
    inconclusive.push_back(races.reason);
  // 3. Layout.
  for (Violation &v : newLayoutConflicts(a, b))
    found.push_back(std::move(v));
  // 4. Experiments on the reference schedule, up to the first that differs
  // (one witness state is enough; a race above does not stop them: the
  // reference schedule still says what the optimized graph can compute).
  const unsigned states = std::max(1u, opts.numStates);
  ApproxMargin margin;
  b.interp->setSpecials(opts.specials);
  for (unsigned i = 0; i < o.experiments.size(); ++i) {
    b.interp->setArithmetic(i / states);
    ExperimentResult eb = b.interp->experiment(stateSeed(opts.seed, i % states));
    if (eb.budgetExceeded() && !eb.crashed()) {
      inconclusive.push_back(fmt::format(
          "the optimized graph exceeds the interpreter's budget ({} steps, {} MiB of buffers)",
          kStepBudget, kMaxArenaBytes >> 20));
      break;
    }
    size_t before = found.size();
    compareExperiments(b, o.experiments[i], eb, perms, opts, i % states, i / states, found,
                       opts.contract == NumericContract::Approx ? &margin : nullptr);
    if (found.size() != before)
      break;
  }
  if (!found.empty()) {
    finish(r, std::move(found));
    return r;
  }
  if (!inconclusive.empty()) {
    r.verdict = Verdict::Inconclusive;
    r.reason = inconclusive.front();
    return r;
  }
  r.verdict = Verdict::Sound;
  if (opts.contract == NumericContract::Approx)
    r.margin = margin;
  return r;
}

} // namespace

CheckResult checkOriginal(const Module &m, const CheckOptions &opts) {
  CheckResult r;
  try {
    r.warnings = parsePermissions(m.options).warnings;
    OriginalState o;
    if (validateOriginal(o, m, opts, r))
      r.verdict = Verdict::Sound;
  } catch (const std::exception &ex) {
    r = CheckResult{};
    r.verdict = Verdict::Inconclusive;
    r.reason = std::string("internal error while checking: ") + ex.what();
  }
  return r;
}

CheckResult checkRefinement(const Module &original, const Module &optimized,
                            const CheckOptions &opts) {
  try {
    return refine(original, optimized, opts);
  } catch (const std::exception &ex) {
    CheckResult r;
    r.verdict = Verdict::Inconclusive;
    r.reason = std::string("internal error while checking: ") + ex.what();
    return r;
  }
}

CheckResult checkRefinementOfText(const Module &original, std::string_view optimizedText,
                                  const CheckOptions &opts) {
  ParseResult parsed = parseModule(optimizedText, ParseOptions{.verify = false});
  if (parsed.module)
    return checkRefinement(original, *parsed.module, opts);
  try {
    // The original is judged first: an invalid one is the user's problem
    // whatever the optimized text holds.
    CheckResult r;
    r.warnings = parsePermissions(original.options).warnings;
    OriginalState o;
    if (!validateOriginal(o, original, opts, r))
      return r;
    std::vector<Violation> found;
    for (const Diagnostic &d : parsed.diagnostics)
      if (d.severity == Severity::Error)
        found.push_back(
            {"invalid-output", {}, {}, {}, {}, d.message, locationOf(opts.optimizedName, d.loc)});
    finish(r, std::move(found));
    return r;
  } catch (const std::exception &ex) {
    CheckResult r;
    r.verdict = Verdict::Inconclusive;
    r.reason = std::string("internal error while checking: ") + ex.what();
    return r;
  }
}

std::vector<bool> executedGraphs(const Module &m, const CheckOptions &opts) {
  try {
    std::unique_ptr<Analysis> a = analyze(m);
    if (!a->interp || !a->cycles.empty())
      return {};
    for (unsigned s = 0; s < std::max(1u, opts.numStates); ++s) {
      ExperimentResult e = a->interp->experiment(stateSeed(opts.seed, s));
      if (e.crashed() || e.budgetExceeded())
        return {};
    }
    const std::vector<uint64_t> &runs = a->interp->domainRuns();
    std::vector<bool> ran(m.numGraphs(), false);
    for (GraphId g = 0; g < m.numGraphs(); ++g) {
      const Graph &graph = m.graph(g);
      for (NodeId n = 0; n < graph.capacity() && !ran[g]; ++n) {
        if (!graph.node(n).alive)
          continue;
        DomainId d = a->inl.stepOf(g, n).first;
        ran[g] = d < runs.size() && runs[d] > 0;
      }
    }
    return ran;
  } catch (const std::exception &) {
    return {};
  }
}

namespace {
std::string arithmeticsFlag(unsigned arithmetics) {
  return arithmetics > 1 ? fmt::format(" --arithmetics {}", arithmetics) : "";
}
} // namespace

std::string replayPairCommand(const std::string &original, const std::string &optimized,
                              uint64_t seed, unsigned arithmetics) {
  return fmt::format("graphvet check --pair {} {} --seed {}{}", original, optimized, seed,
                     arithmeticsFlag(arithmetics));
}

std::string replayPassesCommand(const std::string &file, const std::string &passes, uint64_t seed,
                                unsigned arithmetics) {
  if (passes.empty())
    return fmt::format("graphvet check {} --seed {}{}", file, seed, arithmeticsFlag(arithmetics));
  return fmt::format("graphvet check {} --passes {} --seed {}{}", file, passes, seed,
                     arithmeticsFlag(arithmetics));
}

std::vector<std::string> violationKindsOf(const CheckResult &r) {
  std::vector<std::string> kinds;
  for (const Violation &v : r.violations)
    if (std::find(kinds.begin(), kinds.end(), v.kind) == kinds.end())
      kinds.push_back(v.kind);
  return kinds;
}

std::string formatResult(const CheckResult &r) {
  std::string out = fmt::format("verdict: {}\n", verdictName(r.verdict));
  if (r.contract == NumericContract::Approx)
    out += "contract: approx (values within the derived bound)\n";
  if (r.margin && r.margin->elements > 0) {
    const ApproxMargin &m = *r.margin;
    out +=
        fmt::format("approx margin: {} of {} float output elements moved; worst {} ulps, relative "
                    "{:.3g}, absolute {:.3g}",
                    m.moved, m.elements, m.maxUlps, m.maxRelative, m.maxDistance);
    if (m.worstRatio > 0)
      out += fmt::format("; closest to the bound: {:.3g} of {:.3g} ({:.2g}% of it)",
                         m.distanceAtWorst, m.boundAtWorst, 100 * m.worstRatio);
    out += "\n";
  }
  if (!r.reason.empty())
    out += "reason: " + r.reason + "\n";
  for (const std::string &w : r.warnings)
    out += "warning: " + w + "\n";
  // The headline: every kind found, the most specific first.
  std::string kinds;
  for (const std::string &k : violationKindsOf(r))
    kinds += (kinds.empty() ? "" : ", ") + k;
  if (r.verdict == Verdict::Violation && !kinds.empty())
    out += "violation: " + kinds + "\n";
  for (const Violation &v : r.violations) {
    out += fmt::format("{}: {}\n", v.kind, v.message);
    if (!v.location.empty())
      out += "  at: " + v.location + "\n";
    auto join = [](const std::vector<std::string> &xs) {
      std::string s;
      for (const std::string &x : xs)
        s += (s.empty() ? "" : ", ") + x;
      return s;
    };
    if (!v.nodes.empty())
      out += "  nodes: " + join(v.nodes) + "\n";
    if (!v.buffers.empty())
      out += "  buffers: " + join(v.buffers) + "\n";
    for (size_t i = 0; i < v.schedules.size(); ++i)
      out += v.schedules.size() == 1
                 ? fmt::format("  schedule: {}\n", join(v.schedules[i]))
                 : fmt::format("  schedule {}: {}\n", i + 1, join(v.schedules[i]));
    if (!v.bytes.empty())
      out += "  bytes: " + v.bytes + "\n";
  }
  if (!r.replay.empty())
    out += "replay: " + r.replay + "\n";
  return out;
}

} // namespace graphvet::oracle
