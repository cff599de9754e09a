// convert-layout, driver: decides which layout-sensitive ops convert, then
// walks each graph once in topological order placing every value (where it
// lives now and in which perm relative to the original): a converted op
// demands its data (and weights) in the target layout and yields its output
// in it; a layout-agnostic op follows the perm of its data with its axes
// remapped; a Transpose is absorbed into the perm; every other consumer,
// graph outputs included, demands the original layout, which is where the
// remaining Transposes appear. Unused Transposes and constants go last.
#include "passes/convert_layout.h"

#include "ir/buffer_root.h"
#include "ir/layout_ops.h"
#include "ir/types.h"
#include "passes/convert_layout/internal.h"

#include <fmt/format.h>

#include <map>
#include <set>

namespace graphvet {
namespace {

using convert_layout::Perm;
using convert_layout::Refusal;
using convert_layout::Surgery;

/// Rewrites the `outK.shape` description of a node whose output k is now
/// stored in perm `p`.
void permuteDescribedShape(Node &n, uint32_t k, const Perm &p) {
  if (p.empty())
    return;
  auto it = n.attrs.find(Node::portKey(true, k, "shape"));
  if (it == n.attrs.end() || !it->second.isList() || it->second.asList().size() != p.size())
    return;
  AttrValue::List old = it->second.asList(), now;
  for (int64_t a : p)
    now.push_back(old[static_cast<size_t>(a)]);
  it->second = AttrValue::ofList(std::move(now));
}

class ConvertLayoutPass {
public:
  ConvertLayoutPass(Module &m, const ConvertLayoutOptions &options, std::vector<Remark> *remarks)
      : m_(m), options_(options), remarks_(remarks) {}

  ConvertLayoutStats run() {
    if (!options_.target) {
      if (remarks_)
        remarks_->push_back(Remark{std::string(kConvertLayoutName),
                                   "",
                                   "skipped",
                                   "no-target",
                                   "no target layout (option convert_layout.target=NHWC|NCHW): "
                                   "nothing converted",
                                   m_.root().name,
                                   {}});
      return stats_;
    }
    Diagnostics ignored; // an op whose types are unknown is refused (unknown-type)
    ModuleTypes types = inferModuleTypes(m_, ignored);
    for (GraphId g : m_.canonicalGraphOrder())
      runGraph(g, types);
    return stats_;
  }

private:
  const char *targetName() const {
    return *options_.target == TargetLayout::NHWC ? "NHWC" : "NCHW";
  }

  void runGraph(GraphId gid, const ModuleTypes &types) {
    Graph &g = m_.graph(gid);
    std::optional<std::vector<NodeId>> order = g.topoOrder();
    if (!order)
      return;
    const bool toNhwc = *options_.target == TargetLayout::NHWC;
    std::set<NodeId> convert;
    for (NodeId id : *order) {
      const Node &n = g.node(id);
      if (!isLayoutSensitiveOp(n.type))
        continue;
      const std::string *layout = n.stringAttr("layout");
      if ((layout ? *layout : std::string("NCHW")) == targetName())
        continue;
      const TensorType *x =
          n.inputs.empty() || !n.inputs[0] ? nullptr : types.of(gid, *n.inputs[0]);
      if (std::optional<Refusal> r = convert_layout::conversionRefusal(g, n, x))
        refuse(g, n, *r, "kept " + n.name + " in its layout");
      else
        convert.insert(id);
    }
    // Nothing to convert: the graph is left as it is (so a second run of
    // the pass changes nothing).
    if (convert.empty())
      return;
    // The buffers the graph outputs had before any surgery (see
    // demandOriginal).
    outputRoots_.clear();
    for (NodeId id : *order)
      if (const Node &n = g.node(id); n.type == "NetOutput")
        for (uint32_t k = 0; k < n.inputs.size(); ++k)
          if (n.inputs[k])
            outputRoots_[{id, k}] = bufferRoot(g, *n.inputs[k]);
    Surgery s(g, stats_);
    for (NodeId id : *order) {
      if (convert.count(id)) {
        convertOp(g, gid, id, s, types, toNhwc);
      } else if (!absorbTranspose(g, id, s)) {
        propagate(g, gid, id, s, types);
      }
      for (const Surgery::Event &e : s.takeEvents())
        note(g, g.node(e.node), g.node(e.node).type == "Const" ? "const-transposed" : "inserted",
             e.message);
    }
    for (const std::string &name : s.removeUnused())
      if (remarks_)
        remarks_->push_back(Remark{std::string(kConvertLayoutName),
                                   name,
                                   "removed",
                                   "cancelled",
                                   "removed Transpose " + name + ": its consumers compose it away",
                                   g.name,
                                   {}});
    for (NodeId id : g.liveNodes())
      stats_.transposesLeft += g.node(id).type == "Transpose" ? 1 : 0;
  }

