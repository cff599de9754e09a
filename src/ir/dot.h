// Graphviz export: subgraphs as clusters inside their owner, control edges
// dashed, TensorMoves highlighted, outputs labelled by a caller-supplied
// function (the `show` command passes the oracle's memory plan).
#pragma once

#include "ir/graph.h"

#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>

namespace graphvet {

struct DotOptions {
  /// Label for output `port` of a node in graph `g` (e.g. its buffer); empty
  /// string for none.
  std::function<std::string(GraphId g, OutPort port)> outputLabel;
  /// Nodes drawn with a red border (e.g. the nodes of a violation), as
  /// (graph, node) pairs.
  std::set<std::pair<GraphId, NodeId>> highlighted;
  /// Input edges drawn red with a label (e.g. the graph output whose value
  /// differs), by (graph, consumer node, input slot).
  std::map<std::tuple<GraphId, NodeId, uint32_t>, std::string> markedInputs;
  std::string title;
};

std::string toDot(const Module &m, const DotOptions &opts = {});

} // namespace graphvet
