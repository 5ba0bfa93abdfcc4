#include "tools/onepool/memory_report.h"

#include <cstdio>

namespace onepool::cli {

void print_memory_summary(const LoadedSession& loaded) {
  const Plan& plan = loaded.session->plan();
  std::printf(
      "summary:   pool %s | weights %s | pool/LB %.3f%s\n", format_bytes(plan.pool_bytes).c_str(),
      format_bytes(loaded.model->weights_bytes()).c_str(),
      plan.lower_bound_bytes
          ? static_cast<double>(plan.pool_bytes) / static_cast<double>(plan.lower_bound_bytes)
          : 1.0,
      plan.optimal ? " (optimal)" : "");
}

}  // namespace onepool::cli
