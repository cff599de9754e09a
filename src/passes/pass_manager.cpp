// The pass table and the pipeline driver; see pass_manager.h.
#include "passes/pass_manager.h"

#include "ir/fingerprint.h"
#include "ir/verifier.h"
#include "passes/annotate_used_memory.h"
#include "passes/combine_parallel_dense.h"
#include "passes/convert_layout.h"
#include "passes/cse.h"
#include "passes/dce.h"
#include "passes/fold_constant.h"
#include "passes/fold_scale_axis.h"
#include "passes/fuse_ops.h"
#include "passes/legalize.h"
#include "passes/partition_graph.h"
#include "passes/reuse_options.h"
#include "passes/simplify/simplify.h"
#include "passes/simplify_inference.h"
#include "passes/tensor_move_delete.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <set>
#include <tuple>

namespace graphvet {
namespace {

PassStats runDcePass(Module &m, PassContext &ctx) {
  DceOptions options;
  options.naive = ctx.options.naiveVariants;
  DceStats s = runDce(m, options, &ctx.remarks);
  PassStats stats;
  stats.counters["nodes_before"] = s.nodesBefore;
  stats.counters["removed"] = s.removed;
  stats.counters["kept_for_effect"] = s.keptForEffect;
  stats.counters["subgraphs_removed"] = s.subgraphsRemoved;
  stats.counters["dead_outputs_removed"] = s.deadOutputsRemoved;
  stats.counters["unused_inputs_removed"] = s.unusedInputsRemoved;
  stats.counters["loop_outputs_kept"] = s.loopOutputsKept;
  stats.counters["order_edges_added"] = s.orderEdgesAdded;
  return stats;
}

PassStats runAnnotateUsedMemoryPass(Module &m, PassContext &ctx) {
  AnnotateUsedMemoryStats s = runAnnotateUsedMemory(m, AnnotateUsedMemoryOptions{}, &ctx.remarks);
  PassStats stats;
  stats.counters["annotated"] = s.annotated;
  stats.counters["changed"] = s.changed;
  stats.counters["removed"] = s.removed;
  stats.counters["skipped"] = s.skipped;
  stats.counters["peak_bytes"] = s.peak;
  stats.counters["steps"] = s.steps;
  return stats;
}

PassStats runSimplifyPass(Module &m, PassContext &ctx) {
  SimplifyOptions options;
  options.inputTypes = ctx.inputTypes;
  SimplifyStats s = runSimplify(m, options, &ctx.remarks);
  PassStats stats;
  stats.counters["matched"] = s.matched;
  stats.counters["rewritten"] = s.rewritten;
  stats.counters["refused"] = s.refused;
  stats.counters["erased"] = s.erased;
  stats.counters["sweeps"] = s.sweeps;
  stats.counters["bound_reached"] = s.boundReached ? 1 : 0;
  for (const auto &[rule, count] : s.perRule)
    stats.counters["rule." + rule] = count;
  return stats;
}

void optionWarning(Module &m, const std::string &key, const std::string &expected,
                   Diagnostics &warnings) {
  Diagnostic d;
  if (auto loc = m.optionLocs.find(key); loc != m.optionLocs.end())
    d.loc = loc->second;
  d.severity = Severity::Warning;
  d.message = "option " + key + " = \"" + m.options[key] + "\": expected " + expected +
              "; the option is ignored";
  warnings.push_back(std::move(d));
}

/// A `true`/`false` module option; absent or malformed (warned) keeps `value`.
void readBoolOption(Module &m, std::string_view key, bool &value, Diagnostics &warnings) {
  auto it = m.options.find(std::string(key));
  if (it == m.options.end())
    return;
  if (it->second == "true" || it->second == "false")
    value = it->second == "true";
  else
    optionWarning(m, it->first, "true or false", warnings);
}

PassStats runFoldConstantPass(Module &m, PassContext &ctx) {
  FoldConstantOptions options;
  if (auto it = m.options.find(std::string(kFoldConstantMaxElementsOption));
      it != m.options.end()) {
    const std::string &text = it->second;
    int64_t value = -1;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc() && end == text.data() + text.size() && value >= 0)
      options.maxElements = value;
    else
      optionWarning(m, it->first, "a non-negative decimal integer", ctx.warnings);
  }
  readBoolOption(m, kFoldConstantShapeOpsOption, options.foldShapeOps, ctx.warnings);
  readBoolOption(m, kFoldConstantInlineIfOption, options.inlineIf, ctx.warnings);
  FoldConstantStats s = runFoldConstant(m, options, &ctx.remarks);
  PassStats stats;
  stats.counters["folded"] = s.folded;
  stats.counters["shape_folded"] = s.shapeFolded;
  stats.counters["ifs_inlined"] = s.ifsInlined;
  stats.counters["nodes_inlined"] = s.nodesInlined;
  stats.counters["consts_created"] = s.constsCreated;
  stats.counters["copies_created"] = s.copiesCreated;
  stats.counters["consts_removed"] = s.constsRemoved;
  for (const auto &[tag, count] : s.refused)
    stats.counters["refused_" + tag] = count;
  stats.counters["const_bytes_before"] = s.constBytesBefore;
  stats.counters["const_bytes_after"] = s.constBytesAfter;
  return stats;
}

PassStats runCsePass(Module &m, PassContext &ctx) {
  CseOptions options;
  options.naive = ctx.options.naiveVariants;
  CseStats s = runCse(m, options, &ctx.remarks);
  PassStats stats;
  stats.counters["candidates"] = s.candidates;
  stats.counters["merged"] = s.merged;
  stats.counters["refused"] = s.refused;
  return stats;
}

PassStats runSimplifyInferencePass(Module &m, PassContext &ctx) {
  SimplifyInferenceOptions options;
  readBoolOption(m, kSimplifyInferenceBatchNormOption, options.batchNorm, ctx.warnings);
  readBoolOption(m, kSimplifyInferenceInstanceNormOption, options.instanceNorm, ctx.warnings);
  readBoolOption(m, kSimplifyInferenceLayerNormOption, options.layerNorm, ctx.warnings);
  options.inputTypes = ctx.inputTypes;
  SimplifyInferenceStats s = runSimplifyInference(m, options, &ctx.remarks);
  PassStats stats;
  stats.counters["batch_norms"] = s.batchNorms;
  stats.counters["instance_norms"] = s.instanceNorms;
  stats.counters["layer_norms"] = s.layerNorms;
  stats.counters["nodes_created"] = s.nodesCreated;
  stats.counters["consts_removed"] = s.constsRemoved;
  for (const auto &[tag, count] : s.refused)
    stats.counters["refused_" + tag] = count;
  return stats;
}

PassStats runCombineParallelDensePass(Module &m, PassContext &ctx) {
  CombineParallelDenseOptions options;
  if (auto it = m.options.find(std::string(kCombineParallelDenseMinBranchesOption));
      it != m.options.end()) {
    const std::string &text = it->second;
    int64_t value = -1;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc() && end == text.data() + text.size() && value >= 2)
      options.minNumBranches = value;
    else
      optionWarning(m, it->first, "a decimal integer of at least 2", ctx.warnings);
  }
  options.inputTypes = ctx.inputTypes;
  CombineParallelDenseStats s = runCombineParallelDense(m, options, &ctx.remarks);
  PassStats stats;
  stats.counters["groups_combined"] = s.groupsCombined;
  stats.counters["branches_combined"] = s.branchesCombined;
  stats.counters["follow_ons_combined"] = s.followOnsCombined;
  stats.counters["nodes_created"] = s.nodesCreated;
  stats.counters["consts_removed"] = s.constsRemoved;
  for (const auto &[tag, count] : s.refused)
    stats.counters["refused_" + tag] = count;
  return stats;
}

