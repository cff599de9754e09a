// TensorMoveDeletePass: Extensions: scribbled pairs and loops.
#include "passes/tensor_move_delete/deleter.h"

#include "ir/op_library.h"
#include "ir/printer.h"

#include <algorithm>
#include <functional>
#include <set>
#include <string>

namespace graphvet::tmd {

std::optional<Verdict> TensorMoveDeleter::tryScribbledPair(NodeRef t, const Verdict &kept,
                                                           SourceTrace trace,
                                                           std::vector<SourceTrace> ends,
                                                           bool sourceFirstOnly) {
  // The copy C of S is written only by H, an op scribbling on its inputs
  // (semantics.md §1), which takes S too. Until H runs, C holds S's bytes
  // in both graphs (every other writer of S precedes the copy), so H reads
  // the same bytes. H scribbles each input buffer once, as a function of
  // its old content (the oracle also mixes in the first input position
  // taking the buffer): after the deletion the one buffer gets the scribble
  // of whichever of S and C H takes first, and the other's is lost.
  // - S first: whoever sees S later sees what it saw before; C's scribble
  //   goes unnoticed when every reader of C runs before H and C is no graph
  //   output. S may be anything H may scribble (no weight).
  // - C first: whoever reads C later (a graph output included) reads what
  //   it read before; S's scribble goes unnoticed when every other access
  //   of S runs before H and nobody sees S afterwards: S is a fresh buffer
  //   that is no graph output, or a user input whose content after the run
  //   the options leave unspecified (and that C's graph outputs may share).
  constexpr size_t kMaxWriters = 64; // writers checked per copy (cost bound)
  constexpr size_t kMaxUses = 64;    // accesses examined per copy (cost bound)
  const BufferUses &copy = tensorMoveUses(t);
  if (ends.size() != 1 || copy.overBudget ||
      (!copy.continuousUsers.empty() && !continuousMergeAllowed(t, ends, copy)))
    return std::nullopt;
  const SourceTrace &end = ends[0];
  if (end.kind == SourceKind::Weight || end.kind == SourceKind::None ||
      end.kind == SourceKind::ControlFlow || end.steps.empty())
    return std::nullopt;
  std::vector<NodeRef> copyWriters = effectiveWriters(copy, true);
  if (copyWriters.empty() || std::any_of(copyWriters.begin(), copyWriters.end(),
                                         [&](NodeRef w) { return w != copyWriters[0]; }))
    return std::nullopt;
  const NodeRef h = copyWriters[0];
  const Node &hn = m_.graph(h.graph).node(h.node);
  // H runs once per run of the copy: in a loop around H alone, its second
  // run would read C's scribbled bytes.
  if (h.graph != t.graph || opKind(hn) != OpKind::Ordinary || !isInputMutable(hn))
    return std::nullopt;
  for (uint32_t k = 0; k < hn.numOutputs; ++k)
    if (aliasedInput(hn, k))
      return std::nullopt; // (its ref writes and views would see the merge)
  // The first input of H on each buffer, traced straight to it (an If/Case
  // result may be another buffer at run time).
  auto firstSlot = [&](const std::vector<NodeRef> &writers, const std::vector<SlotRef> &slots) {
    std::optional<uint32_t> first;
    for (size_t i = 0; i < writers.size() && i < slots.size(); ++i)
      if (writers[i] == h && slots[i].graph == h.graph && slots[i].slot.node == h.node &&
          (!first || slots[i].slot.index < *first))
        first = slots[i].slot.index;
    return first;
  };
  auto tracesTo = [&](uint32_t slot, PortRef port) {
    if (slot >= hn.inputs.size() || !hn.inputs[slot])
      return false;
    auto b = oneBufferOf(h.graph, *hn.inputs[slot]);
    return b && b->first == port.graph && b->second == port.port;
  };
  const BufferFacts &f = bufferFacts(end);
  if (f.overBudget || f.writers.size() > kMaxWriters)
    return std::nullopt;
  std::optional<uint32_t> sFirst = firstSlot(f.writers, f.writerSlots);
  std::optional<uint32_t> cFirst = firstSlot(copy.writers, copy.writerSlots);
  if (!sFirst || !cFirst || *sFirst == *cFirst)
    return std::nullopt;
  const bool sourceFirst = *sFirst < *cFirst;
  if (!sourceFirst && sourceFirstOnly)
    return std::nullopt;
  const PortRef sourcePort{end.steps.back().graph, end.steps.back().port};
  const PortRef copyPort{t.graph, {t.node, 0}};
  if (sourceFirst ? !tracesTo(*sFirst, sourcePort) : !tracesTo(*cFirst, copyPort))
    return std::nullopt;
  // No other input before the later of the two may turn out to be either:
  // each is bound to one known buffer.
  const uint32_t first = std::min(*sFirst, *cFirst), second = std::max(*sFirst, *cFirst);
  for (uint32_t i = 0; i < second; ++i)
    if (i != first && hn.inputs.size() > i && hn.inputs[i] && !oneBufferOf(h.graph, *hn.inputs[i]))
      return std::nullopt;
  // (A While holding the copy, and so H, writes back only between runs of
  // that subgraph: never between the copy and H.)
  for (NodeRef w : effectiveWriters(f.writers, f.writerSlots))
    if (w != h && !precedesCopy(t, trace, w) &&
        !(opKind(m_.graph(w.graph).node(w.node)) == OpKind::While && subgraphOf(w, t) != kNoGraph))
      return std::nullopt;
  // The buffer whose scribble is lost: every other access of it runs before H.
  std::vector<SlotRef> visited;
  std::vector<SlotRef> start =
      sourceFirst ? consumerSlots(m_, {t.graph, {t.node, 0}}) : bufferSlots(end);
  BufferUses uses = exploreUses(m_, index_, start, opts_.analysisBudget, &visited,
                                /*whileResultsCopied=*/true);
  if (uses.overBudget || visited.size() > kMaxUses)
    return std::nullopt;
  if (sourceFirst) {
    if (!copy.rootOutputs.empty())
      return std::nullopt;
  } else {
    if (!writesMayLandIn(t, end, copy, true))
      return std::nullopt;
  }
  auto edges = orderBefore(t, accessingNodes(visited, {h, t}), {h});
  if (!edges)
    return std::nullopt;
  return extensionDelete("ext-scribbled-pair", kept, std::move(trace), std::move(ends),
                         std::move(edges->edges));
}

std::optional<NodeRef> TensorMoveDeleter::onlyLoopWriter(NodeRef t, const BufferUses &copy) const {
  if (copy.writers.empty())
    return std::nullopt;
  const NodeRef w = copy.writers[0];
  if (!plainLoopIn(w, t.graph) ||
      std::any_of(copy.writers.begin(), copy.writers.end(), [&](NodeRef n) { return n != w; }))
    return std::nullopt;
  return w;
}

bool TensorMoveDeleter::plainLoopIn(NodeRef w, GraphId g) const {
  const Node &wn = m_.graph(w.graph).node(w.node);
  return w.graph == g && opKind(wn) == OpKind::While && !isInputMutable(wn) &&
         wn.subgraphs.size() == 2;
}

std::set<uint32_t> TensorMoveDeleter::loopVariablesOf(NodeRef w, const BufferFacts &source,
                                                      const BufferUses &copy) const {
  std::set<uint32_t> vars;
  for (const auto *u : {&source.writerSlots, &copy.writerSlots})
    for (const SlotRef &slot : *u)
      if (slot.graph == w.graph && slot.slot.node == w.node)
        vars.insert(slot.slot.index);
  return vars;
}

std::optional<Verdict> TensorMoveDeleter::tryDeadLoopPair(NodeRef t, const Verdict &kept,
                                                          SourceTrace trace,
                                                          std::vector<SourceTrace> ends) {
  // The copy C of a fresh S is written only by W, a While (its write-backs)
  // that takes S too. When neither W's cond nor its body reads a loop
  // variable bound to S or C, W's outputs for them have no consumers, and
  // every other access of S or C runs before W, the buffers are dead from W
  // on: until then C holds S's bytes in both graphs (every other writer of
  // S precedes the copy), and what W's write-backs leave in the one merged
  // buffer nobody reads. S must be fresh and neither may be a graph output
  // (the caller would see the last write-back).
  constexpr size_t kMaxWriters = 64; // writers checked per copy (cost bound)
  constexpr size_t kMaxUses = 64;    // accesses examined per copy
  const BufferUses &copy = tensorMoveUses(t);
  if (ends.size() != 1 || copy.overBudget || !copy.rootOutputs.empty() ||
      !copy.continuousUsers.empty() || copy.writers.empty())
    return std::nullopt;
  const SourceTrace &end = ends[0];
  // S is made afresh, and W runs, once per run of the copy: in a loop
  // around them the next run would find the write-backs' bytes.
  if (!computedFresh(end) || end.steps.back().graph != t.graph)
    return std::nullopt;
  const std::optional<NodeRef> loop = onlyLoopWriter(t, copy);
  if (!loop)
    return std::nullopt;
  const NodeRef w = *loop;
  const Node &wn = m_.graph(w.graph).node(w.node);
  const BufferFacts &f = bufferFacts(end);
  if (f.overBudget || !f.rootOutputs.empty() || f.continuous || f.writers.size() > kMaxWriters)
    return std::nullopt;
  // The loop variables bound to S or C: never read inside, never handed on.
  std::set<uint32_t> vars = loopVariablesOf(w, f, copy);
  if (vars.empty())
    return std::nullopt;
  for (uint32_t j : vars) {
    if (j < wn.numOutputs && !wn.consumers[j].empty())
      return std::nullopt;
    for (GraphId sub : wn.subgraphs)
      for (NodeId d : index_.dataForParentInput(sub, j)) {
        const Node &data = m_.graph(sub).node(d);
        for (uint32_t k = 0; k < data.numOutputs; ++k)
          if (!data.consumers[k].empty())
            return std::nullopt;
      }
  }
  bool sawW = false;
  for (NodeRef x : effectiveWriters(f.writers, f.writerSlots)) {
    sawW = sawW || x == w;
    if (x != w && !precedesCopy(t, trace, x))
      return std::nullopt;
  }
  if (!sawW && std::find(f.writers.begin(), f.writers.end(), w) == f.writers.end())
    return std::nullopt; // (W does not take S: tryWrittenCopy's case)
  // Every other access of S or C runs before W.
  std::vector<NodeRef> others;
  std::vector<SlotRef> startC = consumerSlots(m_, {t.graph, {t.node, 0}});
  std::vector<SlotRef> startS = bufferSlots(end);
  for (const std::vector<SlotRef> *start : {&startC, &startS}) {
    std::vector<SlotRef> visited;
    BufferUses uses = exploreUses(m_, index_, *start, opts_.analysisBudget, &visited,
                                  /*whileResultsCopied=*/true);
    if (uses.overBudget || visited.size() > kMaxUses)
      return std::nullopt;
    for (NodeRef n : accessingNodes(visited, {w, t}))
      if (std::find(others.begin(), others.end(), n) == others.end())
        others.push_back(n);
  }
  auto edges = orderBefore(t, others, {w});
  if (!edges)
    return std::nullopt;
  return extensionDelete("ext-dead-loop-pair", kept, std::move(trace), std::move(ends),
                         std::move(edges->edges));
}

std::optional<Verdict> TensorMoveDeleter::tryLoopMirror(NodeRef t, const Verdict &kept,
                                                        SourceTrace trace,
                                                        std::vector<SourceTrace> ends) {
  // The copy C of S is written only by W, a While in the copy's graph that
  // takes S too (or C is not written and W is the one writer of S that may
  // follow the copy). When every loop variable bound to S or C gets back, at
  // each write-back, the same bytes (one and the same body port for all,
  // or each one of these variables itself or another of them), and nothing
  // inside the loop writes them in place, the variables hold equal bytes
  // throughout: they start equal (every other writer of S precedes the
  // copy) and W writes the same into both. S and C then hold equal bytes at
  // all times from the copy on, which one buffer does as well.
  constexpr size_t kMaxWriters = 64; // writers checked per copy (cost bound)
  const BufferUses &copy = tensorMoveUses(t);
  if (ends.size() != 1 || copy.overBudget || copy.writers.empty() ||
      (!copy.continuousUsers.empty() && !continuousMergeAllowed(t, ends, copy)))
    return std::nullopt;
  const SourceTrace &end = ends[0];
  if (end.steps.empty() || (end.kind != SourceKind::Ordinary && end.kind != SourceKind::UserInput &&
                            end.kind != SourceKind::UnnamedUserInput))
    return std::nullopt;
  const BufferFacts &f = bufferFacts(end);
  if (f.overBudget || f.writers.size() > kMaxWriters || copy.writers.size() > kMaxWriters)
    return std::nullopt;
  std::optional<NodeRef> loop = onlyLoopWriter(t, copy);
  std::vector<NodeRef> later; // C's writers after W (ext-written-copy from W on)
  if (!loop) {
    for (NodeRef x : copy.writers) {
      if (!plainLoopIn(x, t.graph) ||
          std::find(f.writers.begin(), f.writers.end(), x) == f.writers.end())
        continue;
      if (loop && *loop != x)
        return std::nullopt; // two loops take both
      loop = x;
    }
    if (!loop)
      return std::nullopt;
    for (NodeRef x : copy.writers)
      if (x != *loop && std::find(later.begin(), later.end(), x) == later.end())
        later.push_back(x);
  }
  const NodeRef w = *loop;
  const Node &wn = m_.graph(w.graph).node(w.node);
  for (NodeRef x : effectiveWriters(f.writers, f.writerSlots))
    if (x != w && !precedesCopy(t, trace, x))
      return std::nullopt;
  // The loop variables bound to S (P) and to C (Q), each bound statically.
  const std::pair<GraphId, OutPort> sBuffer{end.steps.back().graph, end.steps.back().port};
  const std::pair<GraphId, OutPort> cBuffer{t.graph, OutPort{t.node, 0}};
  std::set<uint32_t> vars = loopVariablesOf(w, f, copy);
  bool takesS = false, takesC = false;
  for (uint32_t j : vars) {
    auto b =
        j < wn.inputs.size() && wn.inputs[j] ? oneBufferOf(w.graph, *wn.inputs[j]) : std::nullopt;
    if (!b || (*b != sBuffer && *b != cBuffer))
      return std::nullopt;
    takesS = takesS || *b == sBuffer;
    takesC = takesC || *b == cBuffer;
  }
  if (!takesS || !takesC)
    return std::nullopt;
  // The write-back: the same port for all, or these variables themselves.
  GraphId body = wn.subgraphs[1];
  NodeId netOut = index_.netOutput(body);
  if (netOut == kNoNode)
    return std::nullopt;
  const Node &ret = m_.graph(body).node(netOut);
  std::optional<OutPort> common;
  bool anyPort = false, anyVariable = false;
  for (uint32_t j : vars) {
    auto slots = index_.resultSlots(body, j);
    if (slots.empty()) {
      anyVariable = true; // not written back: keeps its bytes
      continue;
    }
    if (slots.size() != 1 || slots[0] >= ret.inputs.size() || !ret.inputs[slots[0]])
      return std::nullopt;
    OutPort r = *ret.inputs[slots[0]];
    SourceTrace rt = traceSource(m_, index_, body, r, maxTraceSteps_);
    if (!rt.steps.empty() && !rt.refOnPath && rt.steps.back().graph == body) {
      const Node &d = m_.graph(body).node(rt.steps.back().port.node);
      auto p = d.intAttr("_parent_node_index");
      if (opKind(d) == OpKind::DataSource && p && *p >= 0 && vars.count(uint32_t(*p))) {
        anyVariable = true;
        continue;
      }
    }
    if (common && *common != r)
      return std::nullopt;
    common = r;
    anyPort = true;
  }
  if (anyPort && anyVariable)
    return std::nullopt;
  // Nothing inside the loop writes these variables in place.
  for (GraphId sub : wn.subgraphs)
    for (uint32_t j : vars) {
      std::vector<SlotRef> slots;
      for (NodeId d : index_.dataForParentInput(sub, j))
        for (uint32_t k = 0; k < m_.graph(sub).node(d).numOutputs; ++k)
          for (const SlotRef &sl : consumerSlots(m_, {sub, {d, k}}))
            slots.push_back(sl);
      BufferUses inside = exploreUses(m_, index_, slots, opts_.analysisBudget, nullptr,
                                      /*whileResultsCopied=*/true);
      if (inside.overBudget || !inside.writers.empty() || writes(inside.access))
        return std::nullopt;
    }
  // Graph outputs: the merged buffer may become one only if S is fresh and
  // no graph output itself (no new alias, no new layout conflict).
  if (!copy.rootOutputs.empty()) {
    if (!computedFresh(end) || !f.rootOutputs.empty() ||
        sourceLayoutAddsConflict(t, end, copy, true))
      return std::nullopt;
  }
  if (later.empty())
    return extensionDelete("ext-loop-mirror", kept, std::move(trace), std::move(ends));
  // C is written again after W. From W's end on, S and C hold equal bytes
  // and S has no writer left, so this is ext-written-copy's case with W in
  // the copy's place: the later writes land in S, which nobody may observe
  // (fresh, or a granted user input, and no graph output), and every other
  // access of S runs before each later writer (W runs before them all
  // already: both write C, and the original is race-free).
  if (!writesMayLandIn(t, end, copy, true))
    return std::nullopt;
  auto afterLoop = orderBefore(t, {w}, later);
  if (!afterLoop || !afterLoop->edges.empty())
    return std::nullopt;
  auto others = sourceAccessesAfterCopy(t, trace, end);
  if (!others)
    return std::nullopt;
  auto edges = orderBefore(t, *others, later);
  if (!edges)
    return std::nullopt;
  return extensionDelete("ext-loop-mirror", kept, std::move(trace), std::move(ends),
                         std::move(edges->edges));
}

std::optional<Verdict> TensorMoveDeleter::tryLoopWriteBack(NodeRef t, const Verdict &kept,
                                                           SourceTrace trace) {
  // The copy C of loop variable L (the buffer of the While's input p), in the
  // body, is the body's result for p: at the end of each iteration L takes
  // C's final bytes. Writing C's writes into L directly ends the iteration
  // with the same L (the write-back then finds L already there). When the
  // body's result for p is another buffer made in the body, the write-back
  // overwrites all of L with it instead, in both graphs
  // (ext-loop-overwritten). Inside the iteration L must look unchanged to
  // everything else either way: every other writer of L in the body runs
  // before the copy, and every other access of L in the body that may
  // follow the copy runs before each of C's writers (a NetOutput reads at
  // the end of the body, so it may not read L itself).
  // Outside the loop (one step) and in the cond (between iterations) only
  // the iteration's final L is seen, the same in both graphs.
  constexpr size_t kMaxWriters = 64; // writers checked per copy (cost bound)
  constexpr size_t kMaxUses = 64;    // accesses examined per copy
  const TraceStep &end = trace.steps.back();
  if (end.graph != t.graph)
    return std::nullopt;
  const Graph &body = m_.graph(t.graph);
  const Node &data = body.node(end.port.node);
  if (opKind(data) != OpKind::DataSource || body.parentNode == kNoNode)
    return std::nullopt;
  NodeRef loopRef{body.parentGraph, body.parentNode};
  const Node &loop = m_.graph(loopRef.graph).node(loopRef.node);
  auto p = data.intAttr("_parent_node_index");
  if (opKind(loop) != OpKind::While || loop.subgraphs.size() != 2 || loop.subgraphs[1] != t.graph ||
      !p || *p < 0 || *p >= int64_t(loop.inputs.size()) || !loop.inputs[size_t(*p)])
    return std::nullopt;
  // The body returns the copy (through views only) as loop variable p.
  NodeId netOut = index_.netOutput(t.graph);
  auto slots = index_.resultSlots(t.graph, uint32_t(*p));
  if (netOut == kNoNode || slots.size() != 1 || slots[0] >= body.node(netOut).inputs.size() ||
      !body.node(netOut).inputs[slots[0]])
    return std::nullopt;
  SourceTrace result =
      traceSource(m_, index_, t.graph, *body.node(netOut).inputs[slots[0]], maxTraceSteps_);
  // (A ref output on the way writes the copy's memory: one of its writers.)
  if (result.kind != SourceKind::Ordinary || result.steps.empty() ||
      result.steps.back().graph != t.graph)
    return std::nullopt;
  // Or the body returns another buffer made in the body (no Data: not L):
  // the write-back then overwrites the whole of L at the end of each
  // iteration, so what the copy's writes left in L is gone by then.
  const OutPort resultPort = result.steps.back().port;
  const bool returnsCopy = resultPort == OutPort{t.node, 0};
  if (!returnsCopy && opKind(body.node(resultPort.node)) == OpKind::DataSource)
    return std::nullopt;
  SourceTrace outer =
      traceSource(m_, index_, loopRef.graph, *loop.inputs[size_t(*p)], maxTraceSteps_);
  if (outer.kind == SourceKind::None || outer.kind == SourceKind::ControlFlow ||
      outer.steps.empty())
    return std::nullopt;
  const TraceStep &real = outer.steps.back();
  if (!sizeFits(t, outputBytes(m_.graph(real.graph).node(real.port.node), real.port.index)))
    return std::nullopt; // (the Data's own description sizes nothing: semantics.md §1)
  auto inBody = [&](NodeRef n) { return insideGraph(n, t.graph); };
  // The copy's memory leaves the body only as results, which the
  // write-back copies into loop variables (the While's outputs are its
  // inputs): graph outputs and accesses reached that way see the loop
  // variables, the same in both graphs. In the body it must feed no
  // continuous-input op (L may be caller memory or a graph output), unless
  // all of that op's inputs become L (one buffer: `outer` is no control
  // flow), which §6 exempts.
  const BufferUses &copy = tensorMoveUses(t);
  if (copy.overBudget ||
      std::any_of(copy.continuousUsers.begin(), copy.continuousUsers.end(),
                  [&](NodeRef n) { return inBody(n) && !exemptAfterMerge(t, n); }))
    return std::nullopt;
  std::vector<NodeRef> copyWriters;
  for (NodeRef w : effectiveWriters(copy))
    if (inBody(w))
      copyWriters.push_back(w);
  if (copyWriters.size() > kMaxWriters)
    return std::nullopt;
  // Every access of L in the body: through its Data and through any other
  // route (a variable by name, the same buffer bound to another loop
  // variable).
  std::vector<SlotRef> start = bufferSlots(outer);
  for (NodeId d : index_.dataForParentInput(t.graph, uint32_t(*p)))
    for (uint32_t k = 0; k < body.node(d).numOutputs; ++k)
      for (const SlotRef &sl : consumerSlots(m_, {t.graph, {d, k}}))
        start.push_back(sl);
  std::vector<SlotRef> visited;
  BufferUses uses = exploreUses(m_, index_, start, opts_.analysisBudget, &visited,
                                /*whileResultsCopied=*/true);
  if (uses.overBudget || uses.writers.size() > kMaxWriters || visited.size() > 4 * kMaxUses)
    return std::nullopt;
  for (NodeRef w : effectiveWriters(uses))
    if (w != loopRef && inBody(w) && !precedesCopy(t, trace, w))
      return std::nullopt;
  // L bound to a second loop variable too would take two results at the
  // write-back, in an order the deletion would change.
  for (const SlotRef &sl : visited)
    if (sl.graph == loopRef.graph && sl.slot.node == loopRef.node && sl.slot.index != uint32_t(*p))
      return std::nullopt;
  std::vector<NodeRef> others;
  for (const SlotRef &sl : visited) {
    NodeRef n{sl.graph, sl.slot.node};
    if (n == t || !inBody(n) || precedesCopy(t, trace, n))
      continue;
    if (std::find(others.begin(), others.end(), n) == others.end())
      others.push_back(n);
  }
  if (others.size() > kMaxUses)
    return std::nullopt;
  Verdict v;
  if (!copyWriters.empty()) {
    auto edges = orderBefore(t, others, copyWriters);
    if (!edges)
      return std::nullopt;
    v.orderEdges = std::move(edges->edges);
  } else if (!returnsCopy) {
    return std::nullopt; // (an unwritten copy: the read-only rules' case)
  } else {
    // Unwritten: L keeps the copy's bytes through the iteration when the
    // other accesses do not write (their writers were checked above).
  }
  v.outcome = Outcome::Delete;
  v.rule = returnsCopy ? "ext-loop-write-back" : "ext-loop-overwritten";
  v.looseSuccessors = true;
  v.reason = kept.rule;
  v.trace = std::move(trace);
  // The copy's writers now write L: its cached facts must learn them (found
  // by graphvet fuzz --seed 191: a later copy of L's source passed the
  // read-only test on stale facts).
  v.ends = {outer};
  return v;
}

} // namespace graphvet::tmd
