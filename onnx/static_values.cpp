// What the importer knows before running, beyond ONNX's shape inference:
// - which values decide an output type (they feed an op's shape operand
//   slot, a Loop's trip count when it has scan outputs, or through a body's
//   iteration counter), and which graph inputs they come from (for
//   --freeze-shape-operands); an If's condition is computed the same way;
// - their values, computed before running (from constants, frozen inputs and
//   static types through `Shape`/`Size`) with the op library's own kernels,
//   so that graphvet's type inference sees them as Const and an If whose
//   condition is known is replaced by its branch;
// - the static type of every value ONNX's inference leaves unknown (a Loop
//   body's loop-carried values, an Identity of one...), with graphvet's own
//   infer functions, forward through every graph; a Loop body whose types
//   need the iteration counter's value (Slice's starts from the counter) is
//   typed once per iteration of a constant trip count, and a type the same
//   in every iteration is static.
#include "ir/op_def.h"
#include "onnx/internal.h"
#include "onnx/tensor_io.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace graphvet::onnximport {
namespace {

/// Node visits the per-iteration typing of Loop bodies may spend in all.
constexpr uint64_t kProbeBudget = uint64_t{1} << 20;

/// Every node of every graph, subgraphs included.
void forEachNode(const onnx::GraphProto &g, const std::function<void(const onnx::NodeProto &)> &f) {
  for (const auto &n : g.node()) {
    f(n);
    for (const onnx::GraphProto *sub : subgraphsOf(n))
      forEachNode(*sub, f);
  }
}

bool readsOnlyType(const std::string &opType) {
  return opType == "Shape" || opType == "Size";
}

const onnx::GraphProto *graphAttribute(const onnx::NodeProto &n, const std::string &name) {
  for (const auto &a : n.attribute())
    if (a.name() == name && a.has_g())
      return &a.g();
  return nullptr;
}

/// Walks back from the values `seeds` adds (given every node); `visit` sees
/// each value reached (Shape and Size stop the walk: their input's value
/// does not matter). A Loop body's iteration counter leads to the Loop's
/// trip count.
void walkValueSources(
    const Context &ctx,
    const std::function<void(const onnx::NodeProto &, std::vector<std::string> &)> &seeds,
    const std::function<void(const std::string &)> &visit) {
  std::map<std::string, const onnx::NodeProto *> producer;
  std::map<std::string, std::string> tripCountOf; // body iteration counter -> M
  std::vector<std::string> work;
  forEachNode(ctx.model.graph(), [&](const onnx::NodeProto &n) {
    for (const std::string &o : n.output())
      if (!o.empty())
        producer[o] = &n;
    seeds(n, work);
    if (n.op_type() == "Loop" && n.input_size() > 0 && !n.input(0).empty())
      if (const onnx::GraphProto *body = graphAttribute(n, "body"); body && body->input_size() > 0)
        tripCountOf[body->input(0).name()] = n.input(0);
  });
  std::set<std::string> seen;
  while (!work.empty()) {
    std::string v = std::move(work.back());
    work.pop_back();
    if (v.empty() || !seen.insert(v).second)
      continue;
    visit(v);
    if (auto m = tripCountOf.find(v); m != tripCountOf.end())
      work.push_back(m->second);
    auto it = producer.find(v);
    if (it == producer.end() || readsOnlyType(it->second->op_type()))
      continue;
    const onnx::NodeProto &p = *it->second;
    for (const std::string &in : p.input())
      work.push_back(in);
    // A control-flow node's results depend on whatever its subgraphs read.
    for (const onnx::GraphProto *sub : subgraphsOf(p))
      forEachNode(*sub, [&](const onnx::NodeProto &inner) {
        for (const std::string &in : inner.input())
          work.push_back(in);
      });
  }
}

/// Walks back from every shape operand slot (and every If condition when
/// `ifConditions`).
void walkShapeOperandSources(const Context &ctx, bool ifConditions,
                             const std::function<void(const std::string &)> &visit) {
  walkValueSources(
      ctx,
      [&](const onnx::NodeProto &n, std::vector<std::string> &work) {
        for (size_t slot : shapeOperandSlots(ctx, n))
          work.push_back(n.input(static_cast<int>(slot)));
        if (ifConditions && n.op_type() == "If" && n.input_size() > 0)
          work.push_back(n.input(0));
      },
      visit);
}

/// The root graph inputs (initializers excluded).
std::set<std::string> rootInputs(const Context &ctx) {
  std::set<std::string> inits, inputs;
  for (const auto &t : ctx.model.graph().initializer())
    inits.insert(t.name());
  for (const auto &vi : ctx.model.graph().input())
    if (!inits.count(vi.name()))
      inputs.insert(vi.name());
  return inputs;
}

/// Shape (opset 15 start/end) and Size of a static type.
Tensor shapeOrSize(const onnx::NodeProto &n, const TensorType &in) {
  if (n.op_type() == "Size")
    return [&] {
      Tensor t(TensorType{DType::I64, {}});
      t.setInt(0, in.numElements());
      return t;
    }();
  int64_t rank = in.rank(), start = 0, end = rank;
  for (const auto &a : n.attribute()) {
    if (a.name() == "start")
      start = a.i();
    if (a.name() == "end")
      end = a.i();
  }
  auto clampAxis = [rank](int64_t a) { return std::clamp(a < 0 ? a + rank : a, int64_t{0}, rank); };
  start = clampAxis(start);
  end = clampAxis(end);
  int64_t count = std::max<int64_t>(0, end - start);
  Tensor t(TensorType{DType::I64, {count}});
  for (int64_t i = 0; i < count; ++i)
    t.setInt(i, in.shape[static_cast<size_t>(start + i)]);
  return t;
}

Tensor scalarI64(int64_t v) {
  Tensor t(TensorType{DType::I64, {}});
  t.setInt(0, v);
  return t;
}

/// What one iteration of a probed Loop body knows besides the context: the
/// iteration counter's value and what follows from it.
struct Overlay {
  std::map<std::string, Tensor> values;
  std::map<std::string, TensorType> types;
};

/// The forward walk: static values, types and static If branches, graph by
/// graph in node order, a subgraph when its holder is reached.
class Forward {
public:
  explicit Forward(Context &ctx) : ctx_(ctx) {}

