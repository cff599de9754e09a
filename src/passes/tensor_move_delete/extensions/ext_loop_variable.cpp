// Extension ext-loop-variable: a copy of a loop variable inside the loop,
// when nothing in the loop writes that variable
// (docs/passes/tensor-move-delete.md, "ext-loop-variable").
//
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
#include "passes/tensor_move_delete/extension.h"
#include "passes/tensor_move_delete/layout.h"

#include "ir/op_library.h"

#include <algorithm>

namespace graphvet::tmd {
namespace {

constexpr size_t kMaxWriters = 64; // writers checked per copy (cost bound)

/// The loop variable the trace ended at: the While holding the Data, and
/// its input p.
struct LoopVariable {
  GraphId sub = kNoGraph; ///< the cond or body holding the Data (and the copy)
  NodeRef loop;
  uint32_t p = 0;
};

std::optional<LoopVariable> loopVariableOf(const Module &m, const SourceTrace &trace) {
  const TraceStep &end = trace.steps.back();
  const Graph &bodyGraph = m.graph(end.graph);
  const Node &data = bodyGraph.node(end.port.node);
  if (opKind(data) != OpKind::DataSource || bodyGraph.parentNode == kNoNode)
    return std::nullopt;
  const Node &loop = m.graph(bodyGraph.parentGraph).node(bodyGraph.parentNode);
  auto p = data.intAttr("_parent_node_index");
  if (opKind(loop) != OpKind::While || !p || *p < 0 || *p >= int64_t(loop.inputs.size()) ||
      !loop.inputs[size_t(*p)])
    return std::nullopt;
  return LoopVariable{end.graph, {bodyGraph.parentGraph, bodyGraph.parentNode}, uint32_t(*p)};
}

/// Every buffer really bound to the loop variable, each of the copy's size.
std::optional<std::vector<SourceTrace>> realBuffers(Analysis &a, NodeRef t,
                                                    const LoopVariable &lv) {
  const Module &m = a.module();
  const Node &loop = m.graph(lv.loop.graph).node(lv.loop.node);
  // The copy must not resize: compare with the buffer really bound to the
  // loop variable (the While input's source; the Data's own description
  // does not size anything, semantics.md §1).
  SourceTrace outer = a.trace(lv.loop.graph, *loop.inputs[lv.p]);
  // The loop's input may itself come out of control flow: every buffer it
  // can be (as for ext-readonly-control-flow), an enclosing loop's variable
  // included (that loop writes it back only around this one, a step of its
  // cond or body).
  std::optional<std::vector<SourceTrace>> reals;
  if (outer.kind == SourceKind::ControlFlow)
    reals = a.resolveControlFlow(outer, /*allBindings=*/false, /*followLoops=*/true);
  else if (outer.kind != SourceKind::None && !outer.steps.empty())
    reals = std::vector<SourceTrace>{outer};
  if (!reals || reals->empty())
    return std::nullopt;
  for (const SourceTrace &r : *reals) {
    const TraceStep &real = r.steps.back();
    if (!sizeFits(a, t, outputBytes(m.graph(real.graph).node(real.port.node), real.port.index)))
      return std::nullopt;
  }
  return reals;
}

/// The copy's memory leaves its subgraph only as a result, which the loop
/// copies into a loop variable (the While's outputs are its inputs): graph
/// outputs, writers and continuous ops reached that way see the loop
/// variables, the same in both graphs. Inside, it must be read only.
bool readOnlyInside(Analysis &a, NodeRef t, const LoopVariable &lv, bool oneBuffer) {
  // Inside the copy's own subgraph (cond or body), nested ones included.
  auto inSubgraph = [&](NodeRef n) { return insideGraph(a.module(), n, lv.sub); };
  const BufferUses &copy = a.tensorMoveUses(t);
  std::vector<NodeRef> copyWriters = a.effectiveWriters(copy, oneBuffer);
  // (A continuous-input op all of whose inputs become L, one buffer, is
  // exempt: semantics.md §6.)
  return !(copy.overBudget || std::any_of(copyWriters.begin(), copyWriters.end(), inSubgraph) ||
           std::any_of(copy.continuousUsers.begin(), copy.continuousUsers.end(), [&](NodeRef n) {
             return inSubgraph(n) && !(oneBuffer && exemptAfterMerge(a, t, n));
           }));
}

/// The writers of L inside the copy's subgraph, through its Data (nullopt:
/// over budget, too many, or a write by nobody in particular).
std::optional<std::vector<NodeRef>> writersInside(Analysis &a, const LoopVariable &lv) {
  // Only the copy's own subgraph (cond or body) matters: the other one runs
  // before or after the whole of it, and the copy's memory leaves it only as
  // a snapshot (the condition, or the write-back).
  const Module &m = a.module();
  std::vector<SlotRef> slots;
  for (NodeId d : a.index().dataForParentInput(lv.sub, lv.p))
    for (uint32_t k = 0; k < m.graph(lv.sub).node(d).numOutputs; ++k)
      for (const SlotRef &s : consumerSlots(m, {lv.sub, {d, k}}))
        slots.push_back(s);
  BufferUses inside = a.explore(slots, nullptr, /*whileResultsCopied=*/true);
  if (inside.overBudget || inside.writers.size() > kMaxWriters ||
      (writes(inside.access) && inside.writers.empty()))
    return std::nullopt;
  return a.effectiveWriters(inside);
}

/// The loop variable's buffer may also be reached inside the loop by other
/// routes: a variable by name (a reference to it inside the body), or the
/// same buffer bound to another loop variable (found by graphvet fuzz
/// --seed 424242): the writers of the real buffers.
std::optional<std::vector<NodeRef>> writersOfReal(Analysis &a,
                                                  const std::vector<SourceTrace> &reals) {
  std::vector<NodeRef> realWriters;
  for (const SourceTrace &r : reals) {
    const BufferFacts &facts = a.bufferFacts(r);
    if (facts.overBudget || realWriters.size() + facts.writers.size() > kMaxWriters)
      return std::nullopt;
    std::vector<NodeRef> w = a.effectiveWriters(facts.writers, facts.writerSlots);
    realWriters.insert(realWriters.end(), w.begin(), w.end());
  }
  return realWriters;
}

class LoopVariableExtension final : public Extension {
public:
  std::string_view name() const override { return "loop-variable"; }
  std::string_view tag() const override { return "ext-loop-variable"; }
  std::string_view argument() const override {
    return "; nothing writes the source after the copy, nor the copy";
  }
  bool applies(ExtensionCase &c) const override { return c.loopVariableSource(); }
  std::optional<Plan> plan(ExtensionCase &c) const override;
};

std::optional<Plan> LoopVariableExtension::plan(ExtensionCase &c) const {
  Analysis &a = c.a;
  const Module &m = a.module();
  std::optional<LoopVariable> lv = loopVariableOf(m, c.trace);
  if (!lv)
    return std::nullopt;
  std::optional<std::vector<SourceTrace>> reals = realBuffers(a, c.t, *lv);
  if (!reals || !readOnlyInside(a, c.t, *lv, reals->size() == 1))
    return std::nullopt;
  std::optional<std::vector<NodeRef>> insideWriters = writersInside(a, *lv);
  if (!insideWriters)
    return std::nullopt;
  std::optional<std::vector<NodeRef>> realWriters = writersOfReal(a, *reals);
  if (!realWriters)
    return std::nullopt;
  // Every writer of the real buffer inside the loop must run before the copy
  // in its subgraph, or in the loop's other subgraph; the While's own
  // write-back comes after every reader of the iteration.
  const Node &loop = m.graph(lv->loop.graph).node(lv->loop.node);
  auto insideLoop = [&](NodeRef w) {
    return w == lv->loop || std::any_of(loop.subgraphs.begin(), loop.subgraphs.end(),
                                        [&](GraphId sub) { return insideGraph(m, w, sub); });
  };
  const BufferUses &copy = a.tensorMoveUses(c.t);
  for (const std::vector<NodeRef> *writers : {&*insideWriters, &*realWriters})
    for (NodeRef w : *writers)
      if (w != lv->loop && insideLoop(w) && !a.precedesCopy(c.t, c.trace, w, &copy))
        return std::nullopt;
  // The copy's accesses become L's.
  return Plan{std::move(*reals), {}};
}

} // namespace

const Extension &loopVariableExtension() {
  static const LoopVariableExtension e;
  return e;
}

} // namespace graphvet::tmd
