// The campaign driver: worker threads over seed-partitioned cases (phase 1),
// then shrinking, confirmation, deduplication and saving of the failures
// (phase 2). Wall-clock time only decides when phase 1 stops; what each case
// does and which findings come out of a given set of cases does not depend on
// time or on the number of jobs.
#include "props/campaign.h"

#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/targets.h"
#include "props/build_module.h"
#include "props/contract.h"
#include "props/evaluate.h"
#include "props/generate.h"
#include "props/missed.h"
#include "props/missed_rewrites.h"
#include "props/reduce.h"
#include "props/shrink.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

namespace graphvet::props {
namespace {

using Clock = std::chrono::steady_clock;

/// A failing case as phase 1 records it.
struct Failure {
  uint64_t index = 0;
  std::string kind;
  std::string rules;
  std::string pipeline; ///< pipelineLabel of the case's pipeline
  std::string classKey() const { return kind + "|" + rules + "|" + pipeline; }
};

std::string hex64(uint64_t v) {
  return fmt::format("{:016x}", v);
}

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

/// File-name friendly: letters, digits and '-' only.
std::string sanitize(const std::string &s) {
  std::string out;
  for (char c : s)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-') ? c : '-';
  return out.substr(0, 60);
}

/// Per-pass coverage of one case (CampaignStats::passes).
void countPasses(const PipelineResult &p, CampaignStats &stats) {
  std::set<std::string> remarked, changed;
  for (const auto &[pass, ps] : p.stats)
    ++stats.passes[pass].ran;
  for (const Remark &r : p.remarks) {
    PassCoverage &pc = stats.passes[r.pass];
    ++pc.remarks;
    pc.rules.insert(r.decision + ":" + r.rule);
    remarked.insert(r.pass);
    if (r.decision != "kept" && r.decision != "skipped")
      changed.insert(r.pass);
  }
  for (const std::string &pass : remarked)
    ++stats.passes[pass].remarked;
  for (const std::string &pass : changed)
    ++stats.passes[pass].changed;
}

/// The failure modes a sampled case touched (failure_modes.h).
void countFailureModes(const FeatureSet &features, const PipelineResult &p, CampaignStats &stats) {
  std::vector<std::string_view> tags;
  for (const Remark &r : p.remarks)
    tags.push_back(r.rule);
  FailureModeSet touched = failureModesOfCase({&features, &tags, p.iterations, p.reachedFixpoint});
  for (size_t i = 0; i < kNumFailureModes; ++i)
    stats.failureModeCases[i] += touched[i];
}

void countRun(const Evaluation &e, CampaignStats &stats) {
  for (const auto &[pass, ps] : e.pipeline.stats) {
    auto get = [&](const char *k) {
      auto it = ps.counters.find(k);
      return it == ps.counters.end() ? 0 : static_cast<uint64_t>(std::max<int64_t>(0, it->second));
    };
    stats.tensorMoves += get("tensor_moves");
    stats.deleted += get("deleted");
    stats.kept += get("kept");
  }
  for (const Remark &r : e.pipeline.remarks)
    ++stats.rules[r.decision + ":" + r.rule];
  countPasses(e.pipeline, stats);
}

/// The hash of one case's pipeline output for CampaignStats::outputDigest.
uint64_t outputHash(uint64_t index, const Evaluation &e) {
  std::string text = std::to_string(index) + "\n" + printModule(e.optimized);
  for (const Remark &r : e.pipeline.remarks)
    text += fmt::format("{}:{}:{} {} {} [{}] {}\n", r.graph, r.loc.line, r.loc.col, r.node,
                        r.decision, r.rule, r.message);
  return fnv1a(text);
}

bool typedCase(const CampaignOptions &opts, uint64_t index) {
  switch (opts.generator) {
  case CaseGenerator::Memory:
    return false;
  case CaseGenerator::Typed:
    return true;
  case CaseGenerator::Mixed:
    return index % 2 == 1;
  }
  return false;
}

/// The original of case `index` (seed `seed`), from the generator that draws it.
Module caseModule(const CampaignOptions &opts, uint64_t index, uint64_t seed) {
  if (typedCase(opts, index))
    return generateTypedModule(seed, kTypedDefaultSize, opts.typedGen).module;
  return generateModule(seed, opts.gen);
}

EvalOptions caseEvalOptions(const CampaignOptions &opts, uint64_t index, uint64_t seed) {
  EvalOptions eo{casePipeline(opts, index), opts.check, opts.overridesReachOriginal,
                 opts.checkIdempotence};
  eo.check.seed = seed;
  return eo;
}

MissedOptions missedOptions(const CampaignOptions &opts, uint64_t index, uint64_t seed) {
  MissedOptions mo;
  mo.pipeline = casePipeline(opts, index);
  mo.check = opts.check;
  mo.check.seed = seed;
  mo.check.numStates = opts.missedStates;
  mo.check.arithmetics = opts.missedArithmetics;
  // The campaign has just found the pass output sound.
  mo.checkPassOutput = false;
  return mo;
}

/// Tries every copy the pass kept in a sound case and counts the outcome.
void countMissed(const CampaignOptions &opts, uint64_t index, const Module &original,
                 const Evaluation &e, CampaignStats &stats) {
  MissedOptions mo = missedOptions(opts, index, caseSeed(opts.seed, index));
  MissedRewriteReport rewrites =
      findMissedRewritesIn(original, e.optimized, MissedRewriteOptions{mo.pipeline, mo.check});
  stats.missedRewrites += rewrites.missed;
  stats.rewritesNecessary += rewrites.necessary;
  stats.rewritesInconclusive += rewrites.inconclusive;
  for (const auto &[rule, n] : rewrites.missedByRule)
    stats.missedRewritesByRule[rule] += n;
  MissedReport r = findMissedIn(original, e.optimized, e.pipeline.remarks, mo);
  if (!r.ok) {
    ++stats.missedInconclusive;
    return;
  }
  ++stats.missedCases;
  stats.missedDeleted += r.deleted;
  stats.missedDeletedUnobserved += r.deletedUnobserved;
  stats.missedDeletedUnexercised += r.deletedUnexercised;
  stats.missed += r.missed;
  stats.missedNecessary += r.necessary;
  stats.missedUnobserved += r.unobserved;
  stats.missedUnexercised += r.unexercised;
  stats.missedInconclusive += r.inconclusive;
  stats.missedReserved += r.reserved;
  stats.missedUntried += r.untried;
  for (const auto &[rule, n] : r.missedByRule)
    stats.missedByRule[rule] += n;
  if (opts.missedOutDir.empty() || r.missed == 0)
    return;
  size_t nodes = countNodes(original);
  for (const MissedItem &item : r.items)
    if (item.status == MissedStatus::Removable)
      stats.missedHits.push_back({item.rule, item.node, index, nodes});
}

std::optional<Failure> runCase(const CampaignOptions &opts, uint64_t index, CampaignStats &stats) {
  uint64_t seed = caseSeed(opts.seed, index);
  Module m = caseModule(opts, index, seed);
  const PipelineOptions &pipeline = casePipeline(opts, index);
  // The original sees the option overrides, as in graphvet check --option.
  if (opts.overridesReachOriginal)
    writeOptionOverrides(m, pipeline);
  // Feature coverage is sampled (one case in kFeatureSample): it costs as
  // much as building the graph. Cases come in sampled pairs (2k, 2k + 1) so
  // that a mixed campaign, whose odd cases are typed, samples both
  // generators.
  std::optional<FeatureSet> features;
  if (index % (2 * kFeatureSample) < 2) {
    features = featuresOf(m);
    stats.features.add(*features);
  }
  Evaluation e = evaluate(m, caseEvalOptions(opts, index, seed));
  ++stats.cases;
  countRun(e, stats);
  if (features)
    countFailureModes(*features, e.pipeline, stats);
  std::string label = pipelineLabel(pipeline);
  CampaignStats::PipelineCounts &perPipeline = stats.byPipeline[label];
  ++perPipeline.cases;
  perPipeline.remarks += e.pipeline.remarks.size();
  if (opts.outputDigest)
    stats.outputDigest += outputHash(index, e);
  switch (e.result.verdict) {
  case oracle::Verdict::Sound:
    ++stats.sound;
    if (opts.missed)
      countMissed(opts, index, m, e, stats);
    return std::nullopt;
  case oracle::Verdict::Inconclusive:
    ++stats.inconclusive;
    ++perPipeline.inconclusive;
    return std::nullopt;
  case oracle::Verdict::Invalid:
    ++stats.invalid;
    ++stats.kinds["invalid-original"];
    return Failure{index, "invalid-original", "none", label};
  case oracle::Verdict::Violation:
    break;
  }
  ++stats.violations;
  ++perPipeline.violations;
  std::string kind = e.result.violations.empty() ? "unknown" : e.result.violations[0].kind;
  ++stats.kinds[kind];
  return Failure{index, kind, joinRules(deletionRules(e.pipeline)), label};
}

/// The interestingness test of a failure class.
Interesting interestingFor(const CampaignOptions &opts, const std::string &kind, uint64_t index,
                           uint64_t seed) {
  if (kind == "invalid-original") {
    oracle::CheckOptions co = opts.check;
    co.seed = seed;
    return [co, pipeline = casePipeline(opts, index),
            reach = opts.overridesReachOriginal](const Module &m) {
      if (!reach || pipeline.optionOverrides.empty())
        return oracle::checkOriginal(m, co).verdict == oracle::Verdict::Invalid;
      Module overridden = m;
      writeOptionOverrides(overridden, pipeline);
      return oracle::checkOriginal(overridden, co).verdict == oracle::Verdict::Invalid;
    };
  }
  return failsWithKind(caseEvalOptions(opts, index, seed), kind);
}

std::string pipelineFlags(const PipelineOptions &p) {
  std::string out;
  if (p.optLevel != 3)
    out += " -O " + std::to_string(p.optLevel);
  for (const std::string &d : p.disabled)
    out += " --disable-pass " + d;
  for (const auto &[k, v] : p.optionOverrides)
    out += " --option '" + k + "=" + v + "'";
  if (p.conservative)
    out += " --tm-conservative";
  return out;
}

Finding shrinkFailure(const CampaignOptions &opts, const Failure &f) {
  Finding out;
  out.kind = f.kind;
  out.caseIndex = f.index;
  out.seed = caseSeed(opts.seed, f.index);
  out.pipeline = f.pipeline;
  out.pipelineFlags = pipelineCommandFlags(casePipeline(opts, f.index));
  Interesting interesting = interestingFor(opts, f.kind, f.index, out.seed);
  // RapidCheck's shrink tree of the case's recipe first, then IR reduction.
  Module recipeShrunk;
  unsigned recipeSteps = 0;
  if (typedCase(opts, f.index)) {
    out.generator = CaseGenerator::Typed;
    rc::Shrinkable<TypedRecipe> start =
        generateTypedRecipe(out.seed, kTypedDefaultSize, opts.typedGen);
    out.nodesBefore = countNodes(buildTypedModule(start.value()).module);
    TypedRecipeShrinkResult shrunk = shrinkTypedRecipe(
        start, [&](const TypedRecipe &r) { return interesting(buildTypedModule(r).module); },
        opts.recipeShrinkBudget, opts.stop);
    recipeShrunk = buildTypedModule(shrunk.recipe).module;
    recipeSteps = shrunk.accepted;
  } else {
    rc::Shrinkable<Recipe> start = generateRecipe(out.seed, opts.gen);
    out.nodesBefore = countNodes(buildModule(start.value()));
    RecipeShrinkResult shrunk = shrinkRecipe(
        start, [&](const Recipe &r) { return interesting(buildModule(r)); },
        opts.recipeShrinkBudget, opts.stop);
    recipeShrunk = buildModule(shrunk.recipe);
    recipeSteps = shrunk.accepted;
  }
  ReduceOptions ro;
  ro.maxEvaluations = opts.reduceBudget;
  ro.stop = opts.stop;
  ReduceResult reduced = reduceModule(recipeShrunk, interesting, ro);
  const Module &final = reduced.module;
  out.nodesAfter = countNodes(final);
  out.shrinkSteps = recipeSteps + reduced.accepted;
  out.original = printModule(final);

  EvalOptions eo = caseEvalOptions(opts, f.index, out.seed);
  Evaluation e = evaluate(final, eo);
  out.optimized = printModule(e.optimized);
  out.result = e.result;
  out.rules = f.kind == "invalid-original" ? "none" : joinRules(deletionRules(e.pipeline));
  if (f.kind == "invalid-original") {
    Module overridden = final;
    if (opts.overridesReachOriginal)
      writeOptionOverrides(overridden, casePipeline(opts, f.index));
    out.result = oracle::checkOriginal(overridden, eo.check);
  } else if (opts.confirmWithZ3 && !(opts.stop && opts.stop->load())) {
    EvalOptions z3 = eo;
    z3.check.useZ3 = true;
    Evaluation confirmed = evaluate(final, z3);
    if (hasViolationKind(confirmed.result, f.kind)) {
      out.confirmedWithZ3 = true;
      out.result = confirmed.result;
    }
  } else if (opts.check.useZ3) {
    out.confirmedWithZ3 = true;
  }
  out.signature = hex64(fnv1a(shapeSignature(final))).substr(0, 8);
  out.fileName = sanitize(out.kind) + "-" + sanitize(out.rules) + "-" + out.signature + ".graph";
  return out;
}

std::string commentLines(const std::string &prefix, const std::string &text) {
  std::string out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    std::string line = text.substr(start, nl == std::string::npos ? nl : nl - start);
    if (!line.empty())
      out += prefix + line + "\n";
    if (nl == std::string::npos)
      break;
    start = nl + 1;
  }
  return out;
}

/// Writes via a temporary file and rename, so an interrupted write never
/// leaves a truncated finding.
bool writeAtomically(const std::string &path, const std::string &text, std::string &error) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!(out << text) || !out.flush()) {
      error = path + ": error: cannot write file";
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    error = path + ": error: cannot rename " + tmp;
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

/// The samples of CampaignResult::timeline: at most maxPoints, thinned to
/// every other one (and the interval doubled) when full.
class Timeline {
public:
  Timeline(double interval, size_t maxPoints)
      : interval_(std::max(0.01, interval)), max_(std::max<size_t>(3, maxPoints)) {}
  bool due(double seconds) const { return seconds >= next_; }
  void add(double seconds, const CampaignStats &s) {
    points_.push_back(pointOf(seconds, s));
    // Full: keep every other sample (the size stays below max_, leaving a
    // slot for the final one).
    if (points_.size() >= max_) {
      std::vector<TimelinePoint> thinned;
      for (size_t i = 0; i < points_.size(); i += 2)
        thinned.push_back(points_[i]);
      points_ = std::move(thinned);
      interval_ *= 2;
    }
    next_ = points_.back().seconds + interval_;
  }
  /// The samples with the final stats appended and the rates filled in.
  std::vector<TimelinePoint> finish(const CampaignStats &final) {
    points_.push_back(pointOf(final.seconds, final));
    for (size_t i = 1; i < points_.size(); ++i) {
      double dt = points_[i].seconds - points_[i - 1].seconds;
      points_[i].casesPerSecond =
          dt > 0 ? static_cast<double>(points_[i].cases - points_[i - 1].cases) / dt : 0;
    }
    return std::move(points_);
  }

private:
  static TimelinePoint pointOf(double seconds, const CampaignStats &s) {
    TimelinePoint p;
    p.seconds = seconds;
    p.cases = s.cases;
    p.rules = s.rules.size();
    p.features = static_cast<size_t>(std::count_if(
        s.features.counts.begin(), s.features.counts.end(), [](uint64_t c) { return c > 0; }));
    return p;
  }

  double interval_;
  size_t max_;
  double next_ = 0;
  std::vector<TimelinePoint> points_;
};

/// Runs `work(i)` for i in [0, n) on `jobs` threads, i = j mod jobs.
template <typename F> void parallelFor(size_t n, unsigned jobs, F &&work) {
  jobs = std::max(1u, jobs);
  std::vector<std::thread> threads;
  for (unsigned j = 0; j < jobs; ++j)
    threads.emplace_back([&, j] {
      for (size_t i = j; i < n; i += jobs)
        work(i);
    });
  for (auto &t : threads)
    t.join();
}

/// Regenerates the case of a missed copy, reduces it while the pass still
/// keeps a removable copy for the same rule, and renders the example file.
MissedExample makeMissedExample(const CampaignOptions &opts, const CampaignStats::MissedHit &hit) {
  MissedExample ex;
  ex.rule = hit.rule;
  ex.caseIndex = hit.caseIndex;
  ex.seed = caseSeed(opts.seed, hit.caseIndex);
  Module original = caseModule(opts, hit.caseIndex, ex.seed);
  ex.nodesBefore = countNodes(original);
  MissedOptions mo = missedOptions(opts, hit.caseIndex, ex.seed);
  mo.checkPassOutput = true; // a reduced graph must stay a sound pass case
  auto removableItem = [&](const MissedReport &r) -> const MissedItem * {
    if (!r.ok || r.passVerdict != oracle::Verdict::Sound)
      return nullptr;
    for (const MissedItem &item : r.items)
      if (item.status == MissedStatus::Removable && item.rule == hit.rule)
        return &item;
    return nullptr;
  };
  Module reduced = original;
  if (opts.missedReduceBudget > 0) {
    ReduceOptions ro;
    ro.maxEvaluations = opts.missedReduceBudget;
    ro.stop = opts.stop;
    reduced = reduceModule(
                  original,
                  [&](const Module &m) { return removableItem(findMissed(m, mo)) != nullptr; }, ro)
                  .module;
  }
  ex.nodesAfter = countNodes(reduced);
  mo.keepCandidates = true;
  MissedReport r = findMissed(reduced, mo);
  const MissedItem *item = removableItem(r);
  std::string flags = pipelineCommandFlags(casePipeline(opts, hit.caseIndex));
  std::string text;
  if (item) {
    ex.node = item->node;
    text += fmt::format("# graphvet missed example: tensor-move-delete kept {} [{}]; removing it "
                        "alone is sound\n",
                        item->node, item->rule);
    text += "# pass remark: " + item->passMessage + "\n";
    std::string moved, added;
    for (const std::string &e : item->movedEdges)
      moved += (moved.empty() ? "" : ", ") + e;
    for (const std::string &e : item->addedEdges)
      added += (added.empty() ? "" : ", ") + e;
    text += "# removal: moved ctrl " + (moved.empty() ? "none" : moved) + "; added ctrl " +
            (added.empty() ? "none" : added) + "\n";
  } else {
    text += fmt::format("# graphvet missed example [{}] (the reduced graph no longer shows it)\n",
                        hit.rule);
  }
  text += fmt::format("# seed: {} (redraw the unreduced case: graphvet fuzz --seed {} --cases 1 "
                      "--missed{})\n",
                      ex.seed, ex.seed, flags);
  text += fmt::format("# reduced: {} -> {} nodes\n", ex.nodesBefore, ex.nodesAfter);
  // The oracle's initial states derive from the case seed: replay with it.
  if (opts.missedArithmetics != CampaignOptions{}.missedArithmetics)
    flags += fmt::format(" --arithmetics {}", opts.missedArithmetics);
  text += fmt::format("# replay: graphvet missed FILE{} --seed {} --no-z3\n", flags, ex.seed);
  if (item && !item->candidate.empty()) {
    text += "#\n# candidate (the pass output without " + item->node + "):\n";
    text += commentLines("#   ", item->candidate);
  }
  ex.text = text + "\n" + printModule(reduced);
  return ex;
}

} // namespace

