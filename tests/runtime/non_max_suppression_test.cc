// NonMaxSuppression (runtime/cpu/kernels/non_max_suppression.cc): the nine ONNX node tests
// (test_nonmaxsuppression_*, inputs and outputs transcribed from their test_data_set_0), the
// optional inputs absent, 0 and negative, strict score filtering, flipped corners, ties and NaN
// scores, runtime and constant scalars, a bound too small for the result, malformed shapes, and
// randomized invariants. The output is given at its planned bound [K_bound, 3];
// run_single_node trims it to the [k, 3] the kernel reports.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "runtime/kernel_test_util.h"

using namespace onepool;
using namespace onepool::testing;

namespace {

struct NmsCase {
  Shape boxes_shape;
  std::vector<float> boxes;
  Shape scores_shape;
  std::vector<float> scores;
  std::optional<int64_t> max_boxes;
  std::optional<float> iou_threshold;
  std::optional<float> score_threshold;
  int64_t center_point_box = 0;
  bool constant_scalars = false;  // false: graph inputs, read at run time
  Shape scalar_shape = Shape{1};
  int64_t bound_rows = -1;  // -1: B * C * min(N, max_boxes), as the importer plans it
};

Expected<HostTensor> run_nms(const NmsCase& c) {
  std::vector<std::optional<TestInput>> inputs = {f32(c.boxes_shape, c.boxes),
                                                  f32(c.scores_shape, c.scores)};
  const bool k = c.constant_scalars;
  inputs.push_back(c.max_boxes ? std::optional(i64(c.scalar_shape, {*c.max_boxes}, k))
                               : std::nullopt);
  inputs.push_back(c.iou_threshold ? std::optional(f32(c.scalar_shape, {*c.iou_threshold}, k))
                                   : std::nullopt);
  inputs.push_back(c.score_threshold ? std::optional(f32(c.scalar_shape, {*c.score_threshold}, k))
                                     : std::nullopt);
  int64_t bound = c.bound_rows;
  if (bound < 0) {
    const int64_t per_class = std::clamp<int64_t>(c.max_boxes.value_or(0), 0, c.boxes_shape[1]);
    bound = c.scores_shape[0] * c.scores_shape[1] * per_class;
  }
  AttributeMap attributes;
  attributes.set("center_point_box", int_attr(c.center_point_box));
  ONEPOOL_ASSIGN_OR_RETURN(
      auto outputs,
      run_single_node("NonMaxSuppression", inputs, {{DType::kInt64, Shape{bound, 3}}}, attributes));
  return outputs[0];
}

// Checks the result is [rows / 3, 3] with exactly these rows.
void check_rows(const Expected<HostTensor>& result, const std::vector<int64_t>& rows) {
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  CHECK(result->shape == Shape{static_cast<int64_t>(rows.size() / 3), 3});
  CHECK(values_of<int64_t>(*result) == rows);
}

// The boxes most ONNX tests share: two clusters of three near-duplicates (0-2 at y 0..1,
// 3-4 at x 10..11) and a lone box 5 at x 100..101. Format [y1, x1, y2, x2].
const std::vector<float> kBoxes = {0, 0,  1, 1,  0, 0.1f,  1, 1.1f,  0, -0.1f, 1, 0.9f,
                                   0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100,   1, 101};
const std::vector<float> kScores = {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f};

NmsCase onnx_case(int64_t max_boxes, float score_threshold = 0.0f) {
  return {Shape{1, 6, 4}, kBoxes, Shape{1, 1, 6}, kScores, max_boxes, 0.5f, score_threshold};
}

}  // namespace

