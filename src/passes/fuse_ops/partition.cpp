// The grouping of fuse-ops over one graph, after TVM's GraphPartitioner: an
// indexed forward graph in topological order (data edges carry the
// consumer's pattern kind, a Broadcast edge whose input already has the
// result's type counts as ElemWise; control edges are Opaque), the
// post-dominator tree (each node's parent is the least common ancestor of
// its consumers; the pattern of that link combines every edge on the way),
// and union-find groups merged in three phases (docs/passes/fuse-ops.md).
#include "passes/fuse_ops/internal.h"

#include <algorithm>
#include <cstdint>
#include <set>

namespace graphvet::fuse_ops {
namespace {

constexpr size_t kNone = SIZE_MAX;

OpPattern combine(OpPattern a, OpPattern b) {
  return std::max(a, b);
}

class Partitioner {
public:
  Partitioner(const Module &m, GraphId gid, const ModuleTypes &types, const FuseOpsOptions &options)
      : g_(m.graph(gid)), gid_(gid), types_(types), options_(options) {}

  Partition run() {
    Partition result;
    std::optional<std::vector<NodeId>> order = g_.topoOrder();
    result.topoIndex.assign(g_.capacity(), kNone);
    if (!order)
      return result; // a cyclic graph is the verifier's to report
    order_ = std::move(*order);
    for (size_t i = 0; i < order_.size(); ++i)
      result.topoIndex[order_[i]] = i;
    index_ = result.topoIndex;
    buildForwardGraph();
    if (options_.naive)
      buildPostDominatorsBySearch();
    else
      buildPostDominators();
    initGroups();
    for (int phase = 0; phase < 3; ++phase)
      for (size_t i = 0; i < order_.size(); ++i)
        visit(i, phase);
    collect(result);
    return result;
  }

private:
  struct Edge {
    size_t to;
    OpPattern pattern;
  };

  const Graph &g_;
  GraphId gid_;
  const ModuleTypes &types_;
  const FuseOpsOptions &options_;
  std::vector<NodeId> order_;
  std::vector<size_t> index_; // node id -> topological index
  std::vector<OpPattern> kind_;
  std::vector<std::vector<Edge>> outs_;
  // Post-dominator tree.
  std::vector<size_t> pdom_;
  std::vector<size_t> depth_;
  /// The root of each node's tree in the post-dominator forest (a node in
  /// another tree has no common ancestor with it).
  std::vector<size_t> root_;
  /// Skew-binary jump pointers (Myers): jump_[i] is an ancestor of i whose
  /// distance depends only on i's depth, so two nodes of one depth jump
  /// alike and a least common ancestor takes O(log depth) steps instead of
  /// one per level (a constant shared model-wide, as a LayerNormalization
  /// epsilon after cse, has uses along the whole model: the walk per use
  /// was quadratic). jumpPattern_[i] combines pdomPattern_ of the nodes
  /// from i up to jump_[i] (excluded), what stepping over them combines.
  std::vector<size_t> jump_;
  std::vector<OpPattern> jumpPattern_;
  std::vector<OpPattern> pdomPattern_;
  // Union-find groups; pattern_ and anchor_ are meaningful on roots, and
  // pattern_[i] is also what node i's own group started as (TVM reads the
  // node's own group's pattern).
  std::vector<size_t> parent_;
  std::vector<OpPattern> pattern_;
  std::vector<char> anchor_;
  std::vector<std::vector<size_t>> members_;
  // Scratch for path walks: node i was visited by the walk numbered stamp_.
  std::vector<uint32_t> visited_;
  uint32_t stamp_ = 0;
  // The last refusal of each node (tag, message).
  std::vector<std::pair<std::string, std::string>> refusal_;

  const Node &node(size_t i) const { return g_.node(order_[i]); }
  const std::string &name(size_t i) const { return node(i).name; }

  OpPattern edgePattern(OutPort src, size_t dst) const {
    OpPattern p = kind_[dst];
    if (p != OpPattern::Broadcast)
      return p;
    const TensorType *in = types_.of(gid_, src);
    const TensorType *out = types_.of(gid_, order_[dst], 0);
    if (in && out && in->dtype == out->dtype && in->shape == out->shape)
      return OpPattern::ElemWise;
    return p;
  }

