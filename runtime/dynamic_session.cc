// DynamicSession: per-shape specializations (cached, LRU) placed in one shared pool.
#include "onepool/dynamic_session.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "planner/analysis/build_plan.h"
#include "planner/core/graph.h"
#include "planner/core/shape_input_flag.h"
#include "runtime/backend.h"
#include "runtime/dynamic_session_plan.h"
#include "runtime/dynamic_session_pool.h"

namespace onepool {

namespace {

using Clock = std::chrono::steady_clock;

double elapsed_ms(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string shapes_text(const std::vector<TensorInfo>& infos, const std::vector<Shape>& shapes) {
  std::string text;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (i > 0) text += ',';
    text += str_cat(infos[i].name, ":", shapes[i].to_string());
  }
  return text;
}

// A fed shape input's values, as LoadOptions takes them.
ShapeInputValues fed_values(const TensorView& view) {
  HostTensor fed;
  fed.dtype = view.dtype;
  fed.shape = view.shape;
  const auto* begin = static_cast<const std::byte*>(view.data);
  fed.data.assign(begin, begin + view.bytes());
  return shape_input_values_of(fed);
}

}  // namespace

/// One concrete shape set: its model, prepared kernels and plan (placed in the shared pool).
struct Specialization {
  std::vector<Shape> shapes;  // per model input
  std::shared_ptr<const Model> model;
  std::unique_ptr<Backend> backend;
  Plan plan;
  bool reused_placement = false;
  bool symbolic_placement = false;
  uint64_t bound_generation = 0;  // pool generation the views point into; 0: never bound
  uint64_t last_use = 0;
};

/// A specialization loaded and prepared, not yet placed.
struct PreparedSpecialization {
  std::unique_ptr<Specialization> spec;
  NodeMemoryNeeds needs;
};

class DynamicSessionImpl {
 public:
  std::string path;
  DynamicSessionOptions options;
  std::vector<TensorInfo> inputs;  // at the top of the ranges
  /// Shape inputs (Model::shape_inputs()): their values key the cache like input shapes do.
  std::vector<ShapeInputInfo> shape_inputs;
  /// Their values from options.load, used when a run feeds only `inputs`.
  std::vector<HostTensor> default_shape_values;
  Plan top_plan;  // static mode: the plan every shape reuses
  /// The first plan placed (static mode: the top plan), evaluated for every new shape.
  std::unique_ptr<SymbolicSource> symbolic;
  SharedPool pool;
  std::vector<std::unique_ptr<Specialization>> cache;
  uint64_t clock = 0;
  DynamicSessionStats stats;
  SpecializationInfo last;
  /// The specialization the last successful run() used (outputs' actual shapes); eviction only
  /// happens inside a later run(), which sets it again.
  const Specialization* last_run = nullptr;

