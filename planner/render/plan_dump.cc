// Plan renderers: table, ASCII chart, summary, CSV.
#include "planner/render/plan_dump.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "planner/core/byte_units.h"
#include "planner/render/plan_geometry.h"

namespace onepool {
namespace {

constexpr std::string_view kLetters =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
constexpr char kSmallTensorSymbol = '+';  // an owning tensor outside the largest kLetters.size()
constexpr char kNoSymbol = '-';           // an alias or an empty tensor: no bytes of its own
constexpr size_t kMaxNameWidth = 48;
constexpr size_t kMaxPeakListed = 30;
constexpr size_t kLegendWidth = 100;

bool owns_storage(const PlannedTensor& tensor) { return tensor.alias_of < 0 && tensor.bytes > 0; }

std::string fit(const std::string& text, size_t width) {
  if (text.size() <= width) return text;
  return text.substr(0, width - 1) + "~";
}

std::string pad(const std::string& text, size_t width, bool right_align) {
  if (text.size() >= width) return text;
  const std::string fill(width - text.size(), ' ');
  return right_align ? fill + text : text + fill;
}

std::string shape_text(const PlannedTensor& tensor, char separator) {
  if (tensor.shape.rank() == 0) return tensor.dtype == DType::kUndefined ? "-" : "[]";
  std::string text;
  for (int64_t dim : tensor.shape) {
    text += text.empty() ? "" : std::string(1, separator);
    text += std::to_string(dim);
  }
  if (separator != ',') return text;
  return (tensor.bound.empty() ? "[" : "<=[") + text + "]";  // a bound, not the run's shape
}

std::string dtype_text(DType dtype) { return dtype == DType::kUndefined ? "-" : dtype_name(dtype); }

// An alias is named by the tensor whose storage it uses: "in conv_1_out+512".
std::string offset_text(const Plan& plan, const PlannedTensor& tensor) {
  if (tensor.external) return "external";
  if (tensor.alias_of < 0) return std::to_string(tensor.offset);
  const int32_t owner = plan.find_tensor(tensor.alias_of);
  const std::string owner_name =
      owner >= 0 ? plan.tensors[static_cast<size_t>(owner)].name : str_cat("#", tensor.alias_of);
  return str_cat("in ", fit(owner_name, kMaxNameWidth), "+", tensor.alias_offset);
}

std::vector<std::string> table_row(const Plan& plan, const PlannedTensor& tensor, char symbol) {
  return {std::string(1, symbol),    fit(tensor.name, kMaxNameWidth), tensor.producer_op,
          dtype_text(tensor.dtype),  shape_text(tensor, ','),         std::to_string(tensor.bytes),
          offset_text(plan, tensor), std::to_string(tensor.first),    std::to_string(tensor.last)};
}

struct StepRange {
  int64_t lo = 0;
  int64_t hi = 0;  // inclusive
};

StepRange step_range(const Plan& plan) {
  StepRange range;
  range.hi = plan.steps.empty() ? 0 : static_cast<int64_t>(plan.steps.size()) - 1;
  bool any = false;
  for (const PlannedTensor& tensor : plan.tensors) {
    if (!owns_storage(tensor)) continue;
    range.lo = any ? std::min(range.lo, tensor.first) : std::min<int64_t>(tensor.first, 0);
    range.hi = std::max(range.hi, tensor.last);
    any = true;
  }
  if (plan.steps.empty() && any) {
    range.lo = range.hi;
    for (const PlannedTensor& tensor : plan.tensors) {
      if (owns_storage(tensor)) range.lo = std::min(range.lo, tensor.first);
    }
  }
  return range;
}

struct Peak {
  int64_t step = 0;
  size_t bytes = 0;
};

// Sweep over start/end events: the step with the most bytes live (earliest on ties).
Peak find_peak(const Plan& plan) {
  std::vector<std::pair<int64_t, int64_t>> events;  // (step, +bytes at start / -bytes after end)
  for (const PlannedTensor& tensor : plan.tensors) {
    if (!owns_storage(tensor)) continue;
    events.emplace_back(tensor.first, static_cast<int64_t>(tensor.bytes));
    events.emplace_back(tensor.last, -static_cast<int64_t>(tensor.bytes));
  }
  // Starts (positive) before ends (negative) at one step.
  std::sort(events.begin(), events.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second > b.second;
  });
  Peak peak;
  int64_t live = 0;
  for (const auto& [step, delta] : events) {
    live += delta;
    if (delta > 0 && static_cast<size_t>(live) > peak.bytes) {
      peak = {step, static_cast<size_t>(live)};
    }
  }
  return peak;
}

struct ChartGrid {
  int rows = 1;
  int columns = 1;
  StepRange range;
  size_t pool = 1;
  std::vector<char> letters;       // rows × columns
  std::vector<size_t> cell_bytes;  // bytes of the tensor shown in each cell

