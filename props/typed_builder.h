// Private to the typed graph builder (typed_build.cpp and the op family
// files typed_ops_*.cpp): the Builder that holds the graph under
// construction, its pool of values with their model types, and the helpers
// op builders use to pick inputs, adapt them and make constants. Each family
// file hands its catalogue entries to typed_build.cpp.
#pragma once

#include "props/typed_build.h"
#include "props/typed_dtype.h"
#include "props/typed_recipe.h"

#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace graphvet::props::typed {

/// A value of the graph: an output port and the type the builder expects
/// there.
struct Value {
  OutPort port;
  TensorType type;
  int64_t rank() const { return type.rank(); }
  DType dtype() const { return type.dtype; }
};

using Inputs = std::vector<std::optional<Value>>;

class Builder {
public:
  explicit Builder(const TypedRecipe &recipe);
  TypedModule build();

  /// The current step's decisions.
  Choices ch;

  // ---- Inputs -------------------------------------------------------------

  /// The next reference of the step (0 past the end).
  uint8_t nextRef();
  /// The value `back` places before the newest one (modulo the pool size).
  const Value &ref(uint8_t back) const;
  /// The first value satisfying `pred`, scanning from ref(back) towards
  /// older values (wrapping around); nullopt when none does.
  std::optional<Value> find(uint8_t back, const std::function<bool(const Value &)> &pred) const;
  /// An input of a dtype in `set` of rank >= minRank: the nearest such
  /// value from the next reference, else the referenced value cast to a
  /// dtype of `set` and reshaped with leading 1s.
  Value input(DTypeSet set, int64_t minRank = 0);
  /// The referenced value itself, whatever its type.
  Value any() { return ref(nextRef()); }

  // ---- Adapters (ops added to make a value fit; their outputs join the
  // pool) -------------------------------------------------------------------

  Value castTo(const Value &v, DType to);
  Value reshapeTo(const Value &v, const Shape &shape);

  // ---- New sources ---------------------------------------------------------

  /// A Const (from the step's element picks) or, sometimes, a Data.
  Value source(const TensorType &t);
  Value constant(const TensorType &t);
  Value literal(Tensor t);
  Value data(const TensorType &t);
  /// A Variable of type `t` (its own buffer, persisting across runs). Like
  /// every source it joins the pool only when the caller adds it; the
  /// in-place motifs keep written sources out, so no later step reads them
  /// unordered with the write.
  Value variable(const TensorType &t);
  /// A Const of integers (shape operands): rank 1, or rank 0 when `scalar`.
  Value ints(const std::vector<int64_t> &v, DType dtype = DType::I64, bool scalar = false);
  /// The next element pick of the step (cycled; +0 without picks).
  ElementPick nextPick();

  /// A second operand for a broadcasting op: an earlier value of dtype
  /// `dtype` that broadcasts with `against` (unidirectional: to it), the
  /// value `first` again, or a new source of a solved shape.
  Value partner(const Value &first, DType dtype, const Shape &against, bool unidirectional);

  // ---- Emission -------------------------------------------------------------

  /// Adds a node of `op` with the given inputs (nullopt: `_`), attributes
  /// and expected output types; its outputs join the pool.
  std::vector<Value> emit(const std::string &op, const Inputs &inputs, AttrMap attrs,
                          const std::vector<TensorType> &outputs);
  Value emit1(const std::string &op, const Inputs &inputs, AttrMap attrs, const TensorType &out) {
    return emit(op, inputs, std::move(attrs), {out})[0];
  }
  /// A control edge in the root graph: `before` runs before `after`.
  void order(const Value &before, const Value &after);
  /// A new subgraph of the root node `holder` (an If's branch), named from
  /// `prefix`.
  GraphId addSubgraph(const Value &holder, const std::string &prefix);
  /// Adds a node to subgraph `g`: outside the pool and the model (no later
  /// step may read a branch's values); returns its id.
  NodeId emitIn(GraphId g, const std::string &op, const std::vector<std::optional<OutPort>> &inputs,
                AttrMap attrs, uint32_t numOutputs);
  /// Makes `v` a graph output even when other nodes read it (a motif's
  /// intermediate with a second, external consumer).
  void keepAsOutput(const Value &v) { kept_.push_back(v); }

private:
  std::string freshName(const std::string &prefix);
  Value addSource(const std::string &type, const std::string &prefix, AttrMap attrs,
                  const TensorType &t);
  void runStep(const TypedStep &step);

  const TypedRecipe &recipe_;
  Module m_;
  GraphId g_ = 0;
  std::vector<Value> pool_;
  std::vector<Value> kept_;
  size_t firstOpValue_ = 0;
  std::vector<ModelPort> model_;
  std::vector<std::string> stepOps_;
  std::map<std::string, unsigned> counters_;
  int64_t nextIndex_ = 0;
  const TypedStep *step_ = nullptr;
  size_t refPos_ = 0;
  size_t pickPos_ = 0;
};

using OpBuild = void (*)(Builder &, const std::string &op);

struct CatalogueEntry {
  std::string_view op;
  OpBuild build;
};

// The catalogue, family by family (typed_ops_*.cpp).
std::span<const CatalogueEntry> elementwiseEntries();
std::span<const CatalogueEntry> logicEntries();
std::span<const CatalogueEntry> shapeEntries();
std::span<const CatalogueEntry> reduceEntries();
std::span<const CatalogueEntry> nnEntries();
/// Motifs (typed_ops_motifs.cpp): entries whose builder emits a multi-node
/// pattern the mid-end passes act on; they come after the single ops.
std::span<const CatalogueEntry> motifEntries();
/// The chain motifs (typed_ops_motifs_chains.cpp: Cast chains, Transpose
/// pairs, Reshape/Squeeze chains, f16/bf16 chains); motifEntries() ends with
/// them.
std::span<const CatalogueEntry> chainMotifEntries();
/// The state and scope motifs (typed_ops_motifs_state.cpp: in-place writers
/// of inputs and variables among numeric reads, If branches with equal
/// subexpressions); motifEntries() ends with them.
std::span<const CatalogueEntry> stateMotifEntries();

// ---- Small model helpers shared by the family files --------------------------

inline AttrValue ident(DType t) {
  return AttrValue::ofIdent(std::string(dtypeName(t)));
}
/// Logical [N, C, spatial...] of a physical shape in `nhwc` layout, and back.
Shape toLogical(const Shape &physical, bool nhwc);
Shape toPhysical(const Shape &logical, bool nhwc);
/// Mul(v, s) by a constant s varying along `axis` only ([C, 1, ..., 1]),
/// half the time followed by Add(., shift) of the same shape: the per-channel
/// affine that simplify-inference leaves of a BatchNormalization, which
/// fold-scale-axis folds into a neighbouring Conv or Gemm.
Value perChannelAffine(Builder &b, const Value &v, int64_t axis);
/// Normalizes an axis in [-rank, rank).
inline int64_t normAxis(int64_t a, int64_t rank) {
  return a < 0 ? a + rank : a;
}

} // namespace graphvet::props::typed
