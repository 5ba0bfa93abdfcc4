// Placeholder until the conformance command lands.
#include "tools/onepool/commands.h"

namespace onepool::cli {

void register_conformance_command(CLI::App& app, int& exit_code) { (void)app; (void)exit_code; }

}  // namespace onepool::cli
