// Feature detection over a built module, and the memory-reuse option grammar
// (our own reading of semantics.md §4, independent of the pass's parser).
#include "props/features.h"

#include "props/motif_features.h"

#include "ir/op_library.h"

#include <algorithm>
#include <map>
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
    "root-data-aipp-ann",
    "root-data-index-gap",
    "root-data-parent-index",
    "source-second-output",
    "source-ctrl-in",
    "variable-in-subgraph",
    "variable-declared-twice",
    "quoted-name",
    "weight-in-subgraph",
    "ref-var-src-output-k",
    "ref-var-src-node-multi-output",
    "ref-var-src-both-levels",
    "ref-var-src-ident",
    "ref-var-src-ancestor",
    "ref-var-src-other-graph",
    "ref-var-src-undeclared",
    "ref-var-src-on-tensor-move",
    "ref-var-src-on-identity-memcpy",
    "ref-var-src-on-ref-writer",
    "ref-var-src-on-view",
    "ref-var-src-on-call",
    "ref-var-src-on-control-flow",
    "ref-var-src-on-source",
    "ref-var-src-on-net-output",
    "tensor-move-of-bound-copy",
    "bound-copy-of-its-variable",
    "identity",
    "memcpy-async",
    "copy-second-output",
    "copy-no-output",
    "copy-odd-inputs",
    "input-mutable-on-copy",
    "continuous-on-copy",
    "reserved-attr-false",
    "reserved-attr-non-bool",
    "reserved-attr-on-other-op",
    "ref-input-slot-k",
    "ref-input-output-k",
    "ref-input-overrides-builtin",
    "two-ref-outputs",
    "ref-input-unconnected",
    "ref-and-reuse-same-output",
    "ref-write-user-input",
    "ref-write-variable",
    "ref-write-subgraph-data",
    "reuse-input-index-k",
    "reuse-input-false",
    "view-output-k",
    "view-of-unconnected",
    "reuse-input-index-alone",
    "input-mutable-attr",
    "input-mutable-false",
    "input-mutable-on-holder",
    "no-padding-continuous-input",
    "continuous-input-false",
    "continuous-both-attributes",
    "continuous-from-user-input",
    "continuous-from-variable",
    "continuous-from-weight",
    "continuous-from-graph-output",
    "continuous-same-value",
    "continuous-unconnected",
    "continuous-on-holder",
    "holder-variant-type",
    "call-in-control-flow",
    "control-flow-in-subgraph",
    "nesting-depth-3",
    "call-no-inputs",
    "holder-same-value-twice",
    "alias-attr-on-holder",
    "subgraph-data-permuted",
    "subgraph-input-unused",
    "subgraph-data-of-unconnected",
    "subgraph-data-index-attr",
    "branch-condition-in-branch",
    "results-permuted",
    "result-unmapped",
    "holder-output-unproduced",
    "result-unconnected",
    "subgraph-without-net-output",
    "result-same-value-twice",
    "net-output-with-outputs",
    "condition-unconnected",
    "case-single-branch",
    "case-three-branches",
    "case-four-branches",
    "while-max-iterations",
    "while-max-iterations-zero",
    "while-var-not-written-back",
    "ctrl-into-call",
    "ctrl-out-of-call",
    "ctrl-into-control-flow",
    "ctrl-out-of-control-flow",
    "ctrl-in-subgraph",
    "ctrl-into-net-output",
    "ctrl-from-net-output",
    "ctrl-parallel-to-data",
    "root-without-net-output",
    "graph-output-unconnected",
    "graph-output-same-value-twice",
    "graph-output-user-input",
    "graph-output-variable",
    "graph-output-weight",
    "same-value-twice",
    "zero-input-op",
    "multi-output-op",
    "zero-output-op",
    "tensor-desc-scalar",
    "tensor-desc-empty",
    "tensor-desc-output-k",
    "tensor-desc-other-dtype",
    "option-output-reuse",
    "option-input-reuse",
    "option-spaced",
    "option-unknown-key",
    "option-empty-value",
    "unknown-attribute",
    "motif-conv-batchnorm",
    "motif-conv-batchnorm-relu",
    "motif-channel-scale-forward",
    "motif-channel-scale-backward",
    "motif-channel-scale-zero-negative",
    "motif-parallel-dense",
    "motif-parallel-dense-shared-intermediate",
    "motif-layout-chain",
    "legalize-gemm",
    "legalize-hardswish",
    "legalize-clip-f16",
    "legalize-conv-unaligned",
    "norm-instance",
    "norm-layer",
    "norm-layer-negative-axis",
    "random-twins",
    "random-on-constant",
    "random-two-readers",
    "dropout-training",
    "dropout-inference",
    "cast-round-trip-exact",
    "cast-round-trip-lossy",
    "cast-chain-other",
    "cast-chain-three",
    "cast-chain-of-specials",
    "transpose-pair-cancel",
    "transpose-pair-compose",
    "transpose-absent-perm",
    "reshape-chain",
    "squeeze-negative-axes",
    "reshape-allowzero-empty",
    "half-chain",
    "bfloat16-chain",
    "reshape-shared-inner",
    "inplace-write-variable",
    "inplace-write-input",
    "inplace-equal-reads-around-write",
    "inplace-order-through-duplicate",
    "if-equal-branches",
    "if-branch-equal-to-outer",
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
  auto j = ret.portIntAttr(false, slot, "_parent_node_index");
  if (!j || *j < 0 || *j >= static_cast<int64_t>(holder.numOutputs))
    return false;
  for (InPort c : pg.consumers({holder.id, static_cast<uint32_t>(*j)}))
    if (writesSlot(pg.node(c.node), c.index))
      return true;
  return false;
}