  void graph(const onnx::GraphProto &g) {
    for (const auto &n : g.node())
      node(n);
  }

private:
  bool probing() const { return !overlays_.empty(); }

  const Tensor *value(const std::string &v) const {
    for (auto it = overlays_.rbegin(); it != overlays_.rend(); ++it)
      if (auto f = (*it)->values.find(v); f != (*it)->values.end())
        return &f->second;
    auto it = ctx_.staticValues.find(v);
    return it == ctx_.staticValues.end() ? nullptr : &it->second;
  }

  std::optional<TensorType> type(const std::string &v) const {
    if (v.empty())
      return std::nullopt;
    for (auto it = overlays_.rbegin(); it != overlays_.rend(); ++it)
      if (auto f = (*it)->types.find(v); f != (*it)->types.end())
        return f->second;
    if (auto t = ctx_.staticType(v))
      return t;
    if (const Tensor *t = value(v))
      return t->type();
    return std::nullopt;
  }

  void setType(const std::string &v, const TensorType &t) {
    if (v.empty() || type(v))
      return;
    if (probing())
      overlays_.back()->types[v] = t;
    else
      ctx_.inferredTypes[v] = t;
  }

  bool needed(const std::string &v) const { return ctx_.neededValues.count(v) > 0; }

  void setValue(const std::string &v, Tensor t) {
    if (probing()) {
      overlays_.back()->values.insert_or_assign(v, std::move(t));
      return;
    }
    ctx_.staticValues.insert_or_assign(v, std::move(t));
    if (ctx_.foldedSet.insert(v).second)
      ctx_.folded.push_back(v);
  }

  void node(const onnx::NodeProto &n) {
    ++visits_;
    const std::string &op = n.op_type();
    if (op == "If")
      return ifNode(n);
    if (op == "Loop")
      return loopNode(n);
    if (op == "Constant" || (!n.domain().empty() && n.domain() != "ai.onnx"))
      return;
    computeValue(n);
    computeTypes(n);
  }

  /// The node's outputs when one of them is needed and every input is known.
  void computeValue(const onnx::NodeProto &n) {
    const std::string &type = n.op_type();
    bool isNeeded = std::any_of(n.output().begin(), n.output().end(),
                                [&](const std::string &o) { return needed(o); });
    if (!isNeeded || n.output_size() < 1 || value(n.output(0)) || ctx_.nondeterministic(type))
      return;
    std::vector<Tensor> results;
    if (readsOnlyType(type)) {
      if (n.input_size() < 1)
        return;
      auto in = this->type(n.input(0));
      if (!in)
        return;
      results.push_back(shapeOrSize(n, *in));
    } else {
      std::vector<const Tensor *> inputs;
      for (const std::string &name : n.input()) {
        if (name.empty()) {
          inputs.push_back(nullptr);
          continue;
        }
        const Tensor *t = value(name);
        if (!t)
          return;
        inputs.push_back(t);
      }
      if (type == "Identity") {
        if (inputs.empty() || !inputs[0])
          return;
        results.push_back(*inputs[0]);
      } else {
        std::string err;
        auto node = graphvetNode(ctx_, n, err);
        if (!node)
          return;
        auto outs = evaluateNode(*node, inputs, err);
        if (!outs)
          return;
        results = std::move(*outs);
      }
    }
    if (results.size() < static_cast<size_t>(n.output_size()))
      return;
    for (const Tensor &t : results)
      if (t.anyUndef())
        return; // an indeterminate shape operand stays for the op to report
    for (int k = 0; k < n.output_size(); ++k)
      if (!n.output(k).empty())
        setValue(n.output(k), std::move(results[static_cast<size_t>(k)]));
  }

