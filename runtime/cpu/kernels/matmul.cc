// CPU MatMul (numpy matmul semantics: 1-D promotion, batch broadcasting) and the registration of
// the matmul family. Products go through CBLAS for float32/float64 and through a plain loop for
// int32/int64; a fused activation epilogue runs over the output afterwards.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "runtime/cpu/cpu_isa.h"
#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/gemm_vector.h"
#include "runtime/cpu/kernels/matmul_common.h"
#include "runtime/cpu/kernels/matmul_layout.h"
#include "runtime/cpu/kernels/matmul_packed.h"

namespace onepool::cpu {
namespace {

template <class T>
void run_product(const GemmShape& shape, const T* a, const T* b, T* y, ThreadPool* threads) {
  if constexpr (std::is_floating_point_v<T>) {
    gemm(shape, 1.0f, a, b, 0.0f, y, threads);
  } else {
    integer_matmul(shape, a, b, y);
  }
}

template <class T>
class MatMulKernel final : public Kernel {
 public:
  MatMulKernel(MatMulLayout layout, Activation activation, std::optional<PackedProduct> packed)
      : layout_(std::move(layout)), activation_(activation), packed_(std::move(packed)) {}

  Status run(const RunContext& context) override {
    if (layout_.output_count == 0) return Status::ok();
    const T* a = context.inputs[0].as<const T>();
    const T* b = context.inputs[1].as<const T>();
    T* y = context.outputs[0].as<T>();
    run_products(a, b, y, context.workspace, context.threads);
    if constexpr (std::is_same_v<T, float>) {
      apply_activation(activation_, y, layout_.output_count);
    }
    return Status::ok();
  }

 private:
  void run_products(const T* a, const T* b, T* y, std::byte* workspace, ThreadPool* threads) const {
    // K == 0: every output is an empty sum (and BLAS would not write C at all).
    if (layout_.gemm.k == 0) {
      std::fill(y, y + layout_.output_count, T{0});
      return;
    }
    if (layout_.fold_batch) {
      product(a, b, y, workspace, threads);
      return;
    }
    const int64_t matrix = layout_.gemm.m * layout_.gemm.n;
    for (size_t i = 0; i < layout_.a_offsets.size(); ++i) {
      product(a + layout_.a_offsets[i], b + layout_.b_offsets[i],
              y + static_cast<int64_t>(i) * matrix, workspace, threads);
    }
  }

  void product(const T* a, const T* b, T* y, std::byte* workspace, ThreadPool* threads) const {
    if constexpr (std::is_same_v<T, float>) {
      if (packed_) {
        run_packed_product(*packed_, a, b, y, workspace, threads);
        return;
      }
      if (gemv_row_fits(layout_.gemm)) {  // one row of A: row sweeps over B
        gemv_row(layout_.gemm, 1.0f, a, b, 0.0f, y, threads);
        return;
      }
    }
    run_product(layout_.gemm, a, b, y, threads);
  }

  MatMulLayout layout_;
  Activation activation_;
  std::optional<PackedProduct> packed_;  // float32: the packed-A GEMM instead of CBLAS
};

// B when it is one constant matrix shared by every product (so it can be packed once), else
// nullptr.
const float* constant_single_b(const NodeContext& node, const MatMulLayout& layout) {
  const HostTensor* b = node.constant_input(1);
  if (b == nullptr) return nullptr;
  const bool single =
      layout.fold_batch || std::all_of(layout.b_offsets.begin(), layout.b_offsets.end(),
                                       [](int64_t offset) { return offset == 0; });
  return single ? b->as<float>() : nullptr;
}

template <class T>
PreparedKernel prepared(const NodeContext& node, MatMulLayout layout, Activation activation,
                        nn::SgemmIsa isa) {
  PreparedKernel result;
  std::optional<PackedProduct> packed;
  if constexpr (std::is_same_v<T, float>) {
    if (layout.gemm.k > 0) packed = plan_packed_product(layout.gemm, isa);
    const float* constant_b = packed ? constant_single_b(node, layout) : nullptr;
    if (constant_b != nullptr) {
      packed->packed_b =
          node.packed_weight(1, PackedLayout::kMatMulStrips, static_cast<uint8_t>(isa), 0,
                             [&] { return pack_constant_b(*packed, constant_b); });
    }
    if (packed) {
      result.workspace_bytes = packed_product_workspace_bytes(*packed);
      result.implementation = packed_product_name(*packed);
    } else if (gemv_row_fits(layout.gemm)) {
      result.implementation = "one-row sweeps";
    }
  }
  result.kernel = std::make_unique<MatMulKernel<T>>(std::move(layout), activation, packed);
  return result;
}

}  // namespace

Expected<PreparedKernel> make_matmul_kernel(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_arity(node, 2));
  ONEPOOL_ASSIGN_OR_RETURN(const DType dtype, common_dtype(node, {DType::kFloat32, DType::kFloat64,
                                                                  DType::kInt32, DType::kInt64}));
  ONEPOOL_ASSIGN_OR_RETURN(const Activation activation, read_fused_activation(node, dtype));
  ONEPOOL_ASSIGN_OR_RETURN(MatMulLayout layout, plan_matmul(node));
  const nn::SgemmIsa isa = sgemm_isa_for(node.cpu_isa());
  switch (dtype) {
    case DType::kFloat64:
      return prepared<double>(node, std::move(layout), activation, isa);
    case DType::kInt32:
      return prepared<int32_t>(node, std::move(layout), activation, isa);
    case DType::kInt64:
      return prepared<int64_t>(node, std::move(layout), activation, isa);
    default:
      return prepared<float>(node, std::move(layout), activation, isa);
  }
}

void register_matmul_kernels(KernelRegistry& registry) {
  registry.add("MatMul", &make_matmul_kernel);
  registry.add("Gemm", &make_gemm_kernel);
}

}  // namespace onepool::cpu
