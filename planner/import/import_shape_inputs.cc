// Shape inputs: detection (a backward walk from shape parameters) and binding (initializers).
#include "planner/import/import_shape_inputs.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "planner/core/shape_input_flag.h"
#include "planner/import/import_bind.h"
#include "planner/import/import_model_file.h"
#include "planner/import/import_slice_lengths.h"
#include "planner/import/import_tensor.h"

namespace onepool {

namespace {

struct TableEntry {
  std::string_view op_type;
  ShapeParameter parameter;
};

// The inputs whose value fixes an output shape (or, Resize's roi, a parameter the kernels fold
// at prepare time). Older opsets took these as attributes: their nodes have no such input.
// STFT's frame_step / frame_length are not here: the ONNX library's STFT shape inference, given
// a constant frame_length, ignores `onesided` (16 bins instead of 9 in the node tests), while the
// CPU kernel reads both at run time and checks them against the declared output shape.
constexpr TableEntry kShapeParameters[] = {
    {"Reshape", {1, "shape"}},
    {"Expand", {1, "shape"}},
    {"Tile", {1, "repeats"}},
    {"Slice", {1, "starts"}},
    {"Slice", {2, "ends"}},
    {"Slice", {3, "axes"}},
    {"Slice", {4, "steps"}},
    {"Pad", {1, "pads"}},
    {"Pad", {3, "axes"}},
    {"Resize", {1, "roi"}},
    {"Resize", {2, "scales"}},
    {"Resize", {3, "sizes"}},
    {"Upsample", {1, "scales"}},
    {"ReduceSum", {1, "axes"}},
    {"ReduceMean", {1, "axes"}},
    {"ReduceMax", {1, "axes"}},
    {"ReduceMin", {1, "axes"}},
    {"ReduceProd", {1, "axes"}},
    {"ReduceL1", {1, "axes"}},
    {"ReduceL2", {1, "axes"}},
    {"ReduceLogSum", {1, "axes"}},
    {"ReduceLogSumExp", {1, "axes"}},
    {"ReduceSumSquare", {1, "axes"}},
    {"Squeeze", {1, "axes"}},
    {"Unsqueeze", {1, "axes"}},
    {"Split", {1, "split"}},
    {"TopK", {1, "K"}},
    {"Range", {0, "start"}},
    {"Range", {1, "limit"}},
    {"Range", {2, "delta"}},
    {"ConstantOfShape", {0, "input"}},
    {"OneHot", {1, "depth"}},
    {"CenterCropPad", {1, "shape"}},
    {"HannWindow", {0, "size"}},
    {"HammingWindow", {0, "size"}},
    {"BlackmanWindow", {0, "size"}},
    {"DFT", {1, "dft_length"}},
    {"MelWeightMatrix", {0, "num_mel_bins"}},
    {"MelWeightMatrix", {1, "dft_length"}},
    {"MaxUnpool", {2, "output_shape"}},
    {"Col2Im", {1, "image_shape"}},
    {"Col2Im", {2, "block_shape"}},
    {"Loop", {0, "M"}},  // only for a Loop with scan outputs (fixes their length): see run()
};

// A Loop's trip count fixes a shape only when the Loop has scan outputs (outputs beyond its
// carried values); a loop that only carries state runs any M it is given.
bool has_scan_outputs(const onnx::NodeProto& node) {
  return node.output_size() > node.input_size() - 2;
}

// A Loop whose every scan output has a --bound runs any M (its scan outputs are planned at the
// bound): its M stays a runtime input.
bool scan_outputs_bounded(const onnx::NodeProto& node, const LengthBounds& bounds) {
  for (int i = node.input_size() - 2; i < node.output_size(); ++i) {
    if (!node.output(i).empty() && bounds.count(node.output(i)) == 0) return false;
  }
  return true;
}

// Whether the node's shape parameters fix its output shapes: not for a Loop without scan
// outputs, nor where a --bound plans the outputs (a Loop's every scan output; any output of TopK
// or Range): K, the trip count or Range's scalars then stay runtime inputs; nor for a Slice whose
// run-time starts and ends lie a proven distance apart (import_slice_lengths.h).
bool parameters_fix_shapes(const onnx::NodeProto& node, const LengthBounds& bounds,
                           const SliceDistanceProver& slices) {
  const std::string& op = node.op_type();
  if (op == "Slice") return !slices.runtime_distance(node).has_value();
  if (op == "Loop") return has_scan_outputs(node) && !scan_outputs_bounded(node, bounds);
  if (op == "TopK" || op == "Range") {
    for (const std::string& output : node.output()) {
      if (bounds.count(output) != 0) return false;
    }
  }
  return true;
}

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

int64_t default_opset(const onnx::ModelProto& model) {
  for (const auto& opset : model.opset_import()) {
    if (is_default_domain(opset.domain())) return opset.version();
  }
  return 0;
}

// Ops whose outputs depend on their inputs' shapes only: the walk stops there.
bool reads_shape_only(const onnx::NodeProto& node) {
  return is_default_domain(node.domain()) &&
         (node.op_type() == "Shape" || node.op_type() == "Size");
}

std::string join_dims(const std::vector<std::string>& dims) {
  std::string text;
  for (const std::string& dim : dims) text += str_cat(text.empty() ? "" : ",", dim);
  return text;
}

// The backward walk over one graph: producers by output name, caller inputs by name.
class ShapeInputFinder {
 public:
  ShapeInputFinder(const onnx::ModelProto& model, const LengthBounds& bounds)
      : graph_(model.graph()), opset_(default_opset(model)), bounds_(bounds), slices_(graph_) {
    for (int n = 0; n < graph_.node_size(); ++n) {
      for (const std::string& output : graph_.node(n).output()) producers_[output] = n;
    }
    const auto inputs = caller_inputs(graph_);
    for (size_t i = 0; i < inputs.size(); ++i) input_positions_[inputs[i]->name()] = i;
  }

