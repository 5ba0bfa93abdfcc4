#include "planner/render/plan_provenance.h"

#include <cstdint>
#include <cstdio>
#include <fstream>

namespace onepool {

Expected<std::string> hash_model_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_status(StatusCode::kNotFound, "cannot open model file '", path, "'");
  // FNV-1a, 64-bit: offset basis and prime from the reference (Fowler, Noll, Vo).
  uint64_t hash = 14695981039346656037ULL;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
    const std::streamsize count = in.gcount();
    for (std::streamsize i = 0; i < count; ++i) {
      hash ^= static_cast<unsigned char>(buffer[i]);
      hash *= 1099511628211ULL;
    }
  }
  char text[32];
  std::snprintf(text, sizeof(text), "fnv1a64:%016llx", static_cast<unsigned long long>(hash));
  return std::string(text);
}

std::string format_input_shapes(const std::vector<std::pair<std::string, Shape>>& inputs) {
  std::string text;
  for (const auto& [name, shape] : inputs) {
    std::string dims;
    for (int64_t dim : shape) dims += str_cat(dims.empty() ? "" : "x", dim);
    text += str_cat(text.empty() ? "" : ",", name, ":", dims.empty() ? "[]" : dims);
  }
  return text;
}

std::vector<std::string> provenance_differences(const PlanProvenance& saved,
                                                const PlanProvenance& current) {
  const std::pair<const char*, std::pair<std::string, std::string>> fields[] = {
      {"model_hash", {saved.model_hash, current.model_hash}},
      {"input_shapes", {saved.input_shapes, current.input_shapes}},
      {"device", {saved.device, current.device}},
      {"algorithm", {saved.algorithm, current.algorithm}},
      {"alignment", {std::to_string(saved.alignment), std::to_string(current.alignment)}},
      {"aliasing", {saved.aliasing, current.aliasing}},
      {"schedule", {saved.schedule, current.schedule}},
      {"optimize", {saved.optimize, current.optimize}},
      {"workspaces", {saved.workspaces, current.workspaces}},
      {"external",
       {saved.external.empty() ? "none" : saved.external,
        current.external.empty() ? "none" : current.external}},
      {"onepool_version", {saved.onepool_version, current.onepool_version}}};
  std::vector<std::string> lines;
  for (const auto& [field, values] : fields) {
    if (values.first == values.second) continue;
    std::string line = str_cat(field, ": plan ", values.first, ", now ", values.second);
    if (std::string(field) == "model_hash") {
      line += str_cat(" (plan made from '", saved.model_path, "', now '", current.model_path, "')");
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

Status check_plan_provenance(const PlanProvenance& saved, const PlanProvenance& current,
                             const std::string& plan_source) {
  if (!saved.known()) return Status::ok();
  const std::vector<std::string> lines = provenance_differences(saved, current);
  if (lines.empty()) return Status::ok();
  std::string message =
      str_cat(plan_source, " was made for another model or other options (", lines.size(),
              lines.size() == 1 ? " field differs" : " fields differ", "):");
  for (const std::string& line : lines) message += "\n  " + line;
  message += "\nplan again with these options (`onepool plan ... --format json` or --save-plan)";
  return make_status(StatusCode::kInvalidArgument, message);
}

}  // namespace onepool
