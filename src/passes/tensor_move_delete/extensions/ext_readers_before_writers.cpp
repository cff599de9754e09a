// Extension ext-readers-before-writers: when some writer of the source may
// change it after the copy, the copy (never written) is still deleted if
// every reader of its memory can be put before each such writer with a
// control edge (docs/passes/tensor-move-delete.md,
// "ext-readers-before-writers"). The writers come from the read-only merge
// (readonly_merge.cpp); the edges from orderReadersBeforeWriters
// (support.cpp). A graph output is read after every writer: no edge can
// help. Nor can one inside a While that takes both; such a loop may keep the
// two equal, though (ext-loop-mirror, tried next).
#include "passes/tensor_move_delete/extension.h"
#include "passes/tensor_move_delete/extensions/support.h"

namespace graphvet::tmd {
namespace {

class ReadersBeforeWriters final : public Extension {
public:
  std::string_view name() const override { return "readers-before-writers"; }
  std::string_view tag() const override { return "ext-readers-before-writers"; }
  std::string_view argument() const override {
    return "; later writers of the source follow every reader of the copy";
  }
  bool applies(ExtensionCase &c) const override {
    const ReadOnlyMerge *ro = c.readOnlyMerge();
    return ro && !ro->late.empty();
  }
  std::optional<Plan> plan(ExtensionCase &c) const override {
    const BufferUses &copy = c.a.tensorMoveUses(c.t);
    auto edges = copy.rootOutputs.empty()
                     ? orderReadersBeforeWriters(c.a, c.t, c.readOnlyMerge()->late)
                     : std::nullopt;
    if (!edges)
      return std::nullopt;
    return Plan{*c.sources(), std::move(edges->edges)};
  }
};

} // namespace

const Extension &readersBeforeWritersExtension() {
  static const ReadersBeforeWriters e;
  return e;
}

} // namespace graphvet::tmd