PassStats runFoldScaleAxisPass(Module &m, PassContext &ctx) {
  FoldScaleAxisOptions options;
  readBoolOption(m, kFoldScaleAxisBackwardOption, options.backward, ctx.warnings);
  readBoolOption(m, kFoldScaleAxisForwardOption, options.forward, ctx.warnings);
  options.inputTypes = ctx.inputTypes;
  FoldScaleAxisStats s = runFoldScaleAxis(m, options, &ctx.remarks);
  PassStats stats;
  stats.counters["backward_folds"] = s.backwardFolds;
  stats.counters["forward_folds"] = s.forwardFolds;
  stats.counters["adds_absorbed"] = s.addsAbsorbed;
  stats.counters["consts_created"] = s.constsCreated;
  stats.counters["consts_removed"] = s.constsRemoved;
  for (const auto &[tag, count] : s.refused)
    stats.counters["refused_" + tag] = count;
  return stats;
}

PassStats runFuseOpsPass(Module &m, PassContext &ctx) {
  FuseOpsOptions options;
  options.naive = ctx.options.naiveVariants;
  options.inputTypes = ctx.inputTypes;
  auto readLimit = [&](std::string_view key, int64_t &value) {
    auto it = m.options.find(std::string(key));
    if (it == m.options.end())
      return;
    const std::string &text = it->second;
    int64_t v = -1;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc() && end == text.data() + text.size() && v >= 1)
      value = v;
    else
      optionWarning(m, it->first, "a decimal integer of at least 1", ctx.warnings);
  };
  readLimit(kFuseOpsMaxDepthOption, options.maxFuseDepth);
  readLimit(kFuseOpsMaxArgsOption, options.maxArgs);
  FuseOpsStats s = runFuseOps(m, options, &ctx.remarks);
  PassStats stats;
  stats.counters["groups"] = s.groups;
  stats.counters["ops_fused"] = s.opsFused;
  stats.counters["consts_copied"] = s.constsCopied;
  for (const auto &[tag, count] : s.refused)
    stats.counters["refused_" + tag] = count;
  return stats;
}

