// Port surgery; see port_surgery.h.
#include "passes/port_surgery.h"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <utility>

namespace graphvet {

std::string freshNodeName(const Graph &g, const std::string &base) {
  if (g.find(base) == kNoNode)
    return base;
  for (size_t i = 1; i <= g.capacity() + 1; ++i) {
    std::string candidate = fmt::format("{}_{}", base, i);
    if (g.find(candidate) == kNoNode)
      return candidate;
  }
  return fmt::format("{}_{}", base, g.capacity() + 2); // unreachable
}
namespace {

/// Splits "in12.dtype" into (12, "dtype") for the given side; nullopt when
/// the key is not a port attribute of that side.
std::optional<std::pair<int64_t, std::string>> splitPortKey(const std::string &key, bool outputs) {
  std::string_view prefix = outputs ? "out" : "in";
  if (key.size() <= prefix.size() || key.compare(0, prefix.size(), prefix) != 0)
    return std::nullopt;
  size_t i = prefix.size();
  int64_t index = 0;
  size_t digits = 0;
  // At most 9 digits: port counts are far below 10^9, and the bound keeps
  // the arithmetic from overflowing.
  while (i < key.size() && key[i] >= '0' && key[i] <= '9' && digits < 9) {
    index = index * 10 + (key[i] - '0');
    ++i;
    ++digits;
  }
  if (digits == 0 || i >= key.size() || key[i] != '.')
    return std::nullopt;
  return std::make_pair(index, key.substr(i + 1));
}

} // namespace

PortMap compactingMap(const std::vector<char> &keep) {
  PortMap map(keep.size(), kDroppedPort);
  int64_t next = 0;
  for (size_t i = 0; i < keep.size(); ++i)
    if (keep[i])
      map[i] = next++;
  return map;
}

void remapPortAttrs(Node &n, bool outputs, const PortMap &map) {
  AttrMap renamed;
  for (auto &[key, value] : n.attrs) {
    auto port = splitPortKey(key, outputs);
    if (!port || port->first >= static_cast<int64_t>(map.size())) {
      renamed.emplace(key, std::move(value));
      continue;
    }
    int64_t to = map[static_cast<size_t>(port->first)];
    if (to != kDroppedPort)
      renamed.emplace(Node::portKey(outputs, static_cast<uint32_t>(to), port->second),
                      std::move(value));
  }
  n.attrs = std::move(renamed);
}

void compactInputs(Graph &g, NodeId n, const std::vector<char> &keep) {
  std::vector<std::optional<OutPort>> kept;
  const size_t count = g.node(n).inputs.size();
  for (size_t i = 0; i < count; ++i)
    if (i >= keep.size() || keep[i])
      kept.push_back(g.node(n).inputs[i]);
  // Detach from the last slot down, then re-append what stays, so every
  // consumer list names the new slot.
  for (size_t i = count; i-- > 0;)
    g.eraseInput(InPort{n, static_cast<uint32_t>(i)});
  for (const std::optional<OutPort> &src : kept)
    g.appendInput(n, src);
  std::vector<char> fullKeep(count, 1);
  for (size_t i = 0; i < count && i < keep.size(); ++i)
    fullKeep[i] = keep[i];
  remapPortAttrs(g.node(n), false, compactingMap(fullKeep));
}

void compactOutputs(Graph &g, NodeId n, const std::vector<char> &keep) {
  const uint32_t count = g.node(n).numOutputs;
  std::vector<char> fullKeep(count, 1);
  for (uint32_t k = 0; k < count && k < keep.size(); ++k)
    fullKeep[k] = keep[k];
  PortMap map = compactingMap(fullKeep);
  for (uint32_t k = 0; k < count; ++k)
    if (map[k] != kDroppedPort && map[k] != static_cast<int64_t>(k))
      g.replaceAllUses(OutPort{n, k}, OutPort{n, static_cast<uint32_t>(map[k])});
  uint32_t kept = 0;
  for (char c : fullKeep)
    kept += c ? 1 : 0;
  g.setNumOutputs(n, kept);
  remapPortAttrs(g.node(n), true, map);
}

} // namespace graphvet
