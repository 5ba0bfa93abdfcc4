// The CPU kernel interface: a kernel is prepared once per node at Session creation (attributes
// parsed, shapes and strides precomputed, workspace declared) and then run many times.
//
// Contract for Kernel::run: no heap allocation, no exception, no global state. Inputs and outputs
// are views into the pool or the weights region; shapes equal the static shapes seen at prepare
// time. Any scratch memory comes from `workspace` (declared by the factory, planned in the pool).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "onepool/plan.h"
#include "onepool/status.h"
#include "onepool/tensor.h"
#include "planner/core/graph.h"
#include "runtime/cpu/thread_pool.h"
#include "runtime/node_context.h"

namespace onepool::cpu {

/// The node a CPU kernel factory prepares (shared with the other backends).
using NodeContext = onepool::NodeContext;

/// What a kernel sees at run time. Omitted optional inputs have data == nullptr.
struct RunContext {
  std::span<const TensorView> inputs;
  std::span<const TensorView> outputs;
  std::byte* workspace = nullptr;
  size_t workspace_bytes = 0;
  ThreadPool* threads = nullptr;  // never null at run time
  /// PreparedKernel::data_dependent_outputs only: one Shape per output, where run() writes the
  /// output's actual shape (each dim at most the view's: the views carry the planned bound, and
  /// the kernel writes its actual shape's elements contiguously from the view's start).
  Shape* output_shapes = nullptr;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  /// Computes the outputs. Must not allocate.
  virtual Status run(const RunContext& context) = 0;
  /// Called once the pool is bound, with this node's workspace (fixed for the Session's life):
  /// a kernel that lays out views of its own inside it (If's nested branch plans) does it here,
  /// where allocating is still allowed.
  virtual Status bind(std::byte* workspace, size_t workspace_bytes) {
    (void)workspace;
    (void)workspace_bytes;
    return Status::ok();
  }
};

/// PreparedKernel::in_place_inputs bits.
inline constexpr uint32_t kInPlaceInput0 = 1u << 0;
inline constexpr uint32_t kInPlaceInput1 = 1u << 1;
inline constexpr uint32_t kInPlaceInput3 = 1u << 3;

/// A prepared kernel and the scratch bytes it needs at run time.
struct PreparedKernel {
  std::unique_ptr<Kernel> kernel;
  size_t workspace_bytes = 0;
  /// Scratch the kernel runs faster with (0: just workspace_bytes). The plan may grant any size
  /// in [workspace_bytes, workspace_preferred_bytes]; run() reads RunContext::workspace_bytes.
  size_t workspace_preferred_bytes = 0;
  /// The inputs the kernel may overwrite with its output 0 (same bytes): bit k for input k
  /// (kInPlaceInput0, kInPlaceInput1). The planner uses one only when that input dies at this
  /// step and is not a graph input or output.
  uint32_t in_place_inputs = 0;
  /// Output 0 (larger than input 0) may take over input 0's bytes from their start and extend
  /// past them, when input 0 dies at this step (constant Pad): run() works in place when the
  /// two addresses coincide.
  bool in_place_grows = false;
  /// Output 0 may share input 0's bytes even while input 0 lives on (Reshape and friends):
  /// run() skips its copy when the two coincide.
  bool output_is_view = false;
  /// Concat: run() skips every input whose data already sits at its slice of the output.
  bool concat_in_place = false;
  /// The path chosen at prepare, shown by the profiler (e.g. "im2col+sgemm"); empty: the op.
  std::string implementation;
  /// NonZero, Unique, Compress, NonMaxSuppression: the outputs are planned at an upper bound
  /// (Value::bound) and run() reports their actual shapes in RunContext::output_shapes.
  bool data_dependent_outputs = false;
  /// The kernel may read tensors of data-dependent size (Value::bound): run() takes each input's
  /// actual shape from its view (the backend sets it after the producer ran) and reports its
  /// outputs' actual shapes like a data-dependent kernel (data_dependent_outputs is set too).
  /// A node that reads such a tensor with a kernel without this flag is unsupported.
  bool accepts_bounded_inputs = false;
  /// Control flow: the plans of the graphs nested in the node, which live in its workspace.
  std::vector<NestedPlan> nested_plans;
};

/// Prepares a kernel for a node, or explains why the node is unsupported (kUnsupported, naming
/// the op, node and dtype) or malformed (kInvalidModel).
using KernelFactory = Expected<PreparedKernel> (*)(const NodeContext& node);

}  // namespace onepool::cpu
