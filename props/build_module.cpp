// The recipe interpreter. It keeps, per graph being built, the values created
// so far (with the set of buffers each may be bound to) and, per buffer, the
// last writer and the readers since; each new access is ordered after the
// accesses it conflicts with. A node holding subgraphs is one unit at its
// parent's level whose effects are everything its subgraphs touch.
#include "props/build_module.h"

#include "ir/op_library.h"
#include "ir/printer.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>

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
  AttrMap desc;             ///< the variable's out0.dtype / out0.shape, if any
  GraphId graph = kNoGraph; ///< the graph of the node that declared it first
};

/// A variable's tensor description moved to output k (`out0.x` -> `outK.x`).
AttrMap descFor(const AttrMap &desc, uint32_t k) {
  AttrMap out;
  for (const auto &[key, v] : desc)
    if (key.rfind("out0.", 0) == 0)
      out[Node::portKey(true, k, key.substr(5))] = v;
  return out;
}

void merge(AttrMap &into, const AttrMap &from) {
  for (const auto &[k, v] : from)
    into[k] = v;
}

bool isIdentifierName(const std::string &s) {
  return s != "true" && s != "false" && isIdentifier(s);
}

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
  /// The graph never runs (HolderTwist::NeverRuns, or inside such a graph):
  /// a variable nobody declares may be named here.
  bool dead = false;
  std::vector<NodeId> ctrlToNetOutput; ///< CtrlTwist::ToNetOutput
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

/// How a subgraph's boundary is spelled (HolderTwist); the default is the
/// usual one: a Data per parent input in order, result k handed back as
/// output k.
struct BoundaryShape {
  bool dataReversed = false;
  bool skipLastData = false;
  bool resultsPermuted = false;
  bool resultUnmapped = false;
  bool result0Unmapped = false;
  bool result0Unconnected = false;
  bool noNetOutput = false;
  bool dataIndexAttr = false;
  bool trailingNode = false;
  bool netOutputOutputs = false;
  bool dead = false;
};

/// What a subgraph hands back for one output of its holder.
struct ResultSlot {
  bool produced = false;  ///< a NetOutput input carries this parent index
  bool connected = false; ///< ...and that input is not `_`
  BufSet bufs;
};

/// Result of building one subgraph.
struct SubgraphResult {
  std::vector<ResultSlot> outputs; ///< by holder output
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
    auto tw = static_cast<RootTwist>(on(SwarmBit::Twists) ? recipe_.root.twist : 0);
    std::vector<Value> results;
    for (size_t k = 0; k < numResults; ++k) {
      Ref ref = k < recipe_.root.outputs.size() ? recipe_.root.outputs[k]
                                                : Ref{Pool::Any, static_cast<uint8_t>(k)};
      results.push_back(*pick(L, ref));
    }
    if (tw == RootTwist::UnconnectedOutput && on(SwarmBit::Unconnected))
      results.back() = unconnectedSlot();
    AttrMap attrs;
    if (tw == RootTwist::RefVarSrcNamed && on(SwarmBit::Variables) && !L.variables.empty())
      attrs["ref_var_src_var_name"] = AttrValue::ofString(L.variables.back().name);
    if (tw == RootTwist::NoNetOutput) {
      buildOptions(0);
      return std::move(m_);
    }
    NodeId out = emit(L, "NetOutput", "out", results, attrs, std::nullopt, 0);
    finishNetOutput(L, out);
    if (tw == RootTwist::TrailingNode && on(SwarmBit::CtrlEdges))
      trailingReader(L, out, results);
    buildOptions(results.size());
    return std::move(m_);
  }