  /// Types of the outputs ONNX's inference leaves unknown, by graphvet's
  /// inference of the node on its inputs' types (and known values).
  void computeTypes(const onnx::NodeProto &n) {
    bool missing = false;
    for (const std::string &o : n.output())
      missing = missing || (!o.empty() && !type(o));
    // Outside probing the inference runs on typed nodes as well: a node it
    // rejects (a branch that does not work for these input shapes) is
    // reported where it matters.
    if (!missing && probing())
      return;
    if (n.op_type() == "Identity") {
      if (n.input_size() > 0)
        if (auto t = type(n.input(0)))
          setType(n.output(0), *t);
      return;
    }
    std::vector<std::optional<TensorType>> types;
    std::vector<const Tensor *> consts;
    for (const std::string &in : n.input()) {
      if (in.empty()) {
        types.emplace_back();
        consts.push_back(nullptr);
        continue;
      }
      auto t = type(in);
      if (!t)
        return;
      types.push_back(*t);
      consts.push_back(value(in));
    }
    std::string err;
    auto node = graphvetNode(ctx_, n, err);
    if (!node)
      return;
    auto outs = inferNodeTypes(*node, types, consts, err);
    if (!outs) {
      // A shape operand known only at run time is no failure: the node's
      // type comes from elsewhere (ONNX's, or the loop's iterations).
      bool runtimeShaped = false;
      for (size_t slot : shapeOperandSlots(ctx_, n))
        runtimeShaped = runtimeShaped || !value(n.input(static_cast<int>(slot)));
      if (!probing() && !runtimeShaped)
        failures_.push_back(fmt::format("node '{}' ({}): {}", n.name(), n.op_type(), err));
      return;
    }
    for (int k = 0; k < n.output_size() && static_cast<size_t>(k) < outs->size(); ++k)
      setType(n.output(k), (*outs)[static_cast<size_t>(k)]);
  }

  void ifNode(const onnx::NodeProto &n) {
    const onnx::GraphProto *branches[2] = {graphAttribute(n, "then_branch"),
                                           graphAttribute(n, "else_branch")};
    if (!branches[0] || !branches[1] || n.input_size() != 1)
      return;
    const Tensor *cond = value(n.input(0));
    if (cond && cond->size() == 1 && !cond->anyUndef()) {
      // The condition is known: only the branch taken runs, and the If is
      // that branch (the translation inlines it).
      int taken = cond->getDouble(0) != 0 ? 0 : 1;
      if (!probing())
        ctx_.staticBranches[&n] = taken;
      const onnx::GraphProto &g = *branches[taken];
      graph(g);
      for (int k = 0; k < n.output_size() && k < g.output_size(); ++k) {
        const std::string &out = n.output(k), &res = g.output(k).name();
        if (auto t = type(res))
          setType(out, *t);
        if (!out.empty() && needed(out) && !value(out))
          if (const Tensor *v = value(res))
            setValue(out, *v);
      }
      return;
    }
    for (const onnx::GraphProto *branch : branches) {
      size_t before = failures_.size();
      graph(*branch);
      // A branch that does not type for these input shapes: the first node
      // there whose inference failed (for the If's error).
      if (failures_.size() > before && !probing())
        ctx_.untypedBranches.emplace(branch, failures_[before]);
    }
    for (int k = 0; k < n.output_size(); ++k) {
      if (k >= branches[0]->output_size() || k >= branches[1]->output_size())
        break;
      auto a = type(branches[0]->output(k).name()), b = type(branches[1]->output(k).name());
      if (a && b && *a == *b)
        setType(n.output(k), *a);
    }
  }

