// Kernel factories of the CUDA backend, one group per op family, each family registering its
// own (register_<family>_kernels, called by runtime/cuda/cuda_registry.cc). Each prepares one node
// (attributes and constant inputs read, launch parameters precomputed, workspace declared) or
// explains why it cannot.
#pragma once

#include "runtime/cuda/cuda_kernel.h"

namespace onepool::cuda {

// elementwise_ops.cc
Expected<CudaPreparedKernel> make_binary_kernel(const CudaNodeContext& node);
Expected<CudaPreparedKernel> make_where_kernel(const CudaNodeContext& node);
Expected<CudaPreparedKernel> make_unary_kernel(const CudaNodeContext& node);
Expected<CudaPreparedKernel> make_cast_kernel(const CudaNodeContext& node);

// tensor_ops.cc (data movement)
Expected<CudaPreparedKernel> make_copy_kernel(const CudaNodeContext& node);
Expected<CudaPreparedKernel> make_transpose_kernel(const CudaNodeContext& node);
Expected<CudaPreparedKernel> make_concat_kernel(const CudaNodeContext& node);
Expected<CudaPreparedKernel> make_split_kernel(const CudaNodeContext& node);
Expected<CudaPreparedKernel> make_slice_kernel(const CudaNodeContext& node);
Expected<CudaPreparedKernel> make_gather_kernel(const CudaNodeContext& node);
Expected<CudaPreparedKernel> make_pad_kernel(const CudaNodeContext& node);
Expected<CudaPreparedKernel> make_expand_kernel(const CudaNodeContext& node);
Expected<CudaPreparedKernel> make_tile_kernel(const CudaNodeContext& node);
Expected<CudaPreparedKernel> make_resize_kernel(const CudaNodeContext& node);
Expected<CudaPreparedKernel> make_batch_norm_kernel(const CudaNodeContext& node);

// reduce_ops.cc
Expected<CudaPreparedKernel> make_reduce_kernel(const CudaNodeContext& node);
Expected<CudaPreparedKernel> make_softmax_kernel(const CudaNodeContext& node);
Expected<CudaPreparedKernel> make_layer_norm_kernel(const CudaNodeContext& node);

// pool_ops.cc
Expected<CudaPreparedKernel> make_pool_kernel(const CudaNodeContext& node);
Expected<CudaPreparedKernel> make_global_pool_kernel(const CudaNodeContext& node);

// conv_ops.cc
Expected<CudaPreparedKernel> make_conv_kernel(const CudaNodeContext& node);
Expected<CudaPreparedKernel> make_conv_transpose_kernel(const CudaNodeContext& node);

// matmul.cc
Expected<CudaPreparedKernel> make_matmul_kernel(const CudaNodeContext& node);
Expected<CudaPreparedKernel> make_gemm_kernel(const CudaNodeContext& node);

// recurrent_ops.cc
Expected<CudaPreparedKernel> make_lstm_kernel(const CudaNodeContext& node);
Expected<CudaPreparedKernel> make_gru_kernel(const CudaNodeContext& node);
Expected<CudaPreparedKernel> make_rnn_kernel(const CudaNodeContext& node);

// One registration per op family, with the CPU's family names (runtime/kernel_table.h).
void register_elementwise_kernels(CudaKernelRegistry& registry);    // elementwise_ops.cc
void register_tensor_kernels(CudaKernelRegistry& registry);         // tensor_ops.cc
void register_normalization_kernels(CudaKernelRegistry& registry);  // tensor_ops.cc
void register_reduce_kernels(CudaKernelRegistry& registry);         // reduce_ops.cc
void register_conv_pool_kernels(CudaKernelRegistry& registry);      // conv_ops.cc
void register_matmul_kernels(CudaKernelRegistry& registry);         // matmul.cc
void register_recurrent_kernels(CudaKernelRegistry& registry);      // recurrent_ops.cc

}  // namespace onepool::cuda
