// Parsing of the user's shape flags: `--shapes x:1x3x224x224,y:[1,10]` and `--dim batch=8`.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "onepool/status.h"

namespace onepool {

using NamedShape = std::pair<std::string, std::vector<int64_t>>;

/// Parses one --shapes value: comma-separated `name:AxBxC` or `name:[A,B,C]` entries.
/// Dims must be positive integers; names may contain ':' only before the last ':'.
Expected<std::vector<NamedShape>> parse_shapes_flag(const std::string& text);
/// Parses one --dim value `name=value` (value a positive integer).
Expected<std::pair<std::string, int64_t>> parse_dim_flag(const std::string& text);
/// Parses "rows=64" (--bound: a tensor's length bound, LoadOptions::bounds).
Expected<std::pair<std::string, int64_t>> parse_bound_flag(const std::string& text);
/// "x:1x3x224x224,y:1x10": the --shapes line for these shapes.
std::string format_shapes_flag(const std::vector<NamedShape>& shapes);

}  // namespace onepool
