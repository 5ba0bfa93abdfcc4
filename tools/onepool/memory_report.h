// The memory lines of run, bench and serve: what the plan takes (pool, weights) beside what the
// process really held at its peak (VmHWM), with the difference named.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "tools/onepool/cli_common.h"

namespace onepool::cli {

/// "peak RSS:  98,123,776 B (93.58 MiB), the most this process held (VmHWM): pool 25.00 MiB +
/// weights 4.48 MiB + 64.10 MiB of code and libraries, thread stacks, ..." (nullopt: unknown).
/// `pools_bytes` is every Session's pool; off the host (`on_host` false) they and the weights are
/// not in it.
std::string peak_rss_text(std::optional<size_t> peak_rss, size_t pools_bytes, size_t weights_bytes,
                          bool on_host);

/// "summary:   pool .. | weights .. | pool/LB .." and the peak RSS line, for `sessions`
/// Sessions like `loaded.session` (bench --streams).
void print_memory_summary(const LoadedSession& loaded, size_t sessions = 1);

}  // namespace onepool::cli
