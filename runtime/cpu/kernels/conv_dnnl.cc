// The oneDNN Conv kernel (see conv_dnnl.h).
#include "runtime/cpu/kernels/conv_dnnl.h"

#if ONEPOOL_HAVE_DNNL

#include <omp.h>

#include <cstdlib>
#include <dnnl.hpp>
#include <memory>
#include <string>
#include <vector>

#include "runtime/cpu/kernels/conv_kernels.h"

namespace onepool::cpu::nn {
namespace {

using Tag = dnnl::memory::format_tag;
using DataType = dnnl::memory::data_type;

// Workspace parts start on cache lines (oneDNN's own alignment for its buffers).
constexpr size_t kPartAlignment = 64;

size_t aligned_size(size_t bytes) {
  return (bytes + kPartAlignment - 1) / kPartAlignment * kPartAlignment;
}

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

// Where each part lives inside the node's workspace.
struct WorkspaceLayout {
  size_t scratchpad_offset = 0;
  size_t src_offset = 0;  // blocked X, when the primitive wants X reordered
  size_t dst_offset = 0;  // blocked Y, when the primitive writes Y blocked
  size_t bytes = 0;
};

// The primitive and its memory objects, created once. Memory objects hold no data of their own
// (DNNL_MEMORY_NONE); run() points them at the pool.
struct DnnlConv {
  dnnl::engine engine;
  dnnl::stream stream;
  dnnl::convolution_forward conv;
  std::optional<dnnl::reorder> src_reorder;  // plain X -> blocked X
  std::optional<dnnl::reorder> dst_reorder;  // blocked Y -> plain Y
  dnnl::memory src_plain, src_blocked, dst_plain, dst_blocked, weights, bias, scratchpad;
  std::unique_ptr<void, FreeDeleter> weights_data;  // W in the primitive's layout
  WorkspaceLayout layout;
  bool has_bias = false;
};

class DnnlConvKernel final : public Kernel {
 public:
  DnnlConvKernel(std::unique_ptr<DnnlConv> dnnl, const DnnlConvCase& conv)
      : dnnl_(std::move(dnnl)), conv_(conv) {}

  Status run(const RunContext& context) override {
    DnnlConv& d = *dnnl_;
    // OpenMP's thread count is per calling thread: set it to the Session's every run (one
    // store once OpenMP has started).
    omp_set_num_threads(context.threads->thread_count());
    std::byte* workspace = context.workspace;
    void* x = const_cast<void*>(static_cast<const void*>(context.inputs[0].data));
    void* y = context.outputs[0].data;
    void* src = d.src_reorder ? workspace + d.layout.src_offset : x;
    void* dst = d.dst_reorder ? workspace + d.layout.dst_offset : y;
    ONEPOOL_RETURN_IF_ERROR(bind(d.src_plain, x));
    ONEPOOL_RETURN_IF_ERROR(bind(d.src_blocked, src));
    ONEPOOL_RETURN_IF_ERROR(bind(d.dst_plain, y));
    ONEPOOL_RETURN_IF_ERROR(bind(d.dst_blocked, dst));
    ONEPOOL_RETURN_IF_ERROR(bind(d.scratchpad, workspace + d.layout.scratchpad_offset));
    if (d.has_bias) {
      ONEPOOL_RETURN_IF_ERROR(
          bind(d.bias, const_cast<void*>(static_cast<const void*>(context.inputs[2].data))));
    }
    if (d.src_reorder) {
      const dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, d.src_plain.get()},
                                      {DNNL_ARG_TO, d.src_blocked.get()}};
      ONEPOOL_RETURN_IF_ERROR(execute(d.src_reorder->get(), args, 2, "reorder of X"));
    }
    const dnnl_exec_arg_t conv_args[] = {{DNNL_ARG_SRC, d.src_blocked.get()},
                                         {DNNL_ARG_WEIGHTS, d.weights.get()},
                                         {DNNL_ARG_DST, d.dst_blocked.get()},
                                         {DNNL_ARG_SCRATCHPAD, d.scratchpad.get()},
                                         {DNNL_ARG_BIAS, d.bias.get()}};
    ONEPOOL_RETURN_IF_ERROR(execute(d.conv.get(), conv_args, d.has_bias ? 5 : 4, "convolution"));
    if (d.dst_reorder) {
      const dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, d.dst_blocked.get()},
                                      {DNNL_ARG_TO, d.dst_plain.get()}};
      ONEPOOL_RETURN_IF_ERROR(execute(d.dst_reorder->get(), args, 2, "reorder of Y"));
    }
    add_bias_activation(context.outputs[0].as<float>(), nullptr, conv_.batch, conv_.out_channels,
                        conv_.geometry.output_size(), conv_.activation, *context.threads);
    return Status::ok();
  }

 private:
  static Status bind(const dnnl::memory& memory, void* data) {
    const dnnl_status_t status = dnnl_memory_set_data_handle(memory.get(), data);
    if (status == dnnl_success) return Status::ok();
    return make_status(StatusCode::kInternal, "oneDNN dnnl_memory_set_data_handle failed (status ",
                       static_cast<int>(status), ")");
  }

  Status execute(dnnl_primitive_t primitive, const dnnl_exec_arg_t* args, int count,
                 const char* what) const {
    const dnnl_status_t status =
        dnnl_primitive_execute(primitive, dnnl_->stream.get(), count, args);
    if (status == dnnl_success) return Status::ok();
    return make_status(StatusCode::kInternal, "oneDNN ", what, " failed (status ",
                       static_cast<int>(status), ")");
  }

  std::unique_ptr<DnnlConv> dnnl_;
  DnnlConvCase conv_;
};