  Status start_static_mode();
  Expected<Specialization*> specialization_for(std::span<const TensorView> views);
  Expected<PreparedSpecialization> load_and_prepare(const std::vector<Shape>& shapes);
  Expected<std::unique_ptr<Specialization>> build(const std::vector<Shape>& shapes);
  /// Whether `spec` was loaded with the shape input values of this call (value_key).
  bool same_shape_values(const Specialization& spec) const;
  Status plan_top(PreparedSpecialization& top, std::span<const PreparedSpecialization> probes);
  Status place(Specialization& spec, const NodeMemoryNeeds& needs);
  bool try_symbolic(Specialization& spec, const NodeMemoryNeeds& needs);
  void keep_as_symbolic_source(const Plan& plan);
  void record_last(const Specialization& spec, bool cache_hit, double specialize_ms,
                   double place_ms);
  Status bind(Specialization& spec);
  void insert(std::unique_ptr<Specialization> spec);
  /// Splits an ONNX-style feed (shape inputs at their model positions) into `feeds` and
  /// `value_key`, checks the feeds against the profile and fills `shape_key` (no allocation
  /// once sized).
  Status check_shapes(std::span<const TensorView> views);
  Status split_shape_inputs(std::span<const TensorView> views);
  void use_default_shape_values();
  std::vector<Shape> shape_key;
  std::vector<TensorView> feeds;      // this call's inputs, Model::inputs() order
  std::vector<TensorView> value_key;  // this call's shape input values, model order
  void sync_pool_stats();
  size_t estimate_top_pool(size_t pool_bytes, const std::vector<Shape>& shapes) const;
};

// A feed of inputs() only takes the shape input values given at creation; an ONNX-style feed
// (every graph input, in model order) brings its own, each checked for dtype and rank.
Status DynamicSessionImpl::split_shape_inputs(std::span<const TensorView> views) {
  value_key.resize(shape_inputs.size());
  feeds.resize(inputs.size());
  const bool full = !shape_inputs.empty() && views.size() == inputs.size() + shape_inputs.size();
  if (!full) {
    use_default_shape_values();
    if (views.size() != inputs.size()) {
      return make_status(
          StatusCode::kInvalidArgument, "expected ", inputs.size(), " inputs",
          shape_inputs.empty()
              ? std::string()
              : str_cat(" (or ", inputs.size() + shape_inputs.size(), " with the shape inputs)"),
          ", got ", views.size());
    }
    std::copy(views.begin(), views.end(), feeds.begin());
    return Status::ok();
  }
  size_t next_shape_input = 0;
  size_t next_feed = 0;
  for (size_t position = 0; position < views.size(); ++position) {
    const bool is_shape_input = next_shape_input < shape_inputs.size() &&
                                shape_inputs[next_shape_input].model_position == position;
    if (!is_shape_input) {
      feeds[next_feed++] = views[position];
      continue;
    }
    const TensorInfo& info = shape_inputs[next_shape_input].info;
    const TensorView& view = views[position];
    if (view.dtype != info.dtype || view.shape.rank() != info.shape.rank() ||
        view.device.kind != DeviceKind::kCpu || (view.data == nullptr && view.bytes() > 0)) {
      return make_status(StatusCode::kInvalidArgument, "shape input '", info.name,
                         "': expected a host ", dtype_name(info.dtype), " tensor of rank ",
                         info.shape.rank(), ", got ", dtype_name(view.dtype), " ",
                         view.shape.to_string(), " on ", view.device.to_string());
    }
    value_key[next_shape_input++] = view;
  }
  return Status::ok();
}

void DynamicSessionImpl::use_default_shape_values() {
  value_key.resize(shape_inputs.size());
  for (size_t j = 0; j < shape_inputs.size(); ++j) {
    const HostTensor& value = default_shape_values[j];
    value_key[j] =
        TensorView{const_cast<std::byte*>(value.data.data()), value.dtype, value.shape, Device{}};
  }
}

bool DynamicSessionImpl::same_shape_values(const Specialization& spec) const {
  const std::vector<BoundShapeInput>& bound = spec.model->graph().shape_inputs;
  for (size_t j = 0; j < value_key.size() && j < bound.size(); ++j) {
    const TensorView& fed = value_key[j];
    const HostTensor& value = bound[j].value;
    if (fed.shape != value.shape || fed.bytes() != value.data.size()) return false;
    if (!value.data.empty() && std::memcmp(fed.data, value.data.data(), value.data.size()) != 0) {
      return false;
    }
  }
  return true;
}

Status DynamicSessionImpl::check_shapes(std::span<const TensorView> all_views) {
  ONEPOOL_RETURN_IF_ERROR(split_shape_inputs(all_views));
  const std::span<const TensorView> views = feeds;
  shape_key.resize(views.size());
  for (size_t i = 0; i < views.size(); ++i) {
    const TensorInfo& info = inputs[i];
    if (views[i].dtype != info.dtype) {
      return make_status(StatusCode::kInvalidArgument, "input '", info.name, "': expected dtype ",
                         dtype_name(info.dtype), ", got ", dtype_name(views[i].dtype));
    }
    if (options.profile.find(info.name) == nullptr) {
      ONEPOOL_RETURN_IF_ERROR(check_tensor_matches(info, views[i], "input"));
    }
    ONEPOOL_RETURN_IF_ERROR(options.profile.check(info.name, views[i].shape));
    shape_key[i] = views[i].shape;
  }
  return Status::ok();
}

Expected<PreparedSpecialization> DynamicSessionImpl::load_and_prepare(
    const std::vector<Shape>& shapes) {
  PreparedSpecialization prepared;
  prepared.spec = std::make_unique<Specialization>();
  Specialization& spec = *prepared.spec;
  spec.shapes = shapes;
  // Step 1. Load at these shapes (shape inference, constant folding, optimization).
  LoadOptions load = options.load;
  load.input_shapes.clear();
  for (size_t i = 0; i < shapes.size(); ++i) {
    const auto dims = shapes[i].dims();
    load.input_shapes.emplace_back(inputs[i].name, std::vector<int64_t>(dims.begin(), dims.end()));
  }
  for (size_t j = 0; j < shape_inputs.size() && j < value_key.size(); ++j) {
    load.shape_input_values[shape_inputs[j].info.name] = fed_values(value_key[j]);
  }
  ONEPOOL_ASSIGN_OR_RETURN(spec.model, Model::load(path, load));
  // Step 2. Prepare kernels (workspaces depend on the shape).
  ONEPOOL_ASSIGN_OR_RETURN(spec.backend, create_backend(options.session));
  ONEPOOL_RETURN_IF_ERROR(spec.backend->prepare(*spec.model, prepared.needs));
  // Workspaces keep their minimum: symbolic and reused placements carry each workspace slot
  // over to other shapes, which a slot grown into one shape's free bytes would not fit. No Pad
  // grows in place either: those placements size each buffer by its own value, and a grown
  // group is larger than its first value.
  prepared.needs.workspace_preferred_bytes.clear();
  for (NodeAliasing& aliasing : prepared.needs.aliasing) aliasing.in_place_grows = false;
  ++stats.cache_misses;
  return prepared;
}

Expected<std::unique_ptr<Specialization>> DynamicSessionImpl::build(
    const std::vector<Shape>& shapes) {
  const auto start = Clock::now();
  ONEPOOL_ASSIGN_OR_RETURN(PreparedSpecialization prepared, load_and_prepare(shapes));
  // Step 3. Place (reuse the top plan's offsets, or plan) and bind into the shared pool.
  ONEPOOL_RETURN_IF_ERROR(place(*prepared.spec, prepared.needs));
  ONEPOOL_RETURN_IF_ERROR(bind(*prepared.spec));
  last.cache_hit = false;
  last.specialize_ms = elapsed_ms(start);
  return std::move(prepared.spec);
}

// Evaluates the symbolic plan at this shape; false (the reason counted and noted) when the
// structure differs or, in static mode, the layout would not fit the preallocated pool.
bool DynamicSessionImpl::try_symbolic(Specialization& spec, const NodeMemoryNeeds& needs) {
  if (!symbolic) return false;
  Expected<Plan> evaluated = place_symbolically(*symbolic, spec.model->graph(), needs);
  Status why = evaluated.has_value() ? Status::ok() : evaluated.status();
  if (why.is_ok() && stats.mode == PoolMode::kStatic && evaluated->pool_bytes > pool.capacity()) {
    why = make_status(StatusCode::kFailedPrecondition, "its layout needs ", evaluated->pool_bytes,
                      " bytes, more than the static pool of ", pool.capacity());
  }
  if (!why.is_ok()) {
    ++stats.symbolic_fallbacks;
    if (stats.symbolic_note.empty()) {
      stats.symbolic_note = str_cat("shape ", shapes_text(inputs, spec.shapes),
                                    " was not placed symbolically: ", why.message());
    }
    return false;
  }
  spec.plan = std::move(evaluated).value();
  spec.symbolic_placement = true;
  ++stats.symbolic_placements;
  return true;
}

// A plan placed by the algorithms becomes the symbolic source when there is none yet (a plan
// too large for a symbolic plan leaves every shape to be placed on its own).
void DynamicSessionImpl::keep_as_symbolic_source(const Plan& plan) {
  if (symbolic) return;
  Expected<SymbolicSource> source = SymbolicSource::create(plan);
  if (!source) {
    stats.symbolic_note = str_cat("no symbolic plan: ", source.status().message());
    return;
  }
  symbolic = std::make_unique<SymbolicSource>(std::move(source).value());
}

void DynamicSessionImpl::record_last(const Specialization& spec, bool cache_hit,
                                     double specialize_ms, double place_ms) {
  last = SpecializationInfo{};
  last.cache_hit = cache_hit;
  last.reused_placement = spec.reused_placement;
  last.symbolic_placement = spec.symbolic_placement;
  last.specialize_ms = specialize_ms;
  last.place_ms = place_ms;
  last.plan_pool_bytes = spec.plan.pool_bytes;
  last.plan_lower_bound_bytes = spec.plan.lower_bound_bytes;
}

// Order: the symbolic plan, then (static mode) the top plan's offsets, then a fresh placement.
Status DynamicSessionImpl::place(Specialization& spec, const NodeMemoryNeeds& needs) {
  const auto start = Clock::now();
  const Graph& graph = spec.model->graph();
  const bool symbolic_placed = try_symbolic(spec, needs);
  if (!symbolic_placed && stats.mode == PoolMode::kStatic && !top_plan.tensors.empty()) {
    Expected<Plan> reused = reuse_top_plan(top_plan, graph, needs);
    if (reused) {
      spec.plan = std::move(reused).value();
      spec.reused_placement = true;
    } else if (stats.placement_note.empty()) {
      stats.placement_note =
          str_cat("shape ", shapes_text(inputs, spec.shapes), " could not reuse the top plan (",
                  reused.status().message(), "); it was planned on its own");
    }
  }
  if (!symbolic_placed && !spec.reused_placement) {
    ONEPOOL_ASSIGN_OR_RETURN(spec.plan, build_plan(graph, options.session.plan, needs));
    keep_as_symbolic_source(spec.plan);
    ++stats.fresh_placements;
  }
  const double place_ms = elapsed_ms(start);  // placement only: the pool growth is not in it
  ONEPOOL_RETURN_IF_ERROR(
      pool.reserve(spec.plan.pool_bytes, estimate_top_pool(spec.plan.pool_bytes, spec.shapes)));
  if (spec.reused_placement) ++stats.reused_placements;
  record_last(spec, false, 0.0, place_ms);
  sync_pool_stats();
  return Status::ok();
}

Status DynamicSessionImpl::bind(Specialization& spec) {
  if (spec.bound_generation == pool.generation()) return Status::ok();
  ONEPOOL_RETURN_IF_ERROR(spec.backend->bind(*spec.model, spec.plan, pool.data(), pool.capacity()));
  spec.bound_generation = pool.generation();
  return Status::ok();
}

void DynamicSessionImpl::insert(std::unique_ptr<Specialization> spec) {
  const size_t capacity = std::max<size_t>(1, options.cache_capacity);
  while (cache.size() >= capacity) {
    auto oldest = std::min_element(cache.begin(), cache.end(), [](const auto& a, const auto& b) {
      return a->last_use < b->last_use;
    });
    cache.erase(oldest);  // releases its model copy, kernels and plan
    ++stats.cache_evictions;
  }
  spec->last_use = ++clock;
  cache.push_back(std::move(spec));
}

Expected<Specialization*> DynamicSessionImpl::specialization_for(
    std::span<const TensorView> views) {
  ONEPOOL_RETURN_IF_ERROR(check_shapes(views));
  const std::vector<Shape>& shapes = shape_key;
  for (auto& spec : cache) {
    if (spec->shapes != shapes || !same_shape_values(*spec)) continue;
    ++stats.cache_hits;
    spec->last_use = ++clock;
    record_last(*spec, true, 0.0, 0.0);
    ONEPOOL_RETURN_IF_ERROR(bind(*spec));  // the pool may have moved since it was built
    return spec.get();
  }
  Expected<std::unique_ptr<Specialization>> built = build(shapes);
  if (!built) {
    return built.status().with_context(str_cat("shapes ", shapes_text(inputs, shapes)));
  }
  Specialization* spec = built->get();
  insert(std::move(built).value());
  return spec;
}

// The pool the top of the ranges would need, were pool bytes proportional to the input
// elements (the top plan itself, once known): where growth stops doubling.
size_t DynamicSessionImpl::estimate_top_pool(size_t pool_bytes,
                                             const std::vector<Shape>& shapes) const {
  if (!top_plan.tensors.empty()) return top_plan.pool_bytes;
  double ratio = 1.0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const double here = static_cast<double>(shapes[i].element_count());
    if (here > 0) ratio *= static_cast<double>(inputs[i].shape.element_count()) / here;
  }
  const double estimate = static_cast<double>(pool_bytes) * std::max(1.0, ratio);
  return estimate >= 1e18 ? 0 : static_cast<size_t>(estimate);
}

