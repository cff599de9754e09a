// Type-preserving graph mutations and the filter behind midend_fuzzer's
// custom mutator and crossover.
#include "fuzz/typed_graph_mutator.h"

#include "ir/op_library.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/types.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>

namespace graphvet::fuzz {

std::string_view typedMutationName(TypedMutationKind kind) {
  switch (kind) {
  case TypedMutationKind::ConstValue:
    return "const-value";
  case TypedMutationKind::IntAttr:
    return "int-attr";
  case TypedMutationKind::InsertUnary:
    return "insert-unary";
  case TypedMutationKind::InsertCastPair:
    return "insert-cast-pair";
  case TypedMutationKind::InsertTransposePair:
    return "insert-transpose-pair";
  case TypedMutationKind::InsertIdentityArith:
    return "insert-identity-arith";
  case TypedMutationKind::DuplicateNode:
    return "duplicate-node";
  case TypedMutationKind::AddOutput:
    return "add-output";
  case TypedMutationKind::RewireSameType:
    return "rewire-same-type";
  case TypedMutationKind::BypassNode:
    return "bypass-node";
  case TypedMutationKind::SpliceFresh:
    return "splice-fresh";
  case TypedMutationKind::ChangeOption:
    return "change-option";
  case TypedMutationKind::ChangePipeline:
    return "change-pipeline";
  }
  return "?";
}

namespace {

ModuleTypes typesOf(const Module &m) {
  Diagnostics ignored; // candidates are filtered afterwards
  return inferModuleTypes(m, ignored);
}

size_t liveNodeCount(const Module &m) {
  size_t n = 0;
  for (GraphId g : m.canonicalGraphOrder())
    n += m.graph(g).numLiveNodes();
  return n;
}

bool hasRoom(const Module &m, const MidendLimits &limits, size_t extra) {
  return liveNodeCount(m) + extra <= limits.maxNodes;
}

std::string uniqueName(const Graph &g, const std::string &prefix) {
  for (size_t i = 0; i <= g.capacity() + 1; ++i) {
    std::string name = prefix + std::to_string(i);
    if (g.find(name) == kNoNode)
      return name;
  }
  return prefix + "_" + std::to_string(g.capacity() + 2);
}

/// Root graph most of the time: the level pipelines act there first.
GraphId pickGraph(const Module &m, MutationRng &rng) {
  std::vector<GraphId> gs = m.canonicalGraphOrder();
  if (gs.size() == 1 || rng.chance(2, 3))
    return 0;
  return rng.pick(gs);
}

bool isBoundary(const Node &n) {
  OpKind k = opKind(n);
  return k == OpKind::DataSource || k == OpKind::NetOutput;
}

NodeId netOutputOf(const Graph &g) {
  std::vector<NodeId> outs = g.nodesOfType("NetOutput");
  return outs.empty() ? kNoNode : outs.front();
}

/// A connected input slot, its source and the source's type.
struct TypedEdge {
  InPort slot;
  OutPort src;
  TensorType type;
};

std::vector<TypedEdge> typedEdges(const Graph &g, GraphId gid, const ModuleTypes &types) {
  std::vector<TypedEdge> edges;
  for (NodeId id : g.liveNodes()) {
    const Node &n = g.node(id);
    for (uint32_t i = 0; i < n.inputs.size(); ++i)
      if (n.inputs[i])
        if (const TensorType *t = types.of(gid, *n.inputs[i]))
          edges.push_back({{id, i}, *n.inputs[i], *t});
  }
  return edges;
}

/// Makes the new node `head` (already reading `e.src` through `tail`'s
/// chain) the source of the edge's slot, or of every reader of the source.
void rerouteThrough(Graph &g, const TypedEdge &e, NodeId head, NodeId tail, bool allReaders) {
  if (!allReaders) {
    g.setInput(e.slot, OutPort{tail, 0});
    return;
  }
  std::vector<InPort> readers = g.consumers(e.src);
  for (InPort r : readers)
    if (r.node != head)
      g.setInput(r, OutPort{tail, 0});
}

// --- values ---------------------------------------------------------------

/// Float values of the failure modes: signed zeros, NaN and infinities,
/// 2^24 and 2^24 + 1 (f32's integer limit), f16's largest finite value and
/// the first that rounds to inf, f16's smallest normal and subnormal, an f32
/// subnormal and maximum, and ordinary numbers.
constexpr double kFloatSpecials[] = {0.0,
                                     -0.0,
                                     1.0,
                                     -1.0,
                                     std::numeric_limits<double>::quiet_NaN(),
                                     std::numeric_limits<double>::infinity(),
                                     -std::numeric_limits<double>::infinity(),
                                     16777216.0,
                                     16777217.0,
                                     65504.0,
                                     65520.0,
                                     6.103515625e-05,
                                     5.9604644775390625e-08,
                                     1e-45,
                                     3.4028234663852886e38,
                                     0.5,
                                     2.0,
                                     3.0,
                                     -7.25,
                                     0.1};

int64_t intSpecial(DType t, MutationRng &rng) {
  switch (rng.below(10)) {
  case 0:
    return intMin(t);
  case 1:
    return static_cast<int64_t>(intMax(t));
  case 2:
    return -1;
  case 3:
    return 127 + rng.below(3); // i8/u8 edges
  case 4:
    return 255 + rng.below(3);
  case 5:
    return 65535;
  default:
    return static_cast<int64_t>(rng.below(5)); // 0..4
  }
}

/// Sets element i of `t` to a special value of its dtype.
void setSpecial(Tensor &t, int64_t i, MutationRng &rng) {
  DType d = t.dtype();
  if (d == DType::Bool)
    *t.at(i) = static_cast<uint8_t>(rng.below(2));
  else if (isFloat(d))
    t.setDouble(i, kFloatSpecials[rng.below(std::size(kFloatSpecials))]);
  else
    t.setInt(i, intSpecial(d, rng));
  t.setUndef(i, false);
}

std::shared_ptr<const Tensor> splatTensor(const TensorType &type, double floatValue,
                                          int64_t intValue) {
  auto t = std::make_shared<Tensor>(type);
  for (int64_t i = 0; i < t->size(); ++i) {
    if (type.dtype == DType::Bool)
      *t->at(i) = static_cast<uint8_t>(intValue != 0);
    else if (isFloat(type.dtype))
      t->setDouble(i, floatValue);
    else
      t->setInt(i, intValue);
  }
  return t;
}

NodeId addConst(Graph &g, const std::string &prefix, std::shared_ptr<const Tensor> value) {
  NodeId c = g.addNode(uniqueName(g, prefix), "Const");
  g.node(c).attrs["value"] = AttrValue::ofTensor(std::move(value));
  return c;
}

bool mutateConstValue(MidendCase &c, MutationRng &rng, const MidendLimits &) {
  std::vector<std::pair<GraphId, NodeId>> consts;
  for (GraphId g : c.module.canonicalGraphOrder())
    for (NodeId id : c.module.graph(g).nodesOfType("Const")) {
      const AttrValue *v = c.module.graph(g).node(id).attr("value");
      if (v && v->isTensor() && v->asTensor().size() > 0)
        consts.push_back({g, id});
    }
  if (consts.empty())
    return false;
  auto [g, id] = rng.pick(consts);
  Node &n = c.module.graph(g).node(id);
  const Tensor &old = n.attr("value")->asTensor();
  Tensor t = old;
  switch (rng.below(3)) {
  case 0: { // one element
    setSpecial(t, rng.below(static_cast<uint32_t>(t.size())), rng);
    break;
  }
  case 1: { // every element the same (identity-constant bait)
    setSpecial(t, 0, rng);
    for (int64_t i = 1; i < t.size(); ++i)
      t.copyElement(i, t, 0);
    break;
  }
  default: { // a few elements
    uint32_t k = 1 + rng.below(3);
    for (uint32_t j = 0; j < k; ++j)
      setSpecial(t, rng.below(static_cast<uint32_t>(t.size())), rng);
    break;
  }
  }
  if (t == old)
    return false;
  n.attrs["value"] = AttrValue::ofTensor(std::make_shared<const Tensor>(std::move(t)));
  return true;
}

// --- attributes -----------------------------------------------------------

/// Attribute keys a mutation may change: the op's own attributes, not port
/// descriptions (`out0.shape`), reserved `_` keys or a graph input's index.
bool isOpAttributeKey(const std::string &key) {
  return key.find('.') == std::string::npos && !key.starts_with("_") && key != "index";
}

int64_t otherSpelling(int64_t axis, int64_t rank) {
  return axis >= 0 ? axis - rank : axis + rank; // the same axis, written the other way
}

bool isFlagKey(const std::string &key) {
  return key == "keepdims" || key == "allowzero" || key == "fmod" || key == "transA" ||
         key == "transB" || key == "count_include_pad" || key == "ceil_mode" ||
         key == "exclusive" || key == "reverse" || key == "noop_with_empty_axes" ||
         key == "select_last_index" || key == "training_mode";
}

Shape randomPermutation(size_t n, MutationRng &rng) {
  Shape p(n);
  std::iota(p.begin(), p.end(), 0);
  for (size_t i = n; i > 1; --i)
    std::swap(p[i - 1], p[rng.below(static_cast<uint32_t>(i))]);
  return p;
}

AttrValue intList(const Shape &values) {
  AttrValue::List l;
  for (int64_t v : values)
    l.push_back(AttrValue::ofInt(v));
  return AttrValue::ofList(std::move(l));
}

bool mutateIntAttr(MidendCase &c, MutationRng &rng, const MidendLimits &) {
  GraphId gid = pickGraph(c.module, rng);
  Graph &g = c.module.graph(gid);
  ModuleTypes types = typesOf(c.module);
  struct Site {
    NodeId node;
    std::string key; ///< empty: add a missing `perm` or `keepdims`
  };
  std::vector<Site> sites;
  for (NodeId id : g.liveNodes()) {
    const Node &n = g.node(id);
    if (isBoundary(n) || opKind(n) != OpKind::Ordinary)
      continue;
    for (const auto &[key, value] : n.attrs)
      if (isOpAttributeKey(key) && (value.isInt() || value.isBool() || value.isList()))
        sites.push_back({id, key});
    if ((n.type == "Transpose" && !n.attr("perm")) ||
        (n.type.starts_with("Reduce") && !n.attr("keepdims")))
      sites.push_back({id, ""});
  }
  if (sites.empty())
    return false;
  Site s = rng.pick(sites);
  Node &n = g.node(s.node);
  int64_t rank = 4;
  if (!n.inputs.empty() && n.inputs[0])
    if (const TensorType *t = types.of(gid, *n.inputs[0]))
      rank = t->rank();
  if (s.key.empty()) {
    if (n.type == "Transpose")
      n.attrs["perm"] = intList(randomPermutation(static_cast<size_t>(rank), rng));
    else
      n.attrs["keepdims"] = AttrValue::ofInt(0);
    return true;
  }
  AttrValue &v = n.attrs[s.key];
  if (v.isBool()) {
    v = AttrValue::ofBool(!v.asBool());
    return true;
  }
  if (v.isInt()) {
    int64_t x = v.asInt();
    int64_t next;
    if (isFlagKey(s.key) && rng.chance(3, 4))
      next = x == 0 ? 1 : 0;
    else
      switch (rng.below(5)) {
      case 0:
        next = otherSpelling(x, rank);
        break;
      case 1:
        next = x + 1;
        break;
      case 2:
        next = x - 1;
        break;
      case 3:
        next = -1;
        break;
      default:
        next = static_cast<int64_t>(rng.below(static_cast<uint32_t>(std::max<int64_t>(rank, 1))));
        break;
      }
    if (next == x)
      return false;
    v = AttrValue::ofInt(next);
    return true;
  }
  // A list: ints only.
  Shape elems;
  for (const AttrValue &e : v.asList()) {
    if (!e.isInt())
      return false;
    elems.push_back(e.asInt());
  }
  if (s.key == "perm") {
    if (rng.chance(1, 3)) {
      n.attrs.erase("perm"); // absent means reverse
      return true;
    }
    Shape p = randomPermutation(elems.size(), rng);
    if (p == elems)
      return false;
    v = intList(p);
    return true;
  }
  if (elems.empty())
    return false;
  uint32_t i = rng.below(static_cast<uint32_t>(elems.size()));
  switch (rng.below(4)) {
  case 0:
  case 1:
    elems[i] = otherSpelling(elems[i], rank);
    break;
  case 2:
    elems[i] += rng.chance(1, 2) ? 1 : -1;
    break;
  default:
    if (elems.size() > 1)
      elems.erase(elems.begin() + i);
    else
      elems.push_back(otherSpelling(elems[0], rank) + 1);
    break;
  }
  v = intList(elems);
  return true;
}

// --- insertions on an edge ------------------------------------------------

constexpr const char *kFloatUnary[] = {"Neg",   "Abs",      "Relu",    "Sigmoid",  "Tanh",
                                       "Floor", "Ceil",     "Sqrt",    "Exp",      "Reciprocal",
                                       "Sign",  "Identity", "Erf",     "Softplus", "HardSwish",
                                       "Round", "Log",      "Softsign"};
constexpr const char *kSignedUnary[] = {"Neg", "Abs", "Relu", "Sign", "Identity"};
constexpr const char *kUnsignedUnary[] = {"Abs", "Sign", "Identity"};
constexpr const char *kBoolUnary[] = {"Not", "Identity"};

template <size_t N> const char *pickName(const char *const (&names)[N], MutationRng &rng) {
  return names[rng.below(static_cast<uint32_t>(N))];
}

const char *unaryFor(DType t, MutationRng &rng) {
  if (isFloat(t))
    return pickName(kFloatUnary, rng);
  if (t == DType::Bool)
    return pickName(kBoolUnary, rng);
  if (isSignedInteger(t))
    return pickName(kSignedUnary, rng);
  return pickName(kUnsignedUnary, rng);
}

/// Picks an edge of a graph; nullopt when the graph has none.
std::optional<TypedEdge> pickEdge(const Module &m, GraphId gid, MutationRng &rng) {
  std::vector<TypedEdge> edges = typedEdges(m.graph(gid), gid, typesOf(m));
  if (edges.empty())
    return std::nullopt;
  return rng.pick(edges);
}

bool insertUnary(MidendCase &c, MutationRng &rng, const MidendLimits &limits) {
  if (!hasRoom(c.module, limits, 1))
    return false;
  GraphId gid = pickGraph(c.module, rng);
  std::optional<TypedEdge> e = pickEdge(c.module, gid, rng);
  if (!e)
    return false;
  Graph &g = c.module.graph(gid);
  const char *op = unaryFor(e->type.dtype, rng);
  std::string prefix = op;
  std::transform(prefix.begin(), prefix.end(), prefix.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  NodeId u = g.addNode(uniqueName(g, prefix), op, {e->src});
  rerouteThrough(g, *e, u, u, rng.chance(1, 3));
  return true;
}

DType pickDType(MutationRng &rng) {
  constexpr DType kAll[] = {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I8,
                            DType::U8,  DType::I16, DType::U16,  DType::I32, DType::U32,
                            DType::I64, DType::U64, DType::Bool};
  return kAll[rng.below(static_cast<uint32_t>(std::size(kAll)))];
}

bool insertCastPair(MidendCase &c, MutationRng &rng, const MidendLimits &limits) {
  if (!hasRoom(c.module, limits, 2))
    return false;
  GraphId gid = pickGraph(c.module, rng);
  std::optional<TypedEdge> e = pickEdge(c.module, gid, rng);
  if (!e)
    return false;
  Graph &g = c.module.graph(gid);
  DType via = pickDType(rng);
  NodeId a = g.addNode(uniqueName(g, "cast"), "Cast", {e->src});
  g.node(a).attrs["to"] = AttrValue::ofIdent(std::string(dtypeName(via)));
  NodeId b = g.addNode(uniqueName(g, "cast"), "Cast", {OutPort{a, 0}});
  // Mostly back to the edge's dtype; sometimes on to a third one.
  DType to = rng.chance(3, 4) ? e->type.dtype : pickDType(rng);
  g.node(b).attrs["to"] = AttrValue::ofIdent(std::string(dtypeName(to)));
  rerouteThrough(g, *e, a, b, rng.chance(1, 3));
  return true;
}

Shape inversePermutation(const Shape &p) {
  Shape q(p.size());
  for (size_t i = 0; i < p.size(); ++i)
    q[static_cast<size_t>(p[i])] = static_cast<int64_t>(i);
  return q;
}

bool insertTransposePair(MidendCase &c, MutationRng &rng, const MidendLimits &limits) {
  if (!hasRoom(c.module, limits, 2))
    return false;
  GraphId gid = pickGraph(c.module, rng);
  std::optional<TypedEdge> e = pickEdge(c.module, gid, rng);
  if (!e || e->type.rank() < 1)
    return false;
  Graph &g = c.module.graph(gid);
  size_t rank = static_cast<size_t>(e->type.rank());
  NodeId a = g.addNode(uniqueName(g, "tr"), "Transpose", {e->src});
  NodeId b = g.addNode(uniqueName(g, "tr"), "Transpose", {OutPort{a, 0}});
  // One time in four both stay without `perm`: reverse twice is the identity.
  if (!rng.chance(1, 4)) {
    Shape p = randomPermutation(rank, rng);
    g.node(a).attrs["perm"] = intList(p);
    // Mostly the inverse; sometimes another permutation (a shape-changing
    // composition a pass must not cancel; the filter keeps it when the
    // readers accept the new shape).
    Shape q = rng.chance(7, 8) ? inversePermutation(p) : randomPermutation(rank, rng);
    g.node(b).attrs["perm"] = intList(q);
  }
  rerouteThrough(g, *e, a, b, rng.chance(1, 3));
  return true;
}

/// x op c where c is (nearly) the identity of op; c's shape may broadcast
/// into x's or widen the result.
bool insertIdentityArith(MidendCase &c, MutationRng &rng, const MidendLimits &limits) {
  if (!hasRoom(c.module, limits, 2))
    return false;
  GraphId gid = pickGraph(c.module, rng);
  std::optional<TypedEdge> e = pickEdge(c.module, gid, rng);
  if (!e || e->type.dtype == DType::Bool)
    return false;
  Graph &g = c.module.graph(gid);
  struct Arith {
    const char *op;
    double identity;
    bool commutes;
  };
  constexpr Arith kArith[] = {
      {"Add", 0.0, true},   {"Add", -0.0, true},      {"Sub", 0.0, false},
      {"Sub", -0.0, false}, {"Mul", 1.0, true},       {"Div", 1.0, false},
      {"Pow", 1.0, false},  {"Max", -INFINITY, true}, {"Min", INFINITY, true}};
  const Arith &a = kArith[rng.below(static_cast<uint32_t>(std::size(kArith)))];
  TensorType ct{e->type.dtype, {}};
  switch (rng.below(5)) {
  case 0: // scalar
    break;
  case 1:
    ct.shape = {1};
    break;
  case 2:
    ct.shape = e->type.shape;
    break;
  case 3: // a suffix of x's shape
    if (!e->type.shape.empty())
      ct.shape.assign(e->type.shape.begin() + rng.below(static_cast<uint32_t>(e->type.rank())),
                      e->type.shape.end());
    break;
  default: // widens the result: [2, ...x]
    ct.shape = e->type.shape;
    ct.shape.insert(ct.shape.begin(), 2);
    break;
  }
  std::optional<int64_t> elements = ct.checkedElements();
  if (!elements || *elements > limits.maxElements)
    return false;
  double fv = a.identity;
  int64_t iv = std::isinf(a.identity)
                   ? (a.identity < 0 ? intMin(ct.dtype) : static_cast<int64_t>(intMax(ct.dtype)))
                   : static_cast<int64_t>(a.identity);
  if (rng.chance(1, 4)) { // near misses: NaN, -0, 2^24 + 1, ...
    fv = kFloatSpecials[rng.below(static_cast<uint32_t>(std::size(kFloatSpecials)))];
    iv = intSpecial(ct.dtype, rng);
  }
  NodeId k = addConst(g, "k", splatTensor(ct, fv, iv));
  std::vector<std::optional<OutPort>> operands{e->src, OutPort{k, 0}};
  if (a.commutes && rng.chance(1, 2))
    std::swap(operands[0], operands[1]);
  NodeId n = g.addNode(uniqueName(g, "id"), a.op, operands);
  rerouteThrough(g, *e, n, n, rng.chance(1, 3));
  return true;
}

// --- structure ------------------------------------------------------------

bool duplicateNode(MidendCase &c, MutationRng &rng, const MidendLimits &limits) {
  if (!hasRoom(c.module, limits, 1))
    return false;
  GraphId gid = pickGraph(c.module, rng);
  Graph &g = c.module.graph(gid);
  std::vector<NodeId> candidates;
  for (NodeId id : g.liveNodes()) {
    const Node &n = g.node(id);
    OpKind k = opKind(n);
    if ((k == OpKind::Ordinary || k == OpKind::Weight) && !holdsSubgraphs(n) && n.numOutputs > 0)
      candidates.push_back(id);
  }
  if (candidates.empty())
    return false;
  NodeId orig = rng.pick(candidates);
  Node copy = g.node(orig);
  NodeId dup =
      g.addNode(uniqueName(g, copy.name + "_dup"), copy.type, copy.inputs, copy.numOutputs);
  g.node(dup).attrs = copy.attrs;
  uint32_t k = rng.below(copy.numOutputs);
  std::vector<InPort> readers = g.consumers(OutPort{orig, k});
  NodeId out = netOutputOf(g);
  if (gid == 0 && out != kNoNode && (readers.empty() || rng.chance(1, 3))) {
    g.appendInput(out, OutPort{dup, k}); // both stay live
    return true;
  }
  if (readers.empty())
    return false;
  g.setInput(rng.pick(readers), OutPort{dup, k});
  return true;
}

bool addOutput(MidendCase &c, MutationRng &rng, const MidendLimits &) {
  Graph &g = c.module.root();
  NodeId out = netOutputOf(g);
  if (out == kNoNode)
    return false;
  std::vector<OutPort> ports;
  for (NodeId id : g.liveNodes())
    if (id != out)
      for (uint32_t k = 0; k < g.node(id).numOutputs; ++k)
        ports.push_back({id, k});
  if (ports.empty())
    return false;
  g.appendInput(out, rng.pick(ports));
  return true;
}

bool rewireSameType(MidendCase &c, MutationRng &rng, const MidendLimits &) {
  GraphId gid = pickGraph(c.module, rng);
  ModuleTypes types = typesOf(c.module);
  Graph &g = c.module.graph(gid);
  std::vector<TypedEdge> edges = typedEdges(g, gid, types);
  if (edges.empty())
    return false;
  TypedEdge e = rng.pick(edges);
  std::vector<OutPort> same;
  for (NodeId id : g.liveNodes())
    for (uint32_t k = 0; k < g.node(id).numOutputs; ++k) {
      OutPort p{id, k};
      const TensorType *t = types.of(gid, p);
      if (t && *t == e.type && p != e.src && id != e.slot.node && !g.reaches(e.slot.node, id))
        same.push_back(p);
    }
  if (same.empty())
    return false;
  g.setInput(e.slot, rng.pick(same));
  return true;
}

bool bypassNode(MidendCase &c, MutationRng &rng, const MidendLimits &) {
  GraphId gid = pickGraph(c.module, rng);
  ModuleTypes types = typesOf(c.module);
  Graph &g = c.module.graph(gid);
  std::vector<NodeId> candidates;
  for (NodeId id : g.liveNodes()) {
    const Node &n = g.node(id);
    OpKind k = opKind(n);
    if ((k != OpKind::Ordinary && k != OpKind::Copy) || holdsSubgraphs(n) || n.numOutputs != 1 ||
        n.inputs.empty() || !n.inputs[0])
      continue;
    const TensorType *in = types.of(gid, *n.inputs[0]);
    const TensorType *out = types.of(gid, id, 0);
    if (in && out && *in == *out)
      candidates.push_back(id);
  }
  if (candidates.empty())
    return false;
  NodeId id = rng.pick(candidates);
  OutPort src = *g.node(id).inputs[0];
  g.replaceAllUses(OutPort{id, 0}, src);
  g.removeNode(id);
  return true;
}

bool spliceFresh(MidendCase &c, MutationRng &rng, const MidendLimits &limits) {
  MidendCase donor = freshTypedCase(rng, limits);
  return spliceTyped(c.module, donor.module, rng, limits);
}

bool changeOption(MidendCase &c, MutationRng &rng, const MidendLimits &) {
  struct Choice {
    const char *key;
    std::vector<const char *> values;
  };
  static const Choice kOptions[] = {
      {"convert_layout.target", {"NHWC", "NCHW"}},
      {"legalize.target", {"dsp", "npu"}},
      {"partition_graph.target", {"dsp", "npu"}},
      {"fold_constant.max_elements", {"1", "4", "64"}},
      {"fold_constant.fold_shape_ops", {"true", "false"}},
      {"fold_constant.inline_if", {"true", "false"}},
      {"combine_parallel_dense.min_num_branches", {"2", "3"}},
      {"fuse_ops.max_fuse_depth", {"1", "2", "3"}},
      {"fuse_ops.max_args", {"1", "2", "3"}},
      {"simplify_inference.batch_norm", {"true", "false"}},
      {"simplify_inference.layer_norm", {"true", "false"}},
      {"fold_scale_axis.backward", {"true", "false"}},
      {"fold_scale_axis.forward", {"true", "false"}},
  };
  const Choice &o = kOptions[rng.below(static_cast<uint32_t>(std::size(kOptions)))];
  auto it = c.module.options.find(o.key);
  if (it != c.module.options.end() && rng.chance(1, 3)) {
    c.module.options.erase(it);
    return true;
  }
  std::string value = o.values[rng.below(static_cast<uint32_t>(o.values.size()))];
  if (it != c.module.options.end() && it->second == value)
    return false;
  c.module.options[o.key] = value;
  return true;
}

/// The target option a pass needs to act at all.
void addTargetOptionFor(MidendCase &c, MutationRng &rng) {
  if (c.choice == "convert-layout" && !c.module.options.count("convert_layout.target"))
    c.module.options["convert_layout.target"] = rng.chance(1, 2) ? "NHWC" : "NCHW";
  if ((c.choice == "legalize" || c.choice == "partition-graph")) {
    std::string key = c.choice == "legalize" ? "legalize.target" : "partition_graph.target";
    if (!c.module.options.count(key))
      c.module.options[key] = rng.chance(1, 2) ? "dsp" : "npu";
  }
}

bool changePipeline(MidendCase &c, MutationRng &rng, const MidendLimits &) {
  std::span<const std::string_view> choices = midendPipelineChoices();
  std::string next(choices[rng.below(static_cast<uint32_t>(choices.size()))]);
  if (next == c.choice)
    return false;
  c.choice = next;
  if (rng.chance(3, 4))
    addTargetOptionFor(c, rng);
  return true;
}

using TypedMutationFn = bool (*)(MidendCase &, MutationRng &, const MidendLimits &);

struct WeightedTypedMutation {
  TypedMutationKind kind;
  TypedMutationFn fn;
  uint32_t weight;
};

constexpr WeightedTypedMutation kTypedMutations[] = {
    {TypedMutationKind::ConstValue, mutateConstValue, 4},
    {TypedMutationKind::IntAttr, mutateIntAttr, 3},
    {TypedMutationKind::InsertUnary, insertUnary, 3},
    {TypedMutationKind::InsertCastPair, insertCastPair, 3},
    {TypedMutationKind::InsertTransposePair, insertTransposePair, 2},
    {TypedMutationKind::InsertIdentityArith, insertIdentityArith, 3},
    {TypedMutationKind::DuplicateNode, duplicateNode, 3},
    {TypedMutationKind::AddOutput, addOutput, 1},
    {TypedMutationKind::RewireSameType, rewireSameType, 2},
    {TypedMutationKind::BypassNode, bypassNode, 3},
    {TypedMutationKind::SpliceFresh, spliceFresh, 1},
    {TypedMutationKind::ChangeOption, changeOption, 1},
    {TypedMutationKind::ChangePipeline, changePipeline, 2},
};
static_assert(std::size(kTypedMutations) == kNumTypedMutationKinds);

/// Picks kinds by weight until one applies (bounded).
std::optional<TypedMutationKind> mutateTypedOnce(MidendCase &c, MutationRng &rng,
                                                 const MidendLimits &limits) {
  return drawWeighted(kTypedMutations, rng, [&](const WeightedTypedMutation &w) {
    return applyTypedMutation(c, w.kind, rng, limits);
  });
}

} // namespace

bool applyTypedMutation(MidendCase &c, TypedMutationKind kind, MutationRng &rng,
                        const MidendLimits &limits) {
  return applyFromTable(kTypedMutations, kind, c, rng, limits);
}

MidendCase freshTypedCase(MutationRng &rng, const MidendLimits &limits) {
  // f32 most often; the narrow floats and integers too.
  constexpr DType kDTypes[] = {DType::F32, DType::F32,  DType::F32, DType::F16,
                               DType::F16, DType::BF16, DType::F64, DType::I32,
                               DType::I64, DType::I8,   DType::U8};
  DType dtype = kDTypes[rng.below(static_cast<uint32_t>(std::size(kDTypes)))];
  Shape shape;
  uint32_t rank = rng.below(5);
  int64_t elements = 1;
  for (uint32_t i = 0; i < rank; ++i) {
    int64_t d = 1 + rng.below(3);
    if (elements * d > 64)
      d = 1;
    elements *= d;
    shape.push_back(d);
  }
  MidendCase c;
  std::span<const std::string_view> choices = midendPipelineChoices();
  c.choice = std::string(choices[rng.below(static_cast<uint32_t>(choices.size()))]);
  c.module.addGraph("fresh");
  Graph &g = c.module.root();
  auto addInput = [&](int64_t index) {
    NodeId d = g.addNode(uniqueName(g, "x"), "Data");
    g.node(d).attrs["index"] = AttrValue::ofInt(index);
    g.node(d).attrs["out0.dtype"] = AttrValue::ofIdent(std::string(dtypeName(dtype)));
    g.node(d).attrs["out0.shape"] = intList(shape);
    return d;
  };
  NodeId x = addInput(0);
  OutPort result{x, 0};
  if (rng.chance(1, 2)) {
    constexpr const char *kBinary[] = {"Add", "Mul", "Sub", "Max", "Min"};
    NodeId y = addInput(1);
    result = {g.addNode("b", kBinary[rng.below(5)], {OutPort{x, 0}, OutPort{y, 0}}), 0};
  }
  g.addNode("out", "NetOutput", {result});
  addTargetOptionFor(c, rng);

  // Grow it by type-preserving insertions, each kept only when well typed.
  constexpr TypedMutationKind kGrow[] = {TypedMutationKind::InsertUnary,
                                         TypedMutationKind::InsertCastPair,
                                         TypedMutationKind::InsertTransposePair,
                                         TypedMutationKind::InsertIdentityArith,
                                         TypedMutationKind::DuplicateNode,
                                         TypedMutationKind::ConstValue,
                                         TypedMutationKind::IntAttr,
                                         TypedMutationKind::AddOutput};
  uint32_t steps = 2 + rng.below(5);
  for (uint32_t i = 0; i < steps; ++i) {
    MidendCase next = c;
    TypedMutationKind kind = kGrow[rng.below(static_cast<uint32_t>(std::size(kGrow)))];
    if (applyTypedMutation(next, kind, rng, limits) &&
        classifyModuleForMidend(next.module, limits) == InputStatus::Accepted)
      c = std::move(next);
  }
  return c;
}

bool spliceTyped(Module &m, const Module &donor, MutationRng &rng, const MidendLimits &limits) {
  const Graph &dg = donor.root();
  std::optional<std::vector<NodeId>> order = dg.topoOrder();
  if (!order)
    return false;
  std::vector<NodeId> movable;
  for (NodeId id : *order)
    if (!isBoundary(dg.node(id)) && !holdsSubgraphs(dg.node(id)) &&
        opKind(dg.node(id)) == OpKind::Ordinary)
      movable.push_back(id);
  if (movable.empty())
    return false;
  uint32_t len = 1 + rng.below(std::min<uint32_t>(4, static_cast<uint32_t>(movable.size())));
  uint32_t start = rng.below(static_cast<uint32_t>(movable.size()) - len + 1);
  std::vector<NodeId> window(movable.begin() + start, movable.begin() + start + len);
  if (!hasRoom(m, limits, 2 * window.size()))
    return false;

  ModuleTypes donorTypes = typesOf(donor);
  ModuleTypes hostTypes = typesOf(m);
  Graph &g = m.root();
  NodeId out = netOutputOf(g);
  if (out == kNoNode)
    return false;
  std::vector<std::pair<NodeId, NodeId>> copies; // (donor, host), window and its constants
  auto hostOf = [&](NodeId d) {
    for (auto [a, b] : copies)
      if (a == d)
        return b;
    return kNoNode;
  };
  int64_t nextIndex = 0;
  for (NodeId id : g.nodesOfType("Data"))
    if (auto idx = g.node(id).intAttr("index"))
      nextIndex = std::max(nextIndex, *idx + 1);

  // Feeds one outside input of the fragment: a copy of a donor constant
  // (shape operands must stay constant), a host value of the same type, or
  // a new graph input of that type.
  auto feed = [&](OutPort src) -> std::optional<OutPort> {
    const Node &sn = dg.node(src.node);
    if (NodeId h = hostOf(src.node); h != kNoNode)
      return OutPort{h, src.index};
    if (opKind(sn) == OpKind::Weight) {
      NodeId h = g.addNode(uniqueName(g, sn.name + "_s"), sn.type, {}, sn.numOutputs);
      g.node(h).attrs = sn.attrs;
      copies.push_back({src.node, h});
      return OutPort{h, src.index};
    }
    const TensorType *t = donorTypes.of(0, src);
    if (!t)
      return std::nullopt;
    std::vector<OutPort> same;
    for (NodeId id : g.liveNodes())
      for (uint32_t k = 0; k < g.node(id).numOutputs; ++k)
        if (const TensorType *ht = hostTypes.of(0, id, k); ht && *ht == *t)
          same.push_back({id, k});
    if (!same.empty() && rng.chance(4, 5))
      return rng.pick(same);
    NodeId d = g.addNode(uniqueName(g, "in"), "Data");
    g.node(d).attrs["index"] = AttrValue::ofInt(nextIndex++);
    g.node(d).attrs["out0.dtype"] = AttrValue::ofIdent(std::string(dtypeName(t->dtype)));
    g.node(d).attrs["out0.shape"] = intList(t->shape);
    return OutPort{d, 0};
  };

  NodeId last = kNoNode;
  for (NodeId d : window) {
    const Node &dn = dg.node(d);
    std::vector<std::optional<OutPort>> inputs;
    for (const auto &src : dn.inputs) {
      if (!src) {
        inputs.push_back(std::nullopt);
        continue;
      }
      std::optional<OutPort> fed = feed(*src);
      if (!fed)
        return false;
      inputs.push_back(fed);
    }
    last = g.addNode(uniqueName(g, dn.name + "_x"), dn.type, inputs, dn.numOutputs);
    g.node(last).attrs = dn.attrs;
    copies.push_back({d, last});
  }
  if (g.node(last).numOutputs == 0)
    return false;
  g.appendInput(out, OutPort{last, 0});
  return true;
}

std::string printCase(const MidendCase &c) {
  return withPipelineHeader(printModule(c.module), c.choice);
}

namespace {

/// Runs candidates through the filter (print, size, re-parse, classify);
/// the first accepted one wins.
template <typename MakeCandidate>
TypedMutationOutcome searchWellTyped(size_t maxSize, const TypedMutatorOptions &opts,
                                     MakeCandidate &&makeCandidate) {
  TypedMutationOutcome outcome;
  for (uint32_t attempt = 0; attempt < opts.maxAttempts; ++attempt) {
    ++outcome.attempts;
    std::vector<TypedMutationKind> applied;
    std::optional<MidendCase> candidate = makeCandidate(applied);
    if (!candidate)
      continue;
    std::string text = printCase(*candidate);
    InputStatus status =
        text.size() > maxSize ? InputStatus::TooLarge : classifyMidendInput(text, opts.limits);
    if (status == InputStatus::Accepted) {
      outcome.text = std::move(text);
      outcome.applied = std::move(applied);
      return outcome;
    }
    ++outcome.discarded[static_cast<size_t>(status)];
  }
  return outcome;
}

/// The input as a case, or a fresh one when it is not an acceptable graph.
MidendCase caseOrFresh(std::string_view text, MutationRng &rng, const MidendLimits &limits,
                       bool &usedFallback) {
  std::optional<Module> m;
  if (classifyMidendInput(text, limits, &m) == InputStatus::Accepted) {
    usedFallback = false;
    return MidendCase{std::move(*m), choosePipeline(text)};
  }
  usedFallback = true;
  return freshTypedCase(rng, limits);
}

} // namespace

TypedMutationOutcome mutateTypedGraphText(std::string_view input, uint64_t seed, size_t maxSize,
                                          const TypedMutatorOptions &opts) {
  MutationRng rng(seed);
  bool usedFallback = false;
  MidendCase base = caseOrFresh(input, rng, opts.limits, usedFallback);
  TypedMutationOutcome outcome =
      searchWellTyped(maxSize, opts, [&](std::vector<TypedMutationKind> &applied) {
        MidendCase candidate = base;
        uint32_t count = 1 + rng.below(std::max<uint32_t>(opts.maxMutationsPerAttempt, 1));
        for (uint32_t i = 0; i < count; ++i)
          if (auto kind = mutateTypedOnce(candidate, rng, opts.limits))
            applied.push_back(*kind);
        return applied.empty() ? std::nullopt : std::optional<MidendCase>(std::move(candidate));
      });
  outcome.usedFallback = usedFallback;
  if (!outcome.text && usedFallback) {
    // The fresh graph itself is well typed and new.
    std::string text = printCase(base);
    if (text.size() <= maxSize)
      outcome.text = std::move(text);
  }
  return outcome;
}

TypedMutationOutcome crossOverTypedGraphText(std::string_view a, std::string_view b, uint64_t seed,
                                             size_t maxSize, const TypedMutatorOptions &opts) {
  MutationRng rng(seed);
  bool fallbackA = false, fallbackB = false;
  MidendCase recipient = caseOrFresh(a, rng, opts.limits, fallbackA);
  MidendCase donor = caseOrFresh(b, rng, opts.limits, fallbackB);
  TypedMutationOutcome outcome =
      searchWellTyped(maxSize, opts, [&](std::vector<TypedMutationKind> &applied) {
        MidendCase candidate = recipient;
        if (rng.chance(1, 2))
          candidate.choice = donor.choice;
        if (!spliceTyped(candidate.module, donor.module, rng, opts.limits))
          return std::optional<MidendCase>();
        applied.push_back(TypedMutationKind::SpliceFresh); // spliced from the other parent
        if (rng.chance(1, 4))
          if (auto kind = mutateTypedOnce(candidate, rng, opts.limits))
            applied.push_back(*kind);
        return std::optional<MidendCase>(std::move(candidate));
      });
  outcome.usedFallback = fallbackA || fallbackB;
  return outcome;
}

} // namespace graphvet::fuzz
