// LSTM, GRU and RNN CPU kernels against a plain scalar reference written here (dot products in
// double, one time step and one batch row at a time, straight from the ONNX equations): each
// direction, both layouts, sequence_lens shorter than seq_length (Y zero past a row's length),
// initial states, peepholes, clip, GRU linear_before_reset 0 and 1, activations with alpha/beta,
// omitted outputs, NaN propagation, bad nodes, and zero allocations in run().
#include "runtime/cpu/kernels/recurrent.h"

#include <cblas.h>
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "common/allocation_counter.h"
#include "runtime/kernel_test_util.h"

namespace onepool::testing {
namespace {

// ---- The scalar reference ----

struct RefActivation {
  std::string name;
  double alpha = 0.0;
  double beta = 0.0;
};

double ref_activate(const RefActivation& a, double x) {
  if (a.name == "Sigmoid") return 1.0 / (1.0 + std::exp(-x));
  if (a.name == "Tanh") return std::tanh(x);
  if (a.name == "Relu") return x > 0 ? x : 0.0;
  if (a.name == "LeakyRelu") return x >= 0 ? x : a.alpha * x;
  if (a.name == "HardSigmoid") return std::min(1.0, std::max(0.0, a.alpha * x + a.beta));
  if (a.name == "ScaledTanh") return a.alpha * std::tanh(a.beta * x);
  if (a.name == "Affine") return a.alpha * x + a.beta;
  if (a.name == "Elu") return x >= 0 ? x : a.alpha * (std::exp(x) - 1.0);
  if (a.name == "Softsign") return x / (1.0 + std::fabs(x));
  if (a.name == "Softplus") return std::log(1.0 + std::exp(x));
  if (a.name == "ThresholdedRelu") return x >= a.alpha ? x : 0.0;
  FAIL("unknown activation ", a.name);
  return 0.0;
}

// One recurrent node and its data. Defaults: forward, layout 0, every input present.
struct Problem {
  std::string op = "LSTM";
  int64_t seq = 3;
  int64_t batch = 2;
  int64_t input = 3;
  int64_t hidden = 4;
  std::string direction = "forward";
  int64_t layout = 0;
  std::optional<float> clip;
  int64_t linear_before_reset = 0;
  int64_t input_forget = 0;
  std::vector<std::string> activations;  // the attribute; empty: not set
  std::vector<float> alphas;
  std::vector<float> betas;
  std::vector<RefActivation> ref_activations;  // per direction, what the reference applies
  bool bias = true;
  bool initial_h = true;
  bool initial_c = true;
  bool peepholes = false;
  std::vector<int32_t> sequence_lens;  // empty: omitted
  bool want_y = true;
  bool want_y_h = true;
  bool want_y_c = true;
  uint32_t seed = 1;

