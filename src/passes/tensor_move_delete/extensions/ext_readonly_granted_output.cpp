// Extension ext-readonly-granted-output: ext-readonly-source's case with the
// copy a graph output that shares a granted user input
// (docs/passes/tensor-move-delete.md, "ext-readonly-granted-output"): the
// outputs' bytes are the copy's, the input is not written, and the only new
// alias is granted. The analysis is the read-only merge (readonly_merge.cpp).
#include "passes/tensor_move_delete/extension.h"

namespace graphvet::tmd {
namespace {

class ReadOnlyGrantedOutput final : public Extension {
public:
  std::string_view name() const override { return "readonly-granted-output"; }
  std::string_view tag() const override { return "ext-readonly-granted-output"; }
  std::string_view argument() const override {
    return "; nothing writes the source after the copy, nor the copy";
  }
  bool applies(ExtensionCase &c) const override {
    const ReadOnlyMerge *ro = c.readOnlyMerge();
    return ro && ro->late.empty() && !c.viaControlFlow && ro->grantedOutputs;
  }
  std::optional<Plan> plan(ExtensionCase &c) const override { return Plan{*c.sources(), {}}; }
};

} // namespace

const Extension &readOnlyGrantedOutputExtension() {
  static const ReadOnlyGrantedOutput e;
  return e;
}

} // namespace graphvet::tmd
