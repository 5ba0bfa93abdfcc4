// Running a Session once on float32 inputs filled with a fixed pattern, in tests that compare
// two runs bit for bit.
#pragma once

#include <doctest/doctest.h>

#include <cstddef>
#include <vector>

#include "onepool/onepool.h"

namespace onepool_test {

/// Runs `session` of `model` once, every input (float32) filled with a fixed pattern; returns
/// every output's bytes.
inline std::vector<std::vector<std::byte>> run_on_pattern(const onepool::Model& model,
                                                          onepool::Session& session) {
  std::vector<std::vector<float>> input_data;
  std::vector<onepool::TensorView> inputs;
  for (const auto& info : model.inputs()) {
    REQUIRE(info.dtype == onepool::DType::kFloat32);
    std::vector<float>& data = input_data.emplace_back(info.shape.element_count());
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i % 17) * 0.125f - 1.0f;
    inputs.push_back({data.data(), info.dtype, info.shape, {}});
  }
  std::vector<std::vector<std::byte>> output_data;
  std::vector<onepool::TensorView> outputs;
  for (const auto& info : model.outputs()) {
    std::vector<std::byte>& data =
        output_data.emplace_back(info.shape.element_count() * onepool::dtype_size(info.dtype));
    outputs.push_back({data.data(), info.dtype, info.shape, {}});
  }
  const onepool::Status status = session.run(inputs, outputs);
  REQUIRE_MESSAGE(status.is_ok(), status.to_string());
  return output_data;
}

}  // namespace onepool_test