PassStats runConvertLayoutPass(Module &m, PassContext &ctx) {
  ConvertLayoutOptions options;
  if (auto it = m.options.find(std::string(kConvertLayoutTargetOption)); it != m.options.end()) {
    if (it->second == "NHWC" || it->second == "nhwc")
      options.target = TargetLayout::NHWC;
    else if (it->second == "NCHW" || it->second == "nchw")
      options.target = TargetLayout::NCHW;
    else
      optionWarning(m, it->first, "NHWC or NCHW", ctx.warnings);
  }
  // A level pipeline holds convert-layout for the graphs that ask for a
  // target; without one it stays silent (named in --passes, it says why it
  // did nothing).
  if (!options.target && !ctx.options.passes)
    return PassStats{};
  ConvertLayoutStats s = runConvertLayout(m, options, &ctx.remarks);
  PassStats stats;
  stats.counters["ops_converted"] = s.opsConverted;
  stats.counters["ops_propagated"] = s.opsPropagated;
  stats.counters["transposes_inserted"] = s.transposesInserted;
  stats.counters["transposes_cancelled"] = s.transposesCancelled;
  stats.counters["consts_transposed"] = s.constsTransposed;
  stats.counters["reshapes_inserted"] = s.reshapesInserted;
  stats.counters["transposes_left"] = s.transposesLeft;
  for (const auto &[tag, count] : s.refused)
    stats.counters["refused_" + tag] = count;
  return stats;
}

/// The target a pass names with the option `targetKey`, from the shipped
/// table or from a user's file (option `fileKey`, loaded into `userTable`,
/// which the result points into). A missing or unknown target, or a malformed
/// file, is an error diagnostic (the pipeline stops, exit 2): running for a
/// target nobody named is a bad command line. Shared by legalize and
/// partition-graph, which read the same table.
const Target *readTarget(Module &m, PassContext &ctx, std::string_view pass,
                         std::string_view targetKey, std::string_view fileKey,
                         std::optional<TargetTable> &userTable) {
  auto fail = [&](std::string_view key, std::string message) -> const Target * {
    Diagnostic d;
    if (auto loc = m.optionLocs.find(std::string(key)); loc != m.optionLocs.end())
      d.loc = loc->second;
    d.message = fmt::format("{}: {}", pass, message);
    ctx.warnings.push_back(std::move(d));
    return nullptr;
  };
  const TargetTable *table = &builtinTargetTable();
  if (auto it = m.options.find(std::string(fileKey)); it != m.options.end()) {
    Diagnostics errors;
    userTable = loadTargetTable(it->second, errors);
    if (!userTable)
      return fail(fileKey, errors.empty() ? it->second : errors[0].message);
    table = &*userTable;
  }
  auto it = m.options.find(std::string(targetKey));
  if (it == m.options.end())
    return fail(targetKey, fmt::format("no target: give --option {}=NAME (known: {})", targetKey,
                                       table->names()));
  const Target *target = table->find(it->second);
  if (!target)
    return fail(targetKey,
                fmt::format("unknown target \"{}\" (known: {})", it->second, table->names()));
  return target;
}

