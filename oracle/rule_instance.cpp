// Instantiation of a rewrite rule's two sides under one instance's binding,
// and their concrete evaluation with the interpreter's kernels (the replay of
// a counterexample). See rule_instance.h.
#include "oracle/rule_instance.h"

#include "ir/op_def.h"
#include "ir/op_library.h"

#include <fmt/format.h>

#include <cstring>

namespace graphvet::oracle {
namespace {

using rewrite::Term;

/// A tensor of `type` whose every element is `v` (a Constant term's splat).
std::shared_ptr<const Tensor> splatTensor(const TensorType &type, double v) {
  auto t = std::make_shared<Tensor>(type);
  for (int64_t i = 0; i < t->size(); ++i) {
    if (isFloat(type.dtype))
      t->setDouble(i, v);
    else if (type.dtype == DType::Bool)
      t->setInt(i, v != 0 ? 1 : 0);
    else
      t->setInt(i, static_cast<int64_t>(v));
  }
  return t;
}

/// How many outputs an op node of a term has: Split's count comes from its
/// attributes, its split operand or the binding's counts.
uint32_t outputCount(const Term &t, const Node &n, const rewrite::Binding &b,
                     const std::vector<const Tensor *> &constants) {
  uint32_t atLeast = t.result + 1;
  if (!t.countVar.empty())
    if (auto it = b.counts.find(t.countVar); it != b.counts.end())
      return std::max(atLeast, static_cast<uint32_t>(it->second));
  if (t.op == "Split") {
    if (auto k = n.intAttr("num_outputs"))
      return std::max(atLeast, static_cast<uint32_t>(*k));
    if (auto s = attrInts(n, "split"))
      return std::max(atLeast, static_cast<uint32_t>(s->size()));
    if (constants.size() > 1 && constants[1])
      return std::max(atLeast, static_cast<uint32_t>(constants[1]->size()));
    if (b.counts.size() == 1)
      return std::max(atLeast, static_cast<uint32_t>(b.counts.begin()->second));
    return atLeast;
  }
  const OpInfo &info = lookupOp(t.op);
  uint32_t def = info.defaultOutputs == kOutputsPerInput ? static_cast<uint32_t>(t.args.size())
                                                         : info.defaultOutputs;
  return std::max(atLeast, def);
}

struct Builder {
  const rewrite::Binding &binding;
  InstGraph &g;
  std::map<std::string, int> leaves;
  std::string error;

  int addLeaf(InstNode n) {
    std::string key = n.name;
    g.nodes.push_back(std::move(n));
    int id = static_cast<int>(g.nodes.size()) - 1;
    leaves[key] = id;
    return id;
  }

