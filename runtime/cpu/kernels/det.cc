// Det: the determinant of each [M, M] matrix of X [*, M, M], by LU decomposition with partial
// pivoting in double (O(M^3) per matrix). A singular matrix gives 0 (or a tiny value from
// rounding, as every LU-based implementation does); Inf entries propagate. A NaN entry gives NaN
// wherever it sits (every term of the determinant multiplies one entry of each row): the LU stops
// at the first zero pivot, before a NaN lower in its column is eliminated, so [[0, 1], [NaN, 3]]
// gave 0. The working copy of one matrix lives in the workspace (M * M doubles), so matrices run
// one after another.
#include <cmath>
#include <limits>
#include <utility>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_dtype.h"
#include "runtime/cpu/kernels/shape_util.h"

namespace onepool::cpu {
namespace {

template <class T>
class DetKernel final : public Kernel {
 public:
  DetKernel(int64_t matrices, int64_t m) : matrices_(matrices), m_(m) {}

  Status run(const RunContext& context) override {
    const T* x = context.inputs[0].as<const T>();
    T* y = context.outputs[0].as<T>();
    auto* a = reinterpret_cast<double*>(context.workspace);
    for (int64_t k = 0; k < matrices_; ++k) {
      const T* src = x + k * m_ * m_;
      bool has_nan = false;
      for (int64_t i = 0; i < m_ * m_; ++i) {
        a[i] = static_cast<double>(src[i]);
        has_nan = has_nan || a[i] != a[i];
      }
      y[k] = static_cast<T>(has_nan ? std::numeric_limits<double>::quiet_NaN()
                                    : lu_determinant(a, m_));
    }
    return Status::ok();
  }

  // The determinant of the row-major n x n matrix `a` (overwritten by its LU factors).
  static double lu_determinant(double* a, int64_t n) {
    double det = 1.0;
    for (int64_t col = 0; col < n; ++col) {
      int64_t pivot = col;
      for (int64_t row = col + 1; row < n; ++row) {
        if (std::abs(a[row * n + col]) > std::abs(a[pivot * n + col])) pivot = row;
      }
      if (pivot != col) {
        for (int64_t j = 0; j < n; ++j) std::swap(a[col * n + j], a[pivot * n + j]);
        det = -det;
      }
      const double diagonal = a[col * n + col];
      det *= diagonal;
      if (diagonal == 0.0) return det;  // singular: 0 (or NaN when det already was)
      for (int64_t row = col + 1; row < n; ++row) {
        const double factor = a[row * n + col] / diagonal;
        for (int64_t j = col + 1; j < n; ++j) a[row * n + j] -= factor * a[col * n + j];
      }
    }
    return det;
  }

 private:
  int64_t matrices_, m_;
};

Expected<PreparedKernel> make_det_kernel(const NodeContext& node) {
  if (!node.has_input(0) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "expected input 0 and output 0");
  }
  const Value& input = node.input(0);
  const Shape& shape = input.shape;
  if (shape.rank() < 2 || shape[shape.rank() - 1] != shape[shape.rank() - 2]) {
    return node.error(StatusCode::kInvalidModel, "input '", input.name,
                      "': expected [*, M, M], got ", shape.to_string());
  }
  Shape expected;
  for (int a = 0; a + 2 < shape.rank(); ++a) expected.push_back(shape[a]);
  ONEPOOL_RETURN_IF_ERROR(require_output_dtype(node, 0, input.dtype));
  if (node.output(0).shape != expected) {
    return node.error(StatusCode::kInvalidModel, "output '", node.output(0).name,
                      "': expected shape ", expected.to_string(), ", got ",
                      node.output(0).shape.to_string());
  }
  const int64_t m = shape[shape.rank() - 1];
  ONEPOOL_ASSIGN_OR_RETURN(int64_t cells, data::checked_mul(m, m, "Det matrix"));
  ONEPOOL_ASSIGN_OR_RETURN(
      int64_t bytes, data::checked_mul(cells, static_cast<int64_t>(sizeof(double)), "Det matrix"));
  return visit_dtype<kFloatTypes>(
      node, describe_input(node, 0), input.dtype, [&](auto tag) -> Expected<PreparedKernel> {
        using T = typename decltype(tag)::type;
        PreparedKernel prepared;
        prepared.kernel = std::make_unique<DetKernel<T>>(expected.element_count(), m);
        prepared.workspace_bytes = static_cast<size_t>(bytes);
        return prepared;
      });
}

}  // namespace

void register_det_kernel(KernelRegistry& registry) { registry.add("Det", &make_det_kernel); }

}  // namespace onepool::cpu
