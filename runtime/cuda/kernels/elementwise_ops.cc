// Node preparation for the elementwise family: broadcasting binary ops, variadic Sum / Mean /
// Max / Min, Where, unary ops (float32; a few on int64 and bool), Clip, Gelu and Cast.
#include <limits>
#include <string>
#include <utility>

#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/kernels/cuda_ops.h"
#include "runtime/cuda/kernels/ops_util.h"

namespace onepool::cuda {

namespace {

struct BinaryEntry {
  const char* name;
  BinaryOp op;
};

constexpr BinaryEntry kBinaryOps[] = {
    {"Add", BinaryOp::kAdd},
    {"Sub", BinaryOp::kSub},
    {"Mul", BinaryOp::kMul},
    {"Div", BinaryOp::kDiv},
    {"Pow", BinaryOp::kPow},
    {"Max", BinaryOp::kMax},
    {"Min", BinaryOp::kMin},
    {"PRelu", BinaryOp::kPRelu},
    {"Mod", BinaryOp::kMod},
    {"Equal", BinaryOp::kEqual},
    {"Less", BinaryOp::kLess},
    {"Greater", BinaryOp::kGreater},
    {"LessOrEqual", BinaryOp::kLessOrEqual},
    {"GreaterOrEqual", BinaryOp::kGreaterOrEqual},
    {"And", BinaryOp::kAnd},
    {"Or", BinaryOp::kOr},
    {"Xor", BinaryOp::kXor},
    {"Sum", BinaryOp::kAdd},
    {"Mean", BinaryOp::kAdd},
};

bool find_binary(const std::string& name, BinaryOp& op) {
  for (const BinaryEntry& entry : kBinaryOps) {
    if (name == entry.name) {
      op = entry.op;
      return true;
    }
  }
  return false;
}

bool is_half(ElemType type) { return type == ElemType::kFloat16 || type == ElemType::kBFloat16; }

// Whether element type `type` is valid for `op`.
bool binary_type_ok(BinaryOp op, ElemType type) {
  // Half types: the float ops natively (float32 math, one rounding), except integer Mod.
  if (is_half(type)) return op < BinaryOp::kAnd && op != BinaryOp::kMod;
  if (op >= BinaryOp::kAnd) return type == ElemType::kBool;
  if (op == BinaryOp::kMod) return type == ElemType::kInt64;
  if (op == BinaryOp::kEqual) return type != ElemType::kInt32;
  if (op == BinaryOp::kPRelu) return type == ElemType::kFloat32;
  return type == ElemType::kFloat32 || type == ElemType::kInt64;
}

}  // namespace

Status CudaNodeContext::unsupported(const std::string& why) const {
  const std::string dtype = has_input(0) ? dtype_name(input(0).dtype) : "none";
  return make_status(StatusCode::kUnsupported, describe_node(node()), ": op '", node().op_type,
                     "' with dtype ", dtype, " has no CUDA kernel (", why, ")");
}

// Add Sub Mul Div Pow Max Min PRelu Mod, comparisons, logic; Sum / Mean / Max / Min with any
// number of inputs are a chain of binary steps into the output (Mean then scales it).
Expected<CudaPreparedKernel> make_binary_kernel(const CudaNodeContext& node) {
  BinaryOp op{};
  if (!find_binary(node.node().op_type, op)) return node.unsupported("unknown binary op");
  const size_t inputs = node.input_count();
  if (inputs == 0 || !node.has_output(0)) return node.error(StatusCode::kInvalidModel, "no inputs");
  for (size_t i = 0; i < inputs; ++i) {
    if (!node.has_input(i)) return node.error(StatusCode::kInvalidModel, "input ", i, " omitted");
    if (node.input(i).dtype != node.input(0).dtype) {
      return node.unsupported("inputs of different dtypes");
    }
  }
  ElemType type{};
  const bool known_type = elem_type_of(node.input(0).dtype, type);
  if (op == BinaryOp::kMod && node.node().attributes.get_int("fmod", 0) != 0) op = BinaryOp::kFmod;
  if (op == BinaryOp::kMod && known_type && type == ElemType::kFloat32) {
    // Same answer as the CPU kernel: ONNX defines float Mod only with fmod = 1.
    return node.error(StatusCode::kInvalidModel, "fmod must be 1 for float32 inputs, got 0");
  }
  if (!known_type || !binary_type_ok(op, type)) {
    return node.unsupported("dtype not supported for this op");
  }
  const Shape out = node.output(0).shape;
  const size_t out_bytes = node.output(0).bytes();
  const bool mean = node.node().op_type == "Mean";
  if (is_half(type) && (inputs > 2 || mean)) {
    // A chain of half steps would round after each one: the float32 path rounds once.
    return node.unsupported("Sum/Max/Min of 3+ half inputs and Mean run in float32");
  }
  if (inputs == 1) {  // Sum / Max / Min / Mean of one input: a copy
    return make_kernel([out_bytes](const CudaRunContext& c) -> Status {
      if (c.outputs[0].data == c.inputs[0].data) return Status::ok();
      return ONEPOOL_CUDA_STATUS(cudaMemcpyAsync(c.outputs[0].data, c.inputs[0].data, out_bytes,
                                                 cudaMemcpyDeviceToDevice, c.stream));
    });
  }
  // Step i: out = (i == 1 ? in0 : out) op in_i. `out` has the full shape, so reading and
  // writing it at the same index in one thread is safe.
  std::vector<BroadcastShape> steps;
  for (size_t i = 1; i < inputs; ++i) {
    const Shape first = i == 1 ? node.input(0).shape : out;
    const Shape operands[] = {first, node.input(i).shape};
    Expected<BroadcastShape> shape = make_broadcast(out, operands);
    if (!shape) return node.error(shape.status().code(), shape.status().message());
    steps.push_back(*shape);
  }
  const float scale = 1.0f / static_cast<float>(inputs);
  const int64_t count = steps[0].count;
  return make_kernel(
      [op, type, steps = std::move(steps), mean, scale, count](const CudaRunContext& c) -> Status {
        void* out = c.outputs[0].data;
        for (size_t i = 0; i < steps.size(); ++i) {
          const void* first = i == 0 ? c.inputs[0].data : out;
          ONEPOOL_LAUNCH_RETURN_IF_ERROR(
              launch_binary(op, type, steps[i], first, c.inputs[i + 1].data, out, c.stream));
        }
        if (!mean) return Status::ok();
        float* y = static_cast<float*>(out);
        return ONEPOOL_CUDA_STATUS(
            launch_unary_float(UnaryParams{UnaryOp::kScale, scale, 0.0f}, y, y, count, c.stream));
      });
}

Expected<CudaPreparedKernel> make_where_kernel(const CudaNodeContext& node) {
  if (node.input_count() != 3 || !node.has_input(0) || !node.has_input(1) || !node.has_input(2) ||
      !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "Where needs 3 inputs");
  }
  if (node.input(0).dtype != DType::kBool || node.input(1).dtype != node.input(2).dtype) {
    return node.unsupported("condition must be bool and x, y of one dtype");
  }
  // Any dtype of 1, 2, 4 or 8 bytes: Where moves bits. Others are refused here, not at run time.
  const size_t elem_bytes = dtype_size(node.input(1).dtype);
  if (!where_elem_bytes_ok(elem_bytes) || node.output(0).dtype != node.input(1).dtype) {
    return node.unsupported(str_cat("x, y and output of ", elem_bytes, "-byte ",
                                    dtype_name(node.input(1).dtype), " (1, 2, 4 or 8 bytes)"));
  }
  const Shape operands[] = {node.input(0).shape, node.input(1).shape, node.input(2).shape};
  Expected<BroadcastShape> shape = make_broadcast(node.output(0).shape, operands);
  if (!shape) return node.error(shape.status().code(), shape.status().message());
  return make_kernel([s = *shape, elem_bytes](const CudaRunContext& c) -> Status {
    const auto* condition = static_cast<const bool*>(c.inputs[0].data);
    return ONEPOOL_CUDA_STATUS(launch_where(s, elem_bytes, condition, c.inputs[1].data,
                                            c.inputs[2].data, c.outputs[0].data, c.stream));
  });
}

