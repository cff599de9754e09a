// Extension ext-readonly-source: the source's memory does not change after
// the copy, and the copy's is never written
// (docs/passes/tensor-move-delete.md, "ext-readonly-source"). The analysis
// is the read-only merge (readonly_merge.cpp); this extension takes a source
// reached without control flow, and no graph output a granted user input
// shares (ext-readonly-granted-output's case).
#include "passes/tensor_move_delete/extension.h"

namespace graphvet::tmd {
namespace {

class ReadOnlySource final : public Extension {
public:
  std::string_view name() const override { return "readonly-source"; }
  std::string_view tag() const override { return "ext-readonly-source"; }
  std::string_view argument() const override {
    return "; nothing writes the source after the copy, nor the copy";
  }
  bool applies(ExtensionCase &c) const override {
    const ReadOnlyMerge *ro = c.readOnlyMerge();
    return ro && ro->late.empty() && !c.viaControlFlow && !ro->grantedOutputs;
  }
  std::optional<Plan> plan(ExtensionCase &c) const override { return Plan{*c.sources(), {}}; }
};

} // namespace

const Extension &readOnlySourceExtension() {
  static const ReadOnlySource e;
  return e;
}

} // namespace graphvet::tmd
