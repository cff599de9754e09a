// TensorMoveDeletePass: Extensions: read-only sources, loop variables, orderings, written copies.
#include "passes/tensor_move_delete/deleter.h"

#include "ir/op_library.h"
#include "ir/printer.h"

#include <algorithm>
#include <functional>
#include <set>
#include <string>

namespace graphvet::tmd {

std::optional<Verdict> TensorMoveDeleter::tryReadOnlyMemory(NodeRef t, const Verdict &kept) {
  // Sound because nothing can tell the two buffers apart: every buffer the
  // source can be is written only by nodes that run before the copy, and the
  // copy is never written, so every successor reads at its own time exactly
  // the bytes the copy took, in both runs. The copy reaches no op demanding
  // continuous inputs (no new layout class); when it reaches a graph output,
  // the source is a fresh buffer that is no graph output, user input,
  // variable or weight and feeds no continuous-input op, so the caller sees
  // no new alias and §6 no new conflict. No ordering is needed beyond the
  // control edges apply() moves.
  constexpr size_t kMaxWriters = 64; // writers checked per copy (cost bound)
  const Node &tm = m_.graph(t.graph).node(t.node);
  SourceTrace trace = traceSource(m_, index_, t.graph, *tm.inputs[0], maxTraceSteps_);
  if (trace.kind == SourceKind::None && unconnectedOwnBuffer(trace)) {
    // A buffer of its own that reads zero bytes and keeps whatever is
    // written into it across runs: an unwritten copy that reaches no graph
    // output (which the caller could overwrite) may read it directly.
    const BufferUses &copy = tensorMoveUses(t);
    if (copy.overBudget || !copy.rootOutputs.empty() || !effectiveWriters(copy).empty())
      return std::nullopt;
    trace.kind = SourceKind::Ordinary;
    trace.failure.clear();
  }
  bool viaControlFlow = trace.kind == SourceKind::ControlFlow;
  std::optional<std::vector<SourceTrace>> ends;
  bool viaLoopVariable = false;
  if (viaControlFlow)
    ends = resolveControlFlow(trace);
  else if (trace.kind != SourceKind::None && !trace.steps.empty())
    ends = std::vector<SourceTrace>{trace};
  if (viaControlFlow && !ends) {
    if (auto v = tryLoopVariable(t, kept, trace))
      return v;
    if (auto v = tryLoopWriteBack(t, kept, trace))
      return v;
    // The loop variables themselves, as any source of a copy nobody writes:
    // the While is one of their writers (its write-back), ordered below
    // like the others. (A written copy would carry its writes into the
    // variable, and so into the next iteration's reads.)
    ends = resolveControlFlow(trace, /*allBindings=*/false, /*followLoops=*/true);
    viaLoopVariable = true;
  }
  if (!ends || ends->empty())
    return std::nullopt;
  for (const SourceTrace &end : *ends) {
    const TraceStep &src = end.steps.back();
    if (!sizeFits(t, outputBytes(m_.graph(src.graph).node(src.port.node), src.port.index)))
      return std::nullopt;
  }
  const BufferUses &copy = tensorMoveUses(t);
  if (!copy.overBudget && !effectiveWriters(copy, ends->size() == 1).empty()) {
    // A written copy of a loop variable would carry its writes into the
    // variable, and so into the next iteration, unless the merged buffer
    // ends each scribble exactly like the variable (the source first).
    if (viaLoopVariable)
      return tryScribbledPair(t, kept, std::move(trace), std::move(*ends), true);
    if (auto v = tryWrittenCopy(t, kept, trace, *ends))
      return v;
    if (auto v = tryScribbledPair(t, kept, trace, *ends, false))
      return v;
    if (auto v = tryDeadLoopPair(t, kept, trace, *ends))
      return v;
    return tryLoopMirror(t, kept, std::move(trace), std::move(*ends));
  }
  if (copy.overBudget || (!copy.continuousUsers.empty() && !continuousMergeAllowed(t, *ends, copy)))
    return std::nullopt;
  // A copy reaching graph outputs may merge into a fresh buffer nobody can
  // observe, or into a user input whose sharing with those outputs the
  // options grant: inputReuseMemIndexes lets any output share it (and so
  // each other); an outputReuseInputMemIndexes pair "j,k" only output j, so
  // the input must not be another graph output already (the merge would
  // make the two outputs alias: found by graphvet fuzz --seed 1).
  bool grantedOutputs = false;
  auto outputsGranted = [&](const SourceTrace &end) {
    if (end.kind != SourceKind::UserInput)
      return false;
    if (opts_.grants.reusableInputs.count(end.userInput))
      return true;
    if (!bufferFacts(end).rootOutputs.empty())
      return false;
    std::set<uint32_t> allowed = opts_.grants.outputsFor(end.userInput);
    return std::all_of(copy.rootOutputs.begin(), copy.rootOutputs.end(),
                       [&](uint32_t j) { return allowed.count(j) > 0; });
  };
  std::vector<NodeRef> late; // writers that may run after the copy
  for (const SourceTrace &end : *ends) {
    bool granted = !copy.rootOutputs.empty() && outputsGranted(end);
    grantedOutputs = grantedOutputs || granted;
    if (!copy.rootOutputs.empty() && end.kind != SourceKind::Ordinary && !granted)
      return std::nullopt;
    const BufferFacts &f = bufferFacts(end);
    if (f.overBudget || f.writers.size() > kMaxWriters)
      return std::nullopt;
    std::vector<NodeRef> fWriters = effectiveWriters(f.writers, f.writerSlots);
    // A fresh source already bound to the same single graph output as the
    // copy (one branch returns the copy, another the source) gains no alias.
    std::set<uint32_t> both = f.rootOutputs;
    both.insert(copy.rootOutputs.begin(), copy.rootOutputs.end());
    // So are several graph outputs that all take the same port: they are one
    // buffer in every run already.
    bool sameOutput = end.kind == SourceKind::Ordinary && (both.size() == 1 || onePort(both));
    if (!copy.rootOutputs.empty() && ((!f.rootOutputs.empty() && !granted && !sameOutput) ||
                                      sourceLayoutAddsConflict(t, end, copy, ends->size() == 1)))
      return std::nullopt;
    for (NodeRef w : fWriters)
      if (!precedesCopy(t, trace, w, &copy) && !otherBranch(t, w) &&
          std::find(late.begin(), late.end(), w) == late.end())
        late.push_back(w);
  }
  Verdict v;
  if (!late.empty()) {
    // A graph output is read after every writer: no edge can help. Nor
    // can one inside a While that takes both; such a loop may keep the two
    // equal, though (ext-loop-mirror).
    auto edges = copy.rootOutputs.empty() ? orderReadersBeforeWriters(t, late) : std::nullopt;
    if (!edges)
      return late.size() == 1 ? tryLoopMirror(t, kept, std::move(trace), std::move(*ends))
                              : std::nullopt;
    v.orderEdges = std::move(edges->edges);
  }
  v.outcome = Outcome::Delete;
  v.looseSuccessors = true;
  v.rule = !late.empty()    ? "ext-readers-before-writers"
           : viaControlFlow ? "ext-readonly-control-flow"
           : grantedOutputs ? "ext-readonly-granted-output"
                            : "ext-readonly-source";
  v.reason = kept.rule;
  v.trace = std::move(trace);
  v.ends = std::move(*ends);
  return v;
}

std::optional<Verdict> TensorMoveDeleter::tryLoopVariable(NodeRef t, const Verdict &kept,
                                                          SourceTrace trace) {
  // The trace ended at a Data of a While's cond or body: the loop variable L
  // (the buffer of the While's input p). Within one iteration the copy takes
  // L, its readers read it, and the body's results are written back into the
  // loop variables at the end. When nothing in the While's subgraphs (nor
  // anything the memory reaches from them) writes L, L holds the copy's bytes
  // from the copy until the write-back, so readers of L see what they saw in
  // the copy, and writing back L (instead of the copy) into a loop variable
  // writes the same bytes. Everything outside the While runs before or after
  // the whole loop (one step), so accesses there do not matter. The copy
  // itself must be unwritten and reach no graph output or continuous-input
  // op, as for ext-readonly-source.
  const TraceStep &end = trace.steps.back();
  const Graph &bodyGraph = m_.graph(end.graph);
  const Node &data = bodyGraph.node(end.port.node);
  if (opKind(data) != OpKind::DataSource || bodyGraph.parentNode == kNoNode)
    return std::nullopt;
  const Node &loop = m_.graph(bodyGraph.parentGraph).node(bodyGraph.parentNode);
  auto p = data.intAttr("_parent_node_index");
  if (opKind(loop) != OpKind::While || !p || *p < 0 || *p >= int64_t(loop.inputs.size()) ||
      !loop.inputs[size_t(*p)])
    return std::nullopt;
  // The copy must not resize: compare with the buffer really bound to the
  // loop variable (the While input's source; the Data's own description
  // does not size anything, semantics.md §1).
  SourceTrace outer =
      traceSource(m_, index_, bodyGraph.parentGraph, *loop.inputs[size_t(*p)], maxTraceSteps_);
  // The loop's input may itself come out of control flow: every buffer it
  // can be (as for ext-readonly-control-flow), an enclosing loop's variable
  // included (that loop writes it back only around this one, a step of its
  // cond or body).
  std::optional<std::vector<SourceTrace>> reals;
  if (outer.kind == SourceKind::ControlFlow)
    reals = resolveControlFlow(outer, /*allBindings=*/false, /*followLoops=*/true);
  else if (outer.kind != SourceKind::None && !outer.steps.empty())
    reals = std::vector<SourceTrace>{outer};
  if (!reals || reals->empty())
    return std::nullopt;
  for (const SourceTrace &r : *reals) {
    const TraceStep &real = r.steps.back();
    if (!sizeFits(t, outputBytes(m_.graph(real.graph).node(real.port.node), real.port.index)))
      return std::nullopt;
  }
  NodeRef loopRef{bodyGraph.parentGraph, bodyGraph.parentNode};
  // Inside the copy's own subgraph (cond or body), nested ones included.
  auto inSubgraph = [&](NodeRef n) { return insideGraph(n, end.graph); };
  // The copy's memory leaves its subgraph only as a result, which the loop
  // copies into a loop variable (the While's outputs are its inputs): graph
  // outputs, writers and continuous ops reached that way see the loop
  // variables, the same in both graphs. Inside, it must be read only.
  const BufferUses &copy = tensorMoveUses(t);
  std::vector<NodeRef> copyWriters = effectiveWriters(copy, reals->size() == 1);
  // (A continuous-input op all of whose inputs become L, one buffer, is
  // exempt: semantics.md §6.)
  if (copy.overBudget || std::any_of(copyWriters.begin(), copyWriters.end(), inSubgraph) ||
      std::any_of(copy.continuousUsers.begin(), copy.continuousUsers.end(), [&](NodeRef n) {
        return inSubgraph(n) && !(reals->size() == 1 && exemptAfterMerge(t, n));
      }))
    return std::nullopt;
  // Only the copy's own subgraph (cond or body) matters: the other one runs
  // before or after the whole of it, and the copy's memory leaves it only as
  // a snapshot (the condition, or the write-back).
  constexpr size_t kMaxWriters = 64; // writers checked per copy (cost bound)
  std::vector<SlotRef> slots;
  for (NodeId d : index_.dataForParentInput(end.graph, uint32_t(*p)))
    for (uint32_t k = 0; k < bodyGraph.node(d).numOutputs; ++k)
      for (const SlotRef &s : consumerSlots(m_, {end.graph, {d, k}}))
        slots.push_back(s);
  BufferUses inside = exploreUses(m_, index_, slots, opts_.analysisBudget, nullptr,
                                  /*whileResultsCopied=*/true);
  if (inside.overBudget || inside.writers.size() > kMaxWriters ||
      (writes(inside.access) && inside.writers.empty()))
    return std::nullopt;
  // The loop variable's buffer may also be reached inside the loop by other
  // routes: a variable by name (a reference to it inside the body), or the
  // same buffer bound to another loop variable (found by graphvet fuzz
  // --seed 424242). Every writer of the real buffer inside the loop must run
  // before the copy in its subgraph, or in the loop's other subgraph; the
  // While's own write-back comes after every reader of the iteration.
  std::vector<NodeRef> realWriters;
  for (const SourceTrace &r : *reals) {
    const BufferFacts &facts = bufferFacts(r);
    if (facts.overBudget || realWriters.size() + facts.writers.size() > kMaxWriters)
      return std::nullopt;
    std::vector<NodeRef> w = effectiveWriters(facts.writers, facts.writerSlots);
    realWriters.insert(realWriters.end(), w.begin(), w.end());
  }
  auto insideLoop = [&](NodeRef w) {
    return w == loopRef || std::any_of(loop.subgraphs.begin(), loop.subgraphs.end(),
                                       [&](GraphId sub) { return insideGraph(w, sub); });
  };
  std::vector<NodeRef> insideWriters = effectiveWriters(inside);
  for (const std::vector<NodeRef> *writers :
       std::initializer_list<const std::vector<NodeRef> *>{&insideWriters, &realWriters})
    for (NodeRef w : *writers)
      if (w != loopRef && insideLoop(w) && !precedesCopy(t, trace, w, &copy))
        return std::nullopt;
  // The copy's accesses become L's.
  return extensionDelete("ext-loop-variable", kept, std::move(trace), std::move(*reals));
}

std::optional<TensorMoveDeleter::Ordering>
TensorMoveDeleter::orderBefore(NodeRef t, const std::vector<NodeRef> &firsts,
                               const std::vector<NodeRef> &seconds,
                               const std::function<bool(NodeRef, NodeRef)> &excused) {
  // Each pair is ordered in the innermost graph holding both. A control
  // edge to or from a call or an If/Case/While covers every node inside it
  // (semantics.md §2), so a nested node is ordered through the node holding
  // it there.
  constexpr size_t kMaxEdges = 16; // edges added per copy (output size bound)
  auto chainOf = [&](NodeRef n) {
    std::vector<NodeRef> chain{n}; // n, then each node holding it
    while (chain.size() <= m_.numGraphs()) {
      const Graph &ng = m_.graph(chain.back().graph);
      if (ng.parentNode == kNoNode || ng.parentGraph == kNoGraph)
        break;
      chain.push_back({ng.parentGraph, ng.parentNode});
    }
    return chain;
  };
  // Two branches of one If/Case never both run while the holder runs once
  // per run of the copy: every loop around the holder is around the copy
  // too. (A loop around the holder alone could take one branch in an
  // iteration and the other in the next, both after the copy.)
  const std::vector<NodeRef> copyChain = chainOf(t);
  auto exclusiveBranches = [&](GraphId gid, NodeId holder, GraphId inA, GraphId inB) {
    const Node &h = m_.graph(gid).node(holder);
    if ((opKind(h) != OpKind::If && opKind(h) != OpKind::Case) || inA == inB)
      return false;
    for (NodeRef up : chainOf({gid, holder}))
      if (opKind(m_.graph(up.graph).node(up.node)) == OpKind::While &&
          std::find(copyChain.begin(), copyChain.end(), up) == copyChain.end())
        return false;
    return true;
  };
  Ordering out;
  for (NodeRef second : seconds) {
    std::vector<NodeRef> bChain = chainOf(second);
    for (NodeRef first : firsts) {
      if (excused && excused(first, second))
        continue;
      std::vector<NodeRef> aChain = chainOf(first);
      // The innermost graph on both chains.
      std::optional<std::pair<size_t, size_t>> meet;
      for (size_t i = 0; i < aChain.size() && !meet; ++i)
        for (size_t j = 0; j < bChain.size() && !meet; ++j)
          if (aChain[i].graph == bChain[j].graph)
            meet = std::pair{i, j};
      if (!meet)
        return std::nullopt;
      auto [i, j] = *meet;
      GraphId gid = aChain[i].graph;
      NodeId a = aChain[i].node, b = bChain[j].node;
      const Graph &g = m_.graph(gid);
      if (opKind(m_.graph(first.graph).node(first.node)) == OpKind::NetOutput) {
        // A NetOutput reads when its whole graph is done (a graph output,
        // a While's write-back or condition), which no edge can move. A
        // result of an If/Case or a call stands for the holder's consumers,
        // which are among `firsts` themselves when anybody reads it; the
        // NetOutput itself accesses nothing (semantics.md §2), at whatever
        // depth it sits below the graph where the pair meets.
        const Graph &fg = m_.graph(first.graph);
        OpKind hk = fg.parentNode == kNoNode || fg.parentGraph == kNoGraph
                        ? OpKind::NetOutput
                        : opKind(m_.graph(fg.parentGraph).node(fg.parentNode));
        if (hk == OpKind::Call || hk == OpKind::If || hk == OpKind::Case)
          continue;
        if (i == 0)
          return std::nullopt;
      }
      if (a == b) {
        // A node reads its inputs before it writes (semantics.md §2); two
        // nodes inside one holder cannot be ordered from outside it, unless
        // they are in branches that never both run.
        if (i > 0 && j > 0 && exclusiveBranches(gid, a, aChain[i - 1].graph, bChain[j - 1].graph))
          continue;
        // An If/Case reads its condition before a branch runs; its other
        // inputs are read by its branches' nodes, which come separately.
        if (i == 0 && (opKind(g.node(a)) == OpKind::If || opKind(g.node(a)) == OpKind::Case))
          continue;
        if (i > 0 || j > 0)
          return std::nullopt;
        continue;
      }
      if (reaches(gid, b, a)) {
        // Already the other way round: the reader sees the writer's bytes
        // after the deletion, which matters unless nobody can observe what
        // it computes. (A path from a call orders nothing inside it before
        // the reader: then the two would race.)
        if (i == 0 && isDead({gid, a}) &&
            (opKind(g.node(b)) == OpKind::Call
                 ? j > 0 && calledBefore({gid, b}, {{gid, a}})
                 : directlyOrdered(g, b, a) || orderedWithoutCalls(gid, b, a)))
          continue;
        return std::nullopt;
      }
      std::tuple<GraphId, NodeId, NodeId> e{gid, a, b};
      if (directlyOrdered(g, a, b) || orderedWithoutCalls(gid, a, b) ||
          std::find(out.edges.begin(), out.edges.end(), e) != out.edges.end())
        continue;
      if (out.edges.size() == kMaxEdges)
        return std::nullopt;
      out.edges.push_back(e);
    }
  }
  return out;
}

std::optional<TensorMoveDeleter::Ordering>
TensorMoveDeleter::orderReadersBeforeWriters(NodeRef t, const std::vector<NodeRef> &late) {
  // After the deletion the copy's readers read the source itself. A writer
  // that may run after the copy (it cannot run between the producer and the
  // copy: the original is race-free and the copy reads the source, so it is
  // ordered with the copy, and precedesCopy could not show "before") keeps
  // the bytes each reader saw when every reader runs before it.
  constexpr size_t kMaxReaders = 64; // readers examined per copy (cost bound)
  // A subgraph NetOutput among them stands for the holder's consumers,
  // which the exploration visits too (in the enclosing graph).
  std::vector<SlotRef> visited;
  std::vector<SlotRef> start = consumerSlots(m_, {t.graph, {t.node, 0}});
  BufferUses uses = exploreUses(m_, index_, start, opts_.analysisBudget, &visited,
                                /*whileResultsCopied=*/true);
  if (uses.overBudget || !uses.rootOutputs.empty() || visited.size() > kMaxReaders)
    return std::nullopt;
  std::vector<NodeRef> readers = accessingNodes(visited, {});
  // A While holding the copy writes its loop variables back only between
  // two runs of its body (semantics.md §2), never while its cond or body
  // runs: a reader in the same subgraph of it as the copy reads the copy's
  // bytes of that same run (it follows the copy), with no write-back
  // between the two.
  auto excused = [&](NodeRef reader, NodeRef writer) {
    if (opKind(m_.graph(writer.graph).node(writer.node)) != OpKind::While)
      return false;
    GraphId sub = subgraphOf(writer, t);
    return sub != kNoGraph && subgraphOf(writer, reader) == sub;
  };
  return orderBefore(t, readers, late, excused);
}

std::optional<Verdict> TensorMoveDeleter::tryWrittenCopy(NodeRef t, const Verdict &kept,
                                                         SourceTrace trace,
                                                         std::vector<SourceTrace> ends) {
  // The copy's memory is written. After the deletion those writes land in
  // the source S. That is unobservable when S is a fresh buffer that no
  // graph output or caller can see (nor, if the copy is a graph output, a
  // continuous-input op), and after the copy
  // nothing else uses S once the copy's writes begin: every writer of S
  // precedes the copy (so S holds the copy's bytes from the copy on, and
  // then changes exactly as the copy did), and every other access of S that
  // may follow the copy is ordered before each writer of the copy's memory
  // (it still reads the bytes the copy took). The copy itself may then be a
  // graph output: S merges into it as into a fresh buffer nobody observes.
  constexpr size_t kMaxWriters = 64; // writers checked per copy (cost bound)
  const BufferUses &copy = tensorMoveUses(t);
  std::vector<NodeRef> copyWriters = effectiveWriters(copy, ends.size() == 1);
  if (copy.overBudget || copyWriters.empty() || copyWriters.size() > kMaxWriters ||
      (!copy.continuousUsers.empty() && !continuousMergeAllowed(t, ends, copy)))
    return std::nullopt;
  std::vector<NodeRef> others; // accesses of S that may follow the copy
  for (const SourceTrace &end : ends) {
    // A granted user input may take the copy's writes: it is refilled
    // before the next run. S feeding a continuous-input op matters only when
    // the merged buffer becomes a graph output (semantics.md §6); a fresh S
    // stays fresh.
    if (!writesMayLandIn(t, end, copy, ends.size() == 1))
      return std::nullopt;
    const BufferFacts &f = bufferFacts(end);
    if (f.writers.size() > kMaxWriters)
      return std::nullopt;
    for (NodeRef w : effectiveWriters(f.writers, f.writerSlots))
      if (!precedesCopy(t, trace, w))
        return std::nullopt;
    auto after = sourceAccessesAfterCopy(t, trace, end);
    if (!after)
      return std::nullopt;
    for (NodeRef n : *after)
      if (std::find(others.begin(), others.end(), n) == others.end())
        others.push_back(n);
  }
  auto edges = orderBefore(t, others, copyWriters);
  if (!edges)
    return std::nullopt;
  return extensionDelete("ext-written-copy", kept, std::move(trace), std::move(ends),
                         std::move(edges->edges));
}

} // namespace graphvet::tmd