void DynamicSessionImpl::sync_pool_stats() {
  stats.pool_bytes = pool.capacity();
  stats.peak_pool_bytes = pool.peak_capacity();
  stats.pool_allocations = pool.allocations();
  stats.pool_growth_events = pool.growth_events();
  stats.pool_trims = pool.trims();
}

// Plans the top of the ranges with each workspace the largest any probe needs (kernel
// workspaces need not grow with the dims: Conv tiles its im2col over output rows).
Status DynamicSessionImpl::plan_top(PreparedSpecialization& top,
                                    std::span<const PreparedSpecialization> probes) {
  const auto start = Clock::now();
  const Graph& graph = top.spec->model->graph();
  NodeMemoryNeeds needs = top.needs;
  for (const PreparedSpecialization& probe : probes) {
    const Graph& other = probe.spec->model->graph();
    if (other.nodes.size() != graph.nodes.size()) continue;
    for (size_t n = 0; n < graph.nodes.size() && n < probe.needs.workspace_bytes.size(); ++n) {
      if (other.nodes[n].name != graph.nodes[n].name) break;
      needs.workspace_bytes[n] = std::max(needs.workspace_bytes[n], probe.needs.workspace_bytes[n]);
    }
  }
  ONEPOOL_ASSIGN_OR_RETURN(top_plan, build_plan(graph, options.session.plan, needs));
  top.spec->plan = top_plan;
  ONEPOOL_RETURN_IF_ERROR(pool.reserve(top_plan.pool_bytes));
  ONEPOOL_RETURN_IF_ERROR(bind(*top.spec));
  ++stats.fresh_placements;
  keep_as_symbolic_source(top_plan);
  record_last(*top.spec, false, 0.0, elapsed_ms(start));
  sync_pool_stats();
  return Status::ok();
}

