// Model: an imported, optimized ONNX graph with its weights packed in one host allocation.
//
// Immutable after load(): share one std::shared_ptr<const Model> across threads and Sessions.
// Every Session of a Model on the same device uses the same weights (never copied per Session).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "onepool/status.h"
#include "onepool/tensor.h"

namespace onepool {

struct Graph;  // planner/graph.h: the internal IR

/// How to load a model.
struct LoadOptions {
  /// Full shapes of inputs by name (`--shapes x:1x3x224x224`).
  std::vector<std::pair<std::string, std::vector<int64_t>>> input_shapes;
  /// Symbolic dims by name (`--dim batch=8`).
  std::vector<std::pair<std::string, int64_t>> dims;
  /// Graph optimization level: "none", "basic" or "all" (see planner/optimize/optimize.h).
  std::string optimize = "all";
  /// Run the ONNX checker on load.
  bool run_checker = true;
  /// Execution order: "model" (the file's topological order) or "memory" (a valid order that
  /// lowers the peak of live bytes).
  std::string schedule = "model";
  /// The most bytes one tensor may take (0: the machine's physical memory). Checked before
  /// anything proportional to a tensor is allocated; a larger tensor is a kResourceExhausted
  /// error naming it and its node.
  size_t max_tensor_bytes = 0;
};

/// Name, element type and static shape of a model input or output.
struct TensorInfo {
  std::string name;
  DType dtype = DType::kUndefined;
  Shape shape;
};

/// Wall-clock milliseconds of each load phase.
struct LoadTimings {
  double import_ms = 0.0;    // parse, checker, shape inference, constant folding
  double optimize_ms = 0.0;  // graph optimizations
  double pack_ms = 0.0;      // weights packed into one allocation
};

class DeviceResourceCache;

class Model {
 public:
  /// Loads, checks, binds shapes, folds constants, optimizes and packs weights.
  static Expected<std::shared_ptr<const Model>> load(const std::string& path,
                                                     const LoadOptions& options);
  /// Wraps an already imported graph (optimization level applied as in `options`).
  static Expected<std::shared_ptr<const Model>> from_graph(Graph graph,
                                                           const LoadOptions& options);
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const std::vector<TensorInfo>& inputs() const { return inputs_; }
  const std::vector<TensorInfo>& outputs() const { return outputs_; }
  /// Index of the input named `name`, or -1.
  int input_index(const std::string& name) const;
  int output_index(const std::string& name) const;

  /// Bytes of the packed weights region (aligned).
  size_t weights_bytes() const { return weights_bytes_; }
  /// Host address of weight `weight_index` inside the packed region.
  const std::byte* weight_data(int32_t weight_index) const;
  /// Byte offset of weight `weight_index` inside the packed region.
  size_t weight_offset(int32_t weight_index) const;
  const std::byte* weights_base() const { return weights_.get(); }

  const Graph& graph() const { return *graph_; }
  const LoadTimings& timings() const { return timings_; }
  /// One line per applied optimization ("folded 53 BatchNormalization into Conv").
  const std::string& optimization_summary() const { return optimization_summary_; }
  /// What the import accepted with a caveat (a model newer than the ONNX library: the checker
  /// was skipped). Tools print each as a warning.
  const std::vector<std::string>& warnings() const;

  /// Internal to the backends: resources shared by this Model's Sessions on one device (the
  /// CUDA weights). See runtime/device_resource_cache.h.
  DeviceResourceCache& device_resources() const { return *device_resources_; }

 private:
  Model();
  Status pack_weights();
  void describe_io();

  struct AlignedDelete {
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<Graph> graph_;
  std::unique_ptr<std::byte[], AlignedDelete> weights_;
  size_t weights_bytes_ = 0;
  std::vector<size_t> weight_offsets_;
  std::vector<TensorInfo> inputs_;
  std::vector<TensorInfo> outputs_;
  LoadTimings timings_;
  std::string optimization_summary_;
  std::unique_ptr<DeviceResourceCache> device_resources_;
};

}  // namespace onepool
