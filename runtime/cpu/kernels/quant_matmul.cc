// MatMulInteger and QLinearMatMul: numpy matmul semantics (1-D promotion, batch broadcasting) over
// 8-bit operands, products accumulated in int32 (quant_common.h). Zero points: per tensor, A's
// per row, B's per column. QLinearMatMul requantizes each int32 row, held in the workspace.
// With a constant B (and B zero points) both run float GEMMs instead, over chunks of k whose sums
// are exact in float (the exact float path, see ExactFloatB): the same int32 values.
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "runtime/cpu/cpu_isa.h"
#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_dtype.h"
#include "runtime/cpu/kernels/matmul_packed.h"
#include "runtime/cpu/kernels/quant_common.h"
#include "runtime/cpu/kernels/quant_conv_float.h"

namespace onepool::cpu::quant {
namespace {

// The products of one batched matmul: m x k times k x n, one (A, B) offset pair per output
// matrix, in output order.
struct ProductLayout {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  std::vector<int64_t> a_offsets;
  std::vector<int64_t> b_offsets;
};

struct Operand {
  Shape batch;
  int64_t rows = 0;
  int64_t cols = 0;
};

Operand split(const Shape& shape, bool is_a) {
  if (shape.rank() == 1) return is_a ? Operand{{}, 1, shape[0]} : Operand{{}, shape[0], 1};
  Operand operand;
  for (int i = 0; i + 2 < shape.rank(); ++i) operand.batch.push_back(shape[i]);
  operand.rows = shape[shape.rank() - 2];
  operand.cols = shape[shape.rank() - 1];
  return operand;
}

int64_t aligned(const Shape& batch, int rank, int i) {
  const int j = i - (rank - batch.rank());
  return j < 0 ? 1 : batch[j];
}

// Step 1: shapes and broadcasting; Step 2: the expected output shape; Step 3: offsets.
Expected<ProductLayout> plan_products(const NodeContext& node, size_t a_index, size_t b_index) {
  const Shape& a_shape = node.input(a_index).shape;
  const Shape& b_shape = node.input(b_index).shape;
  if (a_shape.rank() < 1 || b_shape.rank() < 1) {
    return node.error(StatusCode::kInvalidModel, describe_input(node, a_index), " ",
                      a_shape.to_string(), " and ", describe_input(node, b_index), " ",
                      b_shape.to_string(), ": matmul operands need rank >= 1");
  }
  // Step 1.
  const Operand a = split(a_shape, true);
  const Operand b = split(b_shape, false);
  if (a.cols != b.rows) {
    return node.error(StatusCode::kInvalidModel, describe_input(node, a_index), " ",
                      a_shape.to_string(), " and ", describe_input(node, b_index), " ",
                      b_shape.to_string(), ": inner dims differ (", a.cols, " vs ", b.rows, ")");
  }
  const int rank = std::max(a.batch.rank(), b.batch.rank());
  Shape batch;
  for (int i = 0; i < rank; ++i) {
    const int64_t da = aligned(a.batch, rank, i);
    const int64_t db = aligned(b.batch, rank, i);
    if (da != db && da != 1 && db != 1) {
      return node.error(StatusCode::kInvalidModel, describe_input(node, a_index), " ",
                        a_shape.to_string(), " and ", describe_input(node, b_index), " ",
                        b_shape.to_string(), ": batch dim ", i, " cannot broadcast (", da, " vs ",
                        db, ")");
    }
    batch.push_back(da == 1 ? db : da);
  }
  // Step 2.
  Shape expected = batch;
  if (a_shape.rank() > 1) expected.push_back(a.rows);
  if (b_shape.rank() > 1) expected.push_back(b.cols);
  if (!(expected == node.output(0).shape)) {
    return node.error(StatusCode::kInvalidModel, describe_output(node, 0), ": expected shape ",
                      expected.to_string(), ", got ", node.output(0).shape.to_string());
  }
  ONEPOOL_ASSIGN_OR_RETURN(const int64_t batch_count, batch.element_count_checked());
  ONEPOOL_RETURN_IF_ERROR(node.output(0).shape.element_count_checked().status());
  // Step 3. Walk the output batch in row-major order; a broadcast dim has stride 0.
  ProductLayout layout{a.rows, b.cols, a.cols, {}, {}};
  std::array<int64_t, Shape::kMaxRank> a_stride{};
  std::array<int64_t, Shape::kMaxRank> b_stride{};
  int64_t sa = a.rows * a.cols;
  int64_t sb = b.rows * b.cols;
  for (int i = rank - 1; i >= 0; --i) {
    const auto u = static_cast<size_t>(i);
    const int64_t da = aligned(a.batch, rank, i);
    const int64_t db = aligned(b.batch, rank, i);
    a_stride[u] = da == 1 ? 0 : sa;
    b_stride[u] = db == 1 ? 0 : sb;
    sa *= da;
    sb *= db;
  }
  std::array<int64_t, Shape::kMaxRank> index{};
  for (int64_t p = 0; p < batch_count; ++p) {
    int64_t a_offset = 0;
    int64_t b_offset = 0;
    for (int i = 0; i < rank; ++i) {
      const auto u = static_cast<size_t>(i);
      a_offset += index[u] * a_stride[u];
      b_offset += index[u] * b_stride[u];
    }
    layout.a_offsets.push_back(a_offset);
    layout.b_offsets.push_back(b_offset);
    for (int i = rank - 1; i >= 0; --i) {
      const auto u = static_cast<size_t>(i);
      if (++index[u] < batch[i]) break;
      index[u] = 0;
    }
  }
  return layout;
}

// B's zero point as the (pointer, stride) integer_dot_row takes.
template <class B>
std::pair<const B*, int64_t> b_zero_of(const QuantParam& param, const RunContext& context) {
  if (!param.present) return {nullptr, 0};
  return {context.inputs[param.input].as<const B>(), param.count == 1 ? 0 : 1};
}

// out[j] = a[j] - zero as floats (exact: |a - zero| <= 255).
template <class A>
ONEPOOL_ISA_CLONES void center_row(const A* a, int32_t zero, int64_t k, float* out) {
  for (int64_t j = 0; j < k; ++j) out[j] = static_cast<float>(static_cast<int32_t>(a[j]) - zero);
}

// B minus its zero points as floats, when B and the zero points are constant. The float GEMM
// then runs over chunks of k whose sums are exact (chunk x 255 x max|b - b_zero| < 2^24, as in
// quant_conv_float.h), so any summation order gives each chunk's exact integer sum, and the
// chunks add up in int32 as the integer rows do (wrapping, which no order changes). One chunk
// when all of k is exact (the usual case for small k), otherwise as many as needed: 8-bit values
// are at most 255 from their zero point, so a chunk has at least 258 rows.
//
// Rows too few for a packed panel (a classifier's one row against a 2048 x 10 B) go another way:
// B's columns, centered, as int16 (n x k), each multiplied by A's centered row in int16 pairs
// summed into int32 (the CPU's 16-bit multiply-add), exact while k stays below kMaxColumnDepth.
// A matrix-vector product on CBLAS in chunks cost several calls a node, as long as a whole
// convolution.
struct ExactFloatB {
  std::vector<float> values;                 // B's layout
  int64_t chunk = 0;                         // rows of k per exact GEMM
  std::optional<PackedProduct> packed;       // a whole chunk's packed plan, or CBLAS
  std::optional<PackedProduct> packed_tail;  // the last chunk's when shorter
  std::vector<int16_t> columns;              // the column path's B^T (n x k), else empty
};

// |a - a_zero| and |b - b_zero| are at most 255, so each product is at most 65025 and any k up to
// this many of them sums within int32 (2^31 / 65025 > 33025): no wrap can occur, and the sums are
// the exact integers the wrapping int32 loop gives.
constexpr int64_t kMaxColumnDepth = 32768;

constexpr double kExactFloatLimit = 16777216.0;  // 2^24

// The most rows of k whose float sums stay exact, at most k.
int64_t exact_chunk_rows(int64_t k, float largest) {
  if (largest == 0.0f) return k;
  const double rows = std::floor((kExactFloatLimit - 1.0) / (255.0 * largest));
  return rows >= static_cast<double>(k) ? k : static_cast<int64_t>(rows);
}

// The product's plan for `rows` of k, when CBLAS or the packed GEMM can take it.
std::optional<std::optional<PackedProduct>> plan_exact_chunk(const NodeContext& node,
                                                             const ProductLayout& layout,
                                                             int64_t rows) {
  const GemmShape shape{false, false, layout.m, layout.n, rows, rows, layout.n, layout.n};
  if (!gemm_fits_blas(shape)) return std::nullopt;
  if (rows == 0) return std::optional<PackedProduct>();
  return plan_packed_product(shape, sgemm_isa_for(node.cpu_isa()));
}

// B^T (n x k) of B's first k x n matrix of centered values, as int16 (|value| <= 255).
std::vector<int16_t> centered_columns(const std::vector<float>& values, int64_t k, int64_t n) {
  std::vector<int16_t> columns(static_cast<size_t>(k * n));
  for (int64_t p = 0; p < k; ++p) {
    for (int64_t j = 0; j < n; ++j) {
      columns[static_cast<size_t>(j * k + p)] =
          static_cast<int16_t>(values[static_cast<size_t>(p * n + j)]);
    }
  }
  return columns;
}

// Whether every product multiplies by the same B (a 2-D B, broadcast over A's batch).
bool one_b_matrix(const ProductLayout& layout) {
  return std::all_of(layout.b_offsets.begin(), layout.b_offsets.end(),
                     [](int64_t offset) { return offset == 0; });
}

template <class B>
std::optional<ExactFloatB> exact_float_b(const NodeContext& node, const ProductLayout& layout,
                                         size_t b_input, const QuantParam& b_zero) {
  const HostTensor* b = node.constant_input(b_input);
  const HostTensor* zero = b_zero.present ? node.constant_input(b_zero.input) : nullptr;
  if (b == nullptr || (b_zero.present && zero == nullptr)) return std::nullopt;
  ExactFloatB result;
  const B* values = b->as<B>();
  float largest = 0.0f;
  for (int64_t i = 0; i < b->element_count(); ++i) {
    const int64_t column = i % layout.n;  // B's last axis is n (a 1-D B has n = 1)
    const int32_t z =
        zero == nullptr ? 0 : static_cast<int32_t>(zero->as<B>()[b_zero.index(column)]);
    const auto centered = static_cast<float>(static_cast<int32_t>(values[i]) - z);
    largest = std::max(largest, std::fabs(centered));
    result.values.push_back(centered);
  }
  if (layout.m < nn::sgemm_panel_rows(sgemm_isa_for(node.cpu_isa())) &&
      layout.k <= kMaxColumnDepth && one_b_matrix(layout)) {
    result.columns = centered_columns(result.values, layout.k, layout.n);
    std::vector<float>().swap(result.values);  // the columns are all the product reads
    return result;
  }
  result.chunk = exact_chunk_rows(layout.k, largest);
  const auto whole = plan_exact_chunk(node, layout, result.chunk);
  if (!whole) return std::nullopt;
  result.packed = *whole;
  if (result.packed && result.chunk >= layout.k && one_b_matrix(layout)) {
    // One chunk of one B: its strips packed now, not copied out of B's rows at every run (and
    // the packed strips are all the product reads).
    result.packed->packed_b = pack_constant_b(*result.packed, result.values.data());
    std::vector<float>().swap(result.values);
  }
  const int64_t tail = result.chunk == 0 ? 0 : layout.k % result.chunk;
  if (tail > 0) {
    const auto last = plan_exact_chunk(node, layout, tail);
    if (!last) return std::nullopt;
    result.packed_tail = *last;
  }
  return result;
}

size_t aligned_floats_bytes(int64_t count) {
  return (static_cast<size_t>(count) * sizeof(float) + 63) / 64 * 64;
}

size_t packed_bytes(const std::optional<PackedProduct>& plan) {
  return plan ? packed_product_workspace_bytes(*plan) : 0;
}

// The column path's scratch: one centered row of A as int16.
size_t column_row_bytes(int64_t k) {
  return (static_cast<size_t>(k) * sizeof(int16_t) + 63) / 64 * 64;
}

// out[p] = a[p] - zero as int16 (|a - zero| <= 255).
template <class A>
ONEPOOL_ISA_CLONES void center_row_int16(const A* a, int32_t zero, int64_t k, int16_t* out) {
  for (int64_t p = 0; p < k; ++p) out[p] = static_cast<int16_t>(static_cast<int32_t>(a[p]) - zero);
}

// acc[j] = the dot product of the centered row with column j, for j in [first, end): int16 pairs
// into int32 lanes (no overflow, see kMaxColumnDepth), so any order gives the same integer.
ONEPOOL_ISA_CLONES void column_dots(const int16_t* row, const int16_t* columns, int64_t k,
                                    int64_t first, int64_t end, int32_t* acc) {
  for (int64_t j = first; j < end; ++j) {
    const int16_t* column = columns + j * k;
    int32_t sum = 0;
    for (int64_t p = 0; p < k; ++p) sum += static_cast<int32_t>(row[p]) * column[p];
    acc[j] = sum;
  }
}

// One product on the column path: each row of A centered, then its dot with every column of B
// (columns split over the threads when there are enough multiply-adds to share).
template <class A>
void column_product(const ProductLayout& layout, const ExactFloatB& exact, size_t p, const A* a,
                    const QuantParam& a_zero, const RunContext& context, int32_t* acc,
                    std::byte* scratch) {
  const int64_t n = layout.n, k = layout.k;
  auto* row = reinterpret_cast<int16_t*>(scratch);
  const int64_t min_columns = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(1, k));
  for (int64_t i = 0; i < layout.m; ++i) {
    center_row_int16(a + layout.a_offsets[p] + i * k, zero_point_at<A>(a_zero, context, i), k, row);
    context.threads->parallel_for(n, min_columns, [&](int64_t begin, int64_t end) {
      column_dots(row, exact.columns.data(), k, begin, end, acc + i * n);
    });
  }
}

bool single_chunk(const ProductLayout& layout, const ExactFloatB& exact) {
  return exact.chunk >= layout.k;
}

// The exact float path's scratch (see exact_product): one chunk of A as floats, the products of
// one chunk when there are several (one chunk's land in the int32 rows' own bytes), and the
// packed GEMM's.
size_t exact_scratch_bytes(const ProductLayout& layout, const ExactFloatB& exact) {
  if (!exact.columns.empty()) return column_row_bytes(layout.k);
  const int64_t chunk_products = single_chunk(layout, exact) ? 0 : layout.m * layout.n;
  return aligned_floats_bytes(layout.m * exact.chunk) + aligned_floats_bytes(chunk_products) +
         std::max(packed_bytes(exact.packed), packed_bytes(exact.packed_tail));
}

// c (as int32) = or += c_float, each an exact integer value.
ONEPOOL_ISA_CLONES void add_chunk_sums(const float* c_float, int64_t count, bool first,
                                       int32_t* acc) {
  for (int64_t i = 0; i < count; ++i) {
    const auto sum = static_cast<int32_t>(c_float[i]);
    acc[i] = first ? sum : wrapping_add(acc[i], sum);
  }
}

// One product of the exact float path into acc (m x n int32, the integer rows' values): for each
// chunk of k, A's columns (less their zero points) as floats times the centered float B's rows,
// then the chunk's sums added in int32.
template <class A>
void exact_product(const ProductLayout& layout, const ExactFloatB& exact, size_t p, const A* a,
                   const QuantParam& a_zero, const RunContext& context, int32_t* acc,
                   std::byte* scratch) {
  const int64_t m = layout.m, n = layout.n, k = layout.k;
  if (k == 0) {
    std::fill(acc, acc + m * n, 0);
    return;
  }
  if (!exact.columns.empty()) {
    column_product(layout, exact, p, a, a_zero, context, acc, scratch);
    return;
  }
  const bool single = single_chunk(layout, exact);
  auto* a_float = reinterpret_cast<float*>(scratch);
  std::byte* after_a = scratch + aligned_floats_bytes(m * exact.chunk);
  float* c_float = single ? reinterpret_cast<float*>(acc) : reinterpret_cast<float*>(after_a);
  std::byte* packing = after_a + aligned_floats_bytes(single ? 0 : m * n);
  for (int64_t first = 0; first < k; first += exact.chunk) {
    const int64_t rows = std::min(exact.chunk, k - first);
    for (int64_t i = 0; i < m; ++i) {
      center_row(a + layout.a_offsets[p] + i * k + first, zero_point_at<A>(a_zero, context, i),
                 rows, a_float + i * rows);
    }
    // B's rows of this chunk; none left when its strips were packed (which the plan then reads).
    const float* b =
        exact.values.empty() ? nullptr : exact.values.data() + layout.b_offsets[p] + first * n;
    const std::optional<PackedProduct>& plan =
        rows == exact.chunk ? exact.packed : exact.packed_tail;
    if (plan) {
      run_packed_product(*plan, a_float, b, c_float, packing, context.threads);
    } else {
      const GemmShape shape{false, false, m, n, rows, rows, n, n};
      gemm(shape, 1.0f, a_float, b, 0.0f, c_float, context.threads);
    }
    if (single) {
      floats_to_int32_in_place(acc, m * n);
    } else {
      add_chunk_sums(c_float, m * n, first == 0, acc);
    }
  }
}

template <class A, class B>
class MatMulIntegerKernel final : public Kernel {
 public:
  MatMulIntegerKernel(ProductLayout layout, QuantParam a_zero, QuantParam b_zero,
                      std::optional<ExactFloatB> exact)
      : layout_(std::move(layout)), a_zero_(a_zero), b_zero_(b_zero), exact_(std::move(exact)) {}