// suppress_by_IOU: 3 (0.95) first; 4 overlaps it (IoU 0.82), 0 (0.9) is kept, 1 and 2 overlap 0
// (IoU 0.82), 5 is alone: [[0,0,3],[0,0,0],[0,0,5]]. limit_output_size: max 2 → 3 and 0.
// suppress_by_IOU_and_scores: score > 0.4 drops 5 (0.3) → 3 and 0.
TEST_CASE("NonMaxSuppression: ONNX suppress_by_IOU, limit_output_size, _and_scores") {
  check_rows(run_nms(onnx_case(3)), {0, 0, 3, 0, 0, 0, 0, 0, 5});
  check_rows(run_nms(onnx_case(2)), {0, 0, 3, 0, 0, 0});
  check_rows(run_nms(onnx_case(3, 0.4f)), {0, 0, 3, 0, 0, 0});
}

// center_point_box_format: the same layout as [x_center, y_center, width, height] → 3, 0, 5.
TEST_CASE("NonMaxSuppression: ONNX center_point_box_format") {
  NmsCase c = onnx_case(3);
  c.boxes = {0.5f, 0.5f,  1, 1, 0.5f, 0.6f,  1, 1, 0.5f, 0.4f,   1, 1,
             0.5f, 10.5f, 1, 1, 0.5f, 10.6f, 1, 1, 0.5f, 100.5f, 1, 1};
  c.center_point_box = 1;
  check_rows(run_nms(c), {0, 0, 3, 0, 0, 0, 0, 0, 5});
}

// Centers decide: [0,0,2,2] is x, y in -1..1 and [0.2,0.2,1.6,1.6] is -0.6..1, IoU 2.56 / 4 =
// 0.64 → box 1 dropped. Read as corners they would have IoU 1.96 / 4 = 0.49 (box 1 kept).
TEST_CASE("NonMaxSuppression: center_point_box 1 is not read as corners") {
  NmsCase c{
      Shape{1, 2, 4}, {0, 0, 2, 2, 0.2f, 0.2f, 1.6f, 1.6f}, Shape{1, 1, 2}, {0.9f, 0.8f}, 2, 0.5f,
      std::nullopt};
  c.center_point_box = 1;
  check_rows(run_nms(c), {0, 0, 0});
  c.center_point_box = 0;
  check_rows(run_nms(c), {0, 0, 0, 0, 0, 1});
}

// Suppression needs IoU > threshold: [0,0,1,2] and [0,0,1,1] have IoU 1 / 2 = 0.5 exactly, so
// at 0.5 both stay; at 0.49 box 1 goes. Two equal boxes (IoU 1) both stay at threshold 1.
TEST_CASE("NonMaxSuppression: IoU equal to the threshold does not suppress") {
  NmsCase c{Shape{1, 2, 4}, {0, 0, 1, 2, 0, 0, 1, 1}, Shape{1, 1, 2}, {0.9f, 0.8f}, 2, 0.5f,
            std::nullopt};
  check_rows(run_nms(c), {0, 0, 0, 0, 0, 1});
  c.iou_threshold = 0.49f;
  check_rows(run_nms(c), {0, 0, 0});
  c.boxes = {0, 0, 1, 1, 0, 0, 1, 1};
  c.iou_threshold = 1.0f;
  check_rows(run_nms(c), {0, 0, 0, 0, 0, 1});
}

// flipped_coordinates: kBoxes with corners swapped in some boxes → the same 3, 0, 5.
TEST_CASE("NonMaxSuppression: ONNX flipped_coordinates") {
  NmsCase c = onnx_case(3);
  c.boxes = {1, 1,  0, 0,  0, 0.1f,  1, 1.1f,  0, 0.9f, 1, -0.1f,
             0, 10, 1, 11, 1, 10.1f, 0, 11.1f, 1, 101,  0, 100};
  check_rows(run_nms(c), {0, 0, 3, 0, 0, 0, 0, 0, 5});
}

// identical_boxes: ten equal boxes, all 0.9 → only box 0 (ties: lower index; the rest IoU 1).
// single_box: one box → [[0,0,0]].
TEST_CASE("NonMaxSuppression: ONNX identical_boxes and single_box") {
  std::vector<float> boxes;
  for (int i = 0; i < 10; ++i) boxes.insert(boxes.end(), {0, 0, 1, 1});
  check_rows(run_nms({Shape{1, 10, 4}, boxes, Shape{1, 1, 10}, std::vector<float>(10, 0.9f), 3,
                      0.5f, 0.0f}),
             {0, 0, 0});
  check_rows(run_nms({Shape{1, 1, 4}, {0, 0, 1, 1}, Shape{1, 1, 1}, {0.9f}, 3, 0.5f, 0.0f}),
             {0, 0, 0});
}

