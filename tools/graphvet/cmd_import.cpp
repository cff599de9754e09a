// graphvet import: reads an ONNX model and prints (or writes) the graphvet
// module that computes the same thing; every unsupported op or element type
// is reported together. --json gives the inputs' mapping (which graph input
// is `Data {index = K}`, which were frozen) for runners.
#include "ir/printer.h"
#include "onnx/importer.h"
#include "tools/graphvet/commands.h"

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace graphvet::cli {
namespace {

struct ImportCmdOptions {
  std::string file;
  std::string output;
  std::string inputData;
  bool freezeShapeOperands = false;
  OnnxCmdOptions onnx;
  bool json = false;
};

nlohmann::ordered_json shapeJson(const Shape &s) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (int64_t d : s)
    j.push_back(d);
  return j;
}

nlohmann::ordered_json resultJson(const ImportCmdOptions &opts, const onnximport::ImportResult &r,
                                  const std::string *text) {
  nlohmann::ordered_json j;
  j["model"] = opts.file;
  j["ok"] = r.ok();
  j["errors"] = r.errors;
  j["unsupported_ops"] = nlohmann::ordered_json::object();
  for (const auto &[op, nodes] : r.unsupportedOps)
    j["unsupported_ops"][op] = nodes;
  j["unsupported_types"] = nlohmann::ordered_json::object();
  for (const auto &[type, where] : r.unsupportedTypes)
    j["unsupported_types"][type] = where;
  j["free_dimensions"] = r.freeDimensions;
  j["inputs"] = nlohmann::ordered_json::array();
  for (const auto &in : r.inputs)
    j["inputs"].push_back({{"name", in.name},
                           {"index", in.index ? nlohmann::ordered_json(*in.index) : nullptr},
                           {"frozen", in.frozen},
                           {"dtype", std::string(dtypeName(in.type.dtype))},
                           {"shape", shapeJson(in.type.shape)}});
  j["outputs"] = r.outputs;
  j["folded"] = r.folded;
  j["output_file"] =
      opts.output.empty() || opts.output == "-" ? nullptr : nlohmann::ordered_json(opts.output);
  if (text)
    j["graph"] = *text;
  return j;
}

int runImport(const ImportCmdOptions &opts) {
  onnximport::ImportOptions io;
  if (!toImportOptions(opts.onnx, "import", io, std::cerr))
    return kExitBadInput;
  if (opts.freezeShapeOperands && opts.inputData.empty()) {
    std::cerr << "graphvet import: error: --freeze-shape-operands needs --input-data DIR (the "
                 "values to freeze)\n";
    return kExitBadInput;
  }
  io.inputDataDir = opts.inputData;
  io.freezeShapeOperands = opts.freezeShapeOperands;

  onnximport::ImportResult r = onnximport::importOnnx(opts.file, io);
  std::string text;
  bool toStdout = opts.output.empty() || opts.output == "-";
  int status = r.ok() ? kExitOk : kExitBadInput;
  if (r.ok()) {
    if (toStdout) {
      // Weights go to a sidecar file next to the graph: on stdout there is
      // none, and a real model's weights are no text to print.
      if (!checkPrintableInline(*r.module, opts.file, std::cerr))
        return kExitBadInput;
      text = printModule(*r.module);
    } else if (std::string error;
               !writeModuleFile(*r.module, opts.output, error, kInlineLimitBytes)) {
      // Large tensors go to the sidecar OUT.weights next to OUT.graph.
      std::cerr << "graphvet import: error: " << error << "\n";
      status = kExitBadInput;
    }
  }
  for (const std::string &e : r.errors)
    std::cerr << opts.file << ": error: " << e << "\n";
  if (opts.json) {
    std::cout << resultJson(opts, r, r.ok() && toStdout ? &text : nullptr).dump() << "\n";
  } else if (r.ok() && toStdout) {
    std::cout << text;
  }
  std::cout.flush();
  return status;
}

} // namespace

void registerImport(CLI::App &app, CommandContext &ctx) {
  auto opts = std::make_shared<ImportCmdOptions>();
  CLI::App *sub = app.add_subcommand(
      "import", "Import an ONNX model as a graphvet module (ONNX's checker and shape inference "
                "first; If becomes If, Loop becomes While)");
  sub->add_option("file", opts->file, "the .onnx model")->required();
  sub->add_option("-o,--output", opts->output, "write the module here (default: stdout)");
  sub->add_option("--input-data", opts->inputData,
                  "a test data set directory (input_0.pb, input_1.pb, ...): its shapes fix free "
                  "dimensions; the values to freeze with --freeze-shape-operands");
  sub->add_flag("--freeze-shape-operands", opts->freezeShapeOperands,
                "turn the graph inputs whose values decide output types (Reshape's shape, "
                "Slice's starts, a Loop's trip count with scan outputs...) into constants "
                "holding their --input-data values");
  addOnnxOptions(sub, opts->onnx);
  sub->add_flag("--json", opts->json,
                "print a JSON report: errors, unsupported ops and types, each input's Data index "
                "(null when frozen), dtype and shape, outputs, and the module when not written "
                "to a file");
  sub->footer("Weights over 1024 bytes go to OUT.weights next to -o OUT.graph (a model with such "
              "weights needs -o). Exit status: 0 imported, 2 bad input (unreadable or invalid "
              "model, unsupported ops or element types, free dimensions, bad options).");
  sub->callback([opts, &ctx] { ctx.status = runImport(*opts); });
}

} // namespace graphvet::cli