  std::optional<InstRef> build(const Term &t, std::optional<DType> hint) {
    switch (t.kind) {
    case Term::Kind::Var: {
      if (auto it = leaves.find(t.var); it != leaves.end())
        return InstRef{it->second, 0};
      auto ty = binding.operands.find(t.var);
      if (ty == binding.operands.end()) {
        error = "operand '" + t.var + "' has no type in the instance";
        return std::nullopt;
      }
      InstNode n;
      n.kind = InstNode::Kind::Operand;
      n.name = t.var;
      n.outputs = {ty->second};
      int id = addLeaf(std::move(n));
      g.operands.push_back(id);
      return InstRef{id, 0};
    }
    case Term::Kind::Constant: {
      if (auto it = leaves.find(t.var); it != leaves.end())
        return InstRef{it->second, 0};
      InstNode n;
      n.kind = InstNode::Kind::Constant;
      n.name = t.var;
      if (auto c = binding.constants.find(t.var); c != binding.constants.end()) {
        n.value = c->second;
      } else if (t.anyValue) {
        error = "constant '" + t.var + "' has no value in the instance";
        return std::nullopt;
      } else if (auto ty = binding.operands.find(t.var); ty != binding.operands.end()) {
        n.value = splatTensor(ty->second, t.splat);
      } else {
        n.value = splatTensor(TensorType{hint.value_or(DType::F32), {}}, t.splat);
      }
      n.outputs = {n.value->type()};
      return InstRef{addLeaf(std::move(n)), 0};
    }
    case Term::Kind::Op:
      break;
    }
    // Operands first, so that a constant argument takes their dtype.
    std::vector<std::optional<InstRef>> args(t.args.size());
    std::optional<DType> argHint;
    for (size_t i = 0; i < t.args.size(); ++i) {
      if (t.args[i].kind == Term::Kind::Constant)
        continue;
      args[i] = build(t.args[i], std::nullopt);
      if (!args[i])
        return std::nullopt;
      if (!argHint)
        argHint = g.typeOf(*args[i]).dtype;
    }
    for (size_t i = 0; i < t.args.size(); ++i) {
      if (args[i])
        continue;
      args[i] = build(t.args[i], argHint ? argHint : hint);
      if (!args[i])
        return std::nullopt;
    }
    InstNode n;
    n.kind = InstNode::Kind::Op;
    n.node.type = t.op;
    n.node.name = t.op;
    n.node.attrs = resolveAttrs(t, binding);
    std::vector<std::optional<TensorType>> types;
    std::vector<const Tensor *> constants;
    for (size_t i = 0; i < args.size(); ++i) {
      n.args.push_back(*args[i]);
      n.node.inputs.push_back(OutPort{static_cast<NodeId>(args[i]->node), args[i]->port});
      types.push_back(g.typeOf(*args[i]));
      const InstNode &src = g.nodes[args[i]->node];
      constants.push_back(src.kind == InstNode::Kind::Constant ? src.value.get() : nullptr);
    }
    n.node.numOutputs = outputCount(t, n.node, binding, constants);
    if (t.op == "Identity") {
      if (types.size() != 1) {
        error = "Identity takes one input";
        return std::nullopt;
      }
      n.outputs = {*types[0]};
    } else {
      std::string why;
      auto out = inferNodeTypes(n.node, types, constants, why);
      if (!out) {
        error = t.op + ": " + why;
        return std::nullopt;
      }
      n.outputs = std::move(*out);
    }
    if (t.result >= n.outputs.size()) {
      error = fmt::format("{} has no output {}", t.op, t.result);
      return std::nullopt;
    }
    g.nodes.push_back(std::move(n));
    return InstRef{static_cast<int>(g.nodes.size()) - 1, t.result};
  }
};

} // namespace

std::optional<InstGraph> instantiate(const rewrite::Rule &rule, const rewrite::Instance &inst,
                                     std::string &error, std::string &replacementError) {
  InstGraph g;
  Builder b{inst.binding, g, {}, {}};
  auto orig = b.build(rule.pattern, std::nullopt);
  if (!orig) {
    error = "the pattern does not type-check: " + b.error;
    return std::nullopt;
  }
  g.original = *orig;
  auto repl = b.build(rule.replacement, g.typeOf(*orig).dtype);
  if (!repl) {
    replacementError = "the replacement does not type-check: " + b.error;
    g.replacement = InstRef{-1, 0};
  } else {
    g.replacement = *repl;
  }
  return g;
}

std::optional<std::vector<std::vector<Tensor>>>
evaluateInstance(const InstGraph &g, const std::map<std::string, Tensor> &operands,
                 std::string &error) {
  std::vector<std::vector<Tensor>> values(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const InstNode &n = g.nodes[i];
    switch (n.kind) {
    case InstNode::Kind::Operand: {
      auto it = operands.find(n.name);
      if (it == operands.end() || it->second.type() != n.outputs[0]) {
        error = "no value of type " + n.outputs[0].str() + " for operand '" + n.name + "'";
        return std::nullopt;
      }
      values[i] = {it->second};
      break;
    }
    case InstNode::Kind::Constant:
      values[i] = {*n.value};
      break;
    case InstNode::Kind::Op: {
      std::vector<const Tensor *> ins;
      for (const InstRef &a : n.args)
        ins.push_back(&values[static_cast<size_t>(a.node)][a.port]);
      if (n.node.type == "Identity") { // a copy (no kernel: OpKind::Copy)
        values[i] = {*ins[0]};
        break;
      }
      auto out = evaluateNode(n.node, ins, error);
      if (!out)
        return std::nullopt;
      values[i] = std::move(*out);
      break;
    }
    }
  }
  return values;
}

std::string elementText(const Tensor &t, int64_t i) {
  if (t.isUndef(i))
    return "indeterminate";
  uint32_t bytes = dtypeBytes(t.dtype());
  uint64_t bits = 0;
  std::memcpy(&bits, t.at(i), bytes); // little-endian host (as dtype.cpp assumes)
  std::optional<std::string> text = formatElement(t.dtype(), t.at(i));
  return fmt::format("{} (0x{:0{}x})", text ? *text : std::string("nan"), bits, 2 * bytes);
}

} // namespace graphvet::oracle
