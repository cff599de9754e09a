// TensorMoveDeletePass: how remarks name nodes and sources.
#include "passes/tensor_move_delete/naming.h"

#include "ir/printer.h"

namespace graphvet::tmd {

std::string name(const Module &m, GraphId g, NodeId n) {
  const std::string &node = formatName(m.graph(g).node(n).name);
  if (g == 0)
    return node;
  return formatName(m.graph(g).name) + "/" + node;
}

std::string describe(const Module &m, GraphId g, NodeId n) {
  return m.graph(g).node(n).type + " " + name(m, g, n);
}

std::string sourceName(const Module &m, const SourceTrace &t) {
  const TraceStep &src = t.steps.back();
  std::string s = name(m, src.graph, src.port.node);
  if (m.graph(src.graph).node(src.port.node).numOutputs > 1)
    s.append(":").append(std::to_string(src.port.index));
  return s;
}

std::string describeSource(const Module &m, const SourceTrace &t) {
  std::string s = "source " + sourceName(m, t);
  switch (t.kind) {
  case SourceKind::UserInput:
    s += " (user input " + std::to_string(t.userInput) + ")";
    break;
  case SourceKind::Variable:
    s += " (variable)";
    break;
  case SourceKind::VariableRef:
    s += " (variable reference)";
    break;
  case SourceKind::Weight:
    s += " (weight)";
    break;
  default:
    break;
  }
  if (t.steps.size() > 1) {
    std::vector<std::string> via;
    for (size_t i = 0; i + 1 < t.steps.size(); ++i) {
      const TraceStep &step = t.steps[i];
      via.push_back(describe(m, step.graph, step.port.node));
      if (m.graph(step.graph).node(step.port.node).numOutputs > 1)
        via.back().append(":").append(std::to_string(step.port.index));
    }
    s += " via " + joinLimited(via, 8);
  }
  return s;
}

std::string joinLimited(const std::vector<std::string> &items, size_t limit) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < limit; ++i)
    out += (i ? ", " : "") + items[i];
  if (items.size() > limit)
    out += ", +" + std::to_string(items.size() - limit) + " more";
  return out;
}

} // namespace graphvet::tmd
