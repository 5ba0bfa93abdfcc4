#include "tools/onepool/shape_ranges.h"

#include "planner/core/shape_binding.h"
#include "planner/core/shape_input_flag.h"

namespace onepool::cli {

Expected<ShapeProfile> parse_profile_flags(const std::vector<std::string>& shapes) {
  ShapeProfile profile;
  for (const std::string& text : shapes) {
    ONEPOOL_ASSIGN_OR_RETURN(ShapeProfile part, ShapeProfile::parse(text));
    ONEPOOL_RETURN_IF_ERROR(profile.merge(part));
  }
  return profile;
}

bool has_shape_ranges(const std::vector<std::string>& shapes) {
  for (const std::string& text : shapes) {
    if (text.find("..") != std::string::npos) return true;
  }
  return false;
}

Expected<std::vector<std::string>> top_of_range_shapes(const std::vector<std::string>& shapes) {
  std::vector<std::string> result;
  for (const std::string& text : shapes) {
    if (!has_shape_ranges({text})) {
      result.push_back(text);
      continue;
    }
    ONEPOOL_ASSIGN_OR_RETURN(ShapeProfile profile, ShapeProfile::parse(text));
    result.push_back(format_shapes_flag(profile.max_shapes()));
  }
  return result;
}

Expected<DynamicSessionOptions> make_dynamic_session_options(const ModelFlags& flags,
                                                             const std::string& mode,
                                                             size_t cache) {
  DynamicSessionOptions options;
  ONEPOOL_ASSIGN_OR_RETURN(options.profile, parse_profile_flags(flags.shapes));
  if (mode != "static" && mode != "dynamic") {
    return make_status(StatusCode::kInvalidArgument, "--mode '", mode,
                       "': expected static or dynamic");
  }
  options.mode = mode == "static" ? PoolMode::kStatic : PoolMode::kDynamic;
  options.cache_capacity = cache;
  options.load.optimize = flags.optimize;
  options.load.schedule = flags.schedule;
  for (const auto& text : flags.dims) {
    ONEPOOL_ASSIGN_OR_RETURN(auto dim, parse_dim_flag(text));
    options.load.dims.push_back(std::move(dim));
  }
  for (const auto& text : flags.values) {  // shape inputs: fixed for every shape
    ONEPOOL_RETURN_IF_ERROR(parse_values_flag(text, &options.load.shape_input_values));
  }
  ONEPOOL_RETURN_IF_ERROR(parse_bound_flags(flags.bounds, &options.load.bounds));
  ONEPOOL_ASSIGN_OR_RETURN(options.session, make_session_options(flags));
  return options;
}

}  // namespace onepool::cli
