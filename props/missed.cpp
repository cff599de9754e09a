// Missed-optimization measurement: remove each kept TensorMove from the pass's
// output with the harness's own rewrite (never the pass's code, so a gap in the
// pass's analysis cannot hide in the measurement), repair the races the
// removal opens with reader-before-writer control edges, and let the oracle
// judge the candidate against the original.
#include "props/missed.h"

#include "ir/op_library.h"
#include "ir/printer.h"
#include "oracle/inlined.h"
#include "oracle/memory_plan.h"
#include "oracle/races.h"
#include "passes/tensor_move_delete.h"

#include <algorithm>
#include <exception>
#include <functional>
#include <optional>

namespace graphvet::props {
namespace {

std::string edgeText(const Module &m, GraphId g, NodeId from, NodeId to) {
  return m.qualifiedName(g, from) + " -> " + m.qualifiedName(g, to);
}

/// The chain (graph, node) from a node up through the nodes holding its
/// graph to the root graph. Bounded by the nesting depth (each graph has one
/// parent; a malformed cycle of parents stops at the number of graphs).
std::vector<std::pair<GraphId, NodeId>> ancestry(const Module &m, GraphId g, NodeId n) {
  std::vector<std::pair<GraphId, NodeId>> chain{{g, n}};
  for (size_t depth = 0; depth < m.numGraphs() && g != 0; ++depth) {
    const Graph &graph = m.graph(g);
    if (graph.parentGraph == kNoGraph || graph.parentNode == kNoNode)
      break;
    g = graph.parentGraph;
    n = graph.parentNode;
    chain.emplace_back(g, n);
  }
  return chain;
}

/// Two nodes (of one scheduling domain) lifted to the deepest graph holding
/// both (a control edge onto a PartitionedCall orders every node inside it).
struct CommonPair {
  GraphId graph = kNoGraph;
  NodeId a = kNoNode, b = kNoNode;
};

std::optional<CommonPair> liftToCommonGraph(const Module &m, GraphId ga, NodeId a, GraphId gb,
                                            NodeId b) {
  auto chainA = ancestry(m, ga, a);
  auto chainB = ancestry(m, gb, b);
  for (const auto &[g, n] : chainA)
    for (const auto &[g2, n2] : chainB)
      if (g == g2)
        return CommonPair{g, n, n2};
  return std::nullopt;
}

bool writesAny(const oracle::Step &s, const std::vector<oracle::BufferId> &buffers) {
  for (const oracle::Access &a : s.accesses)
    if (a.write && std::find(buffers.begin(), buffers.end(), a.buffer) != buffers.end())
      return true;
  return false;
}

/// Adds one reader-before-writer control edge that repairs the first
/// repairable race (conflicts in the analysis's deterministic order). False
/// when there is no race or none can be repaired without a cycle.
bool repairOneRace(Module &candidate, std::vector<std::string> &added) {
  oracle::MemoryPlan plan = oracle::MemoryPlan::build(candidate);
  if (!plan.errors().empty())
    return false;
  oracle::InlinedModule inl = oracle::InlinedModule::build(candidate, plan);
  if (!inl.errors.empty() || !inl.acyclic())
    return false;
  oracle::RaceAnalysis races = oracle::analyzeRaces(inl);
  for (const oracle::Conflict &c : races.conflicts) {
    if (!c.unordered)
      continue;
    const oracle::Domain &d = inl.domains[c.domain];
    const oracle::Step &first = d.steps[c.first];
    const oracle::Step &second = d.steps[c.second];
    bool firstWrites = writesAny(first, c.buffers);
    bool secondWrites = writesAny(second, c.buffers);
    // Two writers have no reader-before-writer order to restore.
    if (firstWrites == secondWrites)
      continue;
    const oracle::Step &reader = firstWrites ? second : first;
    const oracle::Step &writer = firstWrites ? first : second;
    auto lifted =
        liftToCommonGraph(candidate, reader.graph, reader.node, writer.graph, writer.node);
    if (!lifted || lifted->a == lifted->b)
      continue;
    Graph &g = candidate.graph(lifted->graph);
    // The writer reaching the reader means the new edge closes a cycle.
    if (g.reaches(lifted->b, lifted->a))
      continue;
    if (!g.addCtrlEdge(lifted->a, lifted->b))
      continue;
    added.push_back(edgeText(candidate, lifted->graph, lifted->a, lifted->b));
    return true;
  }
  return false;
}

void countItem(MissedReport &r, const MissedItem &item) {
  switch (item.status) {
  case MissedStatus::Unobserved:
    ++r.unobserved;
    break;
  case MissedStatus::Unexercised:
    ++r.unexercised;
    break;
  case MissedStatus::Removable:
    ++r.missed;
    ++r.missedByRule[item.rule];
    break;
  case MissedStatus::Necessary:
    ++r.necessary;
    break;
  case MissedStatus::Inconclusive:
    ++r.inconclusive;
    break;
  case MissedStatus::Reserved:
    ++r.reserved;
    break;
  case MissedStatus::Untried:
    ++r.untried;
    break;
  }
}

void tryCandidate(const Module &original, const Module &optimized, GraphId gid, NodeId nid,
                  const MissedOptions &opts, bool unobserved,
                  const std::function<bool()> &exercised, MissedItem &item) {
  Module candidate;
  std::string error;
  if (!buildCandidate(optimized, gid, nid, opts.maxAddedEdges, candidate, item.movedEdges,
                      item.addedEdges, error)) {
    item.status = MissedStatus::Necessary;
    item.violationKind = "structural";
    item.message = error;
    return;
  }
  oracle::CheckResult r = oracle::checkRefinement(original, candidate, opts.check);
  switch (r.verdict) {
  case oracle::Verdict::Sound:
    item.status = unobserved     ? MissedStatus::Unobserved
                  : !exercised() ? MissedStatus::Unexercised
                                 : MissedStatus::Removable;
    if (opts.keepCandidates)
      item.candidate = printModule(candidate);
    return;
  case oracle::Verdict::Violation:
    item.status = MissedStatus::Necessary;
    if (!r.violations.empty()) {
      item.violationKind = r.violations.front().kind;
      item.message = r.violations.front().message;
    }
    return;
  case oracle::Verdict::Inconclusive:
    item.status = MissedStatus::Inconclusive;
    item.message = r.reason;
    return;
  case oracle::Verdict::Invalid:
    // The original was valid for the pass output's check; an Invalid verdict
    // here means the oracle could not settle it: never count it as missed.
    item.status = MissedStatus::Inconclusive;
    item.message = "the oracle rejected the original: " + r.reason;
    return;
  }
}

} // namespace

std::string_view missedStatusName(MissedStatus s) {
  switch (s) {
  case MissedStatus::Removable:
    return "removable";
  case MissedStatus::Unobserved:
    return "unobserved";
  case MissedStatus::Unexercised:
    return "unexercised";
  case MissedStatus::Necessary:
    return "necessary";
  case MissedStatus::Inconclusive:
    return "inconclusive";
  case MissedStatus::Reserved:
    return "reserved";
  case MissedStatus::Untried:
    return "untried";
  }
  return "untried";
}

bool buildCandidate(const Module &optimized, GraphId graph, NodeId node, unsigned maxAddedEdges,
                    Module &candidate, std::vector<std::string> &moved,
                    std::vector<std::string> &added, std::string &error) {
  if (graph >= optimized.numGraphs() || !optimized.graph(graph).alive ||
      node >= optimized.graph(graph).capacity() || !optimized.graph(graph).node(node).alive) {
    error = "the node is not in the pass output";
    return false;
  }
  candidate = optimized;
  Graph &g = candidate.graph(graph);
  const Node &tm = g.node(node);
  if (tm.inputs.size() != 1 || !tm.inputs[0]) {
    error = "it does not have exactly one connected input";
    return false;
  }
  for (uint32_t k = 1; k < tm.numOutputs; ++k)
    if (!tm.consumers[k].empty()) {
      error = "its output " + std::to_string(k) + " is used";
      return false;
    }
  const OutPort source = *tm.inputs[0];
  // Every ordering that ran through the copy must survive its removal: each
  // predecessor (the producer, every control predecessor) before each
  // successor (every data consumer, every control successor). The producer
  // reaches the consumers by the relinked data edges already.
  std::vector<NodeId> preds{source.node};
  for (NodeId p : tm.ctrlIn)
    if (std::find(preds.begin(), preds.end(), p) == preds.end())
      preds.push_back(p);
  std::vector<NodeId> succs;
  for (const InPort &c : tm.consumers[0])
    if (std::find(succs.begin(), succs.end(), c.node) == succs.end())
      succs.push_back(c.node);
  for (NodeId s : tm.ctrlOut)
    if (std::find(succs.begin(), succs.end(), s) == succs.end())
      succs.push_back(s);

  g.replaceAllUses(OutPort{node, 0}, source);
  g.removeNode(node);
  for (NodeId p : preds)
    for (NodeId s : succs)
      if (p != s && !g.reaches(p, s) && g.addCtrlEdge(p, s))
        moved.push_back(edgeText(candidate, graph, p, s));

  for (unsigned i = 0; i < maxAddedEdges; ++i)
    if (!repairOneRace(candidate, added))
      break;
  return true;
}

MissedReport findMissedIn(const Module &original, const Module &optimized,
                          const std::vector<Remark> &remarks, const MissedOptions &opts) {
  MissedReport report;
  try {
    if (opts.checkPassOutput) {
      oracle::CheckResult r = oracle::checkRefinement(original, optimized, opts.check);
      if (r.verdict == oracle::Verdict::Invalid) {
        report.ok = false;
        report.error = "the original is not valid: " + r.reason;
        return report;
      }
      report.passVerdict = r.verdict;
      if (!r.violations.empty())
        report.passViolation = r.violations.front().kind + ": " + r.violations.front().message;
      else if (r.verdict == oracle::Verdict::Inconclusive)
        report.passViolation = r.reason;
    }
    unsigned tried = 0;
    std::optional<UnobservedNodes> dead;           // computed at the first candidate
    std::optional<UnobservedNodes> deadInOriginal; // at the first deletion
    // Which graphs of the original ran on the states the candidates are
    // checked on: a copy in a branch or loop body that never ran was never
    // tested by the oracle's experiments (only by its race analysis).
    std::optional<std::vector<bool>> ranInOriginal;
    auto exercised = [&](const std::string &graphName) {
      if (!ranInOriginal)
        ranInOriginal = oracle::executedGraphs(original, opts.check);
      GraphId og = original.findGraph(graphName);
      return ranInOriginal->empty() || og >= ranInOriginal->size() || (*ranInOriginal)[og];
    };
    for (const Remark &remark : remarks) {
      if (remark.pass != kTensorMoveDeleteName)
        continue;
      ++report.tensorMoves;
      if (remark.decision == "deleted") {
        ++report.deleted;
        if (!deadInOriginal)
          deadInOriginal = unobservedNodes(original);
        GraphId og = original.findGraph(remark.graph);
        NodeId on = og == kNoGraph ? kNoNode : original.graph(og).find(remark.node);
        if (on != kNoNode && deadInOriginal->contains(og, on))
          ++report.deletedUnobserved;
        else if (!exercised(remark.graph))
          ++report.deletedUnexercised;
        continue;
      }
      ++report.kept;
      MissedItem item;
      item.graph = remark.graph;
      item.loc = remark.loc;
      item.rule = remark.rule;
      item.passMessage = remark.message;
      GraphId gid = optimized.findGraph(remark.graph);
      NodeId nid = gid == kNoGraph ? kNoNode : optimized.graph(gid).find(remark.node);
      item.node =
          gid == kNoGraph || nid == kNoNode ? remark.node : optimized.qualifiedName(gid, nid);
      if (remark.decision == "skipped") {
        item.status = MissedStatus::Reserved;
      } else if (tried >= opts.maxCandidates) {
        item.status = MissedStatus::Untried;
        report.capped = true;
      } else if (nid == kNoNode) {
        item.status = MissedStatus::Inconclusive;
        item.message = "the kept node is not in the pass output";
      } else {
        ++tried;
        if (!dead)
          dead = unobservedNodes(optimized);
        tryCandidate(
            original, optimized, gid, nid, opts, dead->contains(gid, nid),
            [&] { return exercised(remark.graph); }, item);
      }
      countItem(report, item);
      report.items.push_back(std::move(item));
    }
  } catch (const std::exception &e) {
    report.ok = false;
    report.error = std::string("internal error: ") + e.what();
  }
  return report;
}

MissedReport findMissed(const Module &original, const MissedOptions &opts) {
  // As graphvet check: the original sees the pipeline's option overrides.
  if (!opts.pipeline.optionOverrides.empty()) {
    Module overridden = original;
    writeOptionOverrides(overridden, opts.pipeline);
    MissedOptions plain = opts;
    plain.pipeline.optionOverrides.clear(); // already written
    return findMissed(overridden, plain);
  }
  Module optimized = original;
  PipelineResult p;
  try {
    p = runPipeline(optimized, opts.pipeline);
  } catch (const std::exception &e) {
    MissedReport r;
    r.ok = false;
    r.error = std::string("the pipeline threw: ") + e.what();
    return r;
  }
  if (!p.ok && p.failedPass.empty()) {
    MissedReport r;
    r.ok = false;
    r.error = p.diagnostics.empty() ? "the pipeline did not run" : p.diagnostics.front().message;
    return r;
  }
  return findMissedIn(original, optimized, p.remarks, opts);
}

} // namespace graphvet::props