// oneDNN 2-D dims: a 1-D conv is a 2-D one with H = 1 (the geometry's normalized axes 1, 2).
dnnl::memory::dims spatial(const SpatialDims& dims) { return {dims[1], dims[2]}; }

dnnl::memory::dims minus_one(const SpatialDims& dims) { return {dims[1] - 1, dims[2] - 1}; }

// Step 1 of make_dnnl_conv_kernel: the primitive with every layout left to oneDNN.
dnnl::convolution_forward::primitive_desc make_primitive_desc(const DnnlConvCase& c, bool has_bias,
                                                              const dnnl::engine& engine) {
  const WindowGeometry& g = c.geometry;
  const dnnl::memory::dims src_dims{c.batch, c.in_channels, g.input[1], g.input[2]};
  const dnnl::memory::dims dst_dims{c.batch, c.out_channels, g.output[1], g.output[2]};
  const dnnl::memory::dims weight_dims =
      c.group == 1 ? dnnl::memory::dims{c.out_channels, c.in_channels, g.kernel[1], g.kernel[2]}
                   : dnnl::memory::dims{c.group, c.out_channels / c.group, c.in_channels / c.group,
                                        g.kernel[1], g.kernel[2]};
  const dnnl::memory::desc src(src_dims, DataType::f32, Tag::any);
  const dnnl::memory::desc dst(dst_dims, DataType::f32, Tag::any);
  const dnnl::memory::desc weights(weight_dims, DataType::f32, Tag::any);
  const dnnl::memory::desc bias({c.out_channels}, DataType::f32, Tag::x);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const auto kind = dnnl::prop_kind::forward_inference;
  const auto algorithm = dnnl::algorithm::convolution_direct;
  if (has_bias) {
    const dnnl::convolution_forward::desc desc(kind, algorithm, src, weights, bias, dst,
                                               spatial(g.stride), minus_one(g.dilation),
                                               spatial(g.pad_begin), spatial(g.pad_end));
    return dnnl::convolution_forward::primitive_desc(desc, attr, engine);
  }
  const dnnl::convolution_forward::desc desc(kind, algorithm, src, weights, dst, spatial(g.stride),
                                             minus_one(g.dilation), spatial(g.pad_begin),
                                             spatial(g.pad_end));
  return dnnl::convolution_forward::primitive_desc(desc, attr, engine);
}

// Step 2: W reordered once from the model's [M, C/group, kh, kw] into the primitive's layout.
void reorder_weights(const DnnlConvCase& c, const HostTensor& w,
                     const dnnl::convolution_forward::primitive_desc& pd, DnnlConv& d) {
  const WindowGeometry& g = c.geometry;
  const dnnl::memory::desc plain =
      c.group == 1 ? dnnl::memory::desc({c.out_channels, c.in_channels, g.kernel[1], g.kernel[2]},
                                        DataType::f32, Tag::oihw)
                   : dnnl::memory::desc({c.group, c.out_channels / c.group, c.in_channels / c.group,
                                         g.kernel[1], g.kernel[2]},
                                        DataType::f32, Tag::goihw);
  const size_t bytes = aligned_size(std::max<size_t>(1, pd.weights_desc().get_size()));
  d.weights_data.reset(std::aligned_alloc(kPartAlignment, bytes));
  if (!d.weights_data) throw std::bad_alloc();
  d.weights = dnnl::memory(pd.weights_desc(), d.engine, d.weights_data.get());
  dnnl::memory source(plain, d.engine, const_cast<std::byte*>(w.data.data()));
  dnnl::reorder(source, d.weights).execute(d.stream, source, d.weights);
  d.stream.wait();
}

