// CommonSubexpressionEliminationPass; see cse.h. Each graph is walked once in
// topological order; every candidate is looked up in a hash table keyed by
// op type, output count, inputs and attribute keys, and compared exactly
// (attribute values with AttrValue's operator==, so floats bit for bit and
// tensors by value). Because a merge rewires consumers before they are
// visited, a chain of duplicates merges in the same walk. A merged node's
// control edges move to the node kept (their union), unless that would close
// a cycle.
#include "passes/cse.h"

#include "ir/op_library.h"
#include "ir/tensor.h"
#include "passes/buffer_analysis.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

namespace graphvet {
namespace {

/// Why a node may not be merged (empty tag: it may).
struct Refusal {
  std::string tag;
  std::string why;
};

struct NodeFacts {
  bool candidate = false; ///< in the table at all
  std::optional<Refusal> refusal;
  bool reachesGraphOutput = false;
  /// An op demanding contiguous inputs receives the result (it places the
  /// buffer, so sharing it with other uses may break that placement).
  bool continuousUse = false;
};

/// A hash of `len` bytes, eight at a time (std::hash of a string costs more
/// than the rest of a node's key).
size_t hashBytes(const void *data, size_t len) {
  const auto *p = static_cast<const unsigned char *>(data);
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ (len * 0xff51afd7ed558ccdULL);
  auto mixWord = [&](uint64_t w) {
    h = (h ^ (w * 0xc4ceb9fe1a85ec53ULL)) * 0xff51afd7ed558ccdULL;
    h ^= h >> 29;
  };
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    mixWord(w);
  }
  if (i < len) {
    uint64_t w = 0;
    std::memcpy(&w, p + i, len - i);
    mixWord(w);
  }
  return static_cast<size_t>(h ^ (h >> 32));
}

size_t hashText(std::string_view text) {
  return hashBytes(text.data(), text.size());
}

/// A hash of an attribute value consistent with AttrValue's operator==
/// (floats by bits, tensors by type and bytes). Without it every `Const`
/// (no inputs, one attribute `value`) would land in one bucket, and the
/// lookup of each constant would compare it with every constant before it.
size_t hashAttr(const AttrValue &v) {
  if (v.isInt())
    return std::hash<int64_t>{}(v.asInt());
  if (v.isBool())
    return v.asBool() ? 0x51ED27u : 0x2545F4u;
  if (const std::string *text = v.text())
    return hashText(*text);
  if (v.isFloat())
    return std::hash<uint64_t>{}(std::bit_cast<uint64_t>(v.asFloat()));
  if (v.isTensor()) {
    // Type, size and a sample of the bytes (all of them up to 512, else 64
    // evenly spread 8-byte pieces): equal tensors hash alike, and a model's
    // megabytes of weights are not read through on every round.
    const Tensor &t = v.asTensor();
    std::span<const uint8_t> bytes = t.bytes();
    size_t h = bytes.size() * 0x9e3779b97f4a7c15ULL;
    if (bytes.size() <= 512) {
      h ^= hashBytes(bytes.data(), bytes.size());
    } else {
      constexpr size_t kPieces = 64, kLen = 8;
      for (size_t k = 0; k < kPieces; ++k) {
        size_t at = (bytes.size() - kLen) * k / (kPieces - 1);
        uint64_t piece;
        std::memcpy(&piece, bytes.data() + at, kLen);
        h ^= piece * 0xc4ceb9fe1a85ec53ULL + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
      }
    }
    for (int64_t d : t.shape())
      h ^= static_cast<size_t>(d) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h ^ (static_cast<size_t>(t.dtype()) << 1) ^ (t.shape().size() << 9);
  }
  return v.isList() ? v.asList().size() : 0;
}

size_t hashNode(const Node &n) {
  size_t h = hashText(n.type);
  auto mix = [&](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  mix(n.numOutputs);
  for (const std::optional<OutPort> &in : n.inputs)
    mix(in ? (size_t{in->node} << 20) ^ in->index : size_t{0x5bd1e995});
  for (const auto &[key, value] : n.attrs) {
    mix(hashText(key));
    mix(hashAttr(value));
  }
  return h;
}

bool sameComputation(const Node &a, const Node &b) {
  return a.type == b.type && a.numOutputs == b.numOutputs && a.inputs == b.inputs &&
         a.attrs == b.attrs;
}

/// The table of one graph walk: buckets of node ids, each in insertion
/// order, found by the nodes' hash in an open-addressing index. A bucket is
/// a list threaded through the node ids, so a node whose key is unique costs
/// no allocation (a map of vectors allocated one vector per node).
class BucketTable {
public:
  /// For a graph of `capacity` node ids and at most `entries` buckets.
  BucketTable(size_t capacity, size_t entries) : next_(capacity, kNoNode) {
    size_t slots = 16;
    while (slots < 2 * entries)
      slots *= 2;
    keys_.resize(slots);
    bucketOf_.assign(slots, kNone);
    head_.reserve(entries);
    tail_.reserve(entries);
  }

  /// The bucket of `hash`, created empty when new.
  uint32_t bucket(size_t hash) {
    size_t i = slot(hash);
    if (bucketOf_[i] != kNone)
      return bucketOf_[i];
    if (2 * (head_.size() + 1) > keys_.size()) {
      grow();
      i = slot(hash);
    }
    keys_[i] = hash;
    bucketOf_[i] = static_cast<uint32_t>(head_.size());
    head_.push_back(kNoNode);
    tail_.push_back(kNoNode);
    return bucketOf_[i];
  }
  /// The first entry of bucket `b` and the entry after `id` (kNoNode at the end).
  NodeId first(uint32_t b) const { return head_[b]; }
  NodeId after(NodeId id) const { return next_[id]; }
  void append(uint32_t b, NodeId id) {
    next_[id] = kNoNode;
    if (head_[b] == kNoNode)
      head_[b] = id;
    else
      next_[tail_[b]] = id;
    tail_[b] = id;
  }
  /// Puts `by` where `old` is in bucket `b`.
  void replace(uint32_t b, NodeId old, NodeId by) {
    NodeId prev = kNoNode;
    for (NodeId cur = head_[b]; cur != kNoNode; prev = cur, cur = next_[cur])
      if (cur == old) {
        next_[by] = next_[old];
        (prev == kNoNode ? head_[b] : next_[prev]) = by;
        if (tail_[b] == old)
          tail_[b] = by;
        return;
      }
  }

private:
  static constexpr uint32_t kNone = UINT32_MAX;

  /// The slot holding `hash`, or the empty slot where it would go.
  size_t slot(size_t hash) const {
    const size_t mask = keys_.size() - 1;
    size_t i = (hash * 0x9e3779b97f4a7c15ULL) >> 20 & mask;
    while (bucketOf_[i] != kNone && keys_[i] != hash)
      i = (i + 1) & mask;
    return i;
  }
  void grow() {
    std::vector<size_t> keys = std::move(keys_);
    std::vector<uint32_t> bucketOf = std::move(bucketOf_);
    keys_.assign(keys.size() * 2, 0);
    bucketOf_.assign(keys.size() * 2, kNone);
    for (size_t j = 0; j < keys.size(); ++j)
      if (bucketOf[j] != kNone) {
        const size_t i = slot(keys[j]); // keys are distinct: an empty slot
        keys_[i] = keys[j];
        bucketOf_[i] = bucketOf[j];
      }
  }

  std::vector<size_t> keys_;
  std::vector<uint32_t> bucketOf_;
  std::vector<NodeId> head_, tail_, next_;
};

/// The reserved attributes that forbid deleting a node (as for dce).
bool isReserved(const Node &n) {
  if (n.attr("no_need_constant_folding"))
    return true;
  const AttrValue *v = n.attr("_cannot_be_deleted");
  return v && ((v->isBool() && v->asBool()) || (v->isString() && v->asString() == "true"));
}

class CsePass {
public:
  CsePass(Module &m, const CseOptions &options, std::vector<Remark> *remarks)
      : m_(m), options_(options), remarks_(remarks) {}

  CseStats run() {
    lazyFacts_ = isQuiet();
    for (GraphId g : m_.canonicalGraphOrder())
      runGraph(g);
    return stats_;
  }

private:
  const ModuleIndex &index() {
    if (!index_) {
      index_.emplace(m_);
      sourceWrites_.emplace(m_, *index_, options_.analysisBudget);
    }
    return *index_;
  }

  /// Whether the buffer behind `p` may be written by anything: traced to its
  /// source, then explored forward from every binding of that source.
  /// Cached by source, so a buffer read by many nodes is explored once.
  std::optional<Refusal> inputRefusal(GraphId g, OutPort p) {
    SourceTrace trace = traceSource(m_, index(), g, p, options_.analysisBudget);
    // A trace that ends at a parameter (`Data`) of a branch, body or cond:
    // the holder runs that subgraph as one step, so nothing outside writes
    // the parameter's buffer while it runs; when nothing inside writes any
    // buffer in place either, every read of it in that run sees the same
    // bytes (a loop's write-back happens between iterations, not within one).
    if (trace.kind == SourceKind::ControlFlow) {
      if (std::optional<GraphId> s = parameterGraph(trace)) {
        if (!subgraphWrites(*s))
          return std::nullopt;
        return Refusal{"written-parameter", "it reads a parameter of subgraph " +
                                                m_.graph(*s).name + ", which writes in place"};
      }
    }
    if (trace.kind == SourceKind::Variable || trace.kind == SourceKind::VariableRef)
      return Refusal{"variable-read", "reads a variable, which other nodes may write"};
    if (trace.kind != SourceKind::Ordinary && trace.kind != SourceKind::Weight &&
        trace.kind != SourceKind::UserInput)
      return Refusal{"unknown-source",
                     std::string("an input's buffer traces to ") + sourceKindName(trace.kind)};
    SourceWrites::Answer written = sourceWrites_->of(trace);
    if (written == SourceWrites::Answer::OverBudget)
      return Refusal{"budget", "the exploration of an input's buffer ran out of budget"};
    if (written == SourceWrites::Answer::Written)
      return Refusal{"written-input",
                     "an input's buffer is written in place, so equal reads may differ"};
    return std::nullopt;
  }

  /// Whether subgraph `s` (or one nested in it) writes some buffer in
  /// place: a ref output, a scribble, a variable-bound output or a While
  /// (loop variables are written back in place). Memoized per graph.
  bool subgraphWrites(GraphId s) {
    if (s >= writes_.size())
      writes_.resize(m_.numGraphs(), -1);
    if (writes_[s] >= 0)
      return writes_[s] == 1;
    writes_[s] = 1; // a nesting cycle (rejected by the verifier) counts as a write
    const Graph &sg = m_.graph(s);
    bool any = false;
    for (NodeId id : sg.liveNodes()) {
      const Node &n = sg.node(id);
      any = any || !refWrittenInputs(n).empty() || isInputMutable(n) || opKind(n) == OpKind::While;
      for (uint32_t k = 0; k < n.numOutputs && !any; ++k)
        any = refVarSrcName(n, k) != nullptr;
      for (GraphId sub : n.subgraphs)
        any = any || subgraphWrites(sub);
      if (any)
        break;
    }
    writes_[s] = any ? 1 : 0;
    return any;
  }

  /// The subgraph whose parameter ends `trace`, if it ends at one.
  std::optional<GraphId> parameterGraph(const SourceTrace &trace) const {
    if (trace.steps.empty())
      return std::nullopt;
    const TraceStep &last = trace.steps.back();
    if (last.graph == 0 || last.graph >= m_.numGraphs())
      return std::nullopt;
    const Graph &sg = m_.graph(last.graph);
    if (last.port.node >= sg.capacity() || opKind(sg.node(last.port.node)) != OpKind::DataSource)
      return std::nullopt;
    return last.graph;
  }

  static size_t fanout(const Node &n) {
    size_t slots = 0;
    for (const std::vector<InPort> &cs : n.consumers)
      slots += cs.size();
    return slots;
  }

  /// Whether nothing in the module writes a buffer in place or demands a
  /// placement: no While, scribbler, ref output, variable-bound output or
  /// `continuous_input` (views may share buffers). Then every access is a
  /// read, and a candidate's facts depend only on the trace of its inputs
  /// and on the graph outputs its result reaches, as long as no exploration
  /// runs out of budget (lazyBoundHolds). They do not change between its
  /// visit and the end of its graph's walk: the trace runs through nodes
  /// placed before it, which no later merge touches, and a merge moves the
  /// readers of the removed node to an equal node that reads the same ports
  /// (so an exploration that reached one reaches the other, and what it
  /// reaches beyond). So facts are computed only for the nodes of an equal
  /// pair: a node whose key is unique costs its hash. Also gathers the
  /// figures of lazyBoundHolds.
  bool isQuiet() {
    for (GraphId gid = 0; gid < m_.numGraphs(); ++gid) {
      const Graph &g = m_.graph(gid);
      for (NodeId id = 0; id < g.capacity(); ++id) {
        const Node &n = g.node(id);
        if (!n.alive)
          continue;
        const OpInfo &op = lookupOp(n.type);
        if (op.kind == OpKind::While)
          return false;
        const size_t out = fanout(n);
        maxFanout_ = std::max(maxFanout_, out);
        if (!hasMemoryBehaviourAttrs(n)) {
          // The op's row alone decides (as isInputMutable, refInput and
          // viewInput do for such a node).
          if (op.inputMutable)
            return false;
          for (const PortAlias &a : op.refOutputs)
            if (a.output < n.numOutputs && a.input < n.inputs.size())
              return false;
          if (!op.viewOutputs.empty())
            passOnSlots_ += out;
        } else {
          if (isInputMutable(n) || needsContinuousInput(n))
            return false;
          for (uint32_t k = 0; k < n.numOutputs; ++k) {
            if (refInput(n, k) || refVarSrcName(n, k))
              return false;
            if (viewInput(n, k))
              passOnSlots_ += g.consumers(OutPort{id, k}).size();
          }
        }
        if (op.kind == OpKind::DataSource) {
          passOnSlots_ += out;
          dataSlots_ += out;
        } else if (op.kind == OpKind::Call || op.kind == OpKind::If || op.kind == OpKind::Case) {
          passOnSlots_ += out;
        }
      }
    }
    return lazyBoundHolds();
  }

  /// Whether no buffer exploration can run out of budget now or could have
  /// since the walk began. An exploration starts from the readers of one
  /// node's outputs (or of the Data nodes of one user input) and goes on
  /// only through the readers of a view output, a holder's output or a
  /// Data node: it visits at most maxFanout_ (or dataSlots_) plus
  /// passOnSlots_ slots. Merges never add to the readers of a Data node or
  /// holder, and move a view's readers to an equal view, so only maxFanout_
  /// grows (the kept node takes the removed node's readers); it is kept up
  /// to date before each merge.
  bool lazyBoundHolds() const {
    return std::max(maxFanout_, dataSlots_) + passOnSlots_ <= options_.analysisBudget;
  }

  /// Whether node `id` of `graph` is looked up in the table at all: a
  /// holder (never merged), an ordinary op, a copy or a weight with a
  /// literal (a weight without one is filled by its name, semantics.md §3,
  /// so two of them are different values however alike they look). The
  /// interface (Data, NetOutput) and variables are never merged.
  bool isCandidate(const Node &n) const {
    OpKind kind = opKind(n);
    if (kind == OpKind::Call || kind == OpKind::If || kind == OpKind::Case || kind == OpKind::While)
      return true; // holdsSubgraphs
    if (kind != OpKind::Ordinary && kind != OpKind::Weight && kind != OpKind::Copy)
      return false;
    if (kind == OpKind::Weight) {
      const AttrValue *value = n.attr("value");
      if (!options_.mergeConstants || !value || !value->isTensor())
        return false;
    }
    return true;
  }

  /// The facts of candidate `id` (isCandidate).
  NodeFacts factsOf(GraphId g, NodeId id) {
    const Graph &graph = m_.graph(g);
    const Node &n = graph.node(id);
    NodeFacts f;
    f.candidate = true;
    if (holdsSubgraphs(n)) {
      // Holders are looked up so that an equal-looking pair is explained,
      // but never merged: their subgraphs are not compared.
      f.refusal = Refusal{"subgraph", "it holds subgraphs, which cse does not compare"};
      return f;
    }
    OpKind kind = opKind(n);
    auto refuse = [&](std::string tag, std::string why) {
      if (!f.refusal)
        f.refusal = Refusal{std::move(tag), std::move(why)};
    };
    if (isReserved(n))
      refuse("reserved-attr", "a reserved attribute forbids deleting it");
    if (lookupOp(n.type).nondeterministic)
      refuse("random", "a random op's draw is its own (merging would repeat it)");
    if (kind == OpKind::Copy)
      refuse("fresh-buffer", "a copy exists to make a buffer of its own");
    bool writesInput = isInputMutable(n);
    for (uint32_t k = 0; k < n.numOutputs && !writesInput; ++k)
      writesInput = refInput(n, k).has_value(); // some input in refWrittenInputs
    if (writesInput)
      refuse("effect", "writes an input in place");
    for (uint32_t k = 0; k < n.numOutputs; ++k)
      if (refVarSrcName(n, k))
        refuse("effect", "an output is bound to a variable");
    if (f.refusal)
      return f;
    for (const std::optional<OutPort> &in : n.inputs)
      if (in && !f.refusal)
        if (std::optional<Refusal> r = inputRefusal(g, *in))
          f.refusal = std::move(r);
    if (f.refusal)
      return f;
    std::vector<SlotRef> slots;
    for (uint32_t k = 0; k < n.numOutputs; ++k)
      for (InPort c : graph.consumers(OutPort{id, k}))
        slots.push_back({g, c});
    BufferUses uses = exploreUses(m_, index(), slots, options_.analysisBudget);
    if (uses.overBudget)
      refuse("budget", "the exploration of its result ran out of budget");
    else if (writes(uses.access))
      refuse("written-result", "its result is later written in place");
    f.reachesGraphOutput = !uses.rootOutputs.empty();
    f.continuousUse = !uses.continuousUsers.empty();
    return f;
  }

  void remark(const Graph &g, const Node &n, const char *decision, std::string tag,
              std::string message) {
    if (!remarks_)
      return;
    remarks_->push_back(nodeRemark(kCseName, g, n, decision, std::move(tag), std::move(message)));
  }

  /// Whether a path of data or control edges leads from `from` to `to`,
  /// searching only nodes placed no later than `to`; nullopt when the
  /// search exceeds the analysis budget.
  std::optional<bool> reachesBounded(const Graph &g, NodeId from, NodeId to,
                                     const std::vector<uint32_t> &pos) {
    ++stamp_;
    std::vector<NodeId> work{from};
    visitStamp_[from] = stamp_;
    size_t steps = 0;
    while (!work.empty()) {
      NodeId cur = work.back();
      work.pop_back();
      if (cur == to)
        return true;
      auto visit = [&](NodeId next) {
        if (visitStamp_[next] != stamp_ && pos[next] <= pos[to]) {
          visitStamp_[next] = stamp_;
          work.push_back(next);
        }
      };
      const Node &n = g.node(cur);
      for (const std::vector<InPort> &cs : n.consumers)
        for (const InPort &c : cs) {
          if (++steps > options_.analysisBudget)
            return std::nullopt;
          visit(c.node);
        }
      for (NodeId t : n.ctrlOut) {
        if (++steps > options_.analysisBudget)
          return std::nullopt;
        visit(t);
      }
    }
    return false;
  }

  /// Merging `dup` into the earlier `kept` moves dup's control edges to
  /// kept. Outgoing ones point later than dup, hence later than kept; an
  /// incoming one from `b` closes a cycle exactly when kept reaches b.
  std::optional<Refusal> ctrlRefusal(const Graph &g, NodeId kept, NodeId dup,
                                     const std::vector<uint32_t> &pos) {
    for (NodeId b : g.node(dup).ctrlIn) {
      if (b == kept)
        continue;
      std::optional<bool> cycle = reachesBounded(g, kept, b, pos);
      if (!cycle)
        return Refusal{"budget", "the search for a control-edge cycle ran out of budget"};
      if (*cycle)
        return Refusal{"ctrl-cycle", "its control edge from " + g.node(b).name +
                                         " would close a cycle (" + g.node(b).name +
                                         " depends on " + g.node(kept).name + ")"};
    }
    return std::nullopt;
  }

  void runGraph(GraphId gid) {
    Graph &g = m_.graph(gid);
    std::optional<std::vector<NodeId>> order = g.topoOrder();
    if (!order)
      return;
    BucketTable table(g.capacity(), order->size());
    // The facts worked out (every candidate's unless lazy), by node id
    // through an index: most nodes of a quiet module never need theirs.
    constexpr uint32_t kUnknown = UINT32_MAX;
    std::vector<uint32_t> factsAt(g.capacity(), kUnknown);
    std::vector<NodeFacts> known;
    auto ensureFacts = [&](NodeId id) {
      if (factsAt[id] == kUnknown) {
        NodeFacts f = factsOf(gid, id);
        factsAt[id] = static_cast<uint32_t>(known.size());
        known.push_back(std::move(f));
      }
    };
    // Only for nodes whose facts are worked out; a reference is good until
    // the next ensureFacts.
    auto facts = [&](NodeId id) -> NodeFacts & { return known[factsAt[id]]; };
    // Positions in the original order. Merges only add edges that agree
    // with it (uses move to an earlier node, control edges are checked), so
    // it stays a topological order of the graph throughout the walk.
    std::vector<uint32_t> pos(g.capacity(), 0);
    for (uint32_t i = 0; i < order->size(); ++i)
      pos[(*order)[i]] = i;
    visitStamp_.assign(g.capacity(), 0);
    stamp_ = 0;
    for (NodeId id : *order) {
      const Node &n = g.node(id);
      if (!isCandidate(n))
        continue;
      if (!lazyFacts_)
        ensureFacts(id);
      ++stats_.candidates;
      // The naive baseline keeps every entry in one bucket: equal nodes hash
      // alike, so the first equal entry of the list is the bucket's first.
      const uint32_t bucket = table.bucket(options_.naive ? 0 : hashNode(n));
      NodeId equal = table.first(bucket);
      while (equal != kNoNode && !sameComputation(g.node(equal), n))
        equal = table.after(equal);
      if (equal == kNoNode) {
        table.append(bucket, id);
        continue;
      }
      ensureFacts(id);
      ensureFacts(equal);
      const std::string &keptName = g.node(equal).name;
      std::optional<Refusal> refusal = facts(id).refusal ? facts(id).refusal : facts(equal).refusal;
      if (!refusal && facts(id).reachesGraphOutput && facts(equal).reachesGraphOutput)
        refusal = Refusal{"graph-outputs",
                          "both results are graph outputs, which must not start to alias"};
      // A constant a graph output is bound to hands the caller its buffer:
      // shared with the other constant's readers, a write to that output
      // would change what they read (found by midend_fuzzer, issue 29).
      if (!refusal && opKind(n) == OpKind::Weight &&
          (facts(id).reachesGraphOutput || facts(equal).reachesGraphOutput))
        refusal = Refusal{"constant-output", "one is bound to a graph output, which must not "
                                             "share a constant's buffer with its other readers"};
      if (!refusal && (facts(id).continuousUse || facts(equal).continuousUse))
        refusal = Refusal{"layout", "an op demanding contiguous inputs receives one of the "
                                    "results, and sharing its buffer could break that layout"};
      if (!refusal)
        refusal = ctrlRefusal(g, equal, id, pos);
      if (refusal) {
        ++stats_.refused;
        remark(g, n, "kept", refusal->tag,
               "kept " + n.name + ": equal to " + keptName + " but " + refusal->why);
        // An equal node that may not merge still serves as the
        // representative for later ones only if it could merge itself.
        if (facts(equal).refusal && !facts(id).refusal)
          table.replace(bucket, equal, id);
        continue;
      }
      if (lazyFacts_) {
        maxFanout_ = std::max(maxFanout_, fanout(g.node(equal)) + fanout(n));
        if (!lazyBoundHolds()) {
          // After this merge an exploration might run out of budget, so a
          // later computation could differ from the one at the visit: work
          // out every pending node's facts now, still equal to those, and
          // the rest at each visit as usual.
          for (NodeId v : *order) {
            if (v == id)
              break;
            if (g.node(v).alive && isCandidate(g.node(v)))
              ensureFacts(v);
          }
          lazyFacts_ = false;
        }
      }
      remark(
          g, n, "merged", n.ctrlIn.empty() && n.ctrlOut.empty() ? "merged" : "merged-ctrl",
          "merged " + n.name + " into " + keptName +
              (n.ctrlIn.empty() && n.ctrlOut.empty() ? "" : " (its control edges move with it)"));
      // The kept node takes the union of both nodes' control edges, so
      // every ordering the removed node imposed still holds.
      for (NodeId b : std::vector<NodeId>(n.ctrlIn))
        if (b != equal)
          g.addCtrlEdge(b, equal);
      for (NodeId c : std::vector<NodeId>(n.ctrlOut))
        g.addCtrlEdge(equal, c);
      facts(equal).reachesGraphOutput =
          facts(equal).reachesGraphOutput || facts(id).reachesGraphOutput;
      for (uint32_t k = 0; k < n.numOutputs; ++k)
        g.replaceAllUses(OutPort{id, k}, OutPort{equal, k});
      g.removeNode(id);
      ++stats_.merged;
    }
  }

  Module &m_;
  const CseOptions &options_;
  std::vector<Remark> *remarks_;
  /// Built when the first facts are worked out (index()); what it indexes
  /// (Data, NetOutput, variables, holders, variable-bound outputs) is never
  /// merged away, so it is the same whenever it is built.
  std::optional<ModuleIndex> index_;
  std::optional<SourceWrites> sourceWrites_;
  /// The module is quiet (isQuiet): facts are computed only when needed.
  bool lazyFacts_ = false;
  /// lazyBoundHolds' figures: the most readers of one node's outputs so
  /// far, the readers of all Data nodes, of all view outputs, holder
  /// outputs and Data nodes (fixed at the start: merges only lower them).
  size_t maxFanout_ = 0, dataSlots_ = 0, passOnSlots_ = 0;
  /// By graph: -1 not yet known, 0 writes nothing in place, 1 writes.
  std::vector<int8_t> writes_;
  /// Visit marks of reachesBounded, by node id, for the graph being walked.
  std::vector<uint64_t> visitStamp_;
  uint64_t stamp_ = 0;
  CseStats stats_;
};

} // namespace

CseStats runCse(Module &m, const CseOptions &options, std::vector<Remark> *remarks) {
  return CsePass(m, options, remarks).run();
}

} // namespace graphvet
