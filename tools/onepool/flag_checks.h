// Up-front checks of numeric flags, so a bad value is a usage error (exit status 2) before any
// model is loaded, never a silent zero-iteration run or a thread pool of -2.
#pragma once

#include "onepool/status.h"
#include "tools/onepool/cli_common.h"

namespace onepool::cli {

/// Exit status of a usage error (bad or conflicting flags).
constexpr int kExitUsage = 2;

/// kInvalidArgument "FLAG must be at least MIN, got VALUE" when value < min.
Status check_at_least(const char* flag, double value, double min);

/// --threads >= 0, --alignment a power of two, --plan-budget >= 0.
Status check_model_flags(const ModelFlags& flags);

/// Prints "error: <message>" to stderr and returns kExitUsage.
int report_usage_error(const Status& status);

}  // namespace onepool::cli
