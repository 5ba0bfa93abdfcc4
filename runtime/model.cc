// Model: import → optimize → pack weights.
#include "onepool/model.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string_view>

#include "planner/analysis/schedule.h"
#include "planner/core/graph.h"
#include "planner/core/shape_input_flag.h"
#include "planner/import/onnx_import.h"
#include "planner/optimize/fuse_qdq.h"
#include "planner/optimize/optimize.h"
#include "runtime/cpu/host_evaluation.h"
#include "runtime/cpu/weight_folding.h"
#include "runtime/device_resource_cache.h"
#include "runtime/huge_pages.h"
#include "runtime/packed_weight_cache.h"
#include "runtime/tensor_budget.h"

namespace onepool {

namespace {
constexpr size_t kWeightAlignment = 64;
// The alignment the memory schedule counts bytes in: the plan's default (PlanOptions).
constexpr size_t kScheduleAlignment = 256;
// protobuf parses at most INT_MAX bytes in one message.
constexpr size_t kMaxProtobufBytes = static_cast<size_t>(std::numeric_limits<int>::max());

double elapsed_ms(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

size_t align_up(size_t value, size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

std::string describe_report(const OptimizeReport& report) {
  return str_cat(
      "nodes ", report.nodes_before, " -> ", report.nodes_after, " (removed ", report.removed_nodes,
      " Identity/Dropout, folded ", report.folded_batchnorms, " BatchNormalization, fused ",
      report.fused_biases, " bias Add, fused ", report.fused_activations, " activations, fused ",
      report.fused_gelus, " GELU, fused ", report.fused_pads, " Pad, fused ", report.fused_qdq,
      " QDQ, fused ", report.fused_residuals, " residual Add, fused ",
      report.fused_depthwise_blocks, " depthwise blocks (", report.fused_expansions,
      " with their 1x1 expansion, ", report.fused_projections, " with their 1x1 projection))");
}

ImportOptions import_options_of(const LoadOptions& options) {
  ImportOptions import_options;
  import_options.input_shapes = options.input_shapes;
  import_options.dims = options.dims;
  import_options.shape_input_values = options.shape_input_values;
  import_options.bounds = options.bounds;
  import_options.run_checker = options.run_checker;
  // Import folds shape arithmetic with the CPU kernels: one definition of each op.
  import_options.fold_evaluator = cpu::evaluate_single_node_graph;
  return import_options;
}

Status check_schedule_name(const std::string& schedule) {
  if (schedule == "model" || schedule == "memory") return Status::ok();
  return make_status(StatusCode::kInvalidArgument, "schedule '", schedule,
                     "' is not one of: model, memory");
}
// What the tools print after a load, for an embedding caller: warnings, then the summary.
void log_load(const Model& model, const Logger& logger) {
  if (!logger) return;
  for (const std::string& warning : model.warnings()) logger(LogLevel::kWarning, warning);
  logger(LogLevel::kInfo, str_cat("optimization: ", model.optimization_summary(), "; weights ",
                                  model.weights_bytes(), " bytes"));
}
}  // namespace

void Model::AlignedDelete::operator()(std::byte* p) const { std::free(p); }

Model::Model()
    : device_resources_(std::make_unique<DeviceResourceCache>()),
      packed_weights_(std::make_unique<PackedWeightCache>()) {}
Model::~Model() = default;

Expected<std::shared_ptr<const Model>> Model::load(const std::string& path,
                                                   const LoadOptions& options) {
  ONEPOOL_RETURN_IF_ERROR(check_schedule_name(options.schedule));  // before the slow import
  const auto start = std::chrono::steady_clock::now();
  Expected<Graph> graph = import_onnx_file(path, import_options_of(options));  // names the file
  return from_import(std::move(graph), elapsed_ms(start), options);
}

Expected<std::shared_ptr<const Model>> Model::load_from_memory(std::span<const std::byte> bytes,
                                                               const LoadOptions& options) {
  if (bytes.empty()) {
    return make_status(StatusCode::kInvalidArgument,
                       "Model::load_from_memory: the buffer is empty (0 bytes)");
  }
  if (bytes.size() > kMaxProtobufBytes) {
    return make_status(StatusCode::kUnsupported, "Model::load_from_memory: the buffer is ",
                       bytes.size(), " bytes; a serialized ONNX model is limited to ",
                       kMaxProtobufBytes,
                       " bytes (protobuf's 2 GiB); a larger model keeps its weights in "
                       "external data files, which only Model::load(path) can read");
  }
  ONEPOOL_RETURN_IF_ERROR(check_schedule_name(options.schedule));
  const auto start = std::chrono::steady_clock::now();
  const std::string_view view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  // No folder: a tensor stored in an external file is an error naming it.
  Expected<Graph> graph = import_onnx_bytes(view, "", import_options_of(options));
  return from_import(std::move(graph), elapsed_ms(start), options);
}

Expected<std::shared_ptr<const Model>> Model::from_import(Expected<Graph> graph, double import_ms,
                                                          const LoadOptions& options) {
  if (!graph) return graph.status();
  Expected<std::shared_ptr<const Model>> model = from_graph(std::move(graph).value(), options);
  if (!model) return model;
  Model& loaded = const_cast<Model&>(**model);
  loaded.timings_.import_ms = import_ms;
  if (options.logger) {
    options.logger(LogLevel::kDebug, str_cat("load timings: import ", loaded.timings_.import_ms,
                                             " ms, optimize ", loaded.timings_.optimize_ms,
                                             " ms, pack ", loaded.timings_.pack_ms, " ms"));
  }
  return model;
}

Expected<std::shared_ptr<const Model>> Model::from_graph(Graph graph, const LoadOptions& options) {
  ONEPOOL_ASSIGN_OR_RETURN(OptimizeLevel level, parse_optimize_level(options.optimize));
  ONEPOOL_RETURN_IF_ERROR(check_schedule_name(options.schedule));
  const size_t budget =
      options.max_tensor_bytes != 0 ? options.max_tensor_bytes : physical_memory_bytes();
  ONEPOOL_RETURN_IF_ERROR(check_tensor_budget(graph, budget));
  std::shared_ptr<Model> model(new Model());
  // Step 1. Graph optimizations (BN folding, epilogue fusion, Identity removal).
  auto start = std::chrono::steady_clock::now();
  // The QDQ fusion reads DequantizeLinear of int8 weights, which weight folding would turn into
  // float weights: it runs first.
  int fused_qdq = 0;
  if (level == OptimizeLevel::kAll) {
    ONEPOOL_ASSIGN_OR_RETURN(fused_qdq, fuse_qdq_operators(graph));
  }
  const cpu::WeightFoldReport folded =
      level == OptimizeLevel::kNone ? cpu::WeightFoldReport{} : cpu::fold_weight_only_nodes(graph);
  ONEPOOL_ASSIGN_OR_RETURN(OptimizeReport report, optimize_graph(graph, level));
  report.fused_qdq += fused_qdq;
  model->timings_.optimize_ms = elapsed_ms(start);
  model->optimization_summary_ = describe_report(report);
  if (folded.folded_nodes > 0) {
    model->optimization_summary_ +=
        str_cat("; folded ", folded.folded_nodes, " weight-only node(s) at load");
  }
  // Step 2. Execution order: a valid order with a lower peak of live bytes, on request.
  if (options.schedule == "memory") {
    ONEPOOL_ASSIGN_OR_RETURN(ScheduleReport schedule,
                             schedule_for_memory(graph, kScheduleAlignment));
    model->timings_.optimize_ms += schedule.ms;
    model->optimization_summary_ += str_cat("; schedule memory: ", describe_schedule(schedule));
  }
  model->graph_ = std::make_unique<Graph>(std::move(graph));
  // Step 3. Pack every weight into one aligned allocation.
  start = std::chrono::steady_clock::now();
  ONEPOOL_RETURN_IF_ERROR(model->pack_weights());
  model->timings_.pack_ms = elapsed_ms(start);
  model->describe_io();
  log_load(*model, options.logger);
  return std::shared_ptr<const Model>(std::move(model));
}

Status Model::pack_weights() {
  const auto& weights = graph_->weights;
  weight_offsets_.resize(weights.size());
  size_t total = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    weight_offsets_[i] = total;
    const size_t bytes = align_up(weights[i].data.size(), kWeightAlignment);
    if (bytes > std::numeric_limits<size_t>::max() / 2 - total) {
      return make_status(StatusCode::kOutOfRange, "total weight bytes overflow");
    }
    total += bytes;
  }
  weights_bytes_ = total;
  const size_t allocation = std::max<size_t>(total, kWeightAlignment);
  auto* base = static_cast<std::byte*>(std::aligned_alloc(kWeightAlignment, allocation));
  if (base == nullptr) {
    return make_status(StatusCode::kResourceExhausted, "cannot allocate ", allocation,
                       " bytes for the weights");
  }
  advise_huge_pages(base, allocation);
  weights_.reset(base);
  for (size_t i = 0; i < weights.size(); ++i) {
    if (!weights[i].data.empty()) {
      std::memcpy(base + weight_offsets_[i], weights[i].data.data(), weights[i].data.size());
    }
  }
  return Status::ok();
}

void Model::describe_io() {
  for (ValueId id : graph_->inputs) {
    const Value& value = graph_->values[static_cast<size_t>(id)];
    inputs_.push_back(TensorInfo{value.name, value.dtype, value.shape, ""});
  }
  for (ValueId id : graph_->outputs) {
    const Value& value = graph_->values[static_cast<size_t>(id)];
    outputs_.push_back(TensorInfo{value.name, value.dtype, value.shape, value.bound});
  }
  for (const BoundShapeInput& bound : graph_->shape_inputs) {
    ShapeInputInfo info;
    info.info = TensorInfo{bound.name, bound.value.dtype, bound.value.shape, ""};
    info.values = shape_input_values_of(bound.value);
    info.model_position = bound.model_position;
    info.needed_by = bound.needed_by;
    shape_inputs_.push_back(std::move(info));
  }
}

const std::vector<std::string>& Model::warnings() const { return graph_->import_warnings; }

int Model::input_index(const std::string& name) const {
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (inputs_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int Model::output_index(const std::string& name) const {
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (outputs_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

const std::byte* Model::weight_data(int32_t weight_index) const {
  return weights_.get() + weight_offsets_[static_cast<size_t>(weight_index)];
}

size_t Model::weight_offset(int32_t weight_index) const {
  return weight_offsets_[static_cast<size_t>(weight_index)];
}

}  // namespace onepool
