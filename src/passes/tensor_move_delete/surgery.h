// TensorMoveDeletePass: the deletion surgery -- relinking the copy's
// consumers to its producer, the control edges moved to both sides, and the
// cycle check that refuses a deletion without changing the graph
// (docs/passes/tensor-move-delete.md, "Delete").
#pragma once

#include "passes/tensor_move_delete/analysis.h"
#include "passes/tensor_move_delete/verdict.h"

#include <string>
#include <vector>

namespace graphvet::tmd {

/// Deletes TensorMove `t` as verdict `v` (a deletion) says:
/// 1. adds the scenario-5 edges `v.pending` and the extension's edges
///    `v.orderEdges`, skipping pairs already ordered directly;
/// 2. adds `consumer -> s` for every control successor s of the copy (the
///    consumers now read the source where the copy did); an extension's
///    verdict (`v.looseSuccessors`) may leave out such an edge that would
///    close a cycle, ordering the copy's control predecessors before s;
/// 3. points every consumer at the producer and removes the TensorMove,
///    keeping the analysis's sibling summaries current;
/// 4. re-makes the orderings that ran through it: every control predecessor
///    before every consumer, the producer before every control successor,
///    and, for a copy nobody read, every control predecessor before every
///    control successor.
/// Steps 1-2 run while the TensorMove is in place: when an edge would close
/// a cycle, every edge added is taken out again, the graph is as it was, `v`
/// becomes the keep verdict (rule3-cycle or ctrl-order-cycle) and the result
/// is false. `added` (step 1) and `moved` (steps 2 and 4) get the new edges
/// as the remark names them.
bool deleteTensorMove(Analysis &a, NodeRef t, Verdict &v, std::vector<std::string> &added,
                      std::vector<std::string> &moved);

} // namespace graphvet::tmd
