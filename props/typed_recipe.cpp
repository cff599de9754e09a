// Printing typed recipes for RapidCheck's counterexamples.
#include "props/typed_recipe.h"

#include "ir/printer.h"
#include "props/typed_build.h"

#include <ostream>

namespace graphvet::props {

void showValue(const TypedRecipe &r, std::ostream &os) {
  os << "typed recipe: " << r.sources.size() << " sources, " << r.steps.size() << " steps:";
  for (const TypedStep &s : r.steps)
    os << " " << typedOpName(s.op);
  os << "\n" << printModule(buildTypedModule(r).module);
}

} // namespace graphvet::props
