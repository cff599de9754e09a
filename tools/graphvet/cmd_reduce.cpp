// graphvet reduce (placeholder until its issue lands: registers nothing).
#include "tools/graphvet/commands.h"

namespace graphvet::cli {
void registerReduce(CLI::App &, CommandContext &) {}
} // namespace graphvet::cli
