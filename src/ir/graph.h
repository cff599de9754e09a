// The graph IR: a Module holds the compile options and a set of graphs; the
// first graph is the root, every other graph is a subgraph owned by exactly one
// node. Nodes have ordered data inputs (each an optional output port of a node
// in the same graph), a number of outputs, typed attributes (node and port
// attributes share one sorted map keyed by their textual key) and control
// edges. Node ids are stable: removing a node leaves a tombstone, so ids held
// by analyses stay valid.
#pragma once

#include <bit>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

namespace graphvet {

using NodeId = uint32_t;
using GraphId = uint32_t;
inline constexpr NodeId kNoNode = UINT32_MAX;
inline constexpr GraphId kNoGraph = UINT32_MAX;

/// 1-based position in a source file; {0, 0} when the entity was not parsed.
struct SourceLoc {
  uint32_t line = 0;
  uint32_t col = 0;
  friend bool operator==(const SourceLoc &, const SourceLoc &) = default;
};

class Tensor;

/// An attribute value: int, bool, string, bare identifier, list, float
/// (format version 2: a double, compared bit for bit) or tensor literal
/// (shared and immutable, compared by value). Identifiers and strings are
/// kept apart so that printing round-trips.
class AttrValue {
public:
  struct Ident {
    std::string name;
    friend bool operator==(const Ident &, const Ident &) = default;
  };
  struct Float {
    double value;
    friend bool operator==(const Float &a, const Float &b) {
      return std::bit_cast<uint64_t>(a.value) == std::bit_cast<uint64_t>(b.value);
    }
  };
  struct TensorRef {
    std::shared_ptr<const Tensor> tensor;
    friend bool operator==(const TensorRef &a, const TensorRef &b);
  };
  using List = std::vector<AttrValue>;

  AttrValue() : v_(int64_t{0}) {}
  static AttrValue ofInt(int64_t i) { return AttrValue(Storage{i}); }
  static AttrValue ofBool(bool b) { return AttrValue(Storage{b}); }
  static AttrValue ofString(std::string s) { return AttrValue(Storage{std::move(s)}); }
  static AttrValue ofIdent(std::string s) { return AttrValue(Storage{Ident{std::move(s)}}); }
  static AttrValue ofList(List l) { return AttrValue(Storage{std::move(l)}); }
  static AttrValue ofFloat(double d) { return AttrValue(Storage{Float{d}}); }
  static AttrValue ofTensor(std::shared_ptr<const Tensor> t) {
    return AttrValue(Storage{TensorRef{std::move(t)}});
  }

  bool isInt() const { return std::holds_alternative<int64_t>(v_); }
  bool isBool() const { return std::holds_alternative<bool>(v_); }
  bool isString() const { return std::holds_alternative<std::string>(v_); }
  bool isIdent() const { return std::holds_alternative<Ident>(v_); }
  bool isList() const { return std::holds_alternative<List>(v_); }
  bool isFloat() const { return std::holds_alternative<Float>(v_); }
  bool isTensor() const { return std::holds_alternative<TensorRef>(v_); }

  int64_t asInt() const { return std::get<int64_t>(v_); }
  bool asBool() const { return std::get<bool>(v_); }
  const std::string &asString() const { return std::get<std::string>(v_); }
  const std::string &asIdent() const { return std::get<Ident>(v_).name; }
  const List &asList() const { return std::get<List>(v_); }
  double asFloat() const { return std::get<Float>(v_).value; }
  const Tensor &asTensor() const { return *std::get<TensorRef>(v_).tensor; }
  const std::shared_ptr<const Tensor> &tensorPtr() const { return std::get<TensorRef>(v_).tensor; }
  /// The text of a string or identifier value; nullptr for other kinds.
  const std::string *text() const;