// two_batches: the same boxes and scores twice, max 2 → batch 0 then batch 1, 3 and 0 each.
// two_classes: one batch, two classes with equal scores → class 0 then class 1, 3 and 0 each.
TEST_CASE("NonMaxSuppression: ONNX two_batches and two_classes") {
  std::vector<float> boxes2 = kBoxes;
  boxes2.insert(boxes2.end(), kBoxes.begin(), kBoxes.end());
  std::vector<float> scores2 = kScores;
  scores2.insert(scores2.end(), kScores.begin(), kScores.end());
  check_rows(run_nms({Shape{2, 6, 4}, boxes2, Shape{2, 1, 6}, scores2, 2, 0.5f, 0.0f}),
             {0, 0, 3, 0, 0, 0, 1, 0, 3, 1, 0, 0});
  check_rows(run_nms({Shape{1, 6, 4}, kBoxes, Shape{1, 2, 6}, scores2, 2, 0.5f, 0.0f}),
             {0, 0, 3, 0, 0, 0, 0, 1, 3, 0, 1, 0});
}

// score > threshold is strict: the best score is 0.95, so threshold 0.95 leaves no candidate
// → [0, 3] (a >= test would select box 3).
TEST_CASE("NonMaxSuppression: no box above the score threshold") {
  NmsCase c = onnx_case(3, 0.95f);
  check_rows(run_nms(c), {});
  c.score_threshold = 0.94f;
  check_rows(run_nms(c), {0, 0, 3});
}

// max_output_boxes_per_class 0, -1 (clamped to 0, as ONNX Runtime) or absent: no boxes, even
// with room planned for all six.
TEST_CASE("NonMaxSuppression: max_output_boxes_per_class 0, negative or absent") {
  for (std::optional<int64_t> max_boxes :
       {std::optional<int64_t>(0), std::optional<int64_t>(-1), std::optional<int64_t>()}) {
    NmsCase c = onnx_case(0);
    c.max_boxes = max_boxes;
    c.bound_rows = 6;
    check_rows(run_nms(c), {});
  }
}

// Corners in any order: box 1 [1,1,0,0.05] is y 0..1, x 0.05..1 (IoU 0.95 with box 0 →
// dropped); box 2 [5,5,4,4] is y 4..5, x 4..5 (kept); box 3 [4,4.2,5,5.2] overlaps it with IoU
// 0.8 / 1.2 = 0.67 (dropped). Without min/max box 1 and 3 would survive. → 0, 2.
TEST_CASE("NonMaxSuppression: flipped corners are normalized") {
  check_rows(run_nms({Shape{1, 4, 4},
                      {0, 0, 1, 1, 1, 1, 0, 0.05f, 5, 5, 4, 4, 4, 4.2f, 5, 5.2f},
                      Shape{1, 1, 4},
                      {0.9f, 0.8f, 0.7f, 0.6f},
                      4,
                      0.5f,
                      std::nullopt}),
             {0, 0, 0, 0, 0, 2});
}

// iou_threshold absent (0) and score_threshold absent (no filter): box 1 [0,0.99,1,2] overlaps
// box 0 by 0.01 (IoU > 0 → dropped); box 2 [0,1,1,2] only touches box 0 (IoU 0 → kept); box 3
// scores -0.5 and is kept since nothing filters scores. → 0, 2, 3.
TEST_CASE("NonMaxSuppression: thresholds absent") {
  check_rows(run_nms({Shape{1, 4, 4},
                      {0, 0, 1, 1, 0, 0.99f, 1, 2, 0, 1, 1, 2, 5, 5, 6, 6},
                      Shape{1, 1, 4},
                      {0.9f, 0.8f, 0.7f, -0.5f},
                      4,
                      std::nullopt,
                      std::nullopt}),
             {0, 0, 0, 0, 0, 2, 0, 0, 3});
}

