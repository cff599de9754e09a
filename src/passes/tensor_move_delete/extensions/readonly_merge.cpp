// TensorMoveDeletePass: the read-only merge (ExtensionCase::readOnlyMerge,
// stage 3): for a copy nobody writes, may each possible source take the
// copy's place, and which of its writers may run after the copy? Shared by
// ext-readonly-source, ext-readonly-granted-output,
// ext-readonly-control-flow, ext-readers-before-writers and ext-loop-mirror.
//
// Sound because nothing can tell the two buffers apart: every buffer the
// source can be is written only by nodes that run before the copy (or, with
// ext-readers-before-writers, after every reader of the copy), and the copy
// is never written, so every successor reads at its own time exactly the
// bytes the copy took, in both runs. The copy reaches no op demanding
// continuous inputs (no new layout class); when it reaches a graph output,
// the source is a fresh buffer that is no graph output, user input,
// variable or weight and feeds no continuous-input op, so the caller sees
// no new alias and §6 no new conflict.
#include "passes/tensor_move_delete/extension.h"
#include "passes/tensor_move_delete/layout.h"

#include <algorithm>

namespace graphvet::tmd {
namespace {

constexpr size_t kMaxWriters = 64; // writers checked per copy (cost bound)

/// A copy reaching graph outputs may merge into a fresh buffer nobody can
/// observe, or into a user input whose sharing with those outputs the
/// options grant: inputReuseMemIndexes lets any output share it (and so
/// each other); an outputReuseInputMemIndexes pair "j,k" only output j, so
/// the input must not be another graph output already (the merge would
/// make the two outputs alias: found by graphvet fuzz --seed 1).
bool outputsGranted(Analysis &a, const SourceTrace &end, const BufferUses &copy) {
  if (end.kind != SourceKind::UserInput)
    return false;
  if (a.options().grants.reusableInputs.count(end.userInput))
    return true;
  if (!a.bufferFacts(end).rootOutputs.empty())
    return false;
  std::set<uint32_t> allowed = a.options().grants.outputsFor(end.userInput);
  return std::all_of(copy.rootOutputs.begin(), copy.rootOutputs.end(),
                     [&](uint32_t j) { return allowed.count(j) > 0; });
}

/// Source `end` may take the copy's place: it adds the writers that may run
/// after the copy to `late`; false when it may not.
bool mergeSource(ExtensionCase &c, const SourceTrace &end, const BufferUses &copy, bool oneEnd,
                 ReadOnlyMerge &out) {
  Analysis &a = c.a;
  bool granted = !copy.rootOutputs.empty() && outputsGranted(a, end, copy);
  out.grantedOutputs = out.grantedOutputs || granted;
  if (!copy.rootOutputs.empty() && end.kind != SourceKind::Ordinary && !granted)
    return false;
  const BufferFacts &f = a.bufferFacts(end);
  if (f.overBudget || f.writers.size() > kMaxWriters)
    return false;
  std::vector<NodeRef> fWriters = a.effectiveWriters(f.writers, f.writerSlots);
  // A fresh source already bound to the same single graph output as the
  // copy (one branch returns the copy, another the source) gains no alias.
  std::set<uint32_t> both = f.rootOutputs;
  both.insert(copy.rootOutputs.begin(), copy.rootOutputs.end());
  // So are several graph outputs that all take the same port: they are one
  // buffer in every run already.
  bool sameOutput = end.kind == SourceKind::Ordinary && (both.size() == 1 || onePort(a, both));
  if (!copy.rootOutputs.empty() && ((!f.rootOutputs.empty() && !granted && !sameOutput) ||
                                    sourceLayoutAddsConflict(a, c.t, end, copy, oneEnd)))
    return false;
  for (NodeRef w : fWriters)
    if (!a.precedesCopy(c.t, c.trace, w, &copy) && !otherBranch(a.module(), c.t, w) &&
        std::find(out.late.begin(), out.late.end(), w) == out.late.end())
      out.late.push_back(w);
  return true;
}

std::optional<ReadOnlyMerge> readOnlyMergeOf(ExtensionCase &c) {
  const std::vector<SourceTrace> &ends = *c.sources();
  const BufferUses &copy = c.a.tensorMoveUses(c.t);
  if (copy.overBudget ||
      (!copy.continuousUsers.empty() && !continuousMergeAllowed(c.a, c.t, ends, copy)))
    return std::nullopt;
  ReadOnlyMerge out;
  for (const SourceTrace &end : ends)
    if (!mergeSource(c, end, copy, ends.size() == 1, out))
      return std::nullopt;
  return out;
}

} // namespace

const ReadOnlyMerge *ExtensionCase::readOnlyMerge() {
  if (!stage3_) {
    stage3_ = true;
    if (sources() && !written_)
      readOnly_ = readOnlyMergeOf(*this);
  }
  return readOnly_ ? &*readOnly_ : nullptr;
}

} // namespace graphvet::tmd