std::string_view caseGeneratorName(CaseGenerator g) {
  switch (g) {
  case CaseGenerator::Memory:
    return "memory";
  case CaseGenerator::Typed:
    return "typed";
  case CaseGenerator::Mixed:
    return "mixed";
  }
  return "memory";
}

std::optional<CaseGenerator> parseCaseGenerator(std::string_view name) {
  for (CaseGenerator g : {CaseGenerator::Memory, CaseGenerator::Typed, CaseGenerator::Mixed})
    if (caseGeneratorName(g) == name)
      return g;
  return std::nullopt;
}

size_t casePipelineIndex(const CampaignOptions &opts, uint64_t index) {
  if (opts.pipelines.empty())
    return 0;
  return static_cast<size_t>((index / 2) % opts.pipelines.size());
}

const PipelineOptions &casePipeline(const CampaignOptions &opts, uint64_t index) {
  return opts.pipelines.empty() ? opts.pipeline : opts.pipelines[casePipelineIndex(opts, index)];
}

std::string pipelineLabel(const PipelineOptions &p) {
  std::string out;
  if (!p.passes)
    out = "O" + std::to_string(p.optLevel);
  for (const std::string &name : p.passes.value_or(std::vector<std::string>{}))
    out += out.empty() ? name : "," + name;
  std::string overrides;
  for (const auto &[key, value] : p.optionOverrides)
    overrides += (overrides.empty() ? key : "," + key) + "=" + value;
  return overrides.empty() ? out : out + "[" + overrides + "]";
}