  void buildForwardGraph() {
    size_t n = order_.size();
    kind_.resize(n);
    for (size_t i = 0; i < n; ++i)
      kind_[i] = fusionPattern(node(i));
    outs_.assign(n, {});
    for (size_t i = 0; i < n; ++i) {
      const Node &nd = node(i);
      for (uint32_t k = 0; k < nd.numOutputs; ++k)
        for (const InPort &c : g_.consumers(OutPort{nd.id, k}))
          outs_[i].push_back(Edge{index_[c.node], edgePattern(OutPort{nd.id, k}, index_[c.node])});
      for (NodeId c : nd.ctrlOut)
        outs_[i].push_back(Edge{index_[c], OpPattern::Opaque});
    }
  }

  size_t lca(size_t a, size_t b, OpPattern &pattern) const {
    // Nodes of different trees meet nowhere: the walk would climb to the
    // roots (the whole chain above a node one of whose uses is a graph
    // output: quadratic on a long model) only to return kNone, whose
    // pattern nobody reads.
    if (a == kNone || b == kNone || root_[a] != root_[b])
      return kNone;
    // The pattern combines every node stepped from on both paths up to the
    // ancestor (excluded), as a walk one level at a time would; combine is
    // a maximum, so the order does not matter.
    auto liftTo = [&](size_t &x, size_t depth) {
      while (depth_[x] > depth) {
        if (jump_[x] != kNone && depth_[jump_[x]] >= depth) {
          pattern = combine(pattern, jumpPattern_[x]);
          x = jump_[x];
        } else {
          pattern = combine(pattern, pdomPattern_[x]);
          x = pdom_[x];
        }
      }
    };
    liftTo(a, depth_[b]);
    liftTo(b, depth_[a]);
    while (a != b) {
      if (jump_[a] != jump_[b]) { // the ancestor lies above both targets
        pattern = combine(pattern, combine(jumpPattern_[a], jumpPattern_[b]));
        a = jump_[a];
        b = jump_[b];
      } else {
        pattern = combine(pattern, combine(pdomPattern_[a], pdomPattern_[b]));
        a = pdom_[a];
        b = pdom_[b];
      }
    }
    return a;
  }

  /// jump_ and jumpPattern_ of r, once its parent's are set.
  void setJump(size_t r) {
    size_t p = pdom_[r];
    jump_[r] = p;
    jumpPattern_[r] = pdomPattern_[r];
    if (p == kNone || jump_[p] == kNone)
      return;
    size_t j = jump_[p];
    if (jump_[j] != kNone && depth_[p] - depth_[j] == depth_[j] - depth_[jump_[j]]) {
      jump_[r] = jump_[j];
      jumpPattern_[r] = combine(pdomPattern_[r], combine(jumpPattern_[p], jumpPattern_[j]));
    }
  }

  void buildPostDominators() {
    size_t n = order_.size();
    pdom_.assign(n, kNone);
    depth_.assign(n, 1);
    root_.resize(n);
    for (size_t r = 0; r < n; ++r)
      root_[r] = r;
    jump_.assign(n, kNone);
    jumpPattern_.assign(n, OpPattern::Opaque);
    pdomPattern_.assign(n, OpPattern::Opaque);
    for (size_t r = n; r-- > 0;) {
      if (outs_[r].empty())
        continue; // an exit (NetOutput) or a dead end: a root of the tree
      OpPattern pattern = OpPattern::ElemWise;
      size_t parent = outs_[r][0].to;
      pattern = combine(pattern, outs_[r][0].pattern);
      for (size_t e = 1; e < outs_[r].size(); ++e) {
        pattern = combine(pattern, outs_[r][e].pattern);
        parent = lca(parent, outs_[r][e].to, pattern);
      }
      pdom_[r] = parent;
      depth_[r] = parent == kNone ? 1 : depth_[parent] + 1;
      root_[r] = parent == kNone ? r : root_[parent];
      pdomPattern_[r] = pattern;
      setJump(r);
    }
  }