/// The graph's nesting depth (0 = root).
unsigned depthOf(const Module &m, GraphId g) {
  unsigned d = 0;
  while (g != 0 && g != kNoGraph && d < 64) {
    g = m.graph(g).parentGraph;
    ++d;
  }
  return d;
}

/// Does `outer` strictly enclose `g`?
bool encloses(const Module &m, GraphId outer, GraphId g) {
  for (unsigned i = 0; i < 64 && g != kNoGraph && g != 0; ++i) {
    g = m.graph(g).parentGraph;
    if (g == outer)
      return true;
  }
  return false;
}

bool isIdentifierName(const std::string &s) {
  auto start = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (s.empty() || !start(s[0]))
    return false;
  for (char c : s)
    if (!start(c) && !(c >= '0' && c <= '9'))
      return false;
  return true;
}

/// The attribute name without its port prefix: `out1.ref_input` -> `ref_input`.
std::string_view baseKey(std::string_view key) {
  size_t digits = key.rfind("out", 0) == 0 ? 3 : key.rfind("in", 0) == 0 ? 2 : 0;
  if (digits == 0)
    return key;
  size_t end = digits;
  while (end < key.size() && key[end] >= '0' && key[end] <= '9')
    ++end;
  if (end == digits || end >= key.size() || key[end] != '.')
    return key;
  return key.substr(end + 1);
}

/// Attributes with a meaning in graph-format.md, semantics.md or
/// tensor-move-delete.md (everything else is unknown, and legal).
bool knownAttribute(std::string_view key) {
  static constexpr std::string_view kKnown[] = {"index",
                                                "_parent_node_index",
                                                "_input_mutable",
                                                "ref_var_src_var_name",
                                                "continuous_input",
                                                "_no_padding_continuous_input",
                                                "max_iterations",
                                                "ref_input",
                                                "reuse_input",
                                                "reuse_input_index",
                                                "dtype",
                                                "shape",
                                                "_cannot_be_deleted",
                                                "no_need_constant_folding",
                                                "file_path",
                                                "value"};
  key = baseKey(key);
  for (std::string_view k : kKnown)
    if (k == key)
      return true;
  return false;
}

