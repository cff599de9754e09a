// The typed recipe generators and their deterministic draws.
#include "props/typed_graph.h"

#include "props/gen_util.h"
#include "props/typed_dtype.h"
#include "props/typed_shape.h"
#include "props/typed_values.h"

namespace graphvet::props {
namespace {

/// How many choice bytes a step carries: more than any single op's builder
/// reads (Conv, the most, about 36) and about what the longest motifs read
/// (four Gemm branches of parallel-dense, about 46); a builder reading past
/// them gets zeros, the plainest choices.
constexpr size_t kChoiceBytes = 48;
/// References a step carries (Concat's, the most, read four).
constexpr size_t kStepRefs = 4;

/// A reference to a recent value: the newest most often; shrinks to 0.
rc::Gen<uint8_t> genBack() {
  return gen::weighted<uint8_t>({{35, 0}, {20, 1}, {15, 2}, {10, 3}, {8, 4}, {6, 5}, {6, 7}});
}

/// `n` elements, each shrinking on its own (never removed, so that the
/// positions of the others keep their meaning).
template <typename T> rc::Gen<std::vector<T>> genFixed(rc::Gen<T> elem, size_t n) {
  return rc::gen::container<std::vector<T>>(n, std::move(elem));
}

} // namespace

rc::Gen<TypedSource> genTypedSource() {
  return rc::gen::apply(
      [](DType t, Shape s, bool constant, std::vector<ElementPick> values) {
        return TypedSource{t, std::move(s), constant, std::move(values)};
      },
      genDType(), genShape(), gen::weighted<bool>({{65, false}, {35, true}}), genElementPicks());
}

rc::Gen<TypedStep> genTypedStep() {
  return rc::gen::apply(
      [](uint16_t op, std::vector<uint8_t> refs, std::vector<uint8_t> choices,
         std::vector<ElementPick> values) {
        return TypedStep{op, std::move(refs), std::move(choices), std::move(values)};
      },
      gen::genBelow<uint16_t>(static_cast<uint16_t>(typedStepOpBound())),
      genFixed(genBack(), kStepRefs), genFixed(gen::genBelow<uint8_t>(255), kChoiceBytes),
      genElementPicks());
}

rc::Gen<TypedRecipe> genTypedRecipe(const TypedGenOptions &opts) {
  return rc::gen::apply(
      [](std::vector<TypedSource> sources, std::vector<TypedStep> steps,
         std::vector<uint8_t> outputs) {
        return TypedRecipe{std::move(sources), std::move(steps), std::move(outputs)};
      },
      gen::genVector(genTypedSource(), opts.minSources, std::max(opts.minSources, opts.maxSources)),
      gen::genVector(genTypedStep(), opts.minSteps, std::max(opts.minSteps, opts.maxSteps)),
      gen::genVector(genBack(), 0, 2));
}

rc::Shrinkable<TypedRecipe> generateTypedRecipe(uint64_t seed, int size,
                                                const TypedGenOptions &opts) {
  return genTypedRecipe(opts)(rc::Random(seed), size);
}

TypedModule generateTypedModule(uint64_t seed, int size, const TypedGenOptions &opts) {
  return buildTypedModule(generateTypedRecipe(seed, size, opts).value());
}

} // namespace graphvet::props
