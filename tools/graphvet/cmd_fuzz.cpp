// graphvet fuzz (placeholder until its issue lands: registers nothing).
#include "tools/graphvet/commands.h"

namespace graphvet::cli {
void registerFuzz(CLI::App &, CommandContext &) {}
} // namespace graphvet::cli
