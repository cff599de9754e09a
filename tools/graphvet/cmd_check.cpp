// graphvet check (placeholder until its issue lands: registers nothing).
#include "tools/graphvet/commands.h"

namespace graphvet::cli {
void registerCheck(CLI::App &, CommandContext &) {}
} // namespace graphvet::cli
