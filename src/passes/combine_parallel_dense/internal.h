// Shared by the combine-parallel-dense files: what the analysis learns about
// one dense branch (its signature, or why it is refused), the plan of a
// combinable group with its follow-on levels, and the surgery that carries a
// plan out.
#pragma once

#include "ir/graph.h"
#include "ir/types.h"
#include "passes/buffer_analysis.h"

#include <compare>
#include <optional>
#include <string>
#include <vector>

namespace graphvet::combine_parallel_dense {

/// Why something is left alone: the stable remark tag and the sentence.
struct Refusal {
  std::string tag;
  std::string why;
};

/// What must be equal for two branches to be combined. The fields are
/// compared in order; the first that differs names the refusal tag.
struct Signature {
  std::string op;                  ///< MatMul or Gemm
  DType dtype = DType::F32;        ///< of A, the weights and the result
  int64_t reduction = 0;           ///< K
  std::vector<int64_t> batch;      ///< MatMul: the weight's dimensions before K
  std::vector<uint32_t> gemmAttrs; ///< Gemm: transA, transB, bits of f32 alpha, beta
  int64_t biasRank = -1;           ///< Gemm: rank of C; -1 without C
  friend auto operator<=>(const Signature &, const Signature &) = default;
};

/// One MatMul/Gemm reading the shared input.
struct Branch {
  NodeId dense = kNoNode;
  OutPort weight;
  std::optional<OutPort> bias; ///< Gemm's C
  int64_t outSize = 0;         ///< N, this branch's share of the output axis
  Signature sig;
};

/// The remark tag of the first field where `a` and `b` differ, with a
/// sentence; nullopt when they are equal.
std::optional<Refusal> signatureDifference(const Signature &a, const Signature &b);

/// Whether moving a read of a port to another place could change what it
/// sees: the buffer it traces to is written in place somewhere (or is a
/// variable, or an unknown source). One per round: the pass adds and removes
/// only ordinary nodes, which keeps the module index valid.
class ReadGuard {
public:
  explicit ReadGuard(const Module &m) : m_(m), index_(m), writes_(m, index_, kBudget) {}
  /// The refusal of a read of `p` in graph `g`, or nullopt when it is safe.
  std::optional<Refusal> refusal(GraphId g, OutPort p);

private:
  static constexpr size_t kBudget = size_t{1} << 16;
  bool moduleWrites();
  const Module &m_;
  ModuleIndex index_;
  SourceWrites writes_;
  int moduleWrites_ = -1; ///< -1: not computed yet
};

/// Reads one dense node on the shared input: its signature, or why it can
/// never be combined (control edges, memory attributes, unknown types, a
/// 1-D weight, a Gemm bias not along the output axis, an input written in
/// place).
std::optional<Refusal> analyzeBranch(const Graph &g, GraphId gid, const ModuleTypes &types,
                                     ReadGuard &guard, NodeId id, Branch &branch);

/// One combined element-wise level: node `nodes[i]` follows branch i.
struct FollowOnLevel {
  std::vector<NodeId> nodes;
  uint32_t slot = 0;             ///< binary ops: the slot reading the branch
  std::vector<OutPort> operands; ///< binary ops: the other operand per branch
  int64_t operandRank = 0;
};

/// A group to combine: its branches in node order and their follow-on levels.
struct GroupPlan {
  OutPort input; ///< A
  std::vector<Branch> branches;
  std::vector<FollowOnLevel> followOns;
  int64_t outRank = 0;    ///< rank of each branch's result; the split axis is the last
  int64_t weightAxis = 0; ///< concatenation axis of the weights
  /// Why the follow-on chain stopped where a candidate was refused (the
  /// remark's node), or nullopt when no element-wise op followed.
  std::optional<Refusal> followOnStop;
  NodeId followOnStopNode = kNoNode;
};

/// Fills `plan.followOns` (and the stop) for the branches of `plan`, each
/// level only when every branch's current result has exactly one consumer,
/// an element-wise op of the same type and attributes as the others.
void planFollowOns(const Graph &g, GraphId gid, const ModuleTypes &types, ReadGuard &guard,
                   GroupPlan &plan);

/// True when port `p` is produced by one of `nodes` or depends on one
/// (through data or control edges).
bool dependsOnAny(const Graph &g, OutPort p, const std::vector<NodeId> &nodes);

/// Carries a plan out; returns the number of nodes created. The removed
/// nodes' weight and operand constants left unused are removed too and
/// counted in `constsRemoved`.
int64_t rewriteGroup(Graph &g, const GroupPlan &plan, int64_t &constsRemoved);

} // namespace graphvet::combine_parallel_dense
