// Extension ext-dead-loop-pair: a copy written only by a While that also
// takes the (fresh) source, reads neither inside and hands neither on
// (docs/passes/tensor-move-delete.md, "ext-dead-loop-pair").
//
// The copy C of a fresh S is written only by W, a While (its write-backs)
// that takes S too. When neither W's cond nor its body reads a loop
// variable bound to S or C, W's outputs for them have no consumers, and
// every other access of S or C runs before W, the buffers are dead from W
// on: until then C holds S's bytes in both graphs (every other writer of
// S precedes the copy), and what W's write-backs leave in the one merged
// buffer nobody reads. S must be fresh and neither may be a graph output
// (the caller would see the last write-back).
#include "passes/tensor_move_delete/extension.h"
#include "passes/tensor_move_delete/extensions/support.h"
#include "passes/tensor_move_delete/layout.h"

#include "ir/op_library.h"

#include <algorithm>

namespace graphvet::tmd {
namespace {

constexpr size_t kMaxWriters = 64; // writers checked per copy (cost bound)
constexpr size_t kMaxUses = 64;    // accesses examined per copy

/// The loop variables of `w` bound to S or C are never read inside W and
/// never handed on by W (nonempty).
bool deadLoopVariables(const Analysis &a, const std::set<uint32_t> &vars, const Node &wn) {
  const Module &m = a.module();
  if (vars.empty())
    return false;
  for (uint32_t j : vars) {
    if (j < wn.numOutputs && !wn.consumers[j].empty())
      return false;
    for (GraphId sub : wn.subgraphs)
      for (NodeId d : a.index().dataForParentInput(sub, j)) {
        const Node &data = m.graph(sub).node(d);
        for (uint32_t k = 0; k < data.numOutputs; ++k)
          if (!data.consumers[k].empty())
            return false;
      }
  }
  return true;
}

/// Every access of S or C other than W and the copy (nullopt: over budget).
std::optional<std::vector<NodeRef>> otherAccesses(Analysis &a, NodeRef t, NodeRef w,
                                                  const SourceTrace &end) {
  std::vector<NodeRef> others;
  std::vector<SlotRef> startC = consumerSlots(a.module(), {t.graph, {t.node, 0}});
  std::vector<SlotRef> startS = a.bufferSlots(end);
  for (const std::vector<SlotRef> *start : {&startC, &startS}) {
    std::vector<SlotRef> visited;
    BufferUses uses = a.explore(*start, &visited, /*whileResultsCopied=*/true);
    if (uses.overBudget || visited.size() > kMaxUses)
      return std::nullopt;
    for (NodeRef n : a.accessingNodes(visited, {w, t}))
      if (std::find(others.begin(), others.end(), n) == others.end())
        others.push_back(n);
  }
  return others;
}

class DeadLoopPair final : public Extension {
public:
  std::string_view name() const override { return "dead-loop-pair"; }
  std::string_view tag() const override { return "ext-dead-loop-pair"; }
  std::string_view argument() const override {
    return "; a loop that reads neither writes both last";
  }
  bool applies(ExtensionCase &c) const override {
    return c.sources() && c.copyWritten() && !c.viaLoopVariable();
  }
  std::optional<Plan> plan(ExtensionCase &c) const override;
};

std::optional<Plan> DeadLoopPair::plan(ExtensionCase &c) const {
  Analysis &a = c.a;
  const Module &m = a.module();
  const NodeRef t = c.t;
  const std::vector<SourceTrace> &ends = *c.sources();
  const BufferUses &copy = a.tensorMoveUses(t);
  if (ends.size() != 1 || copy.overBudget || !copy.rootOutputs.empty() ||
      !copy.continuousUsers.empty() || copy.writers.empty())
    return std::nullopt;
  const SourceTrace &end = ends[0];
  // S is made afresh, and W runs, once per run of the copy: in a loop
  // around them the next run would find the write-backs' bytes.
  if (!computedFresh(m, end) || end.steps.back().graph != t.graph)
    return std::nullopt;
  const std::optional<NodeRef> loop = onlyLoopWriter(m, t, copy);
  if (!loop)
    return std::nullopt;
  const NodeRef w = *loop;
  const BufferFacts &f = a.bufferFacts(end);
  if (f.overBudget || !f.rootOutputs.empty() || f.continuous || f.writers.size() > kMaxWriters)
    return std::nullopt;
  // The loop variables bound to S or C: never read inside, never handed on.
  if (!deadLoopVariables(a, loopVariablesOf(w, f, copy), m.graph(w.graph).node(w.node)))
    return std::nullopt;
  bool sawW = false;
  for (NodeRef x : a.effectiveWriters(f.writers, f.writerSlots)) {
    sawW = sawW || x == w;
    if (x != w && !a.precedesCopy(t, c.trace, x))
      return std::nullopt;
  }
  if (!sawW && std::find(f.writers.begin(), f.writers.end(), w) == f.writers.end())
    return std::nullopt; // (W does not take S: ext-written-copy's case)
  // Every other access of S or C runs before W.
  std::optional<std::vector<NodeRef>> others = otherAccesses(a, t, w, end);
  if (!others)
    return std::nullopt;
  auto edges = orderBefore(a, t, *others, {w});
  if (!edges)
    return std::nullopt;
  return Plan{ends, std::move(edges->edges)};
}

} // namespace

const Extension &deadLoopPairExtension() {
  static const DeadLoopPair e;
  return e;
}

} // namespace graphvet::tmd
