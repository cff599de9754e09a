// Pass-contract checks layered on the oracle's verdict (see contract.h).
#include "props/contract.h"

#include <string>

namespace graphvet::props {

bool isReservedNode(const Node &n) {
  if (n.attr("no_need_constant_folding"))
    return true;
  const AttrValue *v = n.attr("_cannot_be_deleted");
  return v && ((v->isBool() && v->asBool()) || (v->isString() && v->asString() == "true"));
}

void checkReservedNodesKept(const Module &original, const Module &optimized,
                            oracle::CheckResult &result) {
  if (result.verdict == oracle::Verdict::Invalid)
    return;
  bool missing = false;
  for (GraphId gid : original.canonicalGraphOrder()) {
    const Graph &g = original.graph(gid);
    GraphId other = optimized.findGraph(g.name);
    const Graph *og = other == kNoGraph ? nullptr : &optimized.graph(other);
    for (NodeId id : g.liveNodes()) {
      const Node &n = g.node(id);
      if (!isReservedNode(n) || (og && og->find(n.name) != kNoNode))
        continue;
      std::string qualified = original.qualifiedName(gid, id);
      oracle::Violation v;
      v.kind = std::string(kReservedDeletedKind);
      v.nodes = {qualified};
      v.message = "reserved node " + qualified + " (" + n.type +
                  ") was deleted; its attributes forbid removing it";
      result.violations.push_back(std::move(v));
      missing = true;
    }
  }
  if (missing)
    result.verdict = oracle::Verdict::Violation;
}

} // namespace graphvet::props