  int row_of(int64_t step) const {
    const auto span = static_cast<__int128>(range.hi - range.lo) + 1;
    return static_cast<int>((static_cast<__int128>(step - range.lo) * rows) / span);
  }
  int64_t row_first_step(int row) const {
    const auto span = static_cast<__int128>(range.hi - range.lo) + 1;
    return range.lo + static_cast<int64_t>((span * row + rows - 1) / rows);
  }
  int column_of(size_t address) const {
    return static_cast<int>((static_cast<unsigned __int128>(address) * columns) / pool);
  }
};

ChartGrid make_grid(const Plan& plan, const std::vector<char>& symbols, int width, int height) {
  ChartGrid grid;
  grid.range = step_range(plan);
  const int64_t span = grid.range.hi - grid.range.lo + 1;
  grid.rows = static_cast<int>(std::clamp<int64_t>(span, 1, std::max(height, 1)));
  grid.columns = std::max(width, 1);
  grid.pool = std::max<size_t>(plan.pool_bytes, 1);
  grid.letters.assign(static_cast<size_t>(grid.rows) * grid.columns, '.');
  grid.cell_bytes.assign(grid.letters.size(), 0);
  // A cell shows the largest tensor touching it: big tensors stay visible when buckets are coarse.
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const PlannedTensor& tensor = plan.tensors[i];
    if (!owns_storage(tensor)) continue;
    const int first_column = std::min(grid.column_of(tensor.offset), grid.columns - 1);
    const int last_column =
        std::min(grid.column_of(tensor.offset + tensor.bytes - 1), grid.columns - 1);
    for (int row = grid.row_of(tensor.first); row <= grid.row_of(tensor.last); ++row) {
      for (int column = first_column; column <= last_column; ++column) {
        const size_t cell = static_cast<size_t>(row) * grid.columns + column;
        if (grid.cell_bytes[cell] >= tensor.bytes) continue;
        grid.cell_bytes[cell] = tensor.bytes;
        grid.letters[cell] = symbols[i];
      }
    }
  }
  return grid;
}

std::string row_label(const ChartGrid& grid, int row) {
  const int64_t first = grid.row_first_step(row);
  const int64_t last = row + 1 < grid.rows ? grid.row_first_step(row + 1) - 1 : grid.range.hi;
  return first == last ? str_cat("step ", first) : str_cat("steps ", first, "-", last);
}

void append_peak_tensors(const Plan& plan, const std::vector<char>& symbols, const Peak& peak,
                         std::ostringstream& out) {
  std::vector<size_t> live;
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const PlannedTensor& tensor = plan.tensors[i];
    if (owns_storage(tensor) && tensor.first <= peak.step && peak.step <= tensor.last) {
      live.push_back(i);
    }
  }
  std::sort(live.begin(), live.end(),
            [&](size_t a, size_t b) { return plan.tensors[a].offset < plan.tensors[b].offset; });
  out << "peak at step " << peak.step << ": " << format_bytes(peak.bytes) << " in " << live.size()
      << " tensors\n";
  for (size_t k = 0; k < live.size() && k < kMaxPeakListed; ++k) {
    const PlannedTensor& tensor = plan.tensors[live[k]];
    out << "  " << symbols[live[k]] << " " << pad(fit(tensor.name, kMaxNameWidth), 40, false) << " "
        << pad(std::to_string(tensor.bytes), 12, true) << " bytes at offset " << tensor.offset
        << "\n";
  }
  if (live.size() > kMaxPeakListed)
    out << "  ... and " << live.size() - kMaxPeakListed << " more\n";
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

