// CPU NonMaxSuppression (opset 10/11): per batch and class, the boxes kept by greedy IoU
// suppression, as rows (batch, class, box) of int64 selected_indices [k, 3].
//
// Semantics follow ONNX Runtime's CPU kernel:
// - max_output_boxes_per_class (input 2) absent, 0 or negative: no boxes (ORT clamps to 0).
// - iou_threshold (input 3) absent: 0; outside [0, 1] (or NaN) is an error, as in ORT.
// - score_threshold (input 4) present: a box is a candidate when its score > threshold
//   (strictly; NaN scores never pass); absent: every box is a candidate.
// - Candidates by descending score, equal scores by lower box index; NaN scores (possible only
//   without a threshold; ORT's order is undefined there) rank last.
// - A candidate is dropped when its IoU with a box already selected for this (batch, class)
//   is > iou_threshold. Disjoint or touching boxes and zero-area boxes have IoU 0.
// - center_point_box 0: [y1, x1, y2, x2], any diagonal pair of corners (min/max per axis);
//   1: [x_center, y_center, width, height], area width * height.
// The scalar inputs are read at run time (constants and graph inputs alike). The output view
// holds the planned bound [K_bound, 3]; rows are written from its start and the actual [k, 3]
// goes to RunContext::output_shapes. A k over the bound is an error (nothing written past it).
//
// Cost per (batch, class): O(N log N) for the sort plus O(N * S) IoU tests, S = boxes selected
// (at most min(N, max_output_boxes_per_class)). Single-threaded: NMS is rarely hot.
// Workspace: N candidate indices, N selected indices (int64) and N normalized boxes.
#include <algorithm>
#include <cmath>
#include <memory>

#include "runtime/cpu/kernel_registry.h"

namespace onepool::cpu {
namespace {

// A box as its extent on each axis and its area, computed once per batch.
struct Corners {
  float y_min, x_min, y_max, x_max, area;
};

Corners corners_of(const float* box, bool center_point_box) {
  if (center_point_box) {
    const float half_width = box[2] / 2;
    const float half_height = box[3] / 2;
    return {box[1] - half_height, box[0] - half_width, box[1] + half_height, box[0] + half_width,
            box[2] * box[3]};
  }
  Corners c{std::min(box[0], box[2]), std::min(box[1], box[3]), std::max(box[0], box[2]),
            std::max(box[1], box[3]), 0.0f};
  c.area = (c.y_max - c.y_min) * (c.x_max - c.x_min);
  return c;
}

// True when IoU(a, b) > iou_threshold. No overlap, zero area or a degenerate union: IoU 0.
bool suppresses(const Corners& a, const Corners& b, float iou_threshold) {
  const float x_low = std::max(a.x_min, b.x_min);
  const float x_high = std::min(a.x_max, b.x_max);
  if (x_high <= x_low) return false;
  const float y_low = std::max(a.y_min, b.y_min);
  const float y_high = std::min(a.y_max, b.y_max);
  if (y_high <= y_low) return false;
  const float intersection = (x_high - x_low) * (y_high - y_low);
  if (intersection <= 0.0f) return false;
  const float union_area = a.area + b.area - intersection;
  if (union_area <= 0.0f) return false;
  return intersection / union_area > iou_threshold;
}

struct Thresholds {
  int64_t max_per_class = 0;
  float iou = 0.0f;
  bool has_score = false;
  float score = 0.0f;
};

class NonMaxSuppressionKernel final : public Kernel {
 public:
  NonMaxSuppressionKernel(int64_t batches, int64_t classes, int64_t boxes, bool center_point_box,
                          std::string node, std::string output)
      : batches_(batches),
        classes_(classes),
        boxes_(boxes),
        center_point_box_(center_point_box),
        node_(std::move(node)),
        output_(std::move(output)) {}