std::string pipelineCommandFlags(const PipelineOptions &p) {
  std::string passes = passesFlag(p);
  return (passes.empty() ? std::string() : " --passes " + passes) + pipelineFlags(p);
}

std::vector<PipelineOptions> everyPipeline(const PipelineOptions &base) {
  // The option a pass needs before it does anything, and its values.
  std::vector<std::string> targets;
  for (const auto &[name, target] : builtinTargetTable().targets)
    targets.push_back(name);
  const std::map<std::string_view, std::pair<std::string, std::vector<std::string>>> needs = {
      {"convert-layout", {"convert_layout.target", {"NHWC"}}},
      {"legalize", {"legalize.target", targets}},
      {"partition-graph", {"partition_graph.target", targets}},
  };
  std::vector<PipelineOptions> out;
  for (const PassInfo &p : allPasses()) {
    std::string name(p.name);
    if (std::find(base.disabled.begin(), base.disabled.end(), name) != base.disabled.end())
      continue;
    PipelineOptions one = base;
    one.passes = std::vector<std::string>{name};
    one.disabled.clear();
    auto need = needs.find(p.name);
    if (need == needs.end() || one.optionOverrides.count(need->second.first)) {
      out.push_back(std::move(one));
      continue;
    }
    for (const std::string &value : need->second.second) {
      PipelineOptions withTarget = one;
      withTarget.optionOverrides[need->second.first] = value;
      out.push_back(std::move(withTarget));
    }
  }
  out.push_back(base);
  if (!base.optionOverrides.count("convert_layout.target")) {
    PipelineOptions nhwc = base;
    nhwc.optionOverrides["convert_layout.target"] = "NHWC";
    out.push_back(std::move(nhwc));
  }
  return out;
}

