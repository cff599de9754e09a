// The numeric model builder (see numeric_model_builder.h). The stream between
// blocks is always f32[1, 4, 4, 4]: a CNN block works on it as NCHW, a
// transformer block reshapes it to [1, 8, 8] (tokens x features) and back.
// Weights are multiples of 1/16 in [-0.5, 0.5] (exact in f16), scales and
// variances positive, so that values stay small through many blocks and the
// planted patterns do what the counts say (a lossless cast round trip is
// really lossless, a scale really is >= 0 for folding through Relu).
#include "props/numeric_model_builder.h"

#include "ir/tensor.h"
#include "props/split_mix.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace graphvet::props {
namespace {

/// Nodes of each block (the builder checks them; padding relies on them).
constexpr size_t kCnnBlockNodes = 28;
constexpr size_t kTransformerBlockNodes = 46;
/// Data and NetOutput.
constexpr size_t kFixedNodes = 2;

class NumericBuilder {
public:
  NumericBuilder(const NumericModelOptions &opts, NumericModelInfo &info)
      : opts_(opts), info_(info), rng_(opts.seed ^ 0x6E756D657269636Dull) {}
  Module build();

private:
  OutPort op(std::string_view tag, std::string type, std::vector<std::optional<OutPort>> inputs,
             AttrMap attrs = {});
  OutPort constant(std::string_view tag, DType dtype, Shape shape, int lo16, int hi16);
  OutPort constInts(std::string_view tag, std::vector<int64_t> values);
  OutPort cast(std::string_view tag, OutPort in, DType to);
  static AttrValue ints(std::vector<int64_t> values);
  /// Two identical Sigmoids of x (a duplicate pair) in a swish-like sum, the
  /// sum's Mul and Adds a fusable chain ending in the residual add of `res`.
  OutPort duplicateSwish(OutPort x, OutPort res);
  /// A dead branch of three nodes (a constant, a Mul and an Exp) hung on x.
  void deadBranch(OutPort x);
  OutPort cnnBlock(OutPort h);
  OutPort transformerBlock(OutPort h);

