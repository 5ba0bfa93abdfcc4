// Plan::verify and Plan::find_tensor. The JSON form lives in plan_json.cc.
#include "onepool/plan.h"

#include <string>
#include <vector>

#include "planner/algo/algorithms.h"

namespace onepool {
namespace {

std::string describe_tensor(const PlannedTensor& tensor) {
  return str_cat("tensor '", tensor.name, "'");
}

Status verify_alias(const Plan& plan, const PlannedTensor& alias) {
  const int32_t target_index = plan.find_tensor(alias.alias_of);
  if (target_index < 0) {
    return make_status(StatusCode::kInternal, describe_tensor(alias), ": aliases tensor id ",
                       alias.alias_of, ", which the plan does not hold");
  }
  const PlannedTensor& target = plan.tensors[static_cast<size_t>(target_index)];
  if (target.external) {
    return make_status(StatusCode::kInternal, describe_tensor(alias), ": aliases ",
                       describe_tensor(target), ", which lives in a caller buffer (external)");
  }
  if (target.alias_of >= 0) {
    return make_status(StatusCode::kInternal, describe_tensor(alias), ": aliases ",
                       describe_tensor(target), ", which is itself an alias");
  }
  if (alias.first < target.first || alias.last > target.last) {
    return make_status(StatusCode::kInternal, describe_tensor(alias), ": live at steps [",
                       alias.first, ", ", alias.last, "] but ", describe_tensor(target),
                       " holds its storage only at [", target.first, ", ", target.last, "]");
  }
  auto bytes = tensor_bytes(alias.shape, alias.dtype);
  if (!bytes) return bytes.status().with_context(describe_tensor(alias));
  if (alias.alias_offset > target.bytes || *bytes > target.bytes - alias.alias_offset) {
    return make_status(StatusCode::kInternal, describe_tensor(alias), ": bytes [",
                       alias.alias_offset, ", ", alias.alias_offset + *bytes, ") of ",
                       describe_tensor(target), " exceed its ", target.bytes, " bytes");
  }
  return Status::ok();
}

}  // namespace

// A nested plan's own tensors: inside its pool, no two overlapping in time and address, aliases
// inside their owners. Its offsets are checked at alignment 1: the nested planner's alignment is
// its own, and the region's start is aligned for it when the nested graph is bound.
Status verify_nested_tensors(const NestedPlan& nested) {
  if (nested.tensors.empty()) return Status::ok();
  if (nested.tensors.size() != nested.tensor_count) {
    return make_status(StatusCode::kInvalidArgument, "nested plan ", nested.node, "/", nested.body,
                       ": says ", nested.tensor_count, " tensors, lists ", nested.tensors.size());
  }
  Plan inner;
  inner.pool_bytes = nested.pool_bytes;
  inner.alignment = 1;
  inner.tensors = nested.tensors;
  inner.nested = nested.nested;  // verified in turn, inside `inner`'s workspace records
  const Status status = inner.verify();
  return status.is_ok()
             ? status
             : status.with_context(str_cat("nested plan ", nested.node, "/", nested.body));
}

// Each nested plan lies inside its node's workspace record, and its tensors inside its pool.
Status verify_nested(const Plan& plan) {
  for (const NestedPlan& nested : plan.nested) {
    const PlannedTensor* region = plan.region_of(nested);
    if (region == nullptr) {
      return make_status(StatusCode::kInvalidArgument, "nested plan ", nested.node, "/",
                         nested.body, ": its node has no workspace record");
    }
    if (nested.pool_bytes > region->bytes) {
      return make_status(StatusCode::kInvalidArgument, "nested plan ", nested.node, "/",
                         nested.body, " needs ", nested.pool_bytes, " bytes, its region holds ",
                         region->bytes);
    }
    ONEPOOL_RETURN_IF_ERROR(verify_nested_tensors(nested));
  }
  return Status::ok();
}

const PlannedTensor* Plan::region_of(const NestedPlan& nested) const {
  const std::string name = nested.node + ":workspace";
  for (const PlannedTensor& tensor : tensors) {
    if (tensor.workspace_node >= 0 && tensor.name == name) return &tensor;
  }
  return nullptr;
}

Status Plan::verify() const {
  std::vector<UsageRecord> records;
  std::vector<size_t> owners;  // index into tensors, per record
  Placement placement;
  placement.pool_bytes = pool_bytes;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const PlannedTensor& tensor = tensors[i];
    if (tensor.external) {
      if (tensor.bytes != 0 || tensor.offset != 0 || tensor.alias_of >= 0) {
        return make_status(StatusCode::kInternal, describe_tensor(tensor),
                           ": external (in a caller buffer) but placed in the pool");
      }
      continue;
    }
    if (tensor.alias_of >= 0) {
      ONEPOOL_RETURN_IF_ERROR(verify_alias(*this, tensor));
      continue;
    }
    records.push_back({tensor.first, tensor.last, tensor.bytes});
    placement.offsets.push_back(tensor.offset);
    owners.push_back(i);
  }
  ONEPOOL_RETURN_IF_ERROR(verify_placement(records, placement, alignment, [&](size_t index) {
    return describe_tensor(tensors[owners[index]]);
  }));
  return verify_nested(*this);
}

int32_t Plan::find_tensor(int32_t id) const {
  if (id < 0) return -1;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].id == id) return static_cast<int32_t>(i);
  }
  return -1;
}

}  // namespace onepool