  std::vector<ShapeInputUse> run() {
    for (int n = 0; n < graph_.node_size(); ++n) {
      const onnx::NodeProto& node = graph_.node(n);
      if (!is_default_domain(node.domain())) continue;
      for (const ShapeParameter& parameter : shape_parameters(node.op_type(), opset_)) {
        if (parameter.position >= node.input_size()) continue;
        if (node.input(parameter.position).empty()) continue;  // an omitted optional input
        if (!parameters_fix_shapes(node, bounds_, slices_)) continue;
        walk_from(n, parameter);
      }
    }
    std::vector<ShapeInputUse> uses;
    for (auto& use : found_) {
      if (use.has_value()) uses.push_back(std::move(*use));
    }
    return uses;
  }

 private:
  struct Pending {
    std::string value;
    int consumer;  // the node that reads `value` on this path
  };

  // Visits every value the parameter depends on; each value once over the whole walk, so the
  // first parameter (in node order) that reaches an input is the one reported.
  void walk_from(int node_index, const ShapeParameter& parameter) {
    const onnx::NodeProto& node = graph_.node(node_index);
    std::vector<Pending> stack{{node.input(parameter.position), node_index}};
    while (!stack.empty()) {
      const Pending pending = stack.back();
      stack.pop_back();
      if (pending.value.empty() || !visited_.insert(pending.value).second) continue;
      const auto input = input_positions_.find(pending.value);
      if (input != input_positions_.end()) {
        record(input->first, input->second, node, parameter, pending.consumer, node_index);
        continue;
      }
      const auto producer = producers_.find(pending.value);
      if (producer == producers_.end()) continue;  // an initializer
      const onnx::NodeProto& source = graph_.node(producer->second);
      if (reads_shape_only(source)) continue;
      for (const std::string& value : source.input()) stack.push_back({value, producer->second});
    }
  }

