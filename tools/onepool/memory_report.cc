#include "tools/onepool/memory_report.h"

#include <cstdio>

#include "tools/onepool/host_info.h"

namespace onepool::cli {

std::string peak_rss_text(std::optional<size_t> peak_rss, size_t pools_bytes, size_t weights_bytes,
                          bool on_host) {
  const std::string head = "peak RSS:  ";
  if (!peak_rss) return head + "unknown (no VmHWM in /proc/self/status)";
  const std::string rss = format_bytes(*peak_rss) + ", the most this process held (VmHWM)";
  if (!on_host) return head + rss + "; the pool and weights are on the device, not in it";
  const size_t planned = pools_bytes + weights_bytes;
  if (*peak_rss < planned) {
    return head + rss + ": less than pool + weights, whose untouched pages are not resident";
  }
  return head + rss + ": pool " + binary_size(pools_bytes) + " + weights " +
         binary_size(weights_bytes) + " + " + binary_size(*peak_rss - planned) +
         " of code and libraries, thread stacks, input/output copies and load-time buffers";
}

void print_memory_summary(const LoadedSession& loaded, size_t sessions) {
  const Plan& plan = loaded.session->plan();
  const std::string pool = sessions > 1 ? str_cat(sessions, " x ", format_bytes(plan.pool_bytes))
                                        : format_bytes(plan.pool_bytes);
  std::printf("summary:   pool %s | weights %s | pool/LB %.3f%s\n", pool.c_str(),
              format_bytes(loaded.model->weights_bytes()).c_str(),
              plan.lower_bound_bytes ? static_cast<double>(plan.pool_bytes) /
                                           static_cast<double>(plan.lower_bound_bytes)
                                     : 1.0,
              plan.optimal ? " (optimal)" : "");
  const bool on_host = loaded.session->device().kind == DeviceKind::kCpu;
  std::printf("%s\n", peak_rss_text(peak_rss_bytes(), sessions * plan.pool_bytes,
                                    loaded.model->weights_bytes(), on_host)
                          .c_str());
}

}  // namespace onepool::cli