  Status run(const RunContext& context) override {
    if (exact_) return run_exact(context);
    const A* a = context.inputs[0].as<const A>();
    const B* b = context.inputs[1].as<const B>();
    int32_t* y = context.outputs[0].as<int32_t>();
    const auto [b_zero, b_zero_stride] = b_zero_of<B>(b_zero_, context);
    const int64_t m = layout_.m, n = layout_.n, k = layout_.k;
    for (size_t p = 0; p < layout_.a_offsets.size(); ++p) {
      for (int64_t i = 0; i < m; ++i) {
        integer_dot_row(n, k, a + layout_.a_offsets[p] + i * k,
                        zero_point_at<A>(a_zero_, context, i), b + layout_.b_offsets[p], b_zero,
                        b_zero_stride, y + (static_cast<int64_t>(p) * m + i) * n);
      }
    }
    return Status::ok();
  }

 private:
  // Each product on the exact float path, straight into Y.
  Status run_exact(const RunContext& context) {
    const A* a = context.inputs[0].as<const A>();
    int32_t* y = context.outputs[0].as<int32_t>();
    const int64_t m = layout_.m, n = layout_.n;
    for (size_t p = 0; p < layout_.a_offsets.size(); ++p) {
      exact_product(layout_, *exact_, p, a, a_zero_, context, y + static_cast<int64_t>(p) * m * n,
                    context.workspace);
    }
    return Status::ok();
  }

