// TensorProto ↔ HostTensor and ONNX dtype codes. Internal to import: it includes protobuf.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>

#include "onepool/status.h"
#include "onepool/tensor.h"
#include "planner/core/graph.h"

namespace onepool {

/// The DType for an ONNX elem_type code; kUndefined for codes OnePool does not support
/// (string, complex, float8, unknown codes).
DType dtype_from_onnx(int32_t elem_type);
/// "float32" for supported codes, ONNX's own name ("STRING", "COMPLEX64") otherwise.
std::string onnx_dtype_name(int32_t elem_type);

/// Converts an in-memory TensorProto to a HostTensor. External data must already be resolved
/// (see import_external_data.h). Errors name the tensor: unsupported dtype (kUnsupported), a rank
/// above Shape::kMaxRank, negative dims, a byte size that overflows, or a data field whose length
/// does not match the shape (kInvalidModel).
Expected<HostTensor> host_tensor_from_proto(const onnx::TensorProto& proto);
/// Fills `proto` with `tensor` as raw_data, named `name`.
void host_tensor_to_proto(const HostTensor& tensor, const std::string& name,
                          onnx::TensorProto* proto);
/// Element count of a TensorProto's dims, or -1 when a dim is negative or the count overflows.
int64_t proto_element_count(const onnx::TensorProto& proto);

}  // namespace onepool
