// TensorMoveDeletePass: the facts every extension shares about one kept copy
// (ExtensionCase, extension.h), stages 1 and 2. Stage 3, the read-only
// merge, is readonly_merge.cpp.
#include "passes/tensor_move_delete/extension.h"
#include "passes/tensor_move_delete/layout.h"

#include "ir/op_library.h"

namespace graphvet::tmd {

ExtensionCase::ExtensionCase(Analysis &a, NodeRef t, const Verdict &kept) : a(a), t(t), kept(kept) {
  const Node &tm = a.module().graph(t.graph).node(t.node);
  trace = a.trace(t.graph, *tm.inputs[0]);
  if (trace.kind == SourceKind::None && unconnectedOwnBuffer(a.module(), trace)) {
    // A buffer of its own that reads zero bytes and keeps whatever is
    // written into it across runs: an unwritten copy that reaches no graph
    // output (which the caller could overwrite) may read it directly.
    const BufferUses &copy = a.tensorMoveUses(t);
    if (copy.overBudget || !copy.rootOutputs.empty() || !a.effectiveWriters(copy).empty()) {
      closed_ = true;
      return;
    }
    trace.kind = SourceKind::Ordinary;
    trace.failure.clear();
  }
  viaControlFlow = trace.kind == SourceKind::ControlFlow;
  if (viaControlFlow)
    ends_ = a.resolveControlFlow(trace);
  else if (trace.kind != SourceKind::None && !trace.steps.empty())
    ends_ = std::vector<SourceTrace>{trace};
  else
    closed_ = true;
}

const std::vector<SourceTrace> *ExtensionCase::sources() {
  if (!stage2_) {
    stage2_ = true;
    if (loopVariableSource()) {
      // The loop variables themselves, as any source of a copy nobody
      // writes: the While is one of their writers (its write-back), ordered
      // like the others. (A written copy would carry its writes into the
      // variable, and so into the next iteration's reads.)
      ends_ = a.resolveControlFlow(trace, /*allBindings=*/false, /*followLoops=*/true);
      viaLoopVariable_ = true;
    }
    sourcesOk_ = !closed_ && ends_ && !ends_->empty();
    for (size_t i = 0; sourcesOk_ && i < ends_->size(); ++i) {
      const TraceStep &src = (*ends_)[i].steps.back();
      sourcesOk_ = sizeFits(
          a, t, outputBytes(a.module().graph(src.graph).node(src.port.node), src.port.index));
    }
    if (sourcesOk_) {
      const BufferUses &copy = a.tensorMoveUses(t);
      written_ = !copy.overBudget && !a.effectiveWriters(copy, ends_->size() == 1).empty();
    }
  }
  return sourcesOk_ ? &*ends_ : nullptr;
}

bool ExtensionCase::copyWritten() {
  return sources() && written_;
}

} // namespace graphvet::tmd
