// What the exporter's two halves share: the Exporter's state (the model
// being written, the names given to graphvet's values, the constants) and
// its steps. exporter.cpp walks the graphs (inputs, constants, outputs,
// calls, If); export_node.cpp writes one numeric op (refusals, attributes
// through ONNX's schema, opset forms, NHWC layouts). Internal: includes
// ONNX's headers.
#pragma once

#include "ir/graph.h"
#include "ir/tensor.h"
#include "ir/types.h"
#include "onnx/exporter.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace graphvet::onnxexport {

/// One ONNX node about to be written: op type, input and output value
/// names ("" = absent), and graphvet attributes still to be converted
/// through the op's schema.
struct NodeDraft {
  std::string type;
  std::string name;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  AttrMap attrs;
};

/// A node ONNX cannot express: the message is the export error.
struct Refusal {
  std::string why;
};

class Exporter {
public:
  Exporter(const Module &m, const ExportOptions &opts) : m_(m), opts_(opts) {}
  ExportResult run();

private:
  // exporter.cpp: the walk over graphs.
  void reserveRootNames();
  void emitGraph(GraphId g, onnx::GraphProto *gp, const std::vector<std::string> &parentInputs);
  void emitConst(GraphId g, NodeId id, onnx::GraphProto *gp);
  void emitCall(GraphId g, NodeId id, onnx::GraphProto *gp);
  void emitIf(GraphId g, NodeId id, onnx::GraphProto *gp);
  void emitWhile(GraphId g, NodeId id, onnx::GraphProto *gp);
  /// True when loop variable 0 of the While with body `bodyG` starts at
  /// `initial` = 0 (i64) and the body writes it back as itself + 1.
  bool isIterationCounter(GraphId bodyG, const std::string &initial) const;
  /// Makes `value` an output of subgraph `bp`: a value of the subgraph, each
  /// once (an outer value, a subgraph input or a repeated one goes through
  /// an Identity); returns the output's name.
  std::string subgraphResult(onnx::GraphProto *bp, const std::string &value,
                             std::set<std::string> &returned, const TensorType *type);
  /// The values a subgraph's NetOutput hands back, by the holder's output
  /// index (`in<k>._parent_node_index`, default k); "" where none.
  std::vector<std::string> resultsOf(GraphId g, size_t holderOutputs);
  void writeOutputs();
  void check();

  // export_node.cpp: one numeric op.
  void emitOp(GraphId g, NodeId id, onnx::GraphProto *gp);
  /// Rewrites an op written in an older opset's form (attributes that
  /// became inputs, Softmax's 2-D coercion, Resize-10) into the target's.
  void normalizeForm(GraphId g, const Node &n, NodeDraft &d, onnx::GraphProto *gp);
  /// Writes the NCHW form of an NHWC op between Transposes.
  void wrapLayout(GraphId g, const Node &n, NodeDraft &d, onnx::GraphProto *gp);
  /// Adds the node, its attributes converted through the schema.
  void writeDraft(const NodeDraft &d, onnx::GraphProto *gp);
  /// `value` transposed by `perm`: a constant at export time, else a
  /// Transpose node in `gp` (shared by every request of the same perm).
  /// The value a Transpose by `perm` of `value` gives back, when `value` is
  /// a written Transpose's output and the two cancel.
  std::optional<std::string> cancelledTranspose(const std::string &value,
                                                const std::vector<int64_t> &perm) const;
  std::string transposed(const std::string &value, const std::vector<int64_t> &perm,
                         onnx::GraphProto *gp);

public:
  // Shared helpers (both halves).
  /// `base` if unused in the model, else `base_1`, `base_2`...
  std::string fresh(const std::string &base);
  std::string freshNodeName(const std::string &base, const onnx::GraphProto *gp);
  /// The name of a connected input ("" for an unconnected slot).
  std::string valueOf(GraphId g, const std::optional<OutPort> &p) const;
  /// The name for output port `p` of a node about to be written (the
  /// reserved graph output name, or a fresh one after the node).
  std::string outputName(GraphId g, OutPort p);
  /// A root initializer holding `t`; returns its name.
  std::string addInitializer(const Tensor &t, const std::string &base);
  /// The constant behind a value name (an initializer), or nullptr.
  const Tensor *constantOf(const std::string &value) const;
  const TensorType *typeOf(GraphId g, OutPort p) const { return types_.of(g, p); }
  [[noreturn]] static void refuse(std::string why) { throw Refusal{std::move(why)}; }

private:
  const Module &m_;
  const ExportOptions &opts_;
  ModuleTypes types_;
  onnx::ModelProto model_;
  std::set<std::string> usedValues_;
  std::map<const onnx::GraphProto *, std::set<std::string>> usedNodes_;
  /// Per graph, the ONNX value name of each graphvet output port written.
  std::vector<std::map<OutPort, std::string>> names_;
  /// Output ports (of the root, or of an inlined call's body) whose value
  /// takes a graph output's name.
  std::map<std::pair<GraphId, OutPort>, std::string> reserved_;
  bool isReserved(GraphId g, OutPort p) const { return reserved_.count({g, p}) > 0; }
  /// Gives the graph output name `name` to the value behind port `p`: an
  /// op's or an If's output, or, through calls, the op inside returning it.
  void reserveOutput(GraphId g, OutPort p, const std::string &name);
  /// The graph output names, in NetOutput order.
  std::vector<std::string> outputNames_;
  std::map<std::string, Tensor> constants_;
  std::map<std::tuple<const onnx::GraphProto *, std::string, std::vector<int64_t>>, std::string>
      transposes_;
  /// Transposes written (the layout wrapping's and the model's own):
  /// output name -> (input, perm). A Transpose by the inverse perm of one of
  /// them is its input (back-to-back NHWC ops keep their data
  /// channels-last in between; convert-layout's boundary Transposes).
  std::map<std::string, std::pair<std::string, std::vector<int64_t>>> layoutTransposeOf_;
  /// The outputs of the Transposes the layout wrapping added.
  std::set<std::string> wrappingTransposes_;
  /// Removes the Transposes (layout wrapping's, or the model's own) and the
  /// initializers nothing reads any more.
  void removeUnused();
  std::vector<std::string> errors_;
  ExportSummary summary_;
};

/// `t` with its axes permuted (Transpose's convention: axis i of the result
/// is axis perm[i] of `t`).
Tensor transposeTensor(const Tensor &t, const std::vector<int64_t> &perm);

/// Sets `vi`'s tensor type (element type and static dims).
void setValueType(onnx::ValueInfoProto *vi, const TensorType &t);

} // namespace graphvet::onnxexport
