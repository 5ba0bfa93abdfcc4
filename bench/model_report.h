// plan_bench's model tables (one per configuration, every ratio against the model's plain
// lower bound), the summary lines, and the JSON form of both.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "bench/model_configs.h"

namespace onepool::bench {

void print_model_tables(const std::vector<ModelResult>& models);
/// Prints the summary; returns false when a plan failed verification.
bool print_summary(const std::vector<ModelResult>& models);
nlohmann::json models_json(const std::vector<ModelResult>& models);
nlohmann::json summary_json(const std::vector<ModelResult>& models);

}  // namespace onepool::bench
