// The model-like graph builder (see model_builder.h). Each layer draws its
// optional patterns from a splitmix64 stream seeded by the model seed, so a
// seed fixes the graph. Race freedom holds by construction: every in-place
// write goes either to a TensorMove's private copy or to a layer's own
// variable, and everything that reads the written memory consumes the
// writer's output, so data edges order every write before its readers.
#include "props/model_builder.h"

#include "ir/op_library.h"
#include "props/split_mix.h"

#include <optional>
#include <stdexcept>
#include <string>

namespace graphvet::props {
namespace {

/// Upper bound on the nodes one layer adds (every pattern on: 87); the
/// builder checks it, the padding relies on it.
constexpr size_t kMaxLayerNodes = 96;
/// x, its TensorMove, the embedding table and lookup, the mask, NetOutput.
constexpr size_t kFixedNodes = 6;

/// The optional parts of one layer, drawn before it is built.
struct LayerPlan {
  bool residualWrite, lnDirect, weightRead, view, kvRead, mask, kvWrite, siblingWrite, weightWrite,
      allReduceInput, ctrlHint;
  bool call, callInput, nested, nestedOutput, callOutput;
  bool ifEnd;
};

class ModelBuilder {
public:
  ModelBuilder(const ModelOptions &opts, ModelInfo &info)
      : opts_(opts), info_(info), rng_(opts.seed ^ 0x6D6F64656C5F6776ull) {}

  Module build();

private:
  /// A graph being filled and the prefix of its node names.
  struct Scope {
    GraphId graph;
    std::string prefix;
  };

  Graph &graph(const Scope &s) { return m_.graph(s.graph); }
  OutPort op(const Scope &s, std::string_view tag, std::string type,
             std::vector<std::optional<OutPort>> inputs = {});
  OutPort tensorMove(const Scope &s, std::string_view tag, OutPort in, TensorMoveRole role,
                     std::string_view pattern);
  OutPort layerNorm(const Scope &s, std::string_view tag, OutPort x);
  OutPort subgraphData(const Scope &s, int64_t parentIndex);
  void subgraphResult(const Scope &s, OutPort value);
  GraphId newSubgraph(const Scope &holder, NodeId holderNode, std::string_view tag);
  OutPort mlpBody(const Scope &s, OutPort in, const LayerPlan &p);
  LayerPlan drawPlan();
  void layer(size_t index, OutPort &h, OutPort mask, std::optional<NodeId> &prevKvUpdate);

