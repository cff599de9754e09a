// Pass-contract checks layered on the oracle's verdict (see contract.h).
#include "props/contract.h"

#include "ir/buffer_root.h"

#include "ir/fingerprint.h"
#include "ir/op_library.h"
#include "ir/printer.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
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

void checkOutlinedCallOutputs(const Module &original, const Module &optimized,
                              oracle::CheckResult &result) {
  if (result.verdict == oracle::Verdict::Invalid)
    return;
  bool found = false;
  for (GraphId gid : optimized.canonicalGraphOrder()) {
    const Graph &g = optimized.graph(gid);
    GraphId before = original.findGraph(g.name);
    for (NodeId id : g.liveNodes()) {
      const Node &call = g.node(id);
      if (!isOutlinedCall(call) || call.subgraphs.size() != 1 ||
          (before != kNoGraph && original.graph(before).find(call.name) != kNoNode))
        continue;
      const Graph &body = optimized.graph(call.subgraphs[0]);
      std::map<OutPort, int64_t> owner; // buffer root -> first output bound to it
      auto report = [&](std::string message) {
        oracle::Violation v;
        v.kind = std::string(kRegionAliasKind);
        v.nodes = {optimized.qualifiedName(gid, id)};
        v.message = std::move(message);
        result.violations.push_back(std::move(v));
        found = true;
      };
      for (NodeId r : body.nodesOfType("NetOutput")) {
        const Node &no = body.node(r);
        for (uint32_t k = 0; k < no.inputs.size(); ++k) {
          auto j = no.portIntAttr(false, k, "_parent_node_index");
          if (!j || !no.inputs[k])
            continue;
          OutPort root = bufferRoot(body, *no.inputs[k]);
          const Node &rn = body.node(root.node);
          if (opKind(rn) == OpKind::DataSource)
            report("output " + std::to_string(*j) + " of outlined call " + call.name +
                   " is (a view of) its input " + rn.name +
                   ": a region output must own its "
                   "buffer");
          else if (auto [it, fresh] = owner.emplace(root, *j); !fresh && it->second != *j)
            report("outputs " + std::to_string(it->second) + " and " + std::to_string(*j) +
                   " of outlined call " + call.name + " share the buffer of " + rn.name +
                   ": a value is exported once, and no two outputs alias");
        }
      }
    }
  }
  if (found)
    result.verdict = oracle::Verdict::Violation;
}

void checkIdempotent(const Module &optimized, const PipelineOptions &pipeline,
                     const PipelineResult &first, oracle::CheckResult &result,
                     const Module *input) {
  // An explicit list of several passes runs once and promises no fixpoint
  // (a later pass may open work for an earlier one: a missed rewrite, not a
  // broken pass); a pass alone and a level pipeline do.
  // `--tm-conservative` reproduces the reference design, whose fixpoint is
  // known not to be idempotent (the property tests do not ask it either).
  if (result.verdict == oracle::Verdict::Invalid || !first.ok || pipeline.conservative ||
      (pipeline.passes && pipeline.passes->size() > 1))
    return;
  auto fail = [&](std::string message) {
    oracle::Violation v;
    v.kind = std::string(kNotIdempotentKind);
    v.message = std::move(message);
    result.violations.push_back(std::move(v));
    result.verdict = oracle::Verdict::Violation;
  };
  if (!first.reachedFixpoint) {
    fail(fmt::format("the pipeline still changed the module after {} rounds (maxIterations)",
                     first.iterations));
    return;
  }
  if (input && structuralFingerprint(*input) == structuralFingerprint(optimized))
    return;
  Module again = optimized;
  PipelineOptions rerun = pipeline;
  rerun.optionOverrides.clear(); // already written into the module's options
  // The output was verified after every pass of the first run; a second run
  // that changes nothing leaves it as verified, and one that changes it is
  // the finding, verified or not.
  rerun.verifyEach = false;
  runPipeline(again, rerun);
  // The copy shares the output's objects, so an unchanged fingerprint is an
  // unchanged module; only a change is printed (to compare the text, as a
  // rebuilt equal module prints the same, and to quote the difference).
  if (structuralFingerprint(again) == structuralFingerprint(optimized))
    return;
  PrintOptions print;
  print.digestLargeTensors = true;
  std::string before = printModule(optimized, print), after = printModule(again, print);
  if (before == after)
    return;
  // The first line that differs, to say where the second run acted.
  size_t at = 0;
  while (at < before.size() && at < after.size() && before[at] == after[at])
    ++at;
  size_t lineStart = before.rfind('\n', at == 0 ? 0 : at - 1);
  lineStart = lineStart == std::string::npos ? 0 : lineStart + 1;
  auto lineAt = [&](const std::string &text) {
    size_t end = text.find('\n', lineStart);
    std::string line =
        text.substr(lineStart, end == std::string::npos ? std::string::npos : end - lineStart);
    return line.substr(std::min(line.find_first_not_of(' '), line.size()));
  };
  fail(fmt::format("running the pipeline again on its own output changes it; first "
                   "difference:\n  once:  {}\n  twice: {}",
                   lineAt(before), lineAt(after)));
}

} // namespace graphvet::props
