// Extension ext-loop-mirror: a copy written only by a While that takes the
// source too and keeps every loop variable bound to either equal
// (docs/passes/tensor-move-delete.md, "ext-loop-mirror").
//
// The copy C of S is written only by W, a While in the copy's graph that
// takes S too (or C is not written and W is the one writer of S that may
// follow the copy). When every loop variable bound to S or C gets back, at
// each write-back, the same bytes (one and the same body port for all, or
// each one of these variables itself or another of them), and nothing
// inside the loop writes them in place, the variables hold equal bytes
// throughout: they start equal (every other writer of S precedes the copy)
// and W writes the same into both. S and C then hold equal bytes at all
// times from the copy on, which one buffer does as well.
#include "passes/tensor_move_delete/extension.h"
#include "passes/tensor_move_delete/extensions/support.h"
#include "passes/tensor_move_delete/layout.h"

#include "ir/op_library.h"

#include <algorithm>

namespace graphvet::tmd {
namespace {

constexpr size_t kMaxWriters = 64; // writers checked per copy (cost bound)

/// The loop W that writes the copy, and the copy's writers after it.
struct MirrorLoop {
  NodeRef w;
  std::vector<NodeRef> later; ///< C's writers after W (ext-written-copy from W on)
};

std::optional<MirrorLoop> mirrorLoopOf(const Module &m, NodeRef t, const BufferUses &copy,
                                       const BufferFacts &f) {
  std::optional<NodeRef> loop = onlyLoopWriter(m, t, copy);
  std::vector<NodeRef> later;
  if (!loop) {
    for (NodeRef x : copy.writers) {
      if (!plainLoopIn(m, x, t.graph) ||
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
  return MirrorLoop{*loop, std::move(later)};
}

/// The loop variables `vars` of W are each bound statically to S or to C,
/// and W takes both.
bool takesBoth(Analysis &a, NodeRef w, const std::set<uint32_t> &vars,
               std::pair<GraphId, OutPort> sBuffer, std::pair<GraphId, OutPort> cBuffer) {
  const Node &wn = a.module().graph(w.graph).node(w.node);
  bool takesS = false, takesC = false;
  for (uint32_t j : vars) {
    auto b =
        j < wn.inputs.size() && wn.inputs[j] ? a.oneBufferOf(w.graph, *wn.inputs[j]) : std::nullopt;
    if (!b || (*b != sBuffer && *b != cBuffer))
      return false;
    takesS = takesS || *b == sBuffer;
    takesC = takesC || *b == cBuffer;
  }
  return takesS && takesC;
}

/// The write-back gives every variable of `vars` the same bytes: the same
/// body port for all, or these variables themselves.
bool sameWriteBack(Analysis &a, const Node &wn, const std::set<uint32_t> &vars) {
  const Module &m = a.module();
  GraphId body = wn.subgraphs[1];
  NodeId netOut = a.index().netOutput(body);
  if (netOut == kNoNode)
    return false;
  const Node &ret = m.graph(body).node(netOut);
  std::optional<OutPort> common;
  bool anyPort = false, anyVariable = false;
  for (uint32_t j : vars) {
    auto slots = a.index().resultSlots(body, j);
    if (slots.empty()) {
      anyVariable = true; // not written back: keeps its bytes
      continue;
    }
    if (slots.size() != 1 || slots[0] >= ret.inputs.size() || !ret.inputs[slots[0]])
      return false;
    OutPort r = *ret.inputs[slots[0]];
    SourceTrace rt = a.trace(body, r);
    if (!rt.steps.empty() && !rt.refOnPath && rt.steps.back().graph == body) {
      const Node &d = m.graph(body).node(rt.steps.back().port.node);
      auto p = d.intAttr("_parent_node_index");
      if (opKind(d) == OpKind::DataSource && p && *p >= 0 && vars.count(uint32_t(*p))) {
        anyVariable = true;
        continue;
      }
    }
    if (common && *common != r)
      return false;
    common = r;
    anyPort = true;
  }
  return !(anyPort && anyVariable);
}

/// Something inside the loop writes one of `vars` in place.
bool writtenInside(Analysis &a, const Node &wn, const std::set<uint32_t> &vars) {
  const Module &m = a.module();
  for (GraphId sub : wn.subgraphs)
    for (uint32_t j : vars) {
      std::vector<SlotRef> slots;
      for (NodeId d : a.index().dataForParentInput(sub, j))
        for (uint32_t k = 0; k < m.graph(sub).node(d).numOutputs; ++k)
          for (const SlotRef &sl : consumerSlots(m, {sub, {d, k}}))
            slots.push_back(sl);
      BufferUses inside = a.explore(slots, nullptr, /*whileResultsCopied=*/true);
      if (inside.overBudget || !inside.writers.empty() || writes(inside.access))
        return true;
    }
  return false;
}

/// C is written again after W. From W's end on, S and C hold equal bytes
/// and S has no writer left, so this is ext-written-copy's case with W in
/// the copy's place: the later writes land in S, which nobody may observe
/// (fresh, or a granted user input, and no graph output), and every other
/// access of S runs before each later writer (W runs before them all
/// already: both write C, and the original is race-free).
std::optional<Ordering> writtenAfterLoop(Analysis &a, ExtensionCase &c, const SourceTrace &end,
                                         const BufferUses &copy, const MirrorLoop &ml) {
  if (!writesMayLandIn(a, c.t, end, copy, true))
    return std::nullopt;
  auto afterLoop = orderBefore(a, c.t, {ml.w}, ml.later);
  if (!afterLoop || !afterLoop->edges.empty())
    return std::nullopt;
  auto others = sourceAccessesAfterCopy(a, c.t, c.trace, end);
  if (!others)
    return std::nullopt;
  return orderBefore(a, c.t, *others, ml.later);
}

class LoopMirror final : public Extension {
public:
  std::string_view name() const override { return "loop-mirror"; }
  std::string_view tag() const override { return "ext-loop-mirror"; }
  std::string_view argument() const override {
    return "; the source's only later writer is a loop that keeps the copy equal to it";
  }
  /// A written copy; or an unwritten one whose source has one writer that
  /// may follow the copy, which the copy's readers cannot all precede.
  bool applies(ExtensionCase &c) const override {
    if (!c.sources())
      return false;
    if (c.copyWritten())
      return !c.viaLoopVariable();
    const ReadOnlyMerge *ro = c.readOnlyMerge();
    return ro && ro->late.size() == 1;
  }
  std::optional<Plan> plan(ExtensionCase &c) const override;
};

std::optional<Plan> LoopMirror::plan(ExtensionCase &c) const {
  Analysis &a = c.a;
  const Module &m = a.module();
  const NodeRef t = c.t;
  const std::vector<SourceTrace> &ends = *c.sources();
  const BufferUses &copy = a.tensorMoveUses(t);
  if (ends.size() != 1 || copy.overBudget || copy.writers.empty() ||
      (!copy.continuousUsers.empty() && !continuousMergeAllowed(a, t, ends, copy)))
    return std::nullopt;
  const SourceTrace &end = ends[0];
  if (end.steps.empty() || (end.kind != SourceKind::Ordinary && end.kind != SourceKind::UserInput &&
                            end.kind != SourceKind::UnnamedUserInput))
    return std::nullopt;
  const BufferFacts &f = a.bufferFacts(end);
  if (f.overBudget || f.writers.size() > kMaxWriters || copy.writers.size() > kMaxWriters)
    return std::nullopt;
  std::optional<MirrorLoop> ml = mirrorLoopOf(m, t, copy, f);
  if (!ml)
    return std::nullopt;
  const NodeRef w = ml->w;
  const Node &wn = m.graph(w.graph).node(w.node);
  for (NodeRef x : a.effectiveWriters(f.writers, f.writerSlots))
    if (x != w && !a.precedesCopy(t, c.trace, x))
      return std::nullopt;
  // The loop variables bound to S (P) and to C (Q), each bound statically.
  const std::pair<GraphId, OutPort> sBuffer{end.steps.back().graph, end.steps.back().port};
  const std::pair<GraphId, OutPort> cBuffer{t.graph, OutPort{t.node, 0}};
  std::set<uint32_t> vars = loopVariablesOf(w, f, copy);
  if (!takesBoth(a, w, vars, sBuffer, cBuffer) || !sameWriteBack(a, wn, vars) ||
      writtenInside(a, wn, vars))
    return std::nullopt;
  // Graph outputs: the merged buffer may become one only if S is fresh and
  // no graph output itself (no new alias, no new layout conflict).
  if (!copy.rootOutputs.empty()) {
    if (!computedFresh(m, end) || !f.rootOutputs.empty() ||
        sourceLayoutAddsConflict(a, t, end, copy, true))
      return std::nullopt;
  }
  if (ml->later.empty())
    return Plan{ends, {}};
  std::optional<Ordering> edges = writtenAfterLoop(a, c, end, copy, *ml);
  if (!edges)
    return std::nullopt;
  return Plan{ends, std::move(edges->edges)};
}

} // namespace

const Extension &loopMirrorExtension() {
  static const LoopMirror e;
  return e;
}

} // namespace graphvet::tmd
