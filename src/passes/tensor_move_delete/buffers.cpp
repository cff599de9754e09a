// TensorMoveDeletePass: the analysis's buffer questions (analysis.h): the
// real sources of a trace through control flow, one buffer per port, the
// facts per buffer, and the writers that really write.
#include "passes/tensor_move_delete/analysis.h"

#include "ir/op_library.h"

#include <algorithm>

namespace graphvet::tmd {
namespace {

// Each expansion follows one control-flow step; the bound keeps a deep or
// wide nest of branches from costing more than a short walk per copy.
constexpr size_t kMaxExpansions = 64;

/// The port `end` bound to a buffer of its own (an unconnected slot, a
/// branch leaving a result unbound): an ordinary source.
SourceTrace ownBuffer(const TraceStep &end) {
  SourceTrace t;
  t.steps.push_back(end);
  t.kind = SourceKind::Ordinary;
  return t;
}

/// Several branches may bind the same port: it is one buffer (the memory
/// plan's candidates are a set), kept once.
std::vector<SourceTrace> uniqueEnds(std::vector<SourceTrace> ends) {
  std::vector<SourceTrace> unique;
  for (SourceTrace &e : ends) {
    bool seen = std::any_of(unique.begin(), unique.end(), [&](const SourceTrace &u) {
      return u.kind == e.kind && u.refOnPath == e.refOnPath &&
             u.steps.back().graph == e.steps.back().graph &&
             u.steps.back().port == e.steps.back().port;
    });
    if (!seen)
      unique.push_back(std::move(e));
  }
  return unique;
}

/// An ordinary op every output of which is a view of an input or lives in a
/// variable's buffer writes nothing (semantics.md §1), so it computes
/// nothing and reads nothing: only its outputs' consumers access memory.
bool accessesNothing(const Node &n) {
  if (opKind(n) != OpKind::Ordinary || isInputMutable(n) || n.numOutputs == 0)
    return false;
  for (uint32_t k = 0; k < n.numOutputs; ++k)
    if (!refVarSrcName(n, k) && (refInput(n, k) || !viewInput(n, k)))
      return false;
  return true;
}

} // namespace

std::optional<std::vector<SourceTrace>>
Analysis::resolveControlFlow(const SourceTrace &trace, bool allBindings, bool followLoops) const {
  std::vector<SourceTrace> ends, work{trace};
  size_t expansions = 0;
  while (!work.empty()) {
    SourceTrace tr = std::move(work.back());
    work.pop_back();
    if (tr.kind == SourceKind::None || tr.steps.empty())
      return std::nullopt;
    if (tr.kind != SourceKind::ControlFlow) {
      ends.push_back(std::move(tr));
      continue;
    }
    if (++expansions > kMaxExpansions)
      return std::nullopt;
    if (!expandControlFlow(tr.steps.back(), allBindings, followLoops, work, ends))
      return std::nullopt;
  }
  return uniqueEnds(std::move(ends));
}

bool Analysis::expandControlFlow(const TraceStep end, bool allBindings, bool followLoops,
                                 std::vector<SourceTrace> &work,
                                 std::vector<SourceTrace> &ends) const {
  const Graph &graph = m_.graph(end.graph);
  const Node &n = graph.node(end.port.node);
  if (opKind(n) == OpKind::DataSource) {
    // A branch Data is bound to the holder's input (semantics.md §1); a
    // loop variable is written back by the While itself: not read-only
    // (followed only for allBindings or followLoops).
    if (graph.parentNode == kNoNode)
      return false;
    const Node &holder = m_.graph(graph.parentGraph).node(graph.parentNode);
    auto p = n.intAttr("_parent_node_index");
    if ((opKind(holder) == OpKind::While && !allBindings && !followLoops) || !p || *p < 0 ||
        *p >= int64_t(holder.inputs.size()))
      return false;
    if (!holder.inputs[size_t(*p)]) {
      // An unconnected input: the Data is bound to a fresh buffer of its
      // own that reads as zero bytes (semantics.md §1-2), so it is an
      // ordinary source, known only inside the subgraph.
      ends.push_back(ownBuffer(end));
      return true;
    }
    work.push_back(
        traceSource(m_, index_, graph.parentGraph, *holder.inputs[size_t(*p)], maxTraceSteps_));
    return true;
  }
  // A While output is the buffer of its input (loop-carried in place; the
  // While is one of its writers). An If/Case output is the taken branch's
  // result: any branch's.
  if (opKind(n) == OpKind::While) {
    if (end.port.index >= n.inputs.size() || !n.inputs[end.port.index]) {
      if (!allBindings)
        return false;
      ends.push_back(ownBuffer(end));
      return true;
    }
    work.push_back(traceSource(m_, index_, end.graph, *n.inputs[end.port.index], maxTraceSteps_));
    return true;
  }
  if ((opKind(n) != OpKind::If && opKind(n) != OpKind::Case) || n.subgraphs.empty())
    return false;
  for (GraphId sub : n.subgraphs) {
    NodeId out = index_.netOutput(sub);
    auto slots = index_.resultSlots(sub, end.port.index);
    const Node *netOut = out == kNoNode ? nullptr : &m_.graph(sub).node(out);
    if (!netOut || slots.size() != 1 || slots[0] >= netOut->inputs.size() ||
        !netOut->inputs[slots[0]]) {
      if (!allBindings)
        return false;
      ends.push_back(ownBuffer(end)); // the output's own, zero-filled buffer
      continue;
    }
    work.push_back(traceSource(m_, index_, sub, *netOut->inputs[slots[0]], maxTraceSteps_));
  }
  return true;
}

std::optional<uint64_t> Analysis::realBytes(const SourceTrace &trace) const {
  std::optional<std::vector<SourceTrace>> ends = resolveControlFlow(trace, true);
  if (!ends || ends->empty())
    return std::nullopt;
  std::optional<uint64_t> size;
  for (const SourceTrace &end : *ends) {
    const TraceStep &e = end.steps.back();
    std::optional<uint64_t> bytes = outputBytes(m_.graph(e.graph).node(e.port.node), e.port.index);
    if (!bytes || (size && *size != *bytes))
      return std::nullopt;
    size = bytes;
  }
  return size;
}

std::optional<std::pair<GraphId, OutPort>> Analysis::oneBufferOf(GraphId g, OutPort in) const {
  SourceTrace tr = traceSource(m_, index_, g, in, maxTraceSteps_);
  if (tr.kind == SourceKind::ControlFlow) {
    std::optional<std::vector<SourceTrace>> ends =
        resolveControlFlow(tr, /*allBindings=*/false, /*followLoops=*/true);
    if (!ends || ends->size() != 1 || (*ends)[0].steps.empty())
      return std::nullopt;
    return std::pair{(*ends)[0].steps.back().graph, (*ends)[0].steps.back().port};
  }
  if (tr.kind == SourceKind::None || tr.steps.empty())
    return std::nullopt;
  return std::pair{tr.steps.back().graph, tr.steps.back().port};
}

Analysis::BufferKey Analysis::bufferKey(const SourceTrace &trace) const {
  const TraceStep &src = trace.steps.back();
  const Node &n = m_.graph(src.graph).node(src.port.node);
  switch (trace.kind) {
  case SourceKind::UserInput:
    return {1, 0, 0, trace.userInput, ""};
  case SourceKind::Variable:
    return {2, 0, 0, 0, n.name};
  case SourceKind::VariableRef:
    return {2, 0, 0, 0, *refVarSrcName(n, src.port.index)};
  default:
    return {3, src.graph, src.port.node, src.port.index, ""};
  }
}

std::vector<SlotRef> Analysis::bufferSlots(const SourceTrace &trace) const {
  // Every port bound to the buffer directly: the user input's root Data
  // nodes, the variable's ports, or the source port; the exploration finds
  // every alias (views, refs, subgraph boundaries, control-flow results).
  BufferKey key = bufferKey(trace);
  std::vector<SlotRef> slots;
  auto addPort = [&](PortRef p) {
    for (const SlotRef &s : consumerSlots(m_, p))
      slots.push_back(s);
  };
  if (std::get<0>(key) == 1) {
    for (NodeId d : index_.rootDataWithIndex(trace.userInput))
      for (uint32_t k = 0; k < m_.graph(0).node(d).numOutputs; ++k)
        addPort({0, {d, k}});
  } else if (std::get<0>(key) == 2) {
    for (const PortRef &p : index_.variablePorts(std::get<4>(key)))
      addPort(p);
  } else {
    addPort({trace.steps.back().graph, trace.steps.back().port});
  }
  return slots;
}

bool Analysis::anyNonExempt(const std::vector<NodeRef> &users) const {
  // Exempt (semantics.md §6): every input is one and the same port of one
  // buffer (no result chosen at run time). Merging buffers only makes
  // inputs more alike, so an exempt op stays exempt. The reference scope
  // counts every such op.
  // Inputs on different ports count as one buffer when each is bound to the
  // same one buffer (oneBufferOf: views, ref outputs, a branch Data, a loop
  // variable).
  auto exempt = [&](NodeRef u) {
    if (opts_.conservative)
      return false;
    const Node &n = m_.graph(u.graph).node(u.node);
    if (n.inputs.empty() || !n.inputs[0])
      return false;
    auto first = oneBufferOf(u.graph, *n.inputs[0]);
    if (!first)
      return false;
    for (const auto &in : n.inputs)
      if (!in || (*in != *n.inputs[0] && oneBufferOf(u.graph, *in) != first))
        return false;
    return true;
  };
  return !std::all_of(users.begin(), users.end(), exempt);
}

const BufferFacts &Analysis::bufferFacts(const SourceTrace &trace) {
  BufferKey key = bufferKey(trace);
  if (auto it = facts_.find(key); it != facts_.end())
    return it->second;
  BufferUses uses = exploreUses(m_, index_, bufferSlots(trace), opts_.analysisBudget, nullptr,
                                /*whileResultsCopied=*/true);
  BufferFacts f;
  f.overBudget = uses.overBudget;
  f.rootOutputs = uses.rootOutputs;
  f.continuous = anyNonExempt(uses.continuousUsers);
  f.writers = std::move(uses.writers);
  f.writerSlots = std::move(uses.writerSlots);
  return facts_.emplace(key, std::move(f)).first->second;
}

void Analysis::noteMerge(const std::vector<SourceTrace> &ends, const BufferUses &copy) {
  for (const SourceTrace &end : ends) {
    if (end.steps.empty() || end.kind == SourceKind::None || end.kind == SourceKind::ControlFlow)
      continue;
    auto it = facts_.find(bufferKey(end));
    if (it == facts_.end())
      continue; // computed from the graph (as it is then) when first needed
    BufferFacts &f = it->second;
    f.overBudget = f.overBudget || copy.overBudget;
    f.rootOutputs.insert(copy.rootOutputs.begin(), copy.rootOutputs.end());
    f.continuous = f.continuous || anyNonExempt(copy.continuousUsers); // (relinked by now)
    f.writers.insert(f.writers.end(), copy.writers.begin(), copy.writers.end());
    f.writerSlots.insert(f.writerSlots.end(), copy.writerSlots.begin(), copy.writerSlots.end());
  }
}

std::vector<NodeRef> Analysis::effectiveWriters(const std::vector<NodeRef> &writers,
                                                const std::vector<SlotRef> &slots,
                                                bool excuseWhiles) const {
  std::vector<NodeRef> out;
  for (size_t i = 0; i < writers.size(); ++i) {
    NodeRef w = writers[i];
    const Node &n = m_.graph(w.graph).node(w.node);
    if (excuseWhiles && i < slots.size() && opKind(n) == OpKind::While && !isInputMutable(n) &&
        n.subgraphs.size() == 2) {
      // Loop variable j is written back only from the body's result for j;
      // a result that is the body's Data for j (through views) is skipped.
      uint32_t j = slots[i].slot.index;
      GraphId body = n.subgraphs[1];
      NodeId out_ = index_.netOutput(body);
      if (out_ == kNoNode)
        continue; // nothing is written back into it
      const Node &netOut = m_.graph(body).node(out_);
      // A result slot left unconnected (`_`) writes nothing back either
      // (semantics.md §2; the oracle skips it too).
      std::vector<uint32_t> results;
      for (uint32_t r : index_.resultSlots(body, j))
        if (r < netOut.inputs.size() && netOut.inputs[r])
          results.push_back(r);
      if (results.empty())
        continue;
      // Only a loop variable bound to one buffer is known to be the body's
      // result itself; one that control flow decides at run time is written
      // back (the oracle's race analysis counts it too; found by graphvet
      // fuzz --seed 1, case seed 5047).
      SourceTrace in = j < n.inputs.size() && n.inputs[j]
                           ? traceSource(m_, index_, w.graph, *n.inputs[j], maxTraceSteps_)
                           : SourceTrace{};
      if (in.kind == SourceKind::None || in.kind == SourceKind::ControlFlow) {
        out.push_back(w);
        continue;
      }
      if (results.size() == 1 && results[0] < netOut.inputs.size() && netOut.inputs[results[0]]) {
        SourceTrace r = traceSource(m_, index_, body, *netOut.inputs[results[0]], maxTraceSteps_);
        if (!r.steps.empty() && !r.refOnPath && r.steps.back().graph == body) {
          const Node &d = m_.graph(body).node(r.steps.back().port.node);
          auto p = d.intAttr("_parent_node_index");
          if (opKind(d) == OpKind::DataSource && p && *p == int64_t(j))
            continue; // the result is the loop variable itself
        }
      }
    }
    out.push_back(w);
  }
  return out;
}

std::vector<NodeRef> Analysis::accessingNodes(const std::vector<SlotRef> &visited,
                                              std::initializer_list<NodeRef> except) const {
  std::vector<NodeRef> out;
  for (const SlotRef &s : visited) {
    NodeRef n{s.graph, s.slot.node};
    if (opKind(m_.graph(n.graph).node(n.node)) == OpKind::Call ||
        accessesNothing(m_.graph(n.graph).node(n.node)) ||
        std::find(except.begin(), except.end(), n) != except.end() ||
        std::find(out.begin(), out.end(), n) != out.end())
      continue;
    out.push_back(n);
  }
  return out;
}

} // namespace graphvet::tmd