  int64_t dirs() const { return direction == "bidirectional" ? 2 : 1; }
  int64_t gates() const { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }
  Shape x_shape() const { return layout ? Shape{batch, seq, input} : Shape{seq, batch, input}; }
  Shape state_shape() const {
    return layout ? Shape{batch, dirs(), hidden} : Shape{dirs(), batch, hidden};
  }
  Shape y_shape() const {
    return layout ? Shape{batch, seq, dirs(), hidden} : Shape{seq, dirs(), batch, hidden};
  }
  int64_t x_index(int64_t t, int64_t b, int64_t k) const {
    return layout ? (b * seq + t) * input + k : (t * batch + b) * input + k;
  }
  int64_t y_index(int64_t t, int64_t d, int64_t b, int64_t j) const {
    return layout ? ((b * seq + t) * dirs() + d) * hidden + j
                  : ((t * dirs() + d) * batch + b) * hidden + j;
  }
  int64_t state_index(int64_t d, int64_t b, int64_t j) const {
    return layout ? (b * dirs() + d) * hidden + j : (d * batch + b) * hidden + j;
  }
  std::vector<RefActivation> activations_for(int64_t d) const {
    if (!ref_activations.empty()) {
      const size_t per = ref_activations.size() / static_cast<size_t>(dirs());
      return {ref_activations.begin() + static_cast<int64_t>(per) * d,
              ref_activations.begin() + static_cast<int64_t>(per) * (d + 1)};
    }
    if (op == "LSTM") return {{"Sigmoid"}, {"Tanh"}, {"Tanh"}};
    if (op == "GRU") return {{"Sigmoid"}, {"Tanh"}};
    return {{"Tanh"}};
  }
};

struct Data {
  std::vector<float> x, w, r, b, h0, c0, p;
};

Data make_data(const Problem& pr) {
  const int64_t gh = pr.gates() * pr.hidden;
  Data data;
  data.x = random_values(pr.seq * pr.batch * pr.input, pr.seed);
  data.w = random_values(pr.dirs() * gh * pr.input, pr.seed + 1);
  data.r = random_values(pr.dirs() * gh * pr.hidden, pr.seed + 2);
  data.b = random_values(pr.dirs() * 2 * gh, pr.seed + 3);
  data.h0 = random_values(pr.dirs() * pr.batch * pr.hidden, pr.seed + 4);
  data.c0 = random_values(pr.dirs() * pr.batch * pr.hidden, pr.seed + 5);
  data.p = random_values(pr.dirs() * 3 * pr.hidden, pr.seed + 6);
  return data;
}

struct Outputs {
  std::vector<float> y, y_h, y_c;
};

// Straight from the ONNX equations. W row g*H+j of direction d holds gate g's weights for unit j.
Outputs reference(const Problem& pr, const Data& data) {
  const int64_t H = pr.hidden;
  const int64_t gh = pr.gates() * H;
  Outputs out;
  out.y.assign(static_cast<size_t>(pr.seq * pr.dirs() * pr.batch * H), 0.0f);
  out.y_h.assign(static_cast<size_t>(pr.dirs() * pr.batch * H), 0.0f);
  out.y_c = out.y_h;
  const auto clip = [&](double v) {
    return pr.clip ? std::min<double>(*pr.clip, std::max<double>(-*pr.clip, v)) : v;
  };
  for (int64_t d = 0; d < pr.dirs(); ++d) {
    const bool backward = pr.direction == "reverse" || d == 1;
    const std::vector<RefActivation> act = pr.activations_for(d);
    const float* w = data.w.data() + d * gh * pr.input;
    const float* r = data.r.data() + d * gh * H;
    const float* wb = data.b.data() + d * 2 * gh;
    const float* rb = wb + gh;
    const float* p = data.p.data() + d * 3 * H;
    for (int64_t b = 0; b < pr.batch; ++b) {
      const int64_t length = pr.sequence_lens.empty() ? pr.seq : pr.sequence_lens[b];
      std::vector<double> h(H, 0.0), c(H, 0.0);
      for (int64_t j = 0; j < H; ++j) {
        if (pr.initial_h) h[j] = data.h0[pr.state_index(d, b, j)];
        if (pr.initial_c) c[j] = data.c0[pr.state_index(d, b, j)];
      }
      // x_part(g, j) = Xt*Wg^T + Wbg; h_part(g, j) = Ht-1*Rg^T (no bias)
      for (int64_t step = 0; step < length; ++step) {
        const int64_t t = backward ? length - 1 - step : step;
        const auto x_part = [&](int64_t g, int64_t j) {
          double s = pr.bias ? wb[g * H + j] : 0.0;
          for (int64_t k = 0; k < pr.input; ++k) {
            s += double{data.x[pr.x_index(t, b, k)]} * w[(g * H + j) * pr.input + k];
          }
          return s;
        };
        const auto h_part = [&](int64_t g, int64_t j, const std::vector<double>& state) {
          double s = 0.0;
          for (int64_t k = 0; k < H; ++k) s += state[k] * r[(g * H + j) * H + k];
          return s;
        };
        const auto rbias = [&](int64_t g, int64_t j) {
          return pr.bias ? double{rb[g * H + j]} : 0.0;
        };
        std::vector<double> next(H);
        if (pr.op == "RNN") {
          for (int64_t j = 0; j < H; ++j) {
            next[j] = ref_activate(act[0], clip(x_part(0, j) + h_part(0, j, h) + rbias(0, j)));
          }
        } else if (pr.op == "GRU") {  // gates z, r, h
          std::vector<double> z(H), rr(H), rh(H);
          for (int64_t j = 0; j < H; ++j) {
            z[j] = ref_activate(act[0], clip(x_part(0, j) + h_part(0, j, h) + rbias(0, j)));
            rr[j] = ref_activate(act[0], clip(x_part(1, j) + h_part(1, j, h) + rbias(1, j)));
            rh[j] = rr[j] * h[j];
          }
          for (int64_t j = 0; j < H; ++j) {
            const double pre = pr.linear_before_reset
                                   ? x_part(2, j) + rr[j] * (h_part(2, j, h) + rbias(2, j))
                                   : x_part(2, j) + h_part(2, j, rh) + rbias(2, j);
            const double hh = ref_activate(act[1], clip(pre));
            next[j] = (1.0 - z[j]) * hh + z[j] * h[j];
          }
        } else {  // LSTM gates i, o, f, c; peepholes i, o, f
          for (int64_t j = 0; j < H; ++j) {
            const double peep_i = pr.peepholes ? p[j] * c[j] : 0.0;
            const double peep_f = pr.peepholes ? p[2 * H + j] * c[j] : 0.0;
            const double i =
                ref_activate(act[0], clip(x_part(0, j) + h_part(0, j, h) + rbias(0, j) + peep_i));
            const double f = pr.input_forget
                                 ? 1.0 - i
                                 : ref_activate(act[0], clip(x_part(2, j) + h_part(2, j, h) +
                                                             rbias(2, j) + peep_f));
            const double cc =
                ref_activate(act[1], clip(x_part(3, j) + h_part(3, j, h) + rbias(3, j)));
            const double c_new = f * c[j] + i * cc;
            const double peep_o = pr.peepholes ? p[H + j] * c_new : 0.0;
            const double o =
                ref_activate(act[0], clip(x_part(1, j) + h_part(1, j, h) + rbias(1, j) + peep_o));
            next[j] = o * ref_activate(act[2], c_new);
            c[j] = c_new;  // c[j] is only read for unit j above
          }
        }
        h = next;
        for (int64_t j = 0; j < H; ++j) out.y[pr.y_index(t, d, b, j)] = static_cast<float>(h[j]);
      }
      for (int64_t j = 0; j < H && length > 0; ++j) {
        out.y_h[pr.state_index(d, b, j)] = static_cast<float>(h[j]);
        out.y_c[pr.state_index(d, b, j)] = static_cast<float>(c[j]);
      }
    }
  }
  return out;
}

// ---- Running the kernel ----

AttributeMap attributes_of(const Problem& pr) {
  AttributeMap attributes;
  attributes.set("hidden_size", int_attr(pr.hidden));
  attributes.set("direction", string_attr(pr.direction));
  if (pr.layout) attributes.set("layout", int_attr(pr.layout));
  if (pr.clip) attributes.set("clip", float_attr(*pr.clip));
  if (pr.op == "GRU") attributes.set("linear_before_reset", int_attr(pr.linear_before_reset));
  if (pr.input_forget) attributes.set("input_forget", int_attr(pr.input_forget));
  if (!pr.activations.empty()) {
    Attribute names;
    names.kind = Attribute::Kind::kStrings;
    names.strings = pr.activations;
    attributes.set("activations", names);
  }
  if (!pr.alphas.empty()) attributes.set("activation_alpha", floats_attr(pr.alphas));
  if (!pr.betas.empty()) attributes.set("activation_beta", floats_attr(pr.betas));
  return attributes;
}

std::vector<std::optional<TestInput>> inputs_of(const Problem& pr, const Data& data) {
  const int64_t gh = pr.gates() * pr.hidden;
  std::vector<std::optional<TestInput>> inputs;
  inputs.push_back(f32(pr.x_shape(), data.x));
  inputs.push_back(f32({pr.dirs(), gh, pr.input}, data.w, true));
  inputs.push_back(f32({pr.dirs(), gh, pr.hidden}, data.r, true));
  inputs.push_back(pr.bias ? std::optional<TestInput>(f32({pr.dirs(), 2 * gh}, data.b, true))
                           : std::nullopt);
  if (pr.sequence_lens.empty()) {
    inputs.push_back(std::nullopt);
  } else {
    inputs.push_back(TestInput{make_host_tensor(DType::kInt32, Shape{pr.batch}, pr.sequence_lens)});
  }
  inputs.push_back(pr.initial_h ? std::optional<TestInput>(f32(pr.state_shape(), data.h0))
                                : std::nullopt);
  if (pr.op == "LSTM") {
    inputs.push_back(pr.initial_c ? std::optional<TestInput>(f32(pr.state_shape(), data.c0))
                                  : std::nullopt);
    inputs.push_back(pr.peepholes
                         ? std::optional<TestInput>(f32({pr.dirs(), 3 * pr.hidden}, data.p, true))
                         : std::nullopt);
  }
  return inputs;
}

struct KernelRun {
  Outputs outputs;
  size_t workspace_bytes = 0;
  size_t workspace_preferred_bytes = 0;
  long allocations = -1;
};

// The workspace a run is granted: the declared least (a projection window of 64 / batch steps,
// at least 1), the preferred size (every step at once), or halfway (windows that split the
// sequence unevenly).
enum class Grant { kLeast, kHalfway, kPreferred };

// Prepares the node and runs it twice, the second time with the workspace granted as `grant`
// says and filled with NaN bytes (a kernel reading scratch it did not write shows NaN), outputs
// filled with garbage, omitted outputs as null views, and the heap allocations of run() counted.
Expected<KernelRun> run_kernel(const Problem& pr, const Data& data, Grant grant = Grant::kLeast) {
  const std::vector<bool> wanted = {pr.want_y, pr.want_y_h, pr.want_y_c};
  std::vector<OutputSpec> specs = {{DType::kFloat32, pr.y_shape()},
                                   {DType::kFloat32, pr.state_shape()}};
  if (pr.op == "LSTM") specs.push_back({DType::kFloat32, pr.state_shape()});
  const auto inputs = inputs_of(pr, data);
  Graph graph = single_node_graph(pr.op, inputs, specs, attributes_of(pr));
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!wanted[i]) graph.nodes[0].outputs[i] = kNoValue;
  }
  graph.rebuild_edges();
  const auto registry = cpu::KernelRegistry::with_all_kernels();
  const cpu::KernelFactory factory = registry.find(pr.op);
  if (factory == nullptr) return make_status(StatusCode::kUnsupported, "no kernel for ", pr.op);
  ONEPOOL_ASSIGN_OR_RETURN(cpu::PreparedKernel prepared,
                           factory(cpu::NodeContext(graph, graph.nodes[0])));
  std::vector<HostTensor> input_copies;
  std::vector<TensorView> in;
  input_copies.reserve(inputs.size());
  for (const auto& input : inputs) {
    if (!input) {
      in.emplace_back();
      continue;
    }
    input_copies.push_back(input->tensor);
    HostTensor& copy = input_copies.back();
    in.push_back(TensorView{copy.data.data(), copy.dtype, copy.shape, Device{}});
  }
  std::vector<std::vector<float>> storage(specs.size());
  std::vector<TensorView> out(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!wanted[i]) continue;
    storage[i].assign(static_cast<size_t>(specs[i].shape.element_count()), 123456.0f);
    out[i] = TensorView{storage[i].data(), DType::kFloat32, specs[i].shape, Device{}};
  }
  // As the CPU backend does: OpenBLAS's own threaded driver allocates at every call.
  openblas_set_num_threads(1);
  const size_t least = prepared.workspace_bytes;
  const size_t preferred = std::max(least, prepared.workspace_preferred_bytes);
  const size_t granted = grant == Grant::kLeast       ? least
                         : grant == Grant::kPreferred ? preferred
                                                      : least + (preferred - least) / 2;
  std::vector<std::byte> workspace(granted, std::byte{0xFF});
  cpu::ThreadPool pool(2);
  cpu::RunContext context;
  context.inputs = in;
  context.outputs = out;
  context.workspace = workspace.data();
  context.workspace_bytes = workspace.size();
  context.threads = &pool;
  // The first run warms up the threads (OpenBLAS sets up per-thread buffers on first use, as
  // in a Session's warm-up); the second, counted run starts again from poisoned memory.
  ONEPOOL_RETURN_IF_ERROR(prepared.kernel->run(context));
  std::fill(workspace.begin(), workspace.end(), std::byte{0xFF});
  for (auto& values : storage) std::fill(values.begin(), values.end(), 123456.0f);
  g_allocations = 0;
  g_counting = true;
  const Status status = prepared.kernel->run(context);
  g_counting = false;
  ONEPOOL_RETURN_IF_ERROR(status);
  KernelRun result;
  result.workspace_bytes = prepared.workspace_bytes;
  result.workspace_preferred_bytes = prepared.workspace_preferred_bytes;
  result.allocations = g_allocations.load();
  result.outputs.y = storage[0];
  result.outputs.y_h = storage[1];
  if (pr.op == "LSTM") result.outputs.y_c = storage[2];
  return result;
}

