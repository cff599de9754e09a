// The ONNX exporter, the inverse of the importer: a graphvet Module becomes
// an ONNX ModelProto of the default domain at one opset (17 by default):
// `Data {index}` become graph inputs (named as the nodes, so an imported
// model keeps its input names), `Const` become initializers, `NetOutput`
// the graph outputs, numeric ops ONNX nodes with their ONNX attributes (in
// the target opset's form: attributes that became inputs are written as
// constant inputs), `If` an ONNX `If` with subgraphs, `While` an ONNX
// `Loop`. Calls (fused groups, target regions) are inlined; `layout =
// "NHWC"` ops are written as their NCHW form between Transposes. Whatever
// ONNX cannot express (GE memory ops, variables, in-place writes, Case) is
// refused, node by node. Every
// export is checked by ONNX's checker and strict shape inference. The
// public interface needs no ONNX header.
#pragma once

#include "ir/graph.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace onnx {
class ModelProto;
}

namespace graphvet::onnxexport {

struct ExportOptions {
  /// The opset of the default domain the model is written for (the
  /// importer reads opsets up to 17, Debian's ONNX 1.12).
  int64_t opset = 17;
  /// Names of the root graph's outputs, in NetOutput input order (the
  /// original model's, from the import); empty: each output is named after
  /// the value it returns.
  std::vector<std::string> outputNames;
  /// ModelProto.producer_name.
  std::string producerName = "graphvet";
  /// The graph's name when the root graph has none worth keeping.
  std::string graphName;
};

/// What the export wrote (for --json and the reports).
struct ExportSummary {
  int64_t nodes = 0;        ///< ONNX nodes, subgraphs included
  int64_t initializers = 0; ///< root initializers
  int64_t inputs = 0;
  int64_t outputs = 0;
  int64_t inlinedCalls = 0;     ///< PartitionedCall (and other call) nodes inlined
  int64_t layoutTransposes = 0; ///< Transposes written around NHWC ops
  int64_t formRewrites = 0;     ///< nodes written in another opset form
};

struct ExportResult {
  /// Set on success (errors is then empty).
  std::shared_ptr<onnx::ModelProto> model;
  /// One message each, without the file prefix: `cannot export NODE
  /// (TYPE): why` for a node ONNX cannot express, `the ONNX checker rejects
  /// the export: ...` for a checker failure (a bug of the exporter).
  std::vector<std::string> errors;
  ExportSummary summary;

  bool ok() const { return model != nullptr && errors.empty(); }
};

/// Exports `m` (verified and typed by graphvet's inference first).
ExportResult exportOnnx(const Module &m, const ExportOptions &opts);

/// The model's serialized bytes (a `.onnx` file's content).
std::string serializeModel(const onnx::ModelProto &model);

/// Exports and writes `path`; on failure `errors` holds why (the export's
/// errors, or "cannot write PATH").
ExportResult exportOnnxFile(const Module &m, const ExportOptions &opts, const std::string &path);

} // namespace graphvet::onnxexport
