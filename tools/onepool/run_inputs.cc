#include "tools/onepool/run_inputs.h"

#include <cstdio>

#include "planner/core/graph.h"
#include "runtime/shape_input_feeds.h"
#include "tools/onepool/shape_ranges.h"
#include "tools/onepool/tensor_compare.h"
#include "tools/onepool/tensor_files.h"

namespace onepool::cli {

namespace {

Expected<std::pair<double, double>> parse_range(const std::string& text, DType dtype) {
  const bool is_float = dtype == DType::kFloat32 || dtype == DType::kFloat64;
  if (text.empty()) return std::pair<double, double>(0.0, is_float ? 1.0 : 10.0);
  const size_t comma = text.find(',');
  try {
    if (comma == std::string::npos) throw std::invalid_argument(text);
    const double low = std::stod(text.substr(0, comma));
    const double high = std::stod(text.substr(comma + 1));
    if (!(low < high)) throw std::invalid_argument(text);
    return std::pair<double, double>(low, high);
  } catch (const std::exception&) {
    return make_status(StatusCode::kInvalidArgument, "--val-range '", text,
                       "': expected lo,hi with lo < hi");
  }
}

}  // namespace

void add_input_flags(CLI::App& command, InputFlags& flags) {
  command.add_option("--inputs", flags.inputs, "name:file.bin|file.npy (repeatable)");
  command.add_option("--inputs-dir", flags.inputs_dir, "ONNX layout: DIR/input_0.pb, ...");
  command.add_option("--seed", flags.seed, "seed for random inputs")->capture_default_str();
  command.add_option("--val-range", flags.val_range,
                     "random value range lo,hi (default 0,1 for floats, 0,10 for integers)");
}

namespace {

// The files of bound shape inputs (Model::shape_inputs(), at their model positions) are left
// out when the folder holds every graph input; a value that differs from the bound one is an
// error, as Session::run would say.
Status drop_shape_input_files(const Model& model, std::vector<HostTensor>& from_dir) {
  const std::vector<BoundShapeInput>& bound = model.graph().shape_inputs;
  if (bound.empty() || from_dir.size() != model.inputs().size() + bound.size()) return Status::ok();
  for (const BoundShapeInput& binding : bound) {
    HostTensor& fed = from_dir[binding.model_position];
    const TensorView view{fed.data.data(), fed.dtype, fed.shape, Device{}};
    ONEPOOL_RETURN_IF_ERROR(check_shape_input_feed(binding, view));
  }
  for (size_t j = bound.size(); j-- > 0;) {  // from the last, so positions stay valid
    from_dir.erase(from_dir.begin() + static_cast<std::ptrdiff_t>(bound[j].model_position));
  }
  return Status::ok();
}

Status read_inputs_dir(const Model& model, const std::string& dir, std::vector<HostTensor>& tensors,
                       std::vector<bool>& given) {
  ONEPOOL_ASSIGN_OR_RETURN(auto from_dir, read_pb_directory(dir, "input_"));
  ONEPOOL_RETURN_IF_ERROR(drop_shape_input_files(model, from_dir));
  if (from_dir.size() != tensors.size()) {
    return make_status(StatusCode::kInvalidArgument, "'", dir, "' holds ", from_dir.size(),
                       " input_*.pb files; the model has ", tensors.size(), " inputs");
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    tensors[i] = std::move(from_dir[i]);
    given[i] = true;
  }
  return Status::ok();
}

// `item` is one --inputs value, name:file.
Status read_named_input(const Model& model, const std::string& item,
                        std::vector<HostTensor>& tensors, std::vector<bool>& given) {
  const size_t colon = item.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return make_status(StatusCode::kInvalidArgument, "--inputs '", item, "': expected name:file");
  }
  const std::string name = item.substr(0, colon);
  const int index = model.input_index(name);
  if (index < 0) {
    std::string names;
    for (const auto& info : model.inputs()) names += " '" + info.name + "'";
    return make_status(StatusCode::kInvalidArgument, "--inputs: the model has no input '", name,
                       "'; its inputs are:", names);
  }
  const auto at = static_cast<size_t>(index);
  ONEPOOL_ASSIGN_OR_RETURN(tensors[at],
                           read_input_file(item.substr(colon + 1), model.inputs()[at]));
  given[at] = true;
  return Status::ok();
}

}  // namespace

Expected<std::vector<HostTensor>> gather_inputs(const Model& model, const InputFlags& flags) {
  const auto& infos = model.inputs();
  std::vector<HostTensor> tensors(infos.size());
  std::vector<bool> given(infos.size(), false);
  if (!flags.inputs_dir.empty()) {
    ONEPOOL_RETURN_IF_ERROR(read_inputs_dir(model, flags.inputs_dir, tensors, given));
  }
  for (const std::string& item : flags.inputs) {
    ONEPOOL_RETURN_IF_ERROR(read_named_input(model, item, tensors, given));
  }
  for (size_t i = 0; i < infos.size(); ++i) {
    if (given[i]) continue;
    ONEPOOL_ASSIGN_OR_RETURN(auto range, parse_range(flags.val_range, infos[i].dtype));
    tensors[i] = random_tensor(infos[i], flags.seed + i, range.first, range.second);
  }
  return tensors;
}

Expected<ModelFlags> with_ranges_at_top(const ModelFlags& flags) {
  ModelFlags resolved = flags;
  ONEPOOL_ASSIGN_OR_RETURN(resolved.shapes, top_of_range_shapes(flags.shapes));
  if (resolved.shapes != flags.shapes) {
    std::printf(
        "note:      --shapes has ranges and no --shapes-sweep: running at the top of "
        "each range\n");
  }
  return resolved;
}

std::vector<TensorView> views_of(std::vector<HostTensor>& tensors) {
  std::vector<TensorView> views;
  for (auto& tensor : tensors) {
    views.push_back(TensorView{tensor.data.data(), tensor.dtype, tensor.shape, Device{}});
  }
  return views;
}

std::vector<HostTensor> make_output_tensors(const Model& model) {
  std::vector<HostTensor> outputs;
  for (const auto& info : model.outputs()) outputs.push_back(empty_tensor(info));
  return outputs;
}

void print_output_summaries(const Model& model, const std::vector<HostTensor>& outputs,
                            int values) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const TensorInfo& info = model.outputs()[i];
    std::printf("output %-20s %-8s %-18s %s\n", info.name.c_str(), dtype_name(info.dtype).c_str(),
                outputs[i].shape.to_string().c_str(), summarize_tensor(outputs[i], values).c_str());
  }
}

}  // namespace onepool::cli
