// The HTML plan view: the page skeleton, the summary and peak table (static HTML), and the plan
// data the inline script draws the chart from. The CSS and script live in plan_html_assets.cc.
#include "planner/render/plan_html.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "planner/core/byte_units.h"
#include "planner/render/plan_dump.h"
#include "planner/render/plan_html_assets.h"

namespace onepool {
namespace {

using Json = nlohmann::json;

constexpr size_t kMaxPeakRows = 200;

enum class TensorKind { kOwner = 0, kAlias = 1, kWorkspace = 2 };

TensorKind kind_of(const PlannedTensor& tensor) {
  if (tensor.alias_of >= 0) return TensorKind::kAlias;
  if (tensor.workspace_node >= 0) return TensorKind::kWorkspace;
  return TensorKind::kOwner;
}

bool owns_storage(const PlannedTensor& tensor) { return tensor.alias_of < 0 && tensor.bytes > 0; }

std::string escape_html(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// JSON placed inside <script>: '<' only occurs inside strings there, and as \u003c it can
// neither close the script element nor open a comment.
std::string json_for_script(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

std::string ratio_text(size_t numerator, size_t denominator) {
  if (denominator == 0) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.3f",
                static_cast<double>(numerator) / static_cast<double>(denominator));
  return buffer;
}

std::string dtype_text(DType dtype) { return dtype == DType::kUndefined ? "-" : dtype_name(dtype); }

// An alias's plan entry has no bytes of its own; its extent is its logical size.
size_t drawn_bytes(const PlannedTensor& tensor) {
  if (tensor.bytes > 0 || tensor.dtype == DType::kUndefined) return tensor.bytes;
  auto bytes = tensor_bytes(tensor.shape, tensor.dtype);
  return bytes ? *bytes : 0;
}

std::string owner_name(const Plan& plan, const std::unordered_map<int32_t, size_t>& by_id,
                       const PlannedTensor& tensor) {
  const auto found = by_id.find(tensor.alias_of);
  if (found == by_id.end()) return str_cat("#", tensor.alias_of);
  return plan.tensors[found->second].name;
}

std::unordered_map<int32_t, size_t> index_by_id(const Plan& plan) {
  std::unordered_map<int32_t, size_t> by_id;
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    if (plan.tensors[i].id >= 0) by_id.emplace(plan.tensors[i].id, i);
  }
  return by_id;
}

Json tensor_json(const Plan& plan, const std::unordered_map<int32_t, size_t>& by_id, size_t index,
                 size_t address) {
  const PlannedTensor& tensor = plan.tensors[index];
  Json out = {{"n", tensor.name},
              {"op", tensor.producer_op},
              {"dt", dtype_text(tensor.dtype)},
              // A tensor of data-dependent size shows its planned bound as "<=[..]".
              {"sh", (tensor.bound.empty() ? "" : "<=") + tensor.shape.to_string()},
              {"b", drawn_bytes(tensor)},
              {"a", address},
              {"f", tensor.first},
              {"l", tensor.last},
              {"k", static_cast<int>(kind_of(tensor))}};
  if (tensor.alias_of >= 0) {
    out["of"] = owner_name(plan, by_id, tensor);
    out["ao"] = tensor.alias_offset;
  }
  return out;
}

// `count` elements, each dumped compactly on its own, as one JSON array: no DOM of them all (a
// plan of 100,000 tensors).
template <class Item>
std::string compact_array(size_t count, Item item) {
  std::string out = "[";
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) out += ',';
    out += item(i).dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  return out + "]";
}

// The chart's data, compact, in nlohmann's key order; the two arrays are streamed into the small
// object's dump where it holds null placeholders (its keys are fixed words, never a plan's
// strings).
std::string plan_data(const Plan& plan, const PlanPeak& peak) {
  const std::unordered_map<int32_t, size_t> by_id = index_by_id(plan);
  const std::vector<size_t> addresses = plan_tensor_addresses(plan);
  size_t top = plan.pool_bytes;
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    top = std::max(top, addresses[i] + drawn_bytes(plan.tensors[i]));
  }
  const Json head = {{"steps", plan_step_count(plan)},
                     {"stepNames", nullptr},
                     {"pool", plan.pool_bytes},
                     {"top", top},
                     {"peakStep", peak.step},
                     {"peakBytes", peak.live_bytes},
                     {"tensors", nullptr}};
  std::string out = head.dump();
  const auto splice = [&out](const std::string& key, const std::string& array) {
    const std::string placeholder = "\"" + key + "\":null";
    out.replace(out.find(placeholder), placeholder.size(), "\"" + key + "\":" + array);
  };
  splice("stepNames", compact_array(plan.steps.size(), [&](size_t i) {
           return Json(str_cat(plan.steps[i].node, " (", plan.steps[i].op, ")"));
         }));
  splice("tensors", compact_array(plan.tensors.size(), [&](size_t i) {
           return tensor_json(plan, by_id, i, addresses[i]);
         }));
  return out;
}

