// A diff of two plans (`onepool plan --diff A.json B.json`): summary deltas, tensors only in one
// plan, and tensors whose placement or lifetime changed. Tensors are matched by name.
//
// Pure functions of the plans; thread-safe. Planning time is never a difference: it changes
// from run to run.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "onepool/plan.h"

namespace onepool {

/// One summary field of both plans, as text, with B - A for numbers.
struct PlanDiffSummaryRow {
  std::string label;
  std::string a;
  std::string b;
  std::string delta;  ///< "+66208 (+0.69%)", "changed", or "" when equal
  bool differs = false;
};

/// A tensor present in both plans whose bytes, offset, aliasing or lifetime changed.
struct PlanTensorChange {
  std::string name;
  PlannedTensor a;
  PlannedTensor b;
  std::string a_alias_owner;  ///< name of the tensor `a` aliases, or "" when it owns storage
  std::string b_alias_owner;
  /// |b.bytes - a.bytes|: the sort key, largest first.
  size_t bytes_change() const { return a.bytes > b.bytes ? a.bytes - b.bytes : b.bytes - a.bytes; }
};

struct PlanDiff {
  std::vector<PlanDiffSummaryRow> summary;
  std::string steps_note;                 ///< where the execution orders first differ, or ""
  std::vector<std::string> only_in_a;     ///< names, in A's order
  std::vector<std::string> only_in_b;     ///< names, in B's order
  std::vector<PlanTensorChange> changed;  ///< largest byte change first, then by name
  /// True when nothing but the planning time differs.
  bool empty() const;
};

struct PlanDiffOptions {
  std::string a_label = "A";  ///< how the first plan is named in the text (a path)
  std::string b_label = "B";
  size_t max_changed_rows = 40;  ///< rows of the changed-tensor table; the rest are counted
  size_t max_listed_names = 30;  ///< names listed per "only in" line; the rest are counted
};

PlanDiff diff_plans(const Plan& a, const Plan& b);
/// The diff as text; "no differences" when `diff.empty()`.
std::string render_plan_diff(const PlanDiff& diff, const PlanDiffOptions& options);

}  // namespace onepool
