// Feature detection over a built module, and the memory-reuse option grammar
// (our own reading of semantics.md §4, independent of the pass's parser).
#include "props/features.h"

#include "ir/op_library.h"

#include <set>
#include <string>

namespace graphvet::props {
namespace {

constexpr std::string_view kFeatureNames[] = {
    "root-data-indexed",
    "root-data-unindexed",
    "variable",
    "ref-data",
    "weight",
    "file-constant",
    "ref-var-src-node",
    "ref-var-src-output",
    "partitioned-call",
    "nested-call",
    "if",
    "case",
    "while",
    "reshape",
    "reuse-input-view",
    "multi-alias-ref-op",
    "ref-writer",
    "input-mutable",
    "multi-consumer",
    "tensor-move",
    "tensor-move-chain",
    "tensor-move-sibling",
    "tensor-move-ctrl-edge",
    "tensor-move-from-user-input",
    "tensor-move-from-variable",
    "tensor-move-from-weight",
    "tensor-move-from-ref-var-src",
    "tensor-move-from-subgraph-data",
    "tensor-move-in-subgraph",
    "tensor-move-to-writer",
    "tensor-move-to-reader",
    "tensor-move-to-net-output",
    "tensor-move-to-holder",
    "net-output-root",
    "net-output-subgraph",
    "option-valid",
    "option-malformed",
    "option-matching",
    "option-non-matching",
    "cannot-be-deleted",
    "no-need-constant-folding",
    "continuous-input",
    "ctrl-edge",
    "unconnected-input",
    "tensor-desc",
    "tensor-move-desc-mismatch",
    "call-writes-copied-variable",
    "tensor-move-result-written-outside",
    "written-copy-of-unconnected",
};
static_assert(std::size(kFeatureNames) == kNumFeatures);

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ')
    s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ')
    s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    out.push_back(s.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos)
      return out;
    start = pos + 1;
  }
}

bool parseIndex(std::string_view token, int64_t &out) {
  token = trim(token);
  if (token.empty() || token.size() > 18)
    return false;
  out = 0;
  for (char c : token) {
    if (c < '0' || c > '9')
      return false;
    out = out * 10 + (c - '0');
  }
  return true;
}

bool writesSlot(const Node &n, uint32_t slot) {
  if (isInputMutable(n) || opKind(n) == OpKind::While)
    return true;
  for (uint32_t i : refWrittenInputs(n))
    if (i == slot)
      return true;
  return false;
}

/// The variable an output is bound to: a Variable node's name or the output's
/// ref_var_src_var_name; null for anything else.
const std::string *variableOf(const Node &n, uint32_t k) {
  if (isVariableSource(n))
    return &n.name;
  return refVarSrcName(n, k);
}

/// Does one of the holder's subgraphs write variable `var` in place through
/// an output bound to it by name?
bool subgraphWritesVariable(const Module &m, const Node &holder, const std::string &var) {
  for (GraphId sg : holder.subgraphs) {
    const Graph &g = m.graph(sg);
    for (NodeId id : g.liveNodes()) {
      const Node &n = g.node(id);
      for (uint32_t slot : refWrittenInputs(n)) {
        if (slot >= n.inputs.size() || !n.inputs[slot])
          continue;
        OutPort in = *n.inputs[slot];
        const std::string *name = variableOf(g.node(in.node), in.index);
        if (name && *name == var)
          return true;
      }
    }
  }
  return false;
}

/// `tm` (in `body`) copies a view of an unconnected slot, or a Data whose
/// slot in the enclosing call is `_`.
bool copiesUnconnectedSlot(const Module &m, const Graph &body, const Node &tm) {
  if (tm.inputs.empty() || !tm.inputs[0])
    return false;
  const Node &src = body.node(tm.inputs[0]->node);
  if (auto in = aliasedInput(src, tm.inputs[0]->index);
      in && opKind(src) == OpKind::Ordinary && (*in >= src.inputs.size() || !src.inputs[*in]))
    return true;
  if (body.parentNode == kNoNode || body.parentGraph == kNoGraph)
    return false;
  const Node &holder = m.graph(body.parentGraph).node(body.parentNode);
  auto p = src.intAttr("_parent_node_index");
  return opKind(src) == OpKind::DataSource && opKind(holder) == OpKind::Call && p && *p >= 0 &&
         *p < static_cast<int64_t>(holder.inputs.size()) && !holder.inputs[size_t(*p)];
}