// Plans the top of every range, sizes the pool for it once, and checks that the bottom and the
// middle of the ranges fit the top plan's slots; where they do not, switches to dynamic mode.
Status DynamicSessionImpl::start_static_mode() {
  std::vector<Shape> top_shapes;
  for (const TensorInfo& info : inputs) top_shapes.push_back(info.shape);
  ONEPOOL_ASSIGN_OR_RETURN(PreparedSpecialization top, load_and_prepare(top_shapes));
  std::vector<PreparedSpecialization> probes;
  for (const auto& probe : {options.profile.min_shapes(), options.profile.mid_shapes()}) {
    std::vector<Shape> shapes = top_shapes;
    for (const auto& [name, dims] : probe) {
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i].name != name) continue;
        ONEPOOL_ASSIGN_OR_RETURN(shapes[i], Shape::from_dims(dims));
      }
    }
    bool seen = shapes == top_shapes;
    for (const auto& other : probes) seen = seen || other.spec->shapes == shapes;
    if (seen) continue;
    ONEPOOL_ASSIGN_OR_RETURN(PreparedSpecialization prepared, load_and_prepare(shapes));
    probes.push_back(std::move(prepared));
  }
  ONEPOOL_RETURN_IF_ERROR(plan_top(top, probes));
  insert(std::move(top.spec));
  for (PreparedSpecialization& probe : probes) {
    ONEPOOL_RETURN_IF_ERROR(place(*probe.spec, probe.needs));
    ONEPOOL_RETURN_IF_ERROR(bind(*probe.spec));
    const bool reused = probe.spec->reused_placement || probe.spec->symbolic_placement;
    insert(std::move(probe.spec));
    if (!reused) {
      stats.mode = PoolMode::kDynamic;
      stats.mode_note =
          "static pool not kept, planning each shape instead: " + stats.placement_note;
      return Status::ok();
    }
  }
  return Status::ok();
}

