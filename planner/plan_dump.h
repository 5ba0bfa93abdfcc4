// Human-readable views of a Plan: per-tensor table, address × step chart, summary, CSV.
//
// Pure functions of the plan; thread-safe. Workspaces and aliases appear like tensors. Plans
// built from bare records (no steps) use the largest last step to size the chart.
#pragma once

#include <string>

#include "onepool/plan.h"

namespace onepool {

/// One row per tensor: chart letter, name, producing op, dtype, shape, bytes, offset, first, last.
std::string render_plan_table(const Plan& plan);
/// ASCII chart in the style of TFLite Micro's PrintMemoryPlan: rows are steps (each row sums up a
/// range of steps when there are more than `height`), columns are `width` equal address buckets
/// of the pool, a letter per tensor ('.' free). The peak row is marked `<- peak` and the tensors
/// live at the peak step are listed below the chart.
std::string render_plan_chart(const Plan& plan, int width = 100, int height = 60);
/// Pool, lower bound and naive bytes (format_bytes: exact and binary units), pool/LB, "optimal", verify verdict, time.
std::string render_plan_summary(const Plan& plan);
/// `name,op,dtype,shape,bytes,offset,first,last` header plus one line per tensor.
std::string render_plan_csv(const Plan& plan);
/// The chart letter of tensor `index` (cycles through A-Z, a-z, 0-9).
char plan_tensor_letter(size_t index);

}  // namespace onepool
