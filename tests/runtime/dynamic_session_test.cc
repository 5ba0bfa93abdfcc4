// DynamicSession: shape profiles, static pool at the top of the range, dynamic pool growth,
// the specialization cache, trim, and out-of-range errors. Models: dyn_fpn (symbolic height and
// width: Conv, MaxPool, Resize, Add) and mlp (symbolic batch) from models/generate.py, and a
// Relu + Pad + Sigmoid model written here.
#include "onepool/dynamic_session.h"

#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "onepool/onepool.h"
#include "planner/analysis/symbolic_plan.h"
#include "runtime/backend.h"
#include "runtime/dynamic_session_plan.h"

using namespace onepool;

namespace {

std::string model_path(const char* name) {
  const char* dir = std::getenv("ONEPOOL_MODELS_DIR");
  REQUIRE(dir != nullptr);
  return std::string(dir) + "/" + name + ".onnx";
}

// Deterministic input values in [-1, 1) for a shape.
std::vector<float> pattern(const Shape& shape) {
  std::vector<float> data(static_cast<size_t>(shape.element_count()));
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<float>((i * 7919 + 13) % 2000) / 1000.0f - 1.0f;
  }
  return data;
}

TensorView view_of(std::vector<float>& data, const Shape& shape) {
  return TensorView{data.data(), DType::kFloat32, shape, Device{}};
}

ShapeProfile profile(const char* text) {
  Expected<ShapeProfile> parsed = ShapeProfile::parse(text);
  REQUIRE_MESSAGE(parsed.has_value(), parsed.status().message());
  return std::move(parsed).value();
}

DynamicSessionOptions options_for(const char* range, PoolMode mode, size_t cache = 8) {
  DynamicSessionOptions options;
  options.profile = profile(range);
  options.mode = mode;
  options.cache_capacity = cache;
  options.session.threads = 1;  // one thread: results are bitwise reproducible
  return options;
}

std::unique_ptr<DynamicSession> create_at(const std::string& path,
                                          const DynamicSessionOptions& options) {
  auto session = DynamicSession::create(path, options);
  REQUIRE_MESSAGE(session.has_value(), session.status().message());
  return std::move(session).value();
}

std::unique_ptr<DynamicSession> create(const char* model, const DynamicSessionOptions& options) {
  return create_at(model_path(model), options);
}

// Runs `session` on one input of `shape`; returns the first output.
std::vector<float> run_dynamic(DynamicSession& session, const Shape& shape) {
  std::vector<float> input = pattern(shape);
  const TensorView in[] = {view_of(input, shape)};
  auto infos = session.output_infos(in);
  REQUIRE_MESSAGE(infos.has_value(), infos.status().message());
  std::vector<float> output(static_cast<size_t>((*infos)[0].shape.element_count()));
  const TensorView out[] = {view_of(output, (*infos)[0].shape)};
  const Status status = session.run(in, out);
  REQUIRE_MESSAGE(status.is_ok(), status.message());
  return output;
}

// The reference: a plain Session built for exactly this shape.
std::vector<float> run_fresh_at(const std::string& path, const std::string& input,
                                const Shape& shape) {
  LoadOptions load;
  load.input_shapes.emplace_back(input, std::vector<int64_t>(shape.begin(), shape.end()));
  auto loaded = Model::load(path, load);
  REQUIRE_MESSAGE(loaded.has_value(), loaded.status().message());
  SessionOptions options;
  options.threads = 1;
  auto session = Session::create(*loaded, options);
  REQUIRE_MESSAGE(session.has_value(), session.status().message());
  std::vector<float> data = pattern(shape);
  std::vector<float> output(static_cast<size_t>((*loaded)->outputs()[0].shape.element_count()));
  const TensorView in[] = {view_of(data, shape)};
  const TensorView out[] = {view_of(output, (*loaded)->outputs()[0].shape)};
  REQUIRE((*session)->run(in, out).is_ok());
  return output;
}

std::vector<float> run_fresh(const char* model, const std::string& input, const Shape& shape) {
  return run_fresh_at(model_path(model), input, shape);
}

