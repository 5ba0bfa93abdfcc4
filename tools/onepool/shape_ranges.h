// `--shapes` with ranges ([lo..hi] or [lo..hi:step] on an axis), as every subcommand reads them:
// one profile for a DynamicSession (bench --shapes-sweep, serve), or the top of each range for
// the commands that run or plan one set of shapes (run, bench, compare, plan).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "onepool/dynamic_session.h"
#include "tools/onepool/cli_common.h"

namespace onepool::cli {

/// Every --shapes value merged into one profile (ranges allowed).
Expected<ShapeProfile> parse_profile_flags(const std::vector<std::string>& shapes);

/// Whether any --shapes value has a range.
bool has_shape_ranges(const std::vector<std::string>& shapes);

/// The `--shapes` values with every range replaced by its top.
Expected<std::vector<std::string>> top_of_range_shapes(const std::vector<std::string>& shapes);

/// DynamicSession options from the model flags: the --shapes profile, `mode` ("static" or
/// "dynamic") and `cache` specializations, --dim and --values fixed for every shape, and the
/// SessionOptions the flags ask for (device, threads, ISA, planner settings).
Expected<DynamicSessionOptions> make_dynamic_session_options(const ModelFlags& flags,
                                                             const std::string& mode, size_t cache);

}  // namespace onepool::cli