void check_close(const std::vector<float>& actual, const std::vector<float>& expected,
                 const char* what) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    INFO(what << " element " << i);
    CHECK(actual[i] == doctest::Approx(expected[i]).epsilon(2e-5));
  }
}

// Runs the kernel with each workspace grant and the reference, and compares every requested
// output. The preferred workspace holds seq - min(seq, max(1, 64 / batch)) more projection steps
// than the least, each of batch * gates * hidden floats.
KernelRun check_against_reference(const Problem& pr) {
  const Data data = make_data(pr);
  const Outputs expected = reference(pr, data);
  KernelRun last;
  for (Grant grant : {Grant::kLeast, Grant::kHalfway, Grant::kPreferred}) {
    CAPTURE(static_cast<int>(grant));
    auto run = run_kernel(pr, data, grant);
    REQUIRE_MESSAGE(run.has_value(), run.status().to_string());
    if (pr.want_y) check_close(run->outputs.y, expected.y, "Y");
    if (pr.want_y_h) check_close(run->outputs.y_h, expected.y_h, "Y_h");
    if (pr.op == "LSTM" && pr.want_y_c) check_close(run->outputs.y_c, expected.y_c, "Y_c");
    CHECK(run->allocations == 0);
    const size_t step_bytes = static_cast<size_t>(pr.batch * pr.gates() * pr.hidden) * 4;
    const int64_t least_steps = std::min<int64_t>(pr.seq, std::max<int64_t>(1, 64 / pr.batch));
    CHECK(run->workspace_preferred_bytes - run->workspace_bytes ==
          static_cast<size_t>(pr.seq - least_steps) * step_bytes);
    last = *run;
  }
  return last;
}

