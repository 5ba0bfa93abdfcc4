#include "runtime/cuda/kernels/window.h"

#include <string>
#include <vector>

namespace onepool::cuda {

int64_t derived_pad_begin(int64_t total, const std::string& auto_pad, bool transposed) {
  // Conv: only SAME_* derive pads; SAME_LOWER puts the odd cell first. ConvTranspose (ONNX
  // spec): SAME_UPPER puts total / 2 first, NOTSET (output_shape) and SAME_LOWER the rest.
  const bool half_first = transposed ? auto_pad == "SAME_UPPER" : auto_pad != "SAME_LOWER";
  return half_first ? total / 2 : total - total / 2;
}

Expected<Window2d> read_window(const CudaNodeContext& node, const Shape* kernel, bool transposed) {
  const Shape& in = node.input(0).shape;
  const Shape& out = node.output(0).shape;
  const int spatial = in.rank() - 2;
  if (spatial < 1 || spatial > 2 || out.rank() != in.rank()) {
    return node.unsupported(str_cat(spatial, " spatial dims (1 or 2 supported)"));
  }
  const AttributeMap& a = node.node().attributes;
  std::vector<int64_t> k = a.get_ints("kernel_shape");
  if (k.empty() && kernel != nullptr) k.assign(kernel->begin() + 2, kernel->end());
  const std::vector<int64_t> ones(static_cast<size_t>(spatial), 1);
  const std::vector<int64_t> s = a.get_ints("strides", ones);
  const std::vector<int64_t> d = a.get_ints("dilations", ones);
  std::vector<int64_t> pads = a.get_ints("pads", std::vector<int64_t>(2 * spatial, 0));
  std::vector<int64_t> out_pad = a.get_ints("output_padding", std::vector<int64_t>(spatial, 0));
  const auto n = static_cast<size_t>(spatial);
  if (k.size() != n || s.size() != n || d.size() != n || pads.size() != 2 * n ||
      out_pad.size() != n) {
    return node.error(StatusCode::kInvalidModel,
                      "kernel_shape / strides / dilations / pads do "
                      "not match ",
                      spatial, " spatial dims");
  }
  // Step 1. auto_pad (and ConvTranspose's output_shape, which overrides `pads`) decide the pads
  // from the output size.
  const std::string auto_pad = a.get_string("auto_pad", "NOTSET");
  const bool derive =
      auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER" || (transposed && a.has("output_shape"));
  for (size_t i = 0; i < n && (derive || auto_pad == "VALID"); ++i) {
    const int64_t i_in = in[static_cast<int>(i) + 2];
    const int64_t i_out = out[static_cast<int>(i) + 2];
    const int64_t span = (k[i] - 1) * d[i] + 1;
    int64_t total = transposed ? s[i] * (i_in - 1) + out_pad[i] + span - i_out
                               : (i_out - 1) * s[i] + span - i_in;
    // A larger output than the input reaches (total < 0) keeps only the bias at its end.
    if (total < 0 || auto_pad == "VALID") total = 0;
    pads[i] = derived_pad_begin(total, auto_pad, transposed);
    pads[i + n] = total - pads[i];
  }
  // Step 2. Map to 2-D: a 1-D window is 1 x W.
  Window2d w;
  const size_t x = n - 1;  // the last spatial axis is W
  w.in_w = in[in.rank() - 1];
  w.out_w = out[out.rank() - 1];
  w.k_w = static_cast<int>(k[x]);
  w.s_w = static_cast<int>(s[x]);
  w.d_w = static_cast<int>(d[x]);
  w.p_w = static_cast<int>(pads[x]);
  w.end_w = static_cast<int>(pads[x + n]);
  if (spatial == 2) {
    w.in_h = in[2];
    w.out_h = out[2];
    w.k_h = static_cast<int>(k[0]);
    w.s_h = static_cast<int>(s[0]);
    w.d_h = static_cast<int>(d[0]);
    w.p_h = static_cast<int>(pads[0]);
    w.end_h = static_cast<int>(pads[n]);
  }
  if (w.k_h < 1 || w.k_w < 1 || w.s_h < 1 || w.s_w < 1 || w.d_h < 1 || w.d_w < 1) {
    return node.error(StatusCode::kInvalidModel, "kernel, strides and dilations must be >= 1");
  }
  return w;
}

}  // namespace onepool::cuda
