// Extension ext-readonly-control-flow: ext-readonly-source's case through
// control flow (docs/passes/tensor-move-delete.md,
// "ext-readonly-control-flow"): the design stops at If, Case and While
// (Rule 1); the memory plan says where that memory is, and the copy is
// deleted when each possible source passes ext-readonly-source's conditions.
// The sources are resolved by the ExtensionCase (a loop Data followed to its
// variable when ext-loop-variable and ext-loop-write-back declined); the
// analysis is the read-only merge (readonly_merge.cpp).
#include "passes/tensor_move_delete/extension.h"

namespace graphvet::tmd {
namespace {

class ReadOnlyControlFlow final : public Extension {
public:
  std::string_view name() const override { return "readonly-control-flow"; }
  std::string_view tag() const override { return "ext-readonly-control-flow"; }
  std::string_view argument() const override {
    return "; nothing writes the source after the copy, nor the copy";
  }
  bool applies(ExtensionCase &c) const override {
    const ReadOnlyMerge *ro = c.readOnlyMerge();
    return ro && ro->late.empty() && c.viaControlFlow;
  }
  std::optional<Plan> plan(ExtensionCase &c) const override { return Plan{*c.sources(), {}}; }
};

} // namespace

const Extension &readOnlyControlFlowExtension() {
  static const ReadOnlyControlFlow e;
  return e;
}

} // namespace graphvet::tmd
