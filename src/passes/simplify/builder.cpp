// The simplify pass's one generic builder: makes a rule's replacement term
// in the graph from a match's binding. New nodes are named after the node
// they replace (`<root>_<op>`, numbered when taken), so output is
// deterministic.
#include "passes/simplify/match.h"

#include <cctype>

namespace graphvet::simplify {

using rewrite::Term;

namespace {

std::string freshName(const Graph &g, const std::string &base) {
  if (g.find(base) == kNoNode)
    return base;
  for (int i = 2;; ++i) // bounded by the number of nodes of the graph
    if (std::string name = base + "_" + std::to_string(i); g.find(name) == kNoNode)
      return name;
}

std::string lower(std::string s) {
  for (char &c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

} // namespace

std::optional<OutPort> buildReplacement(Graph &graph, const Term &t, const Match &match,
                                        const std::string &baseName, std::vector<NodeId> &created) {
  switch (t.kind) {
  case Term::Kind::Var: {
    auto it = match.ports.find(t.var);
    if (it == match.ports.end())
      return std::nullopt;
    return it->second;
  }
  case Term::Kind::Constant: {
    if (auto it = match.ports.find(t.var); it != match.ports.end())
      return it->second; // the matched Const itself
    auto value = match.binding.constants.find(t.var);
    if (value == match.binding.constants.end() || !value->second)
      return std::nullopt;
    NodeId c = graph.addNode(freshName(graph, baseName + "_" + t.var), "Const", {}, 1);
    graph.node(c).attrs["value"] = AttrValue::ofTensor(value->second);
    created.push_back(c);
    return OutPort{c, 0};
  }
  case Term::Kind::Op:
    break;
  }
  std::vector<std::optional<OutPort>> inputs;
  for (const Term &arg : t.args) {
    std::optional<OutPort> in = buildReplacement(graph, arg, match, baseName, created);
    if (!in)
      return std::nullopt;
    inputs.push_back(*in);
  }
  NodeId n = graph.addNode(freshName(graph, baseName + "_" + lower(t.op)), t.op, std::move(inputs));
  for (auto &[key, value] : rewrite::resolveAttrs(t, match.binding))
    graph.node(n).attrs[key] = value;
  created.push_back(n);
  return OutPort{n, t.result};
}

} // namespace graphvet::simplify