/// Parent output indexes a subgraph's NetOutput hands back.
std::set<int64_t> handedBack(const Graph &g) {
  std::set<int64_t> out;
  for (NodeId id : g.liveNodes()) {
    const Node &n = g.node(id);
    if (opKind(n) != OpKind::NetOutput)
      continue;
    for (uint32_t k = 0; k < n.inputs.size(); ++k)
      if (auto j = n.portIntAttr(false, k, "_parent_node_index"))
        out.insert(*j);
  }
  return out;
}

/// `n.attr(outK.attr)` without building the key for a node without attributes
/// (most nodes: the counting runs on every 8th campaign case).
const AttrValue *portAttr(const Node &n, uint32_t k, const char *attr) {
  return n.attrs.empty() ? nullptr : n.portAttr(true, k, attr);
}

/// Is output k spelled a ref output (`outK.ref_input`, or built in)? A
/// variable binding may still take precedence (the memory plan's order).
bool refSpelled(const Node &n, uint32_t k) {
  if (portAttr(n, k, "ref_input"))
    return true;
  for (const PortAlias &a : lookupOp(n.type).refOutputs)
    if (a.output == k)
      return true;
  return false;
}

/// Is output k spelled a view (`outK.reuse_input = true`, or built in)?
bool viewSpelled(const Node &n, uint32_t k) {
  if (const AttrValue *r = portAttr(n, k, "reuse_input"))
    return r->isBool() && r->asBool();
  for (const PortAlias &a : lookupOp(n.type).viewOutputs)
    if (a.output == k)
      return true;
  return false;
}

bool hasDuplicateInput(const Node &n) {
  std::set<OutPort> seen;
  for (const auto &in : n.inputs)
    if (in && !seen.insert(*in).second)
      return true;
  return false;
}