  ProductLayout layout_;
  QuantParam a_zero_;
  QuantParam b_zero_;
  std::optional<ExactFloatB> exact_;
};

// The scales and zero points of QLinearMatMul, input indices as in the spec.
struct QLinearParams {
  QuantParam a_scale, a_zero, b_scale, b_zero, y_scale, y_zero;
};

template <class A, class B, class Q>
class QLinearMatMulKernel final : public Kernel {
 public:
  QLinearMatMulKernel(ProductLayout layout, QLinearParams params, std::optional<ExactFloatB> exact)
      : layout_(std::move(layout)), params_(params), exact_(std::move(exact)) {}

  Status run(const RunContext& context) override {
    if (exact_) return run_exact(context);
    const A* a = context.inputs[0].as<const A>();
    const B* b = context.inputs[3].as<const B>();
    Q* y = context.outputs[0].as<Q>();
    auto* acc = reinterpret_cast<int32_t*>(context.workspace);  // one row of n
    const auto [b_zero, b_zero_stride] = b_zero_of<B>(params_.b_zero, context);
    const float y_scale = scale_at(params_.y_scale, context, 0);
    const int32_t y_zero = zero_point_at<Q>(params_.y_zero, context, 0);
    const int64_t m = layout_.m, n = layout_.n, k = layout_.k;
    for (size_t p = 0; p < layout_.a_offsets.size(); ++p) {
      for (int64_t i = 0; i < m; ++i) {
        integer_dot_row(n, k, a + layout_.a_offsets[p] + i * k,
                        zero_point_at<A>(params_.a_zero, context, i), b + layout_.b_offsets[p],
                        b_zero, b_zero_stride, acc);
        const float a_scale = scale_at(params_.a_scale, context, i);
        Q* y_row = y + (static_cast<int64_t>(p) * m + i) * n;
        requantize_row(context, a_scale, y_scale, y_zero, acc, y_row);
      }
    }
    return Status::ok();
  }

