// Liveness over the oracle's memory plan and scheduling domains: a monotone
// fixpoint of live steps, buffers live at the end of a run, and the live
// steps that read each buffer (for the flow-sensitive part).
#include "props/liveness.h"

#include "ir/op_library.h"
#include "oracle/inlined.h"
#include "oracle/memory_plan.h"
#include "oracle/permissions.h"
#include "oracle/races.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>

namespace graphvet::props {
namespace {

using StepRef = std::pair<uint32_t, uint32_t>; // (domain, step)

class Liveness {
public:
  Liveness(const Module &m, const oracle::MemoryPlan &plan, const oracle::InlinedModule &inl);
  UnobservedNodes run();

private:
  // -- what is known --------------------------------------------------------
  /// The buffer may be read by somebody live (at the end or by a step).
  bool bufferLive(oracle::BufferId b) const {
    return b >= liveAtEnd_.size() || liveAtEnd_[b] || !readers_[b].empty();
  }
  /// Does step `w`'s write to buffer `b` matter?
  bool writeLive(StepRef w, oracle::BufferId b);
  /// Every run executes `r` before `w`.
  bool runsBefore(StepRef r, StepRef w);
  std::vector<StepRef> ancestry(StepRef s) const;

  // -- what is learnt (each returns true when something is new) -------------
  bool addReader(oracle::BufferId b, StepRef r);
  /// Every buffer the ports may be bound to is live at the end of a run.
  bool markAtEnd(GraphId g, const std::vector<std::optional<OutPort>> &ports);
  /// Step `self` reads every buffer the ports may be bound to.
  bool readPorts(StepRef self, GraphId g, const std::vector<std::optional<OutPort>> &ports);

  // -- questions about nodes ------------------------------------------------
  /// Every buffer output `port` of graph `g` may be bound to; null if the
  /// plan has no such port.
  const std::vector<oracle::BufferId> *candidates(GraphId g, OutPort port) const;
  bool anyCandidateLive(GraphId g, OutPort port) const;
  bool loopVarLive(GraphId g, const Node &holder, int64_t j) const;
  bool outputsLive(const oracle::Step &step) const;
  bool bindsLive(const oracle::Step &step) const;

  // -- one visit of a live step; true when something is new -----------------
  bool visitCompute(StepRef self, const oracle::Step &step);
  bool visitWhile(StepRef self, const oracle::Step &step, const Node &holder);