  void convertOp(Graph &g, GraphId gid, NodeId id, Surgery &s, const ModuleTypes &types,
                 bool toNhwc) {
    const size_t rank = types.of(gid, *g.node(id).inputs[0])->shape.size();
    Perm m = convert_layout::layoutPerm(rank, toNhwc);
    const std::string type = g.node(id).type;
    bool weights = type == "Conv" || type == "ConvTranspose";
    for (uint32_t k = 0; k < g.node(id).inputs.size(); ++k) {
      std::optional<OutPort> src = g.node(id).inputs[k];
      if (!src)
        continue;
      Perm want = k == 0 || (k == 1 && weights) ? m : Perm{};
      OutPort now = s.demand(*src, want);
      if (now != *src)
        g.setInput(InPort{id, k}, now);
    }
    Node &n = g.node(id);
    n.attrs["layout"] = AttrValue::ofString(targetName());
    // Every output of the data's rank is stored like output 0 (MaxPool's
    // unused Indices); the others (BatchNormalization's statistics) are
    // [C] vectors, which permuteDescribedShape leaves alone.
    for (uint32_t k = 0; k < n.numOutputs; ++k)
      permuteDescribedShape(n, k, m);
    s.place(OutPort{id, 0}, {OutPort{id, 0}, m});
    ++stats_.opsConverted;
    note(g, n, "converted",
         fmt::format("converted {} ({}) to {}: data{} permuted by {}", n.name, n.type, targetName(),
                     weights ? " and weights" : "", convert_layout::permText(m)));
  }

  /// A plain Transpose of a value stored in a non-identity perm disappears:
  /// its output is that stored value, in the composed perm.
  bool absorbTranspose(Graph &g, NodeId id, Surgery &s) {
    const Node &n = g.node(id);
    if (n.type != "Transpose" || n.inputs.size() != 1 || !n.inputs[0] || !n.ctrlIn.empty() ||
        !n.ctrlOut.empty() || convert_layout::structuralRefusal(n))
      return false;
    Surgery::Placed in = s.placed(*n.inputs[0]);
    if (in.perm.empty() || convert_layout::isIdentity(in.perm))
      return false;
    Perm t;
    if (auto a = n.attr("perm"); a && a->isList())
      for (const AttrValue &v : a->asList())
        t.push_back(v.isInt() ? v.asInt() : -1);
    else
      for (size_t i = in.perm.size(); i-- > 0;)
        t.push_back(static_cast<int64_t>(i));
    if (t.size() != in.perm.size())
      return false;
    // stored = transpose(in, Q) = transpose(out, S) with out = transpose(in, T): S = T^-1 . Q.
    Perm sp = convert_layout::composePerm(convert_layout::inversePerm(t), in.perm);
    s.place(OutPort{id, 0}, {in.port, convert_layout::isIdentity(sp) ? Perm{} : sp});
    s.touch(id);
    note(g, n, "absorbed",
         fmt::format("absorbed Transpose {} {} into the layout (its output stays stored in {})",
                     n.name, convert_layout::permText(t), convert_layout::permText(sp)));
    return true;
  }

  void propagate(Graph &g, GraphId gid, NodeId id, Surgery &s, const ModuleTypes &types) {
    std::vector<Perm> permOf;
    for (const std::optional<OutPort> &src : g.node(id).inputs)
      permOf.push_back(src ? s.placed(*src).perm : Perm{});
    std::optional<Refusal> refusal;
    std::optional<convert_layout::Propagation> plan =
        convert_layout::planPropagation(g, gid, g.node(id), types, permOf, refusal);
    if (!plan) {
      if (refusal)
        refuse(g, g.node(id), *refusal,
               "kept " + g.node(id).name + " in the original layout (transposes at its inputs)");
      demandOriginal(g, gid, id, s, types);
      return;
    }
    using convert_layout::InputPlan;
    for (uint32_t k = 0; k < plan->inputs.size(); ++k) {
      std::optional<OutPort> src = g.node(id).inputs[k];
      InputPlan &ip = plan->inputs[k];
      OutPort now;
      switch (ip.kind) {
      case InputPlan::Keep:
        if (!src)
          continue;
        now = s.demand(*src, {});
        break;
      case InputPlan::Demand:
        now = s.demand(*src, ip.perm);
        break;
      case InputPlan::Broadcast:
        if (convert_layout::constValue(g, *src))
          now = s.broadcastConstant(*src, ip.perm, ip.rank);
        else
          now = s.broadcastValue(*src, ip.perm, ip.rank, types.of(gid, *src)->shape);
        break;
      case InputPlan::Replace:
        if (src)
          s.touch(src->node);
        now = s.newConstant(g.node(id).name + "_" + ip.role, std::move(ip.value));
        break;
      }
      if (!src || now != *src)
        g.setInput(InPort{id, k}, now);
    }
    for (InputPlan &ip : plan->appended) {
      OutPort c = s.newConstant(g.node(id).name + "_axes", std::move(ip.value));
      g.appendInput(id, c);
    }
    Node &n = g.node(id);
    for (auto &[key, value] : plan->attrs)
      n.attrs[key] = value;
    for (uint32_t k = 0; k < plan->outPerms.size() && k < n.numOutputs; ++k) {
      const Perm &p = plan->outPerms[k];
      permuteDescribedShape(n, k, p);
      s.place(OutPort{id, k}, {OutPort{id, k}, convert_layout::isIdentity(p) ? Perm{} : p});
    }
    ++stats_.opsPropagated;
    note(g, n, "propagated",
         fmt::format("{} follows the layout {} ({})", n.name, convert_layout::permText(plan->q),
                     plan->what));
  }

