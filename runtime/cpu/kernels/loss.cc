// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (the second is the first applied to
// log_softmax(scores, axis 1)). Input [N, C, d...] is viewed as [N, C, D] and the target as
// [N, D]; for each position (n, d) with target t (not ignore_index):
//   loss[n, d] = -input[n, t, d] * weight[t]          (weight 1 when absent)
// reduction "none" writes loss[N, d...]; "sum" the sum; "mean" the sum divided by the sum of the
// weights of the positions not ignored (NaN when every position is ignored, as the ONNX
// reference computes 0 / 0). Sums accumulate in double. A target outside [0, C) that is not
// ignore_index is kOutOfRange naming the node, the position and the value.
//
// One thread, O(N * C * D): these are training-graph ops, small next to the layers feeding them.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_dtype.h"

namespace onepool::cpu {
namespace {

enum class LossReduction : uint8_t { kNone, kSum, kMean };

struct LossGeometry {
  int64_t batch = 0;      // N
  int64_t classes = 0;    // C
  int64_t positions = 0;  // D: product of the dims after C (1 for [N, C])
};

struct LossOptions {
  LossReduction reduction = LossReduction::kMean;
  bool has_ignore = false;
  int64_t ignore_index = 0;
  bool softmax = false;  // SoftmaxCrossEntropyLoss: take log_softmax over C first
};

int64_t target_at(const TensorView& target, int64_t i) {
  if (target.dtype == DType::kInt32) return target.as<const int32_t>()[i];
  return target.as<const int64_t>()[i];
}

template <class T>
class LossKernel final : public Kernel {
 public:
  LossKernel(std::string node, LossGeometry geometry, LossOptions options, bool has_weight,
             bool has_log_prob)
      : node_(std::move(node)),
        g_(geometry),
        options_(options),
        has_weight_(has_weight),
        has_log_prob_(has_log_prob) {}

  Status run(const RunContext& context) override {
    const T* x = context.inputs[0].as<const T>();
    const TensorView& target = context.inputs[1];
    const T* weight = has_weight_ ? context.inputs[2].as<const T>() : nullptr;
    T* loss = context.outputs[0].as<T>();
    T* log_prob = has_log_prob_ ? context.outputs[1].as<T>() : nullptr;
    const int64_t C = g_.classes, D = g_.positions;
    double loss_sum = 0.0, weight_sum = 0.0;
    for (int64_t n = 0; n < g_.batch; ++n) {
      const T* x_n = x + n * C * D;
      for (int64_t d = 0; d < D; ++d) {
        // Step 1. log_softmax over the classes of column (n, d), when asked for.
        double shift = 0.0;
        if (options_.softmax) {
          shift = log_softmax_shift(x_n + d, C, D);
          if (log_prob != nullptr) {
            T* out = log_prob + n * C * D + d;
            for (int64_t c = 0; c < C; ++c) out[c * D] = static_cast<T>(x_n[c * D + d] - shift);
          }
        }
        // Step 2. The weighted negative log-likelihood of the target class.
        const int64_t position = n * D + d;
        const int64_t t = target_at(target, position);
        if (options_.has_ignore && t == options_.ignore_index) {
          if (options_.reduction == LossReduction::kNone) loss[position] = T(0);
          continue;
        }
        if (t < 0 || t >= C) {
          return make_status(StatusCode::kOutOfRange, node_, ": target ", t, " at position ",
                             position, " is out of range for ", C, " classes (expected [0, ", C - 1,
                             "]", options_.has_ignore ? " or ignore_index " : "",
                             options_.has_ignore ? std::to_string(options_.ignore_index) : "", ")");
        }
        const double w = weight != nullptr ? static_cast<double>(weight[t]) : 1.0;
        const double value = -(static_cast<double>(x_n[t * D + d]) - shift) * w;
        if (options_.reduction == LossReduction::kNone) loss[position] = static_cast<T>(value);
        loss_sum += value;
        weight_sum += w;
      }
    }
    if (options_.reduction == LossReduction::kSum) loss[0] = static_cast<T>(loss_sum);
    if (options_.reduction == LossReduction::kMean) loss[0] = static_cast<T>(loss_sum / weight_sum);
    return Status::ok();
  }

 private:
  // max + log(sum exp(x - max)) over x[c * stride], c < count: log_softmax(x)[c] = x[c] - shift.
  // A column holding +Inf or NaN gives NaN, as the reference does.
  static double log_softmax_shift(const T* x, int64_t count, int64_t stride) {
    double max = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c < count; ++c) max = std::max(max, static_cast<double>(x[c * stride]));
    double sum = 0.0;
    for (int64_t c = 0; c < count; ++c) sum += std::exp(static_cast<double>(x[c * stride]) - max);
    return max + std::log(sum);
  }