PassStats runLegalizePass(Module &m, PassContext &ctx) {
  std::optional<TargetTable> userTable;
  const Target *target = readTarget(m, ctx, kLegalizeName, kLegalizeTargetOption,
                                    kLegalizeTargetsFileOption, userTable);
  if (!target)
    return PassStats{};
  LegalizeStats s = runLegalize(m, LegalizeOptions{target}, &ctx.remarks);
  PassStats stats;
  stats.counters["unsupported"] = s.unsupported;
  stats.counters["nodes_created"] = s.nodesCreated;
  for (const auto &[op, count] : s.legalized)
    stats.counters["legalized_" + op] = count;
  for (const auto &[tag, count] : s.refused)
    stats.counters["refused_" + tag] = count;
  return stats;
}

PassStats runPartitionGraphPass(Module &m, PassContext &ctx) {
  std::optional<TargetTable> userTable;
  const Target *target = readTarget(m, ctx, kPartitionGraphName, kPartitionGraphTargetOption,
                                    kPartitionGraphTargetsFileOption, userTable);
  if (!target)
    return PassStats{};
  PartitionGraphStats s = runPartitionGraph(m, PartitionGraphOptions{target}, &ctx.remarks);
  PassStats stats;
  stats.counters["regions"] = s.regions;
  stats.counters["ops_partitioned"] = s.opsPartitioned;
  stats.counters["consts_moved"] = s.constsMoved;
  stats.counters["consts_cloned"] = s.constsCloned;
  stats.counters["region_inputs"] = s.regionInputs;
  stats.counters["region_outputs"] = s.regionOutputs;
  for (const auto &[tag, count] : s.refused)
    stats.counters["refused_" + tag] = count;
  return stats;
}

PassStats runTensorMoveDeletePass(Module &m, PassContext &ctx) {
  TensorMoveDeleteOptions options;
  options.grants = readReuseGrants(m.options, m.optionLocs, ctx.warnings);
  // The reference design's narrower scope: from the pipeline (graphvet opt
  // --tm-conservative) or the module option (also `--option KEY=true`).
  options.conservative = ctx.options.conservative;
  if (auto it = m.options.find(std::string(kTensorMoveDeleteConservativeOption));
      it != m.options.end()) {
    if (it->second == "true") {
      options.conservative = true;
    } else if (it->second != "false") {
      Diagnostic d;
      if (auto loc = m.optionLocs.find(it->first); loc != m.optionLocs.end())
        d.loc = loc->second;
      d.severity = Severity::Warning;
      d.message = "option " + it->first + " = \"" + it->second +
                  "\": expected true or false; the option is ignored";
      ctx.warnings.push_back(std::move(d));
    }
  }
  TensorMoveDeleteStats s = runTensorMoveDelete(m, options, &ctx.remarks);
  PassStats stats;
  stats.counters["tensor_moves"] = s.tensorMoves;
  stats.counters["deleted"] = s.deleted;
  stats.counters["kept"] = s.kept;
  stats.counters["ctrl_edges_added"] = s.ctrlEdgesAdded;
  return stats;
}

