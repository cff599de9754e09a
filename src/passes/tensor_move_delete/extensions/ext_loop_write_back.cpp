// Extension ext-loop-write-back: a While body's copy of its loop variable
// that the body returns as that same loop variable, written in place of the
// variable when nothing else in the body needs its old bytes
// (docs/passes/tensor-move-delete.md, "ext-loop-write-back"; the analysis is
// loop_write_back.cpp, shared with ext-loop-overwritten).
#include "passes/tensor_move_delete/extensions/loop_write_back.h"

namespace graphvet::tmd {
namespace {

class LoopWriteBack final : public Extension {
public:
  std::string_view name() const override { return "loop-write-back"; }
  std::string_view tag() const override { return "ext-loop-write-back"; }
  std::string_view argument() const override {
    return "; the body returns it as the loop variable it copies";
  }
  bool applies(ExtensionCase &c) const override { return c.loopVariableSource(); }
  std::optional<Plan> plan(ExtensionCase &c) const override {
    return planLoopWriteBack(c, /*returnsCopy=*/true);
  }
};

} // namespace

const Extension &loopWriteBackExtension() {
  static const LoopWriteBack e;
  return e;
}

} // namespace graphvet::tmd
