// Placeholder until run / bench / compare land.
#include "tools/onepool/commands.h"

namespace onepool::cli {

void register_run_commands(CLI::App& app, int& exit_code) { (void)app; (void)exit_code; }

}  // namespace onepool::cli
