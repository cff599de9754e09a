// Extension ext-written-copy: a copy that is written, of a fresh buffer
// nothing else needs once the copy's writes begin
// (docs/passes/tensor-move-delete.md, "ext-written-copy").
//
// The copy's memory is written. After the deletion those writes land in the
// source S. That is unobservable when S is a fresh buffer that no graph
// output or caller can see (nor, if the copy is a graph output, a
// continuous-input op), and after the copy nothing else uses S once the
// copy's writes begin: every writer of S precedes the copy (so S holds the
// copy's bytes from the copy on, and then changes exactly as the copy did),
// and every other access of S that may follow the copy is ordered before
// each writer of the copy's memory (it still reads the bytes the copy took).
// The copy itself may then be a graph output: S merges into it as into a
// fresh buffer nobody observes.
#include "passes/tensor_move_delete/extension.h"
#include "passes/tensor_move_delete/extensions/support.h"
#include "passes/tensor_move_delete/layout.h"

#include <algorithm>

namespace graphvet::tmd {
namespace {

constexpr size_t kMaxWriters = 64; // writers checked per copy (cost bound)

class WrittenCopy final : public Extension {
public:
  std::string_view name() const override { return "written-copy"; }
  std::string_view tag() const override { return "ext-written-copy"; }
  std::string_view argument() const override {
    return "; nothing else needs the source once the copy's writes begin";
  }
  bool applies(ExtensionCase &c) const override {
    return c.sources() && c.copyWritten() && !c.viaLoopVariable();
  }
  std::optional<Plan> plan(ExtensionCase &c) const override;
};

std::optional<Plan> WrittenCopy::plan(ExtensionCase &c) const {
  Analysis &a = c.a;
  const NodeRef t = c.t;
  const std::vector<SourceTrace> &ends = *c.sources();
  const BufferUses &copy = a.tensorMoveUses(t);
  std::vector<NodeRef> copyWriters = a.effectiveWriters(copy, ends.size() == 1);
  if (copy.overBudget || copyWriters.empty() || copyWriters.size() > kMaxWriters ||
      (!copy.continuousUsers.empty() && !continuousMergeAllowed(a, t, ends, copy)))
    return std::nullopt;
  std::vector<NodeRef> others; // accesses of S that may follow the copy
  for (const SourceTrace &end : ends) {
    // A granted user input may take the copy's writes: it is refilled
    // before the next run. S feeding a continuous-input op matters only when
    // the merged buffer becomes a graph output (semantics.md §6); a fresh S
    // stays fresh.
    if (!writesMayLandIn(a, t, end, copy, ends.size() == 1))
      return std::nullopt;
    const BufferFacts &f = a.bufferFacts(end);
    if (f.writers.size() > kMaxWriters)
      return std::nullopt;
    for (NodeRef w : a.effectiveWriters(f.writers, f.writerSlots))
      if (!a.precedesCopy(t, c.trace, w))
        return std::nullopt;
    auto after = sourceAccessesAfterCopy(a, t, c.trace, end);
    if (!after)
      return std::nullopt;
    for (NodeRef n : *after)
      if (std::find(others.begin(), others.end(), n) == others.end())
        others.push_back(n);
  }
  auto edges = orderBefore(a, t, others, copyWriters);
  if (!edges)
    return std::nullopt;
  return Plan{ends, std::move(edges->edges)};
}

} // namespace

const Extension &writtenCopyExtension() {
  static const WrittenCopy e;
  return e;
}

} // namespace graphvet::tmd
