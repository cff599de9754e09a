// graphvet show: draws a graph (DOT or SVG) with every output labelled by the
// buffer the memory plan binds it to, so aliasing is visible at a glance.
#include "ir/dot.h"
#include "ir/graphviz.h"
#include "oracle/memory_plan.h"
#include "tools/graphvet/commands.h"

#include <iostream>
#include <memory>
#include <sstream>

namespace graphvet::cli {
namespace {

struct ShowOptions {
  std::string file;
  std::string format = "svg";
  std::string output;
  std::vector<std::string> highlight;
};

// Resolves "name" (root) or "graph/name" to a (graph, node) pair.
std::optional<std::pair<GraphId, NodeId>> resolveNode(const Module &m, const std::string &spec) {
  GraphId g = 0;
  std::string name = spec;
  if (auto slash = spec.find('/'); slash != std::string::npos) {
    g = m.findGraph(spec.substr(0, slash));
    name = spec.substr(slash + 1);
    if (g == kNoGraph)
      return std::nullopt;
  }
  NodeId n = m.graph(g).find(name);
  if (n == kNoNode)
    return std::nullopt;
  return std::make_pair(g, n);
}

int runShow(const ShowOptions &opts) {
  auto m = loadGraphFile(opts.file, std::cerr);
  if (!m)
    return kExitBadInput;
  auto plan = std::make_shared<oracle::MemoryPlan>(oracle::MemoryPlan::build(*m));
  DotOptions dot;
  dot.title = opts.file;
  dot.outputLabel = [plan](GraphId g, OutPort p) { return plan->bufferLabel(g, p); };
  for (const std::string &spec : opts.highlight) {
    auto node = resolveNode(*m, spec);
    if (!node) {
      std::cerr << "graphvet show: error: --highlight: unknown node '" << spec << "'\n";
      return kExitBadInput;
    }
    dot.highlighted.insert(*node);
  }
  std::string text = toDot(*m, dot);
  if (opts.format == "svg") {
    std::string error;
    auto svg = renderDot(text, "svg", error);
    if (!svg) {
      std::cerr << "graphvet show: error: " << error << "\n";
      return kExitBadInput;
    }
    text = std::move(*svg);
  }
  return writeOutput(opts.output, text, std::cerr) ? kExitOk : kExitBadInput;
}

} // namespace

void registerShow(CLI::App &app, CommandContext &ctx) {
  auto opts = std::make_shared<ShowOptions>();
  CLI::App *sub = app.add_subcommand(
      "show", "Draw a graph: subgraphs as clusters, control edges dashed, TensorMoves "
              "highlighted, each output labelled with its buffer from the memory plan");
  sub->add_option("file", opts->file, "the .graph file ('-' for stdin)")->required();
  sub->add_option("--format", opts->format, "output format")
      ->check(CLI::IsMember({"dot", "svg"}))
      ->capture_default_str();
  sub->add_option("-o,--output", opts->output, "output file (default: stdout)");
  sub->add_option("--highlight", opts->highlight,
                  "nodes to outline in red, as NAME or GRAPH/NAME (repeatable, comma-separated)")
      ->delimiter(',');
  sub->callback([opts, &ctx] { ctx.status = runShow(*opts); });
}

} // namespace graphvet::cli