// In pipeline order (midend-passes.md): -O1 is simplify, fold-constant, dce;
// -O2 adds cse, simplify-inference and tensor-move-delete; -O3 adds fold-scale-axis,
// combine-parallel-dense, convert-layout (which acts only with a target layout) and fuse-ops.
// fuse-ops comes last among them, after tensor-move-delete: a fused group hides its ops from
// the passes that rewrite single ops, so everything else has had its turn. legalize,
// partition-graph and annotate-used-memory run only when named (the first two need a target).
constexpr PassInfo kPasses[] = {
    {kSimplifyName,
     "rewrite redundant ops by the declarative rule table to a fixpoint "
     "(docs/passes/simplify.md)",
     1, runSimplifyPass, NumericContract::Exact},
    {kFoldConstantName,
     "evaluate nodes whose inputs are constants (and Shape/Size of static shapes) with the "
     "interpreter's kernels; inline an If with a constant condition (docs/passes/fold-constant.md)",
     1, runFoldConstantPass, NumericContract::Exact,
     "fold_constant.max_elements=N: largest folded result in elements, unless the fold shrinks "
     "the constant bytes (default 1048576)\n"
     "fold_constant.fold_shape_ops=true|false: fold Shape/Size of any statically typed tensor "
     "(default true)\n"
     "fold_constant.inline_if=true|false: inline the taken branch of an If with a constant "
     "condition (default true)"},
    {kDceName,
     "remove nodes whose results reach no output and that have no effect, unread subgraph "
     "results and unread call inputs (docs/passes/dce.md)",
     1, runDcePass, NumericContract::Exact},
    {kCseName,
     "merge nodes with the same op, equal attributes and the same inputs "
     "(docs/passes/cse.md)",
     2, runCsePass, NumericContract::Exact},
    {kSimplifyInferenceName,
     "rewrite inference BatchNormalization (folded per-channel Mul and Add), "
     "InstanceNormalization and LayerNormalization into element-wise arithmetic in the data's "
     "dtype (docs/passes/simplify-inference.md)",
     2, runSimplifyInferencePass, NumericContract::Approx,
     "simplify_inference.batch_norm=true|false: rewrite inference BatchNormalization "
     "(default true)\n"
     "simplify_inference.instance_norm=true|false: rewrite InstanceNormalization (default true)\n"
     "simplify_inference.layer_norm=true|false: rewrite LayerNormalization (default true)"},
    {kFoldScaleAxisName,
     "fold a per-channel Mul by a constant (and its Add) into the weights and bias of the "
     "Conv/ConvTranspose/Gemm/MatMul before it, or into the weights of the Conv/Gemm/MatMul "
     "after it (docs/passes/fold-scale-axis.md)",
     3, runFoldScaleAxisPass, NumericContract::Approx,
     "fold_scale_axis.backward=true|false: fold into the producer's output channels "
     "(default true)\n"
     "fold_scale_axis.forward=true|false: fold into the consumer's input channels "
     "(default true)"},
    {kCombineParallelDenseName,
     "combine MatMul/Gemm branches on one input into one op on concatenated weights and a "
     "Split, with their matching element-wise follow-ons (docs/passes/combine-parallel-dense.md)",
     3, runCombineParallelDensePass, NumericContract::Exact,
     "combine_parallel_dense.min_num_branches=N: fewest branches of one signature to combine, "
     "at least 2 (default 3)"},
    {kConvertLayoutName,
     "rewrite layout-sensitive ops (Conv, pools, norms, Resize, DepthToSpace...) to a target "
     "layout, weights transposed at compile time, the layout carried through layout-agnostic ops "
     "so inverse Transposes cancel; graph inputs and outputs keep theirs "
     "(docs/passes/convert-layout.md)",
     3, runConvertLayoutPass, NumericContract::Exact,
     "convert_layout.target=NHWC|NCHW: the layout to convert to (no default: without it the "
     "pass does nothing)"},
    {kLegalizeName,
     "rewrite ops the target does not support into exact equivalents it does: Gemm, "
     "HardSwish, Clip of f16/bf16, Conv channels padded to the target's multiple "
     "(docs/passes/legalize.md)",
     kExplicitOnly, runLegalizePass, NumericContract::Exact,
     "legalize.target=NAME: the target of the target table (required; shipped: dsp, npu)\n"
     "legalize.targets_file=PATH: read the target table from PATH instead of the shipped one"},
    {kPartitionGraphName,
     "outline maximal convex regions of the ops a target supports into PartitionedCalls marked "
     "_target, constants moved in, each outside use one call output "
     "(docs/passes/partition-graph.md)",
     kExplicitOnly, runPartitionGraphPass, NumericContract::Exact,
     "partition_graph.target=NAME: the target of the target table (required; shipped: dsp, "
     "npu)\n"
     "partition_graph.targets_file=PATH: read the target table from PATH instead of the "
     "shipped one"},
    {kTensorMoveDeleteName,
     "delete TensorMove copies proven redundant (scenarios 1-5, Rules 1-5 of "
     "docs/passes/tensor-move-delete.md)",
     2, runTensorMoveDeletePass, NumericContract::Exact,
     "tensor_move_delete.conservative=true|false: decide like the reference design, no "
     "extension (default false)"},
    {kFuseOpsName,
     "group ops into fused kernels by TVM's pattern kinds over the post-dominator tree and "
     "outline each group into a PartitionedCall marked _fused (docs/passes/fuse-ops.md)",
     3, runFuseOpsPass, NumericContract::Exact,
     "fuse_ops.max_fuse_depth=N: most ops in one group, at least 1 (default 256)\n"
     "fuse_ops.max_args=N: most values one group reads from outside, constants copied in not "
     "counted, at least 1 (default 256)"},
    {kAnnotateUsedMemoryName,
     "annotate every node with the bytes of fresh buffers live while it runs under the "
     "reference schedule (_used_memory) and the root NetOutput with the peak (_peak_memory) "
     "(docs/passes/annotate-used-memory.md)",
     kExplicitOnly, runAnnotateUsedMemoryPass, NumericContract::Exact},
};