// Y entries of (t, d, b) for t >= sequence_lens[b] must be exactly 0.
void check_zero_past_length(const Problem& pr, const std::vector<float>& y) {
  for (int64_t b = 0; b < pr.batch; ++b) {
    for (int64_t t = pr.sequence_lens[b]; t < pr.seq; ++t) {
      for (int64_t d = 0; d < pr.dirs(); ++d) {
        for (int64_t j = 0; j < pr.hidden; ++j) {
          INFO("b=" << b << " t=" << t << " d=" << d << " j=" << j);
          CHECK(y[pr.y_index(t, d, b, j)] == 0.0f);
        }
      }
    }
  }
}

// ---- fast_tanh, the float Tanh of the gates ----

// Within 1e-6 relative (or 1e-7 absolute) of std::tanh over [-12, 12] in steps of 1e-4 (the
// series/quotient switch at |x| = 0.3 included); +-1 at +-Inf; NaN stays NaN.
TEST_CASE("fast_tanh accuracy") {
  double worst = 0.0;
  for (int i = -120000; i <= 120000; ++i) {
    const float x = static_cast<float>(i) * 1e-4f;
    const double exact = std::tanh(static_cast<double>(x));
    const double error = std::fabs(cpu::recurrent::fast_tanh(x) - exact);
    worst = std::max(worst, error / std::max(std::fabs(exact), 0.1));
  }
  CHECK(worst < 1e-6);
  CHECK(cpu::recurrent::fast_tanh(std::numeric_limits<float>::infinity()) == 1.0f);
  CHECK(cpu::recurrent::fast_tanh(-std::numeric_limits<float>::infinity()) == -1.0f);
  CHECK(std::isnan(cpu::recurrent::fast_tanh(std::numeric_limits<float>::quiet_NaN())));
  CHECK(cpu::recurrent::fast_tanh(1e-30f) == 1e-30f);
}

