// Greedy descent through a recipe's shrink tree.
#include "props/shrink.h"

namespace graphvet::props {

RecipeShrinkResult shrinkRecipe(const rc::Shrinkable<Recipe> &start,
                                const std::function<bool(const Recipe &)> &interesting,
                                unsigned budget, const std::atomic<bool> *stop) {
  RecipeShrinkResult r;
  rc::Shrinkable<Recipe> current = start;
  bool descended = true;
  while (descended) {
    descended = false;
    rc::Seq<rc::Shrinkable<Recipe>> shrinks = current.shrinks();
    while (auto next = shrinks.next()) {
      if (r.tests >= budget || (stop && stop->load(std::memory_order_relaxed))) {
        r.exhausted = true;
        r.recipe = current.value();
        return r;
      }
      ++r.tests;
      if (interesting(next->value())) {
        current = std::move(*next);
        ++r.accepted;
        descended = true;
        break;
      }
    }
  }
  r.recipe = current.value();
  return r;
}

} // namespace graphvet::props
