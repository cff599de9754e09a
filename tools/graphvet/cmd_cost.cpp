// graphvet cost: the cost model (src/passes/cost_model.h) of one graph or
// ONNX model for the reference schedule, as text or JSON (docs/cost.md).
#include "passes/cost_model.h"
#include "tools/graphvet/commands.h"

#include <fmt/format.h>
#include <iostream>
#include <memory>

namespace graphvet::cli {
namespace {

struct CostCmdOptions {
  std::string file;
  bool json = false;
  OnnxCmdOptions onnx;
};

int runCost(const CostCmdOptions &opts) {
  auto m = loadModuleFile(opts.file, opts.onnx, "cost", std::cerr);
  if (!m)
    return kExitBadInput;
  CostReport c = computeCost(*m);
  if (opts.json) {
    std::cout << costJson(c).dump() << "\n";
    return kExitOk;
  }
  std::string out;
  out += fmt::format("kernels: {}\n", c.kernels);
  out += fmt::format("bytes read: {}\n", c.bytesRead);
  out += fmt::format("bytes written: {}\n", c.bytesWritten);
  out += c.peakKnown ? fmt::format("peak live bytes: {}\n", c.peakLiveBytes)
                     : fmt::format("peak live bytes: unknown ({})\n", c.peakSkip);
  out += fmt::format("constant bytes: {}\n", c.constantBytes);
  out += fmt::format("flops: {}\n", c.flops);
  if (c.fusedGroups > 0)
    out += fmt::format("fused groups: {}\n", c.fusedGroups);
  if (c.unsizedPorts > 0)
    out += fmt::format("ports without a static size (counted as 0 bytes): {}\n", c.unsizedPorts);
  for (const auto &[op, n] : c.kernelsByOp)
    out += fmt::format("  {}: {}\n", op, n);
  std::cout << out;
  return kExitOk;
}

} // namespace

void registerCost(CLI::App &app, CommandContext &ctx) {
  auto opts = std::make_shared<CostCmdOptions>();
  CLI::App *sub = app.add_subcommand(
      "cost", "Report the cost model for the reference schedule: kernel launches, bytes read "
              "and written by kernels, peak live bytes, constant bytes and FLOPs (docs/cost.md)");
  sub->add_option("file", opts->file,
                  "the .graph file ('-' for stdin), or a .onnx model (imported in memory)")
      ->required();
  sub->add_flag("--json", opts->json, "machine-readable output");
  addOnnxOptions(sub, opts->onnx);
  sub->callback([opts, &ctx] { ctx.status = runCost(*opts); });
}

} // namespace graphvet::cli
