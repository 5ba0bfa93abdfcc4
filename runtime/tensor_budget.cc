// Per-tensor memory budget, checked once per model load.
#include "runtime/tensor_budget.h"

#include <unistd.h>

#include <algorithm>
#include <limits>

#include "planner/core/graph.h"

namespace onepool {

size_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_bytes = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_bytes <= 0) return size_t{1} << 40;
  const auto total =
      static_cast<unsigned long long>(pages) * static_cast<unsigned long long>(page_bytes);
  return total > std::numeric_limits<size_t>::max() ? std::numeric_limits<size_t>::max()
                                                    : static_cast<size_t>(total);
}

namespace {

// "output 'y' of node 'pad_0' (Pad)", or "graph input 'x'".
std::string describe_value(const Graph& graph, const Value& value) {
  if (value.producer == kNoNode) return str_cat("graph input '", value.name, "'");
  return str_cat("output '", value.name, "' of ",
                 describe_node(graph.nodes[static_cast<size_t>(value.producer)]));
}

// Bytes of the value; an error when its element count or byte size overflows.
Expected<size_t> checked_bytes(const Value& value) {
  ONEPOOL_ASSIGN_OR_RETURN(int64_t elements, value.shape.element_count_checked());
  const size_t element_bytes = std::max<size_t>(1, dtype_size(value.dtype));
  if (static_cast<uint64_t>(elements) > std::numeric_limits<size_t>::max() / element_bytes) {
    return make_status(StatusCode::kOutOfRange, "byte size overflows");
  }
  return static_cast<size_t>(elements) * element_bytes;
}

}  // namespace

Status check_tensor_budget(const Graph& graph, size_t budget_bytes) {
  for (const Value& value : graph.values) {
    if (value.kind == ValueKind::kWeight) continue;  // already held in memory by the import
    Expected<size_t> bytes = checked_bytes(value);
    if (!bytes) {
      return make_status(StatusCode::kResourceExhausted, describe_value(graph, value), " ",
                         dtype_name(value.dtype), value.shape.to_string(), ": ",
                         bytes.status().message());
    }
    if (*bytes <= budget_bytes) continue;
    return make_status(StatusCode::kResourceExhausted, describe_value(graph, value), " ",
                       dtype_name(value.dtype), value.shape.to_string(), " needs ", *bytes,
                       " bytes, more than the budget of ", budget_bytes,
                       " bytes for one tensor (LoadOptions::max_tensor_bytes; default: the "
                       "machine's physical memory)");
  }
  return Status::ok();
}

}  // namespace onepool
