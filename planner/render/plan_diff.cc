// Plan diff: summary rows, name-matched tensor sets, and the changed-tensor table.
#include "planner/render/plan_diff.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <vector>

#include "planner/core/byte_units.h"
#include "planner/render/plan_geometry.h"

namespace onepool {
namespace {

constexpr size_t kMaxNameWidth = 40;

std::string signed_text(int64_t value) {
  return value > 0 ? str_cat("+", value) : std::to_string(value);
}

PlanDiffSummaryRow number_row(const std::string& label, size_t a, size_t b, bool in_bytes) {
  PlanDiffSummaryRow row{label, std::to_string(a), std::to_string(b), "", a != b};
  if (in_bytes) {
    row.a = format_bytes(a);
    row.b = format_bytes(b);
  }
  if (!row.differs) return row;
  const int64_t delta = static_cast<int64_t>(b) - static_cast<int64_t>(a);
  row.delta = signed_text(delta);
  if (a > 0) {
    char percent[32];
    std::snprintf(percent, sizeof(percent), " (%+.2f%%)",
                  100.0 * static_cast<double>(delta) / static_cast<double>(a));
    row.delta += percent;
  }
  return row;
}

PlanDiffSummaryRow text_row(const std::string& label, const std::string& a, const std::string& b) {
  return {label, a, b, a == b ? "" : "changed", a != b};
}

std::string yes_no(bool value) { return value ? "yes" : "no"; }

size_t count_if_alias(const Plan& plan, bool alias) {
  return static_cast<size_t>(
      std::count_if(plan.tensors.begin(), plan.tensors.end(),
                    [&](const PlannedTensor& t) { return (t.alias_of >= 0) == alias; }));
}

std::vector<PlanDiffSummaryRow> summary_rows(const Plan& a, const Plan& b) {
  return {
      number_row("pool", a.pool_bytes, b.pool_bytes, true),
      number_row("lower bound", a.lower_bound_bytes, b.lower_bound_bytes, true),
      number_row("LB without aliasing", a.plain_lower_bound_bytes, b.plain_lower_bound_bytes, true),
      number_row("pool without aliasing", a.plain_pool_bytes, b.plain_pool_bytes, true),
      number_row("naive", a.naive_bytes, b.naive_bytes, true),
      text_row("algorithm", a.algorithm, b.algorithm),
      text_row("optimal", yes_no(a.optimal), yes_no(b.optimal)),
      text_row("verified", yes_no(a.verified), yes_no(b.verified)),
      number_row("alignment", a.alignment, b.alignment, false),
      number_row("steps", static_cast<size_t>(plan_step_count(a)),
                 static_cast<size_t>(plan_step_count(b)), false),
      number_row("tensors (owning)", count_if_alias(a, false), count_if_alias(b, false), false),
      number_row("tensors (aliases)", count_if_alias(a, true), count_if_alias(b, true), false)};
}

std::string steps_note(const Plan& a, const Plan& b) {
  const size_t common = std::min(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < common; ++i) {
    if (a.steps[i].node != b.steps[i].node || a.steps[i].op != b.steps[i].op) {
      return str_cat("execution orders differ from step ", i, ": A runs '", a.steps[i].node, "' (",
                     a.steps[i].op, "), B runs '", b.steps[i].node, "' (", b.steps[i].op, ")");
    }
  }
  return std::string();
}

bool placement_differs(const PlannedTensor& a, const PlannedTensor& b) {
  return a.bytes != b.bytes || a.offset != b.offset || a.first != b.first || a.last != b.last ||
         (a.alias_of >= 0) != (b.alias_of >= 0) || a.alias_offset != b.alias_offset;
}

// The first tensor of each name; a later duplicate is not matched.
std::unordered_map<std::string, size_t> index_by_name(const Plan& plan) {
  std::unordered_map<std::string, size_t> by_name;
  for (size_t i = 0; i < plan.tensors.size(); ++i) by_name.emplace(plan.tensors[i].name, i);
  return by_name;
}

std::string fit(const std::string& text, size_t width) {
  if (text.size() <= width) return text;
  return text.substr(0, width - 1) + "~";
}

std::string pad(const std::string& text, size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

std::string placement_text(const PlannedTensor& tensor, const std::string& alias_owner) {
  if (tensor.alias_of >= 0) return str_cat("in ", alias_owner, "+", tensor.alias_offset);
  return std::to_string(tensor.offset);
}

std::string alias_owner_name(const Plan& plan, const PlannedTensor& tensor) {
  if (tensor.alias_of < 0) return std::string();
  const int32_t owner = plan.find_tensor(tensor.alias_of);
  return owner >= 0 ? plan.tensors[static_cast<size_t>(owner)].name : str_cat("#", tensor.alias_of);
}

std::string trim_right(std::string text) {
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

std::string change_text(const std::string& a, const std::string& b) {
  return a == b ? a : str_cat(a, " -> ", b);
}

constexpr size_t kColumnGap = 2;  // spaces between columns, however wide a value is

// Width of the widest of `values` plus the gap: no two columns ever touch.
size_t column_width(std::initializer_list<size_t> minimums, size_t widest) {
  return std::max(std::max(minimums), widest) + kColumnGap;
}

std::string summary_text(const PlanDiff& diff) {
  size_t label_width = 0;
  size_t a_width = 0;
  size_t b_width = 0;
  for (const PlanDiffSummaryRow& row : diff.summary) {
    label_width = std::max(label_width, row.label.size());
    a_width = std::max(a_width, row.a.size());
    b_width = std::max(b_width, row.b.size());
  }
  label_width = column_width({1}, label_width);
  a_width = column_width({1}, a_width);
  b_width = column_width({1}, b_width);
  std::string text = str_cat(pad("", label_width), pad("A", a_width), pad("B", b_width), "B - A\n");
  for (const PlanDiffSummaryRow& row : diff.summary) {
    text += trim_right(
        str_cat(pad(row.label, label_width), pad(row.a, a_width), pad(row.b, b_width), row.delta));
    text += "\n";
  }
  return text;
}

std::string names_line(const std::string& title, const std::vector<std::string>& names,
                       size_t max_listed) {
  std::string text = str_cat(title, " (", names.size(), ")");
  const size_t shown = std::min(names.size(), max_listed);
  for (size_t i = 0; i < shown; ++i) text += str_cat(i == 0 ? ": " : ", ", names[i]);
  if (names.size() > shown) text += str_cat(", ... and ", names.size() - shown, " more");
  return text + "\n";
}

std::string changed_table(const PlanDiff& diff, size_t max_rows) {
  std::string text =
      str_cat("changed tensors (", diff.changed.size(), ", largest byte change first):\n");
  if (diff.changed.empty()) return text;
  const size_t shown = std::min(diff.changed.size(), max_rows);
  // Step 1. Every cell as text, so each column is as wide as its widest cell.
  std::vector<std::vector<std::string>> rows = {{"name", "bytes", "offset", "steps"}};
  for (size_t i = 0; i < shown; ++i) {
    const PlanTensorChange& change = diff.changed[i];
    rows.push_back({fit(change.name, kMaxNameWidth),
                    change_text(std::to_string(change.a.bytes), std::to_string(change.b.bytes)),
                    change_text(placement_text(change.a, change.a_alias_owner),
                                placement_text(change.b, change.b_alias_owner)),
                    change_text(str_cat(change.a.first, "-", change.a.last),
                                str_cat(change.b.first, "-", change.b.last))});
  }
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  // Step 2. Padded rows; the last column is not padded.
  for (const auto& row : rows) {
    std::string line = "  ";
    for (size_t c = 0; c + 1 < row.size(); ++c) line += pad(row[c], widths[c] + kColumnGap);
    text += line + row.back() + "\n";
  }
  if (diff.changed.size() > shown) {
    text += str_cat("  ... and ", diff.changed.size() - shown, " more\n");
  }
  return text;
}

}  // namespace

bool PlanDiff::empty() const {
  const bool summary_same = std::none_of(summary.begin(), summary.end(),
                                         [](const PlanDiffSummaryRow& row) { return row.differs; });
  return summary_same && steps_note.empty() && only_in_a.empty() && only_in_b.empty() &&
         changed.empty();
}

PlanDiff diff_plans(const Plan& a, const Plan& b) {
  PlanDiff diff;
  diff.summary = summary_rows(a, b);
  diff.steps_note = steps_note(a, b);
  // Step 1. Names in one plan only.
  const auto a_by_name = index_by_name(a);
  const auto b_by_name = index_by_name(b);
  for (const PlannedTensor& tensor : a.tensors) {
    if (!b_by_name.contains(tensor.name)) diff.only_in_a.push_back(tensor.name);
  }
  for (const PlannedTensor& tensor : b.tensors) {
    if (!a_by_name.contains(tensor.name)) diff.only_in_b.push_back(tensor.name);
  }
  // Step 2. Matched names whose placement or lifetime changed, largest byte change first.
  for (const auto& [name, a_index] : a_by_name) {
    const auto found = b_by_name.find(name);
    if (found == b_by_name.end()) continue;
    const PlannedTensor& in_a = a.tensors[a_index];
    const PlannedTensor& in_b = b.tensors[found->second];
    if (!placement_differs(in_a, in_b)) continue;
    diff.changed.push_back(
        {name, in_a, in_b, alias_owner_name(a, in_a), alias_owner_name(b, in_b)});
  }
  std::sort(diff.changed.begin(), diff.changed.end(),
            [](const PlanTensorChange& x, const PlanTensorChange& y) {
              if (x.bytes_change() != y.bytes_change()) return x.bytes_change() > y.bytes_change();
              return x.name < y.name;
            });
  return diff;
}

std::string render_plan_diff(const PlanDiff& diff, const PlanDiffOptions& options) {
  std::string text = str_cat("plan diff: A = ", options.a_label, ", B = ", options.b_label, "\n");
  if (diff.empty()) return text + "no differences (planning time aside)\n";
  text += str_cat("\n", summary_text(diff), "\n");
  if (!diff.steps_note.empty()) text += diff.steps_note + "\n";
  text += names_line("tensors only in A", diff.only_in_a, options.max_listed_names);
  text += names_line("tensors only in B", diff.only_in_b, options.max_listed_names);
  text += changed_table(diff, options.max_changed_rows);
  return text;
}

}  // namespace onepool