void add_symbolic_io(onnx::ValueInfoProto* info, const std::string& name,
                     const std::vector<std::string>& dims) {
  info->set_name(name);
  auto* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  for (const std::string& dim : dims) {
    if (dim == "1") {
      tensor->mutable_shape()->add_dim()->set_dim_value(1);
    } else {
      tensor->mutable_shape()->add_dim()->set_dim_param(dim);
    }
  }
}

// y = Sigmoid(Pad(Relu(x), [0,0,1,2, 0,0,2,1])) with x [1,1,h,w], written to a temporary file:
// a constant Pad whose dying input a Session lets it grow over (in place).
std::string write_pad_model() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("pad_in_place");
  add_symbolic_io(graph->add_input(), "x", {"1", "1", "h", "w"});
  add_symbolic_io(graph->add_output(), "y", {"1", "1", "oh", "ow"});
  onnx::TensorProto* pads = graph->add_initializer();
  pads->set_name("pads");
  pads->set_data_type(onnx::TensorProto::INT64);
  pads->add_dims(8);
  for (int64_t pad : {0, 0, 1, 2, 0, 0, 2, 1}) pads->add_int64_data(pad);
  const std::vector<std::vector<std::string>> nodes = {
      {"Relu", "x", "r"}, {"Pad", "r", "p"}, {"Sigmoid", "p", "y"}};
  for (const auto& spec : nodes) {
    onnx::NodeProto* node = graph->add_node();
    node->set_op_type(spec[0]);
    node->add_input(spec[1]);
    if (spec[0] == "Pad") node->add_input("pads");
    node->add_output(spec[2]);
  }
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / str_cat("onepool_pad_", ::getpid(), ".onnx");
  std::ofstream(path, std::ios::binary) << model.SerializeAsString();
  return path.string();
}

constexpr const char* kFpnRange = "input:1x3x[16..64:8]x[16..64:8]";

}  // namespace

// Parsing: fixed dims, ranges, steps; round trip; top/bottom/middle shapes.
TEST_CASE("ShapeProfile parses ranges and reports the top, bottom and middle") {
  const ShapeProfile p = profile("x:1x3x[320..1280:32]x[320..1280],y:[1..8]x10");
  REQUIRE(p.inputs.size() == 2);
  CHECK(p.to_string() == "x:1x3x[320..1280:32]x[320..1280],y:[1..8]x10");
  CHECK(p.has_ranges());
  CHECK(p.max_shapes()[0].second == std::vector<int64_t>{1, 3, 1280, 1280});
  CHECK(p.min_shapes()[1].second == std::vector<int64_t>{1, 10});
  CHECK(p.mid_shapes()[0].second == std::vector<int64_t>{1, 3, 800, 800});  // 320 + 15*32
  CHECK(p.element_ratio() == doctest::Approx(16.0 * 8.0));
  CHECK_FALSE(profile("x:1x3x224x224").has_ranges());
}

TEST_CASE("ShapeProfile rejects bad text naming the input and axis") {
  auto empty = ShapeProfile::parse("x:1x[9..3]");
  REQUIRE_FALSE(empty.has_value());
  CHECK(empty.status().message().find("input 'x' axis 1") != std::string::npos);
  CHECK_FALSE(ShapeProfile::parse("x:1x[3-9]").has_value());
  CHECK_FALSE(ShapeProfile::parse("x:1x[320..1290:32]").has_value());  // 970 not a multiple of 32
  CHECK_FALSE(ShapeProfile::parse("x:1x3,x:1x4").has_value());         // named twice
}

// The example message, word for word.
TEST_CASE("a shape outside the declared range is an error naming the range") {
  const ShapeProfile p = profile("x:1x3x[320..1280]x[320..1280]");
  const Status status = p.check("x", Shape{1, 3, 1300, 640});
  REQUIRE_FALSE(status.is_ok());
  CHECK(status.message().find("input 'x' axis 2: 1300 is outside the declared range "
                              "[320..1280]") != std::string::npos);
  CHECK(p.check("x", Shape{1, 3, 320, 1280}).is_ok());
  CHECK_FALSE(p.check("x", Shape{1, 3, 320}).is_ok());  // rank
  const Status off_step = profile("x:[16..64:8]").check("x", Shape{20});
  CHECK(off_step.message().find("not on the declared step") != std::string::npos);

  auto session = create("dyn_fpn", options_for(kFpnRange, PoolMode::kDynamic));
  const Shape too_tall{1, 3, 72, 64};
  std::vector<float> input = pattern(too_tall);
  const TensorView in[] = {view_of(input, too_tall)};
  auto infos = session->output_infos(in);
  REQUIRE_FALSE(infos.has_value());
  CHECK(infos.status().message().find("input 'input' axis 2: 72 is outside the declared range "
                                      "[16..64:8]") != std::string::npos);
  CHECK(session->stats().cache_misses == 0);
}

