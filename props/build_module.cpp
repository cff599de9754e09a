// The recipe interpreter. It keeps, per graph being built, the values created
// so far (with the set of buffers each may be bound to) and, per buffer, the
// last writer and the readers since; each new access is ordered after the
// accesses it conflicts with. A node holding subgraphs is one unit at its
// parent's level whose effects are everything its subgraphs touch.
#include "props/build_module.h"

#include "ir/op_library.h"

#include <algorithm>
#include <optional>
#include <string>

namespace graphvet::props {
namespace {

enum class BufKind : uint8_t { UserInput, CallerMemory, Variable, Weight, Fresh };

/// Buffers a value may be bound to; more than one only after If/Case, whose
/// outputs depend on the branch taken at run time. Sorted, unique.
using BufSet = std::vector<uint32_t>;

BufSet unite(const BufSet &a, const BufSet &b) {
  BufSet out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

bool intersects(const BufSet &a, const BufSet &b) {
  for (uint32_t x : a)
    if (std::binary_search(b.begin(), b.end(), x))
      return true;
  return false;
}

constexpr uint8_t poolBit(Pool p) {
  return static_cast<uint8_t>(1u << static_cast<unsigned>(p));
}

struct Value {
  OutPort port;
  BufSet bufs;              ///< empty for an unconnected slot or what only aliases one
  uint8_t pools = 0;        ///< Pool bits besides Any
  bool unconnected = false; ///< an input slot left `_`
};

/// An input slot left `_`.
Value unconnectedSlot() {
  Value v;
  v.unconnected = true;
  return v;
}

/// Accesses to one buffer at one level since its last write.
struct Access {
  NodeId lastWriter = kNoNode;
  std::vector<NodeId> readers;
};

/// Buffer -> written? (false = only read), sorted by buffer so effects apply
/// in a deterministic order. A small sorted vector: sets here are tiny.
class Effects {
public:
  void add(uint32_t buf, bool write) {
    auto it = std::lower_bound(items_.begin(), items_.end(), buf,
                               [](const auto &e, uint32_t b) { return e.first < b; });
    if (it != items_.end() && it->first == buf)
      it->second = it->second || write;
    else
      items_.insert(it, {buf, write});
  }
  void add(const BufSet &bufs, bool write) {
    for (uint32_t b : bufs)
      add(b, write);
  }
  void merge(const Effects &o) {
    for (auto [b, w] : o.items_)
      add(b, w);
  }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

private:
  std::vector<std::pair<uint32_t, bool>> items_;
};

struct Variable {
  std::string name;
  uint32_t buffer;
  AttrMap desc; ///< the variable's out0.dtype / out0.shape, if any
};

/// The state of one graph under construction.
struct Level {
  GraphId graph = kNoGraph;
  unsigned depth = 0; ///< 0 for the root
  std::vector<Value> values;
  std::vector<Value> parentInputs;
  std::vector<Variable> variables; ///< variables visible here (own and ancestors')
  std::vector<Access> access;      ///< by buffer id
  Effects touched;                 ///< every access made at this level, nested units included
  NodeId pendingCtrlFrom = kNoNode;
};

/// An earlier access that a data edge through a call already orders before a
/// new unit, for the buffers `bufs` only: the copy feeding a call whose body
/// orders its accesses after the argument's Data, or a call whose result
/// only its body's NetOutput touches (the edge from the result reaches the
/// body's producer). The builder's general rule ignores such edges.
struct DataOrdered {
  NodeId node = kNoNode;
  BufSet bufs;
};

/// The fixed nodes a Call shape (CallShape) adds to its body around the
/// body's own steps.
struct BodyTail {
  const Variable *writeVar = nullptr; ///< CallShape::WritesCopiedVariable
  bool copyAsResult = false;          ///< CallShape::ResultWrittenOutside
  bool writtenCopyOfArg = false;      ///< CallShape::WrittenCopyOfUnconnected
  uint8_t variant = 0;
};

/// Result of building one subgraph.
struct SubgraphResult {
  std::vector<BufSet> results; ///< buffers of each NetOutput input
  Effects touched;
};

constexpr unsigned kMaxBuildDepth = 6;
constexpr size_t kMaxRefs = 3;

SwarmBit familyOf(StepKind k, bool &always) {
  always = false;
  switch (k) {
  case StepKind::Variable:
  case StepKind::RefVarSource:
    return SwarmBit::Variables;
  case StepKind::Weight:
    return SwarmBit::Weights;
  case StepKind::TensorMoveChain:
    return SwarmBit::TensorMoveChains;
  case StepKind::View:
  case StepKind::MultiAliasRefOp:
    return SwarmBit::Views;
  case StepKind::RefWrite:
  case StepKind::ScopeWrite:
    return SwarmBit::Writers;
  case StepKind::Continuous:
    return SwarmBit::Layout;
  case StepKind::Call:
    return SwarmBit::Subgraphs;
  case StepKind::If:
  case StepKind::Case:
  case StepKind::While:
    return SwarmBit::ControlFlow;
  case StepKind::CtrlEdge:
    return SwarmBit::CtrlEdges;
  default:
    always = true;
    return SwarmBit::Subgraphs;
  }
}

class Builder {
public:
  explicit Builder(const Recipe &r) : recipe_(r) {}

  Module build() {
    GraphId root = m_.addGraph("main");
    Level L;
    L.graph = root;
    runSteps(L, recipe_.root.steps);
    if (L.values.empty())
      emitUserInput(L, 0);
    size_t numResults = std::clamp<size_t>(recipe_.root.outputs.size(), 1, 4);
    std::vector<Value> results;
    for (size_t k = 0; k < numResults; ++k) {
      Ref ref = k < recipe_.root.outputs.size() ? recipe_.root.outputs[k]
                                                : Ref{Pool::Any, static_cast<uint8_t>(k)};
      results.push_back(*pick(L, ref));
    }
    emit(L, "NetOutput", "out", results, {}, std::nullopt, 0);
    buildOptions(results.size());
    return std::move(m_);
  }

private:
  const Recipe &recipe_;
  Module m_;
  std::vector<BufKind> bufKinds_;
  unsigned counter_ = 0;
  int64_t nextUserIndex_ = 0;
  // Scratch for ordered(): visit stamps and the work list.
  std::vector<uint32_t> seen_;
  uint32_t epoch_ = 0;
  std::vector<NodeId> work_;

  bool on(SwarmBit b) const { return (recipe_.swarm & static_cast<uint32_t>(b)) != 0; }

  std::string fresh(const char *prefix) { return prefix + std::to_string(counter_++); }

  /// Adds a tensor description of output 0 chosen by the high bits of a
  /// step's variant (most steps keep the default f32 [4]).
  AttrMap withDesc(AttrMap attrs, uint8_t variant) const {
    if (!on(SwarmBit::TensorDescs))
      return attrs;
    switch (variant / 16) {
    case 13:
      attrs["out0.dtype"] = AttrValue::ofIdent("f16");
      break;
    case 14:
      attrs["out0.shape"] = AttrValue::ofList({AttrValue::ofInt(2), AttrValue::ofInt(2)});
      break;
    case 15:
      attrs["out0.dtype"] = AttrValue::ofIdent("i32");
      attrs["out0.shape"] = AttrValue::ofList({AttrValue::ofInt(2)});
      break;
    default:
      break;
    }
    return attrs;
  }

  uint32_t newBuffer(BufKind k) {
    bufKinds_.push_back(k);
    return static_cast<uint32_t>(bufKinds_.size() - 1);
  }

  bool weightFree(const BufSet &bufs) const {
    for (uint32_t b : bufs)
      if (bufKinds_[b] == BufKind::Weight)
        return false;
    return true;
  }

  Graph &graph(const Level &L) { return m_.graph(L.graph); }

  // ---- references -------------------------------------------------------

  static bool inPool(const Value &v, Pool p) {
    return p == Pool::Any || p == Pool::Unconnected || (v.pools & poolBit(p)) != 0;
  }

  /// Index of the value `back` places before the newest in `pool` (modulo
  /// the pool's size); the Any pool when `pool` is empty; nullopt when the
  /// level has no values.
  static std::optional<size_t> pickIndex(const Level &L, Pool pool, size_t back) {
    size_t count = 0;
    for (const Value &v : L.values)
      count += inPool(v, pool) ? 1 : 0;
    if (count == 0) {
      if (pool == Pool::Any)
        return std::nullopt;
      return pickIndex(L, Pool::Any, back);
    }
    size_t skip = back % count;
    for (size_t i = L.values.size(); i-- > 0;)
      if (inPool(L.values[i], pool) && skip-- == 0)
        return i;
    return std::nullopt;
  }

  /// Indexes of the level's values in `pool` (all values when it is empty).
  static std::vector<size_t> candidates(const Level &L, Pool pool) {
    std::vector<size_t> out;
    for (size_t i = 0; i < L.values.size(); ++i)
      if (inPool(L.values[i], pool))
        out.push_back(i);
    if (out.empty() && pool != Pool::Any)
      return candidates(L, Pool::Any);
    return out;
  }

  std::optional<Value> pick(const Level &L, Ref ref) const {
    if (auto i = pickIndex(L, ref.pool, ref.back))
      return L.values[*i];
    return std::nullopt;
  }

  /// Like pick, but only values that may be written: no weight buffer and no
  /// buffer shared with `avoid`. Searches backwards from the referenced value.
  std::optional<Value> pickWritable(const Level &L, Ref ref, const BufSet &avoid = {}) const {
    for (Pool pool : {ref.pool, Pool::Any}) {
      auto c = candidates(L, pool);
      if (c.empty())
        continue;
      size_t start = c.size() - 1 - ref.back % c.size();
      for (size_t step = 0; step < c.size(); ++step) {
        const Value &v = L.values[c[(start + c.size() - step) % c.size()]];
        if (!v.bufs.empty() && weightFree(v.bufs) && !intersects(v.bufs, avoid))
          return v;
      }
    }
    return std::nullopt;
  }

  /// The values of refs[from..] (at most maxCount); with `slots`, a ref to
  /// the Unconnected pool leaves its slot `_`.
  std::vector<Value> pickAll(const Level &L, const std::vector<Ref> &refs, size_t from,
                             size_t maxCount, bool slots = true) const {
    std::vector<Value> out;
    for (size_t i = from; i < refs.size() && out.size() < maxCount; ++i) {
      if (slots && refs[i].pool == Pool::Unconnected && on(SwarmBit::Unconnected)) {
        out.push_back(unconnectedSlot());
      } else if (auto v = pick(L, refs[i])) {
        out.push_back(*v);
      }
    }
    return out;
  }

  static Ref refAt(const Step &s, size_t i) {
    return i < s.refs.size() ? s.refs[i] : Ref{Pool::Any, static_cast<uint8_t>(i)};
  }

  // ---- ordering -----------------------------------------------------------

  /// True when data and control edges of the level order `from` before `to`.
  /// Data edges into or out of a PartitionedCall do not count: a call is
  /// transparent, so such an edge orders only some of its inner nodes.
  bool ordered(const Level &L, NodeId from, NodeId to) {
    const Graph &g = graph(L);
    if (seen_.size() < g.capacity())
      seen_.resize(g.capacity(), 0);
    if (++epoch_ == 0) { // wrapped: clear the stamps
      std::fill(seen_.begin(), seen_.end(), 0);
      epoch_ = 1;
    }
    work_.clear();
    work_.push_back(from);
    seen_[from] = epoch_;
    while (!work_.empty()) {
      NodeId id = work_.back();
      work_.pop_back();
      if (id == to)
        return true;
      const Node &n = g.node(id);
      auto visit = [&](NodeId s) {
        if (s <= to && seen_[s] != epoch_) {
          seen_[s] = epoch_;
          work_.push_back(s);
        }
      };
      for (NodeId s : n.ctrlOut)
        visit(s);
      if (opKind(n) == OpKind::Call)
        continue;
      for (const auto &cs : n.consumers)
        for (InPort c : cs)
          if (opKind(g.node(c.node)) != OpKind::Call)
            visit(c.node);
    }
    return false;
  }

  void order(Level &L, NodeId before, NodeId after) {
    if (before == after || before == kNoNode)
      return;
    if (!ordered(L, before, after))
      graph(L).addCtrlEdge(before, after);
  }

  /// Orders unit `u` after every conflicting earlier access (except those
  /// `through` says a data edge orders), then records its accesses.
  void applyEffects(Level &L, NodeId u, const Effects &effects,
                    const DataOrdered *through = nullptr) {
    for (auto [buf, write] : effects) {
      if (buf >= L.access.size())
        L.access.resize(bufKinds_.size());
      Access &a = L.access[buf];
      bool skipHolder =
          through && std::binary_search(through->bufs.begin(), through->bufs.end(), buf);
      auto orderAfter = [&](NodeId before) {
        if (!(skipHolder && before == through->node))
          order(L, before, u);
      };
      orderAfter(a.lastWriter);
      if (write) {
        for (NodeId r : a.readers)
          orderAfter(r);
        a.lastWriter = u;
        a.readers.clear();
      } else {
        a.readers.push_back(u);
      }
      L.touched.add(buf, write);
    }
  }

  // ---- node creation ------------------------------------------------------

  NodeId addNode(Level &L, const std::string &type, const std::string &name,
                 const std::vector<Value> &inputs, std::optional<uint32_t> numOutputs) {
    std::vector<std::optional<OutPort>> ports;
    for (const Value &v : inputs)
      ports.push_back(v.unconnected ? std::nullopt : std::optional<OutPort>(v.port));
    NodeId id = graph(L).addNode(name, type, std::move(ports), numOutputs);
    if (L.pendingCtrlFrom != kNoNode) {
      graph(L).addCtrlEdge(L.pendingCtrlFrom, id);
      L.pendingCtrlFrom = kNoNode;
    }
    return id;
  }

  const Variable *findVariable(const Level &L, const std::string &name) const {
    for (const Variable &v : L.variables)
      if (v.name == name)
        return &v;
    return nullptr;
  }

  /// Creates an ordinary node (anything that does not hold subgraphs), orders
  /// its accesses, and records its outputs as values. The memory behaviour
  /// comes from the op library, so attributes set in `attrs` count.
  NodeId emit(Level &L, const std::string &type, const char *prefix,
              const std::vector<Value> &inputs, const AttrMap &attrs,
              std::optional<uint32_t> numOutputs, uint8_t pools,
              const DataOrdered *through = nullptr) {
    NodeId id = addNode(L, type, fresh(prefix), inputs, numOutputs);
    Node &n = graph(L).node(id);
    for (const auto &[k, v] : attrs)
      n.attrs[k] = v;
    Effects e;
    bool scribbles = isInputMutable(n);
    for (const Value &v : inputs)
      e.add(v.bufs, scribbles);
    for (uint32_t i : refWrittenInputs(n))
      e.add(inputs[i].bufs, true);
    std::vector<Value> outs;
    for (uint32_t k = 0; k < n.numOutputs; ++k) {
      Value out{{id, k}, {}, pools};
      if (auto in = aliasedInput(n, k); in && !inputs[*in].unconnected) {
        out.bufs = inputs[*in].bufs;
      } else if (in) {
        out.bufs = {newBuffer(BufKind::Fresh)}; // views nothing: treat as its own buffer
      } else if (const std::string *var = refVarSrcName(n, k)) {
        const Variable *v = findVariable(L, *var);
        out.bufs = {v ? v->buffer : newBuffer(BufKind::Fresh)};
        e.add(out.bufs, true);
      } else {
        out.bufs = {newBuffer(BufKind::Fresh)};
      }
      outs.push_back(std::move(out));
    }
    applyEffects(L, id, e, through);
    if (type != "NetOutput")
      for (Value &v : outs)
        L.values.push_back(std::move(v));
    return id;
  }

  /// A source node: its output is bound to `buffer`; no access.
  NodeId emitSource(Level &L, const std::string &type, const char *prefix, uint32_t buffer,
                    const AttrMap &attrs, uint8_t pools) {
    NodeId id = addNode(L, type, fresh(prefix), {}, std::nullopt);
    Node &n = graph(L).node(id);
    for (const auto &[k, v] : attrs)
      n.attrs[k] = v;
    L.values.push_back(Value{{id, 0}, {buffer}, pools});
    return id;
  }

  void emitUserInput(Level &L, uint8_t variant) {
    static const char *const kTypes[] = {"Data", "Data",     "Data",    "Data",
                                         "Data", "AippData", "AnnData", "Data"};
    const char *type = kTypes[variant % 8];
    if (variant % 8 == 7) {
      emitSource(L, type, "mem", newBuffer(BufKind::CallerMemory), withDesc({}, variant),
                 poolBit(Pool::Source));
      return;
    }
    emitSource(L, type, "x", newBuffer(BufKind::UserInput),
               withDesc({{"index", AttrValue::ofInt(nextUserIndex_++)}}, variant),
               poolBit(Pool::Source));
  }

  void emitVariable(Level &L, uint8_t variant) {
    static const char *const kTypes[] = {"Variable", "VariableV2", "RefData"};
    uint32_t buf = newBuffer(BufKind::Variable);
    AttrMap desc = withDesc({}, variant);
    NodeId id = emitSource(L, kTypes[variant % 3], "var", buf, desc, poolBit(Pool::Source));
    L.variables.push_back({graph(L).node(id).name, buf, desc});
  }

  /// Some value of the level, creating a source when there is none.
  Value anyValue(Level &L) {
    if (L.values.empty()) {
      if (L.depth == 0)
        emitUserInput(L, 0);
      else
        emitSource(L, "Const", "c", newBuffer(BufKind::Weight), {}, poolBit(Pool::Source));
    }
    return L.values.back();
  }

  // ---- steps --------------------------------------------------------------

  void runSteps(Level &L, const std::vector<Step> &steps) {
    for (const Step &s : steps)
      runStep(L, s);
  }

  void runStep(Level &L, const Step &s) {
    bool always = false;
    SwarmBit family = familyOf(s.kind, always);
    if (!always && !on(family))
      return;
    bool holder = s.kind == StepKind::Call || s.kind == StepKind::If || s.kind == StepKind::Case ||
                  s.kind == StepKind::While;
    if (holder && L.depth + 1 >= kMaxBuildDepth)
      return stepCompute(L, s);
    switch (s.kind) {
    case StepKind::Compute:
      return stepCompute(L, s);
    case StepKind::UserInput:
      return stepUserInput(L, s);
    case StepKind::Variable:
      return emitVariable(L, s.variant);
    case StepKind::Weight: {
      static const char *const kTypes[] = {"Const", "Constant", "ConstPlaceHolder", "FileConstant"};
      AttrMap attrs;
      if (s.variant % 4 == 3)
        attrs["file_path"] = AttrValue::ofString("weights/w" + std::to_string(counter_) + ".bin");
      emitSource(L, kTypes[s.variant % 4], "w", newBuffer(BufKind::Weight),
                 withDesc(attrs, s.variant), poolBit(Pool::Source));
      return;
    }
    case StepKind::RefVarSource:
      return stepRefVarSource(L, s);
    case StepKind::TensorMove:
      return stepTensorMove(L, s);
    case StepKind::TensorMoveChain: {
      Value v = pick(L, refAt(s, 0)).value_or(anyValue(L));
      unsigned length = 2 + s.variant % 2;
      for (unsigned i = 0; i < length; ++i) {
        emit(L, "TensorMove", "tm", {v}, {}, std::nullopt, poolBit(Pool::TensorMove));
        v = L.values.back();
      }
      return;
    }
    case StepKind::View:
      return stepView(L, s);
    case StepKind::MultiAliasRefOp:
      return stepMultiAlias(L, s);
    case StepKind::RefWrite:
      return stepRefWrite(L, s);
    case StepKind::ScopeWrite:
      return stepScopeWrite(L, s);
    case StepKind::Continuous: {
      std::vector<Value> ins = pickAll(L, s.refs, 0, kMaxRefs);
      while (ins.size() < 2)
        ins.push_back(anyValue(L));
      AttrMap attrs;
      attrs[s.variant % 2 ? "_no_padding_continuous_input" : "continuous_input"] =
          AttrValue::ofBool(true);
      emit(L, "ConcatD", "concat", ins, attrs, std::nullopt, 0);
      return;
    }
    case StepKind::Call:
      return stepCall(L, s);
    case StepKind::If:
    case StepKind::Case:
      return stepBranch(L, s);
    case StepKind::While:
      return stepWhile(L, s);
    case StepKind::CtrlEdge: {
      auto a = pick(L, refAt(s, 0));
      auto b = pick(L, refAt(s, 1));
      if (!a || !b || a->port.node == b->port.node)
        return;
      graph(L).addCtrlEdge(std::min(a->port.node, b->port.node),
                           std::max(a->port.node, b->port.node));
      return;
    }
    }
  }

  void stepCompute(Level &L, const Step &s) {
    static const char *const kTypes[] = {"ReLU", "Add", "Mul", "Cast", "TransData", "Sub"};
    std::vector<Value> ins = pickAll(L, s.refs, 0, kMaxRefs);
    std::optional<uint32_t> outs;
    if (s.flags % 4 == 3)
      outs = 2;
    emit(L, kTypes[s.variant % 6], "op", ins, withDesc({}, s.variant), outs, 0);
  }

  void stepUserInput(Level &L, const Step &s) {
    if (L.depth == 0)
      return emitUserInput(L, s.variant);
    // In a subgraph: bring a parent input to the front of the value list.
    if (L.parentInputs.empty())
      return;
    L.values.push_back(L.parentInputs[s.variant % L.parentInputs.size()]);
  }

  void stepRefVarSource(Level &L, const Step &s) {
    if (L.variables.empty())
      emitVariable(L, s.variant / 4);
    const Variable var = L.variables[L.variables.size() - 1 - s.flags / 4 % L.variables.size()];
    static const char *const kTypes[] = {"ReadVariableOp", "RefIdentity", "VarHandleRead"};
    std::vector<Value> ins;
    if (s.flags & 1)
      if (auto v = pick(L, refAt(s, 0)))
        ins.push_back(*v);
    // The output is bound to the variable's buffer: it declares the same
    // tensor description, so the buffer has one size.
    AttrMap attrs = var.desc;
    attrs[(s.flags & 2) ? "ref_var_src_var_name" : "out0.ref_var_src_var_name"] =
        AttrValue::ofString(var.name);
    emit(L, kTypes[s.variant % 3], "rv", ins, attrs, std::nullopt, poolBit(Pool::Source));
  }

  void stepTensorMove(Level &L, const Step &s) {
    Value in = pick(L, refAt(s, 0)).value_or(anyValue(L));
    const char *type = s.variant % 10 == 8   ? "MemcpyAsync"
                       : s.variant % 10 == 9 ? "Identity"
                                             : "TensorMove";
    AttrMap attrs;
    if (on(SwarmBit::Reserved)) {
      switch (s.flags % 8) {
      case 1:
        attrs["_cannot_be_deleted"] = AttrValue::ofBool(true);
        break;
      case 2:
        attrs["no_need_constant_folding"] = AttrValue::ofBool(true);
        break;
      case 3:
        attrs["_cannot_be_deleted"] = AttrValue::ofBool(false);
        break;
      case 4:
        attrs["no_need_constant_folding"] = AttrValue::ofBool(false);
        break;
      default:
        break;
      }
    }
    NodeId tm = emit(L, type, "tm", {in}, withDesc(attrs, s.variant), std::nullopt,
                     poolBit(Pool::TensorMove));
    if (on(SwarmBit::CtrlEdges)) {
      if (s.flags & 8)
        if (auto from = pick(L, refAt(s, 1)); from && from->port.node != tm)
          graph(L).addCtrlEdge(from->port.node, tm);
      if (s.flags & 16)
        L.pendingCtrlFrom = tm;
    }
  }

  void stepView(Level &L, const Step &s) {
    Value in = pick(L, refAt(s, 0)).value_or(anyValue(L));
    uint8_t alias = poolBit(Pool::Alias);
    switch (s.variant % 3) {
    case 0: {
      std::vector<Value> ins{in};
      if (s.flags & 1)
        if (auto shape = pick(L, refAt(s, 1)))
          ins.push_back(*shape);
      emit(L, "Reshape", "view", ins, {}, std::nullopt, alias);
      return;
    }
    case 1:
      emit(L, "ExpandDims", "view", {in}, {{"out0.reuse_input", AttrValue::ofBool(true)}},
           std::nullopt, alias);
      return;
    default: {
      Value other = pick(L, refAt(s, 1)).value_or(in);
      emit(L, "Squeeze", "view", {other, in},
           {{"out0.reuse_input", AttrValue::ofBool(true)},
            {"out0.reuse_input_index", AttrValue::ofInt(1)}},
           std::nullopt, alias);
      return;
    }
    }
  }

  void stepMultiAlias(Level &L, const Step &s) {
    uint8_t alias = poolBit(Pool::Alias);
    if (s.variant % 2 == 0) {
      Value in = pick(L, refAt(s, 0)).value_or(anyValue(L));
      emit(L, "SplitView", "split", {in},
           {{"out0.reuse_input", AttrValue::ofBool(true)},
            {"out1.reuse_input", AttrValue::ofBool(true)}},
           2, alias);
      return;
    }
    // One output written in place, the other a view of the same input.
    auto target = pickWritable(L, refAt(s, 0));
    if (!target)
      return stepCompute(L, s);
    emit(L, "UpdateAndView", "split", {*target},
         {{"out0.ref_input", AttrValue::ofInt(0)}, {"out1.reuse_input", AttrValue::ofBool(true)}},
         2, alias);
  }

  void stepRefWrite(Level &L, const Step &s) {
    auto target = pickWritable(L, refAt(s, 0));
    if (!target)
      return stepCompute(L, s);
    std::optional<Value> value;
    if (s.refs.size() > 1)
      value = pick(L, s.refs[1]);
    std::vector<Value> ins{*target};
    unsigned v = s.variant % 8;
    if (v == 4 || v == 5 || v == 6) // Scatter*: target, indices, updates
      ins.push_back(value.value_or(*target));
    if (value)
      ins.push_back(*value);
    static const char *const kTypes[] = {"Assign",     "Assign",        "AssignAdd",
                                         "AssignSub",  "ScatterUpdate", "ScatterNdUpdate",
                                         "ScatterAdd", "InplaceUpdate"};
    AttrMap attrs;
    if (v == 7)
      attrs["out0.ref_input"] = AttrValue::ofInt(0);
    emit(L, kTypes[v], "wr", ins, attrs, std::nullopt, poolBit(Pool::Alias));
  }

  void stepScopeWrite(Level &L, const Step &s) {
    std::vector<Value> ins;
    for (size_t i = 0; i < std::max<size_t>(1, std::min<size_t>(s.refs.size(), 2)); ++i)
      if (auto t = pickWritable(L, refAt(s, i)))
        ins.push_back(*t);
    if (ins.empty())
      return stepCompute(L, s);
    static const char *const kTypes[] = {"HcomAllReduce", "HcomBroadcast", "HcomReduceScatter",
                                         "InplaceScribble", "HcomAllReduce"};
    unsigned v = s.variant % 5;
    AttrMap attrs;
    if (v == 3)
      attrs["_input_mutable"] = AttrValue::ofBool(true);
    if (v == 4) // the attribute overrides the built-in behaviour: a plain reader
      attrs["_input_mutable"] = AttrValue::ofBool(false);
    emit(L, kTypes[v], "hcom", ins, attrs, std::nullopt, 0);
  }

  // ---- nodes holding subgraphs --------------------------------------------

  SubgraphResult buildSubgraph(const Level &parent, NodeId holder, const std::string &name,
                               const Body &body, const std::vector<Value> &parentInputs,
                               size_t numResults, bool mapResults, const BodyTail &tail = {}) {
    GraphId g = m_.addGraph(name);
    m_.attachSubgraph(parent.graph, holder, g);
    Level L;
    L.graph = g;
    L.depth = parent.depth + 1;
    L.variables = parent.variables;
    for (size_t p = 0; p < parentInputs.size(); ++p) {
      NodeId d = addNode(L, "Data", fresh("arg"), {}, std::nullopt);
      graph(L).node(d).attrs["_parent_node_index"] = AttrValue::ofInt(static_cast<int64_t>(p));
      // A Data whose parent input is unconnected gets a buffer of its own
      // (the memory plan's fallback), shared by everything that aliases it.
      BufSet bufs =
          parentInputs[p].unconnected ? BufSet{newBuffer(BufKind::Fresh)} : parentInputs[p].bufs;
      Value v{{d, 0}, bufs, static_cast<uint8_t>(parentInputs[p].pools | poolBit(Pool::Source))};
      L.values.push_back(v);
      L.parentInputs.push_back(v);
    }
    std::optional<Value> firstResult;
    if (tail.writeVar && !L.parentInputs.empty())
      firstResult = writeVariableThenReadCopy(L, *tail.writeVar, tail.variant);
    if (tail.writtenCopyOfArg && !L.parentInputs.empty())
      firstResult = writeCopyOfArgument(L, tail.variant);
    runSteps(L, body.steps);
    if (tail.copyAsResult)
      firstResult = copyReadBySibling(L, tail.variant);
    std::vector<Value> results;
    for (size_t k = 0; k < numResults; ++k) {
      Ref ref = k < body.outputs.size() ? body.outputs[k] : Ref{Pool::Any, static_cast<uint8_t>(k)};
      auto v = pick(L, ref);
      results.push_back(v ? *v : anyValue(L));
    }
    if (firstResult)
      results[0] = *firstResult;
    AttrMap attrs;
    if (mapResults)
      for (size_t k = 0; k < numResults; ++k)
        attrs[Node::portKey(false, static_cast<uint32_t>(k), "_parent_node_index")] =
            AttrValue::ofInt(static_cast<int64_t>(k));
    emit(L, "NetOutput", "ret", results, attrs, std::nullopt, 0);
    SubgraphResult r;
    for (const Value &v : results)
      r.results.push_back(v.bufs);
    r.touched = std::move(L.touched);
    return r;
  }

  /// CallShape::WritesCopiedVariable, at the start of the body: write the
  /// variable by name, then read argument 0 (the copy of that variable).
  /// While the copy exists the two touch different buffers, so nothing
  /// orders the read after the write; variant bit 0 adds that edge and makes
  /// the read result 0, so that deleting the copy changes a value rather
  /// than making a race. The control edge from the argument's Data orders
  /// the copy (through the call's data edge) before the body's accesses to
  /// the variable: later steps of the body come after the write.
  std::optional<Value> writeVariableThenReadCopy(Level &L, const Variable &var, uint8_t variant) {
    NodeId arg = L.parentInputs[0].port.node;
    AttrMap attrs = var.desc;
    attrs["out0.ref_var_src_var_name"] = AttrValue::ofString(var.name);
    NodeId rv = emit(L, "RefIdentity", "rv", {}, attrs, std::nullopt, poolBit(Pool::Source));
    graph(L).addCtrlEdge(arg, rv);
    NodeId w = emit(L, "Assign", "wr", {L.values.back()}, {}, std::nullopt, poolBit(Pool::Alias));
    NodeId q = emit(L, "Abs", "op", {L.parentInputs[0]}, {}, std::nullopt, 0);
    if (variant % 2 == 0)
      return std::nullopt;
    order(L, w, q);
    return L.values.back();
  }

  /// CallShape::WrittenCopyOfUnconnected, at the start of the body: a copy
  /// of a view of an unconnected slot or (variant bit 2) of argument 0,
  /// whose slot in the call is `_`; written in place, returned as result 0.
  Value writeCopyOfArgument(Level &L, uint8_t variant) {
    Value source = L.parentInputs[0];
    if (variant / 4 % 2 == 0) {
      AttrMap view;
      view["out0.reuse_input"] = AttrValue::ofBool(true);
      emit(L, "Reshape", "view", {unconnectedSlot()}, view, std::nullopt, poolBit(Pool::Alias));
      source = L.values.back();
    }
    emit(L, "TensorMove", "tm", {source}, {}, std::nullopt, poolBit(Pool::TensorMove));
    Value tm = L.values.back();
    static const char *const kWriters[] = {"Assign", "AssignAdd", "ScatterUpdate", "InplaceUpdate"};
    unsigned v = variant % 4;
    AttrMap attrs;
    if (v == 3)
      attrs["out0.ref_input"] = AttrValue::ofInt(0);
    emit(L, kWriters[v], "wr", {tm}, attrs, std::nullopt, poolBit(Pool::Alias));
    return L.values.back();
  }

  /// CallShape::ResultWrittenOutside, at the end of the body: a copy of a
  /// new local value that a sibling also reads; the copy becomes result 0.
  std::optional<Value> copyReadBySibling(Level &L, uint8_t variant) {
    std::vector<Value> base;
    if (auto v = pick(L, Ref{Pool::Any, 0}); v && variant % 2 == 0)
      base.push_back(*v);
    emit(L, "ReLU", "op", base, {}, std::nullopt, 0);
    Value r = L.values.back();
    static const char *const kReaders[] = {"Abs", "Concat", "Add"};
    const char *reader = kReaders[variant / 2 % 3];
    bool readerFirst = variant / 8 % 2 == 1;
    if (readerFirst)
      emit(L, reader, "op", {r}, {}, std::nullopt, 0);
    emit(L, "TensorMove", "tm", {r}, {}, std::nullopt, poolBit(Pool::TensorMove));
    Value tm = L.values.back();
    if (!readerFirst)
      emit(L, reader, "op", {r}, {}, std::nullopt, 0);
    return tm;
  }

  CallShape callShape(const Step &s) const {
    switch (static_cast<CallShape>(s.flags % 8)) {
    case CallShape::WritesCopiedVariable:
      return on(SwarmBit::Variables) && on(SwarmBit::Writers) ? CallShape::WritesCopiedVariable
                                                              : CallShape::Plain;
    case CallShape::ResultWrittenOutside:
      return on(SwarmBit::Writers) ? CallShape::ResultWrittenOutside : CallShape::Plain;
    case CallShape::WrittenCopyOfUnconnected:
      return on(SwarmBit::Unconnected) && on(SwarmBit::Writers)
                 ? CallShape::WrittenCopyOfUnconnected
                 : CallShape::Plain;
    default:
      return CallShape::Plain;
    }
  }

  /// A new TensorMove of a variable visible here (made if there is none),
  /// read through the newest value bound to it or a new reference by name.
  Variable copyVariable(Level &L, const Step &s) {
    if (L.variables.empty())
      emitVariable(L, s.variant / 4);
    const Variable var = L.variables[L.variables.size() - 1 - s.variant / 4 % L.variables.size()];
    std::optional<Value> src;
    for (size_t i = L.values.size(); i-- > 0 && !src;)
      if ((L.values[i].pools & poolBit(Pool::Source)) && L.values[i].bufs == BufSet{var.buffer})
        src = L.values[i];
    if (!src) {
      AttrMap attrs = var.desc;
      attrs["out0.ref_var_src_var_name"] = AttrValue::ofString(var.name);
      emit(L, "RefIdentity", "rv", {}, attrs, std::nullopt, poolBit(Pool::Source));
      src = L.values.back();
    }
    // The copy declares the variable's description: a size mismatch would
    // keep it for another reason.
    emit(L, "TensorMove", "tm", {*src}, var.desc, std::nullopt, poolBit(Pool::TensorMove));
    return var;
  }

  static const Body &bodyAt(const Step &s, size_t i) {
    static const Body kEmpty;
    return i < s.bodies.size() ? s.bodies[i] : kEmpty;
  }

  /// Orders the holder against everything it (and its subgraphs) touch and
  /// records its outputs.
  void finishHolder(Level &L, NodeId h, const std::vector<Value> &inputs, Effects effects,
                    bool writesInputs, const std::vector<BufSet> &outputBufs,
                    const DataOrdered *through = nullptr) {
    for (const Value &v : inputs)
      effects.add(v.bufs, writesInputs);
    applyEffects(L, h, effects, through);
    for (size_t k = 0; k < outputBufs.size(); ++k)
      L.values.push_back(
          Value{{h, static_cast<uint32_t>(k)}, outputBufs[k], poolBit(Pool::Holder)});
  }

  void stepCall(Level &L, const Step &s) {
    CallShape shape = callShape(s);
    BodyTail tail;
    tail.variant = s.variant / 4;
    std::optional<Variable> var;
    std::vector<Value> ins;
    if (shape == CallShape::WritesCopiedVariable) {
      var = copyVariable(L, s);
      tail.writeVar = &*var;
      ins.push_back(L.values.back());
      for (Value &v : pickAll(L, s.refs, 0, kMaxRefs - 1))
        ins.push_back(std::move(v));
    } else if (shape == CallShape::WrittenCopyOfUnconnected) {
      ins.push_back(unconnectedSlot());
      for (Value &v : pickAll(L, s.refs, 0, kMaxRefs - 1))
        ins.push_back(std::move(v));
    } else {
      ins = pickAll(L, s.refs, 0, kMaxRefs);
    }
    tail.copyAsResult = shape == CallShape::ResultWrittenOutside;
    tail.writtenCopyOfArg = shape == CallShape::WrittenCopyOfUnconnected;
    const char *type = s.variant % 4 == 3 ? "StatefulPartitionedCall" : "PartitionedCall";
    const Body &body = bodyAt(s, 0);
    size_t numResults = std::clamp<size_t>(body.outputs.size(), 1, 3);
    std::string name = fresh("pc");
    NodeId h = addNode(L, type, name, ins, static_cast<uint32_t>(numResults));
    auto r = buildSubgraph(L, h, name + "_body", body, ins, numResults, true, tail);
    BufSet result0 = r.results[0];
    // The copy of the variable reads it before the body's first access to it
    // (the control edge from the argument's Data): no control edge from the
    // copy to the call, which the deletion would turn into a self edge.
    std::optional<DataOrdered> copyFirst;
    if (var)
      copyFirst = DataOrdered{ins[0].port.node, BufSet{var->buffer}};
    finishHolder(L, h, ins, std::move(r.touched), false, r.results,
                 copyFirst ? &*copyFirst : nullptr);
    if (shape != CallShape::ResultWrittenOutside)
      return;
    // Write result 0 (the body's copy) in the parent. The copy's buffer is
    // new in the body and only its NetOutput reads it there, so the data
    // edge from the call orders the copy before the writer: no control edge
    // from the call (which would order the whole body, the sibling included).
    static const char *const kWriters[] = {"Assign", "AssignAdd", "AssignSub", "InplaceUpdate"};
    unsigned v = s.variant / 64 % 4;
    AttrMap attrs;
    if (v == 3)
      attrs["out0.ref_input"] = AttrValue::ofInt(0);
    DataOrdered through{h, result0};
    emit(L, kWriters[v], "wr", {L.values[L.values.size() - numResults]}, attrs, std::nullopt,
         poolBit(Pool::Alias), &through);
  }

  void stepBranch(Level &L, const Step &s) {
    bool isIf = s.kind == StepKind::If;
    std::vector<Value> ins{pick(L, refAt(s, 0)).value_or(anyValue(L))};
    for (Value &v : pickAll(L, s.refs, 1, 2))
      ins.push_back(std::move(v));
    unsigned v = s.variant % 6;
    const char *type = isIf ? (v == 4   ? "StatelessIf"
                               : v == 5 ? "_If"
                                        : "If")
                            : (v >= 4 ? "StatelessCase" : "Case");
    size_t numBranches = isIf ? 2 : std::clamp<size_t>(s.bodies.size(), 2, 3);
    size_t numResults = std::clamp<size_t>(bodyAt(s, 0).outputs.size(), 1, 3);
    std::string name = fresh(isIf ? "if" : "case");
    NodeId h = addNode(L, type, name, ins, static_cast<uint32_t>(numResults));
    Effects touched;
    std::vector<BufSet> outs(numResults);
    for (size_t b = 0; b < numBranches; ++b) {
      std::string sub =
          name + (isIf ? (b == 0 ? "_then" : "_else") : "_branch" + std::to_string(b));
      auto r = buildSubgraph(L, h, sub, bodyAt(s, b), ins, numResults, true);
      touched.merge(r.touched);
      for (size_t k = 0; k < numResults; ++k)
        outs[k] = unite(outs[k], r.results[k]);
    }
    finishHolder(L, h, ins, std::move(touched), false, outs);
  }

  void stepWhile(Level &L, const Step &s) {
    // Loop variables are written in place: distinct buffers, none a weight.
    std::vector<Value> vars;
    BufSet taken;
    for (size_t i = 0; i < std::max<size_t>(1, std::min(s.refs.size(), kMaxRefs)); ++i)
      if (auto v = pickWritable(L, refAt(s, i), taken)) {
        taken = unite(taken, v->bufs);
        vars.push_back(*v);
      }
    if (vars.empty()) {
      emit(L, "ReLU", "op", {}, {}, std::nullopt, 0);
      vars.push_back(L.values.back());
    }
    unsigned v = s.variant % 6;
    const char *type = v == 4 ? "StatelessWhile" : v == 5 ? "_While" : "While";
    std::string name = fresh("while");
    NodeId h = addNode(L, type, name, vars, std::nullopt);
    if (s.flags % 4)
      graph(L).node(h).attrs["max_iterations"] = AttrValue::ofInt(s.flags % 4);
    auto cond = buildSubgraph(L, h, name + "_cond", bodyAt(s, 0), vars, 1, false);
    auto body = buildSubgraph(L, h, name + "_body", bodyAt(s, 1), vars, vars.size(), true);
    Effects touched = std::move(cond.touched);
    touched.merge(body.touched);
    std::vector<BufSet> outs;
    for (const Value &var : vars)
      outs.push_back(var.bufs);
    finishHolder(L, h, vars, std::move(touched), true, outs);
  }

  // ---- options ------------------------------------------------------------

  void buildOptions(size_t numGraphOutputs) {
    if (!on(SwarmBit::Options))
      return;
    auto numInputs = static_cast<unsigned>(nextUserIndex_);
    auto numOutputs = static_cast<unsigned>(numGraphOutputs);
    auto index = [](unsigned raw, unsigned count, OptionMode mode) {
      if (mode == OptionMode::Matching && count > 0)
        return raw % count;
      return count + raw % 3; // out of range
    };
    const OptionRecipe &out = recipe_.outputReuse;
    if (out.mode != OptionMode::Absent) {
      std::string text;
      if (out.mode == OptionMode::Malformed) {
        static const char *const kBad[] = {
            "0,x",   "0;0", "-1,0", "0,0|", "0 0",
            "0,0,0", "1|2", "a",    "0,,1", "99999999999999999999999,0"};
        text = kBad[out.malformedVariant % 10];
      } else {
        const char *sep = out.malformedVariant % 2 ? " | " : "|";
        const char *comma = out.malformedVariant % 3 == 2 ? " , " : ",";
        for (size_t i = 0; i < std::max<size_t>(1, out.pairs.size()); ++i) {
          auto [j, k] = i < out.pairs.size() ? out.pairs[i] : std::pair<uint8_t, uint8_t>{0, 0};
          if (i)
            text += sep;
          text += std::to_string(index(j, numOutputs, out.mode)) + comma +
                  std::to_string(index(k, numInputs, out.mode));
        }
      }
      m_.options["ge.exec.outputReuseInputMemIndexes"] = text;
    }
    const OptionRecipe &in = recipe_.inputReuse;
    if (in.mode != OptionMode::Absent) {
      std::string text;
      if (in.mode == OptionMode::Malformed) {
        static const char *const kBad[] = {"x", "0,", ",0", "0|1", "-1", "0;1", "1.5", "0 1"};
        text = kBad[in.malformedVariant % 8];
      } else {
        const char *comma = in.malformedVariant % 2 ? " , " : ",";
        for (size_t i = 0; i < std::max<size_t>(1, in.pairs.size()); ++i) {
          uint8_t k = i < in.pairs.size() ? in.pairs[i].first : 0;
          if (i)
            text += comma;
          text += std::to_string(index(k, numInputs, in.mode));
        }
      }
      m_.options["ge.exec.inputReuseMemIndexes"] = text;
    }
  }
};

} // namespace

Module buildModule(const Recipe &recipe) {
  return Builder(recipe).build();
}

} // namespace graphvet::props
