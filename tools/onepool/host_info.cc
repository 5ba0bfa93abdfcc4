#include "tools/onepool/host_info.h"

#include <algorithm>
#include <fstream>
#include <thread>

namespace onepool::cli {

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const size_t start = line.find_first_not_of(" \t", colon + 1);
    if (start != std::string::npos) return line.substr(start);
  }
  return "unknown";
}

int logical_cores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

int resolve_threads(int threads, int streams) {
  if (threads > 0) return threads;
  return std::max(1, logical_cores() / std::max(1, streams));
}

std::optional<size_t> parse_status_kb_line(const std::string& line, const std::string& key) {
  if (line.size() <= key.size() || line.compare(0, key.size(), key) != 0 ||
      line[key.size()] != ':') {
    return std::nullopt;
  }
  size_t at = line.find_first_not_of(" \t", key.size() + 1);
  if (at == std::string::npos || line.compare(line.size() - 3, 3, " kB") != 0) return std::nullopt;
  size_t kib = 0;
  for (; at < line.size() && line[at] >= '0' && line[at] <= '9'; ++at) {
    kib = kib * 10 + static_cast<size_t>(line[at] - '0');
  }
  return kib * 1024;
}

std::optional<size_t> peak_rss_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (auto bytes = parse_status_kb_line(line, "VmHWM")) return bytes;
  }
  return std::nullopt;
}

}  // namespace onepool::cli
