// Nested graphs on the CPU (see the header).
#include "runtime/cpu/kernels/nested_graph.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "planner/analysis/build_plan.h"
#include "runtime/cpu/cpu_backend.h"

namespace onepool::cpu {

namespace {
constexpr size_t kRegionAlignment = 256;  // what a CPU pool's base must be aligned to
constexpr size_t kSlotAlignment = 64;

size_t slot_aligned(size_t bytes) {
  return (bytes + kSlotAlignment - 1) / kSlotAlignment * kSlotAlignment;
}
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
  nested.backend_ = create_nested_cpu_backend(node.threads(), node.cpu_isa(), threads);
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

size_t CarriedValues::layout(const NestedGraph& body, size_t first_input, size_t first_output,
                             size_t count) {
  first_input_ = first_input;
  first_output_ = first_output;
  region_bytes_ = slot_aligned(body.region_bytes());
  size_t offset = region_bytes_;
  offsets_.clear();
  for (size_t c = 0; c < count; ++c) {
    offsets_.push_back(offset);
    const Value& value =
        body.graph().values[static_cast<size_t>(body.graph().inputs[first_input + c])];
    offset += slot_aligned(value.bytes());
  }
  return offset;
}

Status CarriedValues::bind(NestedGraph& body, std::byte* workspace, size_t workspace_bytes) {
  workspace_ = workspace;
  return body.bind(workspace, std::min(workspace_bytes, region_bytes_));
}

void CarriedValues::carry(const NestedGraph& body) const {
  const auto& inputs = body.graph().inputs;
  const auto& outputs = body.graph().outputs;
  for (size_t c = 0; c < offsets_.size(); ++c) {
    const TensorView out = body.view(outputs[first_output_ + c]);
    if (out.bytes() > 0) std::memcpy(workspace_ + offsets_[c], out.data, out.bytes());
  }
  for (size_t c = 0; c < offsets_.size(); ++c) {
    const TensorView in = body.view(inputs[first_input_ + c]);
    if (in.data != nullptr && in.bytes() > 0)
      std::memcpy(in.data, workspace_ + offsets_[c], in.bytes());
  }
}

}  // namespace onepool::cpu
