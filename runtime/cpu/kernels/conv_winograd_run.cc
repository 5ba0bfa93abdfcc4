// One image of a Winograd convolution (conv_winograd.h): dilated convolutions phase by phase,
// and the direct computation for inputs the transforms must not see.
//
// A 3x3 convolution of dilation d reads, for output row oy, input rows oy - pad + d k. The
// output rows a, a + d, a + 2d, ... (phase a) therefore read only the input rows congruent to
// a - pad modulo d: each phase is a convolution of dilation 1 between two strided sub-grids.
// The phase's input is gathered into the workspace, convolved as any other, and its output
// scattered into Y. Each output is the same float operations as in an undilated convolution of
// its sub-grid: the phases change where values sit, never how they are summed.
#include <algorithm>
#include <atomic>

#include "runtime/cpu/kernels/conv_winograd.h"
#include "runtime/cpu/kernels/conv_winograd_transforms.h"

namespace onepool::cpu::nn {
namespace {

constexpr int64_t kAlignment = 64;
constexpr auto kFloat = static_cast<int64_t>(sizeof(float));

int64_t aligned(int64_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Largest integer q with q * b <= a (b > 0).
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// One phase along one axis: its output positions first + k * dilation, the input positions
// offset + k * dilation they read through the sub-grid, and the sub-grid's geometry.
struct AxisPhase {
  int64_t output_first = 0;
  int64_t input_first = 0;
  int64_t output_size = 0;
  int64_t input_size = 0;
  int64_t pad = 0;
};

AxisPhase axis_phase(const WindowGeometry& g, int axis, int64_t phase) {
  const int64_t dilation = g.dilation[axis];
  const int64_t shifted = phase - g.pad_begin[axis];
  AxisPhase result;
  result.output_first = phase;
  result.input_first = shifted - floor_div(shifted, dilation) * dilation;
  result.output_size = phase < g.output[axis] ? ceil_div(g.output[axis] - phase, dilation) : 0;
  result.input_size = result.input_first < g.input[axis]
                          ? ceil_div(g.input[axis] - result.input_first, dilation)
                          : 0;
  result.pad = -floor_div(shifted, dilation);
  return result;
}

WindowGeometry phase_geometry(const WindowGeometry& g, const AxisPhase& rows,
                              const AxisPhase& columns) {
  WindowGeometry phase = g;
  phase.dilation = {1, 1, 1};
  phase.input = {1, rows.input_size, columns.input_size};
  phase.output = {1, rows.output_size, columns.output_size};
  phase.pad_begin = {0, rows.pad, columns.pad};
  return phase;
}

// sub[c][i][j] = plane_c[row_first + i * row_step][column_first + j * column_step].
struct Strided {
  int64_t row_first, row_step, column_first, column_step;
};

void gather(const float* x, const WindowGeometry& g, const WindowGeometry& phase, const Strided& at,
            int64_t channels, float* sub) {
  for (int64_t c = 0; c < channels; ++c) {
    const float* plane = x + c * g.input_size();
    float* dst = sub + c * phase.input_size();
    for (int64_t i = 0; i < phase.input[1]; ++i) {
      const float* row = plane + (at.row_first + i * at.row_step) * g.input[2] + at.column_first;
      for (int64_t j = 0; j < phase.input[2]; ++j) {
        dst[i * phase.input[2] + j] = row[j * at.column_step];
      }
    }
  }
}

void scatter(const float* sub, const WindowGeometry& g, const WindowGeometry& phase,
             const Strided& at, int64_t channels, float* y) {
  for (int64_t c = 0; c < channels; ++c) {
    const float* src = sub + c * phase.output_size();
    float* plane = y + c * g.output_size();
    for (int64_t i = 0; i < phase.output[1]; ++i) {
      float* row = plane + (at.row_first + i * at.row_step) * g.output[2] + at.column_first;
      for (int64_t j = 0; j < phase.output[2]; ++j) {
        row[j * at.column_step] = src[i * phase.output[2] + j];
      }
    }
  }
}

// Phase (a, b) of a dilated convolution on the calling thread: its input gathered into
// `phase_space`, convolved in `part`, its output scattered into Y. False when it read a value
// the transforms must not see.
bool run_phase(const WinogradImage& image, int64_t a, int64_t b, std::byte* part,
               std::byte* phase_space) {
  const WindowGeometry& g = image.g;
  const WinogradPlan& plan = image.plan;
  const AxisPhase rows = axis_phase(g, 1, a);
  const AxisPhase columns = axis_phase(g, 2, b);
  const WindowGeometry phase = phase_geometry(g, rows, columns);
  if (phase.output_size() == 0) return true;
  auto* sub_x = reinterpret_cast<float*>(phase_space);
  auto* sub_y = reinterpret_cast<float*>(phase_space +
                                         aligned(plan.in_channels * phase.input_size() * kFloat));
  gather(image.x, g, phase,
         Strided{rows.input_first, g.dilation[1], columns.input_first, g.dilation[2]},
         plan.in_channels, sub_x);
  const WinogradImage sub{phase, plan, sub_x, image.bias, image.activation, sub_y, nullptr};
  if (!run_winograd_on_one_thread(sub, part)) return false;
  scatter(sub_y, g, phase,
          Strided{rows.output_first, g.dilation[1], columns.output_first, g.dilation[2]},
          plan.out_channels, image.y);
  return true;
}

// Every phase of a dilated convolution, whole phases per thread (each with its own part and
// phase space); false when one read a value the transforms must not see.
bool run_phases(const WinogradImage& image, std::byte* workspace, ThreadPool& threads) {
  const WindowGeometry& g = image.g;
  const WinogradPlan& plan = image.plan;
  const int64_t phases = g.dilation[1] * g.dilation[2];
  const int64_t parts = std::min<int64_t>({plan.parts, threads.thread_count(), phases});
  std::atomic<bool> finite{true};
  threads.parallel_for(parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t part = begin; part < end; ++part) {
      std::byte* part_space = workspace + part * plan.part_bytes;
      std::byte* phase_space = workspace + plan.parts * plan.part_bytes + part * plan.phase_bytes;
      for (int64_t phase = part; phase < phases; phase += parts) {
        if (!run_phase(image, phase / g.dilation[2], phase % g.dilation[2], part_space,
                       phase_space)) {
          finite.store(false);
        }
      }
    }
  });
  return finite.load();
}

// The convolution as ONNX defines it, for inputs the transforms must not see: each output the
// sum over its window in (channel, kh, kw) order, then bias, residual and activation.
void run_direct(const WinogradImage& image, const float* weights, ThreadPool& threads) {
  const WindowGeometry& g = image.g;
  const int64_t in_channels = image.plan.in_channels;
  threads.parallel_for(image.plan.out_channels, 1, [&](int64_t begin, int64_t end) {
    for (int64_t channel = begin; channel < end; ++channel) {
      const float* w = weights + channel * in_channels * 9;
      float* out = image.y + channel * g.output_size();
      for (int64_t oy = 0; oy < g.output[1]; ++oy) {
        for (int64_t ox = 0; ox < g.output[2]; ++ox) {
          float sum = 0.0f;
          for (int64_t c = 0; c < in_channels; ++c) {
            const float* plane = image.x + c * g.input_size();
            for (int64_t kh = 0; kh < 3; ++kh) {
              const int64_t iy = oy - g.pad_begin[1] + kh * g.dilation[1];
              if (iy < 0 || iy >= g.input[1]) continue;
              for (int64_t kw = 0; kw < 3; ++kw) {
                const int64_t ix = ox - g.pad_begin[2] + kw * g.dilation[2];
                if (ix < 0 || ix >= g.input[2]) continue;
                sum += w[(c * 3 + kh) * 3 + kw] * plane[iy * g.input[2] + ix];
              }
            }
          }
          const float bias = image.bias != nullptr ? image.bias[channel] : 0.0f;
          const int64_t at = channel * g.output_size() + oy * g.output[2] + ox;
          float value = sum + bias;
          if (image.residual != nullptr) value = value + image.residual[at];
          out[oy * g.output[2] + ox] = image.activation.apply(value);
        }
      }
    }
  });
}

}  // namespace

int64_t winograd_phase_bytes(const WindowGeometry& g, int64_t in_channels, int64_t out_channels) {
  if (g.dilation[1] == 1 && g.dilation[2] == 1) return 0;
  // Phase 0 along each axis is the largest.
  const int64_t input = ceil_div(g.input[1], g.dilation[1]) * ceil_div(g.input[2], g.dilation[2]);
  const int64_t output =
      ceil_div(g.output[1], g.dilation[1]) * ceil_div(g.output[2], g.dilation[2]);
  return aligned(in_channels * input * kFloat) + aligned(out_channels * output * kFloat);
}

void run_winograd(const WindowGeometry& g, const WinogradPlan& plan, const float* x,
                  const float* weights, const WinogradEpilogue& epilogue, float* y,
                  std::byte* workspace, ThreadPool& threads) {
  const WinogradImage image{g, plan, x, epilogue.bias, epilogue.activation, y, epilogue.residual};
  const bool dilated = g.dilation[1] != 1 || g.dilation[2] != 1;
  const bool finite = dilated ? run_phases(image, workspace, threads)
                              : run_winograd_undilated(image, workspace, threads);
  if (!finite) run_direct(image, weights, threads);
}

}  // namespace onepool::cpu::nn
