// Human-readable views of a Plan: per-tensor table, address × step chart, summary, CSV.
//
// Pure functions of the plan; thread-safe. Workspaces and aliases appear like tensors. Plans
// built from bare records (no steps) use the largest last step to size the chart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onepool/plan.h"

namespace onepool {

/// One row per tensor: chart symbol, name, producing op, dtype, shape, bytes, offset (an alias:
/// "in OWNER+N", OWNER the name of the tensor whose storage it uses), first, last. Then, for each
/// nested plan that lists its tensors, a heading (describe_nested_plan) and their table, offsets
/// from the start of the region and steps of the nested graph.
std::string render_plan_table(const Plan& plan);
/// "If_25 then_branch: 12 tensors, pool 2,048 B (2.00 KiB), lower bound ...; region
/// If_25:workspace at [4,096, 6,144) of the pool, step 7" (the region: the nested pool inside its
/// node's workspace record).
std::string describe_nested_plan(const Plan& plan, const NestedPlan& nested);
/// ASCII chart in the style of TFLite Micro's PrintMemoryPlan: rows are steps (each row sums up a
/// range of steps when there are more than `height`), columns are `width` equal address buckets
/// of the pool, a symbol per tensor (plan_tensor_symbols; '.' free). A legend names every letter
/// the chart shows; the peak row is marked `<- peak` and the tensors live at the peak step are
/// listed below the chart.
std::string render_plan_chart(const Plan& plan, int width = 100, int height = 60);
/// Pool, lower bound and naive bytes (format_bytes: exact and binary units), pool/LB, "optimal",
/// verify verdict, one planning time and the plan's shape (algorithm, alignment, tensors, steps).
/// `total_planning_ms` >= 0: the whole planning phase, shown with its placement part; < 0: only
/// the placement time the plan records. `verdict`: the caller's plan.verify() result, or null
/// to verify here.
std::string render_plan_summary(const Plan& plan, double total_planning_ms = -1.0,
                                const Status* verdict = nullptr);
/// `name,op,dtype,shape,bytes,offset,first,last` header plus one line per tensor.
std::string render_plan_csv(const Plan& plan);

/// "2 tensors in caller buffers, 3,211,264 B (3.06 MiB) outside the pool: x, logits" for the
/// plan's external tensors (PlannedTensor::external); empty when there are none.
std::string describe_external_tensors(const Plan& plan);
/// One chart symbol per entry of plan.tensors, never repeated for two tensors: the 62 largest
/// owning tensors get A-Z, a-z, 0-9 in order of first step (then offset), smaller owners '+',
/// aliases and empty tensors '-' (they have no bytes of their own).
std::vector<char> plan_tensor_symbols(const Plan& plan);

}  // namespace onepool
