// Extension ext-scribbled-pair: a copy written only by a scribbler that takes
// the source too; whichever of the two it takes later is accessed only
// before it (and, for the source, seen by nobody afterwards)
// (docs/passes/tensor-move-delete.md, "ext-scribbled-pair").
//
// The copy C of S is written only by H, an op scribbling on its inputs
// (semantics.md §1), which takes S too. Until H runs, C holds S's bytes in
// both graphs (every other writer of S precedes the copy), so H reads the
// same bytes. H scribbles each input buffer once, as a function of its old
// content (the oracle also mixes in the first input position taking the
// buffer): after the deletion the one buffer gets the scribble of whichever
// of S and C H takes first, and the other's is lost.
// - S first: whoever sees S later sees what it saw before; C's scribble
//   goes unnoticed when every reader of C runs before H and C is no graph
//   output. S may be anything H may scribble (no weight).
// - C first: whoever reads C later (a graph output included) reads what
//   it read before; S's scribble goes unnoticed when every other access
//   of S runs before H and nobody sees S afterwards: S is a fresh buffer
//   that is no graph output, or a user input whose content after the run
//   the options leave unspecified (and that C's graph outputs may share).
// A copy of a loop variable (sources found through a loop's Data) is taken
// only with S first.
#include "passes/tensor_move_delete/extension.h"
#include "passes/tensor_move_delete/extensions/support.h"
#include "passes/tensor_move_delete/layout.h"

#include "ir/op_library.h"

#include <algorithm>

namespace graphvet::tmd {
namespace {

constexpr size_t kMaxWriters = 64; // writers checked per copy (cost bound)
constexpr size_t kMaxUses = 64;    // accesses examined per copy (cost bound)

/// The copy's only writer H, when it scribbles its inputs, runs in the
/// copy's graph and has no ref or view outputs.
std::optional<NodeRef> onlyScribbler(Analysis &a, NodeRef t, const BufferUses &copy) {
  std::vector<NodeRef> copyWriters = a.effectiveWriters(copy, true);
  if (copyWriters.empty() || std::any_of(copyWriters.begin(), copyWriters.end(),
                                         [&](NodeRef w) { return w != copyWriters[0]; }))
    return std::nullopt;
  const NodeRef h = copyWriters[0];
  const Node &hn = a.module().graph(h.graph).node(h.node);
  // H runs once per run of the copy: in a loop around H alone, its second
  // run would read C's scribbled bytes.
  if (h.graph != t.graph || opKind(hn) != OpKind::Ordinary || !isInputMutable(hn))
    return std::nullopt;
  for (uint32_t k = 0; k < hn.numOutputs; ++k)
    if (aliasedInput(hn, k))
      return std::nullopt; // (its ref writes and views would see the merge)
  return h;
}

/// The first input of H among the `writers` entries that are H.
std::optional<uint32_t> firstSlot(NodeRef h, const std::vector<NodeRef> &writers,
                                  const std::vector<SlotRef> &slots) {
  std::optional<uint32_t> first;
  for (size_t i = 0; i < writers.size() && i < slots.size(); ++i)
    if (writers[i] == h && slots[i].graph == h.graph && slots[i].slot.node == h.node &&
        (!first || slots[i].slot.index < *first))
      first = slots[i].slot.index;
  return first;
}

/// Whether H takes S before C (nullopt: unknown, or not the way allowed).
/// The first input of H on each buffer, traced straight to it (an If/Case
/// result may be another buffer at run time).
std::optional<bool> sourceFirst(Analysis &a, NodeRef t, NodeRef h, const SourceTrace &end,
                                const BufferFacts &f, const BufferUses &copy,
                                bool sourceFirstOnly) {
  const Node &hn = a.module().graph(h.graph).node(h.node);
  auto tracesTo = [&](uint32_t slot, PortRef port) {
    if (slot >= hn.inputs.size() || !hn.inputs[slot])
      return false;
    auto b = a.oneBufferOf(h.graph, *hn.inputs[slot]);
    return b && b->first == port.graph && b->second == port.port;
  };
  std::optional<uint32_t> sFirst = firstSlot(h, f.writers, f.writerSlots);
  std::optional<uint32_t> cFirst = firstSlot(h, copy.writers, copy.writerSlots);
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
    if (i != first && hn.inputs.size() > i && hn.inputs[i] &&
        !a.oneBufferOf(h.graph, *hn.inputs[i]))
      return std::nullopt;
  return sourceFirst;
}

class ScribbledPair final : public Extension {
public:
  std::string_view name() const override { return "scribbled-pair"; }
  std::string_view tag() const override { return "ext-scribbled-pair"; }
  std::string_view argument() const override {
    return "; its only writer scribbles the source too, after every access of the one whose "
           "scribble is lost";
  }
  bool applies(ExtensionCase &c) const override { return c.sources() && c.copyWritten(); }
  std::optional<Plan> plan(ExtensionCase &c) const override;
};

std::optional<Plan> ScribbledPair::plan(ExtensionCase &c) const {
  Analysis &a = c.a;
  const Module &m = a.module();
  const NodeRef t = c.t;
  const std::vector<SourceTrace> &ends = *c.sources();
  const BufferUses &copy = a.tensorMoveUses(t);
  if (ends.size() != 1 || copy.overBudget ||
      (!copy.continuousUsers.empty() && !continuousMergeAllowed(a, t, ends, copy)))
    return std::nullopt;
  const SourceTrace &end = ends[0];
  if (end.kind == SourceKind::Weight || end.kind == SourceKind::None ||
      end.kind == SourceKind::ControlFlow || end.steps.empty())
    return std::nullopt;
  std::optional<NodeRef> h = onlyScribbler(a, t, copy);
  if (!h)
    return std::nullopt;
  const BufferFacts &f = a.bufferFacts(end);
  if (f.overBudget || f.writers.size() > kMaxWriters)
    return std::nullopt;
  std::optional<bool> sFirst = sourceFirst(a, t, *h, end, f, copy, c.viaLoopVariable());
  if (!sFirst)
    return std::nullopt;
  // (A While holding the copy, and so H, writes back only between runs of
  // that subgraph: never between the copy and H.)
  for (NodeRef w : a.effectiveWriters(f.writers, f.writerSlots))
    if (w != *h && !a.precedesCopy(t, c.trace, w) &&
        !(opKind(m.graph(w.graph).node(w.node)) == OpKind::While &&
          subgraphOf(m, w, t) != kNoGraph))
      return std::nullopt;
  // The buffer whose scribble is lost: every other access of it runs before H.
  std::vector<SlotRef> visited;
  std::vector<SlotRef> start =
      *sFirst ? consumerSlots(m, {t.graph, {t.node, 0}}) : a.bufferSlots(end);
  BufferUses uses = a.explore(start, &visited, /*whileResultsCopied=*/true);
  if (uses.overBudget || visited.size() > kMaxUses)
    return std::nullopt;
  if (*sFirst ? !copy.rootOutputs.empty() : !writesMayLandIn(a, t, end, copy, true))
    return std::nullopt;
  auto edges = orderBefore(a, t, a.accessingNodes(visited, {*h, t}), {*h});
  if (!edges)
    return std::nullopt;
  return Plan{ends, std::move(edges->edges)};
}

} // namespace

const Extension &scribbledPairExtension() {
  static const ScribbledPair e;
  return e;
}

} // namespace graphvet::tmd
