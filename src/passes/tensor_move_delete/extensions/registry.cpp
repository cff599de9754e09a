// TensorMoveDeletePass: the ONE list of extensions, in the order they are
// tried, and the loop that tries them (extension.h). To add an extension:
// write extensions/ext_NAME.cpp (a class implementing Extension and a
// function returning its one instance), declare that function below, put it
// in the list where it is to be tried, and add the file to
// src/passes/CMakeLists.txt (docs/passes/tensor-move-delete.md, "How to add
// an extension"). Conservative mode runs with the list empty.
#include "passes/tensor_move_delete/extension.h"

namespace graphvet::tmd {

// Each defined in its own file, extensions/ext_*.cpp.
const Extension &siblingHolderExtension();
const Extension &loopVariableExtension();
const Extension &loopWriteBackExtension();
const Extension &loopOverwrittenExtension();
const Extension &readOnlySourceExtension();
const Extension &readOnlyGrantedOutputExtension();
const Extension &readOnlyControlFlowExtension();
const Extension &readersBeforeWritersExtension();
const Extension &writtenCopyExtension();
const Extension &scribbledPairExtension();
const Extension &deadLoopPairExtension();
const Extension &loopMirrorExtension();

const Extensions &extensionsFor(const TensorMoveDeleteOptions &options) {
  static const Extensions none;
  // The order decides which extension names a deletion when several could
  // (the first plan wins), and when each shared fact of the ExtensionCase is
  // computed; it is the order the pass has always tried them in. The
  // preconditions split the list into cases: a loop's variable the trace
  // ends at (loop-variable, loop-write-back, loop-overwritten); then, the
  // sources known, a copy nobody writes (the read-only ones,
  // readers-before-writers) or a written copy (written-copy, scribbled-pair,
  // dead-loop-pair); loop-mirror comes last in either.
  static const Extensions all = {
      &siblingHolderExtension(), // widens scenario 5; never tried after a keep
      &loopVariableExtension(),
      &loopWriteBackExtension(),
      &loopOverwrittenExtension(),
      &readOnlySourceExtension(),
      &readOnlyGrantedOutputExtension(),
      &readOnlyControlFlowExtension(),
      &readersBeforeWritersExtension(),
      &writtenCopyExtension(),
      &scribbledPairExtension(),
      &deadLoopPairExtension(),
      &loopMirrorExtension(),
  };
  return options.conservative ? none : all;
}

const Extension *holderWidening(const Extensions &extensions) {
  for (const Extension *e : extensions)
    if (e->widensHolderSiblings())
      return e;
  return nullptr;
}

std::optional<Verdict> tryExtensions(Analysis &a, const Extensions &extensions, NodeRef t,
                                     const Verdict &kept) {
  if (extensions.empty())
    return std::nullopt;
  ExtensionCase c(a, t, kept);
  if (c.closed())
    return std::nullopt;
  for (const Extension *e : extensions) {
    if (!e->applies(c))
      continue;
    std::optional<Plan> plan = e->plan(c);
    if (!plan)
      continue;
    // The extension's checks already order every writer of the source
    // against the copy's readers (looseSuccessors); its remark names the
    // rule that kept the copy.
    Verdict v;
    v.outcome = Outcome::Delete;
    v.rule = std::string(e->tag());
    v.looseSuccessors = true;
    v.reason = kept.rule;
    v.orderEdges = std::move(plan->edges);
    v.trace = std::move(c.trace);
    v.ends = std::move(plan->ends);
    v.plannedBy = e;
    return v;
  }
  return std::nullopt;
}

} // namespace graphvet::tmd