  /// The naive baseline of buildPostDominators: d post-dominates r when no
  /// path from r that avoids d ends at an exit (a node without out-edges);
  /// the immediate one is the first in topological order (post-dominators
  /// lie on every path, so in path order). The link's pattern combines every
  /// out-edge of r and of the nodes strictly between r and d, which is what
  /// the tree's least-common-ancestor walk combines.
  void buildPostDominatorsBySearch() {
    size_t n = order_.size();
    pdom_.assign(n, kNone);
    depth_.assign(n, 1);
    pdomPattern_.assign(n, OpPattern::Opaque);
    std::vector<uint32_t> seen(n, 0);
    uint32_t stamp = 0;
    // Nodes reachable from r without passing `avoid` (kNone: avoid nothing);
    // sets `exitReached` when one of them has no out-edge.
    auto search = [&](size_t r, size_t avoid, bool &exitReached) {
      ++stamp;
      exitReached = false;
      std::vector<size_t> stack, reached;
      for (const Edge &e : outs_[r])
        stack.push_back(e.to);
      while (!stack.empty()) {
        size_t v = stack.back();
        stack.pop_back();
        if (v == avoid || seen[v] == stamp)
          continue;
        seen[v] = stamp;
        reached.push_back(v);
        if (outs_[v].empty())
          exitReached = true;
        for (const Edge &e : outs_[v])
          stack.push_back(e.to);
      }
      return reached;
    };
    for (size_t r = 0; r < n; ++r) {
      if (outs_[r].empty())
        continue;
      bool exitReached = false;
      std::vector<size_t> candidates = search(r, kNone, exitReached);
      std::sort(candidates.begin(), candidates.end());
      for (size_t d : candidates) {
        std::vector<size_t> between = search(r, d, exitReached);
        if (exitReached)
          continue;
        OpPattern pattern = OpPattern::ElemWise;
        for (const Edge &e : outs_[r])
          pattern = combine(pattern, e.pattern);
        for (size_t v : between)
          for (const Edge &e : outs_[v])
            pattern = combine(pattern, e.pattern);
        pdom_[r] = d;
        pdomPattern_[r] = pattern;
        break;
      }
    }
  }

  void initGroups() {
    size_t n = order_.size();
    parent_.resize(n);
    pattern_ = kind_;
    anchor_.assign(n, 0);
    members_.assign(n, {});
    for (size_t i = 0; i < n; ++i) {
      parent_[i] = i;
      anchor_[i] = kind_[i] == OpPattern::OutEWiseFusable;
      members_[i] = {i};
    }
    visited_.assign(n, 0);
    refusal_.assign(n, {});
  }

  size_t find(size_t i) {
    size_t r = i;
    while (parent_[r] != r)
      r = parent_[r];
    while (parent_[i] != r) {
      size_t next = parent_[i];
      parent_[i] = r;
      i = next;
    }
    return r;
  }

  void mergeFromTo(size_t child, size_t parent) {
    child = find(child);
    parent = find(parent);
    if (child == parent)
      return;
    parent_[child] = parent;
    members_[parent].insert(members_[parent].end(), members_[child].begin(), members_[child].end());
    members_[child].clear();
    if (anchor_[child]) {
      anchor_[parent] = 1;
      pattern_[parent] = combine(pattern_[child], pattern_[parent]);
    }
  }

  /// The nodes on paths from src (exclusive) to sink (inclusive), in
  /// visiting order; every path from src reaches sink (sink post-dominates).
  std::vector<size_t> pathNodes(size_t src, size_t sink) {
    ++stamp_;
    std::vector<size_t> stack, seen;
    for (const Edge &e : outs_[src])
      stack.push_back(e.to);
    while (!stack.empty()) {
      size_t v = stack.back();
      stack.pop_back();
      if (visited_[v] == stamp_)
        continue;
      visited_[v] = stamp_;
      seen.push_back(v);
      if (v == sink)
        continue;
      for (const Edge &e : outs_[v])
        stack.push_back(e.to);
    }
    return seen;
  }

  /// TVM's CheckPath: every node on a path from src to sink (sink
  /// included) has a group kind `allowed` accepts; the first that does not,
  /// or kNone.
  template <typename F> size_t checkPath(size_t src, size_t sink, F allowed) {
    for (size_t v : pathNodes(src, sink))
      if (!allowed(pattern_[find(v)], v == sink))
        return v;
    return kNone;
  }

