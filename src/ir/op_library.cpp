// The op table and the attribute-driven memory behaviour of semantics.md §1.
#include "ir/op_library.h"

#include "ir/ops/families.h"

#include <algorithm>
#include <array>
#include <vector>

namespace graphvet {
namespace {

constexpr PortAlias kOut0RefIn0[] = {{0, 0}};
constexpr std::span<const PortAlias> kNone{};

// One row per op type with a memory behaviour of its own. Ops not listed are
// Ordinary with one output.
constexpr OpInfo kOps[] = {
    // Sources.
    {"Data", OpKind::DataSource, 1, kNone, kNone, false,
     "root: user input `index`; subgraph: the parent's input `_parent_node_index`"},
    {"AippData", OpKind::DataSource, 1, kNone, kNone, false, "user input (like Data)"},
    {"AnnData", OpKind::DataSource, 1, kNone, kNone, false, "user input (like Data)"},
    {"Variable", OpKind::Variable, 1, kNone, kNone, false, "persistent variable buffer"},
    {"VariableV2", OpKind::Variable, 1, kNone, kNone, false, "persistent variable buffer"},
    {"RefData", OpKind::Variable, 1, kNone, kNone, false, "persistent variable buffer"},
    {"Const", OpKind::Weight, 1, kNone, kNone, false, "immutable weight"},
    {"Constant", OpKind::Weight, 1, kNone, kNone, false, "immutable weight"},
    {"ConstPlaceHolder", OpKind::Weight, 1, kNone, kNone, false, "immutable weight"},
    {"FileConstant", OpKind::Weight, 1, kNone, kNone, false, "immutable weight"},
    // Copies.
    {"TensorMove", OpKind::Copy, 1, kNone, kNone, false, "copies input 0 into a fresh buffer"},
    {"Identity", OpKind::Copy, 1, kNone, kNone, false, "copies input 0 into a fresh buffer"},
    {"MemcpyAsync", OpKind::Copy, 1, kNone, kNone, false, "copies input 0 into a fresh buffer"},
    // Ref writers: output 0 is input 0, written in place.
    {"ScatterUpdate", OpKind::Ordinary, 1, kOut0RefIn0, kNone, false, "writes input 0 in place"},
    {"ScatterNdUpdate", OpKind::Ordinary, 1, kOut0RefIn0, kNone, false, "writes input 0 in place"},
    {"ScatterAdd", OpKind::Ordinary, 1, kOut0RefIn0, kNone, false, "writes input 0 in place"},
    // Views: output 0 shares input 0's buffer, no write.
    // Scope writers: scribble on every input.
    {"HcomAllReduce", OpKind::Ordinary, 1, kNone, kNone, true, "scribbles on every input"},
    {"HcomBroadcast", OpKind::Ordinary, 1, kNone, kNone, true, "scribbles on every input"},
    {"HcomReduceScatter", OpKind::Ordinary, 1, kNone, kNone, true, "scribbles on every input"},
    // Graph boundaries and wrappers.
    {"NetOutput", OpKind::NetOutput, 0, kNone, kNone, false,
     "graph outputs (root) or subgraph results"},
    {"PartitionedCall", OpKind::Call, 1, kNone, kNone, false,
     "transparent subgraph call; output j is the subgraph result j"},
    {"StatefulPartitionedCall", OpKind::Call, 1, kNone, kNone, false,
     "transparent subgraph call; output j is the subgraph result j"},
    {"If", OpKind::If, 1, kNone, kNone, false, "then/else branch chosen by input 0, one step"},
    {"StatelessIf", OpKind::If, 1, kNone, kNone, false, "like If"},
    {"_If", OpKind::If, 1, kNone, kNone, false, "like If"},
    {"Case", OpKind::Case, 1, kNone, kNone, false, "branch (input 0 mod N), one step"},
    {"StatelessCase", OpKind::Case, 1, kNone, kNone, false, "like Case"},
    {"While", OpKind::While, kOutputsPerInput, kNone, kNone, false,
     "cond/body loop; output j is input j, updated in place"},
    {"StatelessWhile", OpKind::While, kOutputsPerInput, kNone, kNone, false, "like While"},
    {"_While", OpKind::While, kOutputsPerInput, kNone, kNone, false, "like While"},
};

/// The pattern column (TVM's TOpPattern), one row per classified op type;
/// every other type is Opaque. Kept apart from the memory rows and the
/// numeric family rows so that the column reads as one table.
struct PatternRow {
  std::string_view type;
  OpPattern pattern;
};
constexpr PatternRow kPatternColumn[] = {
    // Element-wise unary math, activations, casts and predicates.
    {"Abs", OpPattern::ElemWise},
    {"Neg", OpPattern::ElemWise},
    {"Sign", OpPattern::ElemWise},
    {"Exp", OpPattern::ElemWise},
    {"Log", OpPattern::ElemWise},
    {"Sqrt", OpPattern::ElemWise},
    {"Reciprocal", OpPattern::ElemWise},
    {"Tanh", OpPattern::ElemWise},
    {"Erf", OpPattern::ElemWise},
    {"Floor", OpPattern::ElemWise},
    {"Ceil", OpPattern::ElemWise},
    {"Round", OpPattern::ElemWise},
    {"Relu", OpPattern::ElemWise},
    {"LeakyRelu", OpPattern::ElemWise},
    {"Elu", OpPattern::ElemWise},
    {"Selu", OpPattern::ElemWise},
    {"Celu", OpPattern::ElemWise},
    {"Sigmoid", OpPattern::ElemWise},
    {"HardSigmoid", OpPattern::ElemWise},
    {"HardSwish", OpPattern::ElemWise},
    {"Softplus", OpPattern::ElemWise},
    {"Softsign", OpPattern::ElemWise},
    {"Not", OpPattern::ElemWise},
    {"IsNaN", OpPattern::ElemWise},
    {"IsInf", OpPattern::ElemWise},
    {"Cast", OpPattern::ElemWise},
    // Binary and variadic element-wise ops with numpy broadcasting (an edge
    // whose input already has the result's type counts as ElemWise).
    {"Add", OpPattern::Broadcast},
    {"Sub", OpPattern::Broadcast},
    {"Mul", OpPattern::Broadcast},
    {"Div", OpPattern::Broadcast},
    {"Pow", OpPattern::Broadcast},
    {"Mod", OpPattern::Broadcast},
    {"Max", OpPattern::Broadcast},
    {"Min", OpPattern::Broadcast},
    {"Sum", OpPattern::Broadcast},
    {"Mean", OpPattern::Broadcast},
    {"Clip", OpPattern::Broadcast},
    {"PRelu", OpPattern::Broadcast},
    {"Equal", OpPattern::Broadcast},
    {"Less", OpPattern::Broadcast},
    {"Greater", OpPattern::Broadcast},
    {"LessOrEqual", OpPattern::Broadcast},
    {"GreaterOrEqual", OpPattern::Broadcast},
    {"And", OpPattern::Broadcast},
    {"Or", OpPattern::Broadcast},
    {"Xor", OpPattern::Broadcast},
    {"Where", OpPattern::Broadcast},
    {"CastLike", OpPattern::Broadcast},
    // Data movement: each output element is one input element.
    {"Reshape", OpPattern::Injective},
    {"Flatten", OpPattern::Injective},
    {"Squeeze", OpPattern::Injective},
    {"Unsqueeze", OpPattern::Injective},
    {"Expand", OpPattern::Injective},
    {"Transpose", OpPattern::Injective},
    {"Concat", OpPattern::Injective},
    {"Split", OpPattern::Injective},
    {"Slice", OpPattern::Injective},
    {"Gather", OpPattern::Injective},
    {"Tile", OpPattern::Injective},
    {"Pad", OpPattern::Injective},
    {"DepthToSpace", OpPattern::Injective},
    {"SpaceToDepth", OpPattern::Injective},
    {"Resize", OpPattern::Injective},
    // Commutative reductions.
    {"ReduceSum", OpPattern::CommReduce},
    {"ReduceMean", OpPattern::CommReduce},
    {"ReduceMax", OpPattern::CommReduce},
    {"ReduceMin", OpPattern::CommReduce},
    {"ReduceProd", OpPattern::CommReduce},
    {"ReduceL1", OpPattern::CommReduce},
    {"ReduceL2", OpPattern::CommReduce},
    {"ReduceSumSquare", OpPattern::CommReduce},
    {"ReduceLogSum", OpPattern::CommReduce},
    {"ReduceLogSumExp", OpPattern::CommReduce},
    {"ArgMax", OpPattern::CommReduce},
    {"ArgMin", OpPattern::CommReduce},
    // Anchors: their element-wise consumers fuse into them.
    {"Conv", OpPattern::OutEWiseFusable},
    {"ConvTranspose", OpPattern::OutEWiseFusable},
    {"ConvInteger", OpPattern::OutEWiseFusable},
    {"QLinearConv", OpPattern::OutEWiseFusable},
    {"MatMul", OpPattern::OutEWiseFusable},
    {"Gemm", OpPattern::OutEWiseFusable},
    {"MaxPool", OpPattern::OutEWiseFusable},
    {"AveragePool", OpPattern::OutEWiseFusable},
    {"GlobalAveragePool", OpPattern::OutEWiseFusable},
    {"GlobalMaxPool", OpPattern::OutEWiseFusable},
    // Opaque (not listed): sources, NetOutput, copies (TensorMove, Identity),
    // variables and the Assign family, in-place and scribbling ops, random
    // ops and Dropout, calls and control flow, Shape/Size/ConstantOfShape/
    // Range, the softmax family and CumSum, the normalizations, MaxUnpool and
    // LSTM.
};

constexpr OpInfo kOrdinary{
    "", OpKind::Ordinary, 1, kNone, kNone, false, "computes fresh outputs from all input bytes"};

constexpr std::string_view kMemoryAttrs[] = {"index",
                                             "_parent_node_index",
                                             "outputs",
                                             "subgraphs",
                                             "_input_mutable",
                                             "ref_var_src_var_name",
                                             "continuous_input",
                                             "_no_padding_continuous_input",
                                             "max_iterations",
                                             "outK.ref_input",
                                             "outK.reuse_input",
                                             "outK.reuse_input_index",
                                             "outK.ref_var_src_var_name",
                                             "outK.dtype",
                                             "outK.shape",
                                             "inK._parent_node_index"};

std::optional<uint32_t> portIndexAttr(const Node &n, uint32_t out, const char *attr) {
  auto v = n.portIntAttr(true, out, attr);
  if (!v || *v < 0 || *v >= static_cast<int64_t>(n.inputs.size()))
    return std::nullopt;
  return static_cast<uint32_t>(*v);
}

std::optional<uint32_t> builtIn(std::span<const PortAlias> table, const Node &n, uint32_t out) {
  for (const PortAlias &a : table)
    if (a.output == out && a.input < n.inputs.size())
      return a.input;
  return std::nullopt;
}

} // namespace

const OpInfo &lookupOp(std::string_view type) {
  // Rows bucketed by (length, first, middle and last character), in table order: most types
  // are ordinary ops that match no row, and they should not pay a scan of
  // the whole table (opKind is called for every node a pass looks at).
  constexpr size_t kBuckets = 512;
  auto bucketOf = [](std::string_view t) {
    // Length and three characters: nearly one row per bucket, no full hash.
    size_t h = t.size() * 0x9e3779b1u;
    h ^= static_cast<unsigned char>(t[0]) * 0x85ebca6bu;
    h ^= static_cast<unsigned char>(t[t.size() / 2]) * 0xc2b2ae35u;
    h ^= static_cast<unsigned char>(t.back()) * 0x27d4eb2fu;
    return (h ^ (h >> 15)) % kBuckets;
  };
  static const std::array<std::vector<const OpInfo *>, kBuckets> buckets = [&] {
    std::array<std::vector<const OpInfo *>, kBuckets> b;
    for (const OpInfo *op : allOps())
      b[bucketOf(op->type)].push_back(op);
    return b;
  }();
  if (type.empty())
    return kOrdinary;
  for (const OpInfo *op : buckets[bucketOf(type)])
    if (op->type == type)
      return *op;
  return kOrdinary;
}

std::vector<const OpInfo *> allOps() {
  std::vector<const OpInfo *> all;
  for (const OpInfo &op : kOps)
    all.push_back(&op);
  for (std::span<const OpInfo> family : ops::numericFamilies())
    for (const OpInfo &op : family)
      all.push_back(&op);
  return all;
}

bool isNumericOp(std::string_view type) {
  const OpInfo &op = lookupOp(type);
  return op.infer && op.kernel;
}

const OpInfo *numericDefinition(const Node &n) {
  const OpInfo &op = lookupOp(n.type);
  if (!op.infer || !op.kernel)
    return nullptr;
  if (op.numericForm && !op.numericForm(n))
    return nullptr;
  return &op;
}

OpKind opKind(const Node &n) {
  return lookupOp(n.type).kind;
}

OpPattern opPattern(std::string_view type) {
  for (const PatternRow &row : kPatternColumn)
    if (row.type == type)
      return row.pattern;
  return OpPattern::Opaque;
}

std::string_view opPatternName(OpPattern p) {
  switch (p) {
  case OpPattern::ElemWise:
    return "ElemWise";
  case OpPattern::Broadcast:
    return "Broadcast";
  case OpPattern::Injective:
    return "Injective";
  case OpPattern::CommReduce:
    return "CommReduce";
  case OpPattern::OutEWiseFusable:
    return "OutEWiseFusable";
  case OpPattern::Tuple:
    return "Tuple";
  case OpPattern::Opaque:
    return "Opaque";
  }
  return "Opaque";
}

uint32_t defaultOutputCount(std::string_view type, size_t numInputs) {
  uint32_t d = lookupOp(type).defaultOutputs;
  return d == kOutputsPerInput ? static_cast<uint32_t>(numInputs) : d;
}

bool isCopy(const Node &n) {
  return opKind(n) == OpKind::Copy;
}
bool isTensorMove(const Node &n) {
  return n.type == "TensorMove";
}
bool isControlFlow(const Node &n) {
  OpKind k = opKind(n);
  return k == OpKind::If || k == OpKind::Case || k == OpKind::While;
}
bool holdsSubgraphs(const Node &n) {
  return opKind(n) == OpKind::Call || isControlFlow(n);
}
bool isVariableSource(const Node &n) {
  return opKind(n) == OpKind::Variable;
}
bool isWeightSource(const Node &n) {
  return opKind(n) == OpKind::Weight;
}

// Most nodes carry no attribute at all; the attribute-driven behaviour below
// is skipped for them without building port keys (a hot path of every pass
// and of the oracle on large graphs).

/// The memory plan's precedence (semantics.md §1, as the oracle's plan
/// binds): an output bound to a variable lives in the variable's buffer, and
/// output 0 of a copy is a fresh buffer, whatever ref or view attribute the
/// output also carries; only other outputs are refs or views.
/// Without attributes nothing needs checking: a copy's built-in row has no
/// ref or view, so the hot path pays no extra lookup.
static bool boundBeforeAliasing(const Node &n, uint32_t out) {
  if (n.attrs.empty())
    return false;
  return refVarSrcName(n, out) || (out == 0 && isCopy(n));
}

std::optional<uint32_t> refInput(const Node &n, uint32_t out) {
  if (boundBeforeAliasing(n, out))
    return std::nullopt;
  if (!n.attrs.empty() && n.portAttr(true, out, "ref_input"))
    return portIndexAttr(n, out, "ref_input");
  return builtIn(lookupOp(n.type).refOutputs, n, out);
}

std::optional<uint32_t> viewInput(const Node &n, uint32_t out) {
  if (boundBeforeAliasing(n, out))
    return std::nullopt;
  const AttrValue *reuse = n.attrs.empty() ? nullptr : n.portAttr(true, out, "reuse_input");
  if (reuse) {
    if (!reuse->isBool() || !reuse->asBool())
      return std::nullopt;
    if (!n.portAttr(true, out, "reuse_input_index"))
      return n.inputs.empty() ? std::nullopt : std::optional<uint32_t>(0);
    return portIndexAttr(n, out, "reuse_input_index");
  }
  return builtIn(lookupOp(n.type).viewOutputs, n, out);
}

std::optional<uint32_t> aliasedInput(const Node &n, uint32_t out) {
  if (auto r = refInput(n, out))
    return r;
  return viewInput(n, out);
}

std::vector<uint32_t> refWrittenInputs(const Node &n) {
  std::vector<uint32_t> out;
  for (uint32_t k = 0; k < n.numOutputs; ++k)
    if (auto r = refInput(n, k))
      out.push_back(*r);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool isInputMutable(const Node &n) {
  if (const AttrValue *v = n.attrs.empty() ? nullptr : n.attr("_input_mutable"))
    return v->isBool() && v->asBool();
  return lookupOp(n.type).inputMutable;
}

const std::string *refVarSrcName(const Node &n, uint32_t out) {
  if (n.attrs.empty())
    return nullptr;
  if (const std::string *s = n.portStringAttr(true, out, "ref_var_src_var_name"))
    return s;
  return n.stringAttr("ref_var_src_var_name");
}

bool needsContinuousInput(const Node &n) {
  if (n.attrs.empty())
    return false;
  return n.boolAttr("continuous_input") || n.boolAttr("_no_padding_continuous_input");
}

bool hasMemoryBehaviourAttrs(const Node &n) {
  for (const auto &[key, value] : n.attrs)
    if (key.starts_with("out") || key == "_input_mutable" || key == "ref_var_src_var_name" ||
        key == "continuous_input" || key == "_no_padding_continuous_input")
      return true;
  return false;
}

std::optional<uint32_t> dtypeSize(std::string_view dtype) {
  static constexpr std::pair<std::string_view, uint32_t> kSizes[] = {
      {"f32", 4}, {"f16", 2}, {"bf16", 2}, {"f64", 8}, {"i8", 1},  {"u8", 1},   {"i16", 2},
      {"u16", 2}, {"i32", 4}, {"u32", 4},  {"i64", 8}, {"u64", 8}, {"bool", 1},
  };
  for (auto [name, size] : kSizes)
    if (name == dtype)
      return size;
  return std::nullopt;
}

std::optional<uint64_t> outputBytes(const Node &n, uint32_t out) {
  uint64_t elem = 4;
  if (const AttrValue *d = n.portAttr(true, out, "dtype")) {
    const std::string *t = d->text();
    auto size = t ? dtypeSize(*t) : std::nullopt;
    if (!size)
      return std::nullopt;
    elem = *size;
  }
  uint64_t count = 4;
  if (const AttrValue *s = n.portAttr(true, out, "shape")) {
    if (!s->isList())
      return std::nullopt;
    count = 1;
    for (const AttrValue &dim : s->asList()) {
      if (!dim.isInt() || dim.asInt() < 0 || dim.asInt() > static_cast<int64_t>(kMaxBufferBytes))
        return std::nullopt;
      count *= static_cast<uint64_t>(dim.asInt());
      if (count > kMaxBufferBytes)
        return std::nullopt;
    }
  }
  uint64_t bytes = elem * count;
  if (bytes > kMaxBufferBytes)
    return std::nullopt;
  return bytes;
}

std::span<const std::string_view> memoryAttributeKeys() {
  return kMemoryAttrs;
}

} // namespace graphvet
