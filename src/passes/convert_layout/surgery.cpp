// convert-layout, surgery: hands each consumer the value it needs in the perm
// it needs. A demand on a Transpose's output composes with that Transpose (so
// inverse pairs cancel and identities vanish), a demand on a constant makes a
// new, permuted constant at compile time, anything else gets one Transpose
// shared by every consumer asking for the same perm. Afterwards the
// Transposes and constants left without consumers are removed.
#include "passes/convert_layout/internal.h"
#include "passes/port_surgery.h"

#include "ir/op_def.h"

#include <fmt/format.h>
#include <memory>

namespace graphvet::convert_layout {
namespace {

/// The perm of a Transpose node (ONNX default: the axes reversed), or
/// nullopt when the node is not a plain Transpose the surgery may see through.
std::optional<Perm> plainTransposePerm(const Graph &g, const Node &n, size_t rankHint) {
  if (!n.alive || n.type != "Transpose" || n.inputs.size() != 1 || !n.inputs[0] ||
      !n.ctrlIn.empty() || !n.ctrlOut.empty() || structuralRefusal(n))
    return std::nullopt;
  (void)g;
  Perm p;
  if (auto a = attrInts(n, "perm"))
    p = *a;
  else
    for (size_t i = rankHint; i-- > 0;)
      p.push_back(static_cast<int64_t>(i));
  if (p.size() != rankHint)
    return std::nullopt;
  return p;
}

Tensor reshaped(const Tensor &t, Shape shape) {
  Tensor out(TensorType{t.dtype(), std::move(shape)});
  for (int64_t i = 0; i < t.size(); ++i)
    out.copyElement(i, t, i);
  return out;
}

} // namespace

std::string Surgery::freshName(const std::string &base) const {
  return freshNodeName(g_, base);
}

Surgery::Placed Surgery::placed(OutPort original) const {
  auto it = where_.find(original);
  return it == where_.end() ? Placed{original, {}} : it->second;
}

OutPort Surgery::demand(OutPort original, const Perm &r) {
  Placed st = placed(original);
  Perm x = st.perm.empty() ? r : composePerm(inversePerm(st.perm), r);
  if (r.empty() && !st.perm.empty())
    x = inversePerm(st.perm);
  return transposePort(st.port, std::move(x));
}

OutPort Surgery::transposePort(OutPort p, Perm x) {
  // Each step moves to the input of a Transpose: at most one per node.
  for (size_t step = 0; step <= g_.capacity(); ++step) {
    if (isIdentity(x))
      return p;
    const Node &src = g_.node(p.node);
    std::optional<Perm> t = plainTransposePerm(g_, src, x.size());
    if (!t)
      break;
    touched_.insert(p.node);
    p = *src.inputs[0];
    x = composePerm(*t, x);
  }
  if (isIdentity(x))
    return p;
  auto key = std::make_pair(p, x);
  if (auto it = memo_.find(key); it != memo_.end())
    return it->second;
  const Node &src = g_.node(p.node);
  OutPort result;
  if (const Tensor *value = constValue(g_, p);
      value && src.ctrlIn.empty() && src.ctrlOut.empty() && value->shape().size() == x.size()) {
    std::string name = src.name;
    SourceLoc loc = src.loc; // addNode may move the nodes: copy before
    result = newConstant(name + "_T" + permSuffix(x), transposeTensor(*value, x));
    g_.node(result.node).loc = loc;
    touched_.insert(p.node);
    ++stats_.constsTransposed;
    events_.push_back({result.node, fmt::format("transposed constant {} by {} at compile time",
                                                name, permText(x))});
  } else {
    std::string name = freshName(src.name + "_T" + permSuffix(x));
    NodeId id = g_.addNode(name, "Transpose", {p}, 1);
    g_.node(id).attrs["perm"] = intListAttr(x);
    g_.node(id).loc = g_.node(p.node).loc;
    result = OutPort{id, 0};
    touched_.insert(id);
    ++stats_.transposesInserted;
    events_.push_back({id, fmt::format("inserted Transpose {} {} on {}", name, permText(x),
                                       g_.node(p.node).name)});
  }
  memo_[key] = result;
  return result;
}

OutPort Surgery::broadcastConstant(OutPort original, const Perm &q, size_t rank) {
  auto key = std::make_pair(original, q);
  if (auto it = broadcastMemo_.find(key); it != broadcastMemo_.end())
    return it->second;
  const Tensor &value = *constValue(g_, original);
  const size_t own = value.shape().size();
  Shape padded(rank - own, 1);
  padded.insert(padded.end(), value.shape().begin(), value.shape().end());
  Tensor permuted = transposeTensor(reshaped(value, padded), q);
  Shape trimmed = permuted.shape();
  while (trimmed.size() > own && trimmed.front() == 1)
    trimmed.erase(trimmed.begin());
  std::string name = g_.node(original.node).name;
  std::string message = fmt::format("permuted broadcast constant {} {} to {} at compile time", name,
                                    value.type().str(), TensorType{value.dtype(), trimmed}.str());
  SourceLoc loc = g_.node(original.node).loc; // addNode may move the nodes: copy before
  OutPort result = newConstant(name + "_b" + permSuffix(q), reshaped(permuted, trimmed));
  g_.node(result.node).loc = loc;
  touched_.insert(original.node);
  ++stats_.constsTransposed;
  events_.push_back({result.node, std::move(message)});
  broadcastMemo_[key] = result;
  return result;
}

OutPort Surgery::broadcastValue(OutPort original, const Perm &q, size_t rank, const Shape &shape) {
  auto key = std::make_pair(original, q);
  if (auto it = broadcastMemo_.find(key); it != broadcastMemo_.end())
    return it->second;
  OutPort base = demand(original, {});
  Shape padded(rank - shape.size(), 1);
  padded.insert(padded.end(), shape.begin(), shape.end());
  Tensor target(TensorType{DType::I64, {static_cast<int64_t>(rank)}});
  for (size_t i = 0; i < rank; ++i)
    target.setInt(static_cast<int64_t>(i), padded[i]);
  const std::string name = g_.node(base.node).name;
  const SourceLoc loc = g_.node(base.node).loc;
  OutPort shapeConst = newConstant(fmt::format("{}_shape{}", name, rank), std::move(target));
  g_.node(shapeConst.node).loc = loc;
  NodeId id =
      g_.addNode(freshName(fmt::format("{}_r{}", name, rank)), "Reshape", {base, shapeConst}, 1);
  g_.node(id).loc = loc;
  ++stats_.reshapesInserted;
  events_.push_back({id, fmt::format("reshaped {} {} to {} to broadcast in the permuted layout",
                                     name, permText(shape), permText(padded))});
  OutPort result = transposePort(OutPort{id, 0}, q);
  broadcastMemo_[key] = result;
  return result;
}

OutPort Surgery::newConstant(const std::string &base, Tensor value) {
  NodeId id = g_.addNode(freshName(base), "Const", {}, 1);
  g_.node(id).attrs["value"] =
      AttrValue::ofTensor(std::make_shared<const Tensor>(std::move(value)));
  return OutPort{id, 0};
}

std::vector<std::string> Surgery::removeUnused() {
  std::vector<std::string> removed;
  // Each round removes at least one node or stops: bounded by the node count.
  for (size_t round = 0; round <= g_.capacity(); ++round) {
    bool changed = false;
    for (NodeId id : std::set<NodeId>(touched_)) {
      const Node &n = g_.node(id);
      if (!n.alive || (n.type != "Transpose" && n.type != "Const") || !n.ctrlIn.empty() ||
          !n.ctrlOut.empty())
        continue;
      bool used = false;
      for (uint32_t k = 0; k < n.numOutputs; ++k)
        used = used || !n.consumers[k].empty();
      if (used)
        continue;
      if (n.type == "Transpose") {
        ++stats_.transposesCancelled;
        if (!n.inputs.empty() && n.inputs[0])
          touched_.insert(n.inputs[0]->node);
        removed.push_back(n.name);
      }
      touched_.erase(id);
      g_.removeNode(id);
      changed = true;
    }
    if (!changed)
      break;
  }
  return removed;
}

} // namespace graphvet::convert_layout