// Four disjoint boxes scoring [0.5, 0.9, 0.5, NaN]: 1, then the tied 0 before 2, NaN last;
// with score_threshold 0 the NaN never passes → 1, 0, 2.
TEST_CASE("NonMaxSuppression: equal scores by lower index, NaN last") {
  NmsCase c{Shape{1, 4, 4},
            {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7},
            Shape{1, 1, 4},
            {0.5f, 0.9f, 0.5f, std::numeric_limits<float>::quiet_NaN()},
            4,
            0.5f,
            std::nullopt};
  check_rows(run_nms(c), {0, 0, 1, 0, 0, 0, 0, 0, 2, 0, 0, 3});
  c.score_threshold = 0.0f;
  check_rows(run_nms(c), {0, 0, 1, 0, 0, 0, 0, 0, 2});
}

// Scalars as graph inputs (shape [1] and rank 0) with the bound planned for an unknown max
// (B*C*N = 12 rows), and as constants: two_classes with max 2 → four rows every time.
TEST_CASE("NonMaxSuppression: runtime and constant scalar inputs") {
  std::vector<float> scores2 = kScores;
  scores2.insert(scores2.end(), kScores.begin(), kScores.end());
  const std::vector<int64_t> expected = {0, 0, 3, 0, 0, 0, 0, 1, 3, 0, 1, 0};
  NmsCase c{Shape{1, 6, 4}, kBoxes, Shape{1, 2, 6}, scores2, 2, 0.5f, 0.0f};
  c.bound_rows = 12;
  check_rows(run_nms(c), expected);
  c.scalar_shape = Shape{};
  check_rows(run_nms(c), expected);
  c.constant_scalars = true;
  c.bound_rows = -1;
  check_rows(run_nms(c), expected);
  c.max_boxes = 1;  // a runtime value the same bound holds: 3 in each class
  c.constant_scalars = false;
  c.bound_rows = 12;
  check_rows(run_nms(c), {0, 0, 3, 0, 1, 3});
}

// suppress_by_IOU selects 3 boxes; a bound of 2 rows is an error naming the node, the output,
// the bound and the count (not a write past the view).
TEST_CASE("NonMaxSuppression: a bound too small is an error") {
  NmsCase c = onnx_case(3);
  c.bound_rows = 2;
  const auto result = run_nms(c);
  REQUIRE_FALSE(result.has_value());
  CHECK(result.status().code() == StatusCode::kOutOfRange);
  const std::string message = result.status().message();
  CHECK(message.find("test_node") != std::string::npos);
  CHECK(message.find("output 'output_0' holds at most 2") != std::string::npos);
  CHECK(message.find("selected 3") != std::string::npos);
}

// iou_threshold 1.5 is rejected at run time (ONNX Runtime: "must be in range [0, 1]").
TEST_CASE("NonMaxSuppression: iou_threshold outside [0, 1]") {
  NmsCase c = onnx_case(3);
  c.iou_threshold = 1.5f;
  const auto result = run_nms(c);
  REQUIRE_FALSE(result.has_value());
  CHECK(result.status().message().find("input 3 (iou_threshold) is 1.5") != std::string::npos);
}

// Malformed shapes fail at prepare: boxes [1,6,3] (last dim not 4); scores [1,1,5] for 6 boxes.
TEST_CASE("NonMaxSuppression: malformed shapes") {
  NmsCase c = onnx_case(3);
  c.boxes_shape = Shape{1, 6, 3};
  c.boxes.resize(18);
  auto result = run_nms(c);
  REQUIRE_FALSE(result.has_value());
  CHECK(result.status().code() == StatusCode::kInvalidModel);
  CHECK(result.status().message().find("input 0 (boxes) 'input_0'") != std::string::npos);
  CHECK(result.status().message().find("got [1,6,3]") != std::string::npos);
  c = onnx_case(3);
  c.scores_shape = Shape{1, 1, 5};
  c.scores.resize(5);
  result = run_nms(c);
  REQUIRE_FALSE(result.has_value());
  CHECK(result.status().code() == StatusCode::kInvalidModel);
  CHECK(result.status().message().find("[1,1,5] disagree") != std::string::npos);
}