  const NumericModelOptions &opts_;
  NumericModelInfo &info_;
  SplitMix rng_;
  Module m_;
  std::string prefix_;
  size_t nodes_ = 0;
};

OutPort NumericBuilder::op(std::string_view tag, std::string type,
                           std::vector<std::optional<OutPort>> inputs, AttrMap attrs) {
  std::string name = prefix_;
  name += tag;
  NodeId id = m_.root().addNode(std::move(name), std::move(type), std::move(inputs));
  m_.root().node(id).attrs = std::move(attrs);
  ++nodes_;
  return {id, 0};
}

AttrValue NumericBuilder::ints(std::vector<int64_t> values) {
  AttrValue::List list;
  for (int64_t v : values)
    list.push_back(AttrValue::ofInt(v));
  return AttrValue::ofList(std::move(list));
}

OutPort NumericBuilder::constant(std::string_view tag, DType dtype, Shape shape, int lo16,
                                 int hi16) {
  auto t = std::make_shared<Tensor>(TensorType{dtype, std::move(shape)});
  for (int64_t i = 0; i < t->size(); ++i)
    t->setDouble(i, rng_.sixteenths(lo16, hi16));
  return op(tag, "Const", {}, {{"value", AttrValue::ofTensor(std::move(t))}});
}

OutPort NumericBuilder::constInts(std::string_view tag, std::vector<int64_t> values) {
  auto t =
      std::make_shared<Tensor>(TensorType{DType::I64, Shape{static_cast<int64_t>(values.size())}});
  for (size_t i = 0; i < values.size(); ++i)
    t->setInt(static_cast<int64_t>(i), values[i]);
  return op(tag, "Const", {}, {{"value", AttrValue::ofTensor(std::move(t))}});
}

OutPort NumericBuilder::cast(std::string_view tag, OutPort in, DType to) {
  return op(tag, "Cast", {in}, {{"to", AttrValue::ofIdent(std::string(dtypeName(to)))}});
}

OutPort NumericBuilder::duplicateSwish(OutPort x, OutPort res) {
  OutPort g1 = op("sig_a", "Sigmoid", {x});
  OutPort g2 = op("sig_b", "Sigmoid", {x}); // the duplicate: cse merges it into sig_a
  ++info_.duplicatePairs;
  OutPort sw = op("swish", "Mul", {x, g1});
  OutPort sum = op("swish_sum", "Add", {sw, g2});
  ++info_.fusableChains;
  return op("residual", "Add", {sum, res});
}

void NumericBuilder::deadBranch(OutPort x) {
  OutPort c = constant("dead_c", DType::F32, {1}, 1, 8);
  OutPort mul = op("dead_mul", "Mul", {x, c});
  op("dead_exp", "Exp", {mul});
  info_.deadNodes += 3;
}

OutPort NumericBuilder::cnnBlock(OutPort h) {
  ++info_.cnnBlocks;
  AttrMap k1 = {{"kernel_shape", ints({1, 1})}};
  // Conv -> BatchNormalization -> Relu.
  OutPort w1 = constant("w1", DType::F32, {4, 4, 1, 1}, -8, 8);
  OutPort conv1 = op("conv1", "Conv", {h, w1}, k1);
  OutPort scale = constant("bn_scale", DType::F32, {4}, 8, 24);
  OutPort bias = constant("bn_bias", DType::F32, {4}, -4, 4);
  OutPort mean = constant("bn_mean", DType::F32, {4}, -4, 4);
  OutPort var = constant("bn_var", DType::F32, {4}, 8, 24);
  OutPort bn = op("bn", "BatchNormalization", {conv1, scale, bias, mean, var},
                  {{"epsilon", AttrValue::ofFloat(1e-5)}});
  OutPort relu = op("relu1", "Relu", {bn});
  ++info_.convBnRelu;
  deadBranch(relu);
  // A per-channel scale by a positive constant, then a Conv: folded forward.
  OutPort s = constant("chan_scale", DType::F32, {4, 1, 1}, 8, 24);
  OutPort scaled = op("chan_mul", "Mul", {relu, s});
  ++info_.channelScales;
  OutPort w2 = constant("w2", DType::F32, {4, 4, 1, 1}, -8, 8);
  OutPort b2 = constant("b2", DType::F32, {4}, -4, 4);
  OutPort conv2 = op("conv2", "Conv", {scaled, w2, b2}, k1);
  // Casts: f32 -> f16 -> f32 is lossy (kept); the f16 -> f32 -> f16 round
  // trip inside it is lossless (removed); a cast to f32 of an f32 is a no-op.
  OutPort c16 = cast("cast_h", conv2, DType::F16);
  ++info_.lossyCastChains;
  OutPort rt32 = cast("cast_rt32", c16, DType::F32);
  OutPort rt16 = cast("cast_rt16", rt32, DType::F16);
  ++info_.castRoundTrips;
  OutPort c32 = cast("cast_f", rt16, DType::F32);
  OutPort same = cast("cast_same", c32, DType::F32);
  ++info_.castNoOps;
  // A transpose to NHWC and straight back.
  OutPort t1 = op("to_nhwc", "Transpose", {same}, {{"perm", ints({0, 2, 3, 1})}});
  OutPort t2 = op("to_nchw", "Transpose", {t1}, {{"perm", ints({0, 3, 1, 2})}});
  ++info_.transposePairs;
  return duplicateSwish(t2, h);
}

OutPort NumericBuilder::transformerBlock(OutPort h) {
  ++info_.transformerBlocks;
  // Shape arithmetic: [1, 4, 4, 4] -> Shape -> Gather [0] -> Concat [8, -1]
  // gives the Reshape's target [1, 8, -1].
  OutPort shape = op("shape", "Shape", {h});
  OutPort idx = constInts("shape_idx", {0});
  OutPort dims = op("shape_dims", "Gather", {shape, idx}, {{"axis", AttrValue::ofInt(0)}});
  OutPort rest = constInts("shape_rest", {8, -1});
  OutPort target = op("shape_target", "Concat", {dims, rest}, {{"axis", AttrValue::ofInt(0)}});
  ++info_.shapeArithmetic;
  // A shape computed at run time needs the result's type spelled out.
  OutPort x = op("tokens", "Reshape", {h, target},
                 {{"out0.dtype", AttrValue::ofIdent("f32")}, {"out0.shape", ints({1, 8, 8})}});
  // Attention: a layer norm, Q/K/V on one input (parallel MatMuls), K^T.
  OutPort lnS = constant("ln1_s", DType::F32, {8}, 8, 24);
  OutPort lnB = constant("ln1_b", DType::F32, {8}, -4, 4);
  OutPort ln = op("ln1", "LayerNormalization", {x, lnS, lnB});
  ++info_.layerNorms;
  OutPort wq = constant("wq", DType::F32, {8, 8}, -4, 4);
  OutPort q = op("q", "MatMul", {ln, wq});
  OutPort wk = constant("wk", DType::F32, {8, 8}, -4, 4);
  OutPort k = op("k", "MatMul", {ln, wk});
  OutPort wv = constant("wv", DType::F32, {8, 8}, -4, 4);
  OutPort v = op("v", "MatMul", {ln, wv});
  ++info_.parallelMatMulGroups;
  OutPort kt = op("kt", "Transpose", {k}, {{"perm", ints({0, 2, 1})}});
  ++info_.neededTransposes;
  OutPort scores = op("scores", "MatMul", {q, kt});
  OutPort four = constant("four", DType::F32, {}, 64, 64);
  OutPort scaled = op("scores_scaled", "Div", {scores, four});
  OutPort probs = op("probs", "Softmax", {scaled}, {{"axis", AttrValue::ofInt(-1)}});
  OutPort attn = op("attn", "MatMul", {probs, v});
  OutPort wo = constant("wo", DType::F32, {8, 8}, -4, 4);
  OutPort proj = op("proj", "MatMul", {attn, wo});
  OutPort r = op("attn_res", "Add", {proj, x});
  deadBranch(ln);
  // MLP: MatMul, bias Add, Relu (a fusable chain on the MatMul), MatMul, bias.
  OutPort ln2S = constant("ln2_s", DType::F32, {8}, 8, 24);
  OutPort ln2B = constant("ln2_b", DType::F32, {8}, -4, 4);
  OutPort ln2 = op("ln2", "LayerNormalization", {r, ln2S, ln2B});
  ++info_.layerNorms;
  OutPort w1 = constant("mlp_w1", DType::F32, {8, 8}, -4, 4);
  OutPort up = op("mlp_up", "MatMul", {ln2, w1});
  OutPort b1 = constant("mlp_b1", DType::F32, {8}, -4, 4);
  OutPort upB = op("mlp_up_b", "Add", {up, b1});
  OutPort act = op("mlp_act", "Relu", {upB});
  ++info_.fusableChains;
  OutPort w2 = constant("mlp_w2", DType::F32, {8, 8}, -4, 4);
  OutPort down = op("mlp_down", "MatMul", {act, w2});
  OutPort b2 = constant("mlp_b2", DType::F32, {8}, -4, 4);
  OutPort downB = op("mlp_down_b", "Add", {down, b2});
  OutPort y = duplicateSwish(downB, r);
  OutPort back = constInts("back_shape", {1, 4, 4, 4});
  return op("back", "Reshape", {y, back});
}

Module NumericBuilder::build() {
  size_t target = std::max(opts_.nodes, kFixedNodes);
  m_.addGraph("numeric_model");
  AttrMap in = {{"index", AttrValue::ofInt(0)},
                {"out0.dtype", AttrValue::ofIdent("f32")},
                {"out0.shape", ints({1, 4, 4, 4})}};
  OutPort h = op("x", "Data", {}, std::move(in));
  // Whole blocks while one fits (keeping one slot for NetOutput); a
  // transformer block that does not fit becomes a CNN block.
  for (size_t block = 0; target - nodes_ >= kCnnBlockNodes + 1; ++block) {
    prefix_ = fmt::format("b{}_", block);
    size_t before = nodes_;
    bool cnn = rng_.chance(opts_.cnnPercent) || target - nodes_ < kTransformerBlockNodes + 1;
    h = cnn ? cnnBlock(h) : transformerBlock(h);
    if (nodes_ - before != (cnn ? kCnnBlockNodes : kTransformerBlockNodes))
      throw std::logic_error("numeric model: a block's size differs from its constant");
  }
  // Pad with an element-wise chain (alternating ops so no rule collapses it).
  prefix_ = fmt::format("pad");
  for (size_t i = 0; target - nodes_ > 1; ++i) {
    h = op(std::to_string(i), i % 2 ? "Sigmoid" : "Tanh", {h});
    ++info_.paddingNodes;
  }
  if (info_.paddingNodes >= 2)
    ++info_.fusableChains;
  prefix_.clear();
  op("out", "NetOutput", {h});
  info_.nodes = nodes_;
  return std::move(m_);
}

} // namespace

size_t NumericModelInfo::predictedNodesAfterCleanup() const {
  constexpr size_t kCnnKept = 13, kTransformerKept = 52, kSharedConstants = 4;
  return kFixedNodes + paddingNodes + cnnBlocks * kCnnKept + transformerBlocks * kTransformerKept +
         (transformerBlocks > 0 ? kSharedConstants : 0);
}

Module buildNumericModelGraph(const NumericModelOptions &opts, NumericModelInfo *info) {
  NumericModelInfo local;
  NumericModelInfo &out = info ? *info : local;
  out = NumericModelInfo{};
  NumericBuilder builder(opts, out);
  return builder.build();
}

} // namespace graphvet::props
