// Placeholder until the inspect command lands.
#include "tools/onepool/commands.h"

namespace onepool::cli {

void register_inspect_command(CLI::App& app, int& exit_code) { (void)app; (void)exit_code; }

}  // namespace onepool::cli
