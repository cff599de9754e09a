// graphvet: the command-line front end. Each subcommand lives in its own
// cmd_*.cpp; this file only assembles them and maps errors to exit statuses.
#include "tools/graphvet/commands.h"

#include <cstdio>
#include <iostream>

int main(int argc, char **argv) {
  using namespace graphvet::cli;
  CLI::App app{"graphvet: graph passes for an AI compiler's middle end, and the harness that "
               "proves them sound"};
  app.set_version_flag("--version", std::string("graphvet ") + GRAPHVET_VERSION);
  app.require_subcommand(1);
  CommandContext ctx;
  registerShow(app, ctx);
  registerOpt(app, ctx);
  registerRun(app, ctx);
  registerCheck(app, ctx);
  registerFuzz(app, ctx);
  registerReduce(app, ctx);
  registerBench(app, ctx);
  registerMissed(app, ctx);
  registerImport(app, ctx);
  registerProve(app, ctx);
  registerCost(app, ctx);
  registerExport(app, ctx);
  try {
    app.parse(argc, argv);
  } catch (const CommandLineError &e) {
    // A value out of its range: one line naming command, option, value, range.
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  } catch (const CLI::ParseError &e) {
    int code = app.exit(e);
    // CLI11 returns 0 for --help/--version; every real usage error is bad input.
    return code == 0 ? kExitOk : kExitBadInput;
  }
  std::fflush(stdout);
  return ctx.status;
}