  friend bool operator==(const AttrValue &, const AttrValue &) = default;

private:
  using Storage = std::variant<int64_t, bool, std::string, Ident, List, Float, TensorRef>;
  explicit AttrValue(Storage s) : v_(std::move(s)) {}
  Storage v_;
};

/// Attributes sorted by key; port attributes use keys like "out0.ref_input".
/// The comparator is transparent, so lookups by string_view allocate nothing.
using AttrMap = std::map<std::string, AttrValue, std::less<>>;

/// An output port: output `index` of node `node` (in the same graph).
struct OutPort {
  NodeId node = kNoNode;
  uint32_t index = 0;
  friend auto operator<=>(const OutPort &, const OutPort &) = default;
};

/// An input slot: input `index` of node `node`.
struct InPort {
  NodeId node = kNoNode;
  uint32_t index = 0;
  friend auto operator<=>(const InPort &, const InPort &) = default;
};

struct Node {
  NodeId id = kNoNode;
  std::string name;
  std::string type;
  /// Data inputs in order; nullopt is an unconnected slot (`_`).
  std::vector<std::optional<OutPort>> inputs;
  uint32_t numOutputs = 0;
  AttrMap attrs;
  /// Subgraphs this node holds, in order (then/else, cond/body, branches).
  std::vector<GraphId> subgraphs;
  /// Consumers of each output, in the order the edges were made.
  std::vector<std::vector<InPort>> consumers;
  std::vector<NodeId> ctrlIn;  ///< sources of control edges into this node
  std::vector<NodeId> ctrlOut; ///< targets of control edges out of this node
  SourceLoc loc;
  bool alive = true;

  const AttrValue *attr(std::string_view key) const;
  std::optional<int64_t> intAttr(std::string_view key) const;
  bool boolAttr(std::string_view key) const;                 ///< false when absent or not bool
  const std::string *stringAttr(std::string_view key) const; ///< string or ident
  /// Port attribute helpers: portKey(true, 1, "ref_input") == "out1.ref_input".
  static std::string portKey(bool output, uint32_t k, std::string_view attr);
  /// The port attribute portKey(output, k, attr), looked up without building
  /// the key on the heap (verifier, inference and the oracle ask for port
  /// attributes of every node).
  const AttrValue *portAttr(bool output, uint32_t k, std::string_view attr) const;
  std::optional<int64_t> portIntAttr(bool output, uint32_t k, std::string_view attr) const;
  bool portBoolAttr(bool output, uint32_t k, std::string_view attr) const;
  const std::string *portStringAttr(bool output, uint32_t k, std::string_view attr) const;
};

/// A control edge as written in a file (for locations in diagnostics).
struct CtrlEdgeLoc {
  NodeId from, to;
  SourceLoc loc;
};

class Graph {
public:
  GraphId id = kNoGraph;
  std::string name;
  SourceLoc loc;
  /// The node holding this graph (kNoGraph/kNoNode for the root).
  GraphId parentGraph = kNoGraph;
  NodeId parentNode = kNoNode;
  bool alive = true;

  /// Adds a node with the given inputs; numOutputs defaults to the op
  /// library's count for `type` (raised to cover port references later).
  NodeId addNode(std::string name, std::string type,
                 std::vector<std::optional<OutPort>> inputs = {},
                 std::optional<uint32_t> numOutputs = std::nullopt);
  /// Replaces the source of one input slot, keeping consumer lists current.
  void setInput(InPort slot, std::optional<OutPort> src);
  /// Appends an input slot.
  void appendInput(NodeId n, std::optional<OutPort> src);
  /// Removes an input slot; later slots shift down by one.
  void eraseInput(InPort slot);
  /// Raises a node's output count (never lowers it below a used port).
  void setNumOutputs(NodeId n, uint32_t count);
  /// Adds a control edge; returns false if it already existed or from == to.
  bool addCtrlEdge(NodeId from, NodeId to);
  bool removeCtrlEdge(NodeId from, NodeId to);
  bool hasCtrlEdge(NodeId from, NodeId to) const;
  /// Detaches all edges of `n` and tombstones it.
  void removeNode(NodeId n);
  /// Moves every consumer of `from` to read `to` instead.
  void replaceAllUses(OutPort from, OutPort to);
  void rename(NodeId n, std::string newName);