// ---- Hand-computed cases ----

// RNN, hidden 1, input 1, Relu, W = 0.5, R = 1, Wb = 0.1, Rb = 0, X = [1, 2] (seq 2, batch 1):
//   forward:  h0 = relu(0.5 + 0.1) = 0.6, h1 = relu(1.0 + 0.6 + 0.1) = 1.7
//   backward: h1 = relu(1.0 + 0.1) = 1.1, h0 = relu(0.5 + 1.1 + 0.1) = 1.7
// Y [2,2,1,1] = [0.6, 1.7 | 1.7, 1.1]; Y_h = [1.7 (forward last), 1.7 (backward at t=0)].
TEST_CASE("RNN bidirectional by hand") {
  AttributeMap attributes;
  attributes.set("hidden_size", int_attr(1));
  attributes.set("direction", string_attr("bidirectional"));
  Attribute names;
  names.kind = Attribute::Kind::kStrings;
  names.strings = {"Relu", "Relu"};
  attributes.set("activations", names);
  auto result =
      run_single_node("RNN",
                      {f32({2, 1, 1}, {1, 2}), f32({2, 1, 1}, {0.5f, 0.5f}, true),
                       f32({2, 1, 1}, {1, 1}, true), f32({2, 2}, {0.1f, 0.0f, 0.1f, 0.0f}, true)},
                      {{DType::kFloat32, {2, 2, 1, 1}}, {DType::kFloat32, {2, 1, 1}}}, attributes);
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  check_close(values_of<float>((*result)[0]), {0.6f, 1.7f, 1.7f, 1.1f}, "Y");
  check_close(values_of<float>((*result)[1]), {1.7f, 1.7f}, "Y_h");
}

// ---- Against the reference ----

// Bidirectional LSTM with peepholes and initial states, lengths {4, 2, 1} of seq 4: the forward
// direction stops at each row's length and the backward one starts there; Y past a row's length
// is 0, Y_h/Y_c are the states after each row's last step.
TEST_CASE("LSTM bidirectional with sequence_lens and peepholes") {
  Problem pr;
  pr.op = "LSTM";
  pr.seq = 4;
  pr.batch = 3;
  pr.direction = "bidirectional";
  pr.peepholes = true;
  pr.sequence_lens = {4, 2, 1};
  const KernelRun run = check_against_reference(pr);
  check_zero_past_length(pr, run.outputs.y);
  CHECK(run.workspace_bytes > 0);
}

// layout = 1 (batch first) for X, Y, initial states and Y_h/Y_c, bidirectional, with lengths.
TEST_CASE("LSTM layout 1 bidirectional with sequence_lens") {
  Problem pr;
  pr.op = "LSTM";
  pr.layout = 1;
  pr.seq = 5;
  pr.batch = 3;
  pr.direction = "bidirectional";
  pr.sequence_lens = {3, 5, 2};
  const KernelRun run = check_against_reference(pr);
  check_zero_past_length(pr, run.outputs.y);
}

