// The shape sweep of `onepool bench`: one DynamicSession, one line of shapes after another.
#include "tools/onepool/cmd_bench_sweep.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "planner/core/shape_binding.h"
#include "tools/onepool/shape_ranges.h"
#include "tools/onepool/tensor_files.h"

namespace onepool::cli {

namespace {

using Clock = std::chrono::steady_clock;

double elapsed_ms(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct SweepLine {
  int line_number = 0;
  std::string text;
  std::vector<NamedShape> shapes;
};

Expected<std::vector<SweepLine>> read_sweep_file(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    return make_status(StatusCode::kNotFound, "cannot open --shapes-sweep file '", path, "'");
  std::vector<SweepLine> lines;
  std::string text;
  for (int number = 1; std::getline(in, text); ++number) {
    const size_t begin = text.find_first_not_of(" \t\r");
    if (begin == std::string::npos || text[begin] == '#') continue;
    text = text.substr(begin, text.find_last_not_of(" \t\r") + 1 - begin);
    Expected<std::vector<NamedShape>> shapes = parse_shapes_flag(text);
    if (!shapes) return shapes.status().with_context(str_cat("'", path, "' line ", number));
    lines.push_back(SweepLine{number, text, std::move(shapes).value()});
  }
  if (lines.empty()) return make_status(StatusCode::kInvalidArgument, "'", path, "' has no shapes");
  return lines;
}

// Inputs of the line's shapes (inputs it does not name keep their top shape): read from
// `line_dir`/inputs/<name>.bin when that exists, else seeded random values.
Expected<std::vector<HostTensor>> inputs_for(const DynamicSession& session, const SweepLine& line,
                                             uint64_t seed, const std::string& line_dir) {
  std::vector<HostTensor> tensors;
  for (size_t i = 0; i < session.inputs().size(); ++i) {
    TensorInfo info = session.inputs()[i];
    for (const auto& [name, dims] : line.shapes) {
      if (name != info.name) continue;
      ONEPOOL_ASSIGN_OR_RETURN(info.shape, Shape::from_dims(dims));
    }
    const std::string file = line_dir + "/inputs/" + info.name + ".bin";
    if (!line_dir.empty() && std::filesystem::exists(file)) {
      ONEPOOL_ASSIGN_OR_RETURN(HostTensor tensor, read_raw_tensor(file, info));
      tensors.push_back(std::move(tensor));
      continue;
    }
    const bool is_float = info.dtype == DType::kFloat32 || info.dtype == DType::kFloat64;
    tensors.push_back(random_tensor(info, seed + i, 0.0, is_float ? 1.0 : 10.0));
  }
  for (const auto& [name, dims] : line.shapes) {
    bool known = false;
    for (const auto& info : session.inputs()) known = known || info.name == name;
    if (!known) {
      return make_status(StatusCode::kInvalidArgument, "sweep line ", line.line_number,
                         ": the model has no input '", name, "'");
    }
  }
  return tensors;
}

std::vector<TensorView> views_of(std::vector<HostTensor>& tensors) {
  std::vector<TensorView> views;
  for (auto& t : tensors) views.push_back(TensorView{t.data.data(), t.dtype, t.shape, Device{}});
  return views;
}

struct LineResult {
  std::string shapes;
  bool cache_hit = false;
  bool reused_placement = false;
  bool symbolic_placement = false;
  double specialize_ms = 0;
  double place_ms = 0;
  size_t plan_pool_bytes = 0;
  size_t plan_lower_bound_bytes = 0;
  size_t pool_bytes = 0;
  double run_ms = 0;

  const char* placement() const {
    if (cache_hit) return "-";
    if (symbolic_placement) return "sym";
    return reused_placement ? "reuse" : "plan";
  }
};

Expected<LineResult> run_line(DynamicSession& session, const SweepLine& line, uint64_t seed,
                              int runs, const std::string& line_dir) {
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<HostTensor> inputs,
                           inputs_for(session, line, seed, line_dir));
  std::vector<TensorView> in = views_of(inputs);
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<TensorInfo> infos, session.output_infos(in));
  LineResult result;
  result.shapes = line.text;
  const SpecializationInfo& info = session.last_specialization();
  result.cache_hit = info.cache_hit;
  result.reused_placement = info.reused_placement;
  result.symbolic_placement = info.symbolic_placement;
  result.plan_lower_bound_bytes = info.plan_lower_bound_bytes;
  result.specialize_ms = info.specialize_ms;
  result.place_ms = info.place_ms;
  result.plan_pool_bytes = info.plan_pool_bytes;
  std::vector<HostTensor> outputs;
  for (const auto& output : infos) outputs.push_back(empty_tensor(output));
  std::vector<TensorView> out = views_of(outputs);
  double total_ms = 0;
  for (int i = 0; i < std::max(1, runs); ++i) {
    const auto start = Clock::now();
    ONEPOOL_RETURN_IF_ERROR(session.run(in, out));
    total_ms += elapsed_ms(start);
  }
  result.run_ms = total_ms / std::max(1, runs);
  if (!line_dir.empty())
    ONEPOOL_RETURN_IF_ERROR(save_outputs(line_dir + "/onepool", infos, outputs));
  result.pool_bytes = session.stats().pool_bytes;
  return result;
}

double mean(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return values.empty() ? 0.0 : sum / static_cast<double>(values.size());
}

Status write_sweep_report(const std::string& path, const ModelFlags& model,
                          const DynamicSession& session, const std::vector<LineResult>& results,
                          double create_ms) {
  const DynamicSessionStats& stats = session.stats();
  nlohmann::json lines = nlohmann::json::array();
  for (const LineResult& r : results) {
    lines.push_back({{"shapes", r.shapes},
                     {"cache_hit", r.cache_hit},
                     {"reused_placement", r.reused_placement},
                     {"symbolic_placement", r.symbolic_placement},
                     {"plan_lower_bound_bytes", r.plan_lower_bound_bytes},
                     {"specialize_ms", r.specialize_ms},
                     {"place_ms", r.place_ms},
                     {"plan_pool_bytes", r.plan_pool_bytes},
                     {"pool_bytes", r.pool_bytes},
                     {"run_ms", r.run_ms}});
  }
  nlohmann::json report = {{"schema_version", 1},
                           {"model", model.model_path},
                           {"profile", session.profile().to_string()},
                           {"mode", pool_mode_name(stats.mode)},
                           {"mode_note", stats.mode_note},
                           {"placement_note", stats.placement_note},
                           {"create_ms", create_ms},
                           {"lines", lines},
                           {"cache_hits", stats.cache_hits},
                           {"cache_misses", stats.cache_misses},
                           {"cache_evictions", stats.cache_evictions},
                           {"symbolic_placements", stats.symbolic_placements},
                           {"symbolic_fallbacks", stats.symbolic_fallbacks},
                           {"symbolic_note", stats.symbolic_note},
                           {"pool_allocations", stats.pool_allocations},
                           {"pool_growth_events", stats.pool_growth_events},
                           {"pool_bytes", stats.pool_bytes},
                           {"peak_pool_bytes", stats.peak_pool_bytes},
                           {"log2_element_range", std::log2(session.profile().element_ratio())}};
  std::ofstream out(path);
  out << report.dump(2) << "\n";
  if (!out) return make_status(StatusCode::kNotFound, "cannot write report '", path, "'");
  return Status::ok();
}

void print_summary(const DynamicSession& session, const std::vector<LineResult>& results) {
  const DynamicSessionStats& stats = session.stats();
  std::set<std::string> distinct;
  std::vector<double> specialize_ms, place_ms, run_ms, symbolic_us, planned_us;
  int64_t hits = 0;
  for (const LineResult& r : results) {
    distinct.insert(r.shapes);
    run_ms.push_back(r.run_ms);
    if (r.cache_hit) {
      ++hits;
      continue;
    }
    specialize_ms.push_back(r.specialize_ms);
    place_ms.push_back(r.place_ms);
    if (r.symbolic_placement) symbolic_us.push_back(r.place_ms * 1e3);
    if (!r.symbolic_placement && !r.reused_placement) planned_us.push_back(r.place_ms * 1e3);
  }
  std::printf(
      "summary:   %zu shapes (%zu distinct), %lld cache hits, %lld misses, %lld "
      "evictions (whole session, creation included)\n",
      results.size(), distinct.size(), static_cast<long long>(hits),
      static_cast<long long>(stats.cache_misses), static_cast<long long>(stats.cache_evictions));
  std::printf(
      "placement: whole session (creation included): %lld symbolic, %lld reused the top plan, "
      "%lld by the algorithms, %lld symbolic fallbacks\n",
      static_cast<long long>(stats.symbolic_placements),
      static_cast<long long>(stats.reused_placements),
      static_cast<long long>(stats.fresh_placements),
      static_cast<long long>(stats.symbolic_fallbacks));
  std::printf("new shapes of this sweep: mean specialize %.1f ms, mean place %.3f ms",
              mean(specialize_ms), mean(place_ms));
  if (!symbolic_us.empty()) std::printf(" (symbolic %.0f us", mean(symbolic_us));
  if (!planned_us.empty()) {
    std::printf("%s algorithms %.0f us", symbolic_us.empty() ? " (" : ", ", mean(planned_us));
  }
  if (!symbolic_us.empty() || !planned_us.empty()) std::printf(")");
  std::printf(", mean run of every line %.1f ms\n", mean(run_ms));
  std::printf(
      "pool:      %s mode | final %s | peak %s | %lld allocations, %lld growth events "
      "(log2 of the element range: %.2f)\n",
      pool_mode_name(stats.mode).c_str(), format_bytes(stats.pool_bytes).c_str(),
      format_bytes(stats.peak_pool_bytes).c_str(), static_cast<long long>(stats.pool_allocations),
      static_cast<long long>(stats.pool_growth_events),
      std::log2(session.profile().element_ratio()));
  if (!stats.mode_note.empty()) std::printf("note:      %s\n", stats.mode_note.c_str());
  if (!stats.symbolic_note.empty()) std::printf("note:      %s\n", stats.symbolic_note.c_str());
  if (!stats.placement_note.empty() && stats.mode == PoolMode::kStatic) {
    std::printf("note:      %s\n", stats.placement_note.c_str());
  }
}

}  // namespace

