// Symbolic dim binding: options → static dims written into the graph inputs.
#include "planner/import/import_bind.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "planner/import/import_tensor.h"
#include "planner/import/shape_hints.h"

namespace onepool {

namespace {

using DimValues = std::unordered_map<std::string, int64_t>;

struct UnboundDim {
  std::string input;
  int axis = -1;  // -1: the input has no declared shape at all
  std::string name;
};

std::string join_input_names(const std::vector<const onnx::ValueInfoProto*>& inputs) {
  std::string text;
  for (const auto* input : inputs)
    text += str_cat(text.empty() ? "" : ", ", "'", input->name(), "'");
  return text.empty() ? "(none)" : text;
}

// Records name=value, failing when the name already has a different value.
Status record_dim(DimValues* values, const std::string& name, int64_t value,
                  const std::string& source) {
  auto [it, inserted] = values->emplace(name, value);
  if (!inserted && it->second != value) {
    return make_status(StatusCode::kInvalidArgument, "symbolic dim '", name, "' is ", it->second,
                       " elsewhere but ", value, " from ", source);
  }
  return Status::ok();
}

// Checks a --shapes entry against the input's declared shape; records the dim names it fixes.
Status check_given_shape(const onnx::ValueInfoProto& input, const std::vector<int64_t>& given,
                         DimValues* values) {
  const auto& type = input.type().tensor_type();
  const std::string what = str_cat("input '", input.name(), "'");
  for (size_t axis = 0; axis < given.size(); ++axis) {
    if (given[axis] <= 0) {
      return make_status(StatusCode::kInvalidArgument, what, ": axis ", axis, " dim ", given[axis],
                         " must be positive");
    }
  }
  if (!type.has_shape()) return Status::ok();
  const auto& dims = type.shape().dim();
  if (static_cast<size_t>(dims.size()) != given.size()) {
    return make_status(StatusCode::kInvalidArgument, what, ": expected rank ", dims.size(), " (",
                       suggested_shapes_line({&input}), "), --shapes gives rank ", given.size());
  }
  for (int axis = 0; axis < dims.size(); ++axis) {
    const auto& dim = dims.Get(axis);
    const int64_t value = given[static_cast<size_t>(axis)];
    if (dim.has_dim_value() && dim.dim_value() > 0 && dim.dim_value() != value) {
      return make_status(StatusCode::kInvalidArgument, what, ": axis ", axis, " is fixed to ",
                         dim.dim_value(), " in the model, --shapes gives ", value);
    }
    if (dim.has_dim_param() && !dim.dim_param().empty()) {
      ONEPOOL_RETURN_IF_ERROR(record_dim(values, dim.dim_param(), value,
                                         str_cat("--shapes for ", what, " axis ", axis)));
    }
  }
  return Status::ok();
}

void write_shape(onnx::ValueInfoProto* input, const std::vector<int64_t>& dims) {
  auto* shape = input->mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->clear_dim();
  for (int64_t dim : dims) shape->add_dim()->set_dim_value(dim);
}

// Fills the input's symbolic dims from `values`; unbound ones are appended to `unbound`.
void bind_declared(onnx::ValueInfoProto* input, const DimValues& values,
                   std::vector<UnboundDim>* unbound) {
  auto* type = input->mutable_type()->mutable_tensor_type();
  if (!type->has_shape()) {
    unbound->push_back({input->name(), -1, "unknown rank"});
    return;
  }
  auto* dims = type->mutable_shape()->mutable_dim();
  for (int axis = 0; axis < dims->size(); ++axis) {
    auto* dim = dims->Mutable(axis);
    if (dim->has_dim_value() && dim->dim_value() >= 0) continue;
    const auto it = values.find(dim->dim_param());
    if (dim->has_dim_param() && it != values.end()) {
      dim->set_dim_value(it->second);
      continue;
    }
    unbound->push_back({input->name(), axis, dim->dim_param().empty() ? "?" : dim->dim_param()});
  }
}

Status unbound_error(const std::vector<UnboundDim>& unbound,
                     const std::vector<const onnx::ValueInfoProto*>& inputs) {
  std::string list;
  for (const auto& dim : unbound) {
    list += str_cat(list.empty() ? "" : "; ", "input '", dim.input, "' ",
                    dim.axis < 0 ? std::string("has no declared shape")
                                 : str_cat("axis ", dim.axis, " '", dim.name, "'"));
  }
  return make_status(StatusCode::kInvalidArgument, unbound.size(),
                     " symbolic dim(s) are unbound: ", list,
                     ". Set them with --dim NAME=VALUE, or paste and edit: --shapes ",
                     suggested_shapes_line(inputs));
}

Status check_input_type(const onnx::ValueInfoProto& input) {
  if (!input.type().has_tensor_type()) {
    return make_status(StatusCode::kUnsupported, "input '", input.name(),
                       "' is not a tensor (sequence, map and optional inputs are not supported)");
  }
  const auto& dims = input.type().tensor_type().shape().dim();
  for (int axis = 0; axis < dims.size(); ++axis) {
    if (!dims[axis].has_dim_value() || dims[axis].dim_value() >= 0) continue;
    return make_status(StatusCode::kInvalidModel, "input '", input.name(), "' declares dim ",
                       dims[axis].dim_value(), " at axis ", axis,
                       "; a dim is a size (0 or more) or a symbolic name");
  }
  const int32_t elem_type = input.type().tensor_type().elem_type();
  const DType dtype = dtype_from_onnx(elem_type);
  if (dtype == DType::kUndefined) {
    return make_status(StatusCode::kUnsupported, "input '", input.name(), "': dtype ",
                       onnx_dtype_name(elem_type), " is not supported");
  }
  return Status::ok();
}

Status check_input_bytes(const onnx::ValueInfoProto& input) {
  const DType dtype = dtype_from_onnx(input.type().tensor_type().elem_type());
  std::vector<int64_t> dims;
  for (const auto& dim : input.type().tensor_type().shape().dim()) dims.push_back(dim.dim_value());
  auto shape = Shape::from_dims(dims);
  if (!shape) return shape.status().with_context(str_cat("input '", input.name(), "'"));
  auto bytes = tensor_bytes(*shape, dtype);
  if (!bytes) return bytes.status().with_context(str_cat("input '", input.name(), "'"));
  return Status::ok();
}

void remove_initializer_inputs(onnx::GraphProto* graph) {
  std::unordered_set<std::string> initializers;
  for (const auto& initializer : graph->initializer()) initializers.insert(initializer.name());
  auto* inputs = graph->mutable_input();
  int kept = 0;
  for (int i = 0; i < inputs->size(); ++i) {
    if (initializers.count(inputs->Get(i).name()) != 0) continue;
    if (kept != i) inputs->SwapElements(kept, i);
    ++kept;
  }
  while (inputs->size() > kept) inputs->RemoveLast();
}

Status collect_dim_values(const onnx::GraphProto& graph, const ImportOptions& options,
                          DimValues* values) {
  const auto inputs = caller_inputs(graph);
  std::unordered_set<std::string> known_dims;
  for (const auto* input : inputs) {
    for (const auto& dim : input->type().tensor_type().shape().dim()) {
      if (!dim.dim_param().empty()) known_dims.insert(dim.dim_param());
    }
  }
  for (const auto& [name, value] : options.dims) {
    if (value <= 0) {
      return make_status(StatusCode::kInvalidArgument, "--dim ", name, "=", value,
                         ": dims must be positive");
    }
    if (known_dims.count(name) == 0) {
      return make_status(
          StatusCode::kInvalidArgument, "--dim '", name,
          "' is not a symbolic dim of any input; inputs: ", suggested_shapes_line(inputs));
    }
    ONEPOOL_RETURN_IF_ERROR(record_dim(values, name, value, "--dim"));
  }
  return Status::ok();
}

}  // namespace

std::vector<const onnx::ValueInfoProto*> caller_inputs(const onnx::GraphProto& graph) {
  std::unordered_set<std::string> initializers;
  for (const auto& initializer : graph.initializer()) initializers.insert(initializer.name());
  std::vector<const onnx::ValueInfoProto*> inputs;
  for (const auto& input : graph.input()) {
    if (initializers.count(input.name()) == 0) inputs.push_back(&input);
  }
  return inputs;
}

std::vector<std::string> declared_dims(const onnx::ValueInfoProto& input) {
  std::vector<std::string> dims;
  for (const auto& dim : input.type().tensor_type().shape().dim()) {
    if (dim.has_dim_value() && dim.dim_value() >= 0) {
      dims.push_back(std::to_string(dim.dim_value()));
    } else {
      dims.push_back(dim.dim_param().empty() ? "?" : dim.dim_param());
    }
  }
  return dims;
}

std::string suggested_shapes_line(const std::vector<const onnx::ValueInfoProto*>& inputs) {
  const ShapeSuggestion suggestion = suggest_input_shapes(inputs, "");
  return str_cat(suggestion.shapes, " (from ", suggestion.source, ")");
}

Status bind_input_shapes(onnx::GraphProto* graph, const ImportOptions& options) {
  // Step 1. Caller inputs only; check every --shapes name against them.
  remove_initializer_inputs(graph);
  const auto inputs = caller_inputs(*graph);
  std::unordered_map<std::string, onnx::ValueInfoProto*> by_name;
  for (auto& input : *graph->mutable_input()) by_name[input.name()] = &input;
  for (const auto& [name, dims] : options.input_shapes) {
    if (by_name.count(name) == 0) {
      return make_status(StatusCode::kInvalidArgument, "--shapes names '", name,
                         "', which is not a graph input; inputs: ", join_input_names(inputs));
    }
  }
  for (const auto* input : inputs) ONEPOOL_RETURN_IF_ERROR(check_input_type(*input));
  // Step 2. Dim values from --dim, then from the dim names that --shapes entries fix.
  DimValues values;
  ONEPOOL_RETURN_IF_ERROR(collect_dim_values(*graph, options, &values));
  for (const auto& [name, dims] : options.input_shapes) {
    ONEPOOL_RETURN_IF_ERROR(check_given_shape(*by_name[name], dims, &values));
  }
  // Step 3. Write static shapes; collect every dim left unbound.
  std::vector<UnboundDim> unbound;
  for (auto& input : *graph->mutable_input()) {
    const auto given = std::find_if(options.input_shapes.begin(), options.input_shapes.end(),
                                    [&](const auto& entry) { return entry.first == input.name(); });
    if (given != options.input_shapes.end()) {
      write_shape(&input, given->second);
      continue;
    }
    bind_declared(&input, values, &unbound);
  }
  if (!unbound.empty()) return unbound_error(unbound, caller_inputs(*graph));
  for (const auto* input : caller_inputs(*graph)) {
    ONEPOOL_RETURN_IF_ERROR(check_input_bytes(*input));
  }
  return Status::ok();
}

}  // namespace onepool
