// Parsing and printing the values of shape inputs: `--values axes:1,2;k:3` (see
// LoadOptions::shape_input_values).
#pragma once

#include <map>
#include <string>

#include "onepool/model.h"
#include "onepool/status.h"
#include "planner/core/graph.h"

namespace onepool {

/// Parses one --values value: `;`-separated `name:v1,v2,...` entries (a bracketed `name:[v1,v2]`
/// too; `name:[]` or `name:` is an empty list). Values are integers (int64, sign allowed) or,
/// when any entry has a '.', 'e' or "inf"/"nan", floats. Adds to `values`; an input named twice
/// (in this text or before) is an error, as are an entry without ':', an empty name and a value
/// that is not a number. Errors quote the entry.
Status parse_values_flag(const std::string& text, std::map<std::string, ShapeInputValues>* values);

/// "[1,-1]" or "[0.5,2]": the values as --values and error messages show them (at most 16, then
/// ",... (N values)").
std::string format_shape_input_values(const ShapeInputValues& values);
/// A tensor's values as ShapeInputValues: double for float32 / float64, else int64.
ShapeInputValues shape_input_values_of(const HostTensor& tensor);
/// "axes:1,-1": one --values entry.
std::string format_values_entry(const std::string& name, const ShapeInputValues& values);

}  // namespace onepool
