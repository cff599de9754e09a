// Port surgery shared by passes that drop ports of a node: removing input
// slots or outputs of a node and renumbering what stays, with the port
// attributes (`inK.*`, `outK.*`) and the consumers following their port.
#pragma once

#include "ir/graph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace graphvet {

/// `base`, or `base_N` with the smallest N free in `g`: the name of a node a
/// pass adds. Bounded: among capacity() + 1 suffixes one is free.
std::string freshNodeName(const Graph &g, const std::string &base);

/// Old port index -> new one, or kDroppedPort when the port goes.
inline constexpr int64_t kDroppedPort = -1;
using PortMap = std::vector<int64_t>;

/// The map that keeps the ports with `keep[i] != 0`, in order.
PortMap compactingMap(const std::vector<char> &keep);

/// Renames the port attributes of one side (`inK.x` when `outputs` is
/// false, `outK.x` otherwise) by `map`; attributes of dropped ports go.
/// Keys whose index is outside `map` are left alone.
void remapPortAttrs(Node &n, bool outputs, const PortMap &map);

/// Keeps the input slots of `n` with `keep[i] != 0` (in order), detaching the
/// others; input attributes follow their slot. Linear in the slots.
void compactInputs(Graph &g, NodeId n, const std::vector<char> &keep);

/// Keeps the outputs of `n` with `keep[k] != 0`; every dropped output must
/// have no consumer. Consumers of kept outputs are moved to the new index,
/// output attributes follow, and the output count shrinks.
void compactOutputs(Graph &g, NodeId n, const std::vector<char> &keep);

} // namespace graphvet
