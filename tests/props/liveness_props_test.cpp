// The liveness analysis behind the missed-optimization figures
// (props::unobservedNodes) must only call a node unobserved when nothing it
// computes can reach the caller. The property makes every such node compute
// something else (a copy or an ordinary op becomes an unknown op, whose output
// is a different mix of the same inputs) and asks the oracle whether any
// caller could tell: it must not.
#include "prop_support.h"

#include "ir/op_library.h"
#include "ir/printer.h"
#include "oracle/check.h"
#include "props/build_module.h"
#include "props/gen_recipe.h"
#include "props/missed.h"

namespace graphvet::props {
namespace {

/// A node whose memory behaviour does not depend on its type beyond "reads
/// its inputs, writes fresh outputs": retyping it changes only the bytes.
bool retypable(const Node &n) {
  OpKind k = opKind(n);
  if (k != OpKind::Ordinary && k != OpKind::Copy)
    return false;
  if (isInputMutable(n) || needsContinuousInput(n) || !refWrittenInputs(n).empty())
    return false;
  for (uint32_t out = 0; out < n.numOutputs; ++out)
    if (aliasedInput(n, out) || refVarSrcName(n, out))
      return false;
  return true;
}

GRAPHVET_PROP(LivenessProps, UnobservedNodesCannotChangeWhatTheCallerSees, 4000, ()) {
  Module m = buildModule(*genRecipe());
  oracle::CheckOptions co;
  co.useZ3 = false;
  co.numStates = 4;
  RC_PRE(oracle::checkOriginal(m, co).verdict == oracle::Verdict::Sound);
  Module perturbed = m;
  size_t changed = 0;
  for (const auto &[g, n] : unobservedNodes(m).nodes) {
    Node &node = perturbed.graph(g).node(n);
    if (!retypable(node))
      continue;
    node.type = "GraphvetPerturbed";
    ++changed;
  }
  RC_TAG(changed == 0 ? "nothing unobserved" : "perturbed");
  oracle::CheckResult r = oracle::checkRefinement(m, perturbed, co);
  RC_LOG() << printModule(m) << "\n" << oracle::formatResult(r);
  RC_ASSERT(r.verdict == oracle::Verdict::Sound);
}

} // namespace
} // namespace graphvet::props
