// combine-parallel-dense, surgery: concatenates the weights (and Gemm's C,
// and each follow-on's other operand) along the output axis — at compile
// time when every piece is a literal constant, with a run-time Concat
// otherwise — builds the combined op and the combined follow-ons, and hands
// each branch's consumers its part of a Split.
#include "passes/combine_parallel_dense/internal.h"
#include "passes/port_surgery.h"

#include "ir/op_def.h"

#include <fmt/format.h>
#include <memory>
#include <set>

namespace graphvet::combine_parallel_dense {
namespace {

bool isDescriptionKey(const std::string &key) {
  return (key.rfind("out", 0) == 0 || key.rfind("in", 0) == 0) &&
         key.find('.') != std::string::npos;
}

/// The literal value of a `Const` feeding `p` (no control edge), or nullptr.
const Tensor *literal(const Graph &g, OutPort p) {
  const Node &src = g.node(p.node);
  if (src.type != "Const" || !src.ctrlIn.empty() || p.index != 0)
    return nullptr;
  const AttrValue *v = src.attr("value");
  return v && v->isTensor() ? &v->asTensor() : nullptr;
}

class Builder {
public:
  Builder(Graph &g, SourceLoc loc) : g_(g), loc_(loc) {}

  NodeId add(const std::string &name, const std::string &type,
             std::vector<std::optional<OutPort>> inputs, uint32_t outputs = 1) {
    NodeId id = g_.addNode(freshNodeName(g_, name), type, std::move(inputs), outputs);
    g_.node(id).loc = loc_;
    ++created_;
    return id;
  }

  /// `parts` joined along `axis`: a new Const when every part is a literal
  /// (computed by the Concat kernel itself), a Concat node otherwise.
  OutPort concat(const std::string &name, const std::vector<OutPort> &parts, int64_t axis) {
    std::vector<const Tensor *> values;
    for (const OutPort &p : parts)
      if (const Tensor *t = literal(g_, p))
        values.push_back(t);
    if (values.size() == parts.size()) {
      Node op;
      op.type = "Concat";
      op.numOutputs = 1;
      op.attrs["axis"] = AttrValue::ofInt(axis);
      std::string error;
      std::optional<std::vector<Tensor>> out = evaluateNode(op, values, error);
      if (out && out->size() == 1) {
        NodeId c = add(name, "Const", {});
        g_.node(c).attrs["value"] =
            AttrValue::ofTensor(std::make_shared<const Tensor>(std::move((*out)[0])));
        return OutPort{c, 0};
      }
    }
    std::vector<std::optional<OutPort>> inputs(parts.begin(), parts.end());
    NodeId c = add(name, "Concat", std::move(inputs));
    g_.node(c).attrs["axis"] = AttrValue::ofInt(axis);
    return OutPort{c, 0};
  }

  int64_t created() const { return created_; }

private:
  Graph &g_;
  SourceLoc loc_;
  int64_t created_ = 0;
};

AttrMap semanticAttrs(const Node &n) {
  AttrMap out;
  for (const auto &[key, value] : n.attrs)
    if (!isDescriptionKey(key))
      out.emplace(key, value);
  return out;
}

} // namespace

int64_t rewriteGroup(Graph &g, const GroupPlan &plan, int64_t &constsRemoved) {
  const size_t count = plan.branches.size();
  const Node dense0 = g.node(plan.branches[0].dense); // a copy: nodes move as others are added
  Builder b(g, dense0.loc);
  std::vector<OutPort> weights, biases;
  for (const Branch &br : plan.branches) {
    weights.push_back(br.weight);
    if (br.bias)
      biases.push_back(*br.bias);
  }
  std::vector<std::optional<OutPort>> inputs = {
      plan.input, b.concat(dense0.name + "_weights", weights, plan.weightAxis)};
  if (biases.size() == count)
    inputs.push_back(b.concat(dense0.name + "_bias", biases, plan.branches[0].sig.biasRank - 1));
  NodeId combined = b.add(dense0.name + "_combined", dense0.type, std::move(inputs));
  g.node(combined).attrs = semanticAttrs(dense0);
  OutPort cur{combined, 0};
  for (const FollowOnLevel &lv : plan.followOns) {
    const Node f0 = g.node(lv.nodes[0]);
    std::vector<std::optional<OutPort>> in = {cur};
    if (!lv.operands.empty()) {
      OutPort other = b.concat(f0.name + "_operand", lv.operands, lv.operandRank - 1);
      in = lv.slot == 0 ? std::vector<std::optional<OutPort>>{cur, other}
                        : std::vector<std::optional<OutPort>>{other, cur};
    }
    NodeId f = b.add(f0.name + "_combined", f0.type, std::move(in));
    g.node(f).attrs = semanticAttrs(f0);
    cur = OutPort{f, 0};
  }
  NodeId split = b.add(dense0.name + "_split", "Split", {cur}, static_cast<uint32_t>(count));
  AttrValue::List sizes;
  for (const Branch &br : plan.branches)
    sizes.push_back(AttrValue::ofInt(br.outSize));
  g.node(split).attrs["axis"] = AttrValue::ofInt(plan.outRank - 1);
  g.node(split).attrs["split"] = AttrValue::ofList(std::move(sizes));
  for (size_t i = 0; i < count; ++i) {
    NodeId last = plan.followOns.empty() ? plan.branches[i].dense : plan.followOns.back().nodes[i];
    const Node &old = g.node(last);
    for (const char *key : {"dtype", "shape"})
      if (const AttrValue *v = old.portAttr(true, 0, key))
        g.node(split).attrs[Node::portKey(true, static_cast<uint32_t>(i), key)] = *v;
    std::vector<InPort> uses = g.node(last).consumers[0];
    for (const InPort &use : uses)
      g.setInput(use, OutPort{split, static_cast<uint32_t>(i)});
  }
  // Remove the old chains from their ends, then the constants left unread.
  std::set<NodeId> sources;
  for (size_t l = plan.followOns.size(); l-- > 0;) {
    for (NodeId f : plan.followOns[l].nodes)
      g.removeNode(f);
    for (const OutPort &o : plan.followOns[l].operands)
      sources.insert(o.node);
  }
  for (const Branch &br : plan.branches) {
    g.removeNode(br.dense);
    sources.insert(br.weight.node);
    if (br.bias)
      sources.insert(br.bias->node);
  }
  for (NodeId s : sources) {
    const Node &c = g.node(s);
    if (!c.alive || c.type != "Const" || !c.ctrlIn.empty() || !c.ctrlOut.empty())
      continue;
    bool used = false;
    for (uint32_t k = 0; k < c.numOutputs; ++k)
      used = used || !c.consumers[k].empty();
    if (!used) {
      g.removeNode(s);
      ++constsRemoved;
    }
  }
  return b.created();
}

} // namespace graphvet::combine_parallel_dense