  /// TVM's CommitFuse: src and every node on its paths to sink join sink's
  /// group.
  void commitFuse(size_t src, size_t sink) {
    mergeFromTo(src, sink);
    for (size_t v : pathNodes(src, sink))
      mergeFromTo(v, sink);
  }

  /// The node ids of the group sink's would become by fusing src into it.
  std::vector<NodeId> prospectiveGroup(size_t src, size_t sink) {
    std::set<size_t> roots{find(src), find(sink)};
    for (size_t v : pathNodes(src, sink))
      roots.insert(find(v));
    std::vector<NodeId> ids;
    for (size_t r : roots)
      for (size_t v : members_[r])
        ids.push_back(order_[v]);
    return ids;
  }

  void refuse(size_t i, std::string tag, std::string message) {
    refusal_[i] = {std::move(tag), std::move(message)};
  }

  void refusePath(size_t i, size_t sink, size_t offender, const char *phaseRule) {
    const Node &o = node(offender);
    OpPattern k = pattern_[find(offender)];
    if (k == OpPattern::Opaque)
      refuse(i, "opaque-on-path",
             "the path to its post-dominator " + name(sink) + " passes " + o.type + " " + o.name +
                 ", which is Opaque");
    else
      refuse(i, "kind-on-path",
             "the path to its post-dominator " + name(sink) + " passes " + o.type + " " + o.name +
                 " (" + std::string(opPatternName(k)) + "), and " + phaseRule);
  }

  /// One node of one phase: try to fuse the node's group into its
  /// post-dominator's.
  void visit(size_t i, int phase) {
    OpPattern own = pattern_[i];
    if (own == OpPattern::Opaque)
      return;
    size_t d = pdom_[i];
    if (d == kNone) {
      if (phase == 0)
        refuse(i, "no-post-dominator", "its value reaches no single post-dominator");
      return;
    }
    if (find(i) == find(d))
      return; // already in its post-dominator's group
    if (pattern_[find(d)] == OpPattern::Tuple)
      return;
    OpPattern link = pdomPattern_[i];
    size_t offender = kNone;
    const char *rule = "";
    if (own == OpPattern::OutEWiseFusable) {
      // Phase 1 of the brief: the anchor takes its element-wise consumers.
      if (phase != 0)
        return;
      if (link != OpPattern::ElemWise) {
        refuse(i, link == OpPattern::Opaque ? "opaque-consumer" : "anchor-consumer",
               "the link to its post-dominator " + name(d) + " is " +
                   std::string(opPatternName(link)) + ", not ElemWise");
        return;
      }
      rule = "an anchor takes ElemWise or Broadcast ops only";
      offender = checkPath(i, d, [](OpPattern k, bool) { return k <= OpPattern::Broadcast; });
    } else if (own <= OpPattern::Broadcast) {
      // Phase 2: element-wise and broadcast ops fuse into injective or
      // reduction sinks (and into anchors' groups already formed).
      if (phase != 1)
        return;
      if (!(link <= OpPattern::Injective || link == OpPattern::CommReduce)) {
        std::string tag = link == OpPattern::OutEWiseFusable ? "anchor-input"
                          : link == OpPattern::Opaque        ? "opaque-consumer"
                                                             : "kind-consumer";
        refuse(i, tag,
               "the link to its post-dominator " + name(d) + " is " +
                   std::string(opPatternName(link)) +
                   (link == OpPattern::OutEWiseFusable ? ": nothing fuses into an anchor's input"
                                                       : ", not Injective or CommReduce"));
        return;
      }
      rule =
          "only ElemWise, Broadcast or Injective ops lie between an element-wise op and its sink";
      offender = checkPath(i, d, [](OpPattern k, bool sink) {
        if (!sink)
          return k <= OpPattern::Injective;
        return k <= OpPattern::Injective || k == OpPattern::CommReduce ||
               k == OpPattern::OutEWiseFusable;
      });
    } else if (own == OpPattern::Injective || own == OpPattern::Tuple) {
      // Phase 3: injective ops fuse last, into injective groups.
      if (phase != 2)
        return;
      rule = "an injective op fuses only into ElemWise, Broadcast or Injective groups";
      offender = checkPath(i, d, [](OpPattern k, bool) { return k <= OpPattern::Injective; });
    } else {
      return; // CommReduce: a sink, never a source
    }
    if (offender != kNone) {
      refusePath(i, d, offender, rule);
      return;
    }
    std::vector<NodeId> merged = prospectiveGroup(i, d);
    if (static_cast<int64_t>(merged.size()) > options_.maxFuseDepth) {
      refuse(i, "max-depth",
             "fusing it into " + name(d) + "'s group would make " + std::to_string(merged.size()) +
                 " ops, over fuse_ops.max_fuse_depth = " + std::to_string(options_.maxFuseDepth));
      return;
    }
    size_t args = countArgs(g_, merged);
    if (static_cast<int64_t>(args) > options_.maxArgs) {
      refuse(i, "max-args",
             "fusing it into " + name(d) + "'s group would read " + std::to_string(args) +
                 " values, over fuse_ops.max_args = " + std::to_string(options_.maxArgs));
      return;
    }
    commitFuse(i, d);
  }

