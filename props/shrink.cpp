// Greedy descent through a recipe's shrink tree.
#include "props/shrink.h"

namespace graphvet::props {

namespace {

template <typename Result, typename R>
Result descend(const rc::Shrinkable<R> &start, const std::function<bool(const R &)> &interesting,
               unsigned budget, const std::atomic<bool> *stop) {
  Result r;
  rc::Shrinkable<R> current = start;
  bool descended = true;
  while (descended) {
    descended = false;
    rc::Seq<rc::Shrinkable<R>> shrinks = current.shrinks();
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

} // namespace

RecipeShrinkResult shrinkRecipe(const rc::Shrinkable<Recipe> &start,
                                const std::function<bool(const Recipe &)> &interesting,
                                unsigned budget, const std::atomic<bool> *stop) {
  return descend<RecipeShrinkResult>(start, interesting, budget, stop);
}

TypedRecipeShrinkResult
shrinkTypedRecipe(const rc::Shrinkable<TypedRecipe> &start,
                  const std::function<bool(const TypedRecipe &)> &interesting, unsigned budget,
                  const std::atomic<bool> *stop) {
  return descend<TypedRecipeShrinkResult>(start, interesting, budget, stop);
}

} // namespace graphvet::props