  bool anyUntyped(const onnx::GraphProto &g) const {
    bool untyped = false;
    forEachNode(g, [&](const onnx::NodeProto &n) {
      for (const std::string &o : n.output())
        untyped = untyped || (!o.empty() && !type(o));
    });
    return untyped;
  }

  void loopNode(const onnx::NodeProto &n) {
    const onnx::GraphProto *body = graphAttribute(n, "body");
    if (!body || n.input_size() < 2)
      return;
    const int carried = n.input_size() - 2;
    if (body->input_size() != 2 + carried)
      return;
    std::optional<int64_t> tripCount;
    if (const Tensor *m = n.input(0).empty() ? nullptr : value(n.input(0));
        m && m->size() == 1 && !m->anyUndef())
      tripCount = m->getInt(0);
    setType(body->input(0).name(), TensorType{DType::I64, {}});
    setType(body->input(1).name(), TensorType{DType::Bool, {}});
    for (int k = 0; k < carried; ++k)
      if (auto t = type(n.input(2 + k)))
        setType(body->input(2 + k).name(), *t);
    uint64_t before = visits_;
    graph(*body);
    uint64_t perIteration = std::max<uint64_t>(1, visits_ - before);
    if (tripCount && *tripCount > 0 && anyUntyped(*body) &&
        static_cast<uint64_t>(*tripCount) <= (kProbeBudget - probeSpent_) / perIteration) {
      probeSpent_ += perIteration * static_cast<uint64_t>(*tripCount);
      probe(*body, *tripCount);
    }
    // A loop variable keeps its initial value's type (graphvet's While);
    // a scan output stacks the body's per-iteration values.
    for (int k = 0; k < carried && k < n.output_size(); ++k)
      if (auto t = type(n.input(2 + k)))
        setType(n.output(k), *t);
    for (int j = carried; j < n.output_size(); ++j) {
      if (!tripCount || 1 + j >= body->output_size())
        continue;
      if (auto t = type(body->output(1 + j).name())) {
        t->shape.insert(t->shape.begin(), std::max<int64_t>(0, *tripCount));
        setType(n.output(j), *t);
      }
    }
  }

  /// Types the body once per iteration 0..M-1 with the counter's value; a
  /// value typed alike in every iteration gets that type, one typed
  /// differently is recorded as a conflict (its node cannot be static).
  void probe(const onnx::GraphProto &body, int64_t tripCount) {
    const std::string &counter = body.input(0).name();
    std::map<std::string, std::optional<TensorType>> merged;
    std::map<std::string, std::string> conflicts;
    for (int64_t i = 0; i < tripCount; ++i) {
      Overlay ov;
      ov.values.insert_or_assign(counter, scalarI64(i));
      overlays_.push_back(&ov);
      graph(body);
      overlays_.pop_back();
      for (auto &[v, t] : merged)
        if (t && !ov.types.count(v)) {
          conflicts[v] = fmt::format("{} in iteration 0, not static in iteration {}", t->str(), i);
          t.reset();
        }
      for (const auto &[v, t] : ov.types) {
        auto it = merged.find(v);
        if (i == 0) {
          merged.emplace(v, t);
        } else if (it == merged.end()) {
          conflicts[v] = fmt::format("not static in iteration 0, {} in iteration {}", t.str(), i);
          merged.emplace(v, std::nullopt);
        } else if (it->second && *it->second != t) {
          conflicts[v] =
              fmt::format("{} in iteration 0, {} in iteration {}", it->second->str(), t.str(), i);
          it->second.reset();
        }
      }
    }
    for (const auto &[v, t] : merged)
      if (t)
        setType(v, *t);
    if (!probing())
      for (auto &[v, why] : conflicts)
        ctx_.typeConflicts.emplace(v, std::move(why));
  }

  Context &ctx_;
  std::vector<Overlay *> overlays_;
  /// Nodes whose inference failed (outside probing), in walk order.
  std::vector<std::string> failures_;
  uint64_t visits_ = 0;
  uint64_t probeSpent_ = 0;
};

void seedConstants(Context &ctx, const onnx::GraphProto &g) {
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto &n = g.node(i);
    for (const onnx::GraphProto *sub : subgraphsOf(n))
      seedConstants(ctx, *sub);
    if (n.op_type() != "Constant" || n.output_size() < 1)
      continue;
    auto v = constantNodeValue(ctx, n, nodeDisplayName(n, static_cast<size_t>(i)));
    if (v)
      ctx.staticValues.insert_or_assign(n.output(0), std::move(*v));
  }
}

} // namespace