std::string summary_item(const std::string& label, const std::string& value) {
  return str_cat("<div class=\"item\"><span class=\"label\">", escape_html(label),
                 "</span><span class=\"value\">", escape_html(value), "</span></div>\n");
}

std::string tensor_counts_text(const Plan& plan) {
  size_t aliases = 0;
  size_t workspaces = 0;
  for (const PlannedTensor& tensor : plan.tensors) {
    if (kind_of(tensor) == TensorKind::kAlias) ++aliases;
    if (kind_of(tensor) == TensorKind::kWorkspace) ++workspaces;
  }
  return str_cat(plan.tensors.size(), " (", aliases, " aliases, ", workspaces, " workspaces)");
}

std::string summary_html(const Plan& plan) {
  std::string items;
  items += summary_item("pool", format_bytes(plan.pool_bytes));
  items += summary_item("lower bound (LB)", format_bytes(plan.lower_bound_bytes));
  if (plan.plain_lower_bound_bytes > 0) {
    items += summary_item("LB without aliasing", format_bytes(plan.plain_lower_bound_bytes));
  }
  if (plan.plain_pool_bytes > 0) {
    items += summary_item("pool without aliasing", format_bytes(plan.plain_pool_bytes));
  }
  items += summary_item("naive (no reuse)", format_bytes(plan.naive_bytes));
  items += summary_item("pool / LB", ratio_text(plan.pool_bytes, plan.lower_bound_bytes) +
                                         (plan.optimal ? "  optimal" : ""));
  items += summary_item("algorithm", plan.algorithm.empty() ? "-" : plan.algorithm);
  char planning[32];
  std::snprintf(planning, sizeof(planning), "%.3f ms", plan.planning_ms);
  items += summary_item("planning", planning);
  items += summary_item("verified", plan.verified ? "yes: no overlaps" : "no");
  items += summary_item("tensors", tensor_counts_text(plan));
  const std::string external = describe_external_tensors(plan);
  if (!external.empty()) items += summary_item("external", external);
  items += summary_item("steps", std::to_string(plan_step_count(plan)));
  items += summary_item("alignment", str_cat(plan.alignment, " B"));
  return str_cat("<div class=\"summary\">\n", items, "</div>\n");
}

// One tensor's row; `pool_address` (when given) is one more column after the offset: where a
// nested plan's tensor lies in the parent pool.
std::string peak_row(const Plan& plan, const std::unordered_map<int32_t, size_t>& by_id,
                     size_t index, size_t address, std::optional<size_t> pool_address = {}) {
  const PlannedTensor& tensor = plan.tensors[index];
  std::string note;
  if (kind_of(tensor) == TensorKind::kAlias) {
    note = str_cat("alias of ", owner_name(plan, by_id, tensor), " +", tensor.alias_offset);
  }
  if (kind_of(tensor) == TensorKind::kWorkspace) note = "workspace";
  if (tensor.external) note = "external: in a caller buffer";
  return str_cat("<tr><td>", escape_html(tensor.name), "</td><td>", escape_html(tensor.producer_op),
                 "</td><td class=\"num\">", drawn_bytes(tensor), "</td><td class=\"num\">", address,
                 pool_address ? str_cat("</td><td class=\"num\">", *pool_address) : std::string(),
                 "</td><td class=\"num\">", tensor.first, "-", tensor.last, "</td><td>",
                 escape_html(note), "</td></tr>\n");
}

