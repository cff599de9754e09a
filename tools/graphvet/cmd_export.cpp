// graphvet export: writes a module (a .graph file, or an ONNX model imported
// in memory) as an ONNX model, the inverse of `graphvet import`
// (onnx/exporter.h). Also the writer behind `graphvet opt -o OUT.onnx`.
#include "onnx/exporter.h"
#include "tools/graphvet/commands.h"

#include <chrono>
#include <iostream>
#include <memory>

namespace graphvet::cli {
namespace {

struct ExportCmdOptions {
  std::string file;
  std::string output;
  uint64_t opset = 17;
  OnnxCmdOptions onnx;
  bool json = false;
};

int runExport(const ExportCmdOptions &opts) {
  if (!isOnnxFile(opts.output)) {
    std::cerr << "graphvet export: error: -o expects a path ending in .onnx, got '" << opts.output
              << "'\n";
    return kExitBadInput;
  }
  std::vector<std::string> outputs;
  auto m = loadModuleFile(opts.file, opts.onnx, "export", std::cerr, nullptr, &outputs);
  if (!m)
    return kExitBadInput;
  nlohmann::ordered_json summary;
  int status = exportModule(*m, opts.output, opts.file == "-" ? "<stdin>" : opts.file, outputs,
                            static_cast<int64_t>(opts.opset), std::cerr, &summary);
  if (opts.json) {
    std::cout << summary.dump() << "\n";
  } else if (status == kExitOk) {
    std::cout << "wrote " << opts.output << ": " << summary["nodes"] << " nodes, "
              << summary["initializers"] << " initializers, " << summary["inputs"] << " inputs, "
              << summary["outputs"] << " outputs (opset " << opts.opset
              << "); ONNX checker: accepted\n";
  }
  std::cout.flush();
  return status;
}

} // namespace

int exportModule(const Module &m, const std::string &path, const std::string &shownName,
                 const std::vector<std::string> &outputNames, int64_t opset, std::ostream &err,
                 nlohmann::ordered_json *summary) {
  onnxexport::ExportOptions eo;
  eo.opset = opset;
  eo.outputNames = outputNames;
  auto start = std::chrono::steady_clock::now();
  onnxexport::ExportResult r = onnxexport::exportOnnxFile(m, eo, path);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const std::string &e : r.errors)
    err << shownName << ": error: " << e << "\n";
  if (summary) {
    const onnxexport::ExportSummary &s = r.summary;
    *summary = {{"input", shownName},
                {"output", path},
                {"ok", r.ok()},
                {"errors", r.errors},
                {"opset", opset},
                {"nodes", s.nodes},
                {"initializers", s.initializers},
                {"inputs", s.inputs},
                {"outputs", s.outputs},
                {"inlined_calls", s.inlinedCalls},
                {"layout_transposes", s.layoutTransposes},
                {"form_rewrites", s.formRewrites},
                {"checker", r.ok() ? "accepted" : "not accepted"},
                {"seconds", seconds}};
  }
  return r.ok() ? kExitOk : kExitBadInput;
}

void registerExport(CLI::App &app, CommandContext &ctx) {
  auto opts = std::make_shared<ExportCmdOptions>();
  CLI::App *sub = app.add_subcommand(
      "export", "Write a .graph module (or an imported .onnx model) as an ONNX model, checked by "
                "ONNX's checker");
  sub->add_option("file", opts->file, "the .graph file ('-' for stdin), or a .onnx model")
      ->required();
  sub->add_option("-o,--output", opts->output, "the ONNX model to write (OUT.onnx)")->required();
  addIntOption(sub, "--opset", opts->opset, 13, 17,
               "the ONNX opset of the default domain to write for");
  addOnnxOptions(sub, opts->onnx);
  sub->add_flag("--json", opts->json,
                "print a JSON summary: node, initializer, input and output counts, calls "
                "inlined, layout Transposes, opset-form rewrites, errors, time");
  sub->footer(
      "Calls (fused groups, target regions) are inlined; layout = \"NHWC\" ops are written in "
      "their NCHW form between Transposes; ops written in an older opset's form are rewritten "
      "into the target's; If and While become ONNX's If and Loop. GE memory ops (TensorMove, "
      "variables, in-place writes) and Case are refused: FILE: error: cannot export NODE (TYPE): "
      "WHY. Exit status: 0 written and "
      "accepted by ONNX's checker, 2 bad input or a node ONNX cannot express.");
  sub->callback([opts, &ctx] { ctx.status = runExport(*opts); });
}

} // namespace graphvet::cli