// "A x  B conv_0_out  ..." for every letter the chart shows, wrapped at kLegendWidth columns.
void append_legend(const Plan& plan, const std::vector<char>& symbols, const ChartGrid& grid,
                   std::ostringstream& out) {
  std::vector<bool> shown(plan.tensors.size(), false);
  bool small_shown = false;
  for (char cell : grid.letters) {
    if (cell == kSmallTensorSymbol) small_shown = true;
  }
  std::vector<size_t> order;
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const char symbol = symbols[i];
    if (symbol == kSmallTensorSymbol || symbol == kNoSymbol) continue;
    if (std::find(grid.letters.begin(), grid.letters.end(), symbol) != grid.letters.end()) {
      order.push_back(i);
    }
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return kLetters.find(symbols[a]) < kLetters.find(symbols[b]);
  });
  std::string line = "legend:";
  for (size_t i : order) {
    const std::string entry =
        str_cat(std::string(1, symbols[i]), " ", fit(plan.tensors[i].name, 32));
    if (line.size() + 2 + entry.size() > kLegendWidth) {
      out << line << "\n";
      line = "       ";
    }
    line += "  " + entry;
  }
  if (small_shown) {
    const std::string entry = str_cat(std::string(1, kSmallTensorSymbol), " smaller tensors");
    if (line.size() + 2 + entry.size() > kLegendWidth) {
      out << line << "\n";
      line = "       ";
    }
    line += "  " + entry;
  }
  out << line << "\n";
}

}  // namespace

std::vector<char> plan_tensor_symbols(const Plan& plan) {
  std::vector<char> symbols(plan.tensors.size(), kNoSymbol);
  std::vector<size_t> owners;
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    if (owns_storage(plan.tensors[i])) owners.push_back(i);
  }
  // Step 1. The kLetters.size() largest tensors get letters (ties: earlier first); the rest '+'.
  std::stable_sort(owners.begin(), owners.end(), [&](size_t a, size_t b) {
    return plan.tensors[a].bytes > plan.tensors[b].bytes;
  });
  const size_t lettered = std::min(owners.size(), kLetters.size());
  for (size_t k = lettered; k < owners.size(); ++k) symbols[owners[k]] = kSmallTensorSymbol;
  owners.resize(lettered);
  // Step 2. Letters in order of first step, then address: the chart reads A, B, C... downwards.
  std::sort(owners.begin(), owners.end(), [&](size_t a, size_t b) {
    const PlannedTensor& x = plan.tensors[a];
    const PlannedTensor& y = plan.tensors[b];
    if (x.first != y.first) return x.first < y.first;
    return x.offset != y.offset ? x.offset < y.offset : a < b;
  });
  for (size_t k = 0; k < owners.size(); ++k) symbols[owners[k]] = kLetters[k];
  return symbols;
}

std::string render_plan_table(const Plan& plan) {
  std::vector<std::vector<std::string>> rows = {
      {"ch", "name", "op", "dtype", "shape", "bytes", "offset", "first", "last"}};
  const std::vector<char> symbols = plan_tensor_symbols(plan);
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    rows.push_back(table_row(plan, plan.tensors[i], symbols[i]));
  }
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::ostringstream out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += pad(row[c], widths[c], c >= 5) + (c + 1 < row.size() ? "  " : "");
    }
    out << line << "\n";
  }
  for (const NestedPlan& nested : plan.nested) {
    if (nested.tensors.empty()) continue;
    Plan inner;
    inner.tensors = nested.tensors;
    inner.nested = nested.nested;  // its own nested plans follow its table
    out << "\nnested plan " << describe_nested_plan(plan, nested) << "\n"
        << render_plan_table(inner);
  }
  return out.str();
}

std::string describe_nested_plan(const Plan& plan, const NestedPlan& nested) {
  std::string text =
      str_cat(nested.node, " ", nested.body, ": ", nested.tensor_count, " tensors, pool ",
              format_bytes(nested.pool_bytes, 0), ", lower bound ",
              format_bytes(nested.lower_bound_bytes, 0), "; region ");
  const PlannedTensor* region = plan.region_of(nested);
  if (region == nullptr) return text + "unknown (no workspace record of " + nested.node + ")";
  const std::string steps = region->first == region->last
                                ? str_cat("step ", region->first)
                                : str_cat("steps ", region->first, "-", region->last);
  return str_cat(text, region->name, " at [", with_commas(region->offset), ", ",
                 with_commas(region->offset + nested.pool_bytes), ") of the pool, ", steps);
}