Expected<std::unique_ptr<DynamicSession>> DynamicSession::create(
    const std::string& path, const DynamicSessionOptions& options) {
  if (options.session.device.kind != DeviceKind::kCpu) {
    return make_status(StatusCode::kUnsupported, "DynamicSession: device ",
                       options.session.device.to_string(), " is not supported yet (cpu only)");
  }
  if (options.session.plan.has_external_io()) {
    return make_status(StatusCode::kUnsupported,
                       "DynamicSession: external inputs and outputs (PlanOptions::external_*) "
                       "are not supported with shape ranges; use one Session per shape for "
                       "zero-copy inputs and outputs");
  }
  auto impl = std::make_unique<DynamicSessionImpl>();
  impl->path = path;
  impl->options = options;
  impl->options.session.pool = nullptr;
  impl->options.session.plan_override = nullptr;
  impl->stats.mode = options.mode;
  // The model at the top of every range gives the inputs (names, dtypes, ranks, fixed dims).
  LoadOptions load = options.load;
  load.input_shapes = options.profile.max_shapes();
  ONEPOOL_ASSIGN_OR_RETURN(auto top_model, Model::load(path, load));
  impl->inputs = top_model->inputs();
  impl->shape_inputs = top_model->shape_inputs();
  for (const BoundShapeInput& bound : top_model->graph().shape_inputs) {
    impl->default_shape_values.push_back(bound.value);
  }
  impl->use_default_shape_values();  // what the top-of-range specializations load with
  for (const InputShapeRange& range : options.profile.inputs) {
    if (top_model->input_index(range.name) < 0) {
      return make_status(StatusCode::kInvalidArgument, "the profile names input '", range.name,
                         "' but the model has no such input");
    }
  }
  top_model.reset();
  if (options.mode == PoolMode::kStatic) ONEPOOL_RETURN_IF_ERROR(impl->start_static_mode());
  impl->sync_pool_stats();
  return std::unique_ptr<DynamicSession>(new DynamicSession(std::move(impl)));
}

