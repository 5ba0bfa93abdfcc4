// Static tensor types of a GraphProto (see import_static_type.h).
#include "planner/import/import_static_type.h"

#include "onepool/status.h"

namespace onepool {

std::optional<TensorType> static_type(const onnx::GraphProto& graph, const std::string& name) {
  for (const auto& initializer : graph.initializer()) {
    if (initializer.name() != name) continue;
    return TensorType{initializer.data_type(),
                      Dims(initializer.dims().begin(), initializer.dims().end())};
  }
  const auto from_info = [&](const onnx::ValueInfoProto& info) -> std::optional<TensorType> {
    const auto& tensor = info.type().tensor_type();
    if (!info.type().has_tensor_type() || !tensor.has_shape()) return std::nullopt;
    TensorType type{tensor.elem_type(), {}};
    for (const auto& dim : tensor.shape().dim()) {
      if (!dim.has_dim_value() || dim.dim_value() < 0) return std::nullopt;
      type.dims.push_back(dim.dim_value());
    }
    return type;
  };
  for (const auto& list : {&graph.input(), &graph.value_info(), &graph.output()}) {
    for (const auto& info : *list) {
      if (info.name() == name) return from_info(info);
    }
  }
  return std::nullopt;
}

void set_static_type(onnx::GraphProto* graph, const std::string& name, const TensorType& type) {
  onnx::ValueInfoProto* target = nullptr;
  for (auto& output : *graph->mutable_output()) {
    if (output.name() == name) target = &output;
  }
  for (auto& info : *graph->mutable_value_info()) {
    if (target == nullptr && info.name() == name) target = &info;
  }
  if (target == nullptr) {
    target = graph->add_value_info();
    target->set_name(name);
  }
  auto* tensor = target->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(type.elem_type);
  tensor->clear_shape();
  auto* shape = tensor->mutable_shape();
  for (int64_t dim : type.dims) shape->add_dim()->set_dim_value(dim);
}

std::string dims_text(const Dims& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += str_cat(i == 0 ? "" : ",", dims[i]);
  return text + "]";
}

}  // namespace onepool