namespace {

struct UnaryEntry {
  const char* name;
  UnaryOp op;
  float alpha;  // attribute default ("alpha")
  float beta;   // attribute default ("beta" / "gamma")
};

constexpr UnaryEntry kUnaryOps[] = {
    {"Relu", UnaryOp::kRelu, 0, 0},
    {"Sigmoid", UnaryOp::kSigmoid, 0, 0},
    {"Tanh", UnaryOp::kTanh, 0, 0},
    {"Exp", UnaryOp::kExp, 0, 0},
    {"Log", UnaryOp::kLog, 0, 0},
    {"Sqrt", UnaryOp::kSqrt, 0, 0},
    {"Neg", UnaryOp::kNeg, 0, 0},
    {"Abs", UnaryOp::kAbs, 0, 0},
    {"Erf", UnaryOp::kErf, 0, 0},
    {"LeakyRelu", UnaryOp::kLeakyRelu, 0.01f, 0},
    {"HardSigmoid", UnaryOp::kHardSigmoid, 0.2f, 0.5f},
    {"HardSwish", UnaryOp::kHardSwish, 0, 0},
    {"Reciprocal", UnaryOp::kReciprocal, 0, 0},
    {"Floor", UnaryOp::kFloor, 0, 0},
    {"Ceil", UnaryOp::kCeil, 0, 0},
    {"Softplus", UnaryOp::kSoftplus, 0, 0},
    {"Elu", UnaryOp::kElu, 1.0f, 0},
    {"Sin", UnaryOp::kSin, 0, 0},
    {"Cos", UnaryOp::kCos, 0, 0},
    {"Round", UnaryOp::kRound, 0, 0},
    {"Sign", UnaryOp::kSign, 0, 0},
    {"Selu", UnaryOp::kSelu, 1.67326319217681884765625f, 1.05070102214813232421875f},
    {"Identity", UnaryOp::kIdentity, 0, 0},
    {"Dropout", UnaryOp::kIdentity, 0, 0},
};

const UnaryEntry* find_unary(const std::string& name) {
  for (const UnaryEntry& entry : kUnaryOps) {
    if (name == entry.name) return &entry;
  }
  return nullptr;
}

// A kernel that runs one unary op over the whole tensor (half types via launch_unary_half, int64 /
// bool via launch_unary_int).
CudaPreparedKernel unary_kernel(UnaryParams params, ElemType type, int64_t count) {
  return make_kernel([params, type, count](const CudaRunContext& c) -> Status {
    if (type == ElemType::kFloat32) {
      const auto* x = static_cast<const float*>(c.inputs[0].data);
      auto* y = static_cast<float*>(c.outputs[0].data);
      return ONEPOOL_CUDA_STATUS(launch_unary_float(params, x, y, count, c.stream));
    }
    if (is_half(type)) {
      return ONEPOOL_CUDA_STATUS(
          launch_unary_half(params, type, c.inputs[0].data, c.outputs[0].data, count, c.stream));
    }
    return ONEPOOL_CUDA_STATUS(
        launch_unary_int(params.op, type, c.inputs[0].data, c.outputs[0].data, count, c.stream));
  });
}

// Clip's bound from opset-11 input `i` (a constant) or the opset-6 attribute.
Expected<float> clip_bound(const CudaNodeContext& node, size_t i, const char* attribute,
                           float fallback) {
  if (node.has_input(i)) {
    const HostTensor* bound = node.constant_input(i);
    if (bound == nullptr) return node.unsupported("Clip bounds must be constants");
    return static_cast<float>(bound->float_at(0));
  }
  return node.node().attributes.get_float(attribute, fallback);
}

// Gelu's formula from its attribute; anything but "none" or "tanh" is a bad model, not a silent
// fallback to erf.
Expected<UnaryOp> gelu_op(const CudaNodeContext& node) {
  const std::string approximate = node.node().attributes.get_string("approximate", "none");
  if (approximate == "none") return UnaryOp::kGelu;
  if (approximate == "tanh") return UnaryOp::kGeluTanh;
  return node.error(StatusCode::kInvalidModel, "attribute 'approximate' must be 'none' or ",
                    "'tanh', got '", approximate, "'");
}

}  // namespace