DynamicSession::DynamicSession(std::unique_ptr<DynamicSessionImpl> impl) : impl_(std::move(impl)) {}
DynamicSession::~DynamicSession() = default;

const std::vector<TensorInfo>& DynamicSession::inputs() const { return impl_->inputs; }
const std::vector<ShapeInputInfo>& DynamicSession::shape_inputs() const {
  return impl_->shape_inputs;
}

Expected<std::vector<TensorInfo>> DynamicSession::output_infos(std::span<const TensorView> inputs) {
  ONEPOOL_ASSIGN_OR_RETURN(Specialization * spec, impl_->specialization_for(inputs));
  return spec->model->outputs();
}

Status DynamicSession::run(std::span<const TensorView> inputs,
                           std::span<const TensorView> outputs) {
  impl_->last_run = nullptr;
  ONEPOOL_ASSIGN_OR_RETURN(Specialization * spec, impl_->specialization_for(inputs));
  const Graph& graph = spec->model->graph();
  const auto& output_infos = spec->model->outputs();
  if (outputs.size() != output_infos.size()) {
    return make_status(StatusCode::kInvalidArgument, "expected ", output_infos.size(),
                       " outputs, got ", outputs.size());
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    ONEPOOL_RETURN_IF_ERROR(check_tensor_matches(output_infos[i], outputs[i], "output"));
  }
  const std::span<const TensorView> feeds = impl_->feeds;  // without the shape inputs
  for (size_t i = 0; i < feeds.size(); ++i) {
    if (feeds[i].data == nullptr && feeds[i].bytes() > 0) {
      return make_status(StatusCode::kInvalidArgument, "input '", impl_->inputs[i].name,
                         "': data is null");
    }
    ONEPOOL_RETURN_IF_ERROR(spec->backend->copy_in(graph.inputs[i], feeds[i]));
  }
  ONEPOOL_RETURN_IF_ERROR(spec->backend->execute());
  for (size_t i = 0; i < outputs.size(); ++i) {
    ONEPOOL_RETURN_IF_ERROR(spec->backend->copy_out(graph.outputs[i], outputs[i]));
  }
  impl_->last_run = spec;
  return Status::ok();
}

Expected<Shape> DynamicSession::output_shape(size_t i) const {
  const Specialization* spec = impl_->last_run;
  if (spec == nullptr) {
    return make_status(StatusCode::kFailedPrecondition, "output_shape: no successful run yet");
  }
  const Graph& graph = spec->model->graph();
  if (i >= graph.outputs.size()) {
    return make_status(StatusCode::kInvalidArgument, "output_shape: output ", i, " of ",
                       graph.outputs.size());
  }
  return spec->backend->value_view(graph.outputs[i]).shape;
}

Status DynamicSession::trim() {
  if (impl_->stats.mode == PoolMode::kStatic) return Status::ok();
  size_t needed = 0;
  for (const auto& spec : impl_->cache) needed = std::max(needed, spec->plan.pool_bytes);
  ONEPOOL_RETURN_IF_ERROR(impl_->pool.shrink_to(needed));
  impl_->sync_pool_stats();
  return Status::ok();
}

const DynamicSessionStats& DynamicSession::stats() const { return impl_->stats; }
const SpecializationInfo& DynamicSession::last_specialization() const { return impl_->last; }
const ShapeProfile& DynamicSession::profile() const { return impl_->options.profile; }
size_t DynamicSession::cached_specializations() const { return impl_->cache.size(); }

}  // namespace onepool
