// Model: an imported, optimized ONNX graph with its weights packed in one host allocation.
//
// Immutable after load(): share one std::shared_ptr<const Model> across threads and Sessions.
// Every Session of a Model on the same device uses the same weights (never copied per Session).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "onepool/logging.h"
#include "onepool/status.h"
#include "onepool/tensor.h"

namespace onepool {

struct Graph;  // planner/core/graph.h: the internal IR

/// The values of one shape input (LoadOptions::shape_input_values): integers, or floats for a
/// float input (Resize scales, Range bounds). Integers also bind to float inputs; floats bind to
/// an integer input only when each is a whole number.
using ShapeInputValues = std::variant<std::vector<int64_t>, std::vector<double>>;

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
  /// Values of shape inputs by name (`--values axes:1,2`). A shape input is a graph input whose
  /// value some node needs to know its output shape (Reshape's shape, Slice's starts, ReduceSum's
  /// axes, Resize's scales, TopK's K, Range's bounds...), directly or through other nodes. Each is
  /// bound as a constant at load, so the graph is planned statically (TensorRT's shape tensors).
  /// Every shape input needs a value here: the load error for a missing one names the input and
  /// the node that reads it. A name that is not a shape input is an error too.
  std::map<std::string, ShapeInputValues> shape_input_values;
  /// Upper bounds of data-dependent lengths by tensor name (`--bound rows=64`): a Loop's scan
  /// output whose trip count is not known at load (M a graph input or computed, or a condition
  /// that may stop early) is planned for this many iterations; an output of TopK (K a runtime
  /// value) for at most this K; Range's output (runtime start/limit/delta) for this many
  /// elements. K, M and Range's scalars then stay runtime inputs, and each run returns the
  /// actual shape (Session::output_shape). A run needing more fails with an error naming the
  /// node, the bound and the actual count; nothing is written past the bound. Naming a tensor
  /// that is not such an output is an error.
  std::map<std::string, int64_t> bounds;
  /// Receives the import warnings (kWarning, the same as Model::warnings()), the optimization
  /// summary (kInfo) and the load timings (kDebug). Empty: silent.
  Logger logger;
};

/// Name, element type and static shape of a model input or output.
struct TensorInfo {
  std::string name;
  DType dtype = DType::kUndefined;
  Shape shape;
  /// Outputs of data-dependent size (NonZero, Compress, Unique, NonMaxSuppression): why `shape`
  /// is an upper bound. Pass a buffer of that shape to Session::run; the run writes the actual
  /// tensor densely from its start and Session::output_shape() says its actual shape. Empty:
  /// `shape` is exact.
  std::string bound;
};

/// A graph input bound at load to the values in LoadOptions::shape_input_values. It is not in
/// Model::inputs() (nothing feeds it and it takes no pool bytes); Session::run also accepts it
/// in an ONNX-style feed of every graph input, where its values must equal the bound ones.
struct ShapeInputInfo {
  TensorInfo info;            ///< name, dtype, and shape (as declared, or [N] for N values)
  ShapeInputValues values;    ///< as bound (int64 for integer inputs, double for float ones)
  size_t model_position = 0;  ///< its index among the model file's graph inputs
  std::string needed_by;      ///< "node 'ReduceSum_0' (ReduceSum) input 1 (axes)"
};

/// Wall-clock milliseconds of each load phase.
struct LoadTimings {
  double import_ms = 0.0;    // parse, checker, shape inference, constant folding
  double optimize_ms = 0.0;  // graph optimizations
  double pack_ms = 0.0;      // weights packed into one allocation
};

class DeviceResourceCache;
class PackedWeightCache;

class Model {
 public:
  /// Loads, checks, binds shapes, folds constants, optimizes and packs weights.
  static Expected<std::shared_ptr<const Model>> load(const std::string& path,
                                                     const LoadOptions& options);
  /// Same as load() from a serialized ModelProto in memory (an embedded or downloaded model);
  /// `bytes` is only read during the call. Errors: an empty span is kInvalidArgument; bytes
  /// that are not a model are kInvalidModel; more than protobuf's 2 GiB limit is kUnsupported;
  /// a model whose tensors live in external data files is kInvalidModel naming the tensor
  /// (there is no folder to read them from: use load(path)).
  static Expected<std::shared_ptr<const Model>> load_from_memory(std::span<const std::byte> bytes,
                                                                 const LoadOptions& options);
  /// Wraps an already imported graph (optimization level applied as in `options`).
  static Expected<std::shared_ptr<const Model>> from_graph(Graph graph, const LoadOptions& options);
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const std::vector<TensorInfo>& inputs() const { return inputs_; }
  const std::vector<TensorInfo>& outputs() const { return outputs_; }
  /// The shape inputs bound at load, in model order (see ShapeInputInfo).
  const std::vector<ShapeInputInfo>& shape_inputs() const { return shape_inputs_; }
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
  /// Internal to the CPU backend: weights repacked for its kernels, shared by this Model's
  /// Sessions. See runtime/packed_weight_cache.h.
  PackedWeightCache& packed_weights() const { return *packed_weights_; }

 private:
  Model();
  /// The steps after import, shared by load() and load_from_memory().
  static Expected<std::shared_ptr<const Model>> from_import(Expected<Graph> graph, double import_ms,
                                                            const LoadOptions& options);
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
  std::vector<ShapeInputInfo> shape_inputs_;
  LoadTimings timings_;
  std::string optimization_summary_;
  std::unique_ptr<DeviceResourceCache> device_resources_;
  std::unique_ptr<PackedWeightCache> packed_weights_;
};

}  // namespace onepool