  void record(const std::string& name, size_t position, const onnx::NodeProto& node,
              const ShapeParameter& parameter, int consumer, int node_index) {
    if (found_.size() <= position) found_.resize(position + 1);
    if (found_[position].has_value()) return;
    ShapeInputUse use;
    use.input = name;
    use.model_position = position;
    use.node = node.name();
    use.op_type = node.op_type();
    use.position = parameter.position;
    use.parameter = parameter.name;
    if (consumer != node_index) use.via = graph_.node(consumer).name();
    found_[position] = std::move(use);
  }

  const onnx::GraphProto& graph_;
  int64_t opset_;
  const LengthBounds& bounds_;
  const SliceDistanceProver slices_;
  std::unordered_map<std::string, int> producers_;
  std::unordered_map<std::string, size_t> input_positions_;
  std::unordered_set<std::string> visited_;
  std::vector<std::optional<ShapeInputUse>> found_;  // by model position
};

std::string list_names(const std::vector<ShapeInputUse>& uses) {
  std::string text;
  for (const auto& use : uses) text += str_cat(text.empty() ? "" : ", ", "'", use.input, "'");
  return text.empty() ? "(none: no graph input feeds a shape parameter)" : text;
}

Status check_value_names(const std::vector<ShapeInputUse>& uses,
                         const std::map<std::string, ShapeInputValues>& values,
                         const onnx::GraphProto& graph) {
  std::unordered_set<std::string> inputs;
  for (const auto* input : caller_inputs(graph)) inputs.insert(input->name());
  for (const auto& [name, given] : values) {
    bool is_shape_input = false;
    for (const auto& use : uses) is_shape_input = is_shape_input || use.input == name;
    if (is_shape_input) continue;
    const std::string what = inputs.count(name) != 0
                                 ? "a graph input whose value no node needs to know a shape "
                                   "(feed it at run time)"
                                 : "not a graph input";
    return make_status(StatusCode::kInvalidArgument, "shape input values (--values) name '", name,
                       "', which is ", what, "; shape inputs: ", list_names(uses));
  }
  return Status::ok();
}

// Where a --bound would let the value stay a runtime input instead.
const char* bound_hint(const std::string& op_type) {
  if (op_type == "Loop") return " (or give its scan outputs a --bound: M is then fed at run time)";
  if (op_type == "TopK" || op_type == "Range") {
    return " (or give its output a --bound: the value is then fed at run time)";
  }
  return "";
}

Status missing_values_error(const std::vector<const ShapeInputUse*>& missing) {
  std::string list;
  std::string example;
  for (const ShapeInputUse* use : missing) {
    list += str_cat("\n  input '", use->input, "': ", use->describe(), " needs its value",
                    bound_hint(use->op_type));
    example += str_cat(example.empty() ? "" : ";", use->input, ":...");
  }
  return make_status(StatusCode::kInvalidArgument, missing.size(),
                     " shape input(s) have no value (a node needs the value to know its output "
                     "shape, so it is bound at load):",
                     list, "\nGive the values with LoadOptions::shape_input_values or --values ",
                     example);
}

// The bound tensor's shape: the declared one, with an open dim (or an open rank) solved from
// the value count.
Expected<Shape> bound_shape(const onnx::ValueInfoProto& input, size_t count) {
  const std::string what = str_cat("shape input '", input.name(), "'");
  const auto& type = input.type().tensor_type();
  if (!type.has_shape()) return Shape{static_cast<int64_t>(count)};
  std::vector<int64_t> dims;
  int open_axis = -1;
  int64_t known = 1;
  for (int axis = 0; axis < type.shape().dim_size(); ++axis) {
    const auto& dim = type.shape().dim(axis);
    const bool fixed = dim.has_dim_value() && dim.dim_value() >= 0;
    if (!fixed && open_axis >= 0) {
      return make_status(StatusCode::kInvalidArgument, what, " declares shape [",
                         join_dims(declared_dims(input)),
                         "] with more than one open dim: ", "its values cannot fix it");
    }
    if (!fixed) open_axis = axis;
    dims.push_back(fixed ? dim.dim_value() : 0);
    if (fixed && dim.dim_value() > 0 &&
        known > std::numeric_limits<int64_t>::max() / dim.dim_value()) {
      return make_status(StatusCode::kOutOfRange, what, ": declared element count overflows");
    }
    if (fixed) known *= dim.dim_value();
  }
  const auto n = static_cast<int64_t>(count);
  const bool fits =
      open_axis >= 0 ? (known > 0 && n % known == 0) || (known == 0 && n == 0) : n == known;
  if (!fits) {
    return make_status(StatusCode::kInvalidArgument, what, " declares shape [",
                       join_dims(declared_dims(input)), "], got ", count, " value(s)");
  }
  if (open_axis >= 0) dims[static_cast<size_t>(open_axis)] = known > 0 ? n / known : 0;
  return Shape::from_dims(dims);
}

template <class T>
bool fits_in(int64_t value) {
  if constexpr (std::is_same_v<T, uint64_t>) return value >= 0;
  return value >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
         value <= static_cast<int64_t>(std::numeric_limits<T>::max());
}

// Writes the integer `value` as element i of an integer tensor of type T.
template <class T>
Status store_integer(HostTensor* tensor, size_t i, int64_t value, const std::string& name) {
  if (!fits_in<T>(value)) {
    return make_status(StatusCode::kInvalidArgument, "shape input '", name, "': value ", value,
                       " at index ", i, " does not fit its dtype ", dtype_name(tensor->dtype));
  }
  tensor->as_mutable<T>()[i] = static_cast<T>(value);
  return Status::ok();
}

Status store_integer_any(HostTensor* tensor, size_t i, int64_t value, const std::string& name) {
  switch (tensor->dtype) {
    case DType::kInt64:
      return store_integer<int64_t>(tensor, i, value, name);
    case DType::kInt32:
      return store_integer<int32_t>(tensor, i, value, name);
    case DType::kInt16:
      return store_integer<int16_t>(tensor, i, value, name);
    case DType::kInt8:
      return store_integer<int8_t>(tensor, i, value, name);
    case DType::kUInt64:
      return store_integer<uint64_t>(tensor, i, value, name);
    case DType::kUInt32:
      return store_integer<uint32_t>(tensor, i, value, name);
    case DType::kUInt16:
      return store_integer<uint16_t>(tensor, i, value, name);
    case DType::kUInt8:
      return store_integer<uint8_t>(tensor, i, value, name);
    case DType::kFloat32:
      tensor->as_mutable<float>()[i] = static_cast<float>(value);
      break;
    case DType::kFloat64:
      tensor->as_mutable<double>()[i] = static_cast<double>(value);
      break;
    default:
      break;
  }
  return Status::ok();
}

Status store_float_any(HostTensor* tensor, size_t i, double value, const std::string& name) {
  if (tensor->dtype == DType::kFloat32) {
    tensor->as_mutable<float>()[i] = static_cast<float>(value);
    return Status::ok();
  }
  if (tensor->dtype == DType::kFloat64) {
    tensor->as_mutable<double>()[i] = value;
    return Status::ok();
  }
  const bool whole =
      std::isfinite(value) && std::trunc(value) == value && std::fabs(value) < 9.2e18;
  if (!whole) {
    return make_status(StatusCode::kInvalidArgument, "shape input '", name, "' has dtype ",
                       dtype_name(tensor->dtype), "; value ", value, " at index ", i,
                       " is not a whole number");
  }
  return store_integer_any(tensor, i, static_cast<int64_t>(value), name);
}

bool bindable_dtype(DType dtype) {
  switch (dtype) {
    case DType::kInt64:
    case DType::kInt32:
    case DType::kInt16:
    case DType::kInt8:
    case DType::kUInt64:
    case DType::kUInt32:
    case DType::kUInt16:
    case DType::kUInt8:
    case DType::kFloat32:
    case DType::kFloat64:
      return true;
    default:
      return false;
  }
}

Expected<HostTensor> make_bound_tensor(const onnx::ValueInfoProto& input,
                                       const ShapeInputValues& values) {
  const DType dtype = dtype_from_onnx(input.type().tensor_type().elem_type());
  if (!bindable_dtype(dtype)) {
    return make_status(StatusCode::kUnsupported, "shape input '", input.name(), "' has dtype ",
                       onnx_dtype_name(input.type().tensor_type().elem_type()),
                       "; values bind to integer, float32 and float64 inputs only");
  }
  const size_t count = std::visit([](const auto& list) { return list.size(); }, values);
  HostTensor tensor;
  tensor.dtype = dtype;
  ONEPOOL_ASSIGN_OR_RETURN(tensor.shape, bound_shape(input, count));
  tensor.data.resize(count * dtype_size(dtype));
  for (size_t i = 0; i < count; ++i) {
    const Status stored =
        std::holds_alternative<std::vector<int64_t>>(values)
            ? store_integer_any(&tensor, i, std::get<std::vector<int64_t>>(values)[i], input.name())
            : store_float_any(&tensor, i, std::get<std::vector<double>>(values)[i], input.name());
    ONEPOOL_RETURN_IF_ERROR(stored);
  }
  return tensor;
}

}  // namespace

std::vector<ShapeParameter> shape_parameters(const std::string& op_type, int64_t opset) {
  // Resize-10 took (X, scales): its input 1 is the scales.
  if (op_type == "Resize" && opset > 0 && opset < 11) return {{1, "scales"}};
  std::vector<ShapeParameter> parameters;
  for (const TableEntry& entry : kShapeParameters) {
    if (entry.op_type == op_type) parameters.push_back(entry.parameter);
  }
  return parameters;
}

std::string ShapeInputUse::describe() const {
  std::string text =
      str_cat("node '", node, "' (", op_type, ") input ", position, " (", parameter, ")");
  if (!via.empty()) text += str_cat(" through node '", via, "'");
  return text;
}

std::vector<ShapeInputUse> find_shape_inputs(const onnx::ModelProto& model,
                                             const LengthBounds& bounds) {
  if (model.graph().node_size() == 0) return {};
  return ShapeInputFinder(model, bounds).run();
}

Expected<std::vector<ShapeInputUse>> find_shape_inputs_in_file(const std::string& path) {
  ONEPOOL_ASSIGN_OR_RETURN(std::string bytes, read_file_bytes(path));
  onnx::ModelProto model;
  ONEPOOL_RETURN_IF_ERROR(parse_model_bytes(bytes, str_cat("'", path, "'"), &model));
  return find_shape_inputs(model);
}

Expected<std::vector<BoundShapeInput>> bind_shape_inputs(
    onnx::ModelProto* model, const std::map<std::string, ShapeInputValues>& values,
    const LengthBounds& bounds) {
  // Step 1. Which inputs are shape inputs; every given name must be one, every one needs a value.
  const std::vector<ShapeInputUse> uses = find_shape_inputs(*model, bounds);
  onnx::GraphProto* graph = model->mutable_graph();
  ONEPOOL_RETURN_IF_ERROR(check_value_names(uses, values, *graph));
  std::vector<const ShapeInputUse*> missing;
  for (const auto& use : uses) {
    if (values.count(use.input) == 0) missing.push_back(&use);
  }
  if (!missing.empty()) return missing_values_error(missing);
  // Step 2. Each becomes an initializer (bind_input_shapes then drops it from the inputs).
  std::unordered_map<std::string, const onnx::ValueInfoProto*> inputs;
  for (const auto* input : caller_inputs(*graph)) inputs[input->name()] = input;
  std::vector<BoundShapeInput> bound;
  for (const auto& use : uses) {
    BoundShapeInput binding;
    binding.name = use.input;
    binding.model_position = use.model_position;
    binding.needed_by = use.describe();
    ONEPOOL_ASSIGN_OR_RETURN(binding.value,
                             make_bound_tensor(*inputs.at(use.input), values.at(use.input)));
    bound.push_back(std::move(binding));
  }
  for (const auto& binding : bound) {
    host_tensor_to_proto(binding.value, binding.name, graph->add_initializer());
  }
  return bound;
}

}  // namespace onepool