void CampaignStats::merge(const CampaignStats &o) {
  cases += o.cases;
  sound += o.sound;
  violations += o.violations;
  inconclusive += o.inconclusive;
  invalid += o.invalid;
  tensorMoves += o.tensorMoves;
  deleted += o.deleted;
  kept += o.kept;
  missedCases += o.missedCases;
  missedDeleted += o.missedDeleted;
  missedDeletedUnobserved += o.missedDeletedUnobserved;
  missedDeletedUnexercised += o.missedDeletedUnexercised;
  missed += o.missed;
  missedNecessary += o.missedNecessary;
  missedUnobserved += o.missedUnobserved;
  missedUnexercised += o.missedUnexercised;
  missedInconclusive += o.missedInconclusive;
  missedReserved += o.missedReserved;
  missedUntried += o.missedUntried;
  for (const auto &[k, v] : o.missedByRule)
    missedByRule[k] += v;
  for (const auto &[k, v] : o.missedRewritesByRule)
    missedRewritesByRule[k] += v;
  missedRewrites += o.missedRewrites;
  rewritesNecessary += o.rewritesNecessary;
  rewritesInconclusive += o.rewritesInconclusive;
  missedHits.insert(missedHits.end(), o.missedHits.begin(), o.missedHits.end());
  for (const auto &[k, v] : o.rules)
    rules[k] += v;
  for (const auto &[k, v] : o.kinds)
    kinds[k] += v;
  for (size_t i = 0; i < kNumFeatures; ++i)
    features.counts[i] += o.features.counts[i];
  features.modules += o.features.modules;
  for (size_t i = 0; i < kNumFailureModes; ++i)
    failureModeCases[i] += o.failureModeCases[i];
  for (const auto &[name, pc] : o.passes) {
    PassCoverage &mine = passes[name];
    mine.ran += pc.ran;
    mine.remarked += pc.remarked;
    mine.changed += pc.changed;
    mine.remarks += pc.remarks;
    mine.rules.insert(pc.rules.begin(), pc.rules.end());
  }
  for (const auto &[label, c] : o.byPipeline) {
    PipelineCounts &mine = byPipeline[label];
    mine.cases += c.cases;
    mine.violations += c.violations;
    mine.inconclusive += c.inconclusive;
    mine.remarks += c.remarks;
  }
  outputDigest += o.outputDigest;
}