 private:
  void requantize_row(const RunContext& context, float a_scale, float y_scale, int32_t y_zero,
                      const int32_t* acc, Q* y_row) const {
    for (int64_t j = 0; j < layout_.n; ++j) {
      const float multiplier = a_scale * scale_at(params_.b_scale, context, j) / y_scale;
      y_row[j] = requantize<Q>(acc[j], multiplier, y_zero);
    }
  }

  // Each product on the exact float path into int32 rows in the workspace, requantized as the
  // integer path does them.
  Status run_exact(const RunContext& context) {
    const A* a = context.inputs[0].as<const A>();
    Q* y = context.outputs[0].as<Q>();
    const int64_t m = layout_.m, n = layout_.n;
    auto* acc = reinterpret_cast<int32_t*>(context.workspace);
    std::byte* scratch = context.workspace + aligned_floats_bytes(m * n);
    const float y_scale = scale_at(params_.y_scale, context, 0);
    const int32_t y_zero = zero_point_at<Q>(params_.y_zero, context, 0);
    for (size_t p = 0; p < layout_.a_offsets.size(); ++p) {
      exact_product(layout_, *exact_, p, a, params_.a_zero, context, acc, scratch);
      for (int64_t i = 0; i < m; ++i) {
        requantize_row(context, scale_at(params_.a_scale, context, i), y_scale, y_zero, acc + i * n,
                       y + (static_cast<int64_t>(p) * m + i) * n);
      }
    }
    return Status::ok();
  }