std::optional<Node> graphvetNode(const Context &ctx, const onnx::NodeProto &n, std::string &error) {
  Node node;
  node.name = n.name();
  node.type = n.op_type();
  for (const std::string &in : n.input())
    node.inputs.push_back(in.empty() ? std::nullopt : std::optional<OutPort>(OutPort{0, 0}));
  node.numOutputs = static_cast<uint32_t>(n.output_size());
  for (const auto &a : n.attribute()) {
    auto v = convertAttribute(ctx, n, a, error);
    if (!v)
      return std::nullopt;
    node.attrs[a.name()] = std::move(*v);
  }
  addOpsetAttributes(ctx, node.type, node.attrs);
  return node;
}

void addOpsetAttributes(const Context &ctx, const std::string &opType, AttrMap &attrs) {
  // Softmax, LogSoftmax and Hardmax changed meaning at opset 13 (a 2-D
  // coercion before, one axis after) without changing their form.
  if ((opType == "Softmax" || opType == "LogSoftmax" || opType == "Hardmax") && ctx.opset < 13)
    attrs["onnx_opset"] = AttrValue::ofInt(ctx.opset);
}

std::vector<size_t> shapeOperandSlots(const Context &ctx, const onnx::NodeProto &n) {
  std::vector<size_t> slots;
  if (n.op_type() == "Loop") {
    // body outputs: cond, N loop-carried values, then the scan outputs.
    size_t carried = n.input_size() >= 2 ? static_cast<size_t>(n.input_size() - 2) : 0;
    for (const onnx::GraphProto *body : subgraphsOf(n))
      if (static_cast<size_t>(body->output_size()) > 1 + carried && n.input_size() > 0 &&
          !n.input(0).empty())
        slots.push_back(0);
    return slots;
  }
  if (isStructuralOp(n.op_type()) || !n.domain().empty())
    return slots;
  if (n.op_type() == "Resize" && n.input_size() == 2) { // Resize-10: (X, scales)
    slots.push_back(1);
    return slots;
  }
  uint64_t mask = ctx.shapeOperands(n.op_type());
  for (int i = 0; i < n.input_size() && i < 64; ++i)
    if ((mask >> i) & 1 && !n.input(i).empty())
      slots.push_back(static_cast<size_t>(i));
  return slots;
}

std::set<std::string> inputsFeedingShapeOperands(const Context &ctx) {
  std::set<std::string> inputs = rootInputs(ctx), found;
  walkShapeOperandSources(ctx, false, [&](const std::string &v) {
    if (inputs.count(v))
      found.insert(v);
  });
  return found;
}

std::set<std::string> inputsFeeding(const Context &ctx, const std::string &value) {
  std::set<std::string> inputs = rootInputs(ctx), found;
  bool seeded = false;
  walkValueSources(
      ctx,
      [&](const onnx::NodeProto &, std::vector<std::string> &work) {
        if (!seeded)
          work.push_back(value);
        seeded = true;
      },
      [&](const std::string &v) {
        if (inputs.count(v))
          found.insert(v);
      });
  return found;
}

void computeStaticValues(Context &ctx) {
  walkShapeOperandSources(ctx, true, [&](const std::string &v) { ctx.neededValues.insert(v); });
  seedConstants(ctx, ctx.model.graph());
  Forward(ctx).graph(ctx.model.graph());
}

std::optional<Tensor> constantNodeValue(Context &ctx, const onnx::NodeProto &n,
                                        const std::string &where) {
  for (const auto &a : n.attribute()) {
    const std::string &k = a.name();
    if (k == "value") {
      std::string err;
      auto t = tensorFromProto(a.t(), ctx.modelDir, err);
      if (!t)
        ctx.error(fmt::format("node '{}': value: {}", where, err));
      return t;
    }
    if (k == "value_float" || k == "value_floats") {
      bool list = k == "value_floats";
      Shape shape = list ? Shape{a.floats_size()} : Shape{};
      Tensor t(TensorType{DType::F32, shape});
      for (int64_t i = 0; i < t.size(); ++i) {
        float f = list ? a.floats(static_cast<int>(i)) : a.f();
        std::memcpy(t.at(i), &f, sizeof f);
      }
      return t;
    }
    if (k == "value_int" || k == "value_ints") {
      bool list = k == "value_ints";
      Tensor t(TensorType{DType::I64, list ? Shape{a.ints_size()} : Shape{}});
      for (int64_t i = 0; i < t.size(); ++i)
        t.setInt(i, list ? a.ints(static_cast<int>(i)) : a.i());
      return t;
    }
  }
  ctx.error(fmt::format("node '{}': Constant without a supported value attribute", where));
  return std::nullopt;
}

} // namespace graphvet::onnximport