// clip = 0.3 bounds every gate's input, so with weights in [-1, 1) most gates sit on the bound;
// reverse direction, peepholes, and input_forget (f = 1 - i).
TEST_CASE("LSTM clip, reverse, peepholes, input_forget") {
  Problem pr;
  pr.op = "LSTM";
  pr.direction = "reverse";
  pr.clip = 0.3f;
  pr.peepholes = true;
  pr.input_forget = 1;
  check_against_reference(pr);
}

// activations (f, g, h) = (HardSigmoid, ScaledTanh, LeakyRelu) with activation_alpha
// {0.3, 0.7, 0.05} and activation_beta {0.6, 1.5}: each function takes the next alpha/beta it
// needs, in order: HardSigmoid(0.3, 0.6), ScaledTanh(0.7, 1.5), LeakyRelu(0.05).
TEST_CASE("LSTM activations with alpha and beta") {
  Problem pr;
  pr.op = "LSTM";
  pr.activations = {"HardSigmoid", "ScaledTanh", "LeakyRelu"};
  pr.alphas = {0.3f, 0.7f, 0.05f};
  pr.betas = {0.6f, 1.5f};
  pr.ref_activations = {{"HardSigmoid", 0.3, 0.6}, {"ScaledTanh", 0.7, 1.5}, {"LeakyRelu", 0.05}};
  check_against_reference(pr);
}

// No B, no initial states: zeros; X at [seq 6, batch 5]; forward.
TEST_CASE("LSTM without optional inputs") {
  Problem pr;
  pr.op = "LSTM";
  pr.seq = 6;
  pr.batch = 5;
  pr.bias = false;
  pr.initial_h = false;
  pr.initial_c = false;
  check_against_reference(pr);
}

// Outputs omitted in every combination the spec allows: only Y_h; only Y (trailing outputs
// absent); only Y_c.
TEST_CASE("LSTM with omitted outputs") {
  Problem pr;
  pr.op = "LSTM";
  pr.direction = "bidirectional";
  pr.sequence_lens = {2, 3};
  SUBCASE("only Y_h") {
    pr.want_y = false;
    pr.want_y_c = false;
  }
  SUBCASE("only Y") {
    pr.want_y_h = false;
    pr.want_y_c = false;
  }
  SUBCASE("only Y_c") {
    pr.want_y = false;
    pr.want_y_h = false;
  }
  check_against_reference(pr);
}

// GRU with linear_before_reset 0 (h uses (r (.) Ht-1) * Rh^T + Rbh) and 1 (r (.) (Ht-1 * Rh^T +
// Rbh)), bidirectional with lengths, in both layouts. The two settings must also differ.
TEST_CASE("GRU linear_before_reset 0 and 1, bidirectional, sequence_lens, both layouts") {
  for (int64_t layout : {0, 1}) {
    std::vector<float> y_by_setting[2];
    for (int64_t lbr : {0, 1}) {
      CAPTURE(layout);
      CAPTURE(lbr);
      Problem pr;
      pr.op = "GRU";
      pr.seq = 4;
      pr.batch = 3;
      pr.layout = layout;
      pr.direction = "bidirectional";
      pr.linear_before_reset = lbr;
      pr.sequence_lens = {4, 1, 3};
      const KernelRun run = check_against_reference(pr);
      check_zero_past_length(pr, run.outputs.y);
      y_by_setting[lbr] = run.outputs.y;
    }
    CHECK(y_by_setting[0] != y_by_setting[1]);
  }
}

// GRU reverse with clip 0.2 and activations (Sigmoid, Softsign), no bias.
TEST_CASE("GRU clip, reverse, Softsign") {
  Problem pr;
  pr.op = "GRU";
  pr.direction = "reverse";
  pr.clip = 0.2f;
  pr.bias = false;
  pr.activations = {"Sigmoid", "Softsign"};
  pr.ref_activations = {{"Sigmoid"}, {"Softsign"}};
  check_against_reference(pr);
}

// RNN bidirectional, layout 1, with a length-0 row: its Y is all zeros and its Y_h is zero
// (ONNX Runtime's choice), the other rows run normally. Activations differ per direction.
TEST_CASE("RNN layout 1, bidirectional, a zero-length row, per-direction activations") {
  Problem pr;
  pr.op = "RNN";
  pr.layout = 1;
  pr.seq = 4;
  pr.batch = 3;
  pr.direction = "bidirectional";
  pr.sequence_lens = {4, 0, 2};
  pr.activations = {"Tanh", "Elu"};
  pr.alphas = {0.5f};
  pr.ref_activations = {{"Tanh"}, {"Elu", 0.5}};
  const KernelRun run = check_against_reference(pr);
  check_zero_past_length(pr, run.outputs.y);
  for (int64_t d = 0; d < 2; ++d) {
    for (int64_t j = 0; j < pr.hidden; ++j) CHECK(run.outputs.y_h[pr.state_index(d, 1, j)] == 0.0f);
  }
}

