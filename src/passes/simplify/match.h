// The simplify pass's internals shared by its files: the result of matching
// a rule's pattern on a graph (matcher.cpp), the replacement builder
// (builder.cpp) and the graph-level safety checks (safety.cpp).
#pragma once

#include "ir/graph.h"
#include "ir/rewrite_rule.h"
#include "ir/types.h"
#include "passes/buffer_analysis.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace graphvet::simplify {

/// Port types for matching: the module's inferred types, plus the types of
/// ports made by rewrites since (a replacement has the type of the value it
/// replaces).
class TypeTable {
public:
  TypeTable(const ModuleTypes &inferred) : inferred_(inferred) {}
  const TensorType *of(GraphId g, OutPort p) const;
  void set(GraphId g, OutPort p, TensorType t) { added_[{g, p}] = std::move(t); }

private:
  const ModuleTypes &inferred_;
  std::map<std::pair<GraphId, OutPort>, TensorType> added_;
};

/// A pattern bound on a graph.
struct Match {
  rewrite::Binding binding;
  /// Var and Constant names -> the ports they bound.
  std::map<std::string, OutPort> ports;
  /// The pattern's Op nodes, root first (pre-order).
  std::vector<NodeId> opNodes;
  OutPort root;
};

/// Matches `pattern` with its root at `port` of graph `g`. Op terms match
/// live numeric nodes of that type (and Identity) with every input
/// connected; Constant terms match valued `Const` nodes (a splat bit for bit,
/// or any value with Term::anyValue); Var terms bind any port, a repeated
/// variable the same port.
bool matchPattern(const Graph &graph, GraphId g, const TypeTable &types,
                  const rewrite::Term &pattern, OutPort port, Match &out);

/// Builds `replacement` in graph `graph` (new nodes named from `baseName`,
/// deterministically), returning the port standing for the replaced value;
/// the ids of created nodes are appended to `created`. nullopt when the
/// binding lacks a value the replacement needs.
std::optional<OutPort> buildReplacement(Graph &graph, const rewrite::Term &replacement,
                                        const Match &match, const std::string &baseName,
                                        std::vector<NodeId> &created);

/// The variable whose buffer a term's value shares: the Var itself, or the
/// data input of a Reshape (a view) chain down to a Var; empty otherwise.
std::string aliasedVar(const rewrite::Term &t);
/// When a pattern's value is a view (a Reshape chain) of an inner Op term:
/// that term's index in Match::opNodes (the chain follows first arguments,
/// which pre-order lists next). nullopt when the root is no view or the
/// chain ends at a Var or Constant.
std::optional<size_t> viewedInnerOp(const rewrite::Term &pattern);

/// Why a rewrite may not happen (tag and words), from graph-level facts.
struct Refusal {
  std::string tag;
  std::string why;
};

/// Graph-level checks of the simplify pass over a module (docs/passes/simplify.md).
class Safety {
public:
  Safety(const Module &m, size_t budget) : m_(m), index_(m), budget_(budget) {}
  /// A pattern Op node that may not be rewritten: effects, views, random
  /// draws, control edges, reserved attributes.
  std::optional<Refusal> impure(const Node &n) const;
  /// Whether the buffer behind `p` (graph `g`) may be written in place, or
  /// comes from a source the pass does not reason about.
  std::optional<Refusal> writtenOperand(GraphId g, OutPort p);
  /// Whether the result `r` may become an alias of `x`: r's buffer is never
  /// written, and a graph output it reaches would not alias a user input, a
  /// weight, a variable or another output; no contiguous-input op reads it.
  std::optional<Refusal> forwarding(GraphId g, OutPort r, OutPort x);
  /// The port whose buffer `p` (graph `g`) shares through views and ref
  /// outputs: `p` itself for a computed result; nullopt when the trace fails.
  std::optional<TraceStep> bufferSource(GraphId g, OutPort p);

private:
  const Module &m_;
  ModuleIndex index_;
  size_t budget_;
  SourceWrites sourceWrites_{m_, index_, budget_};
};

} // namespace graphvet::simplify