  void collect(Partition &result) {
    size_t n = order_.size();
    std::vector<std::vector<size_t>> byRoot(n);
    for (size_t i = 0; i < n; ++i)
      byRoot[find(i)].push_back(i);                // ascending topological order
    std::vector<std::pair<size_t, size_t>> firsts; // (first member, root)
    for (size_t r = 0; r < n; ++r)
      if (byRoot[r].size() >= 2)
        firsts.push_back({byRoot[r][0], r});
    std::sort(firsts.begin(), firsts.end());
    for (auto [first, r] : firsts) {
      std::vector<NodeId> ids;
      for (size_t v : byRoot[r])
        ids.push_back(order_[v]);
      result.groups.push_back(std::move(ids));
    }
    for (size_t i = 0; i < n; ++i) {
      if (byRoot[find(i)].size() >= 2)
        continue;
      const Node &nd = node(i);
      const OpInfo *def = numericDefinition(nd);
      if (def && def->nondeterministic) {
        // Opaque by the column; said because fusing it would move or copy a draw.
        result.refusals.push_back(Refusal{nd.id, "random",
                                          "it draws random numbers: a nondeterministic op is "
                                          "never fused, moved or copied"});
        continue;
      }
      if (opPattern(nd.type) == OpPattern::Opaque)
        continue;
      if (kind_[i] == OpPattern::Opaque) {
        std::string tag = exclusion(nd);
        result.refusals.push_back(Refusal{nd.id, tag, exclusionMessage(tag)});
      } else if (!refusal_[i].first.empty()) {
        result.refusals.push_back(Refusal{nd.id, refusal_[i].first, refusal_[i].second});
      } else {
        result.refusals.push_back(Refusal{nd.id, "alone", "no neighbour it may fuse with took it"});
      }
    }
  }

  static std::string exclusionMessage(const std::string &tag) {
    if (tag == "effect")
      return "it writes or aliases memory (ref, view, scribble, variable or contiguity "
             "attributes): an effect is never fused";
    if (tag == "ctrl-edge")
      return "it has control edges";
    if (tag == "multi-output")
      return "it has more than one output";
    return "it has no numeric definition for this form";
  }
};

} // namespace

std::string exclusion(const Node &n) {
  if (!n.ctrlIn.empty() || !n.ctrlOut.empty())
    return "ctrl-edge";
  if (n.numOutputs != 1)
    return "multi-output";
  if (isInputMutable(n) || needsContinuousInput(n) || !refWrittenInputs(n).empty() ||
      refVarSrcName(n, 0) || n.portAttr(true, 0, "reuse_input"))
    return "effect";
  const OpInfo *def = numericDefinition(n);
  if (!def || def->nondeterministic || !n.subgraphs.empty())
    return "no-kernel";
  return "";
}

OpPattern fusionPattern(const Node &n) {
  OpPattern p = opPattern(n.type);
  if (p == OpPattern::Opaque || !exclusion(n).empty())
    return OpPattern::Opaque;
  return p;
}

Partition partitionGraph(const Module &m, GraphId g, const ModuleTypes &types,
                         const FuseOpsOptions &options) {
  return Partitioner(m, g, types, options).run();
}

} // namespace graphvet::fuse_ops
