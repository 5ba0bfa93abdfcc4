#include "bench/model_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

namespace onepool::bench {
namespace {

constexpr double kBytesPerMB = 1e6;
constexpr const char* kConfigs[] = {"plain", "aliased", "aliased+scheduled"};
constexpr const char* kPlainBestFit = "greedy-by-size";
constexpr const char* kPaddleOcrDet = "ocr_det";

double ratio(size_t bytes, size_t base) {
  return base == 0 ? 1.0 : static_cast<double>(bytes) / static_cast<double>(base);
}

const ConfigResult* find_config(const ModelResult& model, const std::string& config) {
  for (const ConfigResult& result : model.configs) {
    if (result.config == config) return &result;
  }
  return nullptr;
}

// Column label: algorithm names without their common prefix, baselines as named.
std::string label(const PoolResult& pool) {
  if (pool.method == ours_method()) return "ours";
  const std::string prefix = "greedy-by-";
  if (pool.method.rfind(prefix, 0) == 0) return pool.method.substr(prefix.size());
  return pool.method;
}

int column_width(const PoolResult& pool) {
  return static_cast<int>(std::max<size_t>(8, label(pool).size() + 1));
}

// A bar before the first baseline's column separates ours from the peers'.
const char* separator(const ConfigResult& config, size_t column) {
  const bool first_baseline =
      config.pools[column].is_baseline && (column == 0 || !config.pools[column - 1].is_baseline);
  return first_baseline ? " |" : "";
}

// The smallest pool among the peer baselines.
const PoolResult* best_baseline(const ConfigResult& config) {
  const PoolResult* best = nullptr;
  for (const PoolResult& pool : config.pools) {
    if (pool.is_baseline && (best == nullptr || pool.pool_bytes < best->pool_bytes)) best = &pool;
  }
  return best;
}

double ours_over_best_baseline(const ConfigResult& config) {
  const PoolResult* best = best_baseline(config);
  return best == nullptr ? 1.0 : ratio(config.pool_of(ours_method()), best->pool_bytes);
}

void print_header(const ConfigResult& sample) {
  std::printf("%-20s %5s %10s %6s %5s", "model", "nodes", "plainLB MB", "LB", "moved");
  for (size_t c = 0; c < sample.pools.size(); ++c) {
    std::printf("%s%*s", separator(sample, c), column_width(sample.pools[c]),
                label(sample.pools[c]).c_str());
  }
  std::printf(" %9s\n", "ours/peer");
}

void print_row(const ModelResult& model, const ConfigResult& result) {
  const size_t plain_lb = model.plain_lower_bound_bytes();
  std::printf("%-20s %5zu %10.3f %6.3f %5zu", model.name.c_str(), model.nodes,
              plain_lb / kBytesPerMB, ratio(result.lower_bound_bytes, plain_lb),
              result.reordered_nodes);
  for (size_t c = 0; c < result.pools.size(); ++c) {
    const PoolResult& pool = result.pools[c];
    // An unverified plan is flagged with '!' in place of the column's last blank.
    std::printf("%s%*.3f%s", separator(result, c), column_width(pool) - (pool.verified ? 0 : 1),
                ratio(pool.pool_bytes, plain_lb), pool.verified ? "" : "!");
  }
  std::printf(" %9.3f\n", ours_over_best_baseline(result));
}

void print_config_table(const std::vector<ModelResult>& models, const std::string& config) {
  const ConfigResult* sample = nullptr;
  for (const ModelResult& model : models) {
    if ((sample = find_config(model, config)) != nullptr) break;
  }
  if (sample == nullptr) return;
  std::printf(
      "\n== %s: pool / plain LB (LB: this config's lower bound / plain LB; moved: nodes "
      "off the model's order; peer baselines after '|')\n",
      config.c_str());
  print_header(*sample);
  for (const ModelResult& model : models) {
    const ConfigResult* result = find_config(model, config);
    if (result != nullptr) print_row(model, *result);
  }
}

// Geometric mean of ours / plain LB over the models that have `config`.
double geomean_ours(const std::vector<ModelResult>& models, const std::string& config,
                    size_t& count) {
  double log_sum = 0.0;
  count = 0;
  for (const ModelResult& model : models) {
    const ConfigResult* result = find_config(model, config);
    if (result == nullptr) continue;
    log_sum += std::log(ratio(result->pool_of(ours_method()), model.plain_lower_bound_bytes()));
    ++count;
  }
  return count == 0 ? 0.0 : std::exp(log_sum / static_cast<double>(count));
}

struct Beaten {
  std::string model;
  std::string baseline;
  double ours_over_peer = 0.0;
};

struct Summary {
  std::vector<std::pair<std::string, double>> geomeans;  // per config, ours / plain LB
  std::vector<size_t> geomean_counts;
  std::vector<std::pair<std::string, double>> paddle_det;  // per config, ours / plain LB
  double worst_ours_over_peer = 0.0;                       // plain config
  std::string worst_ours_over_peer_model;
  std::vector<Beaten> beaten;  // plain config: a baseline below ours
  double worst_over_plain_best_fit = 0.0;
  std::string worst_over_plain_best_fit_where;
  size_t unverified = 0;
};

// Without aliasing every baseline places the same records as ours: ours must not be beaten.
void compare_with_peers(const std::vector<ModelResult>& models, Summary& summary) {
  for (const ModelResult& model : models) {
    const ConfigResult* plain = find_config(model, "plain");
    if (plain == nullptr) continue;
    const double value = ours_over_best_baseline(*plain);
    if (value > summary.worst_ours_over_peer) {
      summary.worst_ours_over_peer = value;
      summary.worst_ours_over_peer_model = model.name;
    }
    if (value > 1.0) summary.beaten.push_back({model.name, best_baseline(*plain)->method, value});
  }
}

// Aliasing and scheduling must never cost memory against the plain best-fit plan.
void compare_with_plain_best_fit(const std::vector<ModelResult>& models, Summary& summary) {
  for (const ModelResult& model : models) {
    const size_t best_fit =
        model.configs.empty() ? 0 : model.configs.front().pool_of(kPlainBestFit);
    for (const ConfigResult& result : model.configs) {
      const double value = ratio(result.pool_of(ours_method()), best_fit);
      if (value > summary.worst_over_plain_best_fit) {
        summary.worst_over_plain_best_fit = value;
        summary.worst_over_plain_best_fit_where = model.name + " " + result.config;
      }
      for (const PoolResult& pool : result.pools) summary.unverified += pool.verified ? 0 : 1;
    }
  }
}

Summary summarize(const std::vector<ModelResult>& models) {
  Summary summary;
  for (const char* config : kConfigs) {
    size_t count = 0;
    summary.geomeans.emplace_back(config, geomean_ours(models, config, count));
    summary.geomean_counts.push_back(count);
  }
  for (const ModelResult& model : models) {
    if (model.name != kPaddleOcrDet) continue;
    for (const ConfigResult& result : model.configs) {
      summary.paddle_det.emplace_back(
          result.config, ratio(result.pool_of(ours_method()), model.plain_lower_bound_bytes()));
    }
  }
  compare_with_peers(models, summary);
  compare_with_plain_best_fit(models, summary);
  return summary;
}

}  // namespace

void print_model_tables(const std::vector<ModelResult>& models) {
  for (const char* config : kConfigs) print_config_table(models, config);
  for (const ModelResult& model : models) {
    if (!model.note.empty()) std::printf("note %s: %s\n", model.name.c_str(), model.note.c_str());
  }
}

bool print_summary(const std::vector<ModelResult>& models) {
  std::printf("\n== summary over %zu models\n", models.size());
  if (models.empty()) return true;
  const Summary summary = summarize(models);
  std::printf("geomean ours / plain LB:");
  for (size_t i = 0; i < summary.geomeans.size(); ++i) {
    std::printf("  %s %.4f (%zu models)", summary.geomeans[i].first.c_str(),
                summary.geomeans[i].second, summary.geomean_counts[i]);
  }
  std::printf("\n");
  if (!summary.paddle_det.empty()) {
    std::printf("PaddleOCR det (%s) ours / plain LB:", kPaddleOcrDet);
    for (const auto& [config, value] : summary.paddle_det) {
      std::printf("  %s %.4f", config.c_str(), value);
    }
    std::printf("\n");
  }
  for (const Beaten& beaten : summary.beaten) {
    std::printf("BEATEN without aliasing on %s by %s: ours / peer %.4f\n", beaten.model.c_str(),
                beaten.baseline.c_str(), beaten.ours_over_peer);
  }
  std::printf("worst ours / best peer baseline without aliasing: %.4f (%s) -> %s\n",
              summary.worst_ours_over_peer, summary.worst_ours_over_peer_model.c_str(),
              summary.beaten.empty() ? "ours <= every baseline on every model" : "NO");
  std::printf(
      "worst ours / plain %s pool: %.4f (%s) -> %s\n", kPlainBestFit,
      summary.worst_over_plain_best_fit, summary.worst_over_plain_best_fit_where.c_str(),
      summary.worst_over_plain_best_fit <= 1.0 ? "no pool exceeds the plain best-fit pool" : "NO");
  std::printf("plans that failed verification: %zu\n", summary.unverified);
  return summary.unverified == 0;
}

nlohmann::json summary_json(const std::vector<ModelResult>& models) {
  const Summary summary = summarize(models);
  nlohmann::json geomeans = nlohmann::json::object();
  for (const auto& [config, value] : summary.geomeans) geomeans[config] = value;
  nlohmann::json paddle_det = nlohmann::json::object();
  for (const auto& [config, value] : summary.paddle_det) paddle_det[config] = value;
  nlohmann::json beaten = nlohmann::json::array();
  for (const Beaten& entry : summary.beaten) {
    beaten.push_back({{"model", entry.model},
                      {"baseline", entry.baseline},
                      {"ours_over_peer", entry.ours_over_peer}});
  }
  return {{"models", models.size()},
          {"geomean_ours_over_plain_lb", geomeans},
          {"paddleocr_det_ours_over_plain_lb", paddle_det},
          {"worst_ours_over_best_baseline_plain", summary.worst_ours_over_peer},
          {"beaten_without_aliasing", beaten},
          {"worst_ours_over_plain_best_fit", summary.worst_over_plain_best_fit},
          {"unverified_plans", summary.unverified}};
}

nlohmann::json models_json(const std::vector<ModelResult>& models) {
  nlohmann::json out = nlohmann::json::array();
  for (const ModelResult& model : models) {
    nlohmann::json configs = nlohmann::json::array();
    for (const ConfigResult& result : model.configs) {
      nlohmann::json pools = nlohmann::json::array();
      for (const PoolResult& pool : result.pools) {
        pools.push_back(
            {{"method", pool.method},
             {"baseline", pool.is_baseline},
             {"pool_bytes", pool.pool_bytes},
             {"pool_over_plain_lb", ratio(pool.pool_bytes, model.plain_lower_bound_bytes())},
             {"placement_ms", pool.placement_ms},
             {"verified", pool.verified}});
      }
      configs.push_back({{"config", result.config},
                         {"records", result.records},
                         {"lower_bound_bytes", result.lower_bound_bytes},
                         {"reordered_nodes", result.reordered_nodes},
                         {"pools", pools}});
    }
    out.push_back({{"model", model.name},
                   {"nodes", model.nodes},
                   {"plain_lower_bound_bytes", model.plain_lower_bound_bytes()},
                   {"note", model.note},
                   {"configs", configs}});
  }
  return out;
}

}  // namespace onepool::bench
