// Shape operands at import: which values decide an output type (they feed an
// op's shape operand slot, or a Loop's trip count when it has scan outputs),
// which graph inputs they come from (for --freeze-shape-operands), and their
// values computed before running (from constants, frozen inputs and static
// types through `Shape`/`Size`) with the op library's own kernels, so that
// graphvet's type inference sees them as Const.
#include "ir/op_def.h"
#include "onnx/internal.h"
#include "onnx/tensor_io.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace graphvet::onnximport {
namespace {

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

/// Walks back from every shape operand slot; `visit` sees each value reached
/// (Shape and Size stop the walk: their input's value does not matter).
void walkShapeOperandSources(const Context &ctx,
                             const std::function<void(const std::string &)> &visit) {
  std::map<std::string, const onnx::NodeProto *> producer;
  std::vector<std::string> work;
  forEachNode(ctx.model.graph(), [&](const onnx::NodeProto &n) {
    for (const std::string &o : n.output())
      if (!o.empty())
        producer[o] = &n;
    for (size_t slot : shapeOperandSlots(ctx, n))
      work.push_back(n.input(static_cast<int>(slot)));
  });
  std::set<std::string> seen;
  while (!work.empty()) {
    std::string v = std::move(work.back());
    work.pop_back();
    if (v.empty() || !seen.insert(v).second)
      continue;
    visit(v);
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

class Evaluator {
public:
  explicit Evaluator(Context &ctx) : ctx_(ctx) {}

  void graph(const onnx::GraphProto &g) {
    for (const auto &n : g.node()) {
      for (const onnx::GraphProto *sub : subgraphsOf(n))
        graph(*sub);
      node(n);
    }
  }

private:
  void node(const onnx::NodeProto &n) {
    const std::string &type = n.op_type();
    if (type == "Constant" || type == "If" || type == "Loop")
      return;
    bool needed = std::any_of(n.output().begin(), n.output().end(),
                              [&](const std::string &o) { return ctx_.neededValues.count(o); });
    if (!needed || ctx_.staticValues.count(n.output(0)) || ctx_.nondeterministic(type))
      return;
    std::vector<Tensor> results;
    if (readsOnlyType(type)) {
      if (n.input_size() < 1)
        return;
      std::optional<TensorType> in;
      if (auto it = ctx_.staticValues.find(n.input(0)); it != ctx_.staticValues.end())
        in = it->second.type();
      else
        in = ctx_.staticType(n.input(0));
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
        auto it = ctx_.staticValues.find(name);
        if (it == ctx_.staticValues.end())
          return;
        inputs.push_back(&it->second);
      }
      if (type == "Identity") {
        if (inputs.empty() || !inputs[0])
          return;
        results.push_back(*inputs[0]);
      } else if (!evaluate(n, inputs, results)) {
        return;
      }
    }
    if (results.size() < static_cast<size_t>(n.output_size()))
      return;
    for (const Tensor &t : results)
      if (t.anyUndef())
        return; // an indeterminate shape operand stays for the op to report
    for (int k = 0; k < n.output_size(); ++k) {
      if (n.output(k).empty())
        continue;
      ctx_.staticValues.insert_or_assign(n.output(k), std::move(results[static_cast<size_t>(k)]));
      if (ctx_.foldedSet.insert(n.output(k)).second)
        ctx_.folded.push_back(n.output(k));
    }
  }

  /// Runs the op library's kernel on a stand-alone node.
  bool evaluate(const onnx::NodeProto &n, const std::vector<const Tensor *> &inputs,
                std::vector<Tensor> &results) {
    Node node;
    node.name = n.name();
    node.type = n.op_type();
    for (const Tensor *t : inputs)
      node.inputs.push_back(t ? std::optional<OutPort>(OutPort{0, 0}) : std::nullopt);
    node.numOutputs = static_cast<uint32_t>(n.output_size());
    for (const auto &a : n.attribute()) {
      std::string err;
      auto v = convertAttribute(ctx_, n, a, err);
      if (!v)
        return false;
      node.attrs[a.name()] = std::move(*v);
    }
    std::string err;
    auto outs = evaluateNode(node, inputs, err);
    if (!outs)
      return false;
    results = std::move(*outs);
    return true;
  }

  Context &ctx_;
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
  uint64_t mask = ctx.shapeOperands(n.op_type());
  for (int i = 0; i < n.input_size() && i < 64; ++i)
    if ((mask >> i) & 1 && !n.input(i).empty())
      slots.push_back(static_cast<size_t>(i));
  return slots;
}

std::set<std::string> inputsFeedingShapeOperands(const Context &ctx) {
  std::set<std::string> inits, inputs, found;
  for (const auto &t : ctx.model.graph().initializer())
    inits.insert(t.name());
  for (const auto &vi : ctx.model.graph().input())
    if (!inits.count(vi.name()))
      inputs.insert(vi.name());
  walkShapeOperandSources(ctx, [&](const std::string &v) {
    if (inputs.count(v))
      found.insert(v);
  });
  return found;
}

void computeStaticValues(Context &ctx) {
  walkShapeOperandSources(ctx, [&](const std::string &v) { ctx.neededValues.insert(v); });
  seedConstants(ctx, ctx.model.graph());
  Evaluator(ctx).graph(ctx.model.graph());
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
