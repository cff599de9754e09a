// Shared by the convert-layout files: permutations (how a stored value relates
// to the value the original graph computed), the classification of ops, the
// propagation plan of one layout-agnostic op, and the tensor transposition
// used for compile-time constants.
#pragma once

#include "ir/graph.h"
#include "ir/tensor.h"
#include "ir/types.h"
#include "passes/convert_layout.h"

#include <map>
#include <set>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace graphvet::convert_layout {

/// A permutation in Transpose's convention: transpose(x, p) has axis i =
/// axis p[i] of x. A value "stored in perm Q" is transpose(original, Q).
/// The empty perm means the identity of any rank.
using Perm = std::vector<int64_t>;

bool isIdentity(const Perm &p);
Perm identityPerm(size_t rank);
Perm inversePerm(const Perm &p);
/// transpose(transpose(x, first), second) == transpose(x, compose(first, second)).
Perm composePerm(const Perm &first, const Perm &second);
/// The perm from `nhwc`-or-not storage of a rank-r layout-sensitive operand to
/// the other layout: NCHW→NHWC moves axis 1 last, NHWC→NCHW moves it back.
Perm layoutPerm(size_t rank, bool toNhwc);
std::string permText(const Perm &p);
/// The perm's digits for node names ("0231").
std::string permSuffix(const Perm &p);

/// transpose(t, perm) computed element by element (masks kept).
Tensor transposeTensor(const Tensor &t, const Perm &perm);

/// The value of the `Const` producing `p`, or nullptr.
const Tensor *constValue(const Graph &g, OutPort p);

/// Why a node is not converted or propagated through: tag and sentence.
struct Refusal {
  std::string tag;
  std::string why;
};

/// A refusal shared by conversion and propagation: control edges are fine,
/// but memory attributes (ports described beyond dtype and shape) and
/// subgraphs are not touched.
std::optional<Refusal> structuralRefusal(const Node &n);
/// Conversion of a layout-sensitive op of rank `rank` (nullopt: allowed).
std::optional<Refusal> conversionRefusal(const Graph &g, const Node &n, const TensorType *xType);

/// How one input of a propagated op is fed.
struct InputPlan {
  enum Kind {
    Keep,      ///< the original value, as stored (identity demand)
    Demand,    ///< the value stored in `perm`
    Broadcast, ///< an operand of lower rank, padded to `rank` then permuted by `perm`
    Replace,   ///< a new constant `value` (remapped axes, reordered pads)
  } kind = Keep;
  Perm perm;
  size_t rank = 0;
  Tensor value;
  std::string role; ///< Replace: names the new constant ("axes", "pads")
};

/// What a layout-agnostic op becomes when its data arrives in perm `q`.
struct Propagation {
  Perm q;                                               ///< the data's perm
  std::vector<InputPlan> inputs;                        ///< one per input slot
  std::vector<InputPlan> appended;                      ///< new trailing inputs (Slice's axes)
  std::vector<Perm> outPerms;                           ///< per output: its stored perm
  std::vector<std::pair<std::string, AttrValue>> attrs; ///< attributes set
  std::string what;                                     ///< for the remark
};

/// The perm the op's data input(s) are stored in, per the current placement
/// `permOf` (one per input slot, empty for identity/unconnected), and the
/// plan to compute the op in it; nullopt with `refusal` empty when nothing
/// is permuted (the op is untouched), with a refusal when it cannot follow.
std::optional<Propagation> planPropagation(const Graph &g, GraphId gid, const Node &n,
                                           const ModuleTypes &types,
                                           const std::vector<Perm> &permOf,
                                           std::optional<Refusal> &refusal);

AttrValue intListAttr(const std::vector<int64_t> &v);

/// Where each value of the original graph now lives and in which perm, and
/// the node surgery that hands a consumer the value in the perm it needs:
/// composing with a Transpose that produces it (inverse pairs cancel), a
/// new constant for a constant (never a run-time Transpose of a constant),
/// or one shared new Transpose.
class Surgery {
public:
  struct Placed {
    OutPort port; ///< where the value is now
    Perm perm;    ///< stored = transpose(original, perm); empty: identity
  };
  /// A transposition the surgery made, for the driver's remarks.
  struct Event {
    NodeId node;
    std::string message;
  };

  Surgery(Graph &g, ConvertLayoutStats &stats) : g_(g), stats_(stats) {}

  Placed placed(OutPort original) const;
  void place(OutPort original, Placed p) { where_[original] = std::move(p); }
  /// The original value `original` stored in perm `r` (empty: as computed).
  OutPort demand(OutPort original, const Perm &r);
  /// A constant of rank < `rank` broadcasting against data stored in perm
  /// `q`: padded with leading 1s to `rank`, permuted, leading 1s beyond its
  /// own rank dropped again ([C, 1, 1] under [0, 2, 3, 1] becomes [1, 1, C]).
  OutPort broadcastConstant(OutPort original, const Perm &q, size_t rank);
  /// A non-constant operand of shape `shape` (rank < `rank`) broadcasting
  /// against data stored in perm `q`: Reshape to `rank` (leading 1s), then
  /// the Transpose (composed like any demand).
  OutPort broadcastValue(OutPort original, const Perm &q, size_t rank, const Shape &shape);
  /// A new Const named after `base`.
  OutPort newConstant(const std::string &base, Tensor value);
  /// Removes the Transposes and constants the rewrite left without
  /// consumers (each touched by it); returns their names.
  std::vector<std::string> removeUnused();
  /// Events since the last call.
  std::vector<Event> takeEvents() { return std::exchange(events_, {}); }
  std::string freshName(const std::string &base) const;
  /// Marks a node the rewrite moved consumers off (removed if left unused).
  void touch(NodeId n) { touched_.insert(n); }

private:
  OutPort transposePort(OutPort p, Perm x);

  Graph &g_;
  ConvertLayoutStats &stats_;
  std::map<OutPort, Placed> where_;
  std::map<std::pair<OutPort, Perm>, OutPort> memo_;
  std::map<std::pair<OutPort, Perm>, OutPort> broadcastMemo_;
  std::set<NodeId> touched_; ///< Transposes and constants a consumer was moved off
  std::vector<Event> events_;
};

} // namespace graphvet::convert_layout
