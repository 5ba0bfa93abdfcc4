// What a saved plan belongs to: the model file's hash and the options that shaped the plan, and
// the check `--load-plan` runs before any offset is looked at.
//
// Pure functions (the hash reads a file); thread-safe.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "onepool/plan.h"
#include "onepool/status.h"
#include "onepool/tensor.h"

namespace onepool {

/// "fnv1a64:" + 16 lowercase hex digits: 64-bit FNV-1a over the file's bytes. Not a
/// cryptographic hash: it tells models apart, it does not authenticate them. kNotFound when the
/// file cannot be read.
Expected<std::string> hash_model_file(const std::string& path);

/// "x:1x3x640x640,mask:1x640": each input's name and shape, in the order given.
std::string format_input_shapes(const std::vector<std::pair<std::string, Shape>>& inputs);

/// One line per compared field that differs, "input_shapes: plan x:1x3x640x640, now
/// x:1x3x320x320"; every field but model_path is compared. Empty when they agree.
std::vector<std::string> provenance_differences(const PlanProvenance& saved,
                                                const PlanProvenance& current);

/// kInvalidArgument naming `plan_source` and every differing field when `saved` is known and
/// differs from `current`; ok when they agree or `saved` records nothing (schema_version 1).
Status check_plan_provenance(const PlanProvenance& saved, const PlanProvenance& current,
                             const std::string& plan_source);

}  // namespace onepool