Expected<CudaPreparedKernel> make_unary_kernel(const CudaNodeContext& node) {
  const std::string& op = node.node().op_type;
  if (!node.has_input(0) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "missing input or output");
  }
  const DType dtype = node.input(0).dtype;
  const int64_t count = node.output(0).shape.element_count();
  if (op == "Not") {
    if (dtype != DType::kBool) return node.unsupported("Not needs bool");
    return unary_kernel(UnaryParams{}, ElemType::kBool, count);
  }
  UnaryParams params;
  if (op == "Clip") {
    params.op = UnaryOp::kClip;
    const float inf = std::numeric_limits<float>::infinity();
    ONEPOOL_ASSIGN_OR_RETURN(params.alpha, clip_bound(node, 1, "min", -inf));
    ONEPOOL_ASSIGN_OR_RETURN(params.beta, clip_bound(node, 2, "max", inf));
  } else if (op == "Gelu") {
    ONEPOOL_ASSIGN_OR_RETURN(params.op, gelu_op(node));
  } else {
    const UnaryEntry* entry = find_unary(op);
    if (entry == nullptr) return node.unsupported("unknown unary op");
    params.op = entry->op;
    params.alpha = node.node().attributes.get_float("alpha", entry->alpha);
    params.beta = node.node().attributes.get_float(op == "Selu" ? "gamma" : "beta", entry->beta);
  }
  if (dtype == DType::kFloat32) return unary_kernel(params, ElemType::kFloat32, count);
  ElemType half{};
  // Clip's bounds are read as float32 constants: half ones take the float32 path.
  if (elem_type_of(dtype, half) && is_half(half) && params.op != UnaryOp::kClip) {
    return unary_kernel(params, half, count);
  }
  const bool int_ok = params.op == UnaryOp::kRelu || params.op == UnaryOp::kNeg ||
                      params.op == UnaryOp::kAbs || params.op == UnaryOp::kSign ||
                      params.op == UnaryOp::kIdentity;
  if (dtype == DType::kInt64 && int_ok) return unary_kernel(params, ElemType::kInt64, count);
  if (params.op == UnaryOp::kIdentity) return make_copy_kernel(node);
  return node.unsupported("dtype not supported for this op");
}