  std::string node_;
  LossGeometry g_;
  LossOptions options_;
  bool has_weight_;
  bool has_log_prob_;
};

Expected<LossReduction> parse_loss_reduction(const NodeContext& node) {
  const std::string name = node.node().attributes.get_string("reduction", "mean");
  if (name == "none") return LossReduction::kNone;
  if (name == "sum") return LossReduction::kSum;
  if (name == "mean") return LossReduction::kMean;
  return node.error(StatusCode::kInvalidModel, "attribute 'reduction' must be none, sum or ",
                    "mean, got '", name, "'");
}

Status check_shape(const NodeContext& node, const Value& value, const char* role,
                   const Shape& expected) {
  if (value.shape == expected) return Status::ok();
  return node.error(StatusCode::kInvalidModel, role, " '", value.name, "': expected shape ",
                    expected.to_string(), ", got ", value.shape.to_string());
}

Expected<PreparedKernel> make_loss_kernel(const NodeContext& node, bool softmax) {
  // Step 1. Inputs: scores/input [N, C, d...], target [N, d...], optional weight [C].
  if (!node.has_input(0) || !node.has_input(1) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "expected inputs 0 and 1 and output 0");
  }
  const Value& input = node.input(0);
  const Value& target = node.input(1);
  if (target.dtype != DType::kInt32 && target.dtype != DType::kInt64) {
    return node.error(StatusCode::kInvalidModel, "target '", target.name,
                      "': expected int32 or int64, got ", dtype_name(target.dtype));
  }
  const Shape& shape = input.shape;
  if (shape.rank() < 2) {
    return node.error(StatusCode::kInvalidModel, "input '", input.name,
                      "': expected [N, C, d...], got ", shape.to_string());
  }
  LossGeometry geometry{shape[0], shape[1], 1};
  Shape target_shape{shape[0]};
  for (int a = 2; a < shape.rank(); ++a) {
    geometry.positions *= shape[a];
    target_shape.push_back(shape[a]);
  }
  ONEPOOL_RETURN_IF_ERROR(check_shape(node, target, "target", target_shape));
  const bool has_weight = node.has_input(2);
  if (has_weight) {
    ONEPOOL_RETURN_IF_ERROR(require_input_dtype(node, 2, input.dtype));
    ONEPOOL_RETURN_IF_ERROR(check_shape(node, node.input(2), "weight", Shape{shape[1]}));
  }
  // Step 2. Attributes and outputs: loss (target's shape, or a scalar), optional log_prob.
  LossOptions options;
  options.softmax = softmax;
  ONEPOOL_ASSIGN_OR_RETURN(options.reduction, parse_loss_reduction(node));
  options.has_ignore = node.node().attributes.has("ignore_index");
  options.ignore_index = node.node().attributes.get_int("ignore_index", 0);
  ONEPOOL_RETURN_IF_ERROR(require_output_dtype(node, 0, input.dtype));
  const Shape loss_shape = options.reduction == LossReduction::kNone ? target_shape : Shape{};
  if (node.output(0).shape.element_count() != loss_shape.element_count() ||
      (options.reduction == LossReduction::kNone && node.output(0).shape != loss_shape)) {
    return node.error(StatusCode::kInvalidModel, "output '", node.output(0).name,
                      "': expected shape ", loss_shape.to_string(), ", got ",
                      node.output(0).shape.to_string());
  }
  const bool has_log_prob = softmax && node.has_output(1);
  if (has_log_prob) {
    ONEPOOL_RETURN_IF_ERROR(require_output_dtype(node, 1, input.dtype));
    if (node.output(1).shape != shape) {
      return node.error(StatusCode::kInvalidModel, "output 1 '", node.output(1).name,
                        "': expected shape ", shape.to_string(), ", got ",
                        node.output(1).shape.to_string());
    }
  }
  return visit_dtype<kFloatTypes>(
      node, describe_input(node, 0), input.dtype, [&](auto tag) -> Expected<PreparedKernel> {
        using T = typename decltype(tag)::type;
        PreparedKernel prepared;
        prepared.kernel = std::make_unique<LossKernel<T>>(describe_node(node.node()), geometry,
                                                          options, has_weight, has_log_prob);
        return prepared;
      });
}

Expected<PreparedKernel> make_nll_loss_kernel(const NodeContext& node) {
  return make_loss_kernel(node, false);
}

Expected<PreparedKernel> make_softmax_cross_entropy_kernel(const NodeContext& node) {
  return make_loss_kernel(node, true);
}

}  // namespace

void register_loss_kernels(KernelRegistry& registry) {
  registry.add("NegativeLogLikelihoodLoss", &make_nll_loss_kernel);
  registry.add("SoftmaxCrossEntropyLoss", &make_softmax_cross_entropy_kernel);
}

}  // namespace onepool::cpu
