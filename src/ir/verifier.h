// The structural verifier: everything graph-format.md calls an error, the
// consistency of subgraph parent indices, connected TensorMove inputs and
// acyclicity. Run by the parser and after every pass.
#pragma once

#include "ir/diagnostic.h"
#include "ir/graph.h"

namespace graphvet {

class ModuleTypes;

/// Returns every error found (empty when the module is valid). Errors carry
/// the location of the offending node (or graph) when it was parsed; without
/// a location the message starts with "graph 'NAME': ".
///
/// Checks, on live graphs and live nodes only (tombstones and removed graphs
/// are skipped):
/// - bookkeeping: inputs name live nodes of the same graph and ports below
///   the producer's output count; consumer and control lists agree with the
///   inputs and with each other (other checks that walk edges are skipped
///   when they do not);
/// - names: node names unique and non-empty per graph, graph names unique,
///   op types, attribute keys and option keys well formed, identifier values
///   printable, `outputs`/`subgraphs` not stored in the attribute map;
/// - acyclicity per graph: "cycle through a -> b -> a", starting at (and
///   located at) the cycle's earliest node;
/// - subgraphs: each referenced by exactly one node, never the root, no
///   cyclic nesting, parent links consistent; If/While hold 2, Case >= 1,
///   PartitionedCall 1, other ops 0; If/Case have a condition input;
/// - subgraph boundaries: subgraph Data carry a `_parent_node_index` unique
///   in the subgraph and below the parent's input count; NetOutput
///   `in<k>._parent_node_index` unique and below the parent's output count;
///   If/Case branches produce the same set of outputs; every consumed output
///   of a call or branch node is produced; While has one output per input
///   and its cond has a condition (NetOutput input 0);
/// - at most one NetOutput per graph; root Data `index` unique, >= 0;
/// - TensorMove has exactly one input, connected;
/// - memory attributes: `outK.ref_input`, `outK.reuse_input_index` name an
///   input; `outK.reuse_input`, `_input_mutable`, `continuous_input`,
///   `_no_padding_continuous_input` are booleans; `ref_var_src_var_name` is a
///   name; `outK.dtype` known, `outK.shape` non-negative ints, the buffer at
///   most kMaxBufferBytes; port attributes `in<k>.*`/`out<k>.*` name an
///   existing port; `max_iterations` >= 0.
/// With `types`, a module that passes gets its inferred types there (the
/// pass manager hands them to the next pass instead of inferring again).
Diagnostics verifyModule(const Module &m, ModuleTypes *types = nullptr);

/// True when `key` is a well-formed attribute or option key:
/// `ident ('.' ident)*`.
bool isValidKey(const std::string &key);

} // namespace graphvet
