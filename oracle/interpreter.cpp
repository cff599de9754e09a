// The reference interpreter. Memory is one byte arena with an offset per
// buffer; a step snapshots its inputs, computes, then writes fresh outputs,
// ref outputs and scribbles in that order. Ops without semantics of their
// own mix every input byte, the op type and the output index through a
// 64-bit hash, so any input change changes every output.
#include "oracle/interpreter.h"

#include "ir/op_library.h"
#include "oracle/fill.h"
#include "oracle/magnitude.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <queue>
#include <stdexcept>

namespace graphvet::oracle {

std::string toHex(const Bytes &b) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(b.size() * 2);
  for (uint8_t c : b) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

namespace {

constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
constexpr uint64_t kFnvPrime = 0x100000001b3ULL;

uint64_t fnv(const void *data, size_t n, uint64_t h = kFnvOffset) {
  auto *p = static_cast<const uint8_t *>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= kFnvPrime;
  }
  return h;
}

uint64_t fnvU64(uint64_t v, uint64_t h) {
  return fnv(&v, sizeof v, h);
}

uint64_t splitmix(uint64_t &x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t x = a ^ (b * 0x9E3779B97F4A7C15ULL);
  return splitmix(x);
}

/// Fills `n` bytes with the stream seeded by `seed`.
void fillStream(uint8_t *dst, size_t n, uint64_t seed) {
  fillBytes(dst, n, seed);
}

uint64_t hashString(std::string_view s) {
  return fnv(s.data(), s.size());
}

struct InterpreterFault : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct BudgetExceeded {};

} // namespace

struct Interpreter::Impl {
  struct StepExec {
    StepKind kind = StepKind::Noop;
    uint64_t typeHash = 0;
    bool tensorMove = false;
    bool scribble = false;
    const Node *node = nullptr;      ///< the node (numeric ops read attributes)
    const OpInfo *numeric = nullptr; ///< set when the op has a kernel
    /// A shape operand is computed at run time (hasRuntimeShapeOperands):
    /// the kernel's types are checked against the declared ones each run.
    bool runtimeShaped = false;
    /// Every output type the op's inference gives (a kernel may fill more
    /// outputs than the node uses, e.g. LSTM's Y_c when outputs = 2).
    std::vector<TensorType> kernelOutputs;
    /// The step reads its inputs in the sense of the memory plan (a node
    /// whose outputs are all views reads nothing: its consumers do).
    bool readsInputs = false;
    std::vector<PortId> inputs;                    ///< kNoPort: unconnected slot
    std::vector<PortId> outputs;                   ///< kNoPort: no port
    std::vector<std::vector<PortId>> branchResult; ///< If/Case: [branch][k]
    PortId condResult = kNoPort;                   ///< While
    std::vector<std::pair<uint32_t, PortId>> bodyResults;
    std::vector<PortId> loopVar; ///< While: buffer owner of loop variable j
    uint64_t maxIterations = 3;
  };

  const Module &m;
  const MemoryPlan &plan;
  const InlinedModule &inl;
  std::vector<std::vector<StepExec>> exec;
  std::vector<PortId> rootOutputs;
  std::vector<BufferId> byKind[5];

  // Machine state.
  std::vector<uint8_t> mem;
  std::vector<uint64_t> offset;
  bool tooLarge = false; ///< the buffers exceed kMaxArenaBytes: nothing runs
  std::vector<BufferId> dyn;
  uint64_t stepsRun = 0;
  std::vector<WeightWrite> weightWrites;
  std::vector<uint8_t> scratch;
  struct Slot {
    uint32_t offset, size;
    bool connected;
  };
  std::vector<Slot> slots;
  std::vector<BufferId> scribbled;
  std::vector<uint64_t> domainRuns; ///< per domain, since construction
  uint64_t arithmetic = 0;          ///< the placeholder arithmetic's variant
  /// Indeterminate bytes (tensor-semantics.md §2), parallel to `mem`;
  /// allocated when the first indeterminate byte is written.
  std::vector<uint8_t> undefMem;
  std::vector<uint8_t> scratchUndef;             ///< the snapshot's flags (when undefMem is in use)
  uint64_t runSeed = 0;                          ///< keys the random ops' streams (§6)
  std::vector<std::vector<uint64_t>> executions; ///< per domain and step, this run
  std::map<int64_t, Bytes> inputOverrides;       ///< `graphvet run --input`
  /// The `approx` contract's shadow evaluation (magnitude.h), per buffer:
  /// set when a numeric op wrote the buffer last; empty means the bytes are
  /// exact (a filled value, a literal, a placeholder or copied byte).
  bool shadowOn = false;
  bool specials = true; ///< seeded fills mix in the specials (setSpecials)
  struct BufferShadow {
    Magnitude s;
    DType dtype = DType::U8;
  };
  std::vector<std::optional<BufferShadow>> shadows;
  /// Live-bytes trace of the current run: the root step position running
  /// now, and per buffer the first write and the last use (positions).
  uint64_t rootPosition = 0;
  std::vector<StepIndex> liveOrder; ///< root steps in the order they ran
  static constexpr uint64_t kNever = UINT64_MAX;
  std::vector<uint64_t> firstWrite, lastUse;
  void noteWrite(BufferId b) {
    if (b >= firstWrite.size())
      return;
    if (firstWrite[b] == kNever)
      firstWrite[b] = rootPosition;
    lastUse[b] = rootPosition;
  }
  void noteRead(BufferId b) {
    if (b < lastUse.size() && firstWrite[b] != kNever)
      lastUse[b] = rootPosition;
  }

