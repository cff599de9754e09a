// TensorMoveDeletePass: a loop body's copy of its loop variable, which the
// write-back replaces at the end of each iteration -- the analysis shared
// by ext-loop-write-back (the body returns the copy) and
// ext-loop-overwritten (the body returns another buffer it made).
#pragma once

#include "passes/tensor_move_delete/extension.h"

namespace graphvet::tmd {

/// The plan for copy `c.t` in a While body, a copy of the body's loop
/// variable L (the While's input p), when the body's result for p is the
/// copy itself (`returnsCopy`) or another buffer made in the body (not L);
/// nullopt when the result is the other kind, or L could tell.
std::optional<Plan> planLoopWriteBack(ExtensionCase &c, bool returnsCopy);

} // namespace graphvet::tmd