// Static mode: planned once at 64x64; every smaller shape is placed by evaluating the top plan's
// symbolic plan (or reuses its offsets) in the one pool allocated at creation, and its outputs
// equal a Session built for that shape exactly.
TEST_CASE("static mode: smaller shapes run in the top-of-range pool, outputs exact") {
  auto session = create("dyn_fpn", options_for(kFpnRange, PoolMode::kStatic));
  const DynamicSessionStats& stats = session->stats();
  REQUIRE(stats.mode == PoolMode::kStatic);
  CHECK(stats.mode_note.empty());
  CHECK(stats.pool_allocations == 1);
  const size_t pool_at_creation = stats.pool_bytes;
  for (const Shape& shape : {Shape{1, 3, 16, 24}, Shape{1, 3, 40, 64}, Shape{1, 3, 64, 64},
                             Shape{1, 3, 32, 16}, Shape{1, 3, 16, 24}}) {
    CAPTURE(shape.to_string());
    CHECK(run_dynamic(*session, shape) == run_fresh("dyn_fpn", "input", shape));
  }
  CHECK(stats.pool_allocations == 1);  // nothing allocated for the pool after creation
  CHECK(stats.pool_growth_events == 0);
  CHECK(stats.pool_bytes == pool_at_creation);
  CHECK(stats.fresh_placements == 1);  // only the top of the range was placed
  CHECK(stats.symbolic_placements + stats.reused_placements >= 4);
  CHECK(stats.symbolic_placements >= 4);  // sizes shrink: every layout fits the top pool
  CHECK(stats.cache_hits >= 2);           // 64x64 (built at creation) and the repeated 16x24
}

// Dynamic mode: the first shape (16x16) is placed by the algorithms and becomes the symbolic
// plan; 32x32, 48x48 and 64x64 are placed by evaluating it (3 symbolic placements, 1 fresh, no
// fallback), each plan verified, with outputs bitwise equal to a Session built for the shape.
// The evaluated pools stay within 1.5x of each shape's lower bound (printed).
TEST_CASE("dynamic mode places new shapes with the symbolic plan, outputs exact") {
  auto session = create("dyn_fpn", options_for(kFpnRange, PoolMode::kDynamic));
  const DynamicSessionStats& stats = session->stats();
  for (int64_t side : {16, 32, 48, 64}) {
    const Shape shape{1, 3, side, side};
    CAPTURE(shape.to_string());
    CHECK(run_dynamic(*session, shape) == run_fresh("dyn_fpn", "input", shape));
    const SpecializationInfo& info = session->last_specialization();
    CHECK(info.symbolic_placement == (side != 16));
    CHECK(info.plan_pool_bytes >= info.plan_lower_bound_bytes);
    CHECK(info.plan_pool_bytes <= info.plan_lower_bound_bytes * 3 / 2);
    MESSAGE(side, "x", side, ": pool ", info.plan_pool_bytes, " B, lower bound ",
            info.plan_lower_bound_bytes, " B");
  }
  CHECK(stats.fresh_placements == 1);
  CHECK(stats.symbolic_placements == 3);
  CHECK(stats.symbolic_fallbacks == 0);
  CHECK(stats.symbolic_note.empty());
}