// Step 3: memory objects without data, the reorders of X and Y, and the workspace layout.
void make_memories(const DnnlConvCase& c, const dnnl::convolution_forward::primitive_desc& pd,
                   DnnlConv& d) {
  const WindowGeometry& g = c.geometry;
  const dnnl::memory::desc src_plain({c.batch, c.in_channels, g.input[1], g.input[2]},
                                     DataType::f32, Tag::nchw);
  const dnnl::memory::desc dst_plain({c.batch, c.out_channels, g.output[1], g.output[2]},
                                     DataType::f32, Tag::nchw);
  d.src_plain = dnnl::memory(src_plain, d.engine, DNNL_MEMORY_NONE);
  d.dst_plain = dnnl::memory(dst_plain, d.engine, DNNL_MEMORY_NONE);
  d.src_blocked = dnnl::memory(pd.src_desc(), d.engine, DNNL_MEMORY_NONE);
  d.dst_blocked = dnnl::memory(pd.dst_desc(), d.engine, DNNL_MEMORY_NONE);
  d.scratchpad = dnnl::memory(pd.scratchpad_desc(), d.engine, DNNL_MEMORY_NONE);
  d.bias = dnnl::memory(dnnl::memory::desc({c.out_channels}, DataType::f32, Tag::x), d.engine,
                        DNNL_MEMORY_NONE);
  WorkspaceLayout& layout = d.layout;
  layout.bytes = aligned_size(pd.scratchpad_desc().get_size());
  if (pd.src_desc() != src_plain) {
    d.src_reorder =
        dnnl::reorder(dnnl::reorder::primitive_desc(d.engine, src_plain, d.engine, pd.src_desc()));
    layout.src_offset = layout.bytes;
    layout.bytes += aligned_size(pd.src_desc().get_size());
  }
  if (pd.dst_desc() != dst_plain) {
    d.dst_reorder =
        dnnl::reorder(dnnl::reorder::primitive_desc(d.engine, pd.dst_desc(), d.engine, dst_plain));
    layout.dst_offset = layout.bytes;
    layout.bytes += aligned_size(pd.dst_desc().get_size());
  }
}

}  // namespace

bool dnnl_available() { return true; }

void set_dnnl_threads(int threads) { omp_set_num_threads(threads); }

std::optional<PreparedKernel> make_dnnl_conv_kernel(const NodeContext& node,
                                                    const DnnlConvCase& conv) {
  const HostTensor* w = node.constant_input(1);
  if (conv.geometry.spatial_rank > 2 || w == nullptr) return std::nullopt;
  // Single-threaded Sessions only. With more threads, libgomp's workers spin-wait (up to
  // milliseconds) after every primitive and take the cores from the Session's own ThreadPool
  // and from other processes: on 2 busy cores BlazeFace ran 2 -> 25 ms and ocr_cls 1.2 -> 25 ms
  // at 2 threads (OMP_WAIT_POLICY=passive brings them back to par, but an environment setting
  // must not decide the speed). One owner of the threads comes first.
  if (omp_get_max_threads() > 1) return std::nullopt;
  // A node oneDNN cannot take (or any oneDNN error) keeps the caller's own path.
  try {
    auto d = std::make_unique<DnnlConv>();
    d->engine = dnnl::engine(dnnl::engine::kind::cpu, 0);
    d->stream = dnnl::stream(d->engine);
    d->has_bias = node.has_input(2);
    const auto pd = make_primitive_desc(conv, d->has_bias, d->engine);
    // oneDNN's fallbacks (its own im2col + GEMM, or the reference loops) are no faster than
    // ours: take only its direct kernels.
    const std::string impl = pd.impl_info_str();
    if (impl.find("gemm:") == 0 || impl.find("ref") != std::string::npos) return std::nullopt;
    d->conv = dnnl::convolution_forward(pd);
    reorder_weights(conv, *w, pd, *d);
    make_memories(conv, pd, *d);
    PreparedKernel prepared;
    prepared.workspace_bytes = d->layout.bytes;
    prepared.implementation = "onednn " + impl;
    prepared.kernel = std::make_unique<DnnlConvKernel>(std::move(d), conv);
    return prepared;
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

}  // namespace onepool::cpu::nn

#else  // !ONEPOOL_HAVE_DNNL

namespace onepool::cpu::nn {

bool dnnl_available() { return false; }

void set_dnnl_threads(int) {}

std::optional<PreparedKernel> make_dnnl_conv_kernel(const NodeContext&, const DnnlConvCase&) {
  return std::nullopt;
}

}  // namespace onepool::cpu::nn

#endif
