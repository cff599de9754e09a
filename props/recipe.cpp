// Recipe helpers: names, sizes, and how RapidCheck shows a recipe (as the
// graph it builds, which is what a failing property's reader wants to see).
#include "props/recipe.h"

#include "ir/printer.h"
#include "props/build_module.h"

#include <ostream>

namespace graphvet::props {
namespace {

size_t countBody(const Body &b) {
  size_t n = 0;
  for (const Step &s : b.steps) {
    ++n;
    for (const Body &inner : s.bodies)
      n += countBody(inner);
  }
  return n;
}

} // namespace

const char *stepKindName(StepKind k) {
  static const char *const kNames[] = {"compute",
                                       "user-input",
                                       "variable",
                                       "weight",
                                       "ref-var-source",
                                       "tensor-move",
                                       "tensor-move-chain",
                                       "view",
                                       "multi-alias-ref-op",
                                       "ref-write",
                                       "scope-write",
                                       "continuous",
                                       "call",
                                       "if",
                                       "case",
                                       "while",
                                       "ctrl-edge"};
  auto i = static_cast<unsigned>(k);
  return i < kNumStepKinds ? kNames[i] : "unknown";
}

size_t countSteps(const Recipe &r) {
  return countBody(r.root);
}

void showValue(const Recipe &r, std::ostream &os) {
  os << "\n" << printModule(buildModule(r));
}

} // namespace graphvet::props
