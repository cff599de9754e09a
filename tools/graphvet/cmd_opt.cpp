// graphvet opt (placeholder until its issue lands: registers nothing).
#include "tools/graphvet/commands.h"

namespace graphvet::cli {
void registerOpt(CLI::App &, CommandContext &) {}
} // namespace graphvet::cli