  Status run(const RunContext& context) override {
    // Step 1. The optional scalars, read now: they may be graph inputs.
    ONEPOOL_ASSIGN_OR_RETURN(const Thresholds thresholds, read_thresholds(context.inputs));
    const float* boxes = context.inputs[0].as<const float>();
    const float* scores = context.inputs[1].as<const float>();
    auto* order = reinterpret_cast<int64_t*>(context.workspace);
    int64_t* selected = order + boxes_;
    auto* corners = reinterpret_cast<Corners*>(selected + boxes_);
    int64_t* rows = context.outputs[0].as<int64_t>();
    const int64_t capacity = context.outputs[0].shape[0];
    // Step 2. Per batch: normalize its boxes once; per class: select, then write the rows that
    // fit. `count` keeps counting past the bound so the error can say how many there were.
    int64_t count = 0;
    for (int64_t b = 0; b < batches_ && thresholds.max_per_class > 0; ++b) {
      for (int64_t i = 0; i < boxes_; ++i) {
        corners[i] = corners_of(boxes + (b * boxes_ + i) * 4, center_point_box_);
      }
      for (int64_t c = 0; c < classes_; ++c) {
        const float* class_scores = scores + (b * classes_ + c) * boxes_;
        const int64_t kept = select_class(class_scores, corners, thresholds, order, selected);
        for (int64_t s = 0; s < kept; ++s, ++count) {
          if (count >= capacity) continue;
          rows[count * 3] = b;
          rows[count * 3 + 1] = c;
          rows[count * 3 + 2] = selected[s];
        }
      }
    }
    // Step 3. The actual shape, or an error when the bound was too small.
    if (count > capacity) {
      return make_status(StatusCode::kOutOfRange, node_, ": output '", output_, "' holds at most ",
                         capacity, " selected boxes (planned bound [", capacity,
                         ",3]), but the run selected ", count);
    }
    context.output_shapes[0] = Shape{count, 3};
    return Status::ok();
  }

 private:
  Expected<Thresholds> read_thresholds(std::span<const TensorView> inputs) const {
    Thresholds t;
    const auto present = [&](size_t i) { return inputs.size() > i && inputs[i].data != nullptr; };
    if (present(2)) t.max_per_class = std::max<int64_t>(*inputs[2].as<const int64_t>(), 0);
    if (present(3)) t.iou = *inputs[3].as<const float>();
    if (!(t.iou >= 0.0f && t.iou <= 1.0f)) {
      return make_status(StatusCode::kInvalidArgument, node_, ": input 3 (iou_threshold) is ",
                         t.iou, " at run time, expected a value in [0, 1]");
    }
    t.has_score = present(4);
    if (t.has_score) t.score = *inputs[4].as<const float>();
    return t;
  }

  // The boxes kept for one (batch, class), in selection order, into `selected`; returns how many.
  int64_t select_class(const float* scores, const Corners* corners, const Thresholds& thresholds,
                       int64_t* order, int64_t* selected) const {
    int64_t candidates = 0;
    for (int64_t i = 0; i < boxes_; ++i) {
      if (!thresholds.has_score || scores[i] > thresholds.score) order[candidates++] = i;
    }
    std::sort(order, order + candidates, [scores](int64_t a, int64_t b) {
      const bool a_nan = std::isnan(scores[a]);
      const bool b_nan = std::isnan(scores[b]);
      if (a_nan || b_nan) return a_nan == b_nan ? a < b : b_nan;
      if (scores[a] != scores[b]) return scores[a] > scores[b];
      return a < b;
    });
    const int64_t limit = std::min(thresholds.max_per_class, boxes_);
    int64_t kept = 0;
    for (int64_t r = 0; r < candidates && kept < limit; ++r) {
      const Corners& candidate = corners[order[r]];
      bool keep = true;
      for (int64_t s = 0; s < kept && keep; ++s) {
        keep = !suppresses(candidate, corners[selected[s]], thresholds.iou);
      }
      if (keep) selected[kept++] = order[r];
    }
    return kept;
  }

