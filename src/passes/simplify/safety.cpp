// The simplify pass's graph-level checks, kept out of the rules: a rule says
// when two terms compute the same values; these say when replacing one by
// the other cannot be told apart by what semantics.md makes observable
// (effects, in-place writes, aliasing of graph outputs, layout demands).
// The buffer reasoning is buffer_analysis.h's, as for cse.
#include "ir/buffer_root.h"
#include "ir/op_library.h"
#include "passes/simplify/match.h"

namespace graphvet::simplify {

namespace {

bool isReserved(const Node &n) {
  if (n.attr("no_need_constant_folding"))
    return true;
  const AttrValue *v = n.attr("_cannot_be_deleted");
  return v && ((v->isBool() && v->asBool()) || (v->isString() && v->asString() == "true"));
}

/// The call holding `g` when it is an outlined region (a PartitionedCall
/// fuse-ops or partition-graph made: `_fused` or `_target`), else null.
const Node *outlinedHolder(const Module &m, GraphId g) {
  const Graph &graph = m.graph(g);
  if (graph.parentNode == kNoNode)
    return nullptr;
  const Node &holder = m.graph(graph.parentGraph).node(graph.parentNode);
  return isOutlinedCall(holder) ? &holder : nullptr;
}

/// Does the buffer of `r` reach `g`'s NetOutput, directly or through views
/// (at most `budget` steps; running out counts as reaching)?
bool reachesOwnOutput(const Graph &g, OutPort r, size_t budget) {
  std::vector<OutPort> work{r};
  size_t steps = 0;
  while (!work.empty()) {
    const OutPort p = work.back();
    work.pop_back();
    for (const InPort &c : g.consumers(p)) {
      if (++steps > budget)
        return true;
      const Node &n = g.node(c.node);
      if (opKind(n) == OpKind::NetOutput)
        return true;
      for (uint32_t k = 0; k < n.numOutputs; ++k)
        if (aliasedInput(n, k) == c.index)
          work.push_back(OutPort{n.id, k});
    }
  }
  return false;
}

} // namespace

std::optional<Refusal> Safety::impure(const Node &n) const {
  if (isReserved(n))
    return Refusal{"reserved-attr", "a reserved attribute forbids deleting it"};
  if (!n.ctrlIn.empty() || !n.ctrlOut.empty())
    return Refusal{"ctrl-edge", "it has control edges, which order it on its own"};
  if (!refWrittenInputs(n).empty() || isInputMutable(n) || needsContinuousInput(n))
    return Refusal{"effect", "it writes an input in place or demands a layout"};
  for (uint32_t k = 0; k < n.numOutputs; ++k) {
    if (refVarSrcName(n, k))
      return Refusal{"effect", "an output is bound to a variable"};
    if (viewInput(n, k) && !(n.type == "Reshape" && k == 0 && !n.attr("out0.reuse_input")))
      return Refusal{"effect", "an output is a view declared by attribute"};
  }
  // Dropout draws only in training mode, which its rules' patterns exclude.
  if (lookupOp(n.type).nondeterministic && n.type != "Dropout")
    return Refusal{"random", "a random op's draw is its own"};
  return std::nullopt;
}

std::optional<Refusal> Safety::writtenOperand(GraphId g, OutPort p) {
  SourceTrace trace = traceSource(m_, index_, g, p, budget_);
  if (trace.kind == SourceKind::Variable || trace.kind == SourceKind::VariableRef)
    return Refusal{"variable-operand", "an operand reads a variable, which other nodes may write"};
  if (trace.kind != SourceKind::Ordinary && trace.kind != SourceKind::Weight &&
      trace.kind != SourceKind::UserInput)
    return Refusal{"unknown-source",
                   std::string("an operand's buffer traces to ") + sourceKindName(trace.kind)};
  SourceWrites::Answer written = sourceWrites_.of(trace);
  if (written == SourceWrites::Answer::OverBudget)
    return Refusal{"budget", "the exploration of an operand's buffer ran out of budget"};
  if (written == SourceWrites::Answer::Written)
    return Refusal{"written-input", "an operand's buffer is written in place"};
  return std::nullopt;
}

std::optional<Refusal> Safety::forwarding(GraphId g, OutPort r, OutPort x) {
  // An outlined region's outputs own their buffers (midend-passes.md): one
  // forwarded to an operand could become a region input or another output
  // (found by the typed -O3 campaign: Reshape(Flatten(x)) fused, then
  // rewritten to the region's parameter).
  if (const Node *holder = outlinedHolder(m_, g);
      holder && reachesOwnOutput(m_.graph(g), r, budget_))
    return Refusal{"region-output", "its result is an output of the outlined region " +
                                        holder->name + ", which must own its buffer"};
  BufferUses resultUses = exploreUses(m_, index_, consumerSlots(m_, PortRef{g, r}), budget_);
  if (resultUses.overBudget)
    return Refusal{"budget", "the exploration of its result ran out of budget"};
  if (writes(resultUses.access))
    return Refusal{"written-result",
                   "its result is written in place, which would then write the operand"};
  if (!resultUses.continuousUsers.empty())
    return Refusal{"layout", "its result feeds an op demanding contiguous inputs"};
  if (resultUses.rootOutputs.empty())
    return std::nullopt;
  SourceTrace trace = traceSource(m_, index_, g, x, budget_);
  if (trace.kind != SourceKind::Ordinary)
    return Refusal{"graph-output", std::string("its result is a graph output and the operand is ") +
                                       sourceKindName(trace.kind) +
                                       " memory, which the output must not alias"};
  const TraceStep &src = trace.steps.back();
  BufferUses operandUses =
      exploreUses(m_, index_, consumerSlots(m_, PortRef{src.graph, src.port}), budget_);
  if (operandUses.overBudget)
    return Refusal{"budget", "the exploration of the operand's buffer ran out of budget"};
  if (!operandUses.rootOutputs.empty() || !operandUses.continuousUsers.empty())
    return Refusal{"graph-output",
                   "its result is a graph output and the operand's buffer is another output"};
  return std::nullopt;
}

std::optional<TraceStep> Safety::bufferSource(GraphId g, OutPort p) {
  SourceTrace trace = traceSource(m_, index_, g, p, budget_);
  if (trace.steps.empty())
    return std::nullopt;
  return trace.steps.back();
}

} // namespace graphvet::simplify