// A Pad that grows in place in a plain Session keeps its own buffer in a dynamic session (the
// layouts carried between shapes size each buffer by its own value), so static mode keeps its
// one top-of-range pool: no fallback, every other shape placed symbolically, outputs bitwise
// equal to a Session built for the shape (which pads in place).
TEST_CASE("static mode keeps its pool on a model whose Pad grows in place") {
  const std::string path = write_pad_model();
  auto session = create_at(path, options_for("x:1x1x[8..32:8]x[8..32:8]", PoolMode::kStatic));
  const DynamicSessionStats& stats = session->stats();
  CHECK(stats.mode == PoolMode::kStatic);
  CHECK(stats.mode_note.empty());
  for (const Shape& shape : {Shape{1, 1, 8, 16}, Shape{1, 1, 24, 8}, Shape{1, 1, 32, 32}}) {
    CAPTURE(shape.to_string());
    CHECK(run_dynamic(*session, shape) == run_fresh_at(path, "x", shape));
  }
  CHECK(stats.pool_allocations == 1);
  CHECK(stats.fresh_placements == 1);
  CHECK(stats.symbolic_fallbacks == 0);
  std::filesystem::remove(path);
}

// Same with a batch range on the MLP (Gemm chain).
TEST_CASE("static mode over a batch range matches fresh Sessions") {
  auto session = create("mlp", options_for("x:[1..8]x784", PoolMode::kStatic));
  REQUIRE(session->stats().mode == PoolMode::kStatic);
  for (int64_t batch : {3, 1, 8, 5}) {
    const Shape shape{batch, 784};
    CHECK(run_dynamic(*session, shape) == run_fresh("mlp", "x", shape));
  }
  CHECK(session->stats().pool_allocations == 1);
}

// Capacity 2, shapes A B C A: every one is a miss (A was evicted by C), two evictions; then A
// again is a hit. (Each step calls output_infos() then run(): the run() is a hit: 4 hits.)
TEST_CASE("the specialization cache is bounded and least recently used") {
  auto session = create("dyn_fpn", options_for(kFpnRange, PoolMode::kDynamic, 2));
  const Shape a{1, 3, 16, 16}, b{1, 3, 24, 24}, c{1, 3, 32, 32};
  for (const Shape& shape : {a, b, c, a}) run_dynamic(*session, shape);
  const DynamicSessionStats& stats = session->stats();
  CHECK(stats.cache_misses == 4);
  CHECK(stats.cache_evictions == 2);
  CHECK(stats.cache_hits == 4);
  CHECK(session->cached_specializations() == 2);
  run_dynamic(*session, a);
  CHECK(stats.cache_misses == 4);
  CHECK(stats.cache_hits == 6);
  CHECK(session->last_specialization().cache_hit);
}

// Dynamic mode: sizes 16..64 in steps of 8 grow the pool; each growth at least doubles it, so
// growth events stay <= ceil(log2(largest plan / smallest plan)) (about log2(64*64 / (16*16)) =
// 4). trim() after the big shape is evicted
// shrinks the pool to what the small cached shape needs, and that shape still runs.
TEST_CASE("dynamic mode grows geometrically and trim() shrinks the pool") {
  auto session = create("dyn_fpn", options_for(kFpnRange, PoolMode::kDynamic, 1));
  const DynamicSessionStats& stats = session->stats();
  CHECK(stats.pool_allocations == 0);  // nothing until the first shape
  size_t smallest_plan = 0;
  size_t largest_plan = 0;
  for (int64_t side = 16; side <= 64; side += 8) {
    const Shape shape{1, 3, side, side};
    CHECK(run_dynamic(*session, shape) == run_fresh("dyn_fpn", "input", shape));
    const size_t plan_bytes = session->last_specialization().plan_pool_bytes;
    if (side == 16) smallest_plan = plan_bytes;
    largest_plan = std::max(largest_plan, plan_bytes);
    CHECK(stats.pool_bytes >= plan_bytes);
  }
  const double range_log2 = std::log2(static_cast<double>(largest_plan) / smallest_plan);
  MESSAGE("growth events ", stats.pool_growth_events, ", log2(plan range) ", range_log2);
  CHECK(stats.pool_growth_events >= 1);
  CHECK(stats.pool_growth_events <= static_cast<int64_t>(std::ceil(range_log2)));
  const size_t grown = stats.pool_bytes;
  const Shape small{1, 3, 16, 16};
  const std::vector<float> expected = run_dynamic(*session, small);  // evicts 64x64 (capacity 1)
  REQUIRE(session->trim().is_ok());
  CHECK(stats.pool_trims == 1);
  CHECK(stats.pool_bytes < grown);
  CHECK(stats.pool_bytes == (smallest_plan + 255) / 256 * 256);
  CHECK(run_dynamic(*session, small) == expected);  // re-bound into the smaller pool
  CHECK(stats.peak_pool_bytes == grown);
}

