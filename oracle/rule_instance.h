// One instance of a rewrite rule (src/ir/rewrite_rule.h) made concrete for
// the prover: the pattern and the replacement instantiated under the
// instance's binding as one small expression DAG (operands shared by both
// sides), with every node's output types inferred, and the concrete
// evaluation of that DAG through the interpreter's kernels, which replays a
// solver's counterexample. No solver types here: the Z3 encoding of the same
// DAG is in smt_rules.cpp.
#pragma once

#include "ir/graph.h"
#include "ir/rewrite_rule.h"
#include "ir/tensor.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace graphvet::oracle {

/// An output port of an InstNode.
struct InstRef {
  int node = -1;
  uint32_t port = 0;
};

struct InstNode {
  enum class Kind : uint8_t {
    Operand,  ///< a pattern variable: a free input tensor
    Constant, ///< a constant term: a concrete tensor
    Op,       ///< an op applied to other nodes
  };
  Kind kind = Kind::Operand;
  std::string name;                    ///< Operand/Constant: binding name
  std::shared_ptr<const Tensor> value; ///< Constant
  Node node;                           ///< Op: type, attributes, output count
  std::vector<InstRef> args;           ///< Op: inputs in order
  std::vector<TensorType> outputs;     ///< types of the outputs (one for leaves)
};

/// Both sides of an instance over one node list (children before parents).
struct InstGraph {
  std::vector<InstNode> nodes;
  InstRef original, replacement;
  /// Indices of the Operand nodes, in order of first appearance.
  std::vector<int> operands;

  const TensorType &typeOf(InstRef r) const { return nodes[r.node].outputs[r.port]; }
};

/// Instantiates both sides. nullopt with `error` set when the pattern does
/// not type-check under the binding (an ill-formed instance); when only the
/// replacement does not, `replacementError` is set and `replacement` is
/// invalid (node -1): the rewrite is refuted by its types.
std::optional<InstGraph> instantiate(const rewrite::Rule &rule, const rewrite::Instance &inst,
                                     std::string &error, std::string &replacementError);

/// Evaluates every node with the interpreter's kernels on concrete operand
/// values (by operand name). Returns each node's outputs; nullopt with
/// `error` set when a kernel is missing or its inference fails.
std::optional<std::vector<std::vector<Tensor>>>
evaluateInstance(const InstGraph &g, const std::map<std::string, Tensor> &operands,
                 std::string &error);

/// "1.0001 (0x3f800347)", "-3 (0xfd)", "indeterminate": element i of `t`.
std::string elementText(const Tensor &t, int64_t i);

} // namespace graphvet::oracle