  Impl(const Module &mod, const MemoryPlan &p, const InlinedModule &i)
      : m(mod), plan(p), inl(i), domainRuns(i.domains.size(), 0) {
    uint64_t total = 0;
    offset.reserve(plan.buffers().size());
    for (BufferId b = 0; b < plan.buffers().size(); ++b) {
      offset.push_back(total);
      total += plan.buffers()[b].size;
      byKind[static_cast<int>(plan.buffers()[b].kind)].push_back(b);
    }
    tooLarge = total > kMaxArenaBytes;
    if (!tooLarge)
      mem.assign(total, 0);
    for (auto &list : byKind)
      std::sort(list.begin(), list.end(), [&](BufferId a, BufferId b) {
        const BufferInfo &x = plan.buffers()[a], &y = plan.buffers()[b];
        return x.inputIndex != y.inputIndex ? x.inputIndex < y.inputIndex : x.key < y.key;
      });
    exec.resize(inl.domains.size());
    for (DomainId d = 0; d < inl.domains.size(); ++d) {
      for (const Step &st : inl.domains[d].steps)
        exec[d].push_back(prepare(st));
    }
    if (!inl.domains.empty())
      for (const Step &st : inl.domains[0].steps) {
        const Node &n = m.graph(st.graph).node(st.node);
        if (st.graph == 0 && opKind(n) == OpKind::NetOutput) {
          for (const auto &src : n.inputs)
            rootOutputs.push_back(src ? plan.portId(0, *src) : kNoPort);
          break;
        }
      }
  }

  PortId resultPort(GraphId sub, int64_t parentIndex, bool byPosition) const {
    const Graph &g = m.graph(sub);
    for (NodeId n : g.liveNodes()) {
      const Node &out = g.node(n);
      if (opKind(out) != OpKind::NetOutput)
        continue;
      for (uint32_t i = 0; i < out.inputs.size(); ++i) {
        bool match = byPosition ? i == parentIndex
                                : out.portIntAttr(false, i, "_parent_node_index") ==
                                      std::optional<int64_t>(parentIndex);
        if (match)
          return out.inputs[i] ? plan.portId(sub, *out.inputs[i]) : kNoPort;
      }
      return kNoPort;
    }
    return kNoPort;
  }

  StepExec prepare(const Step &st) const {
    StepExec e;
    const Node &n = m.graph(st.graph).node(st.node);
    e.kind = st.kind;
    e.typeHash = hashString(n.type);
    e.tensorMove = isTensorMove(n);
    e.scribble = isInputMutable(n);
    e.node = &n;
    if (st.kind == StepKind::Compute)
      e.numeric = numericDefinition(n);
    if (e.numeric)
      e.runtimeShaped = hasRuntimeShapeOperands(m.graph(st.graph), n);
    for (const auto &src : n.inputs)
      e.inputs.push_back(src ? plan.portId(st.graph, *src) : kNoPort);
    for (uint32_t k = 0; k < n.numOutputs; ++k)
      e.outputs.push_back(plan.portId(st.graph, {st.node, k}));
    e.readsInputs = st.kind == StepKind::Compute && (n.numOutputs == 0 || e.scribble);
    for (PortId p : e.outputs)
      e.readsInputs = e.readsInputs || (st.kind == StepKind::Compute && p != kNoPort &&
                                        plan.port(p).write != PortWrite::None);
    if (st.kind == StepKind::If || st.kind == StepKind::Case) {
      for (GraphId sub : n.subgraphs) {
        std::vector<PortId> res;
        for (uint32_t k = 0; k < n.numOutputs; ++k)
          res.push_back(resultPort(sub, k, false));
        e.branchResult.push_back(std::move(res));
      }
    }
    if (st.kind == StepKind::While && n.subgraphs.size() == 2) {
      e.condResult = resultPort(n.subgraphs[0], 0, true);
      const Graph &body = m.graph(n.subgraphs[1]);
      for (NodeId b : body.liveNodes()) {
        const Node &out = body.node(b);
        if (opKind(out) != OpKind::NetOutput)
          continue;
        for (uint32_t i = 0; i < out.inputs.size(); ++i) {
          auto j = out.portIntAttr(false, i, "_parent_node_index");
          if (j && *j >= 0 && out.inputs[i])
            e.bodyResults.push_back(
                {static_cast<uint32_t>(*j), plan.portId(n.subgraphs[1], *out.inputs[i])});
        }
        break;
      }
      uint32_t vars = std::max<uint32_t>(n.numOutputs, static_cast<uint32_t>(n.inputs.size()));
      for (uint32_t j = 0; j < vars; ++j) {
        PortId p = kNoPort;
        if (j < n.numOutputs)
          p = e.outputs[j];
        else if (j < n.inputs.size())
          p = e.inputs[j];
        e.loopVar.push_back(p);
      }
      if (auto mi = n.intAttr("max_iterations"))
        e.maxIterations = *mi < 0 ? 0 : static_cast<uint64_t>(*mi);
    }
    if (e.numeric)
      e.kernelOutputs = kernelOutputTypes(st.graph, n, e);
    return e;
  }

  /// The op's inference on the planned input types (constants from Const
  /// values): every output the kernel writes; the node's own port types
  /// when inference fails (the verifier reported that already).
  std::vector<TensorType> kernelOutputTypes(GraphId g, const Node &n, const StepExec &e) const {
    std::vector<std::optional<TensorType>> ins;
    for (size_t i = 0; i < n.inputs.size(); ++i)
      ins.push_back(e.inputs[i] == kNoPort ? std::nullopt
                                           : std::optional<TensorType>(plan.portType(e.inputs[i])));
    std::vector<const Tensor *> consts = constantInputs(m.graph(g), n);
    std::string error;
    std::vector<TensorType> outs;
    if (auto t = inferNodeTypes(n, ins, consts, error))
      outs = std::move(*t);
    for (size_t k = 0; k < e.outputs.size(); ++k) {
      TensorType planned =
          e.outputs[k] == kNoPort ? TensorType{DType::U8, {0}} : plan.portType(e.outputs[k]);
      if (k < outs.size())
        outs[k] = planned;
      else
        outs.push_back(planned);
    }
    return outs;
  }

