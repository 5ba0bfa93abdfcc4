// Placeholder until the plan command lands.
#include "tools/onepool/commands.h"

namespace onepool::cli {

void register_plan_command(CLI::App& app, int& exit_code) { (void)app; (void)exit_code; }

}  // namespace onepool::cli
