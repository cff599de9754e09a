// The ONNX importer: reads an ONNX model (checked by ONNX's checker, typed by
// ONNX's shape inference) and builds the graphvet Module that computes the
// same thing (graph-format.md version 2, tensor-semantics.md): graph inputs
// become `Data {index = i}`, initializers and `Constant` become `Const`,
// nodes keep their op type and attribute names, `If` becomes `If` and `Loop`
// becomes `While`. Everything graphvet cannot express (ops without a numeric
// definition, strings, complex numbers, free dimensions) is reported
// together, never half-imported. The public interface needs no ONNX header.
#pragma once

#include "ir/graph.h"
#include "ir/tensor.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace graphvet::onnximport {

struct ImportOptions {
  /// Static shapes for graph inputs (`--input-shape x=1x3x224x224`): fixes
  /// symbolic or unknown dimensions; known dimensions must agree.
  std::map<std::string, Shape> inputShapes;
  /// Graph inputs that become `Const` nodes with these values (TVM's
  /// freeze_params). The value must have the input's element type and a
  /// shape compatible with the model's.
  std::map<std::string, Tensor> freezeInputs;
  /// Graph inputs that become `Const` nodes holding one number in every
  /// element (`--freeze sr=16000`), read in the input's dtype; the shape is
  /// the input's (fixed by inputShapes when it has free dimensions).
  std::map<std::string, std::string> freezeValues;
  /// Values of graph inputs (a test data set). Their shapes fix the
  /// inputs' free dimensions; with freezeShapeOperands they are the values
  /// frozen.
  std::map<std::string, Tensor> inputData;
  /// A test data set directory (`input_0.pb`, `input_1.pb`...) whose tensors
  /// are added to inputData: by the tensor's name when it names a graph
  /// input, else by position among the graph inputs (initializers excluded).
  std::string inputDataDir;
  /// Freeze exactly the graph inputs (with a value in inputData) whose value
  /// feeds an input slot marked in OpInfo::shapeOperands (directly or
  /// through other ops; `Shape`/`Size` read only their input's type), and
  /// the trip count of a `Loop` with scan outputs.
  bool freezeShapeOperands = false;

  /// Run graphvet's type inference on the imported module and report its
  /// errors as import errors (tests with a stub op list turn it off: their
  /// ops have no inference).
  bool inferTypes = true;

  /// Which op types graphvet computes, and their shape operands. Null means
  /// the op library (isNumericOp, lookupOp(type).shapeOperands); tests
  /// substitute a list.
  std::function<bool(std::string_view)> isNumericOp;
  std::function<uint64_t(std::string_view)> shapeOperands;
};

/// One graph input of the model, as imported.
struct ImportedInput {
  std::string name;
  /// `Data {index}` of the root graph; nullopt when the input was frozen.
  std::optional<int64_t> index;
  bool frozen = false;
  TensorType type;
};

struct ImportResult {
  /// Set on success (errors is then empty).
  std::optional<Module> module;
  /// What is wrong, one message each, without the file prefix. The
  /// unsupported ops and element types are one message together.
  std::vector<std::string> errors;
  /// Op types graphvet does not compute, each with the names of the nodes
  /// using it (first appearance order), for tools that classify failures.
  std::map<std::string, std::vector<std::string>> unsupportedOps;
  /// ONNX element or value types graphvet lacks (STRING, COMPLEX64,
  /// SEQUENCE...), each with the tensors having it ("input 'x'").
  std::map<std::string, std::vector<std::string>> unsupportedTypes;
  /// Graph inputs with free (symbolic or unknown) dimensions that no input
  /// shape or value fixes, one line each; part of the unsupported message.
  std::vector<std::string> freeDimensions;
  /// The model's graph inputs in graph.input order (initializers excluded),
  /// and its graph outputs (root NetOutput inputs) in graph.output order.
  std::vector<ImportedInput> inputs;
  std::vector<std::string> outputs;
  /// Shape-operand values the importer computed statically (names of the
  /// values turned into `Const`).
  std::vector<std::string> folded;

  bool ok() const { return module.has_value() && errors.empty(); }
};

/// Imports the ONNX model at `path`.
ImportResult importOnnx(const std::string &path, const ImportOptions &opts);
/// Imports a serialized ModelProto; `modelDir` locates external data.
ImportResult importOnnxBytes(const std::string &bytes, const std::string &modelDir,
                             const ImportOptions &opts);

/// Reads a serialized TensorProto (a test data set's `input_0.pb`); sets
/// `error` and returns nullopt when the file cannot be read, or the tensor's
/// element type is not a graphvet dtype. `name`, when given, receives the
/// tensor's name (empty when it has none).
std::optional<Tensor> readTensorProto(const std::string &path, std::string &error,
                                      std::string *name = nullptr);

/// Parses `1x3x224x224` (an empty text is a scalar); nullopt when malformed.
std::optional<Shape> parseShapeText(std::string_view text);

} // namespace graphvet::onnximport
