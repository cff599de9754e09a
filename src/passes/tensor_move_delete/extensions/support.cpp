// TensorMoveDeletePass: what several extensions share (support.h).
#include "passes/tensor_move_delete/extensions/support.h"

#include "ir/op_library.h"

#include <algorithm>

namespace graphvet::tmd {
namespace {

constexpr size_t kMaxEdges = 16;   // edges added per copy (output size bound)
constexpr size_t kMaxReaders = 64; // readers examined per copy (cost bound)
constexpr size_t kMaxUses = 64;    // accesses examined per copy (cost bound)

/// `n`, then each node holding it.
std::vector<NodeRef> chainOf(const Module &m, NodeRef n) {
  std::vector<NodeRef> chain{n};
  while (chain.size() <= m.numGraphs()) {
    const Graph &ng = m.graph(chain.back().graph);
    if (ng.parentNode == kNoNode || ng.parentGraph == kNoGraph)
      break;
    chain.push_back({ng.parentGraph, ng.parentNode});
  }
  return chain;
}

/// Two branches of one If/Case never both run while the holder runs once
/// per run of the copy: every loop around the holder is around the copy
/// too. (A loop around the holder alone could take one branch in an
/// iteration and the other in the next, both after the copy.)
bool exclusiveBranches(const Module &m, const std::vector<NodeRef> &copyChain, GraphId gid,
                       NodeId holder, GraphId inA, GraphId inB) {
  const Node &h = m.graph(gid).node(holder);
  if ((opKind(h) != OpKind::If && opKind(h) != OpKind::Case) || inA == inB)
    return false;
  for (NodeRef up : chainOf(m, {gid, holder}))
    if (opKind(m.graph(up.graph).node(up.node)) == OpKind::While &&
        std::find(copyChain.begin(), copyChain.end(), up) == copyChain.end())
      return false;
  return true;
}

/// How one pair (first before second) is ordered.
enum class PairOrder { Needless, Impossible, Edge };

/// The edge `e` that orders `first` before `second` (in the innermost graph
/// holding both: each chain, from the node up, meets there), or why none is
/// needed or possible.
PairOrder orderPair(Analysis &a, const std::vector<NodeRef> &copyChain, NodeRef first,
                    const std::vector<NodeRef> &aChain, const std::vector<NodeRef> &bChain,
                    CtrlEdge &e) {
  const Module &m = a.module();
  // The innermost graph on both chains.
  std::optional<std::pair<size_t, size_t>> meet;
  for (size_t i = 0; i < aChain.size() && !meet; ++i)
    for (size_t j = 0; j < bChain.size() && !meet; ++j)
      if (aChain[i].graph == bChain[j].graph)
        meet = std::pair{i, j};
  if (!meet)
    return PairOrder::Impossible;
  auto [i, j] = *meet;
  GraphId gid = aChain[i].graph;
  NodeId from = aChain[i].node, to = bChain[j].node;
  const Graph &g = m.graph(gid);
  if (opKind(m.graph(first.graph).node(first.node)) == OpKind::NetOutput) {
    // A NetOutput reads when its whole graph is done (a graph output,
    // a While's write-back or condition), which no edge can move. A
    // result of an If/Case or a call stands for the holder's consumers,
    // which are among `firsts` themselves when anybody reads it; the
    // NetOutput itself accesses nothing (semantics.md §2), at whatever
    // depth it sits below the graph where the pair meets.
    const Graph &fg = m.graph(first.graph);
    OpKind hk = fg.parentNode == kNoNode || fg.parentGraph == kNoGraph
                    ? OpKind::NetOutput
                    : opKind(m.graph(fg.parentGraph).node(fg.parentNode));
    if (hk == OpKind::Call || hk == OpKind::If || hk == OpKind::Case)
      return PairOrder::Needless;
    if (i == 0)
      return PairOrder::Impossible;
  }
  if (from == to) {
    // A node reads its inputs before it writes (semantics.md §2); two
    // nodes inside one holder cannot be ordered from outside it, unless
    // they are in branches that never both run.
    if (i > 0 && j > 0 &&
        exclusiveBranches(m, copyChain, gid, from, aChain[i - 1].graph, bChain[j - 1].graph))
      return PairOrder::Needless;
    // An If/Case reads its condition before a branch runs; its other
    // inputs are read by its branches' nodes, which come separately.
    if (i == 0 && (opKind(g.node(from)) == OpKind::If || opKind(g.node(from)) == OpKind::Case))
      return PairOrder::Needless;
    if (i > 0 || j > 0)
      return PairOrder::Impossible;
    return PairOrder::Needless;
  }
  if (a.reaches(gid, to, from)) {
    // Already the other way round: the reader sees the writer's bytes
    // after the deletion, which matters unless nobody can observe what
    // it computes. (A path from a call orders nothing inside it before
    // the reader: then the two would race.)
    if (i == 0 && a.isDead({gid, from}) &&
        (opKind(g.node(to)) == OpKind::Call
             ? j > 0 && a.calledBefore({gid, to}, {{gid, from}})
             : directlyOrdered(g, to, from) || a.orderedWithoutCalls(gid, to, from)))
      return PairOrder::Needless;
    return PairOrder::Impossible;
  }
  if (directlyOrdered(g, from, to) || a.orderedWithoutCalls(gid, from, to))
    return PairOrder::Needless;
  e = {gid, from, to};
  return PairOrder::Edge;
}

} // namespace

std::optional<Ordering> orderBefore(Analysis &a, NodeRef t, const std::vector<NodeRef> &firsts,
                                    const std::vector<NodeRef> &seconds,
                                    const std::function<bool(NodeRef, NodeRef)> &excused) {
  // Each pair is ordered in the innermost graph holding both. A control
  // edge to or from a call or an If/Case/While covers every node inside it
  // (semantics.md §2), so a nested node is ordered through the node holding
  // it there.
  const std::vector<NodeRef> copyChain = chainOf(a.module(), t);
  Ordering out;
  for (NodeRef second : seconds) {
    std::vector<NodeRef> bChain = chainOf(a.module(), second);
    for (NodeRef first : firsts) {
      if (excused && excused(first, second))
        continue;
      std::vector<NodeRef> aChain = chainOf(a.module(), first);
      CtrlEdge e;
      PairOrder how = orderPair(a, copyChain, first, aChain, bChain, e);
      if (how == PairOrder::Impossible)
        return std::nullopt;
      if (how == PairOrder::Needless ||
          std::find(out.edges.begin(), out.edges.end(), e) != out.edges.end())
        continue;
      if (out.edges.size() == kMaxEdges)
        return std::nullopt;
      out.edges.push_back(e);
    }
  }
  return out;
}

std::optional<Ordering> orderReadersBeforeWriters(Analysis &a, NodeRef t,
                                                  const std::vector<NodeRef> &late) {
  // After the deletion the copy's readers read the source itself. A writer
  // that may run after the copy (it cannot run between the producer and the
  // copy: the original is race-free and the copy reads the source, so it is
  // ordered with the copy, and precedesCopy could not show "before") keeps
  // the bytes each reader saw when every reader runs before it.
  const Module &m = a.module();
  // A subgraph NetOutput among them stands for the holder's consumers,
  // which the exploration visits too (in the enclosing graph).
  std::vector<SlotRef> visited;
  std::vector<SlotRef> start = consumerSlots(m, {t.graph, {t.node, 0}});
  BufferUses uses = a.explore(start, &visited, /*whileResultsCopied=*/true);
  if (uses.overBudget || !uses.rootOutputs.empty() || visited.size() > kMaxReaders)
    return std::nullopt;
  std::vector<NodeRef> readers = a.accessingNodes(visited, {});
  // A While holding the copy writes its loop variables back only between
  // two runs of its body (semantics.md §2), never while its cond or body
  // runs: a reader in the same subgraph of it as the copy reads the copy's
  // bytes of that same run (it follows the copy), with no write-back
  // between the two.
  auto excused = [&](NodeRef reader, NodeRef writer) {
    if (opKind(m.graph(writer.graph).node(writer.node)) != OpKind::While)
      return false;
    GraphId sub = subgraphOf(m, writer, t);
    return sub != kNoGraph && subgraphOf(m, writer, reader) == sub;
  };
  return orderBefore(a, t, readers, late, excused);
}

std::optional<std::vector<NodeRef>>
sourceAccessesAfterCopy(Analysis &a, NodeRef t, const SourceTrace &trace, const SourceTrace &end) {
  std::vector<SlotRef> visited;
  BufferUses uses = a.explore(a.bufferSlots(end), &visited, /*whileResultsCopied=*/true);
  if (uses.overBudget || visited.size() > kMaxUses)
    return std::nullopt;
  std::vector<NodeRef> after;
  for (NodeRef n : a.accessingNodes(visited, {t}))
    if (!a.precedesCopy(t, trace, n))
      after.push_back(n);
  return after;
}

bool plainLoopIn(const Module &m, NodeRef w, GraphId g) {
  const Node &wn = m.graph(w.graph).node(w.node);
  return w.graph == g && opKind(wn) == OpKind::While && !isInputMutable(wn) &&
         wn.subgraphs.size() == 2;
}

std::optional<NodeRef> onlyLoopWriter(const Module &m, NodeRef t, const BufferUses &copy) {
  if (copy.writers.empty())
    return std::nullopt;
  const NodeRef w = copy.writers[0];
  if (!plainLoopIn(m, w, t.graph) ||
      std::any_of(copy.writers.begin(), copy.writers.end(), [&](NodeRef n) { return n != w; }))
    return std::nullopt;
  return w;
}

std::set<uint32_t> loopVariablesOf(NodeRef w, const BufferFacts &source, const BufferUses &copy) {
  std::set<uint32_t> vars;
  for (const auto *u : {&source.writerSlots, &copy.writerSlots})
    for (const SlotRef &slot : *u)
      if (slot.graph == w.graph && slot.slot.node == w.node)
        vars.insert(slot.slot.index);
  return vars;
}

} // namespace graphvet::tmd