// RNN with clip 0.5 and Relu: outputs lie in [0, 0.5].
TEST_CASE("RNN clip with Relu") {
  Problem pr;
  pr.op = "RNN";
  pr.clip = 0.5f;
  pr.activations = {"Relu"};
  pr.ref_activations = {{"Relu"}};
  const KernelRun run = check_against_reference(pr);
  for (float v : run.outputs.y) CHECK((v >= 0.0f && v <= 0.5f));
}

// Sizes large enough for the threaded paths (the GEMMs split across threads and the gate math
// over batch rows): batch 24, hidden 48, input 40, seq 7, bidirectional, all three ops, both
// layouts. The least workspace holds 2 of the 7 steps (64 / 24), halfway 4: the projection runs
// in windows, per time step with layout 1 (batch 24 > window).
TEST_CASE("Larger shapes take the threaded paths and projection windows") {
  for (const std::string op : {"LSTM", "GRU", "RNN"}) {
    for (int64_t layout : {0, 1}) {
      CAPTURE(op);
      CAPTURE(layout);
      Problem pr;
      pr.op = op;
      pr.layout = layout;
      pr.seq = 7;
      pr.batch = 24;
      pr.input = 40;
      pr.hidden = 48;
      pr.direction = "bidirectional";
      pr.peepholes = pr.op == "LSTM";
      pr.sequence_lens.assign(24, 7);
      for (int64_t b = 0; b < 24; b += 3) pr.sequence_lens[b] = static_cast<int32_t>(b % 7);
      check_against_reference(pr);
    }
  }
}

// A sequence of 21 steps with batch 8: the least workspace holds windows of 8 steps ([0,8),
// [8,16), [16,21)), walked forwards and backwards; with layout 1 each batch row's steps are
// projected by one product (batch 8 <= window 8). GRU in both linear_before_reset settings.
TEST_CASE("Long sequences run in projection windows") {
  for (const std::string op : {"LSTM", "GRU", "RNN"}) {
    for (int64_t layout : {0, 1}) {
      CAPTURE(op);
      CAPTURE(layout);
      Problem pr;
      pr.op = op;
      pr.layout = layout;
      pr.seq = 21;
      pr.batch = 8;
      pr.input = 5;
      pr.hidden = 6;
      pr.direction = "bidirectional";
      pr.linear_before_reset = layout;
      pr.sequence_lens = {21, 20, 9, 8, 16, 17, 1, 0};
      const KernelRun run = check_against_reference(pr);
      check_zero_past_length(pr, run.outputs.y);
    }
  }
}

// NaN in X at (t = 1, b = 0) of a forward LSTM: row 0 is NaN from t = 1 on (Y and Y_h), row 1
// stays finite and equal to the reference.
TEST_CASE("NaN propagates through the recurrence") {
  for (const std::string op : {"LSTM", "GRU", "RNN"}) {
    CAPTURE(op);
    Problem pr;
    pr.op = op;
    pr.clip = 2.0f;
    Data data = make_data(pr);
    data.x[pr.x_index(1, 0, 0)] = std::numeric_limits<float>::quiet_NaN();
    auto run = run_kernel(pr, data);
    REQUIRE_MESSAGE(run.has_value(), run.status().to_string());
    const Outputs expected = reference(pr, data);
    for (int64_t t = 0; t < pr.seq; ++t) {
      for (int64_t j = 0; j < pr.hidden; ++j) {
        CAPTURE(t);
        CHECK(std::isnan(run->outputs.y[pr.y_index(t, 0, 0, j)]) == (t >= 1));
        CHECK(run->outputs.y[pr.y_index(t, 0, 1, j)] ==
              doctest::Approx(expected.y[pr.y_index(t, 0, 1, j)]).epsilon(2e-5));
      }
    }
    CHECK(std::isnan(run->outputs.y_h[pr.state_index(0, 0, 0)]));
  }
}

// float64 runs through the double GEMM: an LSTM compared with the reference at 1e-5.
TEST_CASE("LSTM float64") {
  Problem pr;
  pr.op = "LSTM";
  const Data data = make_data(pr);
  const auto to_double = [](const std::vector<float>& v) {
    return std::vector<double>(v.begin(), v.end());
  };
  const auto d64 = [&](Shape shape, const std::vector<float>& v, bool constant = false) {
    return TestInput{make_host_tensor(DType::kFloat64, shape, to_double(v)), constant};
  };
  auto result =
      run_single_node("LSTM",
                      {d64(pr.x_shape(), data.x), d64({1, 16, 3}, data.w, true),
                       d64({1, 16, 4}, data.r, true), d64({1, 32}, data.b, true), std::nullopt,
                       d64(pr.state_shape(), data.h0), d64(pr.state_shape(), data.c0)},
                      {{DType::kFloat64, pr.y_shape()},
                       {DType::kFloat64, pr.state_shape()},
                       {DType::kFloat64, pr.state_shape()}},
                      attributes_of(pr));
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  const Outputs expected = reference(pr, data);
  const std::vector<double> y = values_of<double>((*result)[0]);
  REQUIRE(y.size() == expected.y.size());
  for (size_t i = 0; i < y.size(); ++i) CHECK(y[i] == doctest::Approx(expected.y[i]).epsilon(1e-5));
}

