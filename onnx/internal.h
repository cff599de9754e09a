// What the importer's stages share: the import context (options, the checked
// and shape-inferred ModelProto, static values, errors) and the helpers the
// stages have in common. Internal: includes ONNX's headers.
#pragma once

#include "ir/graph.h"
#include "ir/tensor.h"
#include "onnx/importer.h"

#include <onnx/onnx_pb.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace graphvet::onnximport {

/// Ops the importer maps itself (not through the op library's numeric rows).
bool isStructuralOp(const std::string &opType);

/// The node's name, or `OpType_INDEX` (its position in its graph) when empty.
std::string nodeDisplayName(const onnx::NodeProto &n, size_t index);

/// True for attributes holding an ONNX element type: Cast's `to` and every
/// `dtype` (RandomUniform(Like), RandomNormal(Like), Bernoulli, EyeLike,
/// Multinomial...).
bool isDTypeAttribute(const std::string &opType, const std::string &attr);

/// Graph-valued attributes of a node (If's branches, Loop's body...).
std::vector<const onnx::GraphProto *> subgraphsOf(const onnx::NodeProto &n);

struct Context {
  const ImportOptions &opts;
  std::string modelDir;
  onnx::ModelProto model;
  std::vector<std::string> errors;
  /// Types of every named value ONNX knows (graph inputs and outputs,
  /// value_info after shape inference, initializers), subgraphs included.
  std::map<std::string, onnx::TypeProto> valueTypes;
  /// Values known before running: initializers, frozen inputs, Constant
  /// outputs, and the shape-operand values computed from them.
  std::map<std::string, Tensor> staticValues;
  /// Values whose content decides an output type (they feed a shape operand
  /// slot, possibly through other ops): the importer computes them
  /// statically when it can and emits them as Const.
  std::set<std::string> neededValues;
  /// opts.inputData plus the tensors of opts.inputDataDir.
  std::map<std::string, Tensor> inputData;
  /// Root graph inputs turned into Const.
  std::set<std::string> frozen;
  /// Values of `neededValues` computed by the importer (become Const).
  std::vector<std::string> folded;
  std::set<std::string> foldedSet;
  /// Static types graphvet's inference gives to values ONNX's inference
  /// leaves without one (staticType reads them after ONNX's).
  std::map<std::string, TensorType> inferredTypes;
  /// Values of a Loop body typed differently in different iterations: why
  /// (for the error of a node that needs the type).
  std::map<std::string, std::string> typeConflicts;
  /// If branches (whose condition is not known) where graphvet's inference
  /// fails: the first node that does not type (for the If's error).
  std::map<const onnx::GraphProto *, std::string> untypedBranches;
  /// If nodes whose condition is known before running: the branch taken
  /// (0 then, 1 else); the translation puts that branch in the If's place.
  std::map<const onnx::NodeProto *, int> staticBranches;
  /// The model's opset of the default domain.
  int64_t opset = 1;

  Context(const ImportOptions &o, std::string dir)
      : opts(o), modelDir(std::move(dir)), inputData(o.inputData) {}
  void error(std::string message) { errors.push_back(std::move(message)); }
  bool isNumeric(std::string_view opType) const;
  uint64_t shapeOperands(std::string_view opType) const;
  bool nondeterministic(std::string_view opType) const;
  /// The static TensorType of a value from ONNX's types, when every
  /// dimension is known and the element type is a graphvet dtype, else the
  /// type graphvet's inference gave it (inferredTypes).
  std::optional<TensorType> staticType(const std::string &value) const;
};

/// Converts one attribute; nullopt with `error` set when graphvet cannot
/// hold it.
std::optional<AttrValue> convertAttribute(const Context &ctx, const onnx::NodeProto &n,
                                          const onnx::AttributeProto &a, std::string &error);

/// The graphvet node an ONNX node computes as (op type, converted
/// attributes, addOpsetAttributes; one connected placeholder input per
/// connected slot), for evaluating or typing it on its own; nullopt with
/// `error` set when an attribute cannot be converted.
std::optional<Node> graphvetNode(const Context &ctx, const onnx::NodeProto &n, std::string &error);

/// Attributes a node needs where an op changed meaning between opsets
/// without changing form: `onnx_opset` on Softmax, LogSoftmax and Hardmax
/// below opset 13.
void addOpsetAttributes(const Context &ctx, const std::string &opType, AttrMap &attrs);

/// The Const value of a `Constant` node; nullopt with an error recorded.
std::optional<Tensor> constantNodeValue(Context &ctx, const onnx::NodeProto &n,
                                        const std::string &where);

/// Input slots of a node whose value decides an output type: the op's
/// shapeOperands, and a Loop's trip count when it has scan outputs.
std::vector<size_t> shapeOperandSlots(const Context &ctx, const onnx::NodeProto &n);

/// The root graph inputs whose value feeds a shape operand (stopping at
/// Shape and Size, which read only their input's type).
std::set<std::string> inputsFeedingShapeOperands(const Context &ctx);

/// The root graph inputs whose value `value` depends on (stopping at Shape
/// and Size).
std::set<std::string> inputsFeeding(const Context &ctx, const std::string &value);

/// Fills ctx.neededValues and computes what it can of them into
/// ctx.staticValues (recording ctx.folded); types what ONNX's inference
/// left untyped (ctx.inferredTypes, ctx.typeConflicts) and finds the If
/// nodes with a known condition (ctx.staticBranches).
void computeStaticValues(Context &ctx);

/// Builds the Module from the prepared context; records errors in ctx.
std::optional<Module> translateModel(Context &ctx, std::vector<ImportedInput> &inputs,
                                     std::vector<std::string> &outputs);

} // namespace graphvet::onnximport