std::string knownPasses() {
  std::string s;
  for (const PassInfo &p : kPasses)
    s += (s.empty() ? "" : ", ") + std::string(p.name);
  return s;
}

Diagnostic error(std::string message) {
  Diagnostic d;
  d.message = std::move(message);
  return d;
}

} // namespace

std::span<const PassInfo> allPasses() {
  return kPasses;
}

const PassInfo *findPass(std::string_view name) {
  for (const PassInfo &p : kPasses)
    if (p.name == name)
      return &p;
  return nullptr;
}

std::string canonicalOptionKey(std::string_view key) {
  size_t dot = key.find('.');
  std::string_view head = key.substr(0, dot);
  if (dot == std::string_view::npos || head.find('-') == std::string_view::npos ||
      findPass(head) == nullptr)
    return std::string(key);
  std::string out(key);
  std::replace(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(dot), '-', '_');
  return out;
}

void writeOptionOverrides(Module &m, const PipelineOptions &opts) {
  for (const auto &[key, value] : opts.optionOverrides) {
    m.options[key] = value;
    m.optionLocs.erase(key); // the value no longer comes from the file
  }
}

std::vector<const PassInfo *> assemblePipeline(const PipelineOptions &opts, Diagnostics &errors) {
  size_t before = errors.size();
  if (opts.optLevel > kMaxOptLevel)
    errors.push_back(error("optimization level " + std::to_string(opts.optLevel) +
                           " is out of range (0.." + std::to_string(kMaxOptLevel) + ")"));
  std::vector<const PassInfo *> pipeline;
  if (opts.passes) {
    for (const std::string &name : *opts.passes) {
      if (const PassInfo *p = findPass(name))
        pipeline.push_back(p);
      else
        errors.push_back(
            error("unknown pass '" + name + "' (known passes: " + knownPasses() + ")"));
    }
  } else {
    for (const PassInfo &p : kPasses)
      if (p.minLevel <= opts.optLevel)
        pipeline.push_back(&p);
  }
  for (const std::string &name : opts.disabled) {
    if (!findPass(name)) {
      errors.push_back(error("unknown pass '" + name +
                             "' in --disable-pass (known "
                             "passes: " +
                             knownPasses() + ")"));
      continue;
    }
    std::erase_if(pipeline, [&](const PassInfo *p) { return p->name == name; });
  }
  if (errors.size() != before)
    pipeline.clear();
  return pipeline;
}