  const BufferInfo &info(BufferId b) const { return plan.buffers()[b]; }
  uint8_t *data(BufferId b) { return mem.data() + offset[b]; }

  BufferId bufferOf(PortId p) const {
    if (p == kNoPort)
      throw InterpreterFault("read of a port that does not exist");
    const PortPlan &pp = plan.port(p);
    const PortPlan &root = plan.port(pp.root);
    if (root.rule == BindRule::Own)
      return root.own;
    BufferId b = dyn[pp.root];
    if (b == kNoBuffer)
      throw InterpreterFault(
          fmt::format("{}:{} is read before the control-flow node that binds it ran",
                      plan.qualifiedName(pp.graph, pp.node), pp.index));
    return b;
  }

  uint8_t *beginWrite(BufferId b, const std::string &who) {
    if (!info(b).declared)
      throw InterpreterFault(
          fmt::format("{} writes {}, but no Variable node declares it", who, info(b).label));
    if (info(b).kind == BufferKind::Weight)
      weightWrites.push_back({who, info(b).label});
    if (b < shadows.size())
      shadows[b].reset();
    noteWrite(b);
    return data(b);
  }

  // -- filling and observing ------------------------------------------------

  void fillBuffer(BufferId b, uint64_t seed) {
    const BufferInfo &bi = info(b);
    clearUndef(b);
    if (b < shadows.size())
      shadows[b].reset();
    if (bi.literal) { // a Const holds its value
      std::copy(bi.literal->bytes().begin(), bi.literal->bytes().end(), data(b));
      return;
    }
    if (bi.kind == BufferKind::UserInput)
      if (auto it = inputOverrides.find(bi.inputIndex); it != inputOverrides.end()) {
        size_t n = std::min<size_t>(bi.size, it->second.size());
        std::copy_n(it->second.data(), n, data(b));
        std::fill(data(b) + n, data(b) + bi.size, 0);
        return;
      }
    uint64_t s = mix(mix(seed, static_cast<uint64_t>(bi.kind) + 1), hashString(bi.key));
    fillTyped(data(b), bi.size, bi.type, s, specials);
  }

  // -- indeterminate bytes ----------------------------------------------------

  bool undefInUse() const { return !undefMem.empty(); }
  void clearUndef(BufferId b) {
    if (undefInUse())
      std::fill_n(undefMem.data() + offset[b], info(b).size, 0);
  }
  /// Marks bytes [from, from + n) of buffer b (1 = indeterminate).
  void setUndefBytes(BufferId b, uint32_t from, uint32_t n, bool u) {
    if (!u && !undefInUse())
      return;
    if (!undefInUse())
      undefMem.assign(mem.size(), 0);
    std::fill_n(undefMem.data() + offset[b] + from, n, static_cast<uint8_t>(u));
  }
  bool anyUndefIn(BufferId b) const {
    if (!undefInUse())
      return false;
    const uint8_t *u = undefMem.data() + offset[b];
    return std::any_of(u, u + info(b).size, [](uint8_t x) { return x != 0; });
  }
  bool snapshotHasUndef() const {
    return std::any_of(scratchUndef.begin(), scratchUndef.end(), [](uint8_t x) { return x != 0; });
  }

  void fillState(uint64_t seed) {
    if (tooLarge)
      return;
    std::fill(mem.begin(), mem.end(), 0);
    undefMem.clear();
    shadows.assign(shadowOn ? plan.buffers().size() : 0, std::nullopt);
    for (int k = 0; k < 4; ++k) // every kind but Fresh
      for (BufferId b : byKind[k])
        fillBuffer(b, seed);
  }

  void refillInputs(uint64_t seed) {
    if (tooLarge)
      return;
    for (BufferId b : byKind[static_cast<int>(BufferKind::UserInput)])
      fillBuffer(b, seed);
    for (BufferId b : byKind[static_cast<int>(BufferKind::CallerMemory)])
      fillBuffer(b, seed);
  }

  Bytes bytesOf(BufferId b) { return Bytes(data(b), data(b) + info(b).size); }

  ElementView viewOf(BufferId b) {
    ElementView v;
    v.dtype = info(b).type.dtype;
    v.shape = info(b).type.shape;
    if (anyUndefIn(b))
      v.undef.assign(undefMem.data() + offset[b], undefMem.data() + offset[b] + info(b).size);
    setTolerance(v, b);
    return v;
  }

  /// The allowed distances of buffer b's elements seen as v's dtype.
  void setTolerance(ElementView &v, BufferId b) {
    v.tolerance.clear();
    if (!shadowOn || b >= shadows.size() || !shadows[b] || shadows[b]->dtype != v.dtype)
      return;
    const Magnitude &s = shadows[b]->s;
    uint32_t w = dtypeBytes(v.dtype);
    if (w == 0 || s.m.size() != info(b).size / w)
      return;
    v.tolerance.resize(s.m.size());
    for (size_t i = 0; i < s.m.size(); ++i)
      v.tolerance[i] = allowedDistance(s, i, v.dtype);
  }

