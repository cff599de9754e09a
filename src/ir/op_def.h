// What a numeric op is, beside its memory row: a type inference function and
// a reference kernel (tensor-semantics.md). Both hang off the op's one row of
// the op library (OpInfo::infer, OpInfo::kernel), so adding an op is one
// entry in a family file under src/ir/ops/. The interpreter, `graphvet run`,
// constant folding and the conformance runner all compute through the same
// kernels.
#pragma once

#include "ir/graph.h"
#include "ir/tensor.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace graphvet {

/// What type inference sees of one node: the types of its inputs (nullopt
/// for an unconnected `_` slot), and, where a `Const` with a `value` feeds
/// an input, that value (shape operands: Reshape's shape, Slice's starts...).
struct InferContext {
  const Node &node;
  std::span<const std::optional<TensorType>> inputs;
  std::span<const Tensor *const> constants;
  /// Filled by the infer function: one type per output.
  std::vector<TensorType> outputs;
  /// Set by fail(): what is wrong, without the location (the caller adds it).
  std::string error;

  size_t numInputs() const { return inputs.size(); }
  bool has(size_t i) const { return i < inputs.size() && inputs[i].has_value(); }
  const TensorType &in(size_t i) const { return *inputs[i]; }
  const Tensor *constant(size_t i) const { return i < constants.size() ? constants[i] : nullptr; }
  /// Records the error and returns false (so `return ctx.fail(...)` reads well).
  bool fail(std::string message);
};

/// A deterministic stream of random bits for one execution of one random op
/// (tensor-semantics.md §6): keyed by the run's seed, the op's qualified name
/// and how many times that node has executed in the run.
class RandomStream {
public:
  RandomStream(uint64_t runSeed, std::string_view qualifiedName, uint64_t execution);
  uint64_t next();
  /// Uniform in [0, 1) with 53 random bits.
  double uniform();
  /// Standard normal (Box-Muller on two uniforms).
  double normal();

private:
  uint64_t state_;
};

/// What a kernel sees: the node (attributes), its inputs (nullptr for an
/// unconnected slot) and its outputs, allocated with the inferred types,
/// zeroed and determinate. A kernel marks every output element that depends
/// on an indeterminate input element, or that ONNX leaves undefined, with
/// setUndef (tensor-semantics.md §2).
struct KernelContext {
  const Node &node;
  std::span<const Tensor *const> inputs;
  std::span<Tensor> outputs;
  /// Set for nondeterministic ops only; nullptr otherwise.
  RandomStream *random = nullptr;
  /// Take the straightforward loops a kernel's fast path must equal bit for
  /// bit (tests compare the two; nothing else sets it).
  bool referenceLoops = false;

  const Tensor &in(size_t i) const { return *inputs[i]; }
  bool has(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
  Tensor &out(size_t i) const { return outputs[i]; }
};

using InferFn = bool (*)(InferContext &);
using KernelFn = void (*)(KernelContext &);

// Attribute readers shared by infer functions and kernels. Float readers
// accept integer literals; list readers accept a single scalar as a list of
// one. A missing attribute gives the default.
int64_t attrInt(const Node &n, const std::string &key, int64_t def);
double attrFloat(const Node &n, const std::string &key, double def);
std::string attrString(const Node &n, const std::string &key, const std::string &def);
std::optional<std::vector<int64_t>> attrInts(const Node &n, const std::string &key);
std::optional<std::vector<double>> attrFloats(const Node &n, const std::string &key);
/// A dtype attribute (`to = f16`): identifier or string naming a dtype.
std::optional<DType> attrDType(const Node &n, const std::string &key);
/// An attribute of `n` whose kind is not the one ONNX gives its name
/// (`alpha = "big"`), as a message; nullopt when every known one fits.
/// inferNodeTypes reports it before the op's own inference runs.
std::optional<std::string> attributeKindError(const Node &n);
/// The tensor held by a tensor-literal attribute (`value = f32[2] {1, 2}`).
const Tensor *attrTensor(const Node &n, const std::string &key);

/// Normalizes an axis in [-rank, rank) to [0, rank); nullopt when out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);
/// ONNX multidirectional (numpy) broadcasting of two shapes; nullopt when
/// they do not broadcast.
std::optional<Shape> broadcastShapes(std::span<const int64_t> a, std::span<const int64_t> b);
/// For an output index `outIndex` of `outShape`, the index of the broadcast
/// input of shape `inShape` (right-aligned, size-1 dimensions pinned to 0).
int64_t broadcastIndex(int64_t outIndex, std::span<const int64_t> outShape,
                       std::span<const int64_t> inShape);

/// Runs an op's type inference on a node with the given input types (for
/// tests and tools); error says why on failure.
std::optional<std::vector<TensorType>>
inferNodeTypes(const Node &n, std::span<const std::optional<TensorType>> inputs,
               std::span<const Tensor *const> constants, std::string &error);
/// Runs an op's inference and kernel on concrete inputs (tests, constant
/// folding, the conformance runner); nullopt with error set when the op has
/// no kernel or inference fails.
std::optional<std::vector<Tensor>> evaluateNode(const Node &n,
                                                std::span<const Tensor *const> inputs,
                                                std::string &error, RandomStream *random = nullptr,
                                                bool referenceLoops = false);

} // namespace graphvet
