// The typed graph builder's core: sources, the value pool, input picking and
// adaptation, emission with the model of every port's type, the graph
// outputs, and the catalogue assembled from the family files.
#include "props/typed_builder.h"

#include "props/typed_attrs.h"
#include "props/typed_shape.h"
#include "props/typed_values.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <memory>

namespace graphvet::props {
namespace typed {
namespace {

const std::vector<uint8_t> kNoChoices;

/// Graph outputs beyond this many are left out (the newest are kept).
constexpr size_t kMaxGraphOutputs = 16;

std::vector<CatalogueEntry> makeCatalogue() {
  std::vector<CatalogueEntry> all;
  for (auto part : {elementwiseEntries(), logicEntries(), shapeEntries(), reduceEntries(),
                    nnEntries(), motifEntries()})
    all.insert(all.end(), part.begin(), part.end());
  return all;
}

/// The single ops, then the motifs.
const std::vector<CatalogueEntry> &catalogue() {
  static const std::vector<CatalogueEntry> entries = makeCatalogue();
  return entries;
}

size_t numMotifs() {
  return motifEntries().size();
}

size_t numSingleOps() {
  return catalogue().size() - numMotifs();
}

/// The entry a step's op number selects: the single op of that number, or
/// above them the motifs, cycled (typedStepOpBound draws op numbers that
/// far above the single ops that motifs are about a quarter of the steps).
const CatalogueEntry &entryOf(size_t op) {
  const size_t single = numSingleOps();
  return catalogue()[op < single ? op : single + (op - single) % numMotifs()];
}

} // namespace

Shape toLogical(const Shape &physical, bool nhwc) {
  if (!nhwc || physical.size() < 2)
    return physical;
  Shape s{physical[0], physical.back()};
  s.insert(s.end(), physical.begin() + 1, physical.end() - 1);
  return s;
}

Shape toPhysical(const Shape &logical, bool nhwc) {
  if (!nhwc || logical.size() < 2)
    return logical;
  Shape s{logical[0]};
  s.insert(s.end(), logical.begin() + 2, logical.end());
  s.push_back(logical[1]);
  return s;
}

Builder::Builder(const TypedRecipe &recipe) : ch(kNoChoices), recipe_(recipe) {
  g_ = m_.addGraph("main");
}

std::string Builder::freshName(const std::string &prefix) {
  std::string base = prefix;
  std::transform(base.begin(), base.end(), base.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return fmt::format("{}{}", base, counters_[base]++);
}

uint8_t Builder::nextRef() {
  if (!step_ || refPos_ >= step_->refs.size()) {
    ++refPos_;
    return 0;
  }
  return step_->refs[refPos_++];
}

const Value &Builder::ref(uint8_t back) const {
  return pool_[pool_.size() - 1 - back % pool_.size()];
}

std::optional<Value> Builder::find(uint8_t back,
                                   const std::function<bool(const Value &)> &pred) const {
  size_t n = pool_.size();
  size_t start = n - 1 - back % n;
  for (size_t k = 0; k < n; ++k) {
    const Value &v = pool_[(start + n - k) % n];
    if (pred(v))
      return v;
  }
  return std::nullopt;
}

Value Builder::input(DTypeSet set, int64_t minRank) {
  uint8_t back = nextRef();
  if (auto v = find(back, [&](const Value &x) {
        return inSet(set, x.dtype()) && x.rank() >= minRank &&
               elementsOf(x.type.shape) <= kMaxValueElements;
      }))
    return *v;
  Value v = ref(back);
  if (!inSet(set, v.dtype()))
    v = castTo(v, pickDType(set, ch.next()));
  if (v.rank() < minRank) {
    Shape s(static_cast<size_t>(minRank - v.rank()), 1);
    s.insert(s.end(), v.type.shape.begin(), v.type.shape.end());
    v = reshapeTo(v, s);
  }
  return v;
}

Value Builder::castTo(const Value &v, DType to) {
  AttrMap attrs;
  attrs["to"] = ident(to);
  return emit1("Cast", {v}, std::move(attrs), {to, v.type.shape});
}

Value Builder::reshapeTo(const Value &v, const Shape &shape) {
  AttrMap attrs;
  if (std::find(shape.begin(), shape.end(), 0) != shape.end())
    attrs["allowzero"] = AttrValue::ofInt(1); // a literal 0, not a copy
  return emit1("Reshape", {v, ints(shape)}, std::move(attrs), {v.dtype(), shape});
}

ElementPick Builder::nextPick() {
  if (!step_ || step_->values.empty())
    return {};
  return step_->values[pickPos_++ % step_->values.size()];
}

Value Builder::addSource(const std::string &type, const std::string &prefix, AttrMap attrs,
                         const TensorType &t) {
  Graph &g = m_.graph(g_);
  NodeId id = g.addNode(freshName(prefix), type, {}, 1);
  g.node(id).attrs = std::move(attrs);
  Value v{OutPort{id, 0}, t};
  model_.push_back({v.port, t});
  return v;
}

Value Builder::literal(Tensor t) {
  TensorType type = t.type();
  AttrMap attrs;
  attrs["value"] = AttrValue::ofTensor(std::make_shared<const Tensor>(std::move(t)));
  return addSource("Const", "k", std::move(attrs), type);
}

Value Builder::constant(const TensorType &t) {
  std::vector<ElementPick> picks;
  if (step_)
    picks = step_->values;
  size_t offset = pickPos_;
  pickPos_ += static_cast<size_t>(std::max<int64_t>(1, elementsOf(t.shape)));
  return literal(literalFromPicks(t, picks, offset));
}

Value Builder::data(const TensorType &t) {
  AttrMap attrs;
  attrs["index"] = AttrValue::ofInt(nextIndex_++);
  attrs["out0.dtype"] = ident(t.dtype);
  attrs["out0.shape"] = intList(t.shape);
  return addSource("Data", "in", std::move(attrs), t);
}

Value Builder::variable(const TensorType &t) {
  AttrMap attrs;
  attrs["out0.dtype"] = ident(t.dtype);
  attrs["out0.shape"] = intList(t.shape);
  return addSource("Variable", "var", std::move(attrs), t);
}

void Builder::order(const Value &before, const Value &after) {
  m_.graph(g_).addCtrlEdge(before.port.node, after.port.node);
}

GraphId Builder::addSubgraph(const Value &holder, const std::string &prefix) {
  GraphId sub = m_.addGraph(freshName(prefix));
  m_.attachSubgraph(g_, holder.port.node, sub);
  return sub;
}

NodeId Builder::emitIn(GraphId g, const std::string &op,
                       const std::vector<std::optional<OutPort>> &inputs, AttrMap attrs,
                       uint32_t numOutputs) {
  Graph &graph = m_.graph(g);
  NodeId id = graph.addNode(freshName(op), op, inputs, numOutputs);
  graph.node(id).attrs = std::move(attrs);
  return id;
}

Value Builder::source(const TensorType &t) {
  return ch.chance(25) ? data(t) : constant(t);
}

Value Builder::ints(const std::vector<int64_t> &v, DType dtype, bool scalar) {
  Tensor t(TensorType{dtype, scalar ? Shape{} : Shape{static_cast<int64_t>(v.size())}});
  for (size_t i = 0; i < v.size() && static_cast<int64_t>(i) < t.size(); ++i)
    t.setInt(static_cast<int64_t>(i), v[i]);
  return literal(std::move(t));
}

Value Builder::partner(const Value &first, DType dtype, const Shape &against, bool unidirectional) {
  auto fits = [&](const Shape &s) {
    auto b = broadcastOf(against, s);
    return b && (unidirectional ? *b == against : elementsOf(*b) <= kMaxValueElements);
  };
  unsigned mode = ch.below(4);
  uint8_t back = nextRef();
  if (mode == 0)
    if (auto v =
            find(back, [&](const Value &x) { return x.dtype() == dtype && fits(x.type.shape); }))
      return *v;
  if (mode == 1 && first.dtype() == dtype && fits(first.type.shape))
    return first;
  return source({dtype, broadcastPartner(against, unidirectional, ch)});
}

std::vector<Value> Builder::emit(const std::string &op, const Inputs &inputs, AttrMap attrs,
                                 const std::vector<TensorType> &outputs) {
  Graph &g = m_.graph(g_);
  std::vector<std::optional<OutPort>> ports;
  for (const auto &in : inputs)
    ports.push_back(in ? std::optional<OutPort>(in->port) : std::nullopt);
  // Sometimes the outputs also carry their description (`outK.dtype`,
  // `outK.shape`), which the verifier checks against inference.
  if (ch.chance(8))
    for (size_t k = 0; k < outputs.size(); ++k) {
      const auto key = [k](const char *what) {
        return Node::portKey(true, static_cast<uint32_t>(k), what);
      };
      attrs[key("dtype")] = ident(outputs[k].dtype);
      attrs[key("shape")] = intList(outputs[k].shape);
    }
  NodeId id = g.addNode(freshName(op), op, std::move(ports), static_cast<uint32_t>(outputs.size()));
  g.node(id).attrs = std::move(attrs);
  std::vector<Value> out;
  for (uint32_t k = 0; k < outputs.size(); ++k) {
    Value v{OutPort{id, k}, outputs[k]};
    model_.push_back({v.port, v.type});
    pool_.push_back(v);
    out.push_back(v);
  }
  return out;
}

void Builder::runStep(const TypedStep &step) {
  step_ = &step;
  ch = Choices(step.choices);
  refPos_ = 0;
  pickPos_ = 0;
  const CatalogueEntry &e = entryOf(step.op);
  stepOps_.emplace_back(e.op);
  e.build(*this, std::string(e.op));
  step_ = nullptr;
  ch = Choices(kNoChoices);
}

TypedModule Builder::build() {
  for (const TypedSource &s : recipe_.sources) {
    TensorType t{s.dtype, s.shape};
    pool_.push_back(s.constant ? literal(literalFromPicks(t, s.values, 0)) : data(t));
  }
  if (pool_.empty())
    pool_.push_back(data({DType::F32, {2, 3}}));
  firstOpValue_ = pool_.size();
  for (const TypedStep &step : recipe_.steps)
    runStep(step);

  // Graph outputs: every op output nobody reads (so that every computed
  // value is observed), then the recipe's extra references; without ops,
  // the newest source.
  Graph &g = m_.graph(g_);
  std::vector<Value> results;
  for (size_t i = firstOpValue_; i < pool_.size(); ++i)
    if (g.consumers(pool_[i].port).empty())
      results.push_back(pool_[i]);
  for (const Value &v : kept_)
    if (std::find_if(results.begin(), results.end(),
                     [&](const Value &r) { return r.port == v.port; }) == results.end())
      results.push_back(v);
  for (uint8_t back : recipe_.outputs)
    results.push_back(ref(back));
  if (results.empty())
    results.push_back(pool_.back());
  if (results.size() > kMaxGraphOutputs)
    results.erase(results.begin(), results.end() - kMaxGraphOutputs);
  std::vector<std::optional<OutPort>> ports;
  for (const Value &v : results)
    ports.push_back(v.port);
  g.addNode("out", "NetOutput", std::move(ports), 0);
  return TypedModule{std::move(m_), std::move(model_), std::move(stepOps_)};
}

} // namespace typed

TypedModule buildTypedModule(const TypedRecipe &recipe) {
  return typed::Builder(recipe).build();
}

size_t numTypedOps() {
  return typed::catalogue().size();
}

size_t numTypedMotifs() {
  return typed::numMotifs();
}

size_t typedStepOpBound() {
  // single + single/3: a third as many numbers above the single ops as
  // below them, so a uniform draw picks a motif one time in four (a third
  // made cases about half as fast: a motif is several nodes).
  return typed::numSingleOps() + typed::numSingleOps() / 3;
}

std::string_view typedOpName(size_t i) {
  return typed::entryOf(i).op;
}

} // namespace graphvet::props
