// (op type) → CUDA kernel factory: a constant table, no global mutable state.
#include <string>
#include <vector>

#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/kernels/cuda_ops.h"

namespace onepool::cuda {

namespace {

struct Entry {
  const char* op_type;
  CudaKernelFactory factory;
};

constexpr Entry kKernels[] = {
    // elementwise
    {"Add", &make_binary_kernel},
    {"Sub", &make_binary_kernel},
    {"Mul", &make_binary_kernel},
    {"Div", &make_binary_kernel},
    {"Pow", &make_binary_kernel},
    {"Max", &make_binary_kernel},
    {"Min", &make_binary_kernel},
    {"Sum", &make_binary_kernel},
    {"Mean", &make_binary_kernel},
    {"PRelu", &make_binary_kernel},
    {"Mod", &make_binary_kernel},
    {"Equal", &make_binary_kernel},
    {"Less", &make_binary_kernel},
    {"Greater", &make_binary_kernel},
    {"LessOrEqual", &make_binary_kernel},
    {"GreaterOrEqual", &make_binary_kernel},
    {"And", &make_binary_kernel},
    {"Or", &make_binary_kernel},
    {"Xor", &make_binary_kernel},
    {"Where", &make_where_kernel},
    {"Relu", &make_unary_kernel},
    {"Sigmoid", &make_unary_kernel},
    {"Tanh", &make_unary_kernel},
    {"Exp", &make_unary_kernel},
    {"Log", &make_unary_kernel},
    {"Sqrt", &make_unary_kernel},
    {"Neg", &make_unary_kernel},
    {"Abs", &make_unary_kernel},
    {"Erf", &make_unary_kernel},
    {"LeakyRelu", &make_unary_kernel},
    {"HardSigmoid", &make_unary_kernel},
    {"HardSwish", &make_unary_kernel},
    {"Clip", &make_unary_kernel},
    {"Reciprocal", &make_unary_kernel},
    {"Floor", &make_unary_kernel},
    {"Ceil", &make_unary_kernel},
    {"Softplus", &make_unary_kernel},
    {"Elu", &make_unary_kernel},
    {"Sin", &make_unary_kernel},
    {"Cos", &make_unary_kernel},
    {"Round", &make_unary_kernel},
    {"Sign", &make_unary_kernel},
    {"Selu", &make_unary_kernel},
    {"Not", &make_unary_kernel},
    {"Gelu", &make_unary_kernel},
    {"Cast", &make_cast_kernel},
    // data movement
    {"Reshape", &make_copy_kernel},
    {"Flatten", &make_copy_kernel},
    {"Squeeze", &make_copy_kernel},
    {"Unsqueeze", &make_copy_kernel},
    {"Identity", &make_copy_kernel},
    {"Dropout", &make_copy_kernel},
    {"Transpose", &make_transpose_kernel},
    {"Concat", &make_concat_kernel},
    {"Split", &make_split_kernel},
    {"Slice", &make_slice_kernel},
    {"Gather", &make_gather_kernel},
    {"Pad", &make_pad_kernel},
    {"Expand", &make_expand_kernel},
    {"Tile", &make_tile_kernel},
    {"Resize", &make_resize_kernel},
    {"Upsample", &make_resize_kernel},
    {"BatchNormalization", &make_batch_norm_kernel},
    // reductions and normalization
    {"ReduceSum", &make_reduce_kernel},
    {"ReduceMean", &make_reduce_kernel},
    {"ReduceMax", &make_reduce_kernel},
    {"ReduceMin", &make_reduce_kernel},
    {"ReduceProd", &make_reduce_kernel},
    {"ReduceSumSquare", &make_reduce_kernel},
    {"ReduceL2", &make_reduce_kernel},
    {"ReduceL1", &make_reduce_kernel},
    {"Softmax", &make_softmax_kernel},
    {"LogSoftmax", &make_softmax_kernel},
    {"LayerNormalization", &make_layer_norm_kernel},
    // pooling, convolution, GEMM
    {"MaxPool", &make_pool_kernel},
    {"AveragePool", &make_pool_kernel},
    {"GlobalAveragePool", &make_global_pool_kernel},
    {"GlobalMaxPool", &make_global_pool_kernel},
    {"Conv", &make_conv_kernel},
    {"ConvTranspose", &make_conv_transpose_kernel},
    {"MatMul", &make_matmul_kernel},
    {"Gemm", &make_gemm_kernel},
    // recurrent layers
    {"LSTM", &make_lstm_kernel},
    {"GRU", &make_gru_kernel},
    {"RNN", &make_rnn_kernel},
};

}  // namespace

std::vector<std::string> cuda_kernel_op_types() {
  std::vector<std::string> op_types;
  for (const Entry& entry : kKernels) op_types.emplace_back(entry.op_type);
  return op_types;
}

CudaKernelFactory find_cuda_kernel(const std::string& op_type) {
  for (const Entry& entry : kKernels) {
    if (op_type == entry.op_type) return entry.factory;
  }
  return nullptr;
}

}  // namespace onepool::cuda
