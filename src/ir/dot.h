// Graphviz export: subgraphs as clusters inside their owner, control edges
// dashed, TensorMoves highlighted, outputs labelled by a caller-supplied
// function (the `show` command passes the oracle's memory plan).
#pragma once

#include "ir/graph.h"

#include <functional>
#include <set>
#include <string>

namespace graphvet {

struct DotOptions {
  /// Label for output `port` of a node in graph `g` (e.g. its buffer); empty
  /// string for none.
  std::function<std::string(GraphId g, OutPort port)> outputLabel;
  /// Nodes drawn with a red border (e.g. the nodes of a violation), as
  /// (graph, node) pairs.
  std::set<std::pair<GraphId, NodeId>> highlighted;
  std::string title;
};

std::string toDot(const Module &m, const DotOptions &opts = {});

} // namespace graphvet
