// Shrinking a generated case with RapidCheck's own shrink tree of its recipe:
// greedy descent, the first interesting shrink of each level wins (what
// RapidCheck does for a failing property), bounded by a number of tests.
#pragma once

#include "props/recipe.h"
#include "props/typed_recipe.h"

#include <rapidcheck.h>

#include <atomic>
#include <functional>

namespace graphvet::props {

struct RecipeShrinkResult {
  Recipe recipe;
  unsigned tests = 0;     ///< interestingness tests run
  unsigned accepted = 0;  ///< shrink steps taken
  bool exhausted = false; ///< stopped by the budget or the stop flag
};

/// The same descent through a typed recipe's shrink tree.
struct TypedRecipeShrinkResult {
  TypedRecipe recipe;
  unsigned tests = 0, accepted = 0;
  bool exhausted = false;
};

TypedRecipeShrinkResult
shrinkTypedRecipe(const rc::Shrinkable<TypedRecipe> &start,
                  const std::function<bool(const TypedRecipe &)> &interesting, unsigned budget,
                  const std::atomic<bool> *stop = nullptr);

RecipeShrinkResult shrinkRecipe(const rc::Shrinkable<Recipe> &start,
                                const std::function<bool(const Recipe &)> &interesting,
                                unsigned budget, const std::atomic<bool> *stop = nullptr);

} // namespace graphvet::props