// The monotonicity check behind static mode: a plan made at 32x32 cannot hold the tensors of
// 64x64 (each is 4x larger), and reuse_top_plan says which tensor and by how much; the other
// way round (top 64x64, shape 32x32) it reuses every offset and verifies.
TEST_CASE("reuse_top_plan rejects a tensor larger than its slot") {
  struct Loaded {
    std::shared_ptr<const Model> model;
    NodeMemoryNeeds needs;
    Plan plan;
  };
  auto load = [](int64_t side) {
    LoadOptions options;
    options.input_shapes.emplace_back("input", std::vector<int64_t>{1, 3, side, side});
    auto model = Model::load(model_path("dyn_fpn"), options);
    REQUIRE(model.has_value());
    auto backend = create_backend(SessionOptions{});
    REQUIRE(backend.has_value());
    Loaded loaded{*model, {}, {}};
    REQUIRE((*backend)->prepare(**model, loaded.needs).is_ok());
    auto plan = build_plan((*model)->graph(), PlanOptions{}, loaded.needs);
    REQUIRE(plan.has_value());
    loaded.plan = std::move(plan).value();
    return loaded;
  };
  const Loaded small = load(32);
  const Loaded large = load(64);
  auto too_small = reuse_top_plan(small.plan, large.model->graph(), large.needs);
  REQUIRE_FALSE(too_small.has_value());
  CHECK(too_small.status().message().find("more than its slot") != std::string::npos);
  auto reused = reuse_top_plan(large.plan, small.model->graph(), small.needs);
  REQUIRE_MESSAGE(reused.has_value(), reused.status().message());
  CHECK(reused->pool_bytes == large.plan.pool_bytes);
  CHECK(reused->verify().is_ok());
  for (const PlannedTensor& tensor : reused->tensors) {
    if (tensor.alias_of >= 0 || tensor.workspace_node >= 0) continue;
    const int32_t top = large.plan.find_tensor(large.model->graph().find_value(tensor.name));
    REQUIRE(top >= 0);
    CHECK(tensor.offset == large.plan.tensors[static_cast<size_t>(top)].offset);
    CHECK(tensor.bytes <= large.plan.tensors[static_cast<size_t>(top)].bytes);
  }
}

// A kernel may allow an output to take over an input's bytes at one shape and not at another (a
// Conv's path, chosen by shape, decides whether it may overwrite its residual): reusing the top
// plan checks every alias against this shape's kernels and refuses one they no longer allow.
TEST_CASE("reuse_top_plan refuses an alias this shape's kernels do not allow") {
  LoadOptions options;
  options.input_shapes.emplace_back("input", std::vector<int64_t>{1, 3, 64, 64});
  auto model = Model::load(model_path("dyn_fpn"), options);
  REQUIRE(model.has_value());
  auto backend = create_backend(SessionOptions{});
  REQUIRE(backend.has_value());
  NodeMemoryNeeds needs;
  REQUIRE((*backend)->prepare(**model, needs).is_ok());
  auto plan = build_plan((*model)->graph(), PlanOptions{}, needs);
  REQUIRE(plan.has_value());
  bool in_place = false;
  for (const NodeAliasing& aliasing : needs.aliasing) in_place |= aliasing.in_place_inputs != 0;
  REQUIRE(in_place);
  auto same = reuse_top_plan(*plan, (*model)->graph(), needs);
  REQUIRE_MESSAGE(same.has_value(), same.status().message());
  NodeMemoryNeeds no_in_place = needs;
  for (NodeAliasing& aliasing : no_in_place.aliasing) aliasing.in_place_inputs = 0;
  auto refused = reuse_top_plan(*plan, (*model)->graph(), no_in_place);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.status().message().find("at the top of the range but not at this shape") !=
        std::string::npos);
}

