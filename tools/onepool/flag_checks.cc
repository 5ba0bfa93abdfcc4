#include "tools/onepool/flag_checks.h"

#include <cstdio>

namespace onepool::cli {

Status check_at_least(const char* flag, double value, double min) {
  if (value >= min) return Status::ok();
  return make_status(StatusCode::kInvalidArgument, flag, " must be at least ", min, ", got ",
                     value);
}

Status check_model_flags(const ModelFlags& flags) {
  ONEPOOL_RETURN_IF_ERROR(check_at_least("--threads", flags.threads, 0));
  ONEPOOL_RETURN_IF_ERROR(check_at_least("--plan-budget", flags.plan_budget_ms, 0));
  if (flags.alignment == 0 || (flags.alignment & (flags.alignment - 1)) != 0) {
    return make_status(StatusCode::kInvalidArgument, "--alignment must be a power of two, got ",
                       flags.alignment);
  }
  return Status::ok();
}

int report_usage_error(const Status& status) {
  std::fflush(stdout);
  std::fprintf(stderr, "error: %s\n", status.message().c_str());
  return kExitUsage;
}

}  // namespace onepool::cli
