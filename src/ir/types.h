// Type inference over a whole module (tensor-semantics.md §1): the type of
// every output port of every live node. Numeric ops infer theirs with their
// op's infer function; graph inputs, variables and placeholder ops (no
// numeric semantics) take their port description (`outK.dtype`,
// `outK.shape`, default f32 [4]); a `Const` with a `value` has the value's
// type; copies have their description like placeholders; subgraph `Data`
// take their parent input's type; calls, branches and loops take their
// subgraphs' results, except an output the memory plan binds first (to a
// variable, or to an input by a ref or view attribute), which is typed as on
// an ordinary op. Explicit descriptions on inferred ports are checked.
// A numeric node whose shape operand is computed at run time takes its
// described types (hasRuntimeShapeOperands).
#pragma once

#include "ir/diagnostic.h"
#include "ir/graph.h"
#include "ir/tensor.h"

#include <memory>
#include <optional>
#include <vector>

namespace graphvet {

/// The default description of an undescribed port (semantics.md §1).
TensorType defaultPortType();

class ModuleTypes {
public:
  /// Type of an output port, or nullptr when it could not be inferred (the
  /// node is dead, or inference reported an error for it).
  const TensorType *of(GraphId g, OutPort p) const;
  const TensorType *of(GraphId g, NodeId n, uint32_t out) const { return of(g, OutPort{n, out}); }

  /// [graph][node][output]; filled by inferModuleTypes.
  std::vector<std::vector<std::vector<TensorType>>> ports;
};

/// Infers every port's type; each error is appended to `diags` at its node
/// (the op's line and column). Subgraphs are typed from their holder's
/// inputs. Assumes a module that passed the structural checks (valid edges,
/// consistent subgraph indices, acyclic).
ModuleTypes inferModuleTypes(const Module &m, Diagnostics &diags);

/// Types handed from pass to pass by a pipeline (pass_manager.cpp), so that a
/// pass starting from a state of the module that is already typed does not
/// infer again. Shared and immutable: passes only read them.
struct TypeHandoff {
  /// The types of the module as the pass starts, when the pipeline has them
  /// (the verifier's, or those of a pass before that changed nothing).
  std::shared_ptr<const ModuleTypes> given;
  /// Set by the pass's first takeOrInferTypes: the types of its input, given
  /// or inferred. When the pass changes nothing they are still the module's,
  /// and the pipeline hands them to the next pass. A later call (made only
  /// after the pass changed the module) drops them: they are stale.
  std::shared_ptr<const ModuleTypes> ofInput;
  /// Whether takeOrInferTypes was called.
  bool inferred = false;
};

/// The types of `m` for a pass that only reads them. The first call of a pass
/// takes `handoff->given` when there is one (the types of exactly this state
/// of the module) and records what it returns in `handoff->ofInput`; later
/// calls (after the pass changed the module: they drop `ofInput`) and calls
/// without a handoff infer, with the errors dropped (the verifier reports
/// them).
std::shared_ptr<const ModuleTypes> takeOrInferTypes(const Module &m, TypeHandoff *handoff);

/// Per input slot of `n` (in graph `g`), the value of the `Const` that feeds
/// it, or nullptr (what an op's inference reads for its shape operands).
std::vector<const Tensor *> constantInputs(const Graph &g, const Node &n);

/// The port description written on a node (`outK.dtype`, `outK.shape`), if
/// any part of it is given; missing parts default (f32, [4]).
std::optional<TensorType> describedPortType(const Node &n, uint32_t out);

/// True when a numeric node has a shape operand (OpInfo::shapeOperands:
/// Slice's starts, Reshape's shape...) that is connected but not fed by a
/// valued `Const`: its value, and so the output type, is known only when the
/// graph runs. Type inference then takes the node's port descriptions
/// (`outK.dtype`, `outK.shape`, which must all be given), and the interpreter
/// checks at run time that the types its inference gives on the actual
/// values equal them (a difference is a fault naming the node).
bool hasRuntimeShapeOperands(const Graph &g, const Node &n);

} // namespace graphvet