Expected<CudaPreparedKernel> make_cast_kernel(const CudaNodeContext& node) {
  ElemType from{};
  ElemType to{};
  if (!node.has_input(0) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "missing input or output");
  }
  if (!elem_type_of(node.input(0).dtype, from) || !elem_type_of(node.output(0).dtype, to)) {
    return node.unsupported(str_cat("cast ", dtype_name(node.input(0).dtype), " to ",
                                    dtype_name(node.output(0).dtype)));
  }
  const int64_t count = node.output(0).shape.element_count();
  return make_kernel([from, to, count](const CudaRunContext& c) -> Status {
    return ONEPOOL_CUDA_STATUS(
        launch_cast(from, to, c.inputs[0].data, c.outputs[0].data, count, c.stream));
  });
}

void register_elementwise_kernels(CudaKernelRegistry& registry) {
  registry.add("Add", &make_binary_kernel);
  registry.add("Sub", &make_binary_kernel);
  registry.add("Mul", &make_binary_kernel);
  registry.add("Div", &make_binary_kernel);
  registry.add("Pow", &make_binary_kernel);
  registry.add("Max", &make_binary_kernel);
  registry.add("Min", &make_binary_kernel);
  registry.add("Sum", &make_binary_kernel);
  registry.add("Mean", &make_binary_kernel);
  registry.add("PRelu", &make_binary_kernel);
  registry.add("Mod", &make_binary_kernel);
  registry.add("Equal", &make_binary_kernel);
  registry.add("Less", &make_binary_kernel);
  registry.add("Greater", &make_binary_kernel);
  registry.add("LessOrEqual", &make_binary_kernel);
  registry.add("GreaterOrEqual", &make_binary_kernel);
  registry.add("And", &make_binary_kernel);
  registry.add("Or", &make_binary_kernel);
  registry.add("Xor", &make_binary_kernel);
  registry.add("Where", &make_where_kernel);
  registry.add("Relu", &make_unary_kernel);
  registry.add("Sigmoid", &make_unary_kernel);
  registry.add("Tanh", &make_unary_kernel);
  registry.add("Exp", &make_unary_kernel);
  registry.add("Log", &make_unary_kernel);
  registry.add("Sqrt", &make_unary_kernel);
  registry.add("Neg", &make_unary_kernel);
  registry.add("Abs", &make_unary_kernel);
  registry.add("Erf", &make_unary_kernel);
  registry.add("LeakyRelu", &make_unary_kernel);
  registry.add("HardSigmoid", &make_unary_kernel);
  registry.add("HardSwish", &make_unary_kernel);
  registry.add("Clip", &make_unary_kernel);
  registry.add("Reciprocal", &make_unary_kernel);
  registry.add("Floor", &make_unary_kernel);
  registry.add("Ceil", &make_unary_kernel);
  registry.add("Softplus", &make_unary_kernel);
  registry.add("Elu", &make_unary_kernel);
  registry.add("Sin", &make_unary_kernel);
  registry.add("Cos", &make_unary_kernel);
  registry.add("Round", &make_unary_kernel);
  registry.add("Sign", &make_unary_kernel);
  registry.add("Selu", &make_unary_kernel);
  registry.add("Not", &make_unary_kernel);
  registry.add("Gelu", &make_unary_kernel);
  registry.add("Cast", &make_cast_kernel);
}

}  // namespace onepool::cuda
