// buildTypedModule: the deterministic interpretation of a typed recipe as a
// well-typed numeric graph (one root graph of Data, Const, numeric ops and a
// NetOutput). Each step applies one op of the catalogue to earlier values;
// the op's builder solves its constraints (dtype sets, ranks, broadcasting,
// axes, windows, shape operands as constants) from the values' types and the
// step's choices, adapting a value that does not fit (a Cast, a Reshape, a
// Flatten) or making a fitting Const or Data. Besides the module it returns
// the builder's own model of every port's type, computed from the ONNX
// definitions independently of the ops' inference functions.
#pragma once

#include "ir/graph.h"
#include "ir/tensor.h"
#include "props/typed_recipe.h"

#include <string>
#include <string_view>
#include <vector>

namespace graphvet::props {

/// The type the builder expects at one output port of the root graph.
struct ModelPort {
  OutPort port;
  TensorType type;
};

struct TypedModule {
  Module module;
  /// Every output port of every node the builder made, with its type.
  std::vector<ModelPort> model;
  /// The catalogue op of each step, in step order (adapters not included).
  std::vector<std::string> stepOps;
};

TypedModule buildTypedModule(const TypedRecipe &recipe);

/// The op catalogue: ONNX op types the typed generator covers, then the
/// motifs (multi-node patterns, named "motif:..."), the last
/// numTypedMotifs() entries. A step's op number below numTypedOps() -
/// numTypedMotifs() names that single op; any larger number a motif
/// (cycled), so that drawing op numbers uniformly below typedStepOpBound()
/// makes about a quarter of the steps motifs.
size_t numTypedOps();
size_t numTypedMotifs();
size_t typedStepOpBound();
/// The name of the catalogue entry op number `i` selects.
std::string_view typedOpName(size_t i);

} // namespace graphvet::props
