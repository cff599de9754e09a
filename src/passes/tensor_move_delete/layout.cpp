// TensorMoveDeletePass: what merging the copy's buffer into its source's
// does to sizes and to the memory layout (semantics.md §6): the checks the
// resize step and the extensions' merges share. Questions to the analysis
// (analysis.h), no state of their own.
#include "passes/tensor_move_delete/layout.h"

#include "ir/op_library.h"

#include <algorithm>

namespace graphvet::tmd {

namespace {

bool readersIgnoreResize(Analysis &a, NodeRef t, uint64_t copyBytes, uint64_t sourceBytes) {
  const Module &m = a.module();
  // A reader of r bytes sees the same bytes through the copy as from the
  // source when the copy keeps every source byte the reader takes.
  constexpr size_t kMaxPorts = 64; // ports bound to the copy examined (cost bound)
  auto fits = [&](uint64_t r) { return copyBytes >= std::min(sourceBytes, r); };
  // Every port bound to the copy's buffer: the copy, its views, and the
  // outputs of the calls, Ifs and Cases that return it.
  std::vector<std::pair<GraphId, OutPort>> ports{{t.graph, OutPort{t.node, 0}}};
  for (size_t next = 0; next < ports.size(); ++next) {
    if (ports.size() > kMaxPorts)
      return false;
    auto [gid, port] = ports[next];
    const Graph &g = m.graph(gid);
    for (InPort c : g.node(port.node).consumers[port.index]) {
      const Node &n = g.node(c.node);
      if (a.isDead({gid, c.node}))
        continue; // what it reads reaches nothing observed
      if (isCopy(n)) {
        // A copy reads its input 0 only and writes the common prefix.
        // (Output 1 on is computed from every input byte: issue 21.)
        if (c.index != 0 || n.inputs.size() != 1 || isInputMutable(n) || n.numOutputs != 1)
          return false;
        for (uint32_t k = 0; k < n.numOutputs; ++k)
          if (auto b = outputBytes(n, k); !b || !fits(*b))
            return false;
        continue;
      }
      OpKind kind = opKind(n);
      if (a.index().isRebound(gid, c.node))
        return false; // an output may view or write the copy itself
      if ((kind == OpKind::Call || kind == OpKind::If || kind == OpKind::Case) &&
          !isInputMutable(n)) {
        // The subgraphs' Data for this input are the copy's buffer; an
        // If/Case reads the first byte of input 0 (the branch index) itself.
        for (GraphId b : n.subgraphs)
          for (NodeId d : a.index().dataForParentInput(b, c.index))
            for (uint32_t k = 0; k < m.graph(b).node(d).numOutputs; ++k)
              ports.push_back({b, OutPort{d, k}});
        continue;
      }
      if (kind == OpKind::Ordinary && !isInputMutable(n) && n.numOutputs > 0) {
        // A view reads nothing; its readers count (an op with any other
        // output reads the whole input).
        for (uint32_t k = 0; k < n.numOutputs; ++k)
          if (viewInput(n, k) != c.index || refInput(n, k))
            return false;
        for (uint32_t k = 0; k < n.numOutputs; ++k)
          ports.push_back({gid, OutPort{c.node, k}});
        continue;
      }
      if (kind != OpKind::NetOutput || g.parentNode == kNoNode)
        return false;
      // A rebound holder's output is not the buffer its result or loop
      // variable names (found by ci/campaign, issue 21).
      if (a.index().isRebound(g.parentGraph, g.parentNode))
        return false;
      const Node &holder = m.graph(g.parentGraph).node(g.parentNode);
      auto j = n.portIntAttr(false, c.index, "_parent_node_index");
      OpKind hk = opKind(holder);
      if (hk == OpKind::Call || hk == OpKind::If || hk == OpKind::Case) {
        // The holder's output j is this buffer (when this branch ran).
        if (j && *j >= 0 && *j < int64_t(holder.numOutputs))
          ports.push_back({g.parentGraph, OutPort{holder.id, uint32_t(*j)}});
        continue;
      }
      if (hk != OpKind::While || holder.subgraphs.size() != 2)
        return false;
      if (gid == holder.subgraphs[0] && holder.subgraphs[1] != gid)
        continue; // the condition reads result 0's first byte; the others go nowhere
      if (gid != holder.subgraphs[1] || holder.subgraphs[0] == gid)
        return false;
      // A body result is copied into its loop variable (common prefix).
      if (!j || *j < 0 || *j >= int64_t(holder.inputs.size()) || !holder.inputs[size_t(*j)])
        return false;
      auto var = a.oneBufferOf(g.parentGraph, *holder.inputs[size_t(*j)]);
      if (!var)
        return false;
      auto b = outputBytes(m.graph(var->first).node(var->second.node), var->second.index);
      if (!b || !fits(*b))
        return false;
    }
  }
  return true;
}

} // namespace

bool sizeFits(Analysis &a, NodeRef t, std::optional<uint64_t> sourceBytes) {
  const Module &m = a.module();
  std::optional<uint64_t> copyBytes = outputBytes(m.graph(t.graph).node(t.node), 0);
  if (copyBytes == sourceBytes)
    return true;
  if (a.options().conservative || !copyBytes || !sourceBytes)
    return false;
  return *copyBytes > 0 && *sourceBytes > 0 && readersIgnoreResize(a, t, *copyBytes, *sourceBytes);
}

bool unconnectedOwnBuffer(const Module &m, const SourceTrace &trace) {
  if (trace.steps.empty())
    return false;
  const TraceStep &last = trace.steps.back();
  const Graph &g = m.graph(last.graph);
  const Node &n = g.node(last.port.node);
  if (opKind(n) == OpKind::DataSource) {
    if (g.parentNode == kNoNode || g.parentGraph == kNoGraph)
      return false;
    const Node &holder = m.graph(g.parentGraph).node(g.parentNode);
    auto p = n.intAttr("_parent_node_index");
    return opKind(holder) == OpKind::Call && p && *p >= 0 &&
           (*p >= int64_t(holder.inputs.size()) || !holder.inputs[size_t(*p)]);
  }
  auto in = aliasedInput(n, last.port.index);
  return opKind(n) == OpKind::Ordinary && in && !refInput(n, last.port.index) &&
         (*in >= n.inputs.size() || !n.inputs[*in]);
}

bool computedFresh(const Module &m, const SourceTrace &end) {
  if (end.kind != SourceKind::Ordinary || end.steps.empty())
    return false;
  const TraceStep &src = end.steps.back();
  return opKind(m.graph(src.graph).node(src.port.node)) != OpKind::DataSource;
}

bool grantedForCopy(Analysis &a, const SourceTrace &end, const BufferUses &copy) {
  if (end.kind != SourceKind::UserInput)
    return false;
  std::set<uint32_t> allowed = a.options().grants.outputsFor(end.userInput);
  bool anyOutput = a.options().grants.reusableInputs.count(end.userInput) > 0;
  return (anyOutput || !allowed.empty()) &&
         std::all_of(copy.rootOutputs.begin(), copy.rootOutputs.end(),
                     [&](uint32_t j) { return anyOutput || allowed.count(j) > 0; });
}

bool writesMayLandIn(Analysis &a, NodeRef t, const SourceTrace &end, const BufferUses &copy,
                     bool oneBuffer) {
  const Module &m = a.module();
  if (!computedFresh(m, end) && !grantedForCopy(a, end, copy))
    return false;
  const BufferFacts &f = a.bufferFacts(end);
  return !f.overBudget && f.rootOutputs.empty() &&
         !sourceLayoutAddsConflict(a, t, end, copy, oneBuffer);
}

bool continuousMergeAllowed(Analysis &a, NodeRef t, const std::vector<SourceTrace> &ends,
                            const BufferUses &copy) {
  const Module &m = a.module();
  // semantics.md §6: an input of a continuous op conflicts only with a
  // caller-owned user input, a weight, a variable or a graph output. A fresh
  // buffer that is no graph output may become one; merging buffers can only
  // make a continuous op's inputs more alike, never lose its exemption.
  auto fresh = [&] {
    if (!copy.rootOutputs.empty())
      return false;
    for (const SourceTrace &end : ends) {
      if (end.kind != SourceKind::Ordinary)
        return false;
      const BufferFacts &f = a.bufferFacts(end);
      if (f.overBudget || !f.rootOutputs.empty())
        return false;
    }
    return true;
  };
  if (fresh())
    return true;
  // A copy that is a graph output and feeds continuous-input ops conflicts
  // with each of them in the original already (§6: graph output and input
  // of a continuous op); a fresh source that feeds no continuous-input op
  // itself brings no conflict of its own (its graph outputs are checked by
  // the caller).
  // One source buffer: an op exempt for having all inputs on the copy stays
  // exempt (a source chosen at run time is several buffers, and loses it:
  // found by graphvet fuzz --seed 1 --missed during development).
  auto alreadyConflicting = [&] {
    if (copy.rootOutputs.empty() || ends.size() != 1)
      return false;
    for (const SourceTrace &end : ends) {
      if (end.kind != SourceKind::Ordinary)
        return false;
      const BufferFacts &f = a.bufferFacts(end);
      if (f.overBudget || f.continuous)
        return false;
    }
    return true;
  };
  if (alreadyConflicting())
    return true;
  // Otherwise only when the merge leaves each continuous op with every input
  // on one and the same buffer, which §6 exempts: each input is the copy or
  // the very port the copy reads, in the copy's graph, and that port is one
  // buffer (not a result chosen at run time).
  if (ends.size() != 1 || copy.continuousUsers.empty())
    return false;
  // Or the op already takes the copy's source port itself: whatever layout
  // conflict that buffer has with the op, the original has it too (the
  // conflict is per buffer and op; the copy's own buffer was fresh).
  const Node &tm = m.graph(t.graph).node(t.node);
  auto alreadyReadsSource = [&](NodeRef user) {
    if (user.graph != t.graph)
      return false;
    const Node &n = m.graph(user.graph).node(user.node);
    return std::any_of(n.inputs.begin(), n.inputs.end(), [&](const std::optional<OutPort> &in) {
      return in && *in == *tm.inputs[0];
    });
  };
  return std::all_of(copy.continuousUsers.begin(), copy.continuousUsers.end(), [&](NodeRef user) {
    return exemptAfterMerge(a, t, user) || alreadyReadsSource(user);
  });
}

bool sourceLayoutAddsConflict(Analysis &a, NodeRef t, const SourceTrace &end,
                              const BufferUses &copy, bool oneBuffer) {
  const Module &m = a.module();
  // A continuous-input op U reading the source conflicts with each graph
  // output the copy is, once the two are one buffer. The original has that
  // conflict already when the copy is those graph outputs itself (the root
  // NetOutput takes its port) and U, not exempt, takes the copy's port too.
  // (The buffer exploration over-approximates what reaches an op: a While's
  // write-back copies bytes, not the buffer; found by graphvet fuzz
  // --seed 17 during development.) An op exempt in the original, or after
  // the merge with one source buffer, brings none.
  const BufferFacts &f = a.bufferFacts(end);
  if (!f.continuous || copy.rootOutputs.empty())
    return false;
  if (a.options().conservative)
    return true;
  auto takesCopy = [&](NodeRef n) {
    const Node &node = m.graph(n.graph).node(n.node);
    return n.graph == t.graph && std::any_of(node.inputs.begin(), node.inputs.end(),
                                             [&](const std::optional<OutPort> &in) {
                                               return in && *in == OutPort{t.node, 0};
                                             });
  };
  NodeId netOut = a.index().netOutput(0);
  bool copyIsTheOutputs =
      t.graph == 0 && netOut != kNoNode &&
      std::all_of(copy.rootOutputs.begin(), copy.rootOutputs.end(), [&](uint32_t j) {
        const Node &ret = m.graph(0).node(netOut);
        return j < ret.inputs.size() && ret.inputs[j] && *ret.inputs[j] == OutPort{t.node, 0};
      });
  BufferUses uses = a.explore(a.bufferSlots(end), nullptr,
                              /*whileResultsCopied=*/true);
  if (uses.overBudget)
    return true;
  return std::any_of(uses.continuousUsers.begin(), uses.continuousUsers.end(), [&](NodeRef u) {
    return a.anyNonExempt({u}) && !(oneBuffer && exemptAfterMerge(a, t, u)) &&
           !(copyIsTheOutputs && takesCopy(u));
  });
}

bool exemptAfterMerge(Analysis &a, NodeRef t, NodeRef user) {
  const Module &m = a.module();
  // Each input is the copy or the port it reads (in the copy's graph), or,
  // anywhere, a port bound to the copy's buffer or to the source's one
  // buffer (through views, ref outputs, a branch Data, a loop variable).
  const Node &n = m.graph(user.graph).node(user.node);
  const Node &tm = m.graph(t.graph).node(t.node);
  const std::pair<GraphId, OutPort> copyBuffer{t.graph, OutPort{t.node, 0}};
  auto sameAsSource = [&](GraphId g, OutPort in) {
    if (a.options().conservative)
      return false;
    auto b = a.oneBufferOf(g, in);
    if (!b)
      return false;
    if (*b == copyBuffer)
      return true;
    auto source = a.oneBufferOf(t.graph, *tm.inputs[0]);
    return source && *b == *source;
  };
  for (const auto &in : n.inputs)
    if (!in || (!(user.graph == t.graph && (*in == OutPort{t.node, 0} || *in == *tm.inputs[0])) &&
                !sameAsSource(user.graph, *in)))
      return false;
  return !n.inputs.empty();
}

bool onePort(Analysis &a, const std::set<uint32_t> &outputs) {
  const Module &m = a.module();
  NodeId out = a.index().netOutput(0);
  if (out == kNoNode || outputs.empty())
    return false;
  const Node &n = m.graph(0).node(out);
  std::optional<OutPort> port;
  for (uint32_t k : outputs) {
    if (k >= n.inputs.size() || !n.inputs[k] || (port && *port != *n.inputs[k]))
      return false;
    port = n.inputs[k];
  }
  return true;
}

} // namespace graphvet::tmd