  const ModelOptions &opts_;
  ModelInfo &info_;
  SplitMix rng_;
  Module m_;
  size_t nodes_ = 0;
};

OutPort ModelBuilder::op(const Scope &s, std::string_view tag, std::string type,
                         std::vector<std::optional<OutPort>> inputs) {
  std::string name = s.prefix;
  name += tag;
  NodeId id = graph(s).addNode(std::move(name), std::move(type), std::move(inputs));
  ++nodes_;
  return {id, 0};
}

OutPort ModelBuilder::tensorMove(const Scope &s, std::string_view tag, OutPort in,
                                 TensorMoveRole role, std::string_view pattern) {
  OutPort tm = op(s, tag, "TensorMove", {in});
  info_.tensorMoves.push_back({s.graph, tm.node, role, pattern});
  return tm;
}

OutPort ModelBuilder::layerNorm(const Scope &s, std::string_view tag, OutPort x) {
  // Spelled out the way frameworks export it: 10 nodes, x read twice.
  std::string t(tag);
  OutPort mean = op(s, t + "_mean", "ReduceMeanD", {x});
  OutPort xc = op(s, t + "_xc", "SubD", {x, mean});
  OutPort sq = op(s, t + "_sq", "MulD", {xc, xc});
  OutPort var = op(s, t + "_var", "ReduceMeanD", {sq});
  OutPort rstd = op(s, t + "_rstd", "Rsqrt", {var});
  OutPort nrm = op(s, t + "_nrm", "MulD", {xc, rstd});
  OutPort gamma = op(s, t + "_g", "Const");
  OutPort scaled = op(s, t + "_sc", "MulD", {nrm, gamma});
  OutPort beta = op(s, t + "_b", "Const");
  return op(s, t + "_out", "AddD", {scaled, beta});
}

GraphId ModelBuilder::newSubgraph(const Scope &holder, NodeId holderNode, std::string_view tag) {
  std::string name = holder.prefix;
  if (holder.graph != 0) // nested: qualify by the holder graph's name
    name = m_.graph(holder.graph).name + "_";
  name += tag;
  GraphId sub = m_.addGraph(std::move(name));
  m_.attachSubgraph(holder.graph, holderNode, sub);
  ++info_.subgraphs;
  return sub;
}

OutPort ModelBuilder::subgraphData(const Scope &s, int64_t parentIndex) {
  OutPort d = op(s, "d", "Data");
  graph(s).node(d.node).attrs["_parent_node_index"] = AttrValue::ofInt(parentIndex);
  return d;
}

void ModelBuilder::subgraphResult(const Scope &s, OutPort value) {
  OutPort out = op(s, "out", "NetOutput", {value});
  graph(s).node(out.node).attrs["in0._parent_node_index"] = AttrValue::ofInt(0);
}

LayerPlan ModelBuilder::drawPlan() {
  unsigned p = opts_.patternPercent;
  LayerPlan plan{};
  plan.residualWrite = rng_.chance(p);
  plan.lnDirect = rng_.chance(p);
  plan.weightRead = rng_.chance(p);
  plan.view = rng_.chance(p);
  plan.kvRead = rng_.chance(p);
  plan.mask = rng_.chance(p);
  plan.kvWrite = rng_.chance(p);
  plan.siblingWrite = rng_.chance(p);
  plan.weightWrite = rng_.chance(p);
  plan.allReduceInput = rng_.chance(p);
  plan.ctrlHint = rng_.chance(30);
  plan.call = rng_.chance(opts_.callPercent);
  plan.callInput = rng_.chance(p);
  plan.nested = rng_.chance(50);
  plan.nestedOutput = rng_.chance(p);
  plan.callOutput = rng_.chance(p);
  plan.ifEnd = rng_.chance(opts_.ifPercent);
  return plan;
}

OutPort ModelBuilder::mlpBody(const Scope &s, OutPort in, const LayerPlan &p) {
  OutPort w1 = op(s, "w1", "Const");
  OutPort up = op(s, "up", "MatMulD", {in, w1});
  OutPort b1 = op(s, "b1", "Const");
  OutPort ub = op(s, "upb", "AddD", {up, b1});
  OutPort act;
  if (p.call && p.nested) {
    // The activation as a nested PartitionedCall (a fused kernel boundary).
    OutPort pc = op(s, "act", "PartitionedCall", {ub});
    Scope body{newSubgraph(s, pc.node, "act"), ""};
    OutPort d = subgraphData(body, 0);
    subgraphResult(body, op(body, "gelu", "Gelu", {d}));
    act = p.nestedOutput
              ? tensorMove(s, "act_tm", pc, TensorMoveRole::Removable, "nested-call-output")
              : pc;
  } else {
    act = op(s, "gelu", "Gelu", {ub});
  }
  OutPort w2 = op(s, "w2", "Const");
  return op(s, "down", "MatMulD", {act, w2});
}

void ModelBuilder::layer(size_t index, OutPort &h, OutPort mask,
                         std::optional<NodeId> &prevKvUpdate) {
  const LayerPlan p = drawPlan();
  const size_t before = nodes_;
  Scope s{0, "b"};
  s.prefix += std::to_string(index); // (not "b" + ...: GCC 12 warns falsely)
  s.prefix += '_';

  // Pre-norm input. Residual write: an in-place add on a copy of the residual
  // stream, which the residual Add below still reads. Deleting the copy would
  // let the write reach that reader, and the reader depends on the writer, so
  // no control edge can order them: necessary.
  OutPort x = h;
  if (p.residualWrite) {
    OutPort c = op(s, "f_c", "Const");
    OutPort t = tensorMove(s, "f_tm", h, TensorMoveRole::Necessary, "residual-write");
    x = op(s, "f_upd", "ScatterAdd", {t, c});
  }
  OutPort ln1 = layerNorm(s, "l1", x);

  // Attention projections.
  OutPort a = ln1;
  if (p.lnDirect) {
    a = tensorMove(s, "a_tm", ln1, TensorMoveRole::Removable, "ln-direct");
    if (p.ctrlHint && prevKvUpdate)
      graph(s).addCtrlEdge(*prevKvUpdate, a.node); // schedule hint: last KV update first
  }
  OutPort wq = op(s, "wq", "Const");
  if (p.weightRead)
    wq = tensorMove(s, "i_tm", wq, TensorMoveRole::Removable, "weight-read");
  OutPort q = op(s, "q", "MatMulD", {a, wq});
  OutPort wk = op(s, "wk", "Const");
  OutPort k = op(s, "k", "MatMulD", {a, wk});
  OutPort wv = op(s, "wv", "Const");
  OutPort v = op(s, "v", "MatMulD", {a, wv});
  if (p.view) {
    OutPort qr = op(s, "b_view", "Reshape", {q});
    q = tensorMove(s, "b_tm", qr, TensorMoveRole::Removable, "through-view");
  }
  OutPort scores = op(s, "s", "BatchMatMul", {q, k});

  // KV cache: the layer's variable, written in place by Assign; everything
  // that reads it consumes the Assign's output.
  OutPort kc = op(s, "kc", "Variable");
  OutPort ku = op(s, "ku", "ScatterUpdate", {kc, k});
  prevKvUpdate = ku.node;
  OutPort kr = ku;
  if (p.kvRead)
    kr = tensorMove(s, "d_tm", ku, TensorMoveRole::Removable, "variable-read");
  OutPort sc = op(s, "sc", "MulD", {scores, kr});
  OutPort scale = op(s, "scl", "Const");
  OutPort scaled = op(s, "scaled", "MulD", {sc, scale});
  OutPort m = mask;
  if (p.mask)
    m = tensorMove(s, "m_tm", mask, TensorMoveRole::Conservative, "input-no-grant");
  OutPort masked = op(s, "masked", "AddD", {scaled, m});
  OutPort sm = op(s, "sm", "SoftmaxD", {masked});
  OutPort ka;
  if (p.kvWrite) {
    // AssignAdd into a copy of the variable: deleting the copy writes the
    // variable itself.
    OutPort t = tensorMove(s, "c_tm", ku, TensorMoveRole::Necessary, "variable-write");
    ka = op(s, "ka", "ScatterAdd", {t, v});
  } else {
    ka = op(s, "ka", "MulD", {ku, v});
  }
  OutPort oa = sm;
  if (p.siblingWrite) {
    // v is also read by ka (a sibling that the writer does not reach):
    // removable once the control edge ka -> g_upd is added (scenario 5).
    OutPort t = tensorMove(s, "g_tm", v, TensorMoveRole::Removable, "sibling-write");
    oa = op(s, "g_upd", "ScatterUpdate", {t, sm});
  }
  OutPort o = op(s, "o", "MatMulD", {oa, ka});
  OutPort wo = op(s, "wo", "Const");
  if (p.weightWrite) {
    // A low-rank update applied in place to a copy of the weight: deleting
    // the copy writes the weight.
    OutPort delta = op(s, "h_c", "Const");
    OutPort t = tensorMove(s, "h_tm", wo, TensorMoveRole::Necessary, "weight-write");
    wo = op(s, "h_upd", "ScatterAdd", {t, delta});
  }
  OutPort proj = op(s, "proj", "MatMulD", {o, wo});
  OutPort bo = op(s, "bo", "Const");
  OutPort projb = op(s, "projb", "AddD", {proj, bo});
  if (p.allReduceInput)
    projb = tensorMove(s, "e_tm", projb, TensorMoveRole::Removable, "allreduce-input");
  // HcomAllReduce scribbles on its input: the copy (or projb) is read by
  // nothing else.
  OutPort ar = op(s, "ar", "HcomAllReduce", {projb});
  OutPort h2 = op(s, "res1", "AddD", {h, ar});

  // MLP, sometimes behind a PartitionedCall (with a nested one inside).
  OutPort ln2 = layerNorm(s, "l2", h2);
  OutPort mlp;
  if (p.call) {
    OutPort pc = op(s, "mlp", "PartitionedCall", {ln2});
    Scope body{newSubgraph(s, pc.node, "mlp"), ""};
    OutPort d = subgraphData(body, 0);
    if (p.callInput)
      d = tensorMove(body, "d_tm", d, TensorMoveRole::Removable, "call-input");
    subgraphResult(body, mlpBody(body, d, p));
    mlp = p.callOutput ? tensorMove(s, "p_tm", pc, TensorMoveRole::Removable, "call-output") : pc;
  } else {
    mlp = mlpBody(s, ln2, p);
  }
  h = op(s, "res2", "AddD", {h2, mlp});

  if (p.ifEnd) {
    // A data-dependent branch on the hidden state (early-exit style).
    OutPort cond = op(s, "ifc", "ReduceMaxD", {h});
    OutPort iff = op(s, "if", "If", {cond, h});
    const char *branchOps[2] = {"ReluD", "TanhD"};
    const char *branchTags[2] = {"then", "else"};
    for (int b = 0; b < 2; ++b) {
      Scope branch{newSubgraph(s, iff.node, branchTags[b]), ""};
      OutPort d = subgraphData(branch, 1);
      subgraphResult(branch, op(branch, "r", branchOps[b], {d}));
    }
    OutPort t = tensorMove(s, "if_tm", iff, TensorMoveRole::Conservative, "if-output");
    h = op(s, "res3", "AddD", {h, t});
  }
  if (nodes_ - before > kMaxLayerNodes)
    throw std::logic_error("model builder: a layer exceeded kMaxLayerNodes");
}

Module ModelBuilder::build() {
  size_t target = std::max(opts_.nodes, kFixedNodes);
  m_.addGraph("model");
  Scope root{0, ""};
  // (Graph references are not held across layers: adding subgraphs moves them.)
  OutPort ids = op(root, "x", "Data");
  m_.root().node(ids.node).attrs["index"] = AttrValue::ofInt(0);
  OutPort idsCopy = tensorMove(root, "x_tm", ids, TensorMoveRole::Conservative, "input-no-grant");
  OutPort table = op(root, "emb", "Const");
  OutPort h = op(root, "embed", "GatherD", {table, idsCopy});
  OutPort mask = op(root, "mask", "Data");
  m_.root().node(mask.node).attrs["index"] = AttrValue::ofInt(1);

  std::optional<NodeId> prevKvUpdate;
  // Whole layers while one surely fits (keeping one slot for NetOutput).
  while (target - nodes_ >= kMaxLayerNodes + 1)
    layer(info_.layers++, h, mask, prevKvUpdate);
  // Pad with a chain of element-wise ops to meet the size exactly.
  for (size_t i = 0; target - nodes_ > 1; ++i)
    h = op(root, std::string("pad").append(std::to_string(i)), "ReluD", {h});
  op(root, "out", "NetOutput", {h});

  info_.nodes = nodes_;
  for (NodeId n = 0; n < m_.root().capacity(); ++n)
    info_.controlEdges += m_.root().node(n).ctrlOut.size();
  return std::move(m_);
}

} // namespace

std::string_view tensorMoveRoleName(TensorMoveRole r) {
  switch (r) {
  case TensorMoveRole::Removable:
    return "removable";
  case TensorMoveRole::Necessary:
    return "necessary";
  case TensorMoveRole::Conservative:
    return "conservative";
  }
  return "?";
}

size_t ModelInfo::count(TensorMoveRole r) const {
  size_t n = 0;
  for (const ModelTensorMove &t : tensorMoves)
    n += t.role == r;
  return n;
}

Module buildModelGraph(const ModelOptions &opts, ModelInfo *info) {
  ModelInfo local;
  ModelInfo &out = info ? *info : local;
  out = ModelInfo{};
  ModelBuilder builder(opts, out);
  return builder.build();
}

} // namespace graphvet::props
