// What run, bench and compare feed a model: --inputs files, --inputs-dir, or seeded random data;
// and the host tensors its outputs are copied into.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "onepool/onepool.h"
#include "planner/core/graph.h"
#include "runtime/host_outputs.h"
#include "tools/onepool/cli_common.h"

namespace onepool::cli {

struct InputFlags {
  std::vector<std::string> inputs;  // name:file (repeatable)
  std::string inputs_dir;           // ONNX layout: DIR/input_0.pb, ...
  uint64_t seed = 0;
  std::string val_range;  // "lo,hi"; empty: 0,1 for floats, 0,10 for integers
};

/// Adds --inputs, --inputs-dir, --seed and --val-range to a subcommand.
void add_input_flags(CLI::App& command, InputFlags& flags);

/// One tensor per model input, in model input order: from --inputs-dir, then --inputs files,
/// the rest seeded random data. Errors name the input or file at fault.
Expected<std::vector<HostTensor>> gather_inputs(const Model& model, const InputFlags& flags);

/// The model flags with every `--shapes` range replaced by its top (a plain run, bench or compare
/// runs there; a note says so on stdout).
Expected<ModelFlags> with_ranges_at_top(const ModelFlags& flags);

/// Host views of `tensors` (they must outlive the views).
std::vector<TensorView> views_of(std::vector<HostTensor>& tensors);

/// One zeroed host tensor per model output.
std::vector<HostTensor> make_output_tensors(const Model& model);

/// One line per output: name, dtype, shape, min/max/mean and the first `values` values.
void print_output_summaries(const Model& model, const std::vector<HostTensor>& outputs, int values);

}  // namespace onepool::cli
