// DynamicSession: one session object that serves every input shape inside declared ranges.
//
// A Session is built for one set of concrete shapes (kernels are prepared for static shapes).
// A DynamicSession keeps the model file and, per concrete shape set seen, a specialization: the
// model loaded at those shapes, its prepared kernels and its plan. Specializations are cached
// (bounded, least recently used) and all of them place their tensors in ONE pool owned by the
// DynamicSession:
//
//   - static mode: the model is planned once at the top of every range and the pool is sized
//     for that plan at creation. A smaller shape is placed by the symbolic plan (below) when
//     its layout fits that pool, else reuses the top plan's offsets (every tensor must fit the
//     slot it had at the top: sound only when every tensor's bytes are non-decreasing in each
//     dim). create() tries the bottom (and the middle) of the ranges and, where neither fits,
//     says why in stats().mode_note and runs the model in dynamic mode instead.
//   - dynamic mode: each new shape is placed on first use; the pool is one allocation sized to
//     the largest plan seen and grows (each growth counted) only when a larger plan arrives: to
//     twice its size, or to an estimate of the top of the ranges' need when that is smaller
//     (pool bytes scaled by input elements); trim() shrinks it to what the cached
//     specializations need.
//
// Symbolic placement (both modes): the first plan placed (static mode: the top of the ranges)
// becomes a symbolic plan (planner/analysis/symbolic_plan.h). A new shape with the same structure
// (same nodes, tensors and lifetimes) takes its sizes from shape inference of the concrete shape
// and its offsets from evaluating that plan's max/+ expressions over those sizes (microseconds; no
// placement algorithm runs), and the result is verified. In static mode the evaluated layout is
// used when it fits the preallocated pool (else the top plan's offsets are reused); shapes whose
// structure differs are placed as before (stats().symbolic_fallbacks).
//
// Usage:
//   ONEPOOL_ASSIGN_OR_RETURN(ShapeProfile profile,
//                            ShapeProfile::parse("x:1x3x[320..1280:32]x[320..1280:32]"));
//   DynamicSessionOptions options;
//   options.profile = profile;
//   ONEPOOL_ASSIGN_OR_RETURN(auto session, DynamicSession::create("det.onnx", options));
//   ONEPOOL_ASSIGN_OR_RETURN(auto outputs, session->output_infos(inputs));  // allocate these
//   ONEPOOL_RETURN_IF_ERROR(session->run(inputs, output_views));
//
// Thread-compatible: one thread at a time. CPU only for now (cuda is reported as unsupported).
// No exception crosses this API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onepool/model.h"
#include "onepool/session.h"
#include "onepool/shape_profile.h"
#include "onepool/status.h"
#include "onepool/tensor.h"

namespace onepool {

enum class PoolMode : uint8_t { kStatic, kDynamic };

/// "static" / "dynamic".
std::string pool_mode_name(PoolMode mode);

struct DynamicSessionOptions {
  ShapeProfile profile;  ///< inputs with ranges; other inputs keep their shapes
  PoolMode mode = PoolMode::kStatic;
  size_t cache_capacity = 8;  ///< specializations kept (at least 1)
  LoadOptions load;           ///< `input_shapes` is set per specialization
  SessionOptions session;     ///< `pool`, `pool_capacity`, `plan_override` are ignored
};

/// Counters since creation.
struct DynamicSessionStats {
  PoolMode mode = PoolMode::kStatic;  ///< the mode in effect (static may have fallen back)
  std::string mode_note;              ///< why static mode was not kept, or empty
  /// The first shape that could not reuse the top plan and why (it was planned on its own; in
  /// static mode it still runs in the pool when its plan fits), or empty.
  std::string placement_note;
  size_t pool_bytes = 0;           ///< current pool allocation
  size_t peak_pool_bytes = 0;      ///< largest pool allocation so far
  int64_t pool_allocations = 0;    ///< pool (re)allocations, the first one included
  int64_t pool_growth_events = 0;  ///< reallocations to a larger pool after the first
  int64_t pool_trims = 0;          ///< reallocations to a smaller pool by trim()
  int64_t cache_hits = 0;
  int64_t cache_misses = 0;  ///< specializations built
  int64_t cache_evictions = 0;
  int64_t reused_placements = 0;  ///< plans that reused the top plan's offsets (static)
  int64_t fresh_placements = 0;   ///< plans placed from scratch
  /// Plans placed by evaluating the symbolic plan (no placement algorithm run; see below).
  int64_t symbolic_placements = 0;
  /// Shapes the symbolic plan could not place (other structure, or in static mode a pool over
  /// the preallocated one): they were placed as before. The first reason is in symbolic_note.
  int64_t symbolic_fallbacks = 0;
  std::string symbolic_note;
};

/// What the last output_infos() / run() needed for its shapes.
struct SpecializationInfo {
  bool cache_hit = false;
  bool reused_placement = false;      ///< the top plan's offsets (static mode)
  double specialize_ms = 0.0;         ///< load + prepare + place + bind; 0 on a cache hit
  double place_ms = 0.0;              ///< placement (or offset reuse) and verification
  size_t plan_pool_bytes = 0;         ///< bytes this shape's plan uses in the pool
  bool symbolic_placement = false;    ///< placed by evaluating the symbolic plan
  size_t plan_lower_bound_bytes = 0;  ///< max bytes live at one step at this shape
};

class DynamicSessionImpl;

class DynamicSession {
 public:
  /// Loads the model at the top of every range (static mode: plans it and allocates the pool
  /// once). Errors: unreadable model, a profile naming an unknown input or the wrong rank.
  static Expected<std::unique_ptr<DynamicSession>> create(const std::string& path,
                                                          const DynamicSessionOptions& options);
  ~DynamicSession();
  DynamicSession(const DynamicSession&) = delete;
  DynamicSession& operator=(const DynamicSession&) = delete;

  /// Input names, dtypes and shapes at the top of the ranges, in run() order.
  const std::vector<TensorInfo>& inputs() const;
  /// The model's shape inputs (Model::shape_inputs()), bound at creation to
  /// `options.load.shape_input_values`. run() and output_infos() also take ONNX-style feeds,
  /// every graph input in model order with these included: their values then key the
  /// specialization cache like input shapes do (new values load and plan the model again; the
  /// cache holds each set of values seen, least recently used first out).
  const std::vector<ShapeInputInfo>& shape_inputs() const;
  /// The outputs (with shapes) for these input shapes; builds the specialization if needed.
  Expected<std::vector<TensorInfo>> output_infos(std::span<const TensorView> inputs);
  /// Runs on inputs of any shape inside the profile; `outputs` must have the shapes
  /// output_infos() gives. A shape outside the profile is an error naming the range.
  Status run(std::span<const TensorView> inputs, std::span<const TensorView> outputs);
  /// Output i's shape in the last successful run: output_infos()'s, or for an output of
  /// data-dependent size (TensorInfo::bound) the actual shape, written densely from the start of
  /// the caller's buffer. Errors before any successful run.
  Expected<Shape> output_shape(size_t i) const;
  /// Dynamic mode: shrinks the pool to the largest plan still cached. Static mode: no-op.
  Status trim();

  const DynamicSessionStats& stats() const;
  const SpecializationInfo& last_specialization() const;
  const ShapeProfile& profile() const;
  /// Specializations now cached.
  size_t cached_specializations() const;

 private:
  explicit DynamicSession(std::unique_ptr<DynamicSessionImpl> impl);
  std::unique_ptr<DynamicSessionImpl> impl_;
};

}  // namespace onepool