private:
  const Recipe &recipe_;
  Module m_;
  std::vector<BufKind> bufKinds_;
  unsigned counter_ = 0;
  int64_t nextUserIndex_ = 0;
  std::vector<int64_t> userIndexes_; ///< `index` of every root Data, in creation order
  /// Every variable declared so far, in any graph (Variable nodes only).
  std::vector<Variable> allVariables_;
  /// Buffers of variables nobody declares (named only in graphs that never run).
  std::map<std::string, uint32_t> ghosts_;
  // Scratch for ordered(): visit stamps and the work list.
  std::vector<uint32_t> seen_;
  uint32_t epoch_ = 0;
  std::vector<NodeId> work_;

  bool on(SwarmBit b) const { return (recipe_.swarm & static_cast<uint32_t>(b)) != 0; }

  /// The step's twist while twists are on; 0 (the usual spelling) otherwise.
  template <typename E> E twistOf(const Step &s) const {
    return static_cast<E>(on(SwarmBit::Twists) ? s.twist : 0);
  }

  std::string fresh(const char *prefix) { return prefix + std::to_string(counter_++); }

  /// Adds a tensor description of output 0 chosen by the high bits of a
  /// step's variant (most steps keep the default f32 [4]).
  AttrMap withDesc(AttrMap attrs, uint8_t variant) const {
    if (!on(SwarmBit::TensorDescs))
      return attrs;
    if (on(SwarmBit::Twists)) {
      switch (variant / 16) {
      case 10: // a scalar
        attrs["out0.shape"] = AttrValue::ofList({});
        return attrs;
      case 11: // no elements: zero bytes
        attrs["out0.dtype"] = AttrValue::ofIdent("u8");
        attrs["out0.shape"] = AttrValue::ofList({AttrValue::ofInt(0), AttrValue::ofInt(3)});
        return attrs;
      case 12:
        attrs["out0.dtype"] = AttrValue::ofIdent(variant % 2 ? "f64" : "bool");
        return attrs;
      default:
        break;
      }
    }
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

  /// The buffer of the variable called `name`: visible here, declared in
  /// another graph, or (in a graph that never runs) declared nowhere.
  uint32_t variableBuffer(const Level &L, const std::string &name) {
    if (const Variable *v = findVariable(L, name))
      return v->buffer;
    for (const Variable &v : allVariables_)
      if (v.name == name)
        return v.buffer;
    auto it = ghosts_.find(name);
    if (it != ghosts_.end())
      return it->second;
    uint32_t b = newBuffer(BufKind::Variable);
    ghosts_.emplace(name, b);
    return b;
  }

  /// A variable visible here (a new one when there is none), chosen by `sel`.
  Variable visibleVariable(Level &L, unsigned sel, uint8_t variant) {
    if (L.variables.empty())
      emitVariable(L, variant);
    return L.variables[L.variables.size() - 1 - sel % L.variables.size()];
  }

  /// A variable declared in another graph that is not visible here.
  std::optional<Variable> hiddenVariable(const Level &L, unsigned sel) const {
    std::vector<const Variable *> c;
    for (const Variable &v : allVariables_)
      if (!findVariable(L, v.name))
        c.push_back(&v);
    if (c.empty())
      return std::nullopt;
    return *c[c.size() - 1 - sel % c.size()];
  }

  /// The variable whose buffer `v` is bound to, if it is one.
  std::optional<Variable> variableOfValue(const Level &L, const Value &v) const {
    if (v.bufs.size() != 1)
      return std::nullopt;
    for (const Variable &var : L.variables)
      if (var.buffer == v.bufs[0])
        return var;
    for (const Variable &var : allVariables_)
      if (var.buffer == v.bufs[0])
        return var;
    return std::nullopt;
  }

  AttrValue nameValue(const std::string &name, bool identifier) const {
    return identifier && isIdentifierName(name) ? AttrValue::ofIdent(name)
                                                : AttrValue::ofString(name);
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
    // The memory plan's order (semantics.md §1): a variable named by the
    // output comes first, then a copy's fresh buffer, then ref outputs and
    // views. The output bound to a variable writes nothing there, but the
    // builder counts it as a write (an over-approximation orders more, never
    // less).
    for (uint32_t k = 0; k < n.numOutputs; ++k) {
      Value out{{id, k}, {}, pools};
      if (const std::string *var = refVarSrcName(n, k)) {
        out.bufs = {variableBuffer(L, *var)};
        e.add(out.bufs, true);
      } else if (isCopy(n) && k == 0) {
        out.bufs = {newBuffer(BufKind::Fresh)};
      } else if (auto in = aliasedInput(n, k); in && !inputs[*in].unconnected) {
        out.bufs = inputs[*in].bufs;
      } else {
        out.bufs = {newBuffer(BufKind::Fresh)}; // fresh, or a view of `_`: its own buffer
      }
      outs.push_back(std::move(out));
    }
    applyEffects(L, id, e, through);
    if (type != "NetOutput")
      for (Value &v : outs)
        L.values.push_back(std::move(v));
    return id;
  }

  /// A source node: its output 0 is bound to `buffer`; no access. A second
  /// output (SourceTwist::SecondOutput) is a fresh buffer nobody writes.
  NodeId emitSource(Level &L, const std::string &type, const std::string &name, uint32_t buffer,
                    const AttrMap &attrs, uint8_t pools, uint32_t numOutputs = 1) {
    NodeId id = addNode(L, type, name, {},
                        numOutputs == 1 ? std::nullopt : std::optional<uint32_t>(numOutputs));
    Node &n = graph(L).node(id);
    for (const auto &[k, v] : attrs)
      n.attrs[k] = v;
    L.values.push_back(Value{{id, 0}, {buffer}, pools});
    for (uint32_t k = 1; k < numOutputs; ++k)
      L.values.push_back(Value{{id, k}, {newBuffer(BufKind::Fresh)}, 0});
    return id;
  }
  NodeId emitSource(Level &L, const std::string &type, const char *prefix, uint32_t buffer,
                    const AttrMap &attrs, uint8_t pools) {
    return emitSource(L, type, fresh(prefix), buffer, attrs, pools);
  }

  /// The twists every source step takes: a second output, a control edge
  /// in, a `ref_var_src_var_name` (which the source's own binding overrides).
  struct SourceExtras {
    uint32_t numOutputs = 1;
    NodeId ctrlFrom = kNoNode;
  };
  SourceExtras sourceExtras(const Level &L, SourceTwist tw, AttrMap &attrs) const {
    SourceExtras x;
    switch (tw) {
    case SourceTwist::SecondOutput:
      if (on(SwarmBit::ExtraOutputs))
        x.numOutputs = 2;
      break;
    case SourceTwist::CtrlIn:
      if (on(SwarmBit::CtrlEdges) && !L.values.empty())
        x.ctrlFrom = L.values.back().port.node;
      break;
    case SourceTwist::RefVarSrcNamed:
      if (on(SwarmBit::Variables))
        attrs["ref_var_src_var_name"] = AttrValue::ofString(
            L.variables.empty() ? std::string("nowhere") : L.variables.back().name);
      break;
    default:
      break;
    }
    return x;
  }

  void finishSource(Level &L, NodeId id, const SourceExtras &x) {
    if (x.ctrlFrom != kNoNode && x.ctrlFrom != id)
      graph(L).addCtrlEdge(x.ctrlFrom, id);
  }

  void emitUserInput(Level &L, uint8_t variant, SourceTwist tw = {}) {
    static const char *const kTypes[] = {"Data", "Data",     "Data",    "Data",
                                         "Data", "AippData", "AnnData", "Data"};
    const char *type = kTypes[variant % 8];
    AttrMap attrs;
    SourceExtras x = sourceExtras(L, tw, attrs);
    NodeId id;
    if (variant % 8 == 7) {
      id = emitSource(L, type, fresh("mem"), newBuffer(BufKind::CallerMemory),
                      withDesc(attrs, variant), poolBit(Pool::Source), x.numOutputs);
    } else {
      if (tw == SourceTwist::Elsewhere)
        ++nextUserIndex_; // an index left out
      if (tw == SourceTwist::OddAttribute)
        attrs["_parent_node_index"] = AttrValue::ofInt(0);
      userIndexes_.push_back(nextUserIndex_);
      attrs["index"] = AttrValue::ofInt(nextUserIndex_++);
      id = emitSource(L, type, fresh("x"), newBuffer(BufKind::UserInput), withDesc(attrs, variant),
                      poolBit(Pool::Source), x.numOutputs);
    }
    finishSource(L, id, x);
  }

  void emitVariable(Level &L, uint8_t variant, SourceTwist tw = {}) {
    static const char *const kTypes[] = {"Variable", "VariableV2", "RefData"};
    AttrMap attrs;
    SourceExtras x = sourceExtras(L, tw, attrs);
    if (tw == SourceTwist::Elsewhere && redeclareVariable(L, variant, attrs))
      return;
    uint32_t buf = newBuffer(BufKind::Variable);
    AttrMap desc = withDesc({}, variant);
    std::string name = fresh("var");
    if (tw == SourceTwist::OddAttribute)
      name = "scope/" + name; // printed quoted
    AttrMap a = desc;
    merge(a, attrs);
    NodeId id =
        emitSource(L, kTypes[variant % 3], name, buf, a, poolBit(Pool::Source), x.numOutputs);
    L.variables.push_back({name, buf, desc, L.graph});
    allVariables_.push_back({name, buf, desc, L.graph});
    finishSource(L, id, x);
  }

  /// Declares a variable of another graph once more: same name, same
  /// buffer, same description (a node name is unique within its graph).
  /// False when there is none.
  bool redeclareVariable(Level &L, uint8_t variant, const AttrMap &attrs) {
    static const char *const kTypes[] = {"Variable", "VariableV2", "RefData"};
    for (size_t i = allVariables_.size(); i-- > 0;) {
      const Variable v = allVariables_[i];
      if (v.graph == L.graph || graph(L).find(v.name) != kNoNode)
        continue;
      AttrMap a = v.desc;
      merge(a, attrs);
      emitSource(L, kTypes[variant % 3], v.name, v.buffer, a, poolBit(Pool::Source), 1);
      if (!findVariable(L, v.name))
        L.variables.push_back(v);
      return true;
    }
    return false;
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
      return emitVariable(L, s.variant, twistOf<SourceTwist>(s));
    case StepKind::Weight: {
      static const char *const kTypes[] = {"Const", "Constant", "ConstPlaceHolder", "FileConstant"};
      AttrMap attrs;
      if (s.variant % 4 == 3)
        attrs["file_path"] = AttrValue::ofString("weights/w" + std::to_string(counter_) + ".bin");
      SourceExtras x = sourceExtras(L, twistOf<SourceTwist>(s), attrs);
      NodeId id = emitSource(L, kTypes[s.variant % 4], fresh("w"), newBuffer(BufKind::Weight),
                             withDesc(attrs, s.variant), poolBit(Pool::Source), x.numOutputs);
      finishSource(L, id, x);
      return;
    }
    case StepKind::RefVarSource:
      return stepRefVarSource(L, s);
    case StepKind::TensorMove:
      return stepTensorMove(L, s);
    case StepKind::TensorMoveChain: {
      Value v = pick(L, refAt(s, 0)).value_or(anyValue(L));
      unsigned length = 2 + s.variant % 2;
      AttrMap first;
      if (twistOf<TensorMoveTwist>(s) == TensorMoveTwist::BoundOutput && on(SwarmBit::Variables) &&
          on(SwarmBit::BoundCopies)) {
        // The first copy of the chain is bound to a variable by name.
        Variable var = visibleVariable(L, s.flags, s.variant / 4);
        first = var.desc;
        first["out0.ref_var_src_var_name"] = AttrValue::ofString(var.name);
      }
      for (unsigned i = 0; i < length; ++i) {
        emit(L, "TensorMove", "tm", {v}, i == 0 ? first : AttrMap{}, std::nullopt,
             poolBit(Pool::TensorMove));
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
    case StepKind::Continuous:
      return stepContinuous(L, s);
    case StepKind::Call:
      return stepCall(L, s);
    case StepKind::If:
    case StepKind::Case:
      return stepBranch(L, s);
    case StepKind::While:
      return stepWhile(L, s);
    case StepKind::CtrlEdge:
      return stepCtrlEdge(L, s);
    }
  }

  void stepCtrlEdge(Level &L, const Step &s) {
    switch (twistOf<CtrlTwist>(s)) {
    case CtrlTwist::FromHolder:
      // From a holder to the next node of this graph.
      if (auto h = pick(L, Ref{Pool::Holder, refAt(s, 0).back});
          h && holdsSubgraphs(graph(L).node(h->port.node))) {
        L.pendingCtrlFrom = h->port.node;
        return;
      }
      break;
    case CtrlTwist::ToHolder:
      // Into a holder from a node made before it.
      if (auto h = pick(L, Ref{Pool::Holder, refAt(s, 1).back});
          h && holdsSubgraphs(graph(L).node(h->port.node))) {
        std::vector<NodeId> before;
        for (const Value &v : L.values)
          if (v.port.node < h->port.node)
            before.push_back(v.port.node);
        if (!before.empty()) {
          graph(L).addCtrlEdge(before[before.size() - 1 - refAt(s, 0).back % before.size()],
                               h->port.node);
          return;
        }
      }
      break;
    case CtrlTwist::ToNetOutput:
      if (auto a = pick(L, refAt(s, 0))) {
        L.ctrlToNetOutput.push_back(a->port.node);
        return;
      }
      break;
    case CtrlTwist::ParallelToData:
      if (!L.values.empty()) {
        NodeId n = L.values.back().port.node;
        for (const auto &in : graph(L).node(n).inputs)
          if (in) {
            graph(L).addCtrlEdge(in->node, n);
            return;
          }
      }
      break;
    default:
      break;
    }
    auto a = pick(L, refAt(s, 0));
    auto b = pick(L, refAt(s, 1));
    if (!a || !b || a->port.node == b->port.node)
      return;
    graph(L).addCtrlEdge(std::min(a->port.node, b->port.node),
                         std::max(a->port.node, b->port.node));
  }

  void stepCompute(Level &L, const Step &s) {
    static const char *const kTypes[] = {"ReLU", "AddD", "MulD", "CastD", "TransData", "SubD"};
    std::vector<Value> ins = pickAll(L, s.refs, 0, kMaxRefs);
    std::optional<uint32_t> outs;
    if (s.flags % 4 == 3)
      outs = 2;
    AttrMap attrs = withDesc({}, s.variant);
    switch (twistOf<ComputeTwist>(s)) {
    case ComputeTwist::ZeroOutputs:
      outs = 0;
      attrs.clear(); // no output to describe
      break;
    case ComputeTwist::SecondOutputDesc:
      outs = 2;
      if (on(SwarmBit::TensorDescs)) {
        attrs["out1.dtype"] = AttrValue::ofIdent("f16");
        attrs["out1.shape"] = AttrValue::ofList({AttrValue::ofInt(3)});
      }
      break;
    case ComputeTwist::UnknownAttributes:
      attrs["data_format"] = AttrValue::ofIdent("NCHW");
      attrs["out0.note"] = AttrValue::ofString("twist");
      if (!ins.empty())
        attrs["in0.layout"] = AttrValue::ofList({AttrValue::ofInt(1), AttrValue::ofInt(0)});
      break;
    case ComputeTwist::ReservedOnOrdinary:
      if (on(SwarmBit::Reserved))
        attrs[s.variant % 2 ? "_cannot_be_deleted" : "no_need_constant_folding"] =
            AttrValue::ofBool(true);
      break;
    case ComputeTwist::SameValueTwice: {
      Value v = pick(L, refAt(s, 0)).value_or(anyValue(L));
      ins = {v, v};
      break;
    }
    default:
      break;
    }
    emit(L, kTypes[s.variant % 6], "op", ins, attrs, outs, 0);
  }

  void stepUserInput(Level &L, const Step &s) {
    if (L.depth == 0)
      return emitUserInput(L, s.variant, twistOf<SourceTwist>(s));
    // In a subgraph, SourceTwist::Elsewhere declares a variable of another
    // graph once more (when there is one).
    if (twistOf<SourceTwist>(s) == SourceTwist::Elsewhere && on(SwarmBit::Variables) &&
        redeclareVariable(L, s.variant, {}))
      return;
    // In a subgraph: bring a parent input to the front of the value list.
    if (L.parentInputs.empty())
      return;
    L.values.push_back(L.parentInputs[s.variant % L.parentInputs.size()]);
  }

  void stepRefVarSource(Level &L, const Step &s) {
    auto tw = twistOf<RefVarTwist>(s);
    static const char *const kTypes[] = {"ReadVariableOp", "RefIdentity", "VarHandleRead"};
    const uint8_t source = poolBit(Pool::Source);
    if (tw == RefVarTwist::Undeclared && L.dead) {
      // Nobody declares it: only a graph that never runs may name it.
      AttrMap attrs;
      attrs["out0.ref_var_src_var_name"] = AttrValue::ofString(fresh("ghost"));
      emit(L, kTypes[s.variant % 3], "rv", {}, attrs, std::nullopt, source);
      return;
    }
    Variable var = visibleVariable(L, s.flags / 4, s.variant / 4);
    if (tw == RefVarTwist::Elsewhere)
      if (auto hidden = hiddenVariable(L, s.flags / 4))
        var = *hidden;
    std::vector<Value> ins;
    if (s.flags & 1)
      if (auto v = pick(L, refAt(s, 0)))
        ins.push_back(*v);
    // An output bound to a variable declares the variable's tensor
    // description, so the buffer has one size.
    AttrMap attrs;
    auto bind = [&](const Variable &v, uint32_t k, const char *key) {
      merge(attrs, descFor(v.desc, k));
      attrs[key] = nameValue(v.name, tw == RefVarTwist::Identifier);
    };
    switch (tw) {
    case RefVarTwist::SecondOutput:
      bind(var, 1, "out1.ref_var_src_var_name");
      emit(L, kTypes[s.variant % 3], "rv", ins, attrs, 2, source);
      return;
    case RefVarTwist::NodeLevelMulti:
      merge(attrs, descFor(var.desc, 1));
      bind(var, 0, "ref_var_src_var_name");
      emit(L, kTypes[s.variant % 3], "rv", ins, attrs, 2, source);
      return;
    case RefVarTwist::BothLevels: {
      // Output 0 names `other`, output 1 falls back to the node's name.
      if (L.variables.size() < 2)
        emitVariable(L, s.variant / 8);
      Variable other = L.variables[L.variables.size() - 1 - (s.flags / 4 + 1) % L.variables.size()];
      if (other.name == var.name)
        other = L.variables[L.variables.size() - 1 - s.flags / 4 % L.variables.size()];
      bind(var, 1, "ref_var_src_var_name");
      bind(other, 0, "out0.ref_var_src_var_name");
      emit(L, kTypes[s.variant % 3], "rv", ins, attrs, 2, source);
      return;
    }
    case RefVarTwist::OnView: {
      Value in = pick(L, refAt(s, 0)).value_or(anyValue(L));
      bind(var, 0, "out0.ref_var_src_var_name");
      emit(L, "Reshape", "view", {in}, attrs, std::nullopt, source);
      return;
    }
    case RefVarTwist::OnRefWriter:
      if (auto target = pickWritable(L, refAt(s, 0))) {
        bind(var, 0, "out0.ref_var_src_var_name");
        emit(L, "ScatterUpdate", "wr", {*target}, attrs, std::nullopt, source);
        return;
      }
      break;
    default:
      break;
    }
    bind(var, 0, (s.flags & 2) ? "ref_var_src_var_name" : "out0.ref_var_src_var_name");
    emit(L, kTypes[s.variant % 3], "rv", ins, attrs, std::nullopt, source);
  }

  void stepTensorMove(Level &L, const Step &s) {
    Value in = pick(L, refAt(s, 0)).value_or(anyValue(L));
    const char *type = s.variant % 10 == 8   ? "MemcpyAsync"
                       : s.variant % 10 == 9 ? "Identity"
                                             : "TensorMove";
    auto tw = twistOf<TensorMoveTwist>(s);
    std::vector<Value> ins{in};
    std::optional<uint32_t> outs;
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
    bool bound = false;
    switch (tw) {
    case TensorMoveTwist::BoundOutput:
    case TensorMoveTwist::BoundNode:
    case TensorMoveTwist::BoundToSource:
    case TensorMoveTwist::CopyOfBound: {
      if (!on(SwarmBit::Variables) || !on(SwarmBit::BoundCopies))
        break;
      // The copy's output is the variable's buffer (semantics.md §1): it
      // reads its input and its consumers read the variable.
      std::optional<Variable> var;
      if (tw == TensorMoveTwist::BoundToSource)
        var = variableOfValue(L, in);
      else if (s.variant % 3 == 0) // one declared in another graph only
        var = hiddenVariable(L, s.variant / 4);
      if (!var)
        var = visibleVariable(L, s.variant / 4, s.variant / 8);
      merge(attrs, var->desc);
      attrs[tw == TensorMoveTwist::BoundNode ? "ref_var_src_var_name"
                                             : "out0.ref_var_src_var_name"] =
          nameValue(var->name, s.variant % 5 == 0);
      bound = true;
      break;
    }
    case TensorMoveTwist::InputMutable:
      if (!on(SwarmBit::Writers))
        break;
      if (auto target = pickWritable(L, refAt(s, 0))) {
        ins = {*target};
        attrs["_input_mutable"] = AttrValue::ofBool(true);
      }
      break;
    case TensorMoveTwist::SecondOutput:
      if (!on(SwarmBit::ExtraOutputs))
        break;
      // No output at all only on Identity / MemcpyAsync: a TensorMove with
      // `outputs = 0` crashes TensorMoveDeletePass (reported, not generated).
      outs = s.variant % 3 == 0 && std::string_view(type) != "TensorMove" ? 0 : 2;
      break;
    case TensorMoveTwist::Continuous:
      if (on(SwarmBit::Layout))
        attrs["continuous_input"] = AttrValue::ofBool(true);
      break;
    case TensorMoveTwist::ReservedNonBool:
      if (on(SwarmBit::Reserved)) {
        if (s.variant % 2)
          attrs["_cannot_be_deleted"] = AttrValue::ofInt(1);
        else
          attrs["no_need_constant_folding"] = AttrValue::ofString("yes");
      }
      break;
    case TensorMoveTwist::OddInputs:
      type = s.variant % 2 ? "MemcpyAsync" : "Identity";
      if (on(SwarmBit::ExtraOutputs) && s.variant / 6 % 3 == 0)
        outs = 0; // and no output
      switch (s.variant / 2 % 3) {
      case 0:
        ins.clear();
        break;
      case 1:
        if (on(SwarmBit::Unconnected))
          ins = {unconnectedSlot()};
        break;
      default:
        ins.push_back(pick(L, refAt(s, 1)).value_or(in));
        break;
      }
      break;
    default:
      break;
    }
    if (!bound)
      attrs = withDesc(attrs, s.variant);
    if (outs == 0u) // no output to describe
      std::erase_if(attrs, [](const auto &kv) { return kv.first.rfind("out0.", 0) == 0; });
    NodeId tm = emit(L, type, "tm", ins, attrs, outs, poolBit(Pool::TensorMove));
    Value copied = L.values.back(); // output 0 when the copy has one output (CopyOfBound)
    if (on(SwarmBit::CtrlEdges)) {
      if (s.flags & 8)
        if (auto from = pick(L, refAt(s, 1)); from && from->port.node != tm)
          graph(L).addCtrlEdge(from->port.node, tm);
      if (s.flags & 16)
        L.pendingCtrlFrom = tm;
    }
    if (bound && tw == TensorMoveTwist::CopyOfBound)
      emit(L, "TensorMove", "tm", {copied}, {}, std::nullopt, poolBit(Pool::TensorMove));
  }

  void stepView(Level &L, const Step &s) {
    Value in = pick(L, refAt(s, 0)).value_or(anyValue(L));
    uint8_t alias = poolBit(Pool::Alias);
    switch (twistOf<ViewTwist>(s)) {
    case ViewTwist::ReuseFalse: // the attribute overrides the built-in view
      emit(L, "Reshape", "view", {in}, {{"out0.reuse_input", AttrValue::ofBool(false)}},
           std::nullopt, 0);
      return;
    case ViewTwist::OfUnconnected:
      if (!on(SwarmBit::Unconnected))
        break;
      emit(L, "Reshape", "view", {unconnectedSlot()}, {}, std::nullopt, alias);
      return;
    case ViewTwist::IndexAlone: // without reuse_input = true: not a view
      emit(L, "ExpandDims", "view", {in}, {{"out0.reuse_input_index", AttrValue::ofInt(0)}},
           std::nullopt, 0);
      return;
    case ViewTwist::RefVarSrc: {
      if (!on(SwarmBit::Variables))
        break;
      Variable var = visibleVariable(L, s.flags, s.variant / 4);
      AttrMap attrs = var.desc;
      attrs["out0.ref_var_src_var_name"] = AttrValue::ofString(var.name);
      const char *type = "Reshape"; // a built-in view, or one by attribute
      if (s.variant % 2) {
        type = "ExpandDims";
        attrs["out0.reuse_input"] = AttrValue::ofBool(true);
      }
      emit(L, type, "view", {in}, attrs, std::nullopt, poolBit(Pool::Source));
      return;
    }
    case ViewTwist::RefAndReuse:
      if (!on(SwarmBit::Writers))
        break;
      if (auto target = pickWritable(L, refAt(s, 0))) {
        emit(L, "InplaceUpdate", "wr", {*target},
             {{"out0.ref_input", AttrValue::ofInt(0)},
              {"out0.reuse_input", AttrValue::ofBool(true)}},
             std::nullopt, alias);
        return;
      }
      break;
    default:
      break;
    }
    switch (s.variant % 3) {
    case 0: {
      // GE's one-input Reshape is a built-in view; with a second input
      // (ONNX's form needs a constant i64 shape) the view is by attribute.
      if (s.flags & 1)
        if (auto shape = pick(L, refAt(s, 1))) {
          emit(L, "ExpandDims", "view", {in, *shape},
               {{"out0.reuse_input", AttrValue::ofBool(true)}}, std::nullopt, alias);
          return;
        }
      emit(L, "Reshape", "view", {in}, {}, std::nullopt, alias);
      return;
    }
    case 1:
      emit(L, "ExpandDims", "view", {in}, {{"out0.reuse_input", AttrValue::ofBool(true)}},
           std::nullopt, alias);
      return;
    default: {
      Value other = pick(L, refAt(s, 1)).value_or(in);
      emit(L, "SqueezeD", "view", {other, in},
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

  /// RefWriteTwist spellings; false when the twist does not apply here.
  bool stepRefWriteTwist(Level &L, const Step &s, RefWriteTwist tw) {
    std::optional<Value> value;
    if (s.refs.size() > 1)
      value = pick(L, s.refs[1]);
    auto target = pickWritable(L, refAt(s, 0));
    const uint8_t alias = poolBit(Pool::Alias);
    auto ref = [](int64_t i) { return AttrValue::ofInt(i); };
    if (tw == RefWriteTwist::Unconnected) {
      if (!on(SwarmBit::Unconnected))
        return false;
      // The written slot is `_`: the output is a fresh computed buffer.
      emit(L, "InplaceUpdate", "wr", {unconnectedSlot(), value.value_or(anyValue(L))},
           {{"out0.ref_input", ref(0)}}, std::nullopt, 0);
      return true;
    }
    if (!target)
      return false;
    switch (tw) {
    case RefWriteTwist::SlotOne: {
      std::vector<Value> ins{value.value_or(*target)};
      if (s.variant % 2) // the last of three slots
        ins.push_back(anyValue(L));
      ins.push_back(*target);
      emit(L, "InplaceUpdate", "wr", ins, {{"out0.ref_input", ref(int64_t(ins.size()) - 1)}},
           std::nullopt, alias);
      return true;
    }
    case RefWriteTwist::OutputOne: {
      std::vector<Value> ins{*target};
      if (value)
        ins.push_back(*value);
      emit(L, "UpdateSecond", "wr", ins, {{"out1.ref_input", ref(0)}}, 2, alias);
      return true;
    }
    case RefWriteTwist::OverrideBuiltIn:
      emit(L, s.variant % 2 ? "ScatterAdd" : "ScatterUpdate", "wr",
           {value.value_or(*target), *target}, {{"out0.ref_input", ref(1)}}, std::nullopt, alias);
      return true;
    case RefWriteTwist::TwoRefOutputs: {
      Value second = pickWritable(L, refAt(s, 1)).value_or(*target);
      emit(L, "DualUpdate", "wr", {*target, second},
           {{"out0.ref_input", ref(0)}, {"out1.ref_input", ref(1)}}, 2, alias);
      return true;
    }
    case RefWriteTwist::RefVarSrc: {
      if (!on(SwarmBit::Variables))
        return false;
      Variable var = visibleVariable(L, s.flags, s.variant / 4);
      AttrMap attrs = var.desc;
      attrs["out0.ref_var_src_var_name"] = AttrValue::ofString(var.name);
      std::vector<Value> ins{*target};
      if (value)
        ins.push_back(*value);
      emit(L, s.variant % 2 ? "ScatterUpdate" : "ScatterUpdate", "wr", ins, attrs, std::nullopt,
           poolBit(Pool::Source));
      return true;
    }
    case RefWriteTwist::RefAndReuse:
      emit(L, "InplaceUpdate", "wr", {*target},
           {{"out0.ref_input", ref(0)}, {"out0.reuse_input", AttrValue::ofBool(true)}},
           std::nullopt, alias);
      return true;
    default:
      return false;
    }
  }

  void stepRefWrite(Level &L, const Step &s) {
    if (auto tw = twistOf<RefWriteTwist>(s); tw != RefWriteTwist{} && stepRefWriteTwist(L, s, tw))
      return;
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
    static const char *const kTypes[] = {"ScatterUpdate",   "ScatterUpdate", "ScatterAdd",
                                         "ScatterNdUpdate", "ScatterUpdate", "ScatterNdUpdate",
                                         "ScatterAdd",      "InplaceUpdate"};
    AttrMap attrs;
    if (v == 7)
      attrs["out0.ref_input"] = AttrValue::ofInt(0);
    emit(L, kTypes[v], "wr", ins, attrs, std::nullopt, poolBit(Pool::Alias));
  }

  void stepContinuous(Level &L, const Step &s) {
    auto tw = twistOf<ContinuousTwist>(s);
    std::vector<Value> ins;
    if (tw == ContinuousTwist::FromSources) {
      for (size_t i = 0; i < std::max<size_t>(2, std::min(s.refs.size(), kMaxRefs)); ++i)
        if (auto v = pick(L, Ref{Pool::Source, static_cast<uint8_t>(refAt(s, i).back + i)}))
          ins.push_back(*v);
    } else {
      ins = pickAll(L, s.refs, 0, kMaxRefs);
    }
    while (ins.size() < 2)
      ins.push_back(anyValue(L));
    if (tw == ContinuousTwist::SameValue)
      ins.assign(ins.size(), ins[0].unconnected ? anyValue(L) : ins[0]);
    if (tw == ContinuousTwist::Unconnected && on(SwarmBit::Unconnected))
      ins[1] = unconnectedSlot();
    AttrMap attrs;
    if (tw == ContinuousTwist::False) {
      attrs["continuous_input"] = AttrValue::ofBool(false);
    } else if (tw == ContinuousTwist::BothAttributes) {
      attrs["continuous_input"] = AttrValue::ofBool(true);
      attrs["_no_padding_continuous_input"] = AttrValue::ofBool(true);
    } else {
      attrs[s.variant % 2 ? "_no_padding_continuous_input" : "continuous_input"] =
          AttrValue::ofBool(true);
    }
    emit(L, "ConcatD", "concat", ins, attrs, std::nullopt, 0);
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

  /// Builds one subgraph of `holder`. `numResults` values are returned;
  /// with `mapResults` result k is handed back as holder output k (of
  /// `numOutputs`), else none is (a While cond). `shape` spells the boundary.
  SubgraphResult buildSubgraph(const Level &parent, NodeId holder, const std::string &name,
                               const Body &body, const std::vector<Value> &parentInputs,
                               size_t numResults, size_t numOutputs, bool mapResults,
                               const BodyTail &tail = {}, const BoundaryShape &shape = {}) {
    GraphId g = m_.addGraph(name);
    m_.attachSubgraph(parent.graph, holder, g);
    Level L;
    L.graph = g;
    L.depth = parent.depth + 1;
    L.variables = parent.variables;
    L.dead = parent.dead || shape.dead;
    const size_t n = parentInputs.size();
    for (size_t i = 0; i < n; ++i) {
      size_t p = shape.dataReversed ? n - 1 - i : i;
      if (shape.skipLastData && p + 1 == n)
        continue; // the holder's last input is not used here
      NodeId d = addNode(L, "Data", fresh("arg"), {}, std::nullopt);
      graph(L).node(d).attrs["_parent_node_index"] = AttrValue::ofInt(static_cast<int64_t>(p));
      if (shape.dataIndexAttr) // `index` means nothing in a subgraph
        graph(L).node(d).attrs["index"] = AttrValue::ofInt(static_cast<int64_t>(p));
      // A Data whose parent input is unconnected gets a buffer of its own
      // (the memory plan's fallback), shared by everything that aliases it.
      BufSet bufs =
          parentInputs[p].unconnected ? BufSet{newBuffer(BufKind::Fresh)} : parentInputs[p].bufs;
      Value v{{d, 0}, bufs, static_cast<uint8_t>(parentInputs[p].pools | poolBit(Pool::Source))};
      L.values.push_back(v);
      L.parentInputs.push_back(v);
    }
    if (L.dead && !parent.dead && on(SwarmBit::Variables)) {
      // A graph that never runs may name a variable nobody declares.
      AttrMap ghost;
      ghost["out0.ref_var_src_var_name"] = AttrValue::ofString(fresh("ghost"));
      emit(L, "RefIdentity", "rv", {}, ghost, std::nullopt, poolBit(Pool::Source));
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
    if (shape.result0Unconnected && mapResults)
      results[0] = unconnectedSlot();
    SubgraphResult r;
    r.outputs.resize(numOutputs);
    if (!shape.noNetOutput) {
      AttrMap attrs;
      if (mapResults)
        for (size_t k = 0; k < numResults; ++k) {
          if (shape.result0Unmapped && k == 0)
            continue;
          size_t j = shape.resultsPermuted ? (k + 1) % numResults : k;
          attrs[Node::portKey(false, static_cast<uint32_t>(k), "_parent_node_index")] =
              AttrValue::ofInt(static_cast<int64_t>(j));
          ResultSlot &slot = r.outputs[j];
          slot.produced = true;
          slot.connected = !results[k].unconnected;
          slot.bufs = results[k].bufs;
        }
      std::vector<Value> ins = results;
      if (shape.resultUnmapped) // handed back to nobody
        ins.push_back(pick(L, Ref{Pool::Any, 1}).value_or(anyValue(L)));
      NodeId ret = emit(L, "NetOutput", "ret", ins, attrs,
                        shape.netOutputOutputs ? std::optional<uint32_t>(1) : std::nullopt, 0);
      finishNetOutput(L, ret);
      if (shape.trailingNode)
        trailingReader(L, ret, results);
    }
    r.touched = std::move(L.touched);
    return r;
  }

  /// Control edges into the graph's NetOutput (CtrlTwist::ToNetOutput).
  void finishNetOutput(Level &L, NodeId ret) {
    for (NodeId from : L.ctrlToNetOutput)
      if (from != ret && graph(L).node(from).alive)
        graph(L).addCtrlEdge(from, ret);
  }

  /// A reader made after the NetOutput, ordered after it by a control edge.
  void trailingReader(Level &L, NodeId ret, const std::vector<Value> &results) {
    Value v = !results.empty() && !results[0].unconnected ? results[0] : anyValue(L);
    NodeId t = emit(L, "ReLU", "op", {v}, {}, std::nullopt, 0);
    graph(L).addCtrlEdge(ret, t);
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
    NodeId w =
        emit(L, "ScatterUpdate", "wr", {L.values.back()}, {}, std::nullopt, poolBit(Pool::Alias));
    NodeId q = emit(L, "AbsD", "op", {L.parentInputs[0]}, {}, std::nullopt, 0);
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
    static const char *const kWriters[] = {"ScatterUpdate", "ScatterAdd", "ScatterUpdate",
                                           "InplaceUpdate"};
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
    static const char *const kReaders[] = {"AbsD", "ConcatD", "AddD"};
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
  /// records its outputs; `outputBufs[k]` is empty for an output that no
  /// subgraph produces (it must not be used). Attributes on the holder
  /// override what the subgraphs hand back, as in the memory plan: an output
  /// bound to a variable by name, or one aliasing an input.
  void finishHolder(Level &L, NodeId h, const std::vector<Value> &inputs, Effects effects,
                    bool writesInputs, std::vector<std::optional<BufSet>> outputBufs,
                    const DataOrdered *through = nullptr) {
    const Node &n = graph(L).node(h);
    bool scribbles = writesInputs || isInputMutable(n); // (an over-approximation on holders)
    for (const Value &v : inputs)
      effects.add(v.bufs, scribbles);
    for (uint32_t k = 0; k < outputBufs.size(); ++k) {
      if (!outputBufs[k])
        continue;
      if (const std::string *var = refVarSrcName(n, k)) {
        BufSet b{variableBuffer(L, *var)};
        effects.add(b, true);
        outputBufs[k] = b;
      } else if (auto i = aliasedInput(n, k)) {
        if (*i >= inputs.size() || inputs[*i].unconnected) {
          outputBufs[k] = BufSet{newBuffer(BufKind::Fresh)};
          continue;
        }
        outputBufs[k] = inputs[*i].bufs;
        if (opKind(n) == OpKind::Call) {
          // The oracle orders a consumer of a call output after the body's
          // result, not after the aliased input's producer (whose fresh
          // write the builder does not track): order that producer before
          // the call, and the call before later accesses, as a writer.
          graph(L).addCtrlEdge(inputs[*i].port.node, h);
          effects.add(inputs[*i].bufs, true);
        }
      }
    }
    applyEffects(L, h, effects, through);
    for (uint32_t k = 0; k < outputBufs.size(); ++k)
      if (outputBufs[k])
        L.values.push_back(Value{{h, k}, *outputBufs[k], poolBit(Pool::Holder)});
  }

  /// The boundary of a holder's subgraph under a HolderTwist; `first` is the
  /// holder's first subgraph (a While's body), which alone takes the twists
  /// that may differ between branches.
  BoundaryShape boundaryShape(HolderTwist tw, bool first) const {
    BoundaryShape b;
    b.dataReversed = tw == HolderTwist::DataReversed;
    b.skipLastData = tw == HolderTwist::InputUnused;
    b.resultsPermuted = tw == HolderTwist::ResultsPermuted && first;
    b.resultUnmapped = tw == HolderTwist::ResultUnmapped;
    b.result0Unconnected =
        tw == HolderTwist::ResultUnconnected && first && on(SwarmBit::Unconnected);
    b.noNetOutput = tw == HolderTwist::NoNetOutput && first;
    b.dataIndexAttr = tw == HolderTwist::DataIndexAttr;
    b.trailingNode = tw == HolderTwist::TrailingNode && first && on(SwarmBit::CtrlEdges);
    b.netOutputOutputs = tw == HolderTwist::NetOutputOutputs && first;
    return b;
  }

  /// Attributes a HolderTwist puts on the holder itself.
  void decorateHolder(Level &L, NodeId h, const Step &s, HolderTwist tw,
                      const std::vector<Value> &ins) {
    if (!on(SwarmBit::HolderAttributes))
      return;
    switch (tw) {
    case HolderTwist::InputMutable: {
      // The oracle does not scribble for a holder; the builder counts it as
      // a write. Never on a weight, so that it stays valid either way.
      bool weights = false;
      for (const Value &v : ins)
        weights = weights || !weightFree(v.bufs);
      if (on(SwarmBit::Writers) && !weights)
        graph(L).node(h).attrs["_input_mutable"] = AttrValue::ofBool(true);
      break;
    }
    case HolderTwist::RefVarSrc:
      if (on(SwarmBit::Variables)) {
        Variable var = visibleVariable(L, s.flags / 8, s.variant / 8);
        Node &n = graph(L).node(h);
        merge(n.attrs, var.desc);
        n.attrs["out0.ref_var_src_var_name"] = AttrValue::ofString(var.name);
      }
      break;
    case HolderTwist::Continuous:
      if (on(SwarmBit::Layout))
        graph(L).node(h).attrs["continuous_input"] = AttrValue::ofBool(true);
      break;
    case HolderTwist::AliasAttr:
      if (on(SwarmBit::Views) && opKind(graph(L).node(h)) != OpKind::While && !ins.empty()) {
        Node &n = graph(L).node(h);
        n.attrs["out0.reuse_input"] = AttrValue::ofBool(true);
        n.attrs["out0.reuse_input_index"] = AttrValue::ofInt(static_cast<int64_t>(ins.size() - 1));
      }
      break;
    default:
      break;
    }
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
    // The shapes build their bodies' boundaries themselves: twists only on
    // a plain call.
    HolderTwist tw = shape == CallShape::Plain ? twistOf<HolderTwist>(s) : HolderTwist{};
    if (tw == HolderTwist::SameValueTwice && !ins.empty())
      ins.push_back(ins.front());
    tail.copyAsResult = shape == CallShape::ResultWrittenOutside;
    tail.writtenCopyOfArg = shape == CallShape::WrittenCopyOfUnconnected;
    const char *type = s.variant % 4 == 3 ? "StatefulPartitionedCall" : "PartitionedCall";
    const Body &body = bodyAt(s, 0);
    size_t numResults = std::clamp<size_t>(body.outputs.size(), 1, 3);
    size_t numOutputs = numResults + (tw == HolderTwist::OutputUnproduced ? 1 : 0);
    std::string name = fresh("pc");
    NodeId h = addNode(L, type, name, ins, static_cast<uint32_t>(numOutputs));
    decorateHolder(L, h, s, tw, ins);
    auto r = buildSubgraph(L, h, name + "_body", body, ins, numResults, numOutputs, true, tail,
                           boundaryShape(tw, true));
    BufSet result0 = r.outputs[0].bufs;
    // A call output is its body's result; a `_` result is a fresh buffer
    // nobody writes (zero bytes).
    std::vector<std::optional<BufSet>> outs;
    for (const ResultSlot &slot : r.outputs)
      outs.push_back(!slot.produced   ? std::nullopt
                     : slot.connected ? std::optional<BufSet>(slot.bufs)
                                      : std::optional<BufSet>(BufSet{newBuffer(BufKind::Fresh)}));
    // The copy of the variable reads it before the body's first access to it
    // (the control edge from the argument's Data): no control edge from the
    // copy to the call, which the deletion would turn into a self edge.
    std::optional<DataOrdered> copyFirst;
    if (var)
      copyFirst = DataOrdered{ins[0].port.node, BufSet{var->buffer}};
    finishHolder(L, h, ins, std::move(r.touched), false, std::move(outs),
                 copyFirst ? &*copyFirst : nullptr);
    if (shape != CallShape::ResultWrittenOutside)
      return;
    // Write result 0 (the body's copy) in the parent. The copy's buffer is
    // new in the body and only its NetOutput reads it there, so the data
    // edge from the call orders the copy before the writer: no control edge
    // from the call (which would order the whole body, the sibling included).
    static const char *const kWriters[] = {"ScatterUpdate", "ScatterAdd", "ScatterNdUpdate",
                                           "InplaceUpdate"};
    unsigned v = s.variant / 64 % 4;
    AttrMap attrs;
    if (v == 3)
      attrs["out0.ref_input"] = AttrValue::ofInt(0);
    DataOrdered through{h, result0};
    emit(L, kWriters[v], "wr", {L.values[L.values.size() - numResults]}, attrs, std::nullopt,
         poolBit(Pool::Alias), &through);
  }

  /// Branches of a Case: two or three, or as a twist one to four.
  size_t caseBranches(const Step &s) const {
    if (!on(SwarmBit::Twists))
      return std::clamp<size_t>(s.bodies.size(), 2, 3);
    if (s.variant / 32 == 7)
      return 1;
    return std::clamp<size_t>(s.bodies.size(), 2, 4);
  }

  void stepBranch(Level &L, const Step &s) {
    bool isIf = s.kind == StepKind::If;
    HolderTwist tw = twistOf<HolderTwist>(s);
    // A `_` condition reads as zero: the else-branch (If) or branch 0 (Case)
    // is always taken, the others never run.
    bool neverRuns = (tw == HolderTwist::NeverRuns ||
                      (on(SwarmBit::Twists) && refAt(s, 0).pool == Pool::Unconnected)) &&
                     on(SwarmBit::Unconnected);
    std::vector<Value> ins{neverRuns ? unconnectedSlot()
                                     : pick(L, refAt(s, 0)).value_or(anyValue(L))};
    for (Value &v : pickAll(L, s.refs, 1, 2))
      ins.push_back(std::move(v));
    if (tw == HolderTwist::SameValueTwice)
      ins.push_back(ins.front());
    unsigned v = s.variant % 6;
    const char *type = isIf ? (v == 4   ? "StatelessIf"
                               : v == 5 ? "_If"
                                        : "If")
                            : (v >= 4 ? "StatelessCase" : "Case");
    size_t numBranches = isIf ? 2 : caseBranches(s);
    size_t numResults = std::clamp<size_t>(bodyAt(s, 0).outputs.size(), 1, 3);
    size_t numOutputs = numResults + (tw == HolderTwist::OutputUnproduced ? 1 : 0);
    std::string name = fresh(isIf ? "if" : "case");
    NodeId h = addNode(L, type, name, ins, static_cast<uint32_t>(numOutputs));
    decorateHolder(L, h, s, tw, ins);
    Effects touched;
    // An output is any branch's result; where a branch hands back nothing
    // (or `_`), the holder zero-fills a fallback buffer of its own.
    std::vector<BufSet> outs(numOutputs);
    std::vector<bool> produced(numOutputs, false), fallback(numOutputs, false);
    for (size_t b = 0; b < numBranches; ++b) {
      std::string sub =
          name + (isIf ? (b == 0 ? "_then" : "_else") : "_branch" + std::to_string(b));
      BoundaryShape shape = boundaryShape(tw, b == 0);
      shape.noNetOutput = false; // branches must agree on what they produce
      shape.dead = neverRuns && (isIf ? b == 0 : b >= 1);
      auto r = buildSubgraph(L, h, sub, bodyAt(s, b), ins, numResults, numOutputs, true, {}, shape);
      touched.merge(r.touched);
      for (size_t k = 0; k < numOutputs; ++k) {
        const ResultSlot &slot = r.outputs[k];
        produced[k] = produced[k] || slot.produced;
        if (slot.produced && slot.connected)
          outs[k] = unite(outs[k], slot.bufs);
        else
          fallback[k] = true;
      }
    }
    std::vector<std::optional<BufSet>> usable(numOutputs);
    for (size_t k = 0; k < numOutputs; ++k) {
      if (fallback[k]) {
        uint32_t fb = newBuffer(BufKind::Fresh);
        touched.add(fb, true);
        outs[k] = unite(outs[k], BufSet{fb});
      }
      if (produced[k])
        usable[k] = outs[k];
    }
    finishHolder(L, h, ins, std::move(touched), false, std::move(usable));
  }

  void stepWhile(Level &L, const Step &s) {
    HolderTwist tw = twistOf<HolderTwist>(s);
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
    bool neverRuns = tw == HolderTwist::NeverRuns || (on(SwarmBit::Twists) && s.flags % 8 == 4);
    if (neverRuns) // cond runs once, the body never
      graph(L).node(h).attrs["max_iterations"] = AttrValue::ofInt(0);
    else if (s.flags % 4)
      graph(L).node(h).attrs["max_iterations"] = AttrValue::ofInt(s.flags % 4);
    decorateHolder(L, h, s, tw, vars);
    BoundaryShape bodyShape = boundaryShape(tw, true);
    bodyShape.dead = neverRuns;
    // OutputUnproduced on a While (whose outputs are its inputs): loop
    // variable 0 is not written back.
    bodyShape.result0Unmapped = tw == HolderTwist::OutputUnproduced;
    BoundaryShape condShape;
    condShape.dataReversed = bodyShape.dataReversed;
    condShape.skipLastData = bodyShape.skipLastData;
    condShape.dataIndexAttr = bodyShape.dataIndexAttr;
    auto cond = buildSubgraph(L, h, name + "_cond", bodyAt(s, 0), vars, 1, 1, false, {}, condShape);
    auto body = buildSubgraph(L, h, name + "_body", bodyAt(s, 1), vars, vars.size(), vars.size(),
                              true, {}, bodyShape);
    Effects touched = std::move(cond.touched);
    touched.merge(body.touched);
    std::vector<std::optional<BufSet>> outs;
    for (const Value &var : vars)
      outs.push_back(var.bufs);
    finishHolder(L, h, vars, std::move(touched), true, std::move(outs));
  }

  // ---- options ------------------------------------------------------------

  void buildOptions(size_t numGraphOutputs) {
    if (!on(SwarmBit::Options))
      return;
    auto numOutputs = static_cast<unsigned>(numGraphOutputs);
    auto index = [](unsigned raw, unsigned count, OptionMode mode) {
      if (mode == OptionMode::Matching && count > 0)
        return raw % count;
      return count + raw % 3; // out of range
    };
    // User indexes may leave gaps (SourceTwist::Elsewhere): a matching
    // index names an existing one, a non-matching one lies above them all.
    auto inputIndex = [&](unsigned raw, OptionMode mode) -> int64_t {
      if (mode == OptionMode::Matching && !userIndexes_.empty())
        return userIndexes_[raw % userIndexes_.size()];
      return nextUserIndex_ + raw % 3;
    };
    const OptionRecipe &out = recipe_.outputReuse;
    if (out.mode != OptionMode::Absent) {
      std::string text;
      if (out.mode == OptionMode::Malformed && on(SwarmBit::Twists) && out.malformedVariant >= 18) {
        text = ""; // empty: malformed too
      } else if (out.mode == OptionMode::Malformed) {
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
                  std::to_string(inputIndex(k, out.mode));
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
          text += std::to_string(inputIndex(k, in.mode));
        }
      }
      m_.options["ge.exec.inputReuseMemIndexes"] = text;
    }
    // An option no pass reads: options are any string-valued keys.
    if (on(SwarmBit::Twists) && (out.unrelated || in.unrelated))
      m_.options["ge.exec.precisionMode"] = "force_fp16";
  }
};

} // namespace

Module buildModule(const Recipe &recipe) {
  return Builder(recipe).build();
}

} // namespace graphvet::props