  Observation observe() {
    Observation o;
    for (PortId p : rootOutputs) {
      if (p == kNoPort) {
        o.outputs.emplace_back();
        o.outputBuffers.emplace_back();
        o.outputViews.emplace_back();
        continue;
      }
      BufferId b = bufferOf(p);
      o.outputs.push_back(bytesOf(b));
      o.outputBuffers.push_back(info(b).label);
      ElementView v = viewOf(b);
      if (plan.portType(p).byteSize() == info(b).size) {
        v.dtype = plan.portType(p).dtype;
        v.shape = plan.portType(p).shape;
        setTolerance(v, b);
      } else {
        v.dtype = DType::U8;
        v.shape = {static_cast<int64_t>(info(b).size)};
        v.tolerance.clear();
      }
      o.outputViews.push_back(std::move(v));
    }
    for (int k = 0; k < 4; ++k) // every kind but Fresh
      for (BufferId b : byKind[k])
        o.views.emplace(info(b).label, viewOf(b));
    for (BufferId b : byKind[static_cast<int>(BufferKind::Variable)])
      if (info(b).declared)
        o.variables.push_back({info(b).key, bytesOf(b)});
    for (BufferId b : byKind[static_cast<int>(BufferKind::UserInput)])
      o.inputs.push_back({info(b).inputIndex, bytesOf(b)});
    for (BufferId b : byKind[static_cast<int>(BufferKind::CallerMemory)])
      o.callerMemory.push_back({info(b).key, bytesOf(b)});
    // A Const's literal is its own: a pass may fold a weight into another
    // value under the same name. What the caller observes is whether the
    // weight still holds its value, so an intact literal reads as no bytes.
    for (BufferId b : byKind[static_cast<int>(BufferKind::Weight)]) {
      const BufferInfo &bi = info(b);
      bool intact = bi.literal && bi.literal->bytes().size() == bi.size &&
                    std::equal(bi.literal->bytes().begin(), bi.literal->bytes().end(), data(b));
      o.weights.push_back({bi.key, intact ? Bytes{} : bytesOf(b)});
    }
    return o;
  }

