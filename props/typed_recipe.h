// A typed recipe: a well-typed numeric graph described as plain data that
// RapidCheck generates and shrinks. Sources (graph inputs and constants) carry
// their dtype and shape; every op step carries only small numbers (which op,
// which earlier values, a row of choice bytes, element picks for the
// constants it makes), which buildTypedModule (typed_build.h) interprets
// against the types the graph actually has at that point. The builder solves
// every op's constraints itself (casting, reshaping or making a fitting
// constant where the referenced value does not fit), so any recipe, and
// hence every shrink of one, builds a valid graph.
#pragma once

#include "ir/dtype.h"
#include "ir/tensor.h"

#include <cstdint>
#include <iosfwd>
#include <vector>

namespace graphvet::props {

/// One element of a constant, before its dtype is known (typed_values.h
/// turns it into bytes): `kind` picks zero, a small integer, an ordinary
/// magnitude or one of the specials of tensor-semantics.md §7; `bits`
/// supplies the rest. Both shrink towards 0 (+0).
struct ElementPick {
  uint8_t kind = 0;
  uint32_t bits = 0;
  friend bool operator==(const ElementPick &, const ElementPick &) = default;
};

/// A graph input (`Data` with a port description) or a constant (`Const`
/// with a tensor literal from `values`).
struct TypedSource {
  DType dtype = DType::F32;
  Shape shape;
  bool constant = false;
  std::vector<ElementPick> values;
  friend bool operator==(const TypedSource &, const TypedSource &) = default;
};

/// One op of the catalogue (typed_build.h), applied to earlier values.
struct TypedStep {
  /// Index into the op catalogue, modulo its size.
  uint16_t op = 0;
  /// References to earlier values: `back` counts from the newest value of
  /// the graph (0), modulo how many exist. Missing references read as 0.
  std::vector<uint8_t> refs;
  /// Decisions of the op's builder, read in order (Choices); a missing byte
  /// reads as 0, and 0 is always the plainest option.
  std::vector<uint8_t> choices;
  /// Elements of the constants this step makes, cycled.
  std::vector<ElementPick> values;
  friend bool operator==(const TypedStep &, const TypedStep &) = default;
};

struct TypedRecipe {
  std::vector<TypedSource> sources;
  std::vector<TypedStep> steps;
  /// Extra graph outputs beyond the values nobody reads (which are always
  /// outputs): references as in TypedStep::refs.
  std::vector<uint8_t> outputs;
  friend bool operator==(const TypedRecipe &, const TypedRecipe &) = default;
};

/// Reads a step's choice bytes in order; past the end every byte is 0.
class Choices {
public:
  explicit Choices(const std::vector<uint8_t> &bytes) : bytes_(&bytes) {}
  uint8_t next() { return pos_ < bytes_->size() ? (*bytes_)[pos_++] : (++pos_, 0); }
  /// A number in [0, n) (0 when n is 0); 0 is the plainest option.
  unsigned below(unsigned n) { return n == 0 ? (next(), 0u) : next() % n; }
  /// True with probability about percent/100 (false when the byte is 0).
  bool chance(unsigned percent) {
    uint8_t b = next();
    return b != 0 && (b - 1u) * 100u < percent * 255u;
  }

private:
  const std::vector<uint8_t> *bytes_;
  size_t pos_ = 0;
};

/// RapidCheck prints counterexamples with this: the graph the recipe builds,
/// as `.graph` text, after the recipe's own summary.
void showValue(const TypedRecipe &r, std::ostream &os);

} // namespace graphvet::props