  ProductLayout layout_;
  QLinearParams params_;
  std::optional<ExactFloatB> exact_;
};

}  // namespace

// MatMulInteger(A, B, a_zero_point?, b_zero_point?) -> int32 Y.
Expected<PreparedKernel> make_matmul_integer(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(require_input(node, 0));
  ONEPOOL_RETURN_IF_ERROR(require_input(node, 1));
  if (!node.has_output(0)) return node.error(StatusCode::kInvalidModel, "output 0 is missing");
  ONEPOOL_RETURN_IF_ERROR(require_output_dtype(node, 0, DType::kInt32));
  ONEPOOL_ASSIGN_OR_RETURN(ProductLayout layout, plan_products(node, 0, 1));
  const DType a_type = node.input(0).dtype;
  const DType b_type = node.input(1).dtype;
  ONEPOOL_ASSIGN_OR_RETURN(const QuantParam a_zero,
                           read_quant_param(node, 2, a_type, layout.m, true, "a_zero_point"));
  ONEPOOL_ASSIGN_OR_RETURN(const QuantParam b_zero,
                           read_quant_param(node, 3, b_type, layout.n, true, "b_zero_point"));
  return visit_8bit(node, describe_input(node, 0), a_type, [&](auto a_tag) {
    return visit_8bit(
        node, describe_input(node, 1), b_type, [&](auto b_tag) -> Expected<PreparedKernel> {
          using A = typename decltype(a_tag)::type;
          using B = typename decltype(b_tag)::type;
          std::optional<ExactFloatB> exact = exact_float_b<B>(node, layout, 1, b_zero);
          PreparedKernel result;
          result.implementation = !exact                   ? "int32 dot rows"
                                  : exact->columns.empty() ? "exact float gemm"
                                                           : "exact int16 columns";
          if (exact) result.workspace_bytes = exact_scratch_bytes(layout, *exact);
          result.kernel = std::make_unique<MatMulIntegerKernel<A, B>>(std::move(layout), a_zero,
                                                                      b_zero, std::move(exact));
          return result;
        });
  });
}

