// Missed rewrites of the mid-end passes (see missed_rewrites.h): the finders
// (one short function per rule), the harness's own surgery for each, and the
// driver that checks every candidate with the oracle.
#include "props/missed_rewrites.h"

#include "ir/op_def.h"
#include "ir/op_library.h"
#include "ir/tensor.h"
#include "ir/types.h"
#include "ir/verifier.h"
#include "passes/fold_constant.h"
#include "passes/partition_graph.h"
#include "props/contract.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <functional>
#include <set>

namespace graphvet::props {
namespace {

/// One opportunity: where, what, and the surgery that takes it on a copy of
/// the output (empty for fusion, which changes no value). The surgery
/// returns false when it does not apply after all (it would make a cycle).
struct Opportunity {
  std::string rule;
  std::vector<std::string> nodes;
  std::string message;
  std::function<bool(Module &)> apply;
};

struct Finder {
  const Module &m;
  const ModuleTypes &types;
  std::vector<Opportunity> &out;

  std::string name(GraphId g, NodeId n) const { return m.qualifiedName(g, n); }
};

/// A node the passes may move, merge or drop: no effect, no draw from the
/// random stream, no subgraph, not reserved, not a graph boundary.
bool pure(const Node &n) {
  OpKind k = opKind(n);
  if (k == OpKind::DataSource || k == OpKind::NetOutput || k == OpKind::Variable ||
      k == OpKind::Copy || holdsSubgraphs(n))
    return false;
  if (lookupOp(n.type).nondeterministic || !refWrittenInputs(n).empty() || isInputMutable(n) ||
      isReservedNode(n))
    return false;
  // An output bound to a variable writes it.
  for (uint32_t k = 0; k < n.numOutputs; ++k)
    if (refVarSrcName(n, k))
      return false;
  return true;
}

/// Graphs an outlined call holds (a fused group, a target region) are the
/// passes' finished work: not looked into.
bool outlined(const Module &m, GraphId g) {
  const Graph &graph = m.graph(g);
  if (g == 0 || graph.parentNode == kNoNode)
    return false;
  const Node &holder = m.graph(graph.parentGraph).node(graph.parentNode);
  return holder.attr(kFusedAttr) || holder.attr(kTargetAttr);
}

bool unused(const Node &n) {
  return std::all_of(n.consumers.begin(), n.consumers.end(),
                     [](const std::vector<InPort> &c) { return c.empty(); });
}

/// The input producer of slot `k` when it is output 0 of a node of `type`.
const Node *producerOfType(const Graph &g, const Node &n, size_t k, std::string_view type) {
  if (k >= n.inputs.size() || !n.inputs[k] || n.inputs[k]->index != 0)
    return nullptr;
  const Node &p = g.node(n.inputs[k]->node);
  return p.type == type ? &p : nullptr;
}

// ---- dce: a node nothing reads ----------------------------------------------

void findDeadNodes(Finder &f, GraphId gid) {
  const Graph &g = f.m.graph(gid);
  for (NodeId id : g.liveNodes()) {
    const Node &n = g.node(id);
    if (!pure(n) || !unused(n) || !n.ctrlOut.empty())
      continue;
    f.out.push_back({"dce:dead-node",
                     {f.name(gid, id)},
                     fmt::format("{} ({}) has no consumer", f.name(gid, id), n.type),
                     [gid, id](Module &c) {
                       c.graph(gid).removeNode(id);
                       return true;
                     }});
  }
}

// ---- cse: two equal nodes ------------------------------------------------------

void findEqualNodes(Finder &f, GraphId gid) {
  const Graph &g = f.m.graph(gid);
  std::map<std::string, std::vector<NodeId>> byInputs;
  for (NodeId id : g.liveNodes()) {
    const Node &n = g.node(id);
    if (n.inputs.empty() || !pure(n) || opKind(n) == OpKind::Weight)
      continue;
    std::string key = n.type + fmt::format("/{}", n.numOutputs);
    for (const auto &in : n.inputs)
      key += in ? fmt::format("|{}:{}", in->node, in->index) : std::string("|_");
    byInputs[key].push_back(id);
  }
  for (const auto &[key, ids] : byInputs)
    for (size_t i = 0; i < ids.size(); ++i)
      for (size_t j = i + 1; j < ids.size(); ++j) {
        NodeId a = ids[i], b = ids[j];
        if (g.node(a).attrs != g.node(b).attrs)
          continue;
        f.out.push_back({"cse:equal-nodes",
                         {f.name(gid, a), f.name(gid, b)},
                         fmt::format("{} and {} ({}) compute the same value", f.name(gid, a),
                                     f.name(gid, b), g.node(a).type),
                         [gid, a, b](Module &c) {
                           Graph &cg = c.graph(gid);
                           std::vector<NodeId> in = cg.node(b).ctrlIn, out = cg.node(b).ctrlOut;
                           for (NodeId s : in)
                             cg.addCtrlEdge(s, a);
                           for (NodeId t : out)
                             cg.addCtrlEdge(a, t);
                           for (uint32_t k = 0; k < cg.node(b).numOutputs; ++k)
                             cg.replaceAllUses(OutPort{b, k}, OutPort{a, k});
                           cg.removeNode(b);
                           return cg.topoOrder().has_value();
                         }});
        break; // one pair per node: the first equal partner
      }
}

// ---- fold-constant: every input a constant -------------------------------------

const Tensor *constantValue(const Graph &g, const std::optional<OutPort> &in) {
  if (!in)
    return nullptr;
  const Node &p = g.node(in->node);
  if (opKind(p) != OpKind::Weight)
    return nullptr;
  const AttrValue *v = p.attr("value");
  return v && v->isTensor() ? &v->asTensor() : nullptr;
}

/// A module option as the passes read it: a whole non-negative decimal
/// integer, else nullopt (the pass then keeps its default).
std::optional<int64_t> intOption(const Module &m, std::string_view key) {
  auto it = m.options.find(std::string(key));
  if (it == m.options.end())
    return std::nullopt;
  const std::string &text = it->second;
  int64_t value = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0)
    return std::nullopt;
  return value;
}

int64_t foldCap(const Module &m) {
  return intOption(m, kFoldConstantMaxElementsOption).value_or(FoldConstantOptions{}.maxElements);
}

void findFoldable(Finder &f, GraphId gid) {
  const Graph &g = f.m.graph(gid);
  const int64_t cap = foldCap(f.m);
  for (NodeId id : g.liveNodes()) {
    const Node &n = g.node(id);
    if (n.inputs.empty() || !pure(n) || opKind(n) != OpKind::Ordinary || !n.ctrlIn.empty() ||
        !n.ctrlOut.empty() || unused(n) || !lookupOp(n.type).kernel)
      continue;
    std::vector<const Tensor *> inputs;
    for (const auto &in : n.inputs)
      inputs.push_back(constantValue(g, in));
    if (std::find(inputs.begin(), inputs.end(), nullptr) != inputs.end())
      continue;
    int64_t elements = 0;
    for (uint32_t k = 0; k < n.numOutputs; ++k)
      if (const TensorType *t = f.types.of(gid, id, k))
        elements += t->numElements();
    if (elements > cap)
      continue;
    std::string error;
    auto values = evaluateNode(n, inputs, error);
    if (!values || values->size() < n.numOutputs ||
        std::any_of(values->begin(), values->end(), [](const Tensor &t) { return t.anyUndef(); }))
      continue;
    auto shared = std::make_shared<std::vector<Tensor>>(std::move(*values));
    f.out.push_back({"fold-constant:constant-inputs",
                     {f.name(gid, id)},
                     fmt::format("every input of {} ({}) is a constant", f.name(gid, id), n.type),
                     [gid, id, shared](Module &c) {
                       Graph &cg = c.graph(gid);
                       const std::string base = cg.node(id).name;
                       for (uint32_t k = 0; k < cg.node(id).numOutputs; ++k) {
                         std::vector<InPort> readers = cg.consumers(OutPort{id, k});
                         if (readers.empty())
                           continue;
                         std::string constName = fmt::format("{}_missed_const{}", base, k);
                         NodeId constant = cg.addNode(constName, "Const", {}, 1);
                         cg.node(constant).attrs["value"] =
                             AttrValue::ofTensor(std::make_shared<const Tensor>((*shared)[k]));
                         for (const InPort &r : readers) {
                           // A graph output reads a copy: a constant's buffer is not
                           // the caller's to keep.
                           OutPort src{constant, 0};
                           if (opKind(cg.node(r.node)) == OpKind::NetOutput) {
                             NodeId copy =
                                 cg.addNode(fmt::format("{}_missed_copy{}_{}", base, k, r.index),
                                            "Identity", {src}, 1);
                             src = OutPort{copy, 0};
                           }
                           cg.setInput(r, src);
                         }
                       }
                       cg.removeNode(id);
                       return true;
                     }});
  }
}

// ---- simplify: a cast pair or a transpose pair that gives back its input ------

/// Every value of `from` is a value of `to` (so casting there and back is
/// the identity).
bool widensExactly(DType from, DType to) {
  if (from == to || from == DType::Bool)
    return true;
  if (to == DType::Bool)
    return false;
  if (isInteger(from) && isInteger(to))
    return intMin(to) <= intMin(from) && intMax(from) <= intMax(to);
  if (isInteger(from) && isFloat(to)) {
    uint64_t magnitude = std::max<uint64_t>(intMax(from), static_cast<uint64_t>(-intMin(from)));
    int bits = significandBits(to);
    return bits >= 64 || magnitude <= (uint64_t{1} << bits);
  }
  if (isFloat(from) && isFloat(to))
    return significandBits(to) >= significandBits(from) &&
           smallestNormal(to) <= smallestNormal(from) && dtypeBytes(to) > dtypeBytes(from);
  return false;
}

void findCastPairs(Finder &f, GraphId gid) {
  const Graph &g = f.m.graph(gid);
  for (NodeId id : g.liveNodes()) {
    const Node &outer = g.node(id);
    const Node *inner = outer.type == "Cast" ? producerOfType(g, outer, 0, "Cast") : nullptr;
    if (!inner || inner->inputs.empty() || !inner->inputs[0] || isReservedNode(outer))
      continue;
    OutPort x = *inner->inputs[0];
    const TensorType *tx = f.types.of(gid, x);
    const TensorType *tMid = f.types.of(gid, inner->id, 0);
    const TensorType *tOut = f.types.of(gid, id, 0);
    if (!tx || !tMid || !tOut || tx->dtype != tOut->dtype || tx->dtype == tMid->dtype ||
        !widensExactly(tx->dtype, tMid->dtype))
      continue;
    f.out.push_back({"simplify:cast-pair",
                     {f.name(gid, inner->id), f.name(gid, id)},
                     fmt::format("{} -> {} -> {} gives back its input ({}, {})",
                                 dtypeName(tx->dtype), dtypeName(tMid->dtype),
                                 dtypeName(tOut->dtype), f.name(gid, inner->id), f.name(gid, id)),
                     [gid, id, x](Module &c) {
                       Graph &cg = c.graph(gid);
                       cg.replaceAllUses(OutPort{id, 0}, x);
                       cg.removeNode(id);
                       return true;
                     }});
  }
}

/// The permutation of a Transpose of a rank-`rank` input (absent: reversal).
std::optional<std::vector<int64_t>> permOf(const Node &n, int64_t rank) {
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  if (!n.attr("perm")) {
    for (int64_t i = 0; i < rank; ++i)
      perm[static_cast<size_t>(i)] = rank - 1 - i;
    return perm;
  }
  auto given = attrInts(n, "perm");
  if (!given || static_cast<int64_t>(given->size()) != rank)
    return std::nullopt;
  for (size_t i = 0; i < perm.size(); ++i) {
    int64_t p = (*given)[i] < 0 ? (*given)[i] + rank : (*given)[i];
    if (p < 0 || p >= rank)
      return std::nullopt;
    perm[i] = p;
  }
  return perm;
}

void findTransposePairs(Finder &f, GraphId gid) {
  const Graph &g = f.m.graph(gid);
  for (NodeId id : g.liveNodes()) {
    const Node &outer = g.node(id);
    const Node *inner =
        outer.type == "Transpose" ? producerOfType(g, outer, 0, "Transpose") : nullptr;
    if (!inner || inner->inputs.empty() || !inner->inputs[0] || isReservedNode(outer))
      continue;
    OutPort x = *inner->inputs[0];
    const TensorType *tx = f.types.of(gid, x);
    if (!tx)
      continue;
    auto first = permOf(*inner, tx->rank()), second = permOf(outer, tx->rank());
    if (!first || !second)
      continue;
    // Output i of the pair is input (*first)[(*second)[i]].
    bool identity = true;
    for (size_t i = 0; i < second->size(); ++i)
      identity = identity && (*first)[static_cast<size_t>((*second)[i])] == static_cast<int64_t>(i);
    if (!identity)
      continue;
    f.out.push_back({"simplify:transpose-pair",
                     {f.name(gid, inner->id), f.name(gid, id)},
                     fmt::format("the permutations of {} and {} cancel", f.name(gid, inner->id),
                                 f.name(gid, id)),
                     [gid, id, x](Module &c) {
                       Graph &cg = c.graph(gid);
                       cg.replaceAllUses(OutPort{id, 0}, x);
                       cg.removeNode(id);
                       return true;
                     }});
  }
}

// ---- fuse-ops: two adjacent element-wise ops left apart -------------------------

bool elementWise(const Node &n) {
  OpPattern p = opPattern(n.type);
  return (p == OpPattern::ElemWise || p == OpPattern::Broadcast) && pure(n) &&
         opKind(n) == OpKind::Ordinary && n.numOutputs == 1;
}

void findUnfusedChains(Finder &f, GraphId gid) {
  // A depth cap of one op per group (fuse_ops.max_fuse_depth = 1) fuses
  // nothing by request.
  if (intOption(f.m, "fuse_ops.max_fuse_depth") == 1)
    return;
  const Graph &g = f.m.graph(gid);
  for (NodeId id : g.liveNodes()) {
    const Node &producer = g.node(id);
    if (!elementWise(producer) || producer.consumers[0].size() != 1 || !producer.ctrlOut.empty())
      continue;
    const Node &consumer = g.node(producer.consumers[0][0].node);
    // A pair nothing reads is dead code, dce's business, not fusion's.
    if (!elementWise(consumer) || !consumer.ctrlIn.empty() || unused(consumer))
      continue;
    f.out.push_back(
        {"fuse-ops:unfused-chain",
         {f.name(gid, id), f.name(gid, consumer.id)},
         fmt::format("element-wise {} ({}) feeds only {} ({}), in another kernel", f.name(gid, id),
                     producer.type, f.name(gid, consumer.id), consumer.type),
         {}});
  }
}

using FinderFn = void (*)(Finder &, GraphId);
struct RuleRow {
  MissedRewriteRule rule;
  FinderFn find;
};

const std::vector<RuleRow> &ruleTable() {
  static const std::vector<RuleRow> rows = {
      {{"dce:dead-node", "dce", "a node without effects that nothing reads"}, findDeadNodes},
      {{"cse:equal-nodes", "cse", "two nodes of one type, inputs and attributes"}, findEqualNodes},
      {{"fold-constant:constant-inputs", "fold-constant",
        "a deterministic node whose inputs are all constants (within the size cap)"},
       findFoldable},
      {{"simplify:cast-pair", "simplify", "Cast(Cast(x)) back to x's dtype through a wider one"},
       findCastPairs},
      {{"simplify:transpose-pair", "simplify", "two Transposes whose permutations cancel"},
       findTransposePairs},
      {{"fuse-ops:unfused-chain", "fuse-ops",
        "an element-wise op whose only reader is an element-wise op in another kernel"},
       findUnfusedChains},
  };
  return rows;
}

} // namespace

