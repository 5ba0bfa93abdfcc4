// Nested graphs on the CPU (see the header).
#include "runtime/cpu/kernels/nested_graph.h"

#include <utility>

#include "planner/build_plan.h"
#include "runtime/cpu/cpu_backend.h"

namespace onepool::cpu {

namespace {
constexpr size_t kRegionAlignment = 256;  // what a CPU pool's base must be aligned to
}  // namespace

size_t nested_region_bytes(size_t pool_bytes) { return pool_bytes + kRegionAlignment; }

Expected<NestedGraph> NestedGraph::prepare(const NodeContext& node, std::string name,
                                           const Graph& graph, ThreadPool* const* threads) {
  NestedGraph nested;
  nested.name_ = std::move(name);
  const std::string where = str_cat(describe_node(node.node()), " ", nested.name_);
  Expected<std::shared_ptr<const Model>> model = Model::from_graph(graph, LoadOptions{});
  if (!model) return model.status().with_context(where);
  nested.model_ = std::move(model).value();
  nested.backend_ = create_nested_cpu_backend(node.threads(), threads);
  NodeMemoryNeeds needs;
  const Status prepared = nested.backend_->prepare(*nested.model_, needs);
  if (!prepared.is_ok()) return prepared.with_context(where);
  Expected<Plan> plan = build_plan(nested.model_->graph(), PlanOptions{}, needs);
  if (!plan) return plan.status().with_context(where);
  nested.plan_ = std::move(plan).value();
  return nested;
}

size_t NestedGraph::region_bytes() const { return nested_region_bytes(plan_.pool_bytes); }

Status NestedGraph::bind(std::byte* region, size_t region_bytes) {
  const size_t skip = (kRegionAlignment - reinterpret_cast<uintptr_t>(region) % kRegionAlignment) %
                      kRegionAlignment;
  if (region == nullptr || region_bytes < skip + plan_.pool_bytes) {
    return make_status(StatusCode::kInternal, name_, " needs a region of ", plan_.pool_bytes,
                       " bytes, the workspace holds ", region_bytes);
  }
  const Status bound = backend_->bind(*model_, plan_, region + skip, region_bytes - skip);
  return bound.is_ok() ? bound : bound.with_context(name_);
}

}  // namespace onepool::cpu
