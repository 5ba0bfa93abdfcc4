// Where(condition, X, Y) with three-way broadcasting, on any dtype: values are copied as
// 1/2/4/8-byte words, so float16 and bfloat16 work too.
#include <cstdint>
#include <memory>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_kernel.h"
#include "runtime/cpu/kernels/elementwise_registry.h"

namespace onepool::cpu {
namespace {

// out[i] = c[i * sc] ? x[i * sx] : y[i * sy]; strides are 0 or 1.
template <class S>
void where_row(S* out, const bool* __restrict c, int64_t sc, const S* __restrict x, int64_t sx,
               const S* __restrict y, int64_t sy, int64_t n) {
  if (sc == 1 && sx == 1 && sy == 1) {
    for (int64_t i = 0; i < n; ++i) out[i] = c[i] ? x[i] : y[i];
    return;
  }
  for (int64_t i = 0; i < n; ++i) out[i] = c[i * sc] ? x[i * sx] : y[i * sy];
}

template <class S>
class WhereKernel final : public Kernel {
 public:
  explicit WhereKernel(BroadcastPlan plan) : plan_(plan) {}

  Status run(const RunContext& context) override {
    const bool* c = context.inputs[0].as<const bool>();
    const S* x = context.inputs[1].as<const S>();
    const S* y = context.inputs[2].as<const S>();
    S* out = context.outputs[0].as<S>();
    const int64_t sc = plan_.inner_stride(0);
    const int64_t sx = plan_.inner_stride(1);
    const int64_t sy = plan_.inner_stride(2);
    parallel_elements(context.threads, plan_.element_count, [&](int64_t begin, int64_t end) {
      for_each_row(plan_, begin, end,
                   [&](int64_t position, const BroadcastPlan::Offsets& offsets, int64_t length) {
                     where_row(out + position, c + offsets[0], sc, x + offsets[1], sx,
                               y + offsets[2], sy, length);
                   });
    });
    return Status::ok();
  }

 private:
  BroadcastPlan plan_;
};

Expected<PreparedKernel> make_where(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(require_input_dtype(node, 0, DType::kBool));
  ONEPOOL_RETURN_IF_ERROR(require_input(node, 1));
  const DType dtype = node.input(1).dtype;
  ONEPOOL_RETURN_IF_ERROR(require_input_dtype(node, 2, dtype));
  ONEPOOL_RETURN_IF_ERROR(require_output_dtype(node, 0, dtype));
  const size_t inputs[] = {0, 1, 2};
  ONEPOOL_ASSIGN_OR_RETURN(const BroadcastPlan plan, make_broadcast_plan(node, inputs));
  ONEPOOL_RETURN_IF_ERROR(check_output_is_broadcast(node, inputs));
  PreparedKernel prepared;
  switch (dtype_is_supported(dtype) ? dtype_size(dtype) : 0) {
    case 1:
      prepared.kernel = std::make_unique<WhereKernel<uint8_t>>(plan);
      break;
    case 2:
      prepared.kernel = std::make_unique<WhereKernel<uint16_t>>(plan);
      break;
    case 4:
      prepared.kernel = std::make_unique<WhereKernel<uint32_t>>(plan);
      break;
    case 8:
      prepared.kernel = std::make_unique<WhereKernel<uint64_t>>(plan);
      break;
    default:
      return unsupported_dtype(
          node, describe_input(node, 1), dtype,
          kNumericOrBoolTypes | dtype_bit(DType::kFloat16) | dtype_bit(DType::kBFloat16));
  }
  return prepared;
}

}  // namespace

void register_where_kernel(KernelRegistry& registry) { registry.add("Where", &make_where); }

}  // namespace onepool::cpu
