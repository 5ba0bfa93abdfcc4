// (op type) → kernel factory for the CPU backend (runtime/kernel_table.h: built per Session, no
// global state; one register_<family>_kernels per op family file).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "runtime/cpu/kernel.h"
#include "runtime/kernel_table.h"

namespace onepool::cpu {

class KernelRegistry : public KernelTable<KernelFactory> {
 public:
  /// A registry holding every CPU kernel OnePool has.
  static KernelRegistry with_all_kernels();
};

// One registration function per op family (runtime/cpu/kernels/<family>.cc).
void register_elementwise_kernels(KernelRegistry& registry);
void register_conv_pool_kernels(KernelRegistry& registry);
void register_normalization_kernels(KernelRegistry& registry);
void register_matmul_kernels(KernelRegistry& registry);
void register_reduce_kernels(KernelRegistry& registry);
void register_shape_kernels(KernelRegistry& registry);
void register_tensor_kernels(KernelRegistry& registry);
void register_recurrent_kernels(KernelRegistry& registry);        // recurrent.cc: LSTM, GRU, RNN
void register_cumsum_trilu_kernels(KernelRegistry& registry);     // cumsum_trilu.cc
void register_scatter_gather_kernels(KernelRegistry& registry);   // scatter_gather_nd.cc
void register_loss_kernels(KernelRegistry& registry);             // loss.cc
void register_onehot_kernel(KernelRegistry& registry);            // onehot.cc
void register_lrn_mvn_kernels(KernelRegistry& registry);          // norm_lrn.cc
void register_reverse_sequence_kernel(KernelRegistry& registry);  // reverse_sequence.cc
void register_det_kernel(KernelRegistry& registry);               // det.cc
void register_einsum_kernel(KernelRegistry& registry);            // einsum.cc
void register_grid_sample_kernel(KernelRegistry& registry);       // grid_sample.cc
void register_signal_window_kernels(KernelRegistry& registry);    // signal_window.cc
void register_signal_dft_kernels(KernelRegistry& registry);       // signal_dft.cc
void register_max_unpool_kernel(KernelRegistry& registry);
void register_control_flow_kernels(KernelRegistry& registry);  // control_if.cc: If
void register_loop_kernel(KernelRegistry& registry);           // control_loop.cc: Loop
void register_scan_kernel(
    KernelRegistry& registry);  // control_scan.cc: Scan        // max_unpool.cc
void register_roi_align_kernel(KernelRegistry& registry);         // roi_align.cc
void register_tfidf_vectorizer_kernel(KernelRegistry& registry);  // tfidf_vectorizer.cc
void register_quantized_kernels(KernelRegistry& registry);        // quantize.cc: Q/DQ, integer ops
void register_topk_kernel(KernelRegistry& registry);              // topk.cc
void register_select_kernels(KernelRegistry& registry);           // select.cc: NonZero, Compress
void register_unique_kernel(KernelRegistry& registry);            // unique.cc
void register_non_max_suppression_kernel(KernelRegistry& registry);  // non_max_suppression.cc

}  // namespace onepool::cpu
