// Small RapidCheck building blocks shared by the generators (the memory
// graph recipes of gen_recipe.cpp and the typed numeric recipes of
// typed_graph.cpp): uniform choices that shrink towards 0, vectors that
// shrink by removing chunks, and weighted choices listing the simplest
// option first.
#pragma once

#include <rapidcheck.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace graphvet::props::gen {

/// A vector of shrinkables that shrinks by removing chunks of elements (down
/// to empty), then by shrinking each element.
template <typename T>
rc::Shrinkable<std::vector<T>> shrinkElements(std::vector<rc::Shrinkable<T>> elems) {
  using Elems = std::vector<rc::Shrinkable<T>>;
  return rc::shrinkable::map(
      rc::shrinkable::shrinkRecur(std::move(elems),
                                  [](const Elems &es) {
                                    return rc::seq::concat(
                                        rc::shrink::removeChunks(es),
                                        rc::shrink::eachElement(es, [](const rc::Shrinkable<T> &s) {
                                          return s.shrinks();
                                        }));
                                  }),
      [](const Elems &es) {
        std::vector<T> out;
        out.reserve(es.size());
        for (const auto &s : es)
          out.push_back(s.value());
        return out;
      });
}

/// A uniform integer in [0, bound) whatever the size; shrinks towards 0.
/// (rc::gen::inRange narrows its range at small sizes, which would make the
/// first cases of a property all alike.)
template <typename T> rc::Gen<T> genBelow(T bound) {
  return rc::Gen<T>([bound](const rc::Random &random, int) {
    T value = static_cast<T>(rc::Random(random).next() % std::max<uint64_t>(1, bound));
    return rc::shrinkable::shrinkRecur(value, [](T x) { return rc::shrink::towards<T>(x, 0); });
  });
}

/// `minLen..maxLen` elements (the upper end scaled down at small sizes).
template <typename T>
rc::Gen<std::vector<T>> genVector(rc::Gen<T> elem, size_t minLen, size_t maxLen) {
  return rc::Gen<std::vector<T>>([=](const rc::Random &random, int size) {
    rc::Random r(random);
    size_t scaledMax =
        minLen + (maxLen - minLen) * static_cast<size_t>(std::clamp(size, 0, 100)) / 100;
    size_t n = minLen + static_cast<size_t>(r.split().next() % (scaledMax - minLen + 1));
    std::vector<rc::Shrinkable<T>> elems;
    elems.reserve(n);
    for (size_t i = 0; i < n; ++i)
      elems.push_back(elem(r.split(), size));
    return shrinkElements<T>(std::move(elems));
  });
}

/// One of `choices` with the given weights; shrinks towards the first.
template <typename T> rc::Gen<T> weighted(std::vector<std::pair<unsigned, T>> choices) {
  unsigned total = 0;
  for (const auto &c : choices)
    total += c.first;
  return rc::gen::map(genBelow<unsigned>(total), [choices](unsigned x) {
    for (const auto &[w, v] : choices) {
      if (x < w)
        return v;
      x -= w;
    }
    return choices.back().second;
  });
}

} // namespace graphvet::props::gen
