// Checking fed shape inputs against their bound values.
#include "runtime/shape_input_feeds.h"

#include <cstring>

#include "onepool/session.h"
#include "planner/core/shape_input_flag.h"

namespace onepool {

namespace {

// The fed values, copied off `view` for the error message only.
std::string format_fed_values(const TensorView& view) {
  HostTensor fed;
  fed.dtype = view.dtype;
  fed.shape = view.shape;
  const auto* begin = static_cast<const std::byte*>(view.data);
  fed.data.assign(begin, begin + view.bytes());
  return format_shape_input_values(shape_input_values_of(fed));
}

}  // namespace

Status check_shape_input_feed(const BoundShapeInput& binding, const TensorView& view) {
  const TensorInfo info{binding.name, binding.value.dtype, binding.value.shape, ""};
  ONEPOOL_RETURN_IF_ERROR(check_tensor_matches(info, view, "shape input"));
  if (view.device.kind != DeviceKind::kCpu) {
    return make_status(StatusCode::kInvalidArgument, "shape input '", binding.name, "': fed on ",
                       view.device.to_string(),
                       "; a shape input's values are checked on the host (feed a host tensor)");
  }
  const size_t bytes = binding.value.data.size();
  if (bytes == 0 || std::memcmp(view.data, binding.value.data.data(), bytes) == 0) {
    return Status::ok();
  }
  return make_status(StatusCode::kInvalidArgument, "input '", binding.name, "': bound to ",
                     format_shape_input_values(shape_input_values_of(binding.value)),
                     " at load, got ", format_fed_values(view),
                     " (a shape input's values fix the plan; load the model again with the new "
                     "values, or use a DynamicSession)");
}

Status split_full_feed(const Model& model, std::span<const TensorView> all,
                       std::span<TensorView> feeds) {
  const std::vector<BoundShapeInput>& bound = model.graph().shape_inputs;
  size_t next_shape_input = 0;
  size_t next_feed = 0;
  for (size_t position = 0; position < all.size(); ++position) {
    const bool is_shape_input =
        next_shape_input < bound.size() && bound[next_shape_input].model_position == position;
    if (is_shape_input) {
      ONEPOOL_RETURN_IF_ERROR(check_shape_input_feed(bound[next_shape_input], all[position]));
      ++next_shape_input;
      continue;
    }
    if (next_feed == feeds.size()) break;
    feeds[next_feed++] = all[position];
  }
  if (next_feed != feeds.size() || next_shape_input != bound.size()) {
    return make_status(StatusCode::kInternal, "the model's shape input positions do not match ",
                       "its ", all.size(), " graph inputs");
  }
  return Status::ok();
}

}  // namespace onepool