  /// An Identity of `value` for graph output `k` of NetOutput `id` (the
  /// original input `src` gives its type), remarked.
  OutPort outputCopy(Graph &g, GraphId gid, NodeId id, uint32_t k, Surgery &s,
                     const ModuleTypes &types, OutPort src, OutPort value) {
    std::string name = s.freshName(g.node(value.node).name + "_copy");
    NodeId copy = g.addNode(name, "Identity", {value}, 1);
    g.node(copy).loc = g.node(id).loc;
    // A copy's type is described on its port (the value keeps the original
    // output's type: outputs keep their layout).
    if (const TensorType *t = types.of(gid, src)) {
      g.node(copy).attrs["out0.dtype"] = AttrValue::ofIdent(std::string(dtypeName(t->dtype)));
      AttrValue::List dims;
      for (int64_t d : t->shape)
        dims.push_back(AttrValue::ofInt(d));
      g.node(copy).attrs["out0.shape"] = AttrValue::ofList(std::move(dims));
    }
    note(g, g.node(copy), "output-copy",
         fmt::format("{} keeps graph output {} a buffer of its own", name, k));
    return OutPort{copy, 0};
  }

  void demandOriginal(Graph &g, GraphId gid, NodeId id, Surgery &s, const ModuleTypes &types) {
    // Graph outputs that were different buffers must stay different: when a
    // cancelled Transpose makes two of them the same value (an identity
    // Transpose of a value that is also an output: a typed campaign finding),
    // or one a view of the other (an identity Transpose beside a Reshape of
    // the same value: another), the later one reads a copy. Buffers are
    // compared through views and ref outputs, before and after the surgery.
    const bool outputs = g.node(id).type == "NetOutput";
    std::map<OutPort, OutPort> owner; // buffer now -> the buffer it had (first claim)
    // (buffer it had, port now) -> its copy: outputs that shared a buffer
    // and collide alike share one copy, so they still alias each other.
    std::map<std::pair<OutPort, OutPort>, OutPort> copies;
    for (uint32_t k = 0; k < g.node(id).inputs.size(); ++k) {
      std::optional<OutPort> src = g.node(id).inputs[k];
      if (!src)
        continue;
      OutPort now = s.demand(*src, {});
      if (outputs) {
        auto was = outputRoots_.find({id, k});
        const OutPort before = was != outputRoots_.end() ? was->second : bufferRoot(g, *src);
        auto [it, fresh] = owner.emplace(bufferRoot(g, now), before);
        if (!fresh && it->second != before) {
          if (auto c = copies.find({before, now}); c != copies.end()) {
            now = c->second;
          } else {
            const OutPort value = now;
            now = outputCopy(g, gid, id, k, s, types, *src, now);
            copies.emplace(std::make_pair(before, value), now);
          }
        }
      }
      if (now != *src)
        g.setInput(InPort{id, k}, now);
    }
  }

  void note(const Graph &g, const Node &n, std::string rule, std::string message) {
    if (remarks_)
      remarks_->push_back(
          nodeRemark(kConvertLayoutName, g, n, "rewritten", std::move(rule), std::move(message)));
  }

  void refuse(const Graph &g, const Node &n, const Refusal &r, const std::string &what) {
    ++stats_.refused[r.tag];
    if (remarks_)
      remarks_->push_back(
          nodeRemark(kConvertLayoutName, g, n, "kept", r.tag, fmt::format("{}: {}", what, r.why)));
  }

  Module &m_;
  const ConvertLayoutOptions &options_;
  std::vector<Remark> *remarks_;
  ConvertLayoutStats stats_;
  /// NetOutput input (node, slot) -> its buffer's root port before the
  /// surgery of the graph being converted.
  std::map<std::pair<NodeId, uint32_t>, OutPort> outputRoots_;
};

} // namespace

ConvertLayoutStats runConvertLayout(Module &m, const ConvertLayoutOptions &options,
                                    std::vector<Remark> *remarks) {
  return ConvertLayoutPass(m, options, remarks).run();
}

} // namespace graphvet
