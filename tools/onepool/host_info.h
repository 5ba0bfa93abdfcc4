// What bench reports about the machine and the process: CPU model, core count, the thread count
// a Session really uses, and the process's peak resident memory. Linux /proc; elsewhere the
// values say they are unknown.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace onepool::cli {

/// The first "model name" of /proc/cpuinfo ("AMD EPYC 7B13"), or "unknown".
std::string cpu_model_name();

/// Logical CPUs (std::thread::hardware_concurrency, at least 1): what `--threads 0` means.
int logical_cores();

/// The CPU threads a Session given `threads` runs with: 0 means logical_cores(), shared evenly
/// when `streams` Sessions run at once (at least 1 each).
int resolve_threads(int threads, int streams = 1);

/// The process's peak resident set (VmHWM in /proc/self/status), or nullopt where unknown.
std::optional<size_t> peak_rss_bytes();

/// Parses one "Key:   123 kB" line of /proc/self/status for `key`; nullopt on any other line.
std::optional<size_t> parse_status_kb_line(const std::string& line, const std::string& key);

}  // namespace onepool::cli