/// Is the value a body's NetOutput returns in `slot` written in place by a
/// consumer of the call's corresponding output?
bool resultWrittenOutside(const Module &m, const Graph &body, const Node &ret, uint32_t slot) {
  if (body.parentNode == kNoNode || body.parentGraph == kNoGraph)
    return false;
  const Graph &pg = m.graph(body.parentGraph);
  const Node &holder = pg.node(body.parentNode);
  if (opKind(holder) != OpKind::Call)
    return false;
  auto j = ret.intAttr(Node::portKey(false, slot, "_parent_node_index"));
  if (!j || *j < 0 || *j >= static_cast<int64_t>(holder.numOutputs))
    return false;
  for (InPort c : pg.consumers({holder.id, static_cast<uint32_t>(*j)}))
    if (writesSlot(pg.node(c.node), c.index))
      return true;
  return false;
}

} // namespace

std::string_view featureName(Feature f) {
  return kFeatureNames[static_cast<size_t>(f)];
}

ParsedReuseOption parseReuseOption(std::string_view text, bool pairs) {
  ParsedReuseOption r;
  for (std::string_view group : pairs ? split(text, '|') : std::vector<std::string_view>{text}) {
    auto tokens = split(group, ',');
    if (pairs && tokens.size() != 2)
      return {};
    for (std::string_view t : tokens) {
      int64_t v = 0;
      if (!parseIndex(t, v))
        return {};
      r.indexes.push_back(v);
    }
  }
  r.wellFormed = true;
  return r;
}

void FeatureCounts::add(const FeatureSet &s) {
  ++modules;
  for (size_t i = 0; i < kNumFeatures; ++i)
    counts[i] += s[i] ? 1 : 0;
}

std::vector<Feature> FeatureCounts::missing() const {
  std::vector<Feature> out;
  for (size_t i = 0; i < kNumFeatures; ++i)
    if (counts[i] == 0)
      out.push_back(static_cast<Feature>(i));
  return out;
}

