// structuralFingerprint: one pass over the module feeding a 64-bit mixer.
#include "ir/fingerprint.h"

#include <bit>
#include <cstring>
#include <string_view>
#include <utility>

namespace graphvet {
namespace {

/// A streaming 64-bit hash: order-sensitive, cheap, good enough to tell
/// states apart. Words go alternately to two lanes, each a xor, an odd
/// multiply (a bijection: two streams that differ in one word never collide)
/// and a rotation (so high bits reach the low ones at the next multiply); two
/// independent lanes halve the dependency chain the walk waits on.
class Hasher {
public:
  void word(uint64_t v) {
    a_ = std::rotl((a_ ^ v) * 0xff51afd7ed558ccdull, 29);
    std::swap(a_, b_);
  }
  /// Eight bytes at a time (names and attribute keys are most of a walk).
  void text(std::string_view s) {
    size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
      uint64_t v;
      std::memcpy(&v, s.data() + i, 8);
      word(v);
    }
    uint64_t tail = 0;
    std::memcpy(&tail, s.data() + i, s.size() - i);
    word(tail ^ (uint64_t{s.size()} << 56));
  }
  void attr(const AttrValue &v) {
    if (v.isInt()) {
      word(1);
      word(static_cast<uint64_t>(v.asInt()));
    } else if (v.isBool()) {
      word(2);
      word(v.asBool());
    } else if (v.isFloat()) {
      word(3);
      word(std::bit_cast<uint64_t>(v.asFloat()));
    } else if (v.isTensor()) {
      word(4);
      word(reinterpret_cast<uintptr_t>(v.tensorPtr().get()));
    } else if (v.isList()) {
      word(5);
      word(v.asList().size());
      for (const AttrValue &e : v.asList())
        attr(e);
    } else if (v.isIdent()) {
      word(6);
      text(v.asIdent());
    } else {
      word(7);
      text(v.asString());
    }
  }
  uint64_t value() const {
    uint64_t h = a_ ^ std::rotl(b_ * 0xc4ceb9fe1a85ec53ull, 31);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
  }

private:
  uint64_t a_ = 0x243f6a8885a308d3ull, b_ = 0x13198a2e03707344ull;
};

} // namespace

namespace {

/// One walk for both fingerprints; `uses` is null when only the structure is
/// asked for.
uint64_t fingerprintWalk(const Module &m, Hasher *uses) {
  Hasher h;
  for (const auto &[key, value] : m.options) {
    h.text(key);
    h.text(value);
  }
  h.word(m.numGraphs());
  for (GraphId gid = 0; gid < m.numGraphs(); ++gid) {
    const Graph &g = m.graph(gid);
    h.word(g.alive);
    if (!g.alive)
      continue;
    h.text(g.name);
    h.word(g.parentGraph);
    h.word(g.parentNode);
    h.word(g.capacity());
    for (NodeId id = 0; id < g.capacity(); ++id) {
      const Node &n = g.node(id);
      h.word(n.alive);
      if (!n.alive)
        continue;
      h.text(n.name);
      h.text(n.type);
      h.word(n.inputs.size());
      for (const auto &in : n.inputs)
        h.word(in ? (uint64_t{in->node} << 32 | in->index) : ~uint64_t{0});
      h.word(n.numOutputs);
      h.word(n.attrs.size());
      for (const auto &[key, value] : n.attrs) {
        h.text(key);
        h.attr(value);
      }
      for (GraphId s : n.subgraphs)
        h.word(s);
      h.word(n.ctrlIn.size());
      for (NodeId c : n.ctrlIn)
        h.word(c);
      h.word(n.ctrlOut.size());
      for (NodeId c : n.ctrlOut)
        h.word(c);
      if (!uses)
        continue;
      uses->word(uint64_t{gid} << 32 | id);
      for (const std::vector<InPort> &port : n.consumers) {
        uses->word(port.size());
        for (const InPort &c : port)
          uses->word(uint64_t{c.node} << 32 | c.index);
      }
    }
  }
  return h.value();
}

} // namespace

uint64_t structuralFingerprint(const Module &m) {
  return fingerprintWalk(m, nullptr);
}

ModuleFingerprints moduleFingerprints(const Module &m) {
  Hasher uses;
  ModuleFingerprints f;
  f.structure = fingerprintWalk(m, &uses);
  uses.word(f.structure);
  f.withUseOrder = uses.value();
  return f;
}

} // namespace graphvet