std::string render_plan_chart(const Plan& plan, int width, int height) {
  const std::vector<char> symbols = plan_tensor_symbols(plan);
  const ChartGrid grid = make_grid(plan, symbols, width, height);
  const Peak peak = find_peak(plan);
  const int peak_row = grid.row_of(peak.step);
  std::vector<std::string> labels;
  size_t label_width = 0;
  for (int row = 0; row < grid.rows; ++row) {
    labels.push_back(row_label(grid, row));
    label_width = std::max(label_width, labels.back().size());
  }
  std::ostringstream out;
  out << "address 0 .. " << format_bytes(plan.pool_bytes) << " ->, " << grid.columns
      << " columns of " << grid.pool / grid.columns << "+ bytes\n";
  for (int row = 0; row < grid.rows; ++row) {
    const auto begin = grid.letters.begin() + static_cast<ptrdiff_t>(row) * grid.columns;
    out << pad(labels[static_cast<size_t>(row)], label_width, false) << " |"
        << std::string(begin, begin + grid.columns) << "|" << (row == peak_row ? " <- peak" : "")
        << "\n";
  }
  append_legend(plan, symbols, grid, out);
  append_peak_tensors(plan, symbols, peak, out);
  return out.str();
}

std::string render_plan_summary(const Plan& plan, double total_planning_ms,
                                const Status* given_verdict) {
  const Status verdict = given_verdict != nullptr ? *given_verdict : plan.verify();
  std::ostringstream out;
  constexpr size_t kWidth = 16;  // the exact numbers right-aligned in one column
  out << "pool:        " << format_bytes(plan.pool_bytes, kWidth) << "\n";
  out << "lower bound: " << format_bytes(plan.lower_bound_bytes, kWidth) << " (with aliasing)\n";
  out << "lower bound: " << format_bytes(plan.plain_lower_bound_bytes, kWidth)
      << " (no aliasing)\n";
  out << "plain pool:  " << format_bytes(plan.plain_pool_bytes, kWidth)
      << " (no aliasing, same algorithm)\n";
  out << "naive:       " << format_bytes(plan.naive_bytes, kWidth) << "\n";
  char ratio[64];
  std::snprintf(ratio, sizeof(ratio), "%.4f",
                plan.lower_bound_bytes == 0
                    ? 1.0
                    : static_cast<double>(plan.pool_bytes) / plan.lower_bound_bytes);
  out << "pool/LB:     " << ratio << (plan.pool_bytes == plan.lower_bound_bytes ? "  optimal" : "")
      << "\n";
  out << "verify: " << (verdict.is_ok() ? "ok" : verdict.message()) << "\n";
  char timing[128];
  if (total_planning_ms >= 0.0) {
    std::snprintf(
        timing, sizeof(timing), "%.3f ms (placement %.3f ms, liveness, sharing and checks %.3f ms)",
        total_planning_ms, plan.planning_ms, std::max(0.0, total_planning_ms - plan.planning_ms));
  } else {
    std::snprintf(timing, sizeof(timing), "%.3f ms (placement)", plan.planning_ms);
  }
  out << "planning:    " << timing << "\n";
  const std::string external = describe_external_tensors(plan);
  if (!external.empty()) out << "external:    " << external << "\n";
  out << "plan:        " << plan.algorithm << ", alignment " << plan.alignment << " B, "
      << plan.tensors.size() << " tensors, " << plan_step_count(plan) << " steps\n";
  for (const NestedPlan& nested : plan.nested) {
    out << "nested:      " << describe_nested_plan(plan, nested) << "\n";
  }
  return out.str();
}

std::string describe_external_tensors(const Plan& plan) {
  size_t count = 0;
  size_t bytes = 0;
  std::string names;
  for (const PlannedTensor& tensor : plan.tensors) {
    if (!tensor.external) continue;
    ++count;
    Expected<size_t> size = tensor_bytes(tensor.shape, tensor.dtype);
    bytes += size ? *size : 0;
    names += str_cat(names.empty() ? "" : ", ", tensor.name);
  }
  if (count == 0) return {};
  return str_cat(count, count == 1 ? " tensor" : " tensors", " in caller buffers, ",
                 format_bytes(bytes, 0), " outside the pool: ", names);
}

std::string render_plan_csv(const Plan& plan) {
  std::ostringstream out;
  out << "name,op,dtype,shape,bytes,offset,first,last\n";
  for (const PlannedTensor& tensor : plan.tensors) {
    out << csv_field(tensor.name) << "," << csv_field(tensor.producer_op) << ","
        << dtype_text(tensor.dtype) << "," << shape_text(tensor, 'x') << "," << tensor.bytes << ","
        << tensor.offset << "," << tensor.first << "," << tensor.last << "\n";
  }
  return out.str();
}

}  // namespace onepool
