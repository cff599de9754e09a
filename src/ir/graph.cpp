// Graph and Module mutation, lookup, topological order and reachability.
#include "ir/graph.h"

#include "ir/op_library.h"
#include "ir/tensor.h"

#include <algorithm>
#include <cassert>
#include <deque>
#include <functional>
#include <queue>

namespace graphvet {

const std::string *AttrValue::text() const {
  if (auto *s = std::get_if<std::string>(&v_))
    return s;
  if (auto *i = std::get_if<Ident>(&v_))
    return &i->name;
  return nullptr;
}

bool operator==(const AttrValue::TensorRef &a, const AttrValue::TensorRef &b) {
  if (a.tensor == b.tensor)
    return true;
  return a.tensor && b.tensor && *a.tensor == *b.tensor;
}

const AttrValue *Node::attr(std::string_view key) const {
  auto it = attrs.find(key);
  return it == attrs.end() ? nullptr : &it->second;
}

namespace {

std::optional<int64_t> asInt(const AttrValue *v) {
  if (!v || !v->isInt())
    return std::nullopt;
  return v->asInt();
}

bool asTrue(const AttrValue *v) {
  return v && v->isBool() && v->asBool();
}

/// Writes "out<k>." or "in<k>." into `buf` (room for 16 characters) and
/// returns its length.
size_t portPrefix(bool output, uint32_t k, char *buf) {
  size_t len = 0;
  for (char c : std::string_view(output ? "out" : "in"))
    buf[len++] = c;
  char digits[10];
  size_t nd = 0;
  do {
    digits[nd++] = static_cast<char>('0' + k % 10);
    k /= 10;
  } while (k != 0);
  while (nd > 0)
    buf[len++] = digits[--nd];
  buf[len++] = '.';
  return len;
}

} // namespace

std::optional<int64_t> Node::intAttr(std::string_view key) const {
  return asInt(attr(key));
}

bool Node::boolAttr(std::string_view key) const {
  return asTrue(attr(key));
}

const std::string *Node::stringAttr(std::string_view key) const {
  const AttrValue *v = attr(key);
  return v ? v->text() : nullptr;
}

std::string Node::portKey(bool output, uint32_t k, std::string_view attr) {
  char prefix[16];
  size_t len = portPrefix(output, k, prefix);
  std::string key;
  key.reserve(len + attr.size());
  key.append(prefix, len).append(attr);
  return key;
}

const AttrValue *Node::portAttr(bool output, uint32_t k, std::string_view attr) const {
  if (attrs.empty())
    return nullptr;
  // Attribute names are short identifiers; a longer one is built on the heap.
  char buf[96];
  size_t len = portPrefix(output, k, buf);
  if (len + attr.size() > sizeof buf)
    return this->attr(portKey(output, k, attr));
  for (char c : attr)
    buf[len++] = c;
  return this->attr(std::string_view(buf, len));
}

std::optional<int64_t> Node::portIntAttr(bool output, uint32_t k, std::string_view attr) const {
  return asInt(portAttr(output, k, attr));
}

bool Node::portBoolAttr(bool output, uint32_t k, std::string_view attr) const {
  return asTrue(portAttr(output, k, attr));
}

const std::string *Node::portStringAttr(bool output, uint32_t k, std::string_view attr) const {
  const AttrValue *v = portAttr(output, k, attr);
  return v ? v->text() : nullptr;
}

NodeId Graph::addNode(std::string name, std::string type,
                      std::vector<std::optional<OutPort>> inputs,
                      std::optional<uint32_t> numOutputs) {
  NodeId id = static_cast<NodeId>(nodes_.size());
  Node n;
  n.id = id;
  n.name = std::move(name);
  n.type = std::move(type);
  n.numOutputs = numOutputs ? *numOutputs : defaultOutputCount(n.type, inputs.size());
  n.consumers.resize(n.numOutputs);
  byName_.emplace(n.name, id);
  nodes_.push_back(std::move(n));
  ++live_;
  topoCache_.reset();
  for (auto &src : inputs)
    appendInput(id, src);
  return id;
}

void Graph::setNumOutputs(NodeId n, uint32_t count) {
  Node &node = nodes_[n];
  if (count < node.numOutputs) {
    // Never drop a port that still has consumers.
    uint32_t used = 0;
    for (uint32_t k = 0; k < node.numOutputs; ++k)
      if (!node.consumers[k].empty())
        used = k + 1;
    count = std::max(count, used);
  }
  node.numOutputs = count;
  node.consumers.resize(count);
}

static void eraseOne(std::vector<InPort> &v, InPort p) {
  auto it = std::find(v.begin(), v.end(), p);
  if (it != v.end())
    v.erase(it);
}

void Graph::setInput(InPort slot, std::optional<OutPort> src) {
  topoCache_.reset();
  Node &n = nodes_[slot.node];
  auto &cur = n.inputs[slot.index];
  if (cur)
    eraseOne(nodes_[cur->node].consumers[cur->index], slot);
  cur = src;
  if (src) {
    Node &p = nodes_[src->node];
    if (src->index >= p.numOutputs)
      setNumOutputs(src->node, src->index + 1);
    p.consumers[src->index].push_back(slot);
  }
}

void Graph::appendInput(NodeId n, std::optional<OutPort> src) {
  nodes_[n].inputs.push_back(std::nullopt);
  setInput({n, static_cast<uint32_t>(nodes_[n].inputs.size() - 1)}, src);
}

void Graph::eraseInput(InPort slot) {
  Node &n = nodes_[slot.node];
  size_t count = n.inputs.size();
  // Detach this slot and every later one, then re-attach the later ones
  // one position down so consumer lists name the right slot.
  std::vector<std::optional<OutPort>> later(n.inputs.begin() + slot.index + 1, n.inputs.end());
  for (size_t i = slot.index; i < count; ++i)
    setInput({slot.node, static_cast<uint32_t>(i)}, std::nullopt);
  nodes_[slot.node].inputs.resize(slot.index);
  for (auto &src : later)
    appendInput(slot.node, src);
}

bool Graph::addCtrlEdge(NodeId from, NodeId to) {
  if (from == to || hasCtrlEdge(from, to))
    return false;
  topoCache_.reset();
  nodes_[from].ctrlOut.push_back(to);
  nodes_[to].ctrlIn.push_back(from);
  return true;
}

bool Graph::removeCtrlEdge(NodeId from, NodeId to) {
  auto &out = nodes_[from].ctrlOut;
  auto it = std::find(out.begin(), out.end(), to);
  if (it == out.end())
    return false;
  topoCache_.reset();
  out.erase(it);
  auto &in = nodes_[to].ctrlIn;
  in.erase(std::find(in.begin(), in.end(), from));
  return true;
}

bool Graph::hasCtrlEdge(NodeId from, NodeId to) const {
  const auto &a = nodes_[from].ctrlOut;
  const auto &b = nodes_[to].ctrlIn;
  // Search the shorter list: hubs can have many control edges.
  if (a.size() <= b.size())
    return std::find(a.begin(), a.end(), to) != a.end();
  return std::find(b.begin(), b.end(), from) != b.end();
}

void Graph::removeNode(NodeId id) {
  Node &n = nodes_[id];
  if (!n.alive)
    return;
  for (uint32_t i = 0; i < n.inputs.size(); ++i)
    setInput({id, i}, std::nullopt);
  for (uint32_t k = 0; k < n.numOutputs; ++k) {
    auto consumers = nodes_[id].consumers[k];
    for (InPort c : consumers)
      setInput(c, std::nullopt);
  }
  for (NodeId p : std::vector<NodeId>(n.ctrlIn))
    removeCtrlEdge(p, id);
  for (NodeId s : std::vector<NodeId>(n.ctrlOut))
    removeCtrlEdge(id, s);
  auto it = byName_.find(n.name);
  if (it != byName_.end() && it->second == id)
    byName_.erase(it);
  n.alive = false;
  --live_;
  topoCache_.reset();
}

void Graph::replaceAllUses(OutPort from, OutPort to) {
  auto consumers = nodes_[from.node].consumers[from.index];
  for (InPort c : consumers)
    setInput(c, to);
}

void Graph::rename(NodeId id, std::string newName) {
  Node &n = nodes_[id];
  auto it = byName_.find(n.name);
  if (it != byName_.end() && it->second == id)
    byName_.erase(it);
  n.name = std::move(newName);
  byName_.emplace(n.name, id);
}

NodeId Graph::find(const std::string &name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? kNoNode : it->second;
}

std::vector<NodeId> Graph::liveNodes() const {
  std::vector<NodeId> out;
  out.reserve(live_);
  for (const Node &n : nodes_)
    if (n.alive)
      out.push_back(n.id);
  return out;
}

std::vector<NodeId> Graph::nodesOfType(const std::string &type) const {
  std::vector<NodeId> out;
  for (const Node &n : nodes_)
    if (n.alive && n.type == type)
      out.push_back(n.id);
  return out;
}

const std::vector<InPort> &Graph::consumers(OutPort p) const {
  return nodes_[p.node].consumers[p.index];
}

// Calls f(succ) for every data and control successor of n (with repeats).
template <typename F> static void forEachSucc(const Node &n, F &&f) {
  for (const auto &cs : n.consumers)
    for (InPort c : cs)
      f(c.node);
  for (NodeId s : n.ctrlOut)
    f(s);
}

std::optional<std::vector<NodeId>> Graph::topoOrder() const {
  if (!topoCache_)
    topoCache_ = computeTopoOrder();
  return *topoCache_;
}

std::optional<std::vector<NodeId>> Graph::computeTopoOrder() const {
  // Kahn's algorithm taking the smallest ready id first. Most nodes become
  // ready in id order (a graph is mostly built producers first), so a cursor
  // scanning ids upwards finds them without a heap; only a node that becomes
  // ready after the cursor passed it (a rewrite's new producer, with a high
  // id, feeding older consumers) waits in the heap. Every id in the heap is
  // below the cursor, so the heap's top, when there is one, is the smallest
  // ready id: the order is exactly the heap-only algorithm's.
  std::vector<uint32_t> indeg(nodes_.size(), 0);
  for (const Node &n : nodes_)
    if (n.alive)
      forEachSucc(n, [&](NodeId s) { ++indeg[s]; });
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> behind;
  NodeId cursor = 0;
  const NodeId end = static_cast<NodeId>(nodes_.size());
  std::vector<NodeId> order;
  order.reserve(live_);
  for (;;) {
    NodeId id;
    if (!behind.empty()) {
      id = behind.top();
      behind.pop();
    } else {
      while (cursor < end && !(nodes_[cursor].alive && indeg[cursor] == 0))
        ++cursor;
      if (cursor == end)
        break;
      id = cursor++;
    }
    order.push_back(id);
    forEachSucc(nodes_[id], [&](NodeId s) {
      if (--indeg[s] == 0 && s < cursor)
        behind.push(s);
    });
  }
  if (order.size() != live_)
    return std::nullopt;
  return order;
}

std::vector<NodeId> Graph::findCycle() const {
  // Iterative DFS with colours; the cycle is read off the explicit stack.
  enum : uint8_t { White, Grey, Black };
  std::vector<uint8_t> colour(nodes_.size(), White);
  std::vector<std::vector<NodeId>> succs(nodes_.size());
  for (const Node &n : nodes_)
    if (n.alive) {
      forEachSucc(n, [&](NodeId s) { succs[n.id].push_back(s); });
      std::sort(succs[n.id].begin(), succs[n.id].end());
      succs[n.id].erase(std::unique(succs[n.id].begin(), succs[n.id].end()), succs[n.id].end());
    }
  for (const Node &start : nodes_) {
    if (!start.alive || colour[start.id] != White)
      continue;
    std::vector<std::pair<NodeId, size_t>> stack{{start.id, 0}};
    colour[start.id] = Grey;
    while (!stack.empty()) {
      auto &[id, next] = stack.back();
      if (next == succs[id].size()) {
        colour[id] = Black;
        stack.pop_back();
        continue;
      }
      NodeId s = succs[id][next++];
      if (colour[s] == Grey) {
        std::vector<NodeId> cycle;
        size_t i = 0;
        while (stack[i].first != s)
          ++i;
        for (; i < stack.size(); ++i)
          cycle.push_back(stack[i].first);
        cycle.push_back(s);
        return cycle;
      }
      if (colour[s] == White) {
        colour[s] = Grey;
        stack.push_back({s, 0});
      }
    }
  }
  return {};
}

bool Graph::reaches(NodeId from, NodeId to) const {
  std::vector<bool> seen(nodes_.size(), false);
  std::vector<NodeId> work;
  forEachSucc(nodes_[from], [&](NodeId s) {
    if (!seen[s])
      seen[s] = true, work.push_back(s);
  });
  while (!work.empty()) {
    NodeId id = work.back();
    work.pop_back();
    if (id == to)
      return true;
    forEachSucc(nodes_[id], [&](NodeId s) {
      if (!seen[s])
        seen[s] = true, work.push_back(s);
    });
  }
  return false;
}

GraphId Module::addGraph(std::string name) {
  GraphId id = static_cast<GraphId>(graphs_.size());
  graphs_.emplace_back();
  graphs_.back().id = id;
  graphs_.back().name = std::move(name);
  return id;
}

void Module::removeGraph(GraphId g) {
  std::vector<GraphId> work{g};
  while (!work.empty()) {
    GraphId cur = work.back();
    work.pop_back();
    if (!graphs_[cur].alive)
      continue;
    graphs_[cur].alive = false;
    for (NodeId n : graphs_[cur].liveNodes())
      for (GraphId sub : graphs_[cur].node(n).subgraphs)
        work.push_back(sub);
  }
}

GraphId Module::findGraph(const std::string &name) const {
  for (const Graph &g : graphs_)
    if (g.alive && g.name == name)
      return g.id;
  return kNoGraph;
}

void Module::attachSubgraph(GraphId g, NodeId n, GraphId sub) {
  graphs_[g].node(n).subgraphs.push_back(sub);
  std::vector<NodeId> &holders = graphs_[g].holders_;
  if (holders.empty() || holders.back() != n)
    holders.push_back(n);
  graphs_[sub].parentGraph = g;
  graphs_[sub].parentNode = n;
}

std::vector<GraphId> Module::canonicalGraphOrder() const {
  std::vector<GraphId> order;
  if (graphs_.empty())
    return order;
  std::vector<bool> seen(graphs_.size(), false);
  std::deque<GraphId> queue{0};
  seen[0] = true;
  while (!queue.empty()) {
    GraphId g = queue.front();
    queue.pop_front();
    order.push_back(g);
    const Graph &graph = graphs_[g];
    // The holders' order only matters when there are two or more: then it is
    // the topological one, read through a mask so no node is touched twice
    // (this runs in every pass).
    std::vector<NodeId> holders;
    for (NodeId n : graph.holderCandidates())
      if (graph.node(n).alive && !graph.node(n).subgraphs.empty())
        holders.push_back(n);
    std::sort(holders.begin(), holders.end());
    holders.erase(std::unique(holders.begin(), holders.end()), holders.end());
    std::vector<NodeId> nodes;
    if (holders.size() < 2) {
      nodes = std::move(holders);
    } else {
      std::vector<bool> isHolder(graph.capacity(), false);
      for (NodeId n : holders)
        isHolder[n] = true;
      auto topo = graph.topoOrder();
      for (NodeId n : topo ? *topo : graph.liveNodes())
        if (isHolder[n])
          nodes.push_back(n);
    }
    for (NodeId n : nodes)
      for (GraphId sub : graph.node(n).subgraphs)
        if (sub < graphs_.size() && !seen[sub] && graphs_[sub].alive) {
          seen[sub] = true;
          queue.push_back(sub);
        }
  }
  return order;
}

std::string Module::qualifiedName(GraphId g, NodeId n) const {
  const std::string &name = graphs_[g].node(n).name;
  return g == 0 ? name : graphs_[g].name + "/" + name;
}

} // namespace graphvet
