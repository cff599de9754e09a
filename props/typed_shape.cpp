// Source shapes and the shape solvers of the typed graph builder.
#include "props/typed_shape.h"

#include "props/gen_util.h"

#include <algorithm>

namespace graphvet::props {

int64_t elementsOf(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

std::optional<Shape> broadcastOf(const Shape &a, const Shape &b) {
  // Written out here rather than taken from ir/op_def.h: the builder's model
  // of types must not share code with the inference it is compared with.
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t x = i + a.size() >= r ? a[i + a.size() - r] : 1;
    int64_t y = i + b.size() >= r ? b[i + b.size() - r] : 1;
    if (x != y && x != 1 && y != 1)
      return std::nullopt;
    out[i] = x == 1 ? y : x;
  }
  return out;
}

rc::Gen<Shape> genShape() {
  auto dim = gen::weighted<int64_t>({{40, 1}, {30, 2}, {20, 3}, {14, 4}, {4, 0}});
  return rc::gen::map(gen::genVector(dim, 0, 4), [](std::vector<int64_t> dims) {
    // Keep within the budget: lower the largest dimension until it fits.
    while (elementsOf(dims) > kMaxSourceElements)
      --*std::max_element(dims.begin(), dims.end());
    return Shape(dims);
  });
}

Shape broadcastPartner(const Shape &s, bool unidirectional, Choices &ch) {
  const int64_t n = elementsOf(s);
  Shape out = s;
  switch (ch.below(unidirectional ? 4 : 6)) {
  case 0: // the same shape
    break;
  case 1: // a scalar
    out.clear();
    break;
  case 2: // a suffix
    out.erase(out.begin(), out.begin() + ch.below(static_cast<unsigned>(s.size()) + 1));
    break;
  case 3: // some dimensions 1
    for (int64_t &d : out)
      if (ch.chance(50))
        d = 1;
    break;
  case 4: { // a new leading axis
    int64_t d = 2 + ch.below(2);
    if (s.size() < 4 && n * d <= kMaxValueElements)
      out.insert(out.begin(), d);
    break;
  }
  default: { // widen the size-1 axes
    int64_t total = n;
    for (int64_t &d : out)
      if (d == 1) {
        int64_t w = 2 + ch.below(2);
        if (total * w <= kMaxValueElements) {
          d = w;
          total *= w;
        }
      }
    break;
  }
  }
  return out;
}

Shape factorShape(int64_t n, size_t rank, Choices &ch) {
  if (rank == 0 && n != 1)
    rank = 1;
  Shape out(rank, 1);
  if (rank == 0)
    return out;
  if (n == 0) {
    for (int64_t &d : out)
      d = 1 + ch.below(3);
    out[ch.below(static_cast<unsigned>(rank))] = 0;
    return out;
  }
  // Spread the prime factors of n over the dimensions.
  int64_t rest = n;
  for (int64_t p = 2; p * p <= rest; ++p)
    while (rest % p == 0) {
      out[ch.below(static_cast<unsigned>(rank))] *= p;
      rest /= p;
    }
  if (rest > 1)
    out[ch.below(static_cast<unsigned>(rank))] *= rest;
  return out;
}

} // namespace graphvet::props
