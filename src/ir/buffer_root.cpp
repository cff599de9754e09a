// Buffer roots inside one graph and outlined calls (buffer_root.h).
#include "ir/buffer_root.h"

#include "ir/op_library.h"

namespace graphvet {

OutPort bufferRoot(const Graph &g, OutPort p) {
  for (size_t step = 0; step < g.capacity(); ++step) {
    const Node &n = g.node(p.node);
    const std::optional<uint32_t> in = aliasedInput(n, p.index);
    if (!in || *in >= n.inputs.size() || !n.inputs[*in])
      return p;
    p = *n.inputs[*in];
  }
  return p;
}

bool isOutlinedCall(const Node &n) {
  return n.attr("_target") != nullptr || n.attr("_fused") != nullptr;
}

} // namespace graphvet