  const Module &m_;
  const oracle::MemoryPlan &plan_;
  const oracle::InlinedModule &inl_;
  std::vector<bool> liveAtEnd_;
  std::vector<std::vector<StepRef>> readers_;
  /// Every run refills the buffer before reading it: a fresh buffer its
  /// producer writes whole, a user input with unspecified content. Any other
  /// buffer may carry a late write into the next run.
  std::vector<bool> refilled_;
  /// A domain inside a loop (a While's cond or body, at any depth) runs its
  /// steps again after one another: no order inside it is final.
  std::vector<bool> insideLoop_;
  std::vector<std::unique_ptr<oracle::Reachability>> reach_;
  std::vector<std::vector<bool>> liveStep_, flowed_;
};

Liveness::Liveness(const Module &m, const oracle::MemoryPlan &plan,
                   const oracle::InlinedModule &inl)
    : m_(m), plan_(plan), inl_(inl) {
  const auto &buffers = plan_.buffers();
  // Caller-visible buffers are read at the end, except a user input whose
  // content after a run is unspecified (semantics.md §4): it is refilled
  // before the next run, so nobody sees what is written into it last.
  oracle::Permissions perms = oracle::parsePermissions(m_.options);
  liveAtEnd_.assign(buffers.size(), false);
  refilled_.assign(buffers.size(), false);
  readers_.resize(buffers.size());
  for (size_t b = 0; b < buffers.size(); ++b) {
    bool unspecified = buffers[b].kind == oracle::BufferKind::UserInput &&
                       perms.inputUnspecified(buffers[b].inputIndex);
    liveAtEnd_[b] = buffers[b].kind != oracle::BufferKind::Fresh && !unspecified;
    refilled_[b] = unspecified;
  }
  for (const oracle::PortPlan &pp : plan_.ports())
    if (pp.rule == oracle::BindRule::Own && pp.own < buffers.size() &&
        buffers[pp.own].kind == oracle::BufferKind::Fresh &&
        (pp.write == oracle::PortWrite::Compute || pp.write == oracle::PortWrite::Copy))
      refilled_[pp.own] = true;
  insideLoop_.assign(inl_.domains.size(), false);
  for (size_t d = 0; d < inl_.domains.size(); ++d)
    for (size_t up = d, hops = 0; hops < inl_.domains.size(); ++hops) {
      const oracle::Domain &dom = inl_.domains[up];
      if (dom.parentDomain >= inl_.domains.size())
        break;
      if (inl_.domains[dom.parentDomain].steps[dom.parentStep].kind == oracle::StepKind::While) {
        insideLoop_[d] = true;
        break;
      }
      up = dom.parentDomain;
    }
  reach_.resize(inl_.domains.size());
  liveStep_.resize(inl_.domains.size());
  flowed_.resize(inl_.domains.size());
  for (size_t d = 0; d < inl_.domains.size(); ++d) {
    liveStep_[d].assign(inl_.domains[d].steps.size(), false);
    flowed_[d].assign(inl_.domains[d].steps.size(), false);
  }
}

std::vector<StepRef> Liveness::ancestry(StepRef s) const {
  // The step and its control-flow ancestors, innermost first.
  std::vector<StepRef> chain{s};
  for (size_t hops = 0; hops < inl_.domains.size(); ++hops) {
    const oracle::Domain &dom = inl_.domains[chain.back().first];
    if (dom.parentDomain >= inl_.domains.size())
      break;
    chain.push_back({dom.parentDomain, dom.parentStep});
  }
  return chain;
}

bool Liveness::runsBefore(StepRef r, StepRef w) {
  // In their innermost common domain (outside any loop) r's step there
  // reaches w's.
  std::vector<StepRef> rs = ancestry(r), ws = ancestry(w);
  for (const StepRef &a : rs)
    for (const StepRef &b : ws) {
      if (a.first != b.first)
        continue;
      if (insideLoop_[a.first] || a.second == b.second)
        return false;
      if (!reach_[a.first])
        reach_[a.first] = std::make_unique<oracle::Reachability>(inl_.domains[a.first]);
      return reach_[a.first]->reaches(a.second, b.second);
    }
  return false;
}

bool Liveness::writeLive(StepRef w, oracle::BufferId b) {
  // A step's reads and writes of one buffer are one access, so a write
  // counts as a read too, erring on the live side.
  if (b >= liveAtEnd_.size() || liveAtEnd_[b])
    return true;
  for (const StepRef &r : readers_[b])
    if (r != w && (!refilled_[b] || !runsBefore(r, w)))
      return true;
  return false;
}

bool Liveness::addReader(oracle::BufferId b, StepRef r) {
  if (b >= readers_.size() ||
      std::find(readers_[b].begin(), readers_[b].end(), r) != readers_[b].end())
    return false;
  readers_[b].push_back(r);
  return true;
}

const std::vector<oracle::BufferId> *Liveness::candidates(GraphId g, OutPort port) const {
  oracle::PortId p = plan_.portId(g, port);
  return p == oracle::kNoPort ? nullptr : &plan_.port(p).candidates;
}

bool Liveness::markAtEnd(GraphId g, const std::vector<std::optional<OutPort>> &ports) {
  bool marked = false;
  for (const auto &in : ports)
    if (const auto *cs = in ? candidates(g, *in) : nullptr)
      for (oracle::BufferId c : *cs)
        if (c < liveAtEnd_.size() && !liveAtEnd_[c])
          marked = liveAtEnd_[c] = true;
  return marked;
}

bool Liveness::readPorts(StepRef self, GraphId g,
                         const std::vector<std::optional<OutPort>> &ports) {
  bool added = false;
  for (const auto &in : ports)
    if (const auto *cs = in ? candidates(g, *in) : nullptr)
      for (oracle::BufferId c : *cs)
        added = addReader(c, self) || added;
  return added;
}

bool Liveness::anyCandidateLive(GraphId g, OutPort port) const {
  const auto *cs = candidates(g, port);
  if (!cs)
    return true; // unknown: stay conservative
  return std::any_of(cs->begin(), cs->end(), [&](oracle::BufferId c) { return bufferLive(c); });
}

bool Liveness::loopVarLive(GraphId g, const Node &holder, int64_t j) const {
  if (j < 0 || j >= int64_t(holder.inputs.size()))
    return true; // malformed: stay conservative
  std::optional<OutPort> port;
  if (j < int64_t(holder.numOutputs))
    port = OutPort{holder.id, uint32_t(j)};
  else
    port = holder.inputs[size_t(j)];
  return port && anyCandidateLive(g, *port);
}

bool Liveness::outputsLive(const oracle::Step &step) const {
  // For a node that scribbles its inputs: is any of its outputs (fresh,
  // copied or written in place) bound to a live buffer? Otherwise it is live
  // only through its scribbles.
  const Node &node = m_.graph(step.graph).node(step.node);
  if (!isInputMutable(node))
    return true;
  for (uint32_t k = 0; k < node.numOutputs; ++k)
    if (anyCandidateLive(step.graph, OutPort{step.node, k}))
      return true;
  return false;
}

bool Liveness::bindsLive(const oracle::Step &step) const {
  // An If or Case decides which buffer each of its outputs names. When a
  // consumed output may name a live buffer, the decision is observable even
  // if no branch writes anything live (a scribbler of the output hits the
  // live buffer or not).
  const Node &holder = m_.graph(step.graph).node(step.node);
  for (uint32_t k = 0; k < holder.numOutputs; ++k)
    if (!holder.consumers[k].empty() && candidates(step.graph, OutPort{step.node, k}) &&
        anyCandidateLive(step.graph, OutPort{step.node, k}))
      return true;
  return false;
}

bool Liveness::visitCompute(StepRef self, const oracle::Step &step) {
  bool changed = false;
  // A scribble depends only on the old content of the buffer it scribbles
  // (semantics.md §1): a scribbler whose outputs are dead reads the old
  // content of each buffer whose scribble matters, and nothing else
  // (revisited, as more scribbles come to matter).
  if (step.node != kNoNode && !outputsLive(step)) {
    for (const oracle::Access &a : step.accesses)
      if (a.write && writeLive(self, a.buffer))
        changed = addReader(a.buffer, self) || changed;
    return changed;
  }
  // Whatever a live step touches may flow into what it writes.
  for (const oracle::Access &a : step.accesses)
    changed = addReader(a.buffer, self) || changed;
  flowed_[self.first][self.second] = true;
  return changed;
}

bool Liveness::visitWhile(StepRef self, const oracle::Step &step, const Node &holder) {
  // The condition decides how often everything runs. A body result flows
  // only into its loop variable (written back), which may become live in a
  // later round: revisited until nothing changes. What the loop variables
  // hold on entry is read by the steps that read them. Both reads happen
  // while the While runs.
  bool changed = false;
  if (holder.subgraphs.size() != 2) {
    changed = markAtEnd(step.graph, holder.inputs);
    for (GraphId sub : holder.subgraphs)
      for (NodeId n : m_.graph(sub).liveNodes())
        if (m_.graph(sub).node(n).type == "NetOutput")
          changed = markAtEnd(sub, m_.graph(sub).node(n).inputs) || changed;
    flowed_[self.first][self.second] = true;
    return changed;
  }
  const Graph &cond = m_.graph(holder.subgraphs[0]);
  for (NodeId n : cond.liveNodes())
    if (cond.node(n).type == "NetOutput" && !cond.node(n).inputs.empty())
      changed = readPorts(self, holder.subgraphs[0], {cond.node(n).inputs[0]}) || changed;
  const Graph &body = m_.graph(holder.subgraphs[1]);
  for (NodeId n : body.liveNodes()) {
    const Node &out = body.node(n);
    if (out.type != "NetOutput")
      continue;
    for (uint32_t k = 0; k < out.inputs.size(); ++k) {
      auto j = out.portIntAttr(false, k, "_parent_node_index");
      if (!j || loopVarLive(step.graph, holder, *j))
        changed = readPorts(self, holder.subgraphs[1], {out.inputs[k]}) || changed;
    }
  }
  return changed;
}

UnobservedNodes Liveness::run() {
  UnobservedNodes out;
  const Graph &root = m_.root();
  for (NodeId n : root.liveNodes())
    if (root.node(n).type == "NetOutput")
      markAtEnd(0, root.node(n).inputs);
  size_t totalSteps = 0;
  for (const oracle::Domain &dom : inl_.domains)
    totalSteps += dom.steps.size();
  // Monotone fixpoint: every round but the last makes a step live, marks it
  // flowed, marks a buffer live at the end or adds a (step, buffer) reader
  // pair, so at most 2 * totalSteps + buffers * (totalSteps + 1) + 1 rounds.
  // Should the bound ever cut it short, nothing is claimed dead.
  const size_t maxRounds = 2 * totalSteps + liveAtEnd_.size() * (totalSteps + 1);
  bool changed = true;
  for (size_t round = 0; changed && round <= maxRounds; ++round) {
    changed = false;
    for (size_t d = 0; d < inl_.domains.size(); ++d)
      for (size_t i = 0; i < inl_.domains[d].steps.size(); ++i) {
        if (flowed_[d][i])
          continue;
        const oracle::Step &step = inl_.domains[d].steps[i];
        StepRef self{uint32_t(d), uint32_t(i)};
        if (!liveStep_[d][i]) {
          bool live = false;
          for (const oracle::Access &a : step.accesses)
            live = live || (a.write && writeLive(self, a.buffer));
          if (!live && (step.kind == oracle::StepKind::If || step.kind == oracle::StepKind::Case))
            live = bindsLive(step);
          if (!live)
            continue;
          liveStep_[d][i] = true;
          changed = true;
        }
        if (step.subdomains.empty()) {
          changed = visitCompute(self, step) || changed;
          continue;
        }
        // A control-flow step accesses everything its subgraphs may: what
        // flows out of them is what their NetOutputs read, and what flows
        // in is what the node reads; inner steps are live by their own
        // writes.
        const Node &holder = m_.graph(step.graph).node(step.node);
        if (step.kind == oracle::StepKind::While) {
          changed = visitWhile(self, step, holder) || changed;
          continue;
        }
        // If/Case: the condition decides which branch runs; every other
        // input reaches only the branch steps that read it (live by their
        // own writes). A result is the buffer its holder output is bound
        // to (one of that port's candidates), so a live reader of the
        // output reads it.
        flowed_[d][i] = true;
        if (!holder.inputs.empty())
          changed = readPorts(self, step.graph, {holder.inputs[0]}) || changed;
      }
  }
  if (changed)
    return out;
  for (size_t d = 0; d < inl_.domains.size(); ++d)
    for (size_t i = 0; i < inl_.domains[d].steps.size(); ++i) {
      const oracle::Step &step = inl_.domains[d].steps[i];
      if (!liveStep_[d][i] && step.node != kNoNode && step.kind == oracle::StepKind::Compute)
        out.nodes.emplace_back(step.graph, step.node);
    }
  std::sort(out.nodes.begin(), out.nodes.end());
  out.nodes.erase(std::unique(out.nodes.begin(), out.nodes.end()), out.nodes.end());
  return out;
}

} // namespace

bool UnobservedNodes::contains(GraphId g, NodeId n) const {
  return std::binary_search(nodes.begin(), nodes.end(), std::pair{g, n});
}

UnobservedNodes unobservedNodes(const Module &m) {
  oracle::MemoryPlan plan = oracle::MemoryPlan::build(m);
  if (!plan.errors().empty())
    return {}; // nothing is certainly unobserved
  oracle::InlinedModule inl = oracle::InlinedModule::build(m, plan);
  if (!inl.errors.empty())
    return {};
  return Liveness(m, plan, inl).run();
}

} // namespace graphvet::props