// ---- Bad nodes ----

Status prepare_status(const Problem& pr, const std::function<void(Graph&)>& edit) {
  const Data data = make_data(pr);
  std::vector<OutputSpec> specs = {{DType::kFloat32, pr.y_shape()},
                                   {DType::kFloat32, pr.state_shape()}};
  Graph graph = single_node_graph(pr.op, inputs_of(pr, data), specs, attributes_of(pr));
  edit(graph);
  const auto registry = cpu::KernelRegistry::with_all_kernels();
  auto prepared = registry.find(pr.op)(cpu::NodeContext(graph, graph.nodes[0]));
  return prepared.has_value() ? Status::ok() : prepared.status();
}

// Each malformed node is refused at prepare time with a message naming the tensor and the
// expected vs actual shape or value.
TEST_CASE("Bad recurrent nodes are refused with a clear message") {
  Problem pr;
  pr.op = "GRU";
  SUBCASE("W with the wrong gate count") {
    const Status status = prepare_status(pr, [](Graph& g) {
      g.values[static_cast<size_t>(g.nodes[0].inputs[1])].shape = Shape{1, 8, 3};
    });
    CHECK(status.code() == StatusCode::kInvalidModel);
    CHECK(status.message().find("input_1") != std::string::npos);
    CHECK(status.message().find("expected shape [1,12,3]") != std::string::npos);
    CHECK(status.message().find("got [1,8,3]") != std::string::npos);
  }
  SUBCASE("Y with the wrong shape") {
    const Status status = prepare_status(pr, [](Graph& g) {
      g.values[static_cast<size_t>(g.nodes[0].outputs[0])].shape = Shape{3, 1, 2, 5};
    });
    CHECK(status.code() == StatusCode::kInvalidModel);
    CHECK(status.message().find("expected shape [3,1,2,4]") != std::string::npos);
  }
  SUBCASE("unknown activation") {
    const Status status = prepare_status(pr, [](Graph& g) {
      Attribute names;
      names.kind = Attribute::Kind::kStrings;
      names.strings = {"Sigmoid", "Swish"};
      g.nodes[0].attributes.set("activations", names);
    });
    CHECK(status.code() == StatusCode::kUnsupported);
    CHECK(status.message().find("Swish") != std::string::npos);
  }
  SUBCASE("hidden_size disagrees with R") {
    const Status status =
        prepare_status(pr, [](Graph& g) { g.nodes[0].attributes.set("hidden_size", int_attr(5)); });
    CHECK(status.code() == StatusCode::kInvalidModel);
    CHECK(status.message().find("hidden_size=5") != std::string::npos);
  }
  SUBCASE("bad direction") {
    const Status status = prepare_status(
        pr, [](Graph& g) { g.nodes[0].attributes.set("direction", string_attr("sideways")); });
    CHECK(status.code() == StatusCode::kInvalidModel);
    CHECK(status.message().find("sideways") != std::string::npos);
  }
  SUBCASE("seq_length * batch * gates * hidden overflows") {
    // X [2^40, 2^20, 3] with matching Y, initial_h and Y_h: 2^60 rows of 12 gate values.
    const Status status = prepare_status(pr, [](Graph& g) {
      const int64_t seq = int64_t{1} << 40;
      const int64_t batch = int64_t{1} << 20;
      const auto shape_of = [&](ValueId id) -> Shape& {
        return g.values[static_cast<size_t>(id)].shape;
      };
      shape_of(g.nodes[0].inputs[0]) = Shape{seq, batch, 3};
      shape_of(g.nodes[0].inputs[5]) = Shape{1, batch, 4};
      shape_of(g.nodes[0].outputs[0]) = Shape{seq, 1, batch, 4};
      shape_of(g.nodes[0].outputs[1]) = Shape{1, batch, 4};
    });
    CHECK(status.code() == StatusCode::kOutOfRange);
    CHECK(status.message().find("workspace") != std::string::npos);
  }
}

// A sequence_lens value above seq_length is a run-time error naming the row and the bound.
TEST_CASE("sequence_lens out of range fails at run time") {
  Problem pr;
  pr.op = "RNN";
  pr.sequence_lens = {3, 4};
  auto run = run_kernel(pr, make_data(pr));
  REQUIRE_FALSE(run.has_value());
  CHECK(run.status().message().find("sequence_lens[1] = 4") != std::string::npos);
  CHECK(run.status().message().find("[0, 3]") != std::string::npos);
}

}  // namespace
}  // namespace onepool::testing
