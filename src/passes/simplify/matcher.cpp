// The simplify pass's one generic matcher: binds a rule's pattern term on a
// graph, taking operand types from the module's inferred types.
#include "ir/op_library.h"
#include "passes/simplify/match.h"

namespace graphvet::simplify {

using rewrite::AttrTerm;
using rewrite::Term;

const TensorType *TypeTable::of(GraphId g, OutPort p) const {
  if (auto it = added_.find({g, p}); it != added_.end())
    return &it->second;
  return inferred_.of(g, p);
}

namespace {

bool matchTerm(const Graph &graph, GraphId g, const TypeTable &types, const Term &t, OutPort port,
               Match &out) {
  if (port.node >= graph.capacity() || !graph.node(port.node).alive)
    return false;
  const Node &n = graph.node(port.node);
  switch (t.kind) {
  case Term::Kind::Var: {
    if (auto it = out.ports.find(t.var); it != out.ports.end())
      return it->second == port;
    const TensorType *type = types.of(g, port);
    if (!type)
      return false;
    out.ports[t.var] = port;
    out.binding.operands[t.var] = *type;
    return true;
  }
  case Term::Kind::Constant: {
    if (auto it = out.ports.find(t.var); it != out.ports.end())
      return it->second == port;
    const AttrValue *value = n.attr("value");
    if (!isWeightSource(n) || port.index != 0 || !value || !value->isTensor())
      return false;
    if (!t.anyValue && !rewrite::isSplat(value->asTensor(), t.splat))
      return false;
    out.ports[t.var] = port;
    out.binding.constants[t.var] = value->tensorPtr();
    return true;
  }
  case Term::Kind::Op:
    break;
  }
  if (n.type != t.op || port.index != t.result || n.inputs.size() != t.args.size())
    return false;
  if (!numericDefinition(n) && n.type != "Identity")
    return false;
  for (const AttrTerm &a : t.attrs) {
    const AttrValue *v = n.attr(a.key);
    if (a.kind == AttrTerm::Kind::Literal) {
      if (!v || !(*v == a.literal))
        return false;
    } else if (a.kind == AttrTerm::Kind::Var && v) {
      auto [it, fresh] = out.binding.attrs.try_emplace(a.var, *v);
      if (!fresh && !(it->second == *v))
        return false;
    }
  }
  if (!t.countVar.empty())
    out.binding.counts[t.countVar] = n.numOutputs;
  out.opNodes.push_back(port.node);
  for (size_t i = 0; i < t.args.size(); ++i) {
    const std::optional<OutPort> &in = n.inputs[i];
    if (!in || !matchTerm(graph, g, types, t.args[i], *in, out))
      return false;
  }
  return true;
}

} // namespace

bool matchPattern(const Graph &graph, GraphId g, const TypeTable &types, const Term &pattern,
                  OutPort port, Match &out) {
  out = Match{};
  out.root = port;
  return matchTerm(graph, g, types, pattern, port, out);
}

std::string aliasedVar(const Term &t) {
  if (t.kind == Term::Kind::Var)
    return t.var;
  if (t.kind == Term::Kind::Op && t.op == "Reshape" && !t.args.empty())
    return aliasedVar(t.args[0]);
  return {};
}

std::optional<size_t> viewedInnerOp(const Term &pattern) {
  const Term *t = &pattern;
  size_t depth = 0;
  while (t->kind == Term::Kind::Op && t->op == "Reshape" && !t->args.empty()) {
    t = &t->args[0];
    ++depth;
  }
  if (depth == 0 || t->kind != Term::Kind::Op)
    return std::nullopt;
  return depth;
}

} // namespace graphvet::simplify