  int64_t batches_;
  int64_t classes_;
  int64_t boxes_;
  bool center_point_box_;
  std::string node_;
  std::string output_;
};

Status check_float_tensor(const NodeContext& node, size_t i, const char* what, int rank) {
  const Value& value = node.input(i);
  if (value.dtype == DType::kFloat32 && value.shape.rank() == rank) return Status::ok();
  return node.error(StatusCode::kInvalidModel, "input ", i, " (", what, ") '", value.name,
                    "': expected float32 of rank ", rank, ", got ", dtype_name(value.dtype), " ",
                    value.shape.to_string());
}

// Inputs 2..4, when present: one element each (shape [1] or a scalar) of the spec's dtype.
Status check_scalar(const NodeContext& node, size_t i, const char* what, DType dtype) {
  if (!node.has_input(i)) return Status::ok();
  const Value& value = node.input(i);
  if (value.dtype == dtype && value.shape.element_count() == 1) return Status::ok();
  return node.error(StatusCode::kInvalidModel, "input ", i, " (", what, ") '", value.name,
                    "': expected one ", dtype_name(dtype), " (shape [1] or a scalar), got ",
                    dtype_name(value.dtype), " ", value.shape.to_string());
}

Status check_inputs(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_float_tensor(node, 0, "boxes", 3));
  ONEPOOL_RETURN_IF_ERROR(check_float_tensor(node, 1, "scores", 3));
  const Value& boxes = node.input(0);
  const Value& scores = node.input(1);
  if (boxes.shape[2] != 4) {
    return node.error(StatusCode::kInvalidModel, "input 0 (boxes) '", boxes.name,
                      "': expected [num_batches, num_boxes, 4], got ", boxes.shape.to_string());
  }
  if (boxes.shape[0] != scores.shape[0] || boxes.shape[1] != scores.shape[2]) {
    return node.error(StatusCode::kInvalidModel, "boxes '", boxes.name, "' ",
                      boxes.shape.to_string(), " and scores '", scores.name, "' ",
                      scores.shape.to_string(),
                      " disagree: expected scores [num_batches, num_classes, num_boxes] = [",
                      boxes.shape[0], ",C,", boxes.shape[1], "]");
  }
  ONEPOOL_RETURN_IF_ERROR(check_scalar(node, 2, "max_output_boxes_per_class", DType::kInt64));
  ONEPOOL_RETURN_IF_ERROR(check_scalar(node, 3, "iou_threshold", DType::kFloat32));
  return check_scalar(node, 4, "score_threshold", DType::kFloat32);
}

Status check_output(const NodeContext& node) {
  const Value& output = node.output(0);
  if (output.dtype == DType::kInt64 && output.shape.rank() == 2 && output.shape[1] == 3) {
    return Status::ok();
  }
  return node.error(StatusCode::kInvalidModel, "output '", output.name,
                    "' (selected_indices): expected int64 [K, 3], got ", dtype_name(output.dtype),
                    " ", output.shape.to_string());
}

Expected<PreparedKernel> make_non_max_suppression_kernel(const NodeContext& node) {
  if (!node.has_input(0) || !node.has_input(1) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel,
                      "inputs 0 (boxes), 1 (scores) and output 0 are required");
  }
  ONEPOOL_RETURN_IF_ERROR(check_inputs(node));
  ONEPOOL_RETURN_IF_ERROR(check_output(node));
  const int64_t center_point_box = node.node().attributes.get_int("center_point_box", 0);
  if (center_point_box != 0 && center_point_box != 1) {
    return node.error(StatusCode::kInvalidModel,
                      "attribute center_point_box: expected 0 or 1, got ", center_point_box);
  }
  const Shape& scores = node.input(1).shape;
  constexpr size_t kBytesPerBox = 2 * sizeof(int64_t) + sizeof(Corners);
  size_t workspace_bytes = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(scores[2]), kBytesPerBox, &workspace_bytes)) {
    return node.error(StatusCode::kOutOfRange, "workspace for ", scores[2],
                      " boxes overflows size_t");
  }
  PreparedKernel result;
  result.kernel = std::make_unique<NonMaxSuppressionKernel>(
      scores[0], scores[1], scores[2], center_point_box == 1, describe_node(node.node()),
      node.output(0).name);
  result.workspace_bytes = workspace_bytes;
  result.data_dependent_outputs = true;
  return result;
}

}  // namespace

void register_non_max_suppression_kernel(KernelRegistry& registry) {
  registry.add("NonMaxSuppression", &make_non_max_suppression_kernel);
}

}  // namespace onepool::cpu