// QLinearMatMul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point).
Expected<PreparedKernel> make_qlinear_matmul(const NodeContext& node) {
  for (size_t i : {size_t{0}, size_t{1}, size_t{3}, size_t{4}, size_t{6}}) {
    ONEPOOL_RETURN_IF_ERROR(require_input(node, i));
  }
  if (!node.has_output(0)) return node.error(StatusCode::kInvalidModel, "output 0 is missing");
  ONEPOOL_ASSIGN_OR_RETURN(ProductLayout layout, plan_products(node, 0, 3));
  const DType a_type = node.input(0).dtype;
  const DType b_type = node.input(3).dtype;
  const DType y_type = node.output(0).dtype;
  QLinearParams params;
  ONEPOOL_ASSIGN_OR_RETURN(params.a_scale,
                           read_quant_param(node, 1, DType::kFloat32, layout.m, false, "a_scale"));
  ONEPOOL_ASSIGN_OR_RETURN(params.a_zero,
                           read_quant_param(node, 2, a_type, layout.m, true, "a_zero_point"));
  ONEPOOL_ASSIGN_OR_RETURN(params.b_scale,
                           read_quant_param(node, 4, DType::kFloat32, layout.n, false, "b_scale"));
  ONEPOOL_ASSIGN_OR_RETURN(params.b_zero,
                           read_quant_param(node, 5, b_type, layout.n, true, "b_zero_point"));
  ONEPOOL_ASSIGN_OR_RETURN(params.y_scale,
                           read_quant_param(node, 6, DType::kFloat32, 1, false, "y_scale"));
  ONEPOOL_ASSIGN_OR_RETURN(params.y_zero,
                           read_quant_param(node, 7, y_type, 1, true, "y_zero_point"));
  ONEPOOL_ASSIGN_OR_RETURN(const int64_t row_bytes,
                           checked_mul(layout.n, int64_t{sizeof(int32_t)}, "accumulator row"));
  return visit_8bit(node, describe_input(node, 0), a_type, [&](auto a_tag) {
    return visit_8bit(node, describe_input(node, 3), b_type, [&](auto b_tag) {
      return visit_8bit(
          node, describe_output(node, 0), y_type, [&](auto y_tag) -> Expected<PreparedKernel> {
            using A = typename decltype(a_tag)::type;
            using B = typename decltype(b_tag)::type;
            using Q = typename decltype(y_tag)::type;
            std::optional<ExactFloatB> exact = exact_float_b<B>(node, layout, 3, params.b_zero);
            PreparedKernel result;
            result.workspace_bytes = exact ? aligned_floats_bytes(layout.m * layout.n) +
                                                 exact_scratch_bytes(layout, *exact)
                                           : static_cast<size_t>(row_bytes);
            result.implementation = !exact                   ? "int32 dot rows + requantize"
                                    : exact->columns.empty() ? "exact float gemm + requantize"
                                                             : "exact int16 columns + requantize";
            result.kernel = std::make_unique<QLinearMatMulKernel<A, B, Q>>(
                std::move(layout), params, std::move(exact));
            return result;
          });
    });
  });
}

}  // namespace onepool::cpu::quant