// place_symbolically at the source's own shape gives back the source's offsets (best-fit
// placement: exact at the source sizes); at 32x32 from a 64x64 source every tensor shrinks and
// the plan verifies with a pool no larger; a graph of another model is refused, naming why.
TEST_CASE("place_symbolically: exact at the source shape, refuses another structure") {
  auto load = [](const char* model, const char* input, std::vector<int64_t> dims) {
    LoadOptions options;
    options.input_shapes.emplace_back(input, dims);
    auto loaded = Model::load(model_path(model), options);
    REQUIRE(loaded.has_value());
    auto backend = create_backend(SessionOptions{});
    REQUIRE(backend.has_value());
    NodeMemoryNeeds needs;
    REQUIRE((*backend)->prepare(**loaded, needs).is_ok());
    return std::make_pair(*loaded, needs);
  };
  const auto [top_model, top_needs] = load("dyn_fpn", "input", {1, 3, 64, 64});
  auto top_plan = build_plan(top_model->graph(), PlanOptions{}, top_needs);
  REQUIRE(top_plan.has_value());
  auto source = SymbolicSource::create(*top_plan);
  REQUIRE(source.has_value());
  CHECK(source->symbolic.exact_at_source());
  auto same = place_symbolically(*source, top_model->graph(), top_needs);
  REQUIRE_MESSAGE(same.has_value(), same.status().message());
  CHECK(same->pool_bytes == top_plan->pool_bytes);
  for (size_t i = 0; i < same->tensors.size(); ++i) {
    CHECK(same->tensors[i].offset == top_plan->tensors[i].offset);
  }
  const auto [small_model, small_needs] = load("dyn_fpn", "input", {1, 3, 32, 32});
  auto small = place_symbolically(*source, small_model->graph(), small_needs);
  REQUIRE_MESSAGE(small.has_value(), small.status().message());
  CHECK(small->verify().is_ok());
  CHECK(small->pool_bytes <= top_plan->pool_bytes);
  CHECK(small->algorithm.rfind("symbolic:", 0) == 0);
  const auto [mlp_model, mlp_needs] = load("mlp", "x", {2, 784});
  auto other = place_symbolically(*source, mlp_model->graph(), mlp_needs);
  REQUIRE_FALSE(other.has_value());
  CHECK(other.status().message().find("nodes") != std::string::npos);
}

// data_dependent_heads (models/data_dependent.py) at its declared shapes: NonZero's output is
// planned at [2, 64] and output_shape() gives each run's actual shape (none before a run).
TEST_CASE("output_shape gives the actual shape of an output of data-dependent size") {
  auto session = create("data_dependent_heads", options_for("x:4x16", PoolMode::kStatic));
  CHECK_FALSE(session->output_shape(0).has_value());
  std::vector<float> x(64, 0.0f);
  x[3] = 1.0f;
  x[40] = -2.0f;
  std::vector<float> boxes(160, 0.5f);
  std::vector<float> scores(120, 0.0f);
  const std::vector<TensorView> inputs{view_of(x, Shape{4, 16}), view_of(boxes, Shape{1, 40, 4}),
                                       view_of(scores, Shape{1, 3, 40})};
  auto infos = session->output_infos(inputs);
  REQUIRE_MESSAGE(infos.has_value(), infos.status().to_string());
  std::vector<std::vector<std::byte>> buffers;
  std::vector<TensorView> outputs;
  for (const TensorInfo& info : *infos) {
    buffers.emplace_back(static_cast<size_t>(info.shape.element_count()) * dtype_size(info.dtype));
    outputs.push_back(TensorView{buffers.back().data(), info.dtype, info.shape, Device{}});
  }
  const Status status = session->run(inputs, outputs);
  REQUIRE_MESSAGE(status.is_ok(), status.to_string());
  REQUIRE((*infos)[0].name == "nonzero");
  CHECK((*infos)[0].shape == Shape{2, 64});
  auto shape = session->output_shape(0);
  REQUIRE(shape.has_value());
  CHECK(*shape == Shape{2, 1});  // Relu(x) is nonzero at (0, 3) only
  const auto* coordinates = reinterpret_cast<const int64_t*>(buffers[0].data());
  CHECK(coordinates[0] == 0);
  CHECK(coordinates[1] == 3);
}