std::string Finding::fileText() const {
  std::string out;
  if (kind == "invalid-original")
    out += "# graphvet fuzz finding: the generator made an invalid original (a harness bug)\n";
  else
    out += fmt::format("# graphvet fuzz finding: {} violation; deleting rules: {}\n", kind, rules);
  std::string verdict(oracle::verdictName(result.verdict));
  std::string first = result.violations.empty()
                          ? result.reason
                          : result.violations[0].kind + ": " + result.violations[0].message;
  // A message may span lines (not-idempotent shows the first difference):
  // every line stays a comment, or the file would not parse.
  out += commentLines("# ", fmt::format("verdict: {} ({})", verdict, first));
  std::string generatorFlag = generator == CaseGenerator::Memory
                                  ? ""
                                  : " --generator " + std::string(caseGeneratorName(generator));
  out +=
      fmt::format("# seed: {} (redraw the unshrunk case: graphvet fuzz --seed {} --cases 1{}{})\n",
                  seed, seed, generatorFlag, pipelineFlags);
  out += fmt::format("# shrunk: {} -> {} nodes in {} steps; {} duplicate case{}\n", nodesBefore,
                     nodesAfter, shrinkSteps, duplicates, duplicates == 1 ? "" : "s");
  out += fmt::format("# confirmed with Z3: {}\n", confirmedWithZ3 ? "yes" : "no");
  out += "# replay: " + replay + "\n";
  for (const oracle::Violation &v : result.violations) {
    out += "#\n" + commentLines("# ", v.kind + ": " + v.message);
    if (!v.schedules.empty()) {
      std::string s;
      for (const std::string &n : v.schedules[0])
        s += (s.empty() ? "" : ", ") + n;
      out += "#   witness schedule: " + s + "\n";
    }
    if (!v.bytes.empty())
      out += "#   bytes: " + v.bytes + "\n";
  }
  return out + "\n" + original;
}