namespace {

// IoU in double from [y1, x1, y2, x2] corners in any order; no overlap → 0.
double reference_iou(const float* a, const float* b) {
  const auto extent = [](float p, float q, float r, float s) {
    return std::max(0.0, std::min<double>(std::max(p, q), std::max(r, s)) -
                             std::max<double>(std::min(p, q), std::min(r, s)));
  };
  const double area_a = extent(a[0], a[2], a[0], a[2]) * extent(a[1], a[3], a[1], a[3]);
  const double area_b = extent(b[0], b[2], b[0], b[2]) * extent(b[1], b[3], b[1], b[3]);
  const double intersection = extent(a[0], a[2], b[0], b[2]) * extent(a[1], a[3], b[1], b[3]);
  const double union_area = area_a + area_b - intersection;
  return union_area > 0 ? intersection / union_area : 0.0;
}

}  // namespace

// 20 random sets (2 batches, 3 classes, 40 boxes with corners in any order, scores in [-1, 1),
// score > 0, IoU 0.3, max 8). Per (batch, class): rows in order; selected scores pass the
// threshold and do not increase; no two selected boxes overlap by IoU > 0.3; every candidate
// left out is covered by a better-ranked selected box with IoU > 0.3, or ranks after the last
// of a full class.
TEST_CASE("NonMaxSuppression: randomized invariants") {
  const int64_t batches = 2, classes = 3, boxes = 40, max_boxes = 8;
  const float iou = 0.3f, eps = 1e-4f;
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::vector<float> box_data = random_values(batches * boxes * 4, seed);
    for (float& v : box_data) v = 3.0f + 3.0f * v;
    const std::vector<float> scores = random_values(batches * classes * boxes, seed + 100);
    const auto result = run_nms({Shape{batches, boxes, 4}, box_data, Shape{batches, classes, boxes},
                                 scores, max_boxes, iou, 0.0f});
    REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
    const std::vector<int64_t> rows = values_of<int64_t>(*result);
    size_t r = 0;
    for (int64_t b = 0; b < batches; ++b) {
      const float* batch_boxes = box_data.data() + b * boxes * 4;
      for (int64_t c = 0; c < classes; ++c) {
        const float* s = scores.data() + (b * classes + c) * boxes;
        const auto before = [s](int64_t x, int64_t y) {
          return s[x] > s[y] || (s[x] == s[y] && x < y);
        };
        std::vector<int64_t> kept;
        for (; r < rows.size() && rows[r] == b && rows[r + 1] == c; r += 3)
          kept.push_back(rows[r + 2]);
        REQUIRE(static_cast<int64_t>(kept.size()) <= max_boxes);
        for (size_t i = 0; i < kept.size(); ++i) {
          CHECK(s[kept[i]] > 0.0f);
          if (i > 0) CHECK(before(kept[i - 1], kept[i]));
          for (size_t j = 0; j < i; ++j) {
            CHECK(reference_iou(batch_boxes + kept[i] * 4, batch_boxes + kept[j] * 4) <= iou + eps);
          }
        }
        for (int64_t u = 0; u < boxes; ++u) {
          if (!(s[u] > 0.0f) || std::find(kept.begin(), kept.end(), u) != kept.end()) continue;
          bool covered = static_cast<int64_t>(kept.size()) == max_boxes && before(kept.back(), u);
          for (int64_t k : kept) {
            covered = covered || (before(k, u) && reference_iou(batch_boxes + k * 4,
                                                                batch_boxes + u * 4) > iou - eps);
          }
          CHECK(covered);
        }
      }
    }
    CHECK(r == rows.size());
  }
}
