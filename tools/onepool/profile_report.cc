// The profiler's outputs (see profile_report.h).
#include "tools/onepool/profile_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>

namespace onepool::cli {

namespace {

std::string shapes_text(const std::vector<Shape>& shapes) {
  std::string text;
  for (const Shape& shape : shapes) {
    if (!text.empty()) text += " ";
    text += shape.to_string();
  }
  return text;
}

// GFLOP/s of `flops` per run over `ms` per run, or "-" where FLOPs are not defined.
std::string gflops_text(double flops, double ms) {
  if (flops <= 0 || ms <= 0) return "-";
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", flops / (ms * 1e6));
  return text;
}

std::string clipped(const std::string& text, size_t width) {
  if (text.size() <= width) return text;
  return text.substr(0, width - 3) + "...";
}

// Each thread's time in the node's parallel parts as a percentage of the node's time, caller
// first ("98 81"): how evenly the threads shared it. Past four threads, the mean and the least.
// "-" with one thread (nothing to share) or where the backend does not measure it.
std::string busy_text(const NodeProfile& node) {
  const std::vector<double>& busy = node.thread_busy_ms;
  if (busy.size() < 2 || node.total_ms <= 0) return "-";
  const auto percent = [&](double ms) {
    return std::to_string(std::lround(std::min(100.0 * ms / node.total_ms, 999.0)));
  };
  std::string text;
  if (busy.size() > 4) {
    const double sum = std::accumulate(busy.begin(), busy.end(), 0.0);
    text.append("mean ").append(percent(sum / static_cast<double>(busy.size())));
    text.append(" least ").append(percent(*std::min_element(busy.begin(), busy.end())));
    return text;
  }
  for (double ms : busy) {
    if (!text.empty()) text.push_back(' ');
    text.append(percent(ms));
  }
  return text;
}

struct OpTotal {
  int count = 0;
  double ms = 0;
  double flops = 0;
};

}  // namespace

void print_profile(const SessionProfile& profile, double mean_run_ms) {
  if (profile.runs == 0) {
    std::printf("profile:   no profiled runs\n");
    return;
  }
  const auto runs = static_cast<double>(profile.runs);
  const double nodes_ms =
      std::accumulate(profile.nodes.begin(), profile.nodes.end(), 0.0,
                      [](double sum, const NodeProfile& node) { return sum + node.total_ms; }) /
      runs;
  const double base_ms = mean_run_ms > 0 ? mean_run_ms : profile.total_run_ms / runs;
  std::printf(
      "profile:   %lld runs | nodes %.3f ms/run = %.1f%% of the mean run %.3f ms "
      "(execute %.3f ms/run; the rest is input/output copies and checks)\n",
      static_cast<long long>(profile.runs), nodes_ms, 100.0 * nodes_ms / base_ms, base_ms,
      profile.total_run_ms / runs);
  std::vector<size_t> order(profile.nodes.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return profile.nodes[a].total_ms > profile.nodes[b].total_ms;
  });
  std::printf("%5s  %-32s %-18s %-24s %9s %6s %8s  %-11s  %s\n", "#", "node", "op",
              "implementation", "ms/run", "%", "GFLOP/s", "busy %", "input shapes");
  for (size_t n : order) {
    const NodeProfile& node = profile.nodes[n];
    const double ms = node.total_ms / runs;
    std::printf("%5zu  %-32s %-18s %-24s %9.3f %6.2f %8s  %-11s  %s\n", n,
                clipped(node.node, 32).c_str(), clipped(node.op_type, 18).c_str(),
                clipped(node.implementation, 24).c_str(), ms, 100.0 * ms / base_ms,
                gflops_text(node.flops, ms).c_str(), busy_text(node).c_str(),
                shapes_text(node.input_shapes).c_str());
  }
  std::map<std::string, OpTotal> by_op;
  for (const NodeProfile& node : profile.nodes) {
    OpTotal& total = by_op[node.op_type];
    ++total.count;
    total.ms += node.total_ms / runs;
    total.flops += node.flops;
  }
  std::vector<std::pair<std::string, OpTotal>> ops(by_op.begin(), by_op.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.second.ms > b.second.ms; });
  std::printf("\nby op type:\n%-18s %6s %9s %6s %8s\n", "op", "nodes", "ms/run", "%", "GFLOP/s");
  for (const auto& [op, total] : ops) {
    std::printf("%-18s %6d %9.3f %6.2f %8s\n", op.c_str(), total.count, total.ms,
                100.0 * total.ms / base_ms, gflops_text(total.flops, total.ms).c_str());
  }
}

Status write_chrome_trace(const std::string& path, const SessionProfile& profile,
                          const std::vector<ProfiledRun>& runs) {
  nlohmann::json events = nlohmann::json::array();
  for (size_t r = 0; r < runs.size(); ++r) {
    const ProfiledRun& run = runs[r];
    const size_t nodes = std::min(profile.nodes.size(), run.node_ms.size());
    const double run_ms = nodes == 0 ? 0 : run.node_start_ms[nodes - 1] + run.node_ms[nodes - 1];
    events.push_back({{"name", "run " + std::to_string(r)},
                      {"cat", "run"},
                      {"ph", "X"},
                      {"ts", run.start_us},
                      {"dur", run_ms * 1e3},
                      {"pid", 1},
                      {"tid", 0}});
    for (size_t n = 0; n < nodes; ++n) {
      const NodeProfile& node = profile.nodes[n];
      events.push_back({{"name", node.node},
                        {"cat", node.op_type},
                        {"ph", "X"},
                        {"ts", run.start_us + run.node_start_ms[n] * 1e3},
                        {"dur", run.node_ms[n] * 1e3},
                        {"pid", 1},
                        {"tid", 1},
                        {"args",
                         {{"op", node.op_type},
                          {"implementation", node.implementation},
                          {"inputs", shapes_text(node.input_shapes)},
                          {"threads_busy_percent", busy_text(node)},
                          {"gflops_per_s", gflops_text(node.flops, run.node_ms[n])}}}});
    }
  }
  const nlohmann::json trace = {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
  std::ofstream out(path);
  out << trace.dump() << "\n";
  if (!out) return make_status(StatusCode::kNotFound, "cannot write trace '", path, "'");
  return Status::ok();
}

}  // namespace onepool::cli