std::string peak_table_html(const Plan& plan, const PlanPeak& peak) {
  const std::unordered_map<int32_t, size_t> by_id = index_by_id(plan);
  const std::vector<size_t> addresses = plan_tensor_addresses(plan);
  std::string step_name;
  if (peak.step >= 0 && peak.step < static_cast<int64_t>(plan.steps.size())) {
    const PlanStep& step = plan.steps[static_cast<size_t>(peak.step)];
    step_name = str_cat(" (", step.node, ", ", step.op, ")");
  }
  std::string rows;
  const size_t shown = std::min(peak.live_tensors.size(), kMaxPeakRows);
  for (size_t i = 0; i < shown; ++i) {
    const size_t index = peak.live_tensors[i];
    rows += peak_row(plan, by_id, index, addresses[index]);
  }
  const std::string more =
      peak.live_tensors.size() > shown
          ? str_cat("<p>... and ", peak.live_tensors.size() - shown, " more</p>\n")
          : std::string();
  return str_cat("<h2>Live at the peak: step ", peak.step, escape_html(step_name), ", ",
                 escape_html(format_bytes(peak.live_bytes)), ", ", peak.live_tensors.size(),
                 " tensors</h2>\n<table class=\"peak\">\n<thead><tr><th>name</th><th>op</th>"
                 "<th>bytes</th><th>offset</th><th>steps</th><th></th></tr></thead>\n<tbody>\n",
                 rows, "</tbody>\n</table>\n", more);
}

// A nested plan's tensors drawn as an SVG, address (down) by step (across): each owning tensor a
// box, so the group shows at a glance how the branch or body fills its region.
std::string nested_chart_svg(const NestedPlan& nested) {
  constexpr double kWidth = 640.0;
  constexpr double kHeight = 120.0;
  Plan inner;
  inner.tensors = nested.tensors;
  const auto steps = static_cast<double>(std::max<int64_t>(1, plan_step_count(inner)));
  const auto pool = static_cast<double>(std::max<size_t>(1, nested.pool_bytes));
  std::string boxes;
  for (const PlannedTensor& tensor : nested.tensors) {
    if (!owns_storage(tensor) || tensor.external) continue;
    char box[256];
    std::snprintf(
        box, sizeof(box), "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>",
        kWidth * static_cast<double>(tensor.first) / steps,
        kHeight * static_cast<double>(tensor.offset) / pool,
        std::max(1.0, kWidth * static_cast<double>(tensor.last + 1 - tensor.first) / steps),
        std::max(1.0, kHeight * static_cast<double>(tensor.bytes) / pool));
    boxes += str_cat(box, escape_html(tensor.name), " (", escape_html(tensor.producer_op),
                     "): ", escape_html(format_bytes(tensor.bytes)), " at +", tensor.offset,
                     ", steps ", tensor.first, "-", tensor.last, "</title></rect>\n");
  }
  return str_cat(
      "<svg class=\"nested-chart\" viewBox=\"0 0 640 120\" width=\"640\" "
      "height=\"120\" role=\"img\" aria-label=\"",
      escape_html(nested.node + " " + nested.body), " plan\">\n", boxes, "</svg>\n");
}

// A nested plan's tensors: offsets from the region's start and in the parent pool.
std::string nested_table_html(const Plan& plan, const NestedPlan& nested) {
  const PlannedTensor* region = plan.region_of(nested);
  Plan inner;
  inner.tensors = nested.tensors;
  const std::unordered_map<int32_t, size_t> by_id = index_by_id(inner);
  const std::vector<size_t> addresses = plan_tensor_addresses(inner);
  std::string rows;
  const size_t shown = std::min(nested.tensors.size(), kMaxPeakRows);
  for (size_t i = 0; i < shown; ++i) {
    const std::optional<size_t> pool_address =
        region != nullptr ? std::optional<size_t>(region->offset + addresses[i]) : std::nullopt;
    rows += peak_row(inner, by_id, i, addresses[i], pool_address);
  }
  const std::string more =
      nested.tensors.size() > shown
          ? str_cat("<p>... and ", nested.tensors.size() - shown, " more</p>\n")
          : std::string();
  const std::string pool_column = region != nullptr ? "<th>in the pool</th>" : "";
  return str_cat(
      "<table class=\"peak\">\n<thead><tr><th>name</th><th>op</th><th>bytes</th>"
      "<th>offset</th>",
      pool_column, "<th>steps</th><th></th></tr></thead>\n<tbody>\n", rows, "</tbody>\n</table>\n",
      more);
}