  /// Overwriting output k changes exactly the locations bound to the same
  /// buffer (buffers never overlap), so the caller's overwrite experiment is
  /// computed from buffer identity.
  std::vector<AliasPair> aliasRelation() {
    std::vector<AliasPair> out;
    std::vector<BufferId> bound;
    for (PortId p : rootOutputs)
      bound.push_back(p == kNoPort ? kNoBuffer : bufferOf(p));
    for (uint32_t k = 0; k < bound.size(); ++k) {
      if (bound[k] == kNoBuffer || info(bound[k]).size == 0)
        continue;
      for (uint32_t k2 = 0; k2 < bound.size(); ++k2)
        if (k2 != k && bound[k2] == bound[k])
          out.push_back({k, fmt::format("output{}", k2)});
      if (info(bound[k]).kind != BufferKind::Fresh)
        out.push_back({k, info(bound[k]).label});
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // -- execution --------------------------------------------------------------

  void snapshot(const StepExec &e) {
    scratch.clear();
    scratchUndef.clear();
    slots.clear();
    for (PortId p : e.inputs) {
      if (p == kNoPort) {
        slots.push_back({static_cast<uint32_t>(scratch.size()), 0, false});
        continue;
      }
      BufferId b = bufferOf(p);
      if (e.readsInputs)
        noteRead(b);
      slots.push_back({static_cast<uint32_t>(scratch.size()), info(b).size, true});
      scratch.insert(scratch.end(), data(b), data(b) + info(b).size);
      if (undefInUse())
        scratchUndef.insert(scratchUndef.end(), undefMem.data() + offset[b],
                            undefMem.data() + offset[b] + info(b).size);
    }
  }

  uint64_t digest() const {
    uint64_t h = kFnvOffset;
    for (const Slot &s : slots) {
      h = fnvU64(s.connected ? s.size + 1 : 0, h);
      h = fnv(scratch.data() + s.offset, s.size, h);
    }
    return h;
  }

  void compute(const Step &st, const StepExec &e, DomainId d, StepIndex s) {
    // An output bound to a variable no node declares has no memory to live in.
    for (PortId p : e.outputs)
      if (p != kNoPort && plan.port(p).rule == BindRule::Own && !info(plan.port(p).own).declared)
        throw InterpreterFault(fmt::format("{} output {} lives in {}, which no Variable node "
                                           "declares",
                                           st.name, plan.port(p).index,
                                           info(plan.port(p).own).label));
    snapshot(e);
    if (e.numeric)
      return computeNumeric(st, e, executions[d][s]++);
    uint64_t h = digest();
    // The placeholder mix depends on every input byte: one indeterminate
    // input byte makes every computed byte indeterminate (§2).
    bool undefIn = snapshotHasUndef();
    // Fresh (and variable-bound) outputs and copies first...
    for (uint32_t k = 0; k < e.outputs.size(); ++k) {
      PortId p = e.outputs[k];
      if (p == kNoPort)
        continue;
      const PortPlan &pp = plan.port(p);
      if (pp.write == PortWrite::Compute) {
        BufferId b = bufferOf(p);
        fillStream(beginWrite(b, st.name), info(b).size, mix(mix(h, opKey(e)), k + 1));
        setUndefBytes(b, 0, info(b).size, undefIn);
      } else if (pp.write == PortWrite::Copy) {
        // An unconnected slot reads as zero bytes (the verifier already
        // refuses a TensorMove without input; Identity(_) copies nothing).
        if (e.tensorMove && (slots.empty() || !slots[0].connected))
          throw InterpreterFault(fmt::format("TensorMove {} has no input", st.name));
        BufferId b = bufferOf(p);
        uint8_t *dst = beginWrite(b, st.name);
        uint32_t n = slots.empty() ? 0 : std::min(info(b).size, slots[0].size);
        if (n > 0) // (slots[0] does not exist for an Identity without inputs)
          std::copy_n(scratch.data() + slots[0].offset, n, dst);
        // (An Identity without inputs has no e.inputs[0]: nothing to carry.)
        // The copy's elements carry their bounds; a copy into a smaller
        // buffer keeps the leading elements, and their bounds (found by
        // midend_fuzzer, issue 29: an undescribed Identity of 4 elements
        // behind a 48-element result lost its bounds and made the check exact).
        if (b < shadows.size() && n == info(b).size && !e.inputs.empty() &&
            e.inputs[0] != kNoPort && bufferOf(e.inputs[0]) < shadows.size()) {
          shadows[b] = shadows[bufferOf(e.inputs[0])];
          if (shadows[b]) {
            uint32_t w = dtypeBytes(shadows[b]->dtype);
            if (w != 0 && shadows[b]->s.m.size() > n / w)
              shadows[b]->s.m.resize(n / w);
          }
        }
        std::fill(dst + n, dst + info(b).size, 0);
        if (undefInUse()) {
          std::copy_n(scratchUndef.data() + slots[0].offset, n, undefMem.data() + offset[b]);
          setUndefBytes(b, n, info(b).size - n, false);
        }
      }
    }
    // ...then in-place ref writes...
    for (uint32_t k = 0; k < e.outputs.size(); ++k) {
      PortId p = e.outputs[k];
      if (p == kNoPort || plan.port(p).write != PortWrite::Ref)
        continue;
      BufferId b = bufferOf(p);
      fillStream(beginWrite(b, st.name), info(b).size, mix(mix(h, opKey(e)), k + 1));
      setUndefBytes(b, 0, info(b).size, undefIn);
    }
    scribble(st, e);
  }

  /// A scope write: every distinct input buffer is scribbled once (an
  /// indeterminate byte stays indeterminate).
  void scribble(const Step &st, const StepExec &e) {
    if (e.scribble) {
      scribbled.clear();
      for (uint32_t i = 0; i < e.inputs.size(); ++i) {
        if (e.inputs[i] == kNoPort)
          continue;
        BufferId b = bufferOf(e.inputs[i]);
        if (std::find(scribbled.begin(), scribbled.end(), b) != scribbled.end())
          continue;
        scribbled.push_back(b);
        uint8_t *d = beginWrite(b, st.name);
        uint64_t x = mix(mix(opKey(e), i + 0x5c), fnv(d, info(b).size));
        for (uint32_t j = 0; j < info(b).size; j += 8) {
          uint64_t r = splitmix(x);
          for (uint32_t q = 0; q < 8 && j + q < info(b).size; ++q)
            d[j + q] ^= static_cast<uint8_t>(r >> (8 * q)) | 1; // never zero: always differs
        }
      }
    }
  }

  /// A numeric op (tensor-semantics.md): typed tensors from the snapshot,
  /// the op's kernel, its outputs written to their buffers with their
  /// indeterminate elements.
  void computeNumeric(const Step &st, const StepExec &e, uint64_t execution) {
    std::vector<Tensor> ins(e.inputs.size());
    std::vector<const Tensor *> ptrs(e.inputs.size(), nullptr);
    for (size_t i = 0; i < e.inputs.size(); ++i) {
      if (!slots[i].connected)
        continue;
      ins[i] = Tensor(plan.portType(e.inputs[i]));
      std::span<uint8_t> dst = ins[i].bytes();
      uint32_t n = std::min<uint32_t>(slots[i].size, static_cast<uint32_t>(dst.size()));
      std::copy_n(scratch.data() + slots[i].offset, n, dst.data());
      if (!scratchUndef.empty()) {
        uint32_t w = dtypeBytes(ins[i].dtype());
        for (uint32_t byte = 0; byte < n; ++byte)
          if (scratchUndef[slots[i].offset + byte])
            ins[i].setUndef(byte / w);
      }
      ptrs[i] = &ins[i];
    }
    if (e.runtimeShaped)
      checkRuntimeTypes(st, e, ptrs);
    std::vector<Tensor> outs;
    for (const TensorType &t : e.kernelOutputs)
      outs.emplace_back(t);
    std::optional<RandomStream> stream;
    if (e.numeric->nondeterministic)
      stream.emplace(runSeed, st.name, execution);
    KernelContext ctx{*e.node, ptrs, outs, stream ? &*stream : nullptr};
    e.numeric->kernel(ctx);
    std::vector<Magnitude> outShadows;
    if (shadowOn) {
      std::vector<const Magnitude *> inShadows(e.inputs.size(), nullptr);
      for (size_t i = 0; i < e.inputs.size(); ++i) {
        if (!ptrs[i])
          continue;
        BufferId src = bufferOf(e.inputs[i]);
        if (src >= shadows.size())
          continue;
        const std::optional<BufferShadow> &bs = shadows[src];
        if (bs && bs->dtype == ins[i].dtype() &&
            static_cast<int64_t>(bs->s.m.size()) == ins[i].size())
          inShadows[i] = &bs->s;
      }
      outShadows = propagateMagnitudes(*e.node, *e.numeric, ptrs, inShadows, outs);
    }
    for (uint32_t k = 0; k < e.outputs.size(); ++k) {
      PortId p = e.outputs[k];
      if (p == kNoPort)
        continue;
      PortWrite w = plan.port(p).write;
      if (w != PortWrite::Compute && w != PortWrite::Ref && w != PortWrite::Copy)
        continue; // a view: the bytes already are the input's
      BufferId b = bufferOf(p);
      uint8_t *dst = beginWrite(b, st.name);
      std::span<const uint8_t> src = outs[k].bytes();
      uint32_t n = std::min<uint32_t>(info(b).size, static_cast<uint32_t>(src.size()));
      std::copy_n(src.data(), n, dst);
      std::fill(dst + n, dst + info(b).size, 0);
      clearUndef(b);
      if (k < outShadows.size() && outShadows[k].unit != 0 && b < shadows.size() &&
          n == static_cast<uint32_t>(src.size()))
        shadows[b] = BufferShadow{std::move(outShadows[k]), outs[k].dtype()};
      if (outs[k].anyUndef()) {
        uint32_t width = dtypeBytes(outs[k].dtype());
        for (int64_t i = 0; i < outs[k].size(); ++i)
          if (outs[k].isUndef(i) && (i + 1) * width <= n)
            setUndefBytes(b, static_cast<uint32_t>(i * width), width, true);
      }
    }
    scribble(st, e);
  }

  /// A node whose shape operands are computed at run time: its inference on
  /// the actual values must give the declared output types, else the run
  /// faults (never a kernel on buffers of another size).
  void checkRuntimeTypes(const Step &st, const StepExec &e,
                         const std::vector<const Tensor *> &inputs) const {
    std::vector<std::optional<TensorType>> types;
    for (const Tensor *t : inputs)
      types.push_back(t ? std::optional<TensorType>(t->type()) : std::nullopt);
    std::string error;
    auto actual = inferNodeTypes(*e.node, types, inputs, error);
    if (!actual)
      throw InterpreterFault(fmt::format("{}: at run time: {}", st.name, error));
    for (size_t k = 0; k < e.outputs.size() && k < actual->size(); ++k)
      if (e.outputs[k] != kNoPort && (*actual)[k] != e.kernelOutputs[k])
        throw InterpreterFault(
            fmt::format("{}: output {} is {} with the shape operands computed at run time, but "
                        "its declared type is {}",
                        st.name, k, (*actual)[k].str(), e.kernelOutputs[k].str()));
  }

  /// The op's key in the placeholder arithmetic: its type, keyed by the
  /// arithmetic variant (0 is the documented mix, unchanged).
  uint64_t opKey(const StepExec &e) const {
    return arithmetic == 0 ? e.typeHash : mix(e.typeHash, arithmetic);
  }

  uint8_t firstByte(PortId p) {
    if (p == kNoPort)
      return 0;
    BufferId b = bufferOf(p);
    noteRead(b);
    return info(b).size ? *data(b) : 0;
  }

  void runDomain(DomainId d, const DomainOrders &orders) {
    const Domain &dom = inl.domains[d];
    ++domainRuns[d];
    const std::vector<StepIndex> &order =
        d < orders.size() && !orders[d].empty() ? orders[d] : dom.reference;
    for (StepIndex s : order) {
      if (d == 0)
        rootPosition = liveOrder.size(), liveOrder.push_back(s);
      runStep(d, s, orders);
    }
  }

  void runStep(DomainId d, StepIndex s, const DomainOrders &orders) {
    if (++stepsRun > kStepBudget)
      throw BudgetExceeded{};
    const Step &st = inl.domains[d].steps[s];
    const StepExec &e = exec[d][s];
    switch (e.kind) {
    case StepKind::Noop:
      return;
    case StepKind::Compute:
      return compute(st, e, d, s);
    case StepKind::If:
    case StepKind::Case:
      return runBranch(st, e, orders);
    case StepKind::While:
      return runWhile(st, e, orders);
    }
  }

  void runBranch(const Step &st, const StepExec &e, const DomainOrders &orders) {
    size_t n = st.subdomains.size();
    if (e.kind == StepKind::If && n != 2)
      throw InterpreterFault(fmt::format("{} needs a then and an else branch", st.name));
    if (n == 0 || e.branchResult.size() != n)
      throw InterpreterFault(fmt::format("{} has no branch to take", st.name));
    uint8_t c = e.inputs.empty() ? 0 : firstByte(e.inputs[0]);
    size_t branch = e.kind == StepKind::If ? (c % 2 == 1 ? 0 : 1) : c % n;
    runDomain(st.subdomains[branch], orders);
    for (uint32_t k = 0; k < e.outputs.size(); ++k) {
      PortId p = e.outputs[k];
      if (p == kNoPort || plan.port(p).rule != BindRule::Dynamic)
        continue;
      PortId res = e.branchResult[branch][k];
      if (res != kNoPort) {
        dyn[p] = bufferOf(res);
      } else {
        BufferId b = plan.port(p).own;
        std::fill_n(beginWrite(b, st.name), info(b).size, 0);
        clearUndef(b);
        dyn[p] = b;
      }
    }
  }

  void runWhile(const Step &st, const StepExec &e, const DomainOrders &orders) {
    if (st.subdomains.size() != 2)
      throw InterpreterFault(fmt::format("{} needs a cond and a body subgraph", st.name));
    std::vector<Bytes> results, resultUndef;
    std::vector<std::optional<BufferShadow>> resultShadow;
    for (uint64_t iter = 0;; ++iter) {
      runDomain(st.subdomains[0], orders);
      if (firstByte(e.condResult) % 2 == 0 || iter >= e.maxIterations)
        break;
      runDomain(st.subdomains[1], orders);
      // Write back every body result into its loop variable (read all, then write).
      results.clear();
      resultUndef.clear();
      resultShadow.clear();
      for (auto [j, p] : e.bodyResults) {
        if (p != kNoPort)
          noteRead(bufferOf(p));
        results.push_back(p == kNoPort ? Bytes{} : bytesOf(bufferOf(p)));
        resultUndef.push_back(p == kNoPort ? Bytes{} : viewOf(bufferOf(p)).undef);
        resultShadow.push_back(p != kNoPort && bufferOf(p) < shadows.size() ? shadows[bufferOf(p)]
                                                                            : std::nullopt);
      }
      for (size_t r = 0; r < e.bodyResults.size(); ++r) {
        auto [j, p] = e.bodyResults[r];
        if (j >= e.loopVar.size() || e.loopVar[j] == kNoPort)
          continue;
        BufferId dst = bufferOf(e.loopVar[j]);
        if (p != kNoPort && bufferOf(p) == dst)
          continue;
        uint8_t *d = beginWrite(dst, st.name);
        uint32_t n = std::min<uint32_t>(info(dst).size, static_cast<uint32_t>(results[r].size()));
        std::copy_n(results[r].data(), n, d);
        std::fill(d + n, d + info(dst).size, 0);
        clearUndef(dst);
        if (dst < shadows.size() && n == info(dst).size)
          shadows[dst] = resultShadow[r];
        for (uint32_t i = 0; i < n && i < resultUndef[r].size(); ++i)
          if (resultUndef[r][i])
            setUndefBytes(dst, i, 1, true);
      }
    }
  }

  /// Turns the trace into live bytes per root step. Only fresh buffers
  /// count; a graph output's buffer stays live until the last step.
  void liveBytes(RunOutcome &out) const {
    size_t n = liveOrder.size();
    std::vector<uint64_t> end = lastUse;
    for (PortId p : rootOutputs) {
      if (p == kNoPort)
        continue;
      const PortPlan &root = plan.port(plan.port(p).root);
      BufferId b = root.rule == BindRule::Own ? root.own : dyn[plan.port(p).root];
      if (b != kNoBuffer && firstWrite[b] != kNever && n > 0)
        end[b] = n - 1;
    }
    // Difference array over positions: +size at the first write, -size after the end.
    std::vector<int64_t> delta(n + 1, 0);
    for (BufferId b = 0; b < plan.buffers().size(); ++b) {
      if (info(b).kind != BufferKind::Fresh || firstWrite[b] == kNever || firstWrite[b] >= n)
        continue;
      delta[firstWrite[b]] += info(b).size;
      delta[std::min<uint64_t>(end[b], n - 1) + 1] -= info(b).size;
    }
    int64_t live = 0;
    out.liveSteps.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      live += delta[i];
      const Step &st = inl.domains[0].steps[liveOrder[i]];
      out.liveSteps.push_back({st.name, st.graph, st.node, static_cast<uint64_t>(live)});
      out.peakLiveBytes = std::max(out.peakLiveBytes, static_cast<uint64_t>(live));
    }
  }

  RunOutcome run(const DomainOrders &orders) {
    RunOutcome out;
    if (tooLarge) {
      out.budgetExceeded = true;
      return out;
    }
    dyn.assign(plan.ports().size(), kNoBuffer);
    stepsRun = 0;
    executions.assign(inl.domains.size(), {});
    for (DomainId d = 0; d < inl.domains.size(); ++d)
      executions[d].assign(inl.domains[d].steps.size(), 0);
    weightWrites.clear();
    liveOrder.clear();
    rootPosition = 0;
    firstWrite.assign(plan.buffers().size(), kNever);
    lastUse.assign(plan.buffers().size(), kNever);
    try {
      if (!inl.domains.empty())
        runDomain(0, orders);
      out.observation = observe();
      liveBytes(out);
    } catch (const InterpreterFault &f) {
      out.crashed = true;
      out.crash = f.what();
    } catch (const BudgetExceeded &) {
      out.budgetExceeded = true;
    } catch (const std::exception &ex) {
      out.crashed = true;
      out.crash = std::string("internal fault: ") + ex.what();
    }
    out.weightWrites = weightWrites;
    return out;
  }
};

Interpreter::Interpreter(const Module &m, const MemoryPlan &plan, const InlinedModule &inl)
    : impl_(new Impl(m, plan, inl)) {}

Interpreter::~Interpreter() {
  delete impl_;
}

RunOutcome Interpreter::runOnce(uint64_t stateSeed, const DomainOrders &orders) {
  impl_->fillState(stateSeed);
  impl_->runSeed = mix(stateSeed, 1);
  return impl_->run(orders);
}

bool Interpreter::setInputBytes(int64_t index, const Bytes &bytes) {
  for (BufferId b : impl_->byKind[static_cast<int>(BufferKind::UserInput)])
    if (impl_->info(b).inputIndex == index) {
      impl_->inputOverrides[index] = bytes;
      return true;
    }
  return false;
}

bool ElementView::anyUndef() const {
  return std::any_of(undef.begin(), undef.end(), [](uint8_t u) { return u != 0; });
}

void Interpreter::setArithmetic(uint64_t variant) {
  impl_->arithmetic = variant;
}

void Interpreter::setSpecials(bool on) {
  impl_->specials = on;
}

void Interpreter::setShadow(bool on) {
  impl_->shadowOn = on;
  impl_->shadows.clear();
}

const std::vector<uint64_t> &Interpreter::domainRuns() const {
  return impl_->domainRuns;
}

ExperimentResult Interpreter::experiment(uint64_t stateSeed, const DomainOrders &orders) {
  ExperimentResult r;
  impl_->fillState(stateSeed);
  impl_->runSeed = mix(stateSeed, 1);
  r.run1 = impl_->run(orders);
  if (r.run1.crashed || r.run1.budgetExceeded)
    return r;
  try {
    r.alias = impl_->aliasRelation();
  } catch (const std::exception &ex) {
    r.run1.crashed = true;
    r.run1.crash = ex.what();
    return r;
  }
  impl_->refillInputs(stateSeed);
  impl_->runSeed = mix(stateSeed, 2);
  r.run2 = impl_->run(orders);
  return r;
}

std::optional<std::vector<StepIndex>>
Interpreter::schedule(DomainId domain, const ScheduleRequest &req, std::string &error) const {
  const Domain &d = impl_->inl.domains[domain];
  size_t n = d.steps.size();
  if (d.reference.size() != n) {
    error = "the graph has a cycle: no schedule exists";
    return std::nullopt;
  }
  if (req.kind == ScheduleKind::Reference)
    return d.reference;
  std::vector<uint32_t> indeg(n, 0);
  for (const auto &s : d.succ)
    for (StepIndex t : s)
      ++indeg[t];
  std::vector<StepIndex> order;
  order.reserve(n);
  if (req.kind == ScheduleKind::Random) {
    std::vector<StepIndex> ready;
    for (StepIndex s = 0; s < n; ++s)
      if (indeg[s] == 0)
        ready.push_back(s);
    uint64_t x = req.seed ^ 0x243F6A8885A308D3ULL;
    while (!ready.empty()) {
      size_t pick = splitmix(x) % ready.size();
      std::swap(ready[pick], ready.back());
      StepIndex s = ready.back();
      ready.pop_back();
      order.push_back(s);
      for (StepIndex t : d.succ[s])
        if (--indeg[t] == 0)
          ready.push_back(t);
    }
    return order;
  }
  // Explicit: listed steps by list position, unlisted after them.
  std::vector<uint64_t> priority(n, UINT64_MAX);
  for (size_t i = 0; i < req.names.size(); ++i) {
    StepIndex s = impl_->inl.findStep(domain, req.names[i]);
    if (s == kNoStep) {
      error = fmt::format("schedule names `{}`, which is not a node of the graph (subgraph "
                          "nodes are written graph/node; call bodies are inlined)",
                          req.names[i]);
      return std::nullopt;
    }
    if (priority[s] != UINT64_MAX) {
      error = fmt::format("schedule names `{}` twice", req.names[i]);
      return std::nullopt;
    }
    priority[s] = i;
  }
  for (StepIndex s = 0; s < n; ++s)
    if (priority[s] == UINT64_MAX)
      priority[s] = req.names.size() + s;
  // A step is as urgent as the most urgent listed step it must precede, so
  // the ancestors of a listed step never wait behind a later-listed one.
  std::vector<uint64_t> urgency = priority;
  for (auto it = d.reference.rbegin(); it != d.reference.rend(); ++it)
    for (StepIndex t : d.succ[*it])
      urgency[*it] = std::min(urgency[*it], urgency[t]);
  using Item = std::pair<uint64_t, StepIndex>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> ready;
  for (StepIndex s = 0; s < n; ++s)
    if (indeg[s] == 0)
      ready.push({urgency[s], s});
  while (!ready.empty()) {
    StepIndex s = ready.top().second;
    ready.pop();
    order.push_back(s);
    for (StepIndex t : d.succ[s])
      if (--indeg[t] == 0)
        ready.push({urgency[t], t});
  }
  // The listed steps must come out in the listed order.
  uint64_t last = 0;
  const std::string *lastName = nullptr;
  for (StepIndex s : order) {
    if (priority[s] >= req.names.size())
      continue;
    if (lastName && priority[s] < last) {
      error = fmt::format("schedule lists `{}` before `{}`, but data or control edges make "
                          "`{}` run first",
                          req.names[priority[s]], *lastName, *lastName);
      return std::nullopt;
    }
    last = priority[s];
    lastName = &req.names[priority[s]];
  }
  return order;
}

RunReport runModule(const Module &m, const RunOptions &opts) {
  RunReport rep;
  MemoryPlan plan = MemoryPlan::build(m);
  rep.plan = plan.describe(m);
  for (const PortPlan &pp : plan.ports())
    rep.planPorts.push_back({fmt::format("{}:{}", plan.qualifiedName(pp.graph, pp.node), pp.index),
                             plan.bufferLabel(pp.graph, {pp.node, pp.index})});
  for (const BufferInfo &b : plan.buffers())
    rep.planBuffers.push_back({b.label, std::string(bufferKindName(b.kind)), b.size});
  if (!plan.errors().empty()) {
    rep.error = "memory plan: " + plan.errors().front();
    return rep;
  }
  InlinedModule inl = InlinedModule::build(m, plan);
  if (!inl.errors.empty()) {
    rep.error = inl.errors.front();
    return rep;
  }
  for (DomainId d = 0; d < inl.domains.size(); ++d)
    if (!inl.domains[d].cycle.empty()) {
      std::string path;
      for (StepIndex s : inl.domains[d].cycle)
        path += (path.empty() ? "" : " -> ") + inl.domains[d].steps[s].name;
      rep.error = "cycle: " + path;
      return rep;
    }
  Interpreter interp(m, plan, inl);
  for (const auto &[index, bytes] : opts.inputs)
    if (!interp.setInputBytes(index, bytes)) {
      rep.error = fmt::format("the graph has no user input {} (no root Data with index = {})",
                              index, index);
      return rep;
    }
  std::string err;
  auto order = interp.schedule(0, opts.schedule, err);
  if (!order) {
    rep.error = err;
    return rep;
  }
  rep.schedule = inl.names(0, *order);
  DomainOrders orders(inl.domains.size());
  orders[0] = *order;
  rep.result = interp.experiment(opts.seed, orders);
  rep.ok = true;
  return rep;
}

} // namespace graphvet::oracle
