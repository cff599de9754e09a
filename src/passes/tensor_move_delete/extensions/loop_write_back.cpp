// TensorMoveDeletePass: a loop body's copy of its loop variable
// (loop_write_back.h).
//
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
#include "passes/tensor_move_delete/extensions/loop_write_back.h"

#include "ir/op_library.h"
#include "passes/tensor_move_delete/extensions/support.h"
#include "passes/tensor_move_delete/layout.h"

#include <algorithm>

namespace graphvet::tmd {
namespace {

constexpr size_t kMaxWriters = 64; // writers checked per copy (cost bound)
constexpr size_t kMaxUses = 64;    // accesses examined per copy

/// The While whose body holds the copy, the loop variable p the copy's
/// trace ends at, and the port the body returns for p.
struct BodyLoop {
  NodeRef loop;
  uint32_t p = 0;
  OutPort result;
};

std::optional<BodyLoop> bodyLoopOf(Analysis &a, NodeRef t, const SourceTrace &trace) {
  const Module &m = a.module();
  const TraceStep &end = trace.steps.back();
  if (end.graph != t.graph)
    return std::nullopt;
  const Graph &body = m.graph(t.graph);
  const Node &data = body.node(end.port.node);
  if (opKind(data) != OpKind::DataSource || body.parentNode == kNoNode)
    return std::nullopt;
  NodeRef loopRef{body.parentGraph, body.parentNode};
  const Node &loop = m.graph(loopRef.graph).node(loopRef.node);
  auto p = data.intAttr("_parent_node_index");
  if (opKind(loop) != OpKind::While || loop.subgraphs.size() != 2 || loop.subgraphs[1] != t.graph ||
      !p || *p < 0 || *p >= int64_t(loop.inputs.size()) || !loop.inputs[size_t(*p)])
    return std::nullopt;
  // The body returns the copy (through views only) as loop variable p.
  NodeId netOut = a.index().netOutput(t.graph);
  auto slots = a.index().resultSlots(t.graph, uint32_t(*p));
  if (netOut == kNoNode || slots.size() != 1 || slots[0] >= body.node(netOut).inputs.size() ||
      !body.node(netOut).inputs[slots[0]])
    return std::nullopt;
  SourceTrace result = a.trace(t.graph, *body.node(netOut).inputs[slots[0]]);
  // (A ref output on the way writes the copy's memory: one of its writers.)
  if (result.kind != SourceKind::Ordinary || result.steps.empty() ||
      result.steps.back().graph != t.graph)
    return std::nullopt;
  return BodyLoop{loopRef, uint32_t(*p), result.steps.back().port};
}

/// The copy's writers in the body; nullopt when the copy may not merge
/// into L. The copy's memory leaves the body only as results, which the
/// write-back copies into loop variables (the While's outputs are its
/// inputs): graph outputs and accesses reached that way see the loop
/// variables, the same in both graphs. In the body it must feed no
/// continuous-input op (L may be caller memory or a graph output), unless
/// all of that op's inputs become L (one buffer: the loop's input is no
/// control flow), which §6 exempts.
std::optional<std::vector<NodeRef>> copyWritersInBody(Analysis &a, NodeRef t) {
  auto inBody = [&](NodeRef n) { return insideGraph(a.module(), n, t.graph); };
  const BufferUses &copy = a.tensorMoveUses(t);
  if (copy.overBudget ||
      std::any_of(copy.continuousUsers.begin(), copy.continuousUsers.end(),
                  [&](NodeRef n) { return inBody(n) && !exemptAfterMerge(a, t, n); }))
    return std::nullopt;
  std::vector<NodeRef> copyWriters;
  for (NodeRef w : a.effectiveWriters(copy))
    if (inBody(w))
      copyWriters.push_back(w);
  if (copyWriters.size() > kMaxWriters)
    return std::nullopt;
  return copyWriters;
}

/// The accesses of L in the body that may follow the copy (nullopt when a
/// writer of L in the body does, or L is bound to another loop variable).
std::optional<std::vector<NodeRef>> accessesOfL(Analysis &a, NodeRef t, const SourceTrace &trace,
                                                const BodyLoop &bl, const SourceTrace &outer) {
  const Module &m = a.module();
  auto inBody = [&](NodeRef n) { return insideGraph(m, n, t.graph); };
  // Every access of L in the body: through its Data and through any other
  // route (a variable by name, the same buffer bound to another loop
  // variable).
  std::vector<SlotRef> start = a.bufferSlots(outer);
  for (NodeId d : a.index().dataForParentInput(t.graph, bl.p))
    for (uint32_t k = 0; k < m.graph(t.graph).node(d).numOutputs; ++k)
      for (const SlotRef &sl : consumerSlots(m, {t.graph, {d, k}}))
        start.push_back(sl);
  std::vector<SlotRef> visited;
  BufferUses uses = a.explore(start, &visited, /*whileResultsCopied=*/true);
  if (uses.overBudget || uses.writers.size() > kMaxWriters || visited.size() > 4 * kMaxUses)
    return std::nullopt;
  for (NodeRef w : a.effectiveWriters(uses))
    if (w != bl.loop && inBody(w) && !a.precedesCopy(t, trace, w))
      return std::nullopt;
  // L bound to a second loop variable too would take two results at the
  // write-back, in an order the deletion would change.
  for (const SlotRef &sl : visited)
    if (sl.graph == bl.loop.graph && sl.slot.node == bl.loop.node && sl.slot.index != bl.p)
      return std::nullopt;
  std::vector<NodeRef> others;
  for (const SlotRef &sl : visited) {
    NodeRef n{sl.graph, sl.slot.node};
    if (n == t || !inBody(n) || a.precedesCopy(t, trace, n))
      continue;
    if (std::find(others.begin(), others.end(), n) == others.end())
      others.push_back(n);
  }
  if (others.size() > kMaxUses)
    return std::nullopt;
  return others;
}

} // namespace

std::optional<Plan> planLoopWriteBack(ExtensionCase &c, bool returnsCopy) {
  Analysis &a = c.a;
  const Module &m = a.module();
  NodeRef t = c.t;
  std::optional<BodyLoop> bl = bodyLoopOf(a, t, c.trace);
  if (!bl || (bl->result == OutPort{t.node, 0}) != returnsCopy)
    return std::nullopt;
  // Or the body returns another buffer made in the body (no Data: not L):
  // the write-back then overwrites the whole of L at the end of each
  // iteration, so what the copy's writes left in L is gone by then.
  if (!returnsCopy && opKind(m.graph(t.graph).node(bl->result.node)) == OpKind::DataSource)
    return std::nullopt;
  const Node &loop = m.graph(bl->loop.graph).node(bl->loop.node);
  SourceTrace outer = a.trace(bl->loop.graph, *loop.inputs[bl->p]);
  if (outer.kind == SourceKind::None || outer.kind == SourceKind::ControlFlow ||
      outer.steps.empty())
    return std::nullopt;
  const TraceStep &real = outer.steps.back();
  if (!sizeFits(a, t, outputBytes(m.graph(real.graph).node(real.port.node), real.port.index)))
    return std::nullopt; // (the Data's own description sizes nothing: semantics.md §1)
  std::optional<std::vector<NodeRef>> copyWriters = copyWritersInBody(a, t);
  if (!copyWriters)
    return std::nullopt;
  std::optional<std::vector<NodeRef>> others = accessesOfL(a, t, c.trace, *bl, outer);
  if (!others)
    return std::nullopt;
  // The copy's writers now write L: its cached facts must learn them (found
  // by graphvet fuzz --seed 191: a later copy of L's source passed the
  // read-only test on stale facts).
  Plan plan{{outer}, {}};
  if (!copyWriters->empty()) {
    auto edges = orderBefore(a, t, *others, *copyWriters);
    if (!edges)
      return std::nullopt;
    plan.edges = std::move(edges->edges);
  } else if (!returnsCopy) {
    return std::nullopt; // (an unwritten copy: the read-only rules' case)
  } else {
    // Unwritten: L keeps the copy's bytes through the iteration when the
    // other accesses do not write (their writers were checked above).
  }
  return plan;
}

} // namespace graphvet::tmd
