// The memory lines of run and bench.
#pragma once

#include "tools/onepool/cli_common.h"

namespace onepool::cli {

/// "summary:   pool ... | weights ... | pool/LB ..." for a loaded Session.
void print_memory_summary(const LoadedSession& loaded);

}  // namespace onepool::cli