// Each If branch and Loop or Scan body planned on its own, as a collapsible group: what it
// holds, where its region lies in the enclosing pool, its chart and its tensors, then the plans
// nested in it (an If inside a branch) as groups inside its group.
std::string nested_groups_html(const Plan& plan) {
  std::string groups;
  for (const NestedPlan& nested : plan.nested) {
    Plan inner;
    inner.tensors = nested.tensors;
    inner.nested = nested.nested;
    const std::string body =
        nested.tensors.empty() ? std::string("<p>Its tensors were not recorded in this plan.</p>\n")
                               : nested_chart_svg(nested) + nested_table_html(plan, nested) +
                                     nested_groups_html(inner);
    groups += str_cat("<details class=\"nested\" data-node=\"", escape_html(nested.node),
                      "\" data-body=\"", escape_html(nested.body), "\"><summary>",
                      escape_html("nested plan " + describe_nested_plan(plan, nested)),
                      "</summary>\n", body, "</details>\n");
  }
  return groups;
}

std::string nested_plans_html(const Plan& plan) {
  if (plan.nested.empty()) return "";
  return str_cat("<h2>Nested plans: ", plan.nested.size(),
                 " (If branches, Loop and Scan bodies, each inside its node's workspace)</h2>\n",
                 nested_groups_html(plan));
}

// Search, reset and a one-line key to the mouse; the script wires them up.
std::string toolbar_html() {
  return "<div id=\"toolbar\"><input id=\"search\" type=\"search\" autocomplete=\"off\" "
         "placeholder=\"search tensor or op name (op:MatMul = that op only)\">"
         "<span id=\"search-count\"></span><button id=\"reset\" type=\"button\">reset zoom"
         "</button><span class=\"hint\">wheel: zoom steps, shift+wheel: addresses, ctrl+wheel: "
         "both; drag: pan; double-click: reset; click a tensor: pin its details (Esc: unpin)"
         "</span></div>\n";
}

}  // namespace

std::string render_plan_html(const Plan& plan, const PlanHtmlOptions& options) {
  const PlanPeak peak = find_plan_peak(plan);
  const std::string title = escape_html(options.title);
  const std::string source =
      options.source.empty()
          ? ""
          : str_cat("<p class=\"source\">", escape_html(options.source), "</p>\n");
  return str_cat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", title,
      " - OnePool memory plan</title>\n<style>\n", plan_html::page_style(), "</style>\n</head>\n",
      "<body>\n<h1>", title, " <span class=\"sub\">memory plan</span></h1>\n", source,
      summary_html(plan), toolbar_html(),
      "<div id=\"chart-box\"><canvas id=\"chart\"></canvas><canvas id=\"overlay\"></canvas>"
      "<div id=\"tip\"></div></div>\n"
      "<div id=\"pin\" hidden><button id=\"pin-close\" type=\"button\" title=\"unpin (Escape)\">"
      "&times;</button><pre id=\"pin-text\"></pre></div>\n"
      "<noscript><p>The chart needs JavaScript; the summary and the peak table do not.</p>"
      "</noscript>\n"
      "<div id=\"legend\"></div>\n",
      peak_table_html(plan, peak), nested_plans_html(plan),
      "<script type=\"application/json\" id=\"plan-data\">", json_for_script(plan_data(plan, peak)),
      "</script>\n<script>\n", plan_html::page_script(), "</script>\n</body>\n</html>\n");
}

}  // namespace onepool