/// The rows of docs/ir-coverage.md that the first pass of featuresOf does
/// not count.
void irFeatures(const Module &m, FeatureSet &f) {
  auto set = [&](Feature x) { f[static_cast<size_t>(x)] = true; };
  // Where each variable name is declared (Variable family nodes).
  std::map<std::string, std::set<GraphId>> declared;
  std::set<OutPort> graphOutputs;
  bool rootNetOutput = false;
  const std::vector<GraphId> order = m.canonicalGraphOrder();
  for (GraphId gid : order) {
    const Graph &g = m.graph(gid);
    for (NodeId id : g.liveNodes()) {
      const Node &n = g.node(id);
      if (isVariableSource(n))
        declared[n.name].insert(gid);
      if (gid != 0 || opKind(n) != OpKind::NetOutput)
        continue;
      rootNetOutput = true;
      for (const auto &in : n.inputs) {
        if (!in) {
          set(Feature::GraphOutputUnconnected);
          continue;
        }
        if (!graphOutputs.insert(*in).second)
          set(Feature::GraphOutputSameValueTwice);
        const Node &p = g.node(in->node);
        if (opKind(p) == OpKind::DataSource && p.attr("index") && in->index == 0)
          set(Feature::GraphOutputUserInput);
        if (variableOf(p, in->index))
          set(Feature::GraphOutputVariable);
        if (isWeightSource(p) && in->index == 0)
          set(Feature::GraphOutputWeight);
      }
    }
  }
  if (!rootNetOutput)
    set(Feature::RootWithoutNetOutput);
  for (const auto &[name, graphs] : declared)
    if (graphs.size() >= 2)
      set(Feature::VariableDeclaredTwice);
  std::vector<int64_t> rootIndexes;

  for (GraphId gid : order) {
    const Graph &g = m.graph(gid);
    const bool root = gid == 0;
    const Node *owner =
        root || g.parentNode == kNoNode ? nullptr : &m.graph(g.parentGraph).node(g.parentNode);
    const bool whileCond = owner && opKind(*owner) == OpKind::While && !owner->subgraphs.empty() &&
                           owner->subgraphs[0] == gid;
    const bool whileBody = owner && opKind(*owner) == OpKind::While &&
                           owner->subgraphs.size() == 2 && owner->subgraphs[1] == gid;
    if (depthOf(m, gid) >= 3)
      set(Feature::NestingDepth3);
    bool hasNetOutput = false;
    std::vector<int64_t> dataOrder;
    std::set<int64_t> dataIndexes, mapped;
    for (NodeId id : g.liveNodes()) {
      const Node &n = g.node(id);
      const OpKind kind = opKind(n);
      const OpInfo &info = lookupOp(n.type);
      const bool source =
          kind == OpKind::DataSource || kind == OpKind::Variable || kind == OpKind::Weight;

      // Sources.
      if (root && (n.type == "AippData" || n.type == "AnnData"))
        set(Feature::RootDataAippAnn);
      if (kind == OpKind::DataSource) {
        if (root) {
          if (n.attr("_parent_node_index"))
            set(Feature::RootDataParentIndex);
          if (auto idx = n.intAttr("index"))
            rootIndexes.push_back(*idx);
        } else {
          if (n.attr("index"))
            set(Feature::SubgraphDataIndexAttr);
          if (auto p = n.intAttr("_parent_node_index")) {
            dataOrder.push_back(*p);
            dataIndexes.insert(*p);
            if (owner && *p >= 0 && *p < static_cast<int64_t>(owner->inputs.size())) {
              if (!owner->inputs[size_t(*p)])
                set(Feature::SubgraphDataOfUnconnected);
              OpKind ok = opKind(*owner);
              if ((ok == OpKind::If || ok == OpKind::Case) && *p == 0)
                set(Feature::BranchConditionInBranch);
            }
          }
        }
      }
      if (source) {
        for (uint32_t k = 1; k < n.numOutputs; ++k)
          if (!g.consumers({id, k}).empty())
            set(Feature::SourceSecondOutput);
        if (!n.ctrlIn.empty())
          set(Feature::SourceCtrlIn);
        for (uint32_t k = 0; k < std::max<uint32_t>(1, n.numOutputs); ++k)
          if (refVarSrcName(n, k))
            set(Feature::RefVarSrcOnSource);
      }
      if (kind == OpKind::Variable && !root)
        set(Feature::VariableInSubgraph);
      if (kind == OpKind::Weight && !root)
        set(Feature::WeightInSubgraph);
      if (!isIdentifierName(n.name))
        set(Feature::QuotedName);

      // ref_var_src_var_name.
      const AttrValue *nodeLevel = n.attr("ref_var_src_var_name");
      if (nodeLevel && nodeLevel->isIdent())
        set(Feature::RefVarSrcIdent);
      if (nodeLevel && n.numOutputs >= 2 && !source)
        set(Feature::RefVarSrcNodeMulti);
      if (nodeLevel && kind == OpKind::NetOutput)
        set(Feature::RefVarSrcOnNetOutput);
      for (uint32_t k = 0; k < n.numOutputs; ++k) {
        const AttrValue *outLevel = portAttr(n, k, "ref_var_src_var_name");
        if (outLevel) {
          if (k >= 1)
            set(Feature::RefVarSrcOutputK);
          if (outLevel->isIdent())
            set(Feature::RefVarSrcIdent);
          if (nodeLevel && nodeLevel->text() && outLevel->text() &&
              *nodeLevel->text() != *outLevel->text())
            set(Feature::RefVarSrcBothLevels);
        }
        const std::string *var = source ? nullptr : refVarSrcName(n, k);
        if (!var)
          continue;
        auto it = declared.find(*var);
        if (it == declared.end()) {
          set(Feature::RefVarSrcUndeclared);
        } else if (!it->second.count(gid)) {
          bool ancestor = false;
          for (GraphId d : it->second)
            ancestor = ancestor || encloses(m, d, gid);
          set(ancestor ? Feature::RefVarSrcAncestor : Feature::RefVarSrcOtherGraph);
        }
        if (isCopy(n) && k == 0)
          set(isTensorMove(n) ? Feature::RefVarSrcOnTensorMove : Feature::RefVarSrcOnIdentity);
        // Spelled as a ref output or a view: the binding wins over both.
        if (refSpelled(n, k))
          set(Feature::RefVarSrcOnRefWriter);
        else if (viewSpelled(n, k))
          set(Feature::RefVarSrcOnView);
        if (kind == OpKind::Call)
          set(Feature::RefVarSrcOnCall);
        if (isControlFlow(n))
          set(Feature::RefVarSrcOnControlFlow);
      }

      // Copies.
      if (n.type == "Identity")
        set(Feature::Identity);
      if (n.type == "MemcpyAsync")
        set(Feature::MemcpyAsync);
      if (isCopy(n)) {
        if (n.numOutputs >= 2)
          set(Feature::CopySecondOutput);
        if (n.numOutputs == 0)
          set(Feature::CopyNoOutput);
        if (!isTensorMove(n) && (n.inputs.size() != 1 || !n.inputs[0]))
          set(Feature::CopyOddInputs);
        if (isInputMutable(n))
          set(Feature::InputMutableOnCopy);
        if (n.attr("continuous_input") || n.attr("_no_padding_continuous_input"))
          set(Feature::ContinuousOnCopy);
        if (!n.inputs.empty() && n.inputs[0]) {
          OutPort in = *n.inputs[0];
          const Node &p = g.node(in.node);
          if (isTensorMove(n) && isCopy(p) && refVarSrcName(p, in.index))
            set(Feature::TensorMoveOfBoundCopy);
          const std::string *bound = refVarSrcName(n, 0);
          const std::string *copied = variableOf(p, in.index);
          if (bound && copied && *bound == *copied)
            set(Feature::BoundCopyOfItsVariable);
        }
      }

      // Reserved attributes.
      for (const char *key : {"_cannot_be_deleted", "no_need_constant_folding"})
        if (const AttrValue *v = n.attr(key)) {
          if (!v->isBool())
            set(Feature::ReservedNonBool);
          else if (!v->asBool())
            set(Feature::ReservedFalse);
          if (!isCopy(n))
            set(Feature::ReservedOnOther);
        }

      // Ref outputs and views.
      std::set<uint32_t> refInputs;
      for (uint32_t k = 0; k < n.numOutputs; ++k) {
        const AttrValue *reuse = portAttr(n, k, "reuse_input");
        const AttrValue *reuseIndex = portAttr(n, k, "reuse_input_index");
        if (reuse && reuse->isBool() && !reuse->asBool())
          set(Feature::ReuseInputFalse);
        if (reuseIndex && !reuse)
          set(Feature::ReuseIndexAlone);
        if (holdsSubgraphs(n) && aliasedInput(n, k))
          set(Feature::AliasAttrOnHolder);
        if (auto r = refInput(n, k)) {
          refInputs.insert(*r);
          if (*r >= 1)
            set(Feature::RefInputSlotK);
          if (k >= 1)
            set(Feature::RefInputOutputK);
          if (portAttr(n, k, "ref_input"))
            for (const PortAlias &a : info.refOutputs)
              if (a.output == k && a.input != *r)
                set(Feature::RefInputOverride);
          if (reuse)
            set(Feature::RefAndReuse);
          if (!n.inputs[*r]) {
            set(Feature::RefInputUnconnected);
          } else {
            OutPort in = *n.inputs[*r];
            const Node &p = g.node(in.node);
            if (opKind(p) == OpKind::DataSource)
              set(root ? Feature::RefWriteUserInput : Feature::RefWriteSubgraphData);
            if (variableOf(p, in.index))
              set(Feature::RefWriteVariable);
          }
        } else if (auto v = viewInput(n, k)) {
          if (*v >= 1)
            set(Feature::ReuseInputIndexK);
          if (k >= 1)
            set(Feature::ViewOutputK);
          if (!n.inputs[*v])
            set(Feature::ViewOfUnconnected);
        }
      }
      if (refInputs.size() >= 2)
        set(Feature::TwoRefOutputs);

      // Scope writers.
      if (const AttrValue *im = n.attr("_input_mutable"); im && im->isBool()) {
        if (im->asBool() && !info.inputMutable)
          set(Feature::InputMutableAttr);
        if (!im->asBool())
          set(Feature::InputMutableFalse);
        if (im->asBool() && holdsSubgraphs(n))
          set(Feature::InputMutableOnHolder);
      }

      // Layout.
      const AttrValue *ci = n.attr("continuous_input");
      const AttrValue *np = n.attr("_no_padding_continuous_input");
      if (np && np->isBool() && np->asBool())
        set(Feature::NoPaddingContinuous);
      if ((ci && ci->isBool() && !ci->asBool()) || (np && np->isBool() && !np->asBool()))
        set(Feature::ContinuousFalse);
      if (ci && np)
        set(Feature::ContinuousBoth);
      if (needsContinuousInput(n)) {
        bool same = n.inputs.size() >= 2;
        for (const auto &in : n.inputs) {
          if (!in) {
            set(Feature::ContinuousUnconnected);
            same = false;
            continue;
          }
          same = same && n.inputs[0] && *in == *n.inputs[0];
          const Node &p = g.node(in->node);
          if (root && opKind(p) == OpKind::DataSource && p.attr("index"))
            set(Feature::ContinuousFromUserInput);
          if (variableOf(p, in->index))
            set(Feature::ContinuousFromVariable);
          if (isWeightSource(p) && in->index == 0)
            set(Feature::ContinuousFromWeight);
          if (root && graphOutputs.count(*in))
            set(Feature::ContinuousFromGraphOutput);
        }
        if (same)
          set(Feature::ContinuousSameValue);
      }

      // Nodes holding subgraphs.
      if (holdsSubgraphs(n)) {
        if (needsContinuousInput(n))
          set(Feature::ContinuousOnHolder);
        if (n.type != "PartitionedCall" && n.type != "If" && n.type != "Case" && n.type != "While")
          set(Feature::HolderVariantType);
        if (kind == OpKind::Call && n.inputs.empty())
          set(Feature::CallNoInputs);
        if (hasDuplicateInput(n))
          set(Feature::HolderSameValueTwice);
        if ((kind == OpKind::If || kind == OpKind::Case) && !n.inputs.empty() && !n.inputs[0])
          set(Feature::ConditionUnconnected);
        if (kind == OpKind::Case) {
          size_t b = n.subgraphs.size();
          if (b == 1)
            set(Feature::CaseSingleBranch);
          if (b == 3)
            set(Feature::CaseThreeBranches);
          if (b >= 4)
            set(Feature::CaseFourBranches);
        }
        if (kind == OpKind::While)
          if (auto mi = n.intAttr("max_iterations")) {
            set(Feature::WhileMaxIterations);
            if (*mi == 0)
              set(Feature::WhileMaxIterationsZero);
          }
        if (kind != OpKind::While) {
          std::set<int64_t> produced;
          for (GraphId sub : n.subgraphs)
            for (int64_t j : handedBack(m.graph(sub)))
              produced.insert(j);
          for (uint32_t j = 0; j < n.numOutputs; ++j)
            if (!produced.count(j))
              set(Feature::HolderOutputUnproduced);
        }
      }
      if (owner && kind == OpKind::Call && isControlFlow(*owner))
        set(Feature::CallInControlFlow);
      if (!root && isControlFlow(n))
        set(Feature::ControlFlowInSubgraph);

      // Control edges.
      for (NodeId to : n.ctrlOut) {
        const Node &t = g.node(to);
        if (opKind(t) == OpKind::Call)
          set(Feature::CtrlIntoCall);
        if (isControlFlow(t))
          set(Feature::CtrlIntoControlFlow);
        if (opKind(t) == OpKind::NetOutput)
          set(Feature::CtrlIntoNetOutput);
        if (kind == OpKind::Call)
          set(Feature::CtrlOutOfCall);
        if (isControlFlow(n))
          set(Feature::CtrlOutOfControlFlow);
        if (kind == OpKind::NetOutput)
          set(Feature::CtrlFromNetOutput);
        if (!root)
          set(Feature::CtrlInSubgraph);
        for (const auto &in : t.inputs)
          if (in && in->node == id)
            set(Feature::CtrlParallelToData);
      }

      // NetOutputs.
      if (kind == OpKind::NetOutput) {
        hasNetOutput = true;
        if (n.numOutputs >= 1)
          set(Feature::NetOutputWithOutputs);
        if (!root && !whileCond) {
          std::set<OutPort> seen;
          for (uint32_t k = 0; k < n.inputs.size(); ++k) {
            auto j = n.portIntAttr(false, k, "_parent_node_index");
            if (!j) {
              set(Feature::ResultUnmapped);
              continue;
            }
            mapped.insert(*j);
            if (*j != static_cast<int64_t>(k))
              set(Feature::ResultsPermuted);
            if (!n.inputs[k])
              set(Feature::ResultUnconnected);
            else if (!seen.insert(*n.inputs[k]).second)
              set(Feature::ResultSameValueTwice);
          }
        }
      }

      // Ordinary ops: inputs and outputs.
      if (kind == OpKind::Ordinary) {
        if (n.inputs.empty())
          set(Feature::ZeroInputOp);
        if (n.numOutputs >= 2)
          set(Feature::MultiOutputOp);
        if (n.numOutputs == 0)
          set(Feature::ZeroOutputOp);
        if (hasDuplicateInput(n))
          set(Feature::SameValueTwice);
      }

      // Tensor descriptions.
      for (uint32_t k = 0; k < n.numOutputs; ++k) {
        const AttrValue *shape = portAttr(n, k, "shape");
        const AttrValue *dtype = portAttr(n, k, "dtype");
        if (shape && shape->isList()) {
          if (shape->asList().empty())
            set(Feature::TensorDescScalar);
          for (const AttrValue &dim : shape->asList())
            if (dim.isInt() && dim.asInt() == 0)
              set(Feature::TensorDescEmpty);
        }
        if ((shape || dtype) && k >= 1)
          set(Feature::TensorDescOutputK);
        if (const std::string *t = dtype ? dtype->text() : nullptr;
            t && *t != "f32" && *t != "f16" && *t != "i32")
          set(Feature::TensorDescOtherDtype);
      }

      for (const auto &[key, value] : n.attrs)
        if (!knownAttribute(key))
          set(Feature::UnknownAttribute);
    }
    if (!root && !hasNetOutput)
      set(Feature::SubgraphWithoutNetOutput);
    if (!root && !std::is_sorted(dataOrder.begin(), dataOrder.end()))
      set(Feature::SubgraphDataPermuted);
    if (owner)
      for (int64_t p = 0; p < static_cast<int64_t>(owner->inputs.size()); ++p)
        if (!dataIndexes.count(p))
          set(Feature::SubgraphInputUnused);
    if (whileBody)
      for (int64_t j = 0; j < static_cast<int64_t>(owner->inputs.size()); ++j)
        if (!mapped.count(j))
          set(Feature::WhileVarNotWrittenBack);
  }
  std::sort(rootIndexes.begin(), rootIndexes.end());
  for (size_t i = 0; i < rootIndexes.size(); ++i)
    if (rootIndexes[i] != static_cast<int64_t>(i))
      set(Feature::RootDataIndexGap);

  for (const auto &[key, value] : m.options) {
    if (key == "ge.exec.outputReuseInputMemIndexes")
      set(Feature::OptionOutputReuse);
    else if (key == "ge.exec.inputReuseMemIndexes")
      set(Feature::OptionInputReuse);
    else {
      set(Feature::OptionUnknownKey);
      continue;
    }
    if (value.find(' ') != std::string::npos)
      set(Feature::OptionSpaced);
    if (value.empty())
      set(Feature::OptionEmptyValue);
  }
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
        if (n.portStringAttr(true, k, "ref_var_src_var_name"))
          set(Feature::RefVarSrcOutput);
        if (n.portAttr(true, k, "dtype") || n.portAttr(true, k, "shape"))
          set(Feature::TensorDesc);
        if (n.portAttr(true, k, "reuse_input") && viewInput(n, k))
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
      for (InPort c : n.numOutputs ? g.consumers({id, 0}) : std::vector<InPort>{}) {
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
  irFeatures(m, f);
  addMotifFeatures(m, f);
  return f;
}

} // namespace graphvet::props