NumericContract pipelineContract(const PipelineOptions &opts) {
  Diagnostics ignored;
  for (const PassInfo *p : assemblePipeline(opts, ignored))
    if (p->contract == NumericContract::Approx)
      return NumericContract::Approx;
  return NumericContract::Exact;
}

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

} // namespace

PipelineResult runPipeline(Module &m, const PipelineOptions &opts) {
  const Clock::time_point start = Clock::now();
  PipelineResult result;
  std::vector<const PassInfo *> pipeline = assemblePipeline(opts, result.diagnostics);
  if (!result.diagnostics.empty()) {
    result.ok = false;
    return result;
  }
  writeOptionOverrides(m, opts);
  // The fingerprint of the module as the verifier last accepted it: a pass
  // that leaves the module in that state needs no second verification (the
  // confirming round of a level pipeline, a pass with nothing to do). The
  // input itself counts as unverified, so the first pass is always followed
  // by the verifier.
  std::optional<uint64_t> verifiedState;
  // A level pipeline skips a pass whose input is exactly the output of its
  // own last run (no pass changed the module since): the passes are
  // deterministic and idempotent (the campaigns check it, checkIdempotent),
  // so it would change nothing. That happens only in a round that changes
  // nothing (a pass after the first change of a round sees a new module), the
  // confirming round, whose remarks and counts are dropped anyway: the
  // result is the same. The reference design of --tm-conservative is not
  // idempotent, so it runs every pass. `lastOutput[i]` is the module's
  // fingerprint right after pipeline[i] last ran; `current` the module's now.
  const bool levelPipeline = !opts.passes.has_value();
  const bool skipRepeats = levelPipeline && !opts.conservative;
  const bool fingerprintEach = skipRepeats || opts.verifyEach;
  std::vector<std::optional<ModuleFingerprints>> lastOutput(pipeline.size());
  std::optional<ModuleFingerprints> current;
  // The types of the module as it now is, when known: the verifier's (it
  // infers them anyway), or those a pass inferred of its input when it then
  // changed nothing (its fingerprints before and after are equal). The next
  // pass that reads types takes them instead of inferring again.
  std::shared_ptr<const ModuleTypes> typesOfCurrent;
  // One round of the pipeline on `target`; false when the verifier failed.
  auto runRound = [&](Module &target, std::vector<Remark> &remarks,
                      std::map<std::string, PassStats> &stats) {
    PassContext ctx{opts, remarks, result.warnings};
    for (size_t i = 0; i < pipeline.size(); ++i) {
      const PassInfo *p = pipeline[i];
      if (skipRepeats && current && lastOutput[i] == current) {
        ++result.skippedPassRuns;
        result.passSeconds[std::string(p->name)] += 0;
        continue;
      }
      const std::optional<ModuleFingerprints> before = current;
      // Moved, not shared: the pass may release them once it has changed
      // the module (no two module types alive at once).
      TypeHandoff handoff{std::move(typesOfCurrent), nullptr, false};
      ctx.inputTypes = &handoff;
      const Clock::time_point passStart = Clock::now();
      PassStats ps = p->run(target, ctx);
      ctx.inputTypes = nullptr;
      // Still the module's types only if the pass changed nothing (below):
      // the ones it inferred or took, or the given ones it never asked for.
      std::shared_ptr<const ModuleTypes> typesOfInput =
          handoff.ofInput ? std::move(handoff.ofInput) : std::move(handoff.given);
      result.passSeconds[std::string(p->name)] += secondsSince(passStart);
      // A pass that cannot run as asked (legalize without a known target) reports an
      // error-severity diagnostic: the pipeline stops as for an unknown pass name.
      if (hasErrors(result.warnings)) {
        result.ok = false;
        std::erase_if(result.warnings, [&](Diagnostic &w) {
          if (w.severity != Severity::Error)
            return false;
          result.diagnostics.push_back(std::move(w));
          return true;
        });
        return false;
      }
      for (const auto &[key, value] : ps.counters)
        stats[std::string(p->name)].counters[key] += value;
      if (!fingerprintEach)
        continue;
      const Clock::time_point keyStart = Clock::now();
      current = moduleFingerprints(target);
      lastOutput[i] = current;
      result.fixpointSeconds += secondsSince(keyStart);
      // Types are kept by node id; the fingerprint covers every graph's id
      // slots and each node's id, so a node rebuilt as it was differs.
      if (before == current)
        typesOfCurrent = std::move(typesOfInput);
      if (!opts.verifyEach || verifiedState == current->structure)
        continue;
      const Clock::time_point verifyStart = Clock::now();
      ModuleTypes types;
      Diagnostics errors = verifyModule(target, &types);
      result.verifySeconds += secondsSince(verifyStart);
      if (!hasErrors(errors)) {
        verifiedState = current->structure;
        typesOfCurrent = std::make_shared<const ModuleTypes>(std::move(types));
      }
      if (hasErrors(errors)) {
        result.ok = false;
        result.failedPass = std::string(p->name);
        for (Diagnostic &d : errors)
          d.message = "after pass " + std::string(p->name) + ": " + d.message;
        result.diagnostics = std::move(errors);
        return false;
      }
    }
    return true;
  };
  result.iterations = 1;
  if (!runRound(m, result.remarks, result.stats) || opts.passes) {
    result.totalSeconds = secondsSince(start);
    return result;
  }
  // A level pipeline: another round while the last one changed the module.
  // A further round runs in place (a round that changes nothing leaves a
  // module that prints the same, so no copy is needed); its remarks and
  // counts are kept only if it changed something, so the confirming round
  // adds no repeated remarks or counts.
  const unsigned bound = std::max(1u, opts.maxIterations);
  // The fixpoint test compares structural fingerprints (the last pass's,
  // when the passes were fingerprinted).
  auto fingerprintNow = [&] {
    const Clock::time_point keyStart = Clock::now();
    const uint64_t key = current ? current->structure : structuralFingerprint(m);
    result.fixpointSeconds += secondsSince(keyStart);
    return key;
  };
  uint64_t before = fingerprintNow();
  result.reachedFixpoint = false;
  while (result.iterations < bound) {
    std::vector<Remark> remarks;
    std::map<std::string, PassStats> stats;
    ++result.iterations;
    if (!runRound(m, remarks, stats)) {
      result.totalSeconds = secondsSince(start);
      return result;
    }
    const uint64_t after = fingerprintNow();
    const bool same = after == before;
    if (same) {
      result.reachedFixpoint = true;
      break;
    }
    before = after;
    // A decision repeated in a later round (a copy kept again) is reported once.
    std::set<std::tuple<std::string, std::string, std::string, std::string, std::string>> seen;
    for (const Remark &r : result.remarks)
      seen.insert({r.pass, r.graph, r.node, r.decision, r.message});
    for (Remark &r : remarks)
      if (seen.insert({r.pass, r.graph, r.node, r.decision, r.message}).second)
        result.remarks.push_back(std::move(r));
    for (const auto &[pass, ps] : stats)
      for (const auto &[key, value] : ps.counters)
        result.stats[pass].counters[key] += value;
  }
  // Later rounds repeat the warnings of the first (a malformed option).
  std::set<std::tuple<uint32_t, uint32_t, std::string>> seenWarnings;
  std::erase_if(result.warnings, [&](const Diagnostic &w) {
    return !seenWarnings.insert({w.loc.line, w.loc.col, w.message}).second;
  });
  result.totalSeconds = secondsSince(start);
  if (result.reachedFixpoint)
    return result;
  Diagnostic d;
  d.severity = Severity::Warning;
  d.message = "the -O" + std::to_string(opts.optLevel) + " pipeline still changed the graph in " +
              "its last round; stopped by its bound of " + std::to_string(bound) + " rounds";
  result.warnings.push_back(std::move(d));
  return result;
}

} // namespace graphvet
