// The parts of the fold-constant pass shared by its files: what one
// attempt on a node decides (nothing, a refusal, or values to materialize),
// the environment the parts work in, and the entry points of each part.
#pragma once

#include "ir/tensor.h"
#include "ir/types.h"
#include "passes/buffer_analysis.h"
#include "passes/fold_constant.h"
#include "passes/port_surgery.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace graphvet::fold {

inline constexpr std::string_view kPass = kFoldConstantName;

/// A candidate the pass will not fold: a stable tag and the reason.
struct Refusal {
  std::string tag;
  std::string why;
};

/// Values computed for a node: one per output (outputs without consumers
/// are left empty-typed and never materialized).
struct Folded {
  std::vector<Tensor> values;
  std::string how; ///< for the remark: "evaluated Add", "shape of x"
};

/// monostate: the node is not a candidate (some input is not a constant);
/// no remark is made.
using Outcome = std::variant<std::monostate, Refusal, Folded>;

struct Env {
  Module &m;
  const FoldConstantOptions &options;
  std::vector<Remark> *remarks;
  FoldConstantStats &stats;
  /// Types of the module, inferred at the first Shape/Size query. New
  /// Consts carry their type in their value; nodes an inlined branch moves
  /// get their branch types under their new ids (if_inline.cpp).
  ModuleTypes types;
  bool typesStale = true;

  /// Subgraph-boundary tables for the buffer explorations; folds keep them
  /// valid (they add and remove only ordinary nodes and Consts), and so does
  /// inlining unless it moves a node holding subgraphs.
  std::unique_ptr<ModuleIndex> index;
  const ModuleIndex &moduleIndex();
  /// writtenConstant's answer per constant port. The pass never adds a
  /// writer (folds add Consts and copies; an inlined branch has no effect),
  /// so an answer stays true for the rest of the run; caching it keeps a
  /// constant shared by many nodes from being explored once per reader.
  std::map<std::pair<GraphId, OutPort>, std::optional<Refusal>> writtenCache;

  void remark(GraphId g, NodeId n, std::string decision, std::string tag, std::string message);
  /// The static type of port `p` of graph `g` (nullptr when unknown).
  const TensorType *typeOf(GraphId g, OutPort p);
};

/// `no_need_constant_folding` (any value) and `_cannot_be_deleted = true`
/// keep a node as it is, as for dce and cse.
bool isReserved(const Node &n);

/// A valued Const that an input reads: its graph, port and literal.
struct ConstantSource {
  GraphId graph;
  OutPort port;
  const Tensor *value;
};
/// The valued Const behind `src` (a port of graph `g`): a Const of `g`, or
/// one the holder of `g` passes in through a subgraph Data — for If, Case
/// and PartitionedCall, whose subgraph Data is the holder's input for the
/// whole step; never a While's loop variable. nullopt otherwise.
std::optional<ConstantSource> constantSource(const Module &m, GraphId g,
                                             std::optional<OutPort> src);
/// Refuses (`written-constant`) when something writes the Const's buffer
/// in place, anywhere its memory reaches (views, subgraph boundaries).
std::optional<Refusal> writtenConstant(Env &env, const ConstantSource &c);

/// The value of the `Const` feeding `src` in its own graph, when it has a tensor literal.
const Tensor *constantValue(const Graph &g, const std::optional<OutPort> &src);

/// evaluate.cpp: a numeric node whose connected inputs are all valued
/// Consts, evaluated with its kernel under the refusal rules.
Outcome tryEvaluate(Env &env, GraphId g, NodeId n);

/// shape.cpp: `Shape`/`Size` of a statically typed input (any producer).
Outcome tryShape(Env &env, GraphId g, NodeId n);

/// surgery.cpp: why the results of `n` may not become weights: a consumer
/// writes or scribbles on the result's buffer (directly, through a view, a
/// ref output or a subgraph boundary), the buffer reaches a graph output
/// other than through a NetOutput of `n`'s own graph (those get copies), or
/// an op demanding contiguous inputs. nullopt: they may.
std::optional<Refusal> resultRefusal(Env &env, GraphId g, NodeId n);

/// surgery.cpp: replaces node `n` by one Const per consumed output (named
/// after the node, deterministically), moves its control edges to them, and
/// removes the Const inputs left without any use. Returns the new Consts
/// (each followed by its Identity copy when a NetOutput reads it).
std::vector<NodeId> replaceWithConstants(Env &env, GraphId g, NodeId n, Folded folded);
/// Removes `c` when it is a valued Const with no consumer and no control
/// edge (counted in constsRemoved).
void removeIfUnusedConstant(Env &env, GraphId g, NodeId c);
/// Bytes of the valued Consts feeding `n` whose every use is `n` (what a
/// fold of `n` frees).
int64_t bytesFreedByFolding(const Graph &g, const Node &n);

/// if_inline.cpp: when `n` is an If whose condition is a constant, moves
/// the taken branch's nodes into `g` (appended to `moved`, in the branch's
/// topological order), rewires the If's outputs and removes the If and its
/// subgraphs. Returns the decision (monostate: not a candidate).
std::variant<std::monostate, Refusal, std::string> tryInlineIf(Env &env, GraphId g, NodeId n,
                                                               std::vector<NodeId> &moved);

} // namespace graphvet::fold
