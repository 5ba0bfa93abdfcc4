#include "runtime/cpu/kernel_registry.h"

namespace onepool::cpu {

KernelRegistry KernelRegistry::with_all_kernels() {
  KernelRegistry registry;
  register_elementwise_kernels(registry);
  register_conv_pool_kernels(registry);
  register_normalization_kernels(registry);
  register_matmul_kernels(registry);
  register_reduce_kernels(registry);
  register_shape_kernels(registry);
  register_tensor_kernels(registry);
  register_recurrent_kernels(registry);
  register_cumsum_trilu_kernels(registry);
  register_scatter_gather_kernels(registry);
  register_loss_kernels(registry);
  register_onehot_kernel(registry);
  register_lrn_mvn_kernels(registry);
  register_reverse_sequence_kernel(registry);
  register_det_kernel(registry);
  register_einsum_kernel(registry);
  register_grid_sample_kernel(registry);
  register_signal_window_kernels(registry);
  register_signal_dft_kernels(registry);
  register_max_unpool_kernel(registry);
  register_control_flow_kernels(registry);
  register_loop_kernel(registry);
  register_scan_kernel(registry);
  register_roi_align_kernel(registry);
  register_tfidf_vectorizer_kernel(registry);
  register_quantized_kernels(registry);
  register_topk_kernel(registry);
  register_select_kernels(registry);
  register_unique_kernel(registry);
  register_non_max_suppression_kernel(registry);
  return registry;
}

}  // namespace onepool::cpu
