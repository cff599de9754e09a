// TensorMoveDeletePass: the siblings of a TensorMove (the other consumers of
// the producer output it copies, scenario 5), summarized per producer output
// by kind and kept current while TensorMoves are deleted, so a hub feeding
// many TensorMoves is summarized once, not once per TensorMove. Part of the
// pass's analysis (analysis.h).
#pragma once

#include "passes/buffer_analysis.h"

#include <array>
#include <cstdint>
#include <map>
#include <unordered_map>

namespace graphvet::tmd {

/// Hash of a port or slot reference, for the pass's lookup-only tables.
struct RefHash {
  static size_t mix(uint64_t a, uint64_t b) {
    uint64_t h = (a << 32 | b) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(h ^ (h >> 29));
  }
  size_t operator()(const PortRef &p) const {
    return mix(p.graph, p.port.node) ^ (p.port.index * 0xC2B2AE3D27D4EB4Full);
  }
  size_t operator()(const SlotRef &s) const {
    return mix(s.graph, s.slot.node) ^ (s.slot.index * 0xC2B2AE3D27D4EB4Full);
  }
};

/// What a consumer slot of a producer output is, as a sibling of a
/// TensorMove reading the same output (scenario 5), in order of precedence.
enum class SiblingKind : uint8_t { NetOutput, Holder, PassesOn, Writer, Reader };
constexpr size_t kSiblingKinds = 5;

/// The consumers of one producer output grouped by SiblingKind: node ->
/// number of its slots of that kind.
struct PortSummary {
  std::array<std::map<NodeId, uint32_t>, kSiblingKinds> byKind;
  std::map<NodeId, uint32_t> &of(SiblingKind k) { return byKind[static_cast<size_t>(k)]; }
};

class SiblingSummaries {
public:
  SiblingSummaries(const Module &m, const ModuleIndex &index, size_t budget)
      : m_(m), index_(index), budget_(budget) {}

  /// The summary of port `p`, built from the graph when first asked.
  PortSummary &summary(PortRef p);
  /// Slot `s` now reads `p` (a no-op while `p` is not summarized).
  void summaryAdd(PortRef p, const SlotRef &s);
  /// Slot `s` no longer reads `p`.
  void summaryRemove(PortRef p, const SlotRef &s);
  /// `p` is gone (its node removed).
  void forget(PortRef p) { summaries_.erase(p); }
  /// Slot `s` is counted in some summary.
  bool counted(const SlotRef &s) const { return slotKinds_.count(s) > 0; }

private:
  SiblingKind classifySibling(const SlotRef &s);

  const Module &m_;
  const ModuleIndex &index_;
  size_t budget_;
  // Summaries by producer port, and the kind each summarized slot was
  // counted as (to take it out again). (Hash maps: only ever looked up,
  // never iterated, so their order cannot leak into decisions; a tree of
  // 10^5 ports costs a cache miss per level.)
  std::unordered_map<PortRef, PortSummary, RefHash> summaries_;
  std::unordered_map<SlotRef, SiblingKind, RefHash> slotKinds_;
};

} // namespace graphvet::tmd