std::string_view rewriteStatusName(RewriteStatus s) {
  switch (s) {
  case RewriteStatus::Missed:
    return "missed";
  case RewriteStatus::Necessary:
    return "necessary";
  case RewriteStatus::Inconclusive:
    return "inconclusive";
  case RewriteStatus::Untried:
    return "untried";
  }
  return "untried";
}

std::vector<MissedRewriteRule> missedRewriteRules() {
  std::vector<MissedRewriteRule> out;
  for (const RuleRow &r : ruleTable())
    out.push_back(r.rule);
  return out;
}

MissedRewriteReport findMissedRewritesIn(const Module &original, const Module &optimized,
                                         const MissedRewriteOptions &opts) {
  MissedRewriteReport report;
  Diagnostics errors;
  std::set<std::string_view> passes;
  for (const PassInfo *p : assemblePipeline(opts.pipeline, errors))
    passes.insert(p->name);
  if (hasErrors(errors)) {
    report.ok = false;
    report.error = errors.front().message;
    return report;
  }
  if (hasErrors(verifyModule(optimized)))
    return report; // the oracle reports a malformed output; nothing to look for
  Diagnostics ignored;
  ModuleTypes types = inferModuleTypes(optimized, ignored);
  std::vector<Opportunity> found;
  Finder finder{optimized, types, found};
  for (const RuleRow &row : ruleTable()) {
    if (!passes.count(row.rule.pass))
      continue;
    for (GraphId g : optimized.canonicalGraphOrder())
      if (!outlined(optimized, g))
        row.find(finder, g);
  }
  oracle::CheckOptions check = opts.check;
  check.contract = pipelineContract(opts.pipeline);
  unsigned tried = 0;
  for (Opportunity &o : found) {
    MissedRewrite item{o.rule, o.nodes, o.message, RewriteStatus::Untried, ""};
    if (!o.apply) {
      item.status = RewriteStatus::Missed; // fusion: no value changes
    } else if (tried < opts.maxCandidates) {
      ++tried;
      Module candidate = optimized;
      if (!o.apply(candidate) || hasErrors(verifyModule(candidate))) {
        continue; // the surgery does not apply here: not an opportunity
      }
      oracle::CheckResult r = oracle::checkRefinement(original, candidate, check);
      switch (r.verdict) {
      case oracle::Verdict::Sound:
        item.status = RewriteStatus::Missed;
        break;
      case oracle::Verdict::Inconclusive:
        item.status = RewriteStatus::Inconclusive;
        break;
      case oracle::Verdict::Violation:
      case oracle::Verdict::Invalid:
        item.status = RewriteStatus::Necessary;
        item.violationKind = r.violations.empty() ? "invalid" : r.violations[0].kind;
        break;
      }
    }
    switch (item.status) {
    case RewriteStatus::Missed:
      ++report.missed;
      ++report.missedByRule[item.rule];
      break;
    case RewriteStatus::Necessary:
      ++report.necessary;
      break;
    case RewriteStatus::Inconclusive:
      ++report.inconclusive;
      break;
    case RewriteStatus::Untried:
      ++report.untried;
      break;
    }
    report.items.push_back(std::move(item));
  }
  return report;
}

MissedRewriteReport findMissedRewrites(const Module &original, const MissedRewriteOptions &opts) {
  Module withOptions = original;
  writeOptionOverrides(withOptions, opts.pipeline);
  Module optimized = withOptions;
  PipelineResult pr = runPipeline(optimized, opts.pipeline);
  if (!pr.ok && pr.failedPass.empty()) {
    MissedRewriteReport report;
    report.ok = false;
    report.error =
        pr.diagnostics.empty() ? "the pipeline did not run" : pr.diagnostics.front().message;
    return report;
  }
  MissedRewriteOptions plain = opts;
  plain.pipeline.optionOverrides.clear(); // written into both modules
  return findMissedRewritesIn(withOptions, optimized, plain);
}

} // namespace graphvet::props