std::string shapeSignature(const Module &m) {
  std::string sig;
  std::vector<GraphId> graphs = m.canonicalGraphOrder();
  for (GraphId gid : graphs) {
    const Graph &g = m.graph(gid);
    auto topo = g.topoOrder();
    std::vector<NodeId> order = topo ? *topo : g.liveNodes();
    std::vector<uint32_t> pos(g.capacity(), 0);
    for (uint32_t i = 0; i < order.size(); ++i)
      pos[order[i]] = i;
    sig += "{";
    for (NodeId n : order) {
      const Node &node = g.node(n);
      sig += node.type + "(";
      for (const auto &in : node.inputs)
        sig += in ? fmt::format("{}:{},", pos[in->node], in->index) : std::string("_,");
      sig += ")";
      for (NodeId t : node.ctrlOut)
        sig += fmt::format(">{}", pos[t]);
      sig += ";";
    }
    sig += "}";
  }
  return sig;
}

CampaignResult runCampaign(const CampaignOptions &opts) {
  CampaignResult result;
  const unsigned jobs = std::max(1u, opts.jobs);
  std::optional<uint64_t> maxCases = opts.cases;
  if (!maxCases && !opts.seconds)
    maxCases = 1000;

  // ---- phase 1: run cases ----------------------------------------------------
  struct Worker {
    std::mutex mutex;
    CampaignStats stats;
    std::vector<Failure> failures;
  };
  std::vector<Worker> workers(jobs);
  std::atomic<bool> timeUp{false};
  auto stopping = [&] {
    return timeUp.load(std::memory_order_relaxed) ||
           (opts.stop && opts.stop->load(std::memory_order_relaxed));
  };
  auto start = Clock::now();
  std::mutex firstFailureMutex;
  std::vector<std::thread> threads;
  std::atomic<unsigned> running{jobs};
  for (unsigned j = 0; j < jobs; ++j)
    threads.emplace_back([&, j] {
      Worker &w = workers[j];
      for (uint64_t i = j; !maxCases || i < *maxCases; i += jobs) {
        if (stopping())
          break;
        CampaignStats one;
        std::optional<Failure> f = runCase(opts, i, one);
        if (f) {
          double at = std::chrono::duration<double>(Clock::now() - start).count();
          std::lock_guard lock(firstFailureMutex);
          if (!result.firstFailureSeconds || at < *result.firstFailureSeconds)
            result.firstFailureSeconds = at;
          if (!result.firstFailureCase || i < *result.firstFailureCase)
            result.firstFailureCase = i;
          if (opts.stopOnFirstFailure)
            timeUp = true;
        }
        std::lock_guard lock(w.mutex);
        w.stats.merge(one);
        if (f)
          w.failures.push_back(std::move(*f));
      }
      --running;
    });
  auto snapshot = [&] {
    CampaignStats s;
    for (Worker &w : workers) {
      std::lock_guard lock(w.mutex);
      s.merge(w.stats);
    }
    s.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return s;
  };
  auto lastProgress = Clock::now();
  uint64_t shownCases = UINT64_MAX;
  Timeline timeline(opts.timelineInterval, opts.timelineMaxPoints);
  timeline.add(0, CampaignStats{});
  while (running.load() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (opts.seconds && elapsed >= *opts.seconds)
      timeUp = true;
    if (timeline.due(elapsed))
      timeline.add(elapsed, snapshot());
    if (opts.progress && std::chrono::duration<double>(Clock::now() - lastProgress).count() >=
                             opts.progressInterval) {
      lastProgress = Clock::now();
      CampaignStats s = snapshot();
      shownCases = s.cases;
      opts.progress(s, "running");
    }
  }
  for (auto &t : threads)
    t.join();
  result.stats = snapshot();
  result.timeline = timeline.finish(result.stats);
  result.interrupted = opts.stop && opts.stop->load();
  if (opts.progress && result.stats.cases != shownCases)
    opts.progress(result.stats, "running");

  // ---- phase 2: shrink, confirm, deduplicate, save -----------------------------
  std::vector<Failure> failures;
  for (Worker &w : workers)
    failures.insert(failures.end(), w.failures.begin(), w.failures.end());
  std::sort(failures.begin(), failures.end(),
            [](const Failure &a, const Failure &b) { return a.index < b.index; });
  // Round r takes the r-th failing case of every class (classes in order of
  // their first case), so every class is shrunk once before any twice.
  std::map<std::string, unsigned> perClass;
  std::vector<std::vector<const Failure *>> classes;
  std::map<std::string, size_t> classIndex;
  for (const Failure &f : failures) {
    ++perClass[f.classKey()];
    auto [it, fresh] = classIndex.emplace(f.classKey(), classes.size());
    if (fresh)
      classes.emplace_back();
    classes[it->second].push_back(&f);
  }
  std::vector<Failure> selected;
  for (unsigned round = 0; round < opts.shrinksPerClass; ++round)
    for (const auto &members : classes)
      if (round < members.size() && selected.size() < opts.maxShrinks)
        selected.push_back(*members[round]);
  std::sort(selected.begin(), selected.end(),
            [](const Failure &a, const Failure &b) { return a.index < b.index; });
  for (const auto &members : classes)
    if (std::none_of(selected.begin(), selected.end(),
                     [&](const Failure &f) { return f.classKey() == members.front()->classKey(); }))
      result.unshrunkFailures += members.size();

  std::vector<Finding> shrunk(selected.size());
  std::mutex progressMutex;
  size_t done = 0;
  parallelFor(selected.size(), jobs, [&](size_t i) {
    shrunk[i] = shrinkFailure(opts, selected[i]);
    if (opts.progress) {
      std::lock_guard lock(progressMutex);
      std::string phase = fmt::format("shrinking {}/{}", ++done, selected.size());
      opts.progress(result.stats, phase.c_str());
    }
  });

  std::map<std::string, size_t> byKey;
  std::map<std::string, size_t> firstOfClass; // failure class -> finding index
  for (size_t i = 0; i < shrunk.size(); ++i) {
    Finding &f = shrunk[i];
    std::string key = f.kind + "|" + f.rules + "|" + f.pipeline + "|" + f.signature;
    auto [it, fresh] = byKey.emplace(key, result.findings.size());
    if (fresh)
      result.findings.push_back(std::move(f));
    else
      ++result.findings[it->second].duplicates;
    firstOfClass.emplace(selected[i].classKey(), it->second);
  }
  // Failing cases beyond the per-class limit were not shrunk: count them as
  // duplicates of their class's first finding.
  for (const auto &[cls, count] : perClass)
    if (auto it = firstOfClass.find(cls); it != firstOfClass.end() && count > opts.shrinksPerClass)
      result.findings[it->second].duplicates += count - opts.shrinksPerClass;

  if (!opts.outDir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(opts.outDir, ec);
    if (ec)
      result.errors.push_back(opts.outDir + ": error: cannot create directory: " + ec.message());
  }
  for (Finding &f : result.findings) {
    const PipelineOptions &pipeline = casePipeline(opts, f.caseIndex);
    std::string shown = opts.outDir.empty() ? f.fileName : opts.outDir + "/" + f.fileName;
    f.replay =
        oracle::replayPassesCommand(shown, passesFlag(pipeline), f.seed, opts.check.arithmetics) +
        pipelineFlags(pipeline) + (f.kind == kNotIdempotentKind ? " --idempotent" : "") +
        (f.confirmedWithZ3 ? "" : " --no-z3");
    f.result.replay = f.replay;
    if (opts.outDir.empty())
      continue;
    std::string error;
    if (writeAtomically(shown, f.fileText(), error))
      f.path = shown;
    else
      result.errors.push_back(error);
  }

  // ---- phase 3: examples of missed optimizations -------------------------------
  if (!opts.missedOutDir.empty() && !result.stats.missedHits.empty() &&
      !(opts.stop && opts.stop->load())) {
    // The smallest cases of each rule (ties by case index, then node): the
    // choice depends only on the set of cases run, never on the jobs.
    std::map<std::string, std::vector<CampaignStats::MissedHit>> byRule;
    for (const CampaignStats::MissedHit &h : result.stats.missedHits)
      byRule[h.rule].push_back(h);
    std::vector<CampaignStats::MissedHit> chosen;
    for (auto &[rule, hits] : byRule) {
      std::sort(hits.begin(), hits.end(), [](const auto &a, const auto &b) {
        return std::tie(a.nodes, a.caseIndex, a.node) < std::tie(b.nodes, b.caseIndex, b.node);
      });
      std::set<uint64_t> casesTaken;
      for (const CampaignStats::MissedHit &h : hits)
        if (casesTaken.size() < opts.missedExamplesPerRule && casesTaken.insert(h.caseIndex).second)
          chosen.push_back(h);
    }
    std::vector<MissedExample> examples(chosen.size());
    parallelFor(chosen.size(), jobs,
                [&](size_t i) { examples[i] = makeMissedExample(opts, chosen[i]); });
    std::error_code ec;
    std::filesystem::create_directories(opts.missedOutDir, ec);
    if (ec)
      result.errors.push_back(opts.missedOutDir +
                              ": error: cannot create directory: " + ec.message());
    std::set<std::string> names;
    for (MissedExample &ex : examples) {
      std::string sig = hex64(fnv1a(ex.text)).substr(0, 8);
      std::string name = "missed-" + sanitize(ex.rule) + "-" + sig + ".graph";
      if (!names.insert(name).second)
        continue; // two cases reduced to the same example
      if (!ec) {
        std::string path = opts.missedOutDir + "/" + name;
        std::string error;
        if (writeAtomically(path, ex.text, error))
          ex.path = path;
        else
          result.errors.push_back(error);
      }
      result.missedExamples.push_back(std::move(ex));
    }
  }
  result.interrupted = opts.stop && opts.stop->load();
  return result;
}

} // namespace graphvet::props