Status run_shape_sweep(const ModelFlags& model, const SweepFlags& sweep, uint64_t seed) {
  ONEPOOL_ASSIGN_OR_RETURN(DynamicSessionOptions options,
                           make_dynamic_session_options(model, sweep.mode, sweep.cache));
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<SweepLine> lines, read_sweep_file(sweep.shapes_file));
  std::printf("model:     %s\n", model.model_path.c_str());
  std::printf("profile:   %s\n", options.profile.to_string().c_str());
  std::printf("sweep:     %s (%zu shapes)   mode: %s   cache: %zu   threads: %d\n",
              sweep.shapes_file.c_str(), lines.size(), sweep.mode.c_str(), sweep.cache,
              model.threads);
  const auto start = Clock::now();
  ONEPOOL_ASSIGN_OR_RETURN(auto session, DynamicSession::create(model.model_path, options));
  const double create_ms = elapsed_ms(start);
  std::printf("created:   %.1f ms | %s mode | pool %s\n", create_ms,
              pool_mode_name(session->stats().mode).c_str(),
              format_bytes(session->stats().pool_bytes).c_str());
  std::printf("%4s  %-28s %-4s %-6s %10s %9s %14s %7s %14s %9s\n", "#", "shapes", "hit", "place",
              "special ms", "place us", "plan pool B", "pool/LB", "pool B", "run ms");
  std::vector<LineResult> results;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string line_dir = sweep.io_dir.empty() ? "" : str_cat(sweep.io_dir, "/", i + 1);
    Expected<LineResult> result =
        run_line(*session, lines[i], seed, sweep.runs_per_shape, line_dir);
    if (!result) return result.status().with_context(str_cat("sweep line ", lines[i].line_number));
    const LineResult& r = *result;
    const double pool_over_bound = r.plan_lower_bound_bytes == 0
                                       ? 0.0
                                       : static_cast<double>(r.plan_pool_bytes) /
                                             static_cast<double>(r.plan_lower_bound_bytes);
    std::printf("%4zu  %-28s %-4s %-6s %10.1f %9.0f %14zu %7.3f %14zu %9.1f\n", i + 1,
                r.shapes.c_str(), r.cache_hit ? "yes" : "no", r.placement(), r.specialize_ms,
                r.place_ms * 1e3, r.plan_pool_bytes, pool_over_bound, r.pool_bytes, r.run_ms);
    std::fflush(stdout);
    results.push_back(r);
  }
  print_summary(*session, results);
  if (session->stats().mode == PoolMode::kDynamic) {
    const size_t before = session->stats().pool_bytes;
    ONEPOOL_RETURN_IF_ERROR(session->trim());
    std::printf("trim():    pool %s -> %s (the largest of the %zu cached plans)\n",
                format_bytes(before).c_str(), format_bytes(session->stats().pool_bytes).c_str(),
                session->cached_specializations());
  }
  if (!sweep.report.empty()) {
    ONEPOOL_RETURN_IF_ERROR(write_sweep_report(sweep.report, model, *session, results, create_ms));
    std::printf("report written to %s\n", sweep.report.c_str());
  }
  return Status::ok();
}

}  // namespace onepool::cli
