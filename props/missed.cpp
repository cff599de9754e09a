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
#include "oracle/permissions.h"
#include "oracle/races.h"
#include "passes/tensor_move_delete.h"

#include <algorithm>
#include <exception>
#include <functional>
#include <memory>
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

bool UnobservedNodes::contains(GraphId g, NodeId n) const {
  return std::binary_search(nodes.begin(), nodes.end(), std::pair{g, n});
}

UnobservedNodes unobservedNodes(const Module &m) {
  UnobservedNodes out;
  oracle::MemoryPlan plan = oracle::MemoryPlan::build(m);
  if (!plan.errors().empty())
    return out; // nothing is certainly unobserved
  oracle::InlinedModule inl = oracle::InlinedModule::build(m, plan);
  if (!inl.errors.empty())
    return out;
  const auto &buffers = plan.buffers();
  std::vector<bool> liveBuffer(buffers.size(), false);
  // Caller-visible buffers start live, except a user input whose content
  // after a run is unspecified (semantics.md §4): writing it is observable
  // only through a graph output bound to it or a later live reader, and both
  // mark it below.
  oracle::Permissions perms = oracle::parsePermissions(m.options);
  for (size_t b = 0; b < buffers.size(); ++b)
    liveBuffer[b] = buffers[b].kind != oracle::BufferKind::Fresh &&
                    !(buffers[b].kind == oracle::BufferKind::UserInput &&
                      perms.inputUnspecified(buffers[b].inputIndex));
  // Flow sensitivity. A write matters when its buffer is observed at the
  // end (liveBuffer) or a live step may read the buffer after it: `readers`
  // lists the live steps that read each buffer (a step's reads and writes
  // of one buffer are one access, so a write counts as a read, erring on
  // the live side). Only for buffers every run refills before any read: a
  // fresh buffer its producer writes whole, and a user input with
  // unspecified content (refilled). Any other buffer may carry a late write
  // into the next run, so any live reader makes every write to it live.
  using StepRef = std::pair<uint32_t, uint32_t>; // (domain, step)
  std::vector<std::vector<StepRef>> readers(buffers.size());
  std::vector<bool> refilled(buffers.size(), false);
  for (const oracle::PortPlan &pp : plan.ports())
    if (pp.rule == oracle::BindRule::Own && pp.own < buffers.size() &&
        buffers[pp.own].kind == oracle::BufferKind::Fresh &&
        (pp.write == oracle::PortWrite::Compute || pp.write == oracle::PortWrite::Copy))
      refilled[pp.own] = true;
  for (size_t b = 0; b < buffers.size(); ++b)
    if (buffers[b].kind == oracle::BufferKind::UserInput &&
        perms.inputUnspecified(buffers[b].inputIndex))
      refilled[b] = true;
  // A domain inside a loop (a While's cond or body, at any depth) runs its
  // steps again after one another: no order inside it is final.
  std::vector<bool> insideLoop(inl.domains.size(), false);
  for (size_t d = 0; d < inl.domains.size(); ++d)
    for (size_t up = d, hops = 0; hops < inl.domains.size(); ++hops) {
      const oracle::Domain &dom = inl.domains[up];
      if (dom.parentDomain >= inl.domains.size())
        break;
      if (inl.domains[dom.parentDomain].steps[dom.parentStep].kind == oracle::StepKind::While) {
        insideLoop[d] = true;
        break;
      }
      up = dom.parentDomain;
    }
  std::vector<std::unique_ptr<oracle::Reachability>> reach(inl.domains.size());
  // The step and its control-flow ancestors, innermost first.
  auto ancestry = [&](StepRef s) {
    std::vector<StepRef> chain{s};
    for (size_t hops = 0; hops < inl.domains.size(); ++hops) {
      const oracle::Domain &dom = inl.domains[chain.back().first];
      if (dom.parentDomain >= inl.domains.size())
        break;
      chain.push_back({dom.parentDomain, dom.parentStep});
    }
    return chain;
  };
  // Every run executes `r` before `w`: in their innermost common domain
  // (outside any loop) r's step there reaches w's.
  auto runsBefore = [&](StepRef r, StepRef w) {
    std::vector<StepRef> rs = ancestry(r), ws = ancestry(w);
    for (const StepRef &a : rs)
      for (const StepRef &b : ws) {
        if (a.first != b.first)
          continue;
        if (insideLoop[a.first] || a.second == b.second)
          return false;
        if (!reach[a.first])
          reach[a.first] = std::make_unique<oracle::Reachability>(inl.domains[a.first]);
        return reach[a.first]->reaches(a.second, b.second);
      }
    return false;
  };
  auto bufferLive = [&](oracle::BufferId b) {
    return b >= liveBuffer.size() || liveBuffer[b] || !readers[b].empty();
  };
  // Does step `w`'s write to buffer `b` matter?
  auto writeLive = [&](StepRef w, oracle::BufferId b) {
    if (b >= liveBuffer.size() || liveBuffer[b])
      return true;
    for (const StepRef &r : readers[b])
      if (r != w && (!refilled[b] || !runsBefore(r, w)))
        return true;
    return false;
  };
  auto addReader = [&](oracle::BufferId b, StepRef r) {
    if (b >= readers.size() ||
        std::find(readers[b].begin(), readers[b].end(), r) != readers[b].end())
      return false;
    readers[b].push_back(r);
    return true;
  };
  // Marks every buffer the given ports may be bound to; true if one was not
  // live yet.
  auto markPorts = [&](GraphId g, const std::vector<std::optional<OutPort>> &inputs) {
    bool marked = false;
    for (const auto &in : inputs) {
      if (!in)
        continue;
      oracle::PortId p = plan.portId(g, *in);
      if (p == oracle::kNoPort)
        continue;
      for (oracle::BufferId c : plan.port(p).candidates)
        if (c < liveBuffer.size() && !liveBuffer[c])
          marked = liveBuffer[c] = true;
    }
    return marked;
  };
  // Step `self` reads every buffer the given ports may be bound to (a
  // control-flow step reading a condition or a body result); true if that
  // is new.
  auto readPorts = [&](StepRef self, GraphId g, const std::vector<std::optional<OutPort>> &ports) {
    bool added = false;
    for (const auto &in : ports) {
      if (!in)
        continue;
      oracle::PortId p = plan.portId(g, *in);
      if (p == oracle::kNoPort)
        continue;
      for (oracle::BufferId c : plan.port(p).candidates)
        added = addReader(c, self) || added;
    }
    return added;
  };
  // Is loop variable j of While `holder` (in graph g) possibly a live buffer?
  auto loopVarLive = [&](GraphId g, const Node &holder, int64_t j) {
    if (j < 0 || j >= int64_t(holder.inputs.size()))
      return true; // malformed: stay conservative
    std::optional<OutPort> port;
    if (j < int64_t(holder.numOutputs))
      port = OutPort{holder.id, uint32_t(j)};
    else
      port = holder.inputs[size_t(j)];
    if (!port)
      return false;
    oracle::PortId p = plan.portId(g, *port);
    if (p == oracle::kNoPort)
      return true;
    for (oracle::BufferId c : plan.port(p).candidates)
      if (bufferLive(c))
        return true;
    return false;
  };
  // For a node that scribbles its inputs: is any of its outputs (fresh,
  // copied or written in place) bound to a live buffer? Otherwise it is live
  // only through its scribbles.
  auto outputsLive = [&](const oracle::Step &step) {
    const Node &node = m.graph(step.graph).node(step.node);
    if (!isInputMutable(node))
      return true;
    for (uint32_t k = 0; k < node.numOutputs; ++k) {
      oracle::PortId p = plan.portId(step.graph, OutPort{step.node, k});
      if (p == oracle::kNoPort)
        return true;
      for (oracle::BufferId c : plan.port(p).candidates)
        if (bufferLive(c))
          return true;
    }
    return false;
  };
  // An If or Case decides which buffer each of its outputs names. When a
  // consumed output may name a live buffer, the decision is observable even
  // if no branch writes anything live (a scribbler of the output hits the
  // live buffer or not), so the step is live and its condition with it.
  auto bindsLive = [&](const oracle::Step &step) {
    const Node &holder = m.graph(step.graph).node(step.node);
    for (uint32_t k = 0; k < holder.numOutputs; ++k) {
      if (holder.consumers[k].empty())
        continue;
      oracle::PortId p = plan.portId(step.graph, OutPort{step.node, k});
      if (p == oracle::kNoPort)
        continue;
      for (oracle::BufferId c : plan.port(p).candidates)
        if (bufferLive(c))
          return true;
    }
    return false;
  };
  const Graph &root = m.root();
  for (NodeId n : root.liveNodes())
    if (root.node(n).type == "NetOutput")
      markPorts(0, root.node(n).inputs);
  // Per step: live (it writes a live buffer), and whether what it reads has
  // been marked live as well (a scribbler live only by its scribbles reads
  // nothing that matters).
  std::vector<std::vector<bool>> liveStep(inl.domains.size()), flowed(inl.domains.size());
  size_t totalSteps = 0;
  for (size_t d = 0; d < inl.domains.size(); ++d) {
    liveStep[d].assign(inl.domains[d].steps.size(), false);
    flowed[d].assign(inl.domains[d].steps.size(), false);
    totalSteps += inl.domains[d].steps.size();
  }
  // Monotone fixpoint: every round but the last sets another of the two
  // flags of some step, marks another buffer live or adds a (step, buffer)
  // reader pair, so at most 2 * totalSteps + buffers * (totalSteps + 1) + 1
  // rounds. Should the bound ever cut it short, nothing is claimed dead.
  bool changed = true;
  for (size_t round = 0; changed && round <= 2 * totalSteps + buffers.size() * (totalSteps + 1);
       ++round) {
    changed = false;
    for (size_t d = 0; d < inl.domains.size(); ++d)
      for (size_t i = 0; i < inl.domains[d].steps.size(); ++i) {
        if (flowed[d][i])
          continue;
        const oracle::Step &step = inl.domains[d].steps[i];
        StepRef self{uint32_t(d), uint32_t(i)};
        if (!liveStep[d][i]) {
          bool live = false;
          for (const oracle::Access &a : step.accesses)
            live = live || (a.write && writeLive(self, a.buffer));
          if (!live && (step.kind == oracle::StepKind::If || step.kind == oracle::StepKind::Case))
            live = bindsLive(step);
          if (!live)
            continue;
          liveStep[d][i] = true;
          changed = true;
        }
        if (step.subdomains.empty()) {
          // A scribble depends only on the old content of the buffer it
          // scribbles (semantics.md §1), which is live already: the other
          // inputs flow only into the node's outputs and ref writes.
          // It reads the old content of each buffer whose scribble matters
          // (revisited, as more scribbles come to matter).
          if (step.node != kNoNode && !outputsLive(step)) {
            for (const oracle::Access &a : step.accesses)
              if (a.write && writeLive(self, a.buffer))
                changed = addReader(a.buffer, self) || changed;
            continue;
          }
          // Whatever a live step touches may flow into what it writes.
          for (const oracle::Access &a : step.accesses)
            changed = addReader(a.buffer, self) || changed;
          flowed[d][i] = true;
          continue;
        }
        // A control-flow step accesses everything its subgraphs may: what
        // flows out of them is what their NetOutputs read, and what flows in
        // is what the node reads; inner steps are live by their own writes.
        const Node &holder = m.graph(step.graph).node(step.node);
        if (step.kind == oracle::StepKind::While) {
          // The condition decides how often everything runs. A body result
          // flows only into its loop variable (written back), which may
          // become live in a later round: revisited until nothing changes.
          // What the loop variables hold on entry is read by the steps that
          // read them, which mark it themselves.
          if (holder.subgraphs.size() != 2) {
            markPorts(step.graph, holder.inputs);
            for (GraphId sub : holder.subgraphs)
              for (NodeId n : m.graph(sub).liveNodes())
                if (m.graph(sub).node(n).type == "NetOutput")
                  changed = markPorts(sub, m.graph(sub).node(n).inputs) || changed;
            flowed[d][i] = true;
            continue;
          }
          const Graph &cond = m.graph(holder.subgraphs[0]);
          for (NodeId n : cond.liveNodes())
            if (cond.node(n).type == "NetOutput" && !cond.node(n).inputs.empty())
              changed = readPorts(self, holder.subgraphs[0], {cond.node(n).inputs[0]}) || changed;
          const Graph &body = m.graph(holder.subgraphs[1]);
          for (NodeId n : body.liveNodes()) {
            const Node &out = body.node(n);
            if (out.type != "NetOutput")
              continue;
            for (uint32_t k = 0; k < out.inputs.size(); ++k) {
              auto j = out.intAttr(Node::portKey(false, k, "_parent_node_index"));
              if (!j || loopVarLive(step.graph, holder, *j))
                changed = readPorts(self, holder.subgraphs[1], {out.inputs[k]}) || changed;
            }
          }
          continue;
        }
        flowed[d][i] = true;
        // If/Case: the condition decides which branch runs; every other
        // input reaches only the branch steps that read it (live by their
        // own writes). A result is the buffer its holder output is bound to
        // (one of that port's candidates), so a live reader of the output
        // marks it.
        if (!holder.inputs.empty())
          changed = readPorts(self, step.graph, {holder.inputs[0]}) || changed;
      }
  }
  if (changed)
    return out;
  for (size_t d = 0; d < inl.domains.size(); ++d)
    for (size_t i = 0; i < inl.domains[d].steps.size(); ++i) {
      const oracle::Step &step = inl.domains[d].steps[i];
      if (!liveStep[d][i] && step.node != kNoNode && step.kind == oracle::StepKind::Compute)
        out.nodes.emplace_back(step.graph, step.node);
    }
  std::sort(out.nodes.begin(), out.nodes.end());
  out.nodes.erase(std::unique(out.nodes.begin(), out.nodes.end()), out.nodes.end());
  return out;
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