  Node &node(NodeId n) { return nodes_[n]; }
  const Node &node(NodeId n) const { return nodes_[n]; }
  /// Id bound to `name` among live nodes, or kNoNode.
  NodeId find(const std::string &name) const;
  /// Number of id slots (live and removed).
  size_t capacity() const { return nodes_.size(); }
  size_t numLiveNodes() const { return live_; }
  /// Live node ids in id (= creation) order.
  std::vector<NodeId> liveNodes() const;
  /// Live nodes of the given type in id order.
  std::vector<NodeId> nodesOfType(const std::string &type) const;
  /// Consumers of an output port.
  const std::vector<InPort> &consumers(OutPort p) const;

  /// A stable topological order over data and control edges, ties broken by
  /// node id; nullopt when the graph has a cycle. Kept until the next edit
  /// (every pass, the type inference and the fingerprint ask for it, mostly
  /// of graphs nothing changed in between).
  std::optional<std::vector<NodeId>> topoOrder() const;
  /// A cycle as a node list (first node repeated at the end), or empty.
  std::vector<NodeId> findCycle() const;
  /// True when a path of data or control edges leads from `from` to `to`
  /// (false for from == to unless a cycle exists). Visits each node at most
  /// once.
  bool reaches(NodeId from, NodeId to) const;

  /// Control edges with their locations as parsed (for diagnostics only).
  std::vector<CtrlEdgeLoc> ctrlEdgeLocs;

  /// Every node that was ever given a subgraph (Module::attachSubgraph is the
  /// only way to give one), in attach order; some may since have died or
  /// lost their subgraphs. Lets canonicalGraphOrder find the holders without
  /// a scan of every node.
  const std::vector<NodeId> &holderCandidates() const { return holders_; }

private:
  friend class Module;

  std::optional<std::vector<NodeId>> computeTopoOrder() const;

  std::vector<Node> nodes_;
  std::unordered_map<std::string, NodeId> byName_;
  size_t live_ = 0;
  std::vector<NodeId> holders_;
  /// topoOrder()'s last answer; every edit of nodes or edges goes through
  /// the methods above, which drop it. Not synchronised: one graph is never
  /// read by two threads at once (each campaign job has its own modules).
  mutable std::optional<std::optional<std::vector<NodeId>>> topoCache_;
};

/// A parsed `.graph` file: options plus graphs; graphs[0] is the root.
class Module {
public:
  /// Compile options (sorted by key); values are the unquoted strings.
  std::map<std::string, std::string> options;
  std::map<std::string, SourceLoc> optionLocs;

  Graph &root() { return graphs_[0]; }
  const Graph &root() const { return graphs_[0]; }
  Graph &graph(GraphId g) { return graphs_[g]; }
  const Graph &graph(GraphId g) const { return graphs_[g]; }
  size_t numGraphs() const { return graphs_.size(); }
  GraphId addGraph(std::string name);
  /// Marks a subgraph (and, recursively, the subgraphs its nodes hold) as
  /// removed; ids stay stable.
  void removeGraph(GraphId g);
  GraphId findGraph(const std::string &name) const; ///< live graphs only
  /// Records that node `n` of graph `g` holds subgraph `sub` (appended).
  void attachSubgraph(GraphId g, NodeId n, GraphId sub);
  /// Live graphs in canonical order: root, then subgraphs in the order the
  /// printed text first references them (breadth first over graphs, nodes in
  /// topological order). Graphs unreachable from the root are left out.
  std::vector<GraphId> canonicalGraphOrder() const;
  /// The graph-qualified node name used in verdicts and remarks: "relu" in
  /// the root graph, "body/m" in subgraph `body`.
  std::string qualifiedName(GraphId g, NodeId n) const;

private:
  std::vector<Graph> graphs_;
};

} // namespace graphvet