FeatureSet featuresOf(const Module &m) {
  FeatureSet f{};
  auto set = [&](Feature x) { f[static_cast<size_t>(x)] = true; };
  std::set<int64_t> userIndexes;
  size_t numGraphOutputs = 0;

  for (GraphId gid : m.canonicalGraphOrder()) {
    const Graph &g = m.graph(gid);
    bool root = gid == 0;
    const Node *owner =
        root || g.parentNode == kNoNode ? nullptr : &m.graph(g.parentGraph).node(g.parentNode);
    for (NodeId id : g.liveNodes()) {
      const Node &n = g.node(id);
      OpKind kind = opKind(n);
      if (!n.ctrlOut.empty())
        set(Feature::CtrlEdge);
      for (const auto &in : n.inputs)
        if (!in)
          set(Feature::UnconnectedInput);
      switch (kind) {
      case OpKind::DataSource:
        if (root) {
          if (auto idx = n.intAttr("index")) {
            set(Feature::RootDataIndexed);
            userIndexes.insert(*idx);
          } else {
            set(Feature::RootDataUnindexed);
          }
        }
        break;
      case OpKind::Variable:
        set(n.type == "RefData" ? Feature::RefData : Feature::Variable);
        break;
      case OpKind::Weight:
        set(n.type == "FileConstant" ? Feature::FileConstant : Feature::Weight);
        break;
      case OpKind::Call:
        set(Feature::PartitionedCall);
        if (owner && opKind(*owner) == OpKind::Call)
          set(Feature::NestedCall);
        break;
      case OpKind::If:
        set(Feature::If);
        break;
      case OpKind::Case:
        set(Feature::Case);
        break;
      case OpKind::While:
        set(Feature::While);
        break;
      case OpKind::NetOutput:
        set(root ? Feature::NetOutputRoot : Feature::NetOutputSubgraph);
        if (root)
          numGraphOutputs = n.inputs.size();
        break;
      default:
        break;
      }
      if (n.stringAttr("ref_var_src_var_name"))
        set(Feature::RefVarSrcNode);
      if (n.type == "Reshape")
        set(Feature::Reshape);
      if (!refWrittenInputs(n).empty())
        set(Feature::RefWriter);
      if (isInputMutable(n))
        set(Feature::InputMutable);
      if (needsContinuousInput(n))
        set(Feature::ContinuousInput);
      if (n.boolAttr("_cannot_be_deleted"))
        set(Feature::CannotBeDeleted);
      if (n.attr("no_need_constant_folding"))
        set(Feature::NoNeedConstantFolding);
      std::vector<std::optional<uint32_t>> aliased;
      for (uint32_t k = 0; k < n.numOutputs; ++k) {
        if (n.stringAttr(Node::portKey(true, k, "ref_var_src_var_name")))
          set(Feature::RefVarSrcOutput);
        if (n.attr(Node::portKey(true, k, "dtype")) || n.attr(Node::portKey(true, k, "shape")))
          set(Feature::TensorDesc);
        if (n.attr(Node::portKey(true, k, "reuse_input")) && viewInput(n, k))
          set(Feature::ReuseInputView);
        if (g.consumers({id, k}).size() >= 2)
          set(Feature::MultiConsumer);
        if (!g.consumers({id, k}).empty())
          if (auto in = aliasedInput(n, k)) {
            for (auto &other : aliased)
              if (other == in)
                set(Feature::MultiAliasRefOp);
            aliased.push_back(in);
          }
      }

      if (!isTensorMove(n))
        continue;
      set(Feature::TensorMove);
      if (!root)
        set(Feature::TensorMoveInSubgraph);
      if (!n.ctrlIn.empty() || !n.ctrlOut.empty())
        set(Feature::TensorMoveCtrlEdge);
      if (!n.inputs.empty() && n.inputs[0]) {
        OutPort src = *n.inputs[0];
        const Node &p = g.node(src.node);
        if (g.consumers(src).size() >= 2)
          set(Feature::TensorMoveSibling);
        if (isTensorMove(p))
          set(Feature::TensorMoveChain);
        if (opKind(p) == OpKind::DataSource)
          set(root ? Feature::TensorMoveFromUserInput : Feature::TensorMoveFromSubgraphData);
        if (isVariableSource(p))
          set(Feature::TensorMoveFromVariable);
        if (isWeightSource(p))
          set(Feature::TensorMoveFromWeight);
        if (refVarSrcName(p, src.index))
          set(Feature::TensorMoveFromRefVarSrc);
        if (outputBytes(p, src.index) != outputBytes(n, 0))
          set(Feature::TensorMoveDescMismatch);
      }
      const std::string *copiedVariable =
          !n.inputs.empty() && n.inputs[0]
              ? variableOf(g.node(n.inputs[0]->node), n.inputs[0]->index)
              : nullptr;
      bool hasSibling = !n.inputs.empty() && n.inputs[0] && g.consumers(*n.inputs[0]).size() >= 2;
      for (InPort c : g.consumers({id, 0})) {
        const Node &cn = g.node(c.node);
        if (opKind(cn) == OpKind::NetOutput) {
          set(Feature::TensorMoveToNetOutput);
          if (!root && hasSibling && resultWrittenOutside(m, g, cn, c.index))
            set(Feature::TensorMoveResultWrittenOutside);
        } else if (holdsSubgraphs(cn)) {
          set(Feature::TensorMoveToHolder);
          if (copiedVariable && opKind(cn) == OpKind::Call &&
              subgraphWritesVariable(m, cn, *copiedVariable))
            set(Feature::CallWritesCopiedVariable);
        } else if (writesSlot(cn, c.index)) {
          set(Feature::TensorMoveToWriter);
          if (copiesUnconnectedSlot(m, g, n))
            set(Feature::WrittenCopyOfUnconnected);
        } else
          set(Feature::TensorMoveToReader);
      }
    }
  }

  auto classify = [&](const char *key, bool pairs) {
    auto it = m.options.find(key);
    if (it == m.options.end())
      return;
    ParsedReuseOption opt = parseReuseOption(it->second, pairs);
    if (!opt.wellFormed) {
      set(Feature::OptionMalformed);
      return;
    }
    set(Feature::OptionValid);
    bool matching = true;
    for (size_t i = 0; i < opt.indexes.size(); ++i) {
      bool isOutput = pairs && i % 2 == 0;
      int64_t v = opt.indexes[i];
      if (isOutput ? v >= static_cast<int64_t>(numGraphOutputs) : !userIndexes.count(v))
        matching = false;
    }
    set(matching ? Feature::OptionMatching : Feature::OptionNonMatching);
  };
  classify("ge.exec.outputReuseInputMemIndexes", true);
  classify("ge.exec.inputReuseMemIndexes", false);
  return f;
}

} // namespace graphvet::props
