// Session: one Plan bound to one backend — one pool allocation, kernels prepared once, and
// run() that walks the execution order with every intermediate a view `pool_base + offset`.
//
// Thread-compatible: use a Session from one thread at a time; for N concurrent requests create
// N Sessions over one shared Model (weights are shared, each Session owns only its pool).
// run() performs no heap allocation (host or device) once the Session exists. No exception
// crosses this API; nothing falls back silently to another device.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onepool/model.h"
#include "onepool/plan.h"
#include "onepool/status.h"
#include "onepool/tensor.h"
#include "onepool/thread_pool.h"

namespace onepool {

/// The widest x86-64 instruction set the CPU kernels' hand-written variants may use. kAuto: the
/// widest this CPU runs (CPUID). A narrower one runs the AVX2 or portable variants on a CPU that
/// has more (to check them, or to match a fleet of older machines); every variant gives the same
/// bits. One the CPU lacks is an error at create(). Loops the compiler vectorizes pick their
/// variant by CPUID alone.
enum class CpuIsa : uint8_t { kAuto, kAvx512, kAvx2, kPortable };

/// "auto", "avx512", "avx2" or "portable".
const char* cpu_isa_name(CpuIsa isa);
/// The CpuIsa that cpu_isa_name gives `text`; kInvalidArgument naming the choices otherwise.
Expected<CpuIsa> parse_cpu_isa(std::string_view text);

struct SessionOptions {
  Device device;    ///< cpu (default) or cuda:N; never silently changed
  int threads = 0;  ///< CPU threads; 0 = all hardware threads (or thread_pool's count)
  /// CPU: run on these threads, shared with other Sessions, instead of starting `threads` of
  /// this Session's own (see CpuThreadPool). `threads` must then be 0 or the pool's count.
  std::shared_ptr<CpuThreadPool> thread_pool;
  CpuIsa cpu_isa = CpuIsa::kAuto;       ///< CPU: the widest instruction set kernels may use
  PlanOptions plan;                     ///< used when no plan is given
  const Plan* plan_override = nullptr;  ///< a saved plan to use instead of planning
  void* pool = nullptr;                 ///< caller-owned pool memory (on the device), or nullptr
  size_t pool_capacity = 0;             ///< bytes at `pool`; must be >= plan.pool_bytes
  bool cuda_graph = true;  ///< CUDA: capture the run once as a CUDA graph and replay it
  bool tf32 = false;       ///< CUDA: allow TF32 tensor-core GEMMs (float32 is exact otherwise)
  bool profile = false;    ///< CPU: time every node of every run (Session::profile())
  /// Testing aid, a deliberately broken kernel (`onepool compare --debug-perturb`): after the
  /// node of this name runs, `debug_perturb_value` is added to the first element of its output
  /// 0 (a float32 or float64 tensor; a NaN value makes it NaN; storage that output shares with
  /// another tensor changes too). Empty: off. CPU only, not with `profile`; an unknown node
  /// (or one optimization removed) is an error at create(). run() pays one branch for it.
  std::string debug_perturb_node;
  double debug_perturb_value = 1.0;
  /// Receives a summary of Session creation (kInfo), the kernel chosen for each node (kDebug),
  /// and on CUDA a failed graph capture (kWarning, once, during the first run). Empty: silent.
  Logger logger;
};

/// Wall-clock milliseconds of Session creation phases.
struct SessionTimings {
  double prepare_ms = 0.0;   // kernels prepared (attributes, workspaces)
  double plan_ms = 0.0;      // memory plan built and verified
  double allocate_ms = 0.0;  // pool allocated, weights uploaded, views bound
};

/// How a Session's runs reached a CUDA device: whether the node sequence was captured as one
/// CUDA graph, and how many runs replayed it or fell back to launching node by node. All zero
/// on the CPU. A plain copy: safe to keep, no reference into the Session.
struct CudaGraphStats {
  bool enabled = false;     ///< SessionOptions::cuda_graph on a CUDA device
  bool captured = false;    ///< a graph was captured and instantiated (on the first run)
  int64_t replays = 0;      ///< runs that launched the captured graph
  int64_t direct_runs = 0;  ///< runs that launched the nodes one by one
  /// Captured graphs dropped because an external input or output moved to another address
  /// (each is captured again on the next run).
  int64_t recaptures = 0;
  std::string fallback_reason;  ///< why capture failed (then every run is direct); else empty
};

/// One node's share of the runs a profiling Session made (SessionOptions::profile).
struct NodeProfile {
  std::string node;  ///< node name (import names unnamed nodes)
  std::string op_type;
  std::string implementation;       ///< the kernel path chosen at prepare, e.g. "im2col+sgemm"
  std::vector<Shape> input_shapes;  ///< omitted optional inputs have rank 0
  double flops = 0;                 ///< floating-point operations per run; 0 where not defined
  double total_ms = 0;              ///< summed over the profiled runs
  double last_start_ms = 0;         ///< start in the last run, from that run's start
  double last_ms = 0;               ///< duration in the last run
  /// CPU: per thread of the Session's pool (the calling thread first), the time it spent running
  /// this node's parallel parts, summed over the profiled runs: a thread well below total_ms
  /// waited for the others (an uneven split, or a core slowed by other load). Empty on CUDA.
  std::vector<double> thread_busy_ms;
};

/// Per-node times since the Session was created or reset_profile() was called. A plain copy.
struct SessionProfile {
  int64_t runs = 0;                ///< executions profiled
  double total_run_ms = 0;         ///< wall time of those executions (every node, loop included)
  std::vector<NodeProfile> nodes;  ///< execution order; empty when profiling is off
};

/// Options of one Session::run call. A plain struct; what it points to must outlive the call.
struct RunOptions {
  /// Cancellation: when not null, the run reads `*cancel` before each node (on CUDA, before
  /// each node launch; a replayed CUDA graph is checked once, before its launch) and, once it
  /// is true, stops there with kCancelled naming the node it did not run. Set it from any
  /// thread; the Session stays usable (clear the flag and run again). Outputs of a cancelled
  /// run are unspecified.
  const std::atomic<bool>* cancel = nullptr;
};

class SessionImpl;
class Backend;
class Session;
/// Internal (runtime/session_with_backend.h): Session::create on a backend the caller made.
Expected<std::unique_ptr<Session>> create_session_with_backend(std::shared_ptr<const Model> model,
                                                               const SessionOptions& options,
                                                               std::unique_ptr<Backend> backend);

class Session {
 public:
  /// Prepares every node (all unsupported ops are reported at once), plans the memory, and
  /// allocates the pool once.
  static Expected<std::unique_ptr<Session>> create(std::shared_ptr<const Model> model,
                                                   const SessionOptions& options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// Runs the model. `inputs` and `outputs` follow Model::inputs() / outputs() order; each is
  /// checked (dtype, rank, every dim) and copied in / out, except that external ones (see
  /// bind_input) are read and written in place, with the same checks as bind_input. No
  /// allocation. `inputs` may also be
  /// ONNX-style, every graph input of the model file in its order with the shape inputs
  /// (Model::shape_inputs()) included: each of those must equal its values bound at load.
  Status run(std::span<const TensorView> inputs, std::span<const TensorView> outputs);
  /// The same run with per-run options (cancellation). No allocation unless it fails.
  Status run(std::span<const TensorView> inputs, std::span<const TensorView> outputs,
             const RunOptions& options);

  /// IoBinding (ONNX Runtime's IoBinding, TensorRT's setTensorAddress). Every run_bound() reads
  /// input i (Model::inputs() order) from `buffer`; its dtype, shape, device and alignment are
  /// checked here. An external input (PlanOptions::external_inputs, external_tensors) is read
  /// where it lies, with no copy and no pool bytes, and is never written; any other is copied
  /// into the pool at each run. On CUDA an external buffer must be device memory of the
  /// Session's device, 256-byte aligned; on the CPU, aligned to its element size. The buffer
  /// must stay valid while runs use it.
  Status bind_input(size_t i, const TensorView& buffer);
  /// Every run_bound() leaves output i in `buffer`: an external output is written there by the
  /// node that computes it (no copy, no pool bytes), any other is copied there after the run.
  /// An external output may not overlap an external input or another output.
  Status bind_output(size_t i, const TensorView& buffer);
  /// Runs on the bound buffers; every input and output must be bound. No allocation (on CUDA a
  /// captured graph is captured again once after an external buffer moves).
  Status run_bound(const RunOptions& options = {});
  /// Whether runs read input i / write output i in the caller's buffer, with no copy: the plan
  /// holds it as external. run() gives the same zero-copy treatment to the views it is passed.
  bool input_is_external(size_t i) const;
  bool output_is_external(size_t i) const;

  /// The view of input i inside the pool: write there and call run_in_place() to skip copies.
  /// For an external input: the caller's buffer it was last bound to (data null before that).
  TensorView input_view(size_t i) const;
  /// The view of output i (in the pool, or in the weights for a constant output), with the shape
  /// the last run produced (an output of data-dependent size: its actual shape).
  TensorView output_view(size_t i) const;
  /// Output i's shape in the last run: its static shape, or for an output of data-dependent size
  /// (TensorInfo::bound) the actual shape, whose elements the run wrote densely from the start
  /// of the caller's buffer. Before any run: the static shape (the bound).
  Shape output_shape(size_t i) const;
  /// Runs on whatever the input views hold; outputs stay in output_view(i).
  Status run_in_place();

  const Plan& plan() const;
  const Model& model() const;
  const SessionTimings& timings() const;
  Device device() const;
  /// Bytes this Session owns (its pool; 0 when the pool is caller-owned).
  size_t owned_pool_bytes() const;
  /// CUDA graph capture and replay counts so far (tests and tools check which path ran).
  CudaGraphStats cuda_graph_stats() const;
  /// Per-node times (SessionOptions::profile on the CPU; otherwise empty). Allocates: call it
  /// between runs. With profiling off, run() pays one branch per node and nothing else.
  SessionProfile profile() const;
  /// Forgets the times so far (e.g. after warm-up runs).
  void reset_profile();

 private:
  friend Expected<std::unique_ptr<Session>> create_session_with_backend(
      std::shared_ptr<const Model> model, const SessionOptions& options,
      std::unique_ptr<Backend> backend);
  explicit Session(std::unique_ptr<SessionImpl> impl);
  std::unique_ptr<SessionImpl> impl_;
};

/// Checks `view` against `info` (dtype, rank, each dim); messages name the tensor and axis.
Status check_tensor_matches(const TensorInfo& info, const TensorView& view, const char* role);

}  // namespace onepool
