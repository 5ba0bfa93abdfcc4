// The parity cases of LSTM, GRU and RNN (part of tests/gpu/parity_cases.h): each direction
// (forward, reverse, bidirectional), both layouts, sequence_lens with rows shorter than
// seq_length and a row of length 0, initial states given and omitted, bias omitted, peepholes,
// clip, input_forget, GRU linear_before_reset 0 and 1, all 11 activation functions with
// activation_alpha / activation_beta, and omitted outputs (Y, Y_h, Y_c).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu/test_graphs.h"

namespace onepool::test_graphs::parity_detail {

/// One recurrent node: W, R (and B, P) are weights; X, sequence_lens and the initial states are
/// graph inputs. Omitted: B unless `bias`, sequence_lens when `lens` is empty, the initial states
/// and P unless asked for; outputs Y, Y_h and (LSTM) Y_c unless turned off.
struct RecurrentCase {
  std::string op = "LSTM";
  int64_t seq = 3, batch = 2, input = 3, hidden = 4;
  std::string direction = "forward";
  int64_t layout = 0;
  std::vector<int32_t> lens = {};
  bool bias = true;
  bool initial_h = false;
  bool initial_c = false;
  bool peepholes = false;
  bool y = true, y_h = true, y_c = true;
  uint32_t seed = 200;
};

inline Case recurrent_case(const RecurrentCase& r, Attributes attributes,
                           const std::string& label) {
  const int64_t gates = r.op == "LSTM" ? 4 : (r.op == "GRU" ? 3 : 1);
  const int64_t dirs = r.direction == "bidirectional" ? 2 : 1;
  const int64_t h = r.hidden;
  const Shape x = r.layout ? Shape{r.batch, r.seq, r.input} : Shape{r.seq, r.batch, r.input};
  const Shape state = r.layout ? Shape{r.batch, dirs, h} : Shape{dirs, r.batch, h};
  const Shape y = r.layout ? Shape{r.batch, r.seq, dirs, h} : Shape{r.seq, dirs, r.batch, h};
  const uint32_t s = r.seed;
  std::vector<std::optional<In>> inputs = {rnd(x, s), weight({dirs, gates * h, r.input}, s + 1),
                                           weight({dirs, gates * h, h}, s + 2)};
  inputs.push_back(r.bias ? std::optional<In>(weight({dirs, 2 * gates * h}, s + 3)) : std::nullopt);
  inputs.push_back(r.lens.empty()
                       ? std::nullopt
                       : std::optional<In>(var(tensor_of(DType::kInt32, {r.batch}, r.lens))));
  inputs.push_back(r.initial_h ? std::optional<In>(rnd(state, s + 4)) : std::nullopt);
  if (r.op == "LSTM") {
    inputs.push_back(r.initial_c ? std::optional<In>(rnd(state, s + 5)) : std::nullopt);
    inputs.push_back(r.peepholes ? std::optional<In>(weight({dirs, 3 * h}, s + 6)) : std::nullopt);
  }
  while (!inputs.back()) inputs.pop_back();
  attributes.emplace_back("hidden_size", int_attr(h));
  attributes.emplace_back("direction", string_attr(r.direction));
  if (r.layout != 0) attributes.emplace_back("layout", int_attr(r.layout));
  Case c = make_case(r.op, std::move(inputs), DType::kFloat32, y, std::move(attributes), label);
  const DType omitted = DType::kUndefined;
  c.outputs = {{r.y ? DType::kFloat32 : omitted, y}};
  if (r.y_h || (r.op == "LSTM" && r.y_c)) {
    c.outputs.push_back({r.y_h ? DType::kFloat32 : omitted, state});
  }
  if (r.op == "LSTM" && r.y_c) c.outputs.push_back({DType::kFloat32, state});
  return c;
}

inline void add_recurrent(std::vector<Case>& cases) {
  // LSTM: sequence_lens with a full row, a short one and an empty one; initial states.
  cases.push_back(recurrent_case({.op = "LSTM",
                                  .seq = 5,
                                  .batch = 3,
                                  .input = 4,
                                  .hidden = 6,
                                  .lens = {5, 2, 0},
                                  .initial_h = true,
                                  .initial_c = true},
                                 {}, "forward sequence_lens initial states"));
  cases.push_back(recurrent_case({.op = "LSTM",
                                  .seq = 4,
                                  .input = 3,
                                  .hidden = 5,
                                  .direction = "bidirectional",
                                  .lens = {4, 3},
                                  .initial_h = true,
                                  .initial_c = true,
                                  .peepholes = true,
                                  .seed = 210},
                                 {{"clip", float_attr(0.5f)}}, "bidirectional peepholes clip"));
  // Layout 1, no bias, initial_h without initial_c, input_forget, six non-default functions.
  cases.push_back(recurrent_case({.op = "LSTM",
                                  .seq = 4,
                                  .batch = 3,
                                  .direction = "bidirectional",
                                  .layout = 1,
                                  .lens = {2, 4, 1},
                                  .bias = false,
                                  .initial_h = true,
                                  .seed = 220},
                                 {{"input_forget", int_attr(1)},
                                  {"activations", strings_attr({"HardSigmoid", "Softsign", "Affine",
                                                                "Sigmoid", "ScaledTanh", "Elu"})},
                                  {"activation_alpha", floats_attr({0.3f, 0.7f, 0.9f, 1.1f})},
                                  {"activation_beta", floats_attr({0.4f, 0.1f, 0.8f})}},
                                 "layout 1 input_forget activations"));
  cases.push_back(recurrent_case(
      {.op = "LSTM", .direction = "reverse", .initial_c = true, .y = false, .seed = 230}, {},
      "reverse Y omitted"));
  // GRU: linear_before_reset 0 (two products per step) and 1, reverse, bidirectional layout 1.
  cases.push_back(recurrent_case({.op = "GRU",
                                  .seq = 5,
                                  .batch = 3,
                                  .input = 4,
                                  .hidden = 6,
                                  .lens = {3, 5, 1},
                                  .initial_h = true,
                                  .seed = 240},
                                 {}, "linear_before_reset 0 sequence_lens"));
  cases.push_back(recurrent_case({.op = "GRU",
                                  .seq = 4,
                                  .input = 3,
                                  .hidden = 5,
                                  .direction = "reverse",
                                  .lens = {4, 2},
                                  .initial_h = true,
                                  .seed = 250},
                                 {{"linear_before_reset", int_attr(1)}, {"clip", float_attr(2.0f)}},
                                 "linear_before_reset 1 reverse clip"));
  cases.push_back(recurrent_case(
      {.op = "GRU", .direction = "bidirectional", .layout = 1, .y_h = false, .seed = 260},
      {{"activations", strings_attr({"Sigmoid", "Tanh", "HardSigmoid", "Softplus"})},
       {"activation_alpha", floats_attr({0.25f})},
       {"activation_beta", floats_attr({0.45f})}},
      "bidirectional layout 1 linear_before_reset 0 Y_h omitted"));
  // RNN: LeakyRelu with alpha; ThresholdedRelu and Relu, both directions, Y omitted.
  cases.push_back(recurrent_case(
      {.op = "RNN",
       .seq = 4,
       .batch = 3,
       .hidden = 5,
       .lens = {4, 1, 3},
       .initial_h = true,
       .seed = 270},
      {{"activations", strings_attr({"LeakyRelu"})}, {"activation_alpha", floats_attr({0.2f})}},
      "LeakyRelu sequence_lens"));
  cases.push_back(recurrent_case(
      {.op = "RNN", .input = 2, .hidden = 3, .direction = "bidirectional", .y = false, .seed = 280},
      {{"activations", strings_attr({"ThresholdedRelu", "Relu"})},
       {"activation_alpha", floats_attr({0.1f})}},
      "bidirectional ThresholdedRelu Relu Y omitted"));
}

}  // namespace onepool::test_graphs::parity_detail
