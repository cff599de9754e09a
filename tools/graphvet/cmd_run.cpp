// graphvet run (placeholder until its issue lands: registers nothing).
#include "tools/graphvet/commands.h"

namespace graphvet::cli {
void registerRun(CLI::App &, CommandContext &) {}
} // namespace graphvet::cli
