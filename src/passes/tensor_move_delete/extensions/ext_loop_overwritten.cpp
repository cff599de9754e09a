// Extension ext-loop-overwritten: a While body's written copy of its loop
// variable when the body returns, as that loop variable, another buffer made
// in the body: the write-back overwrites whatever the copy's writes left in
// the variable (docs/passes/tensor-move-delete.md, "ext-loop-overwritten";
// the analysis is loop_write_back.cpp, shared with ext-loop-write-back).
#include "passes/tensor_move_delete/extensions/loop_write_back.h"

namespace graphvet::tmd {
namespace {

class LoopOverwritten final : public Extension {
public:
  std::string_view name() const override { return "loop-overwritten"; }
  std::string_view tag() const override { return "ext-loop-overwritten"; }
  std::string_view argument() const override {
    return "; the body overwrites the loop variable it copies at its end";
  }
  bool applies(ExtensionCase &c) const override { return c.loopVariableSource(); }
  std::optional<Plan> plan(ExtensionCase &c) const override {
    return planLoopWriteBack(c, /*returnsCopy=*/false);
  }
};

} // namespace

const Extension &loopOverwrittenExtension() {
  static const LoopOverwritten e;
  return e;
}

} // namespace graphvet::tmd
