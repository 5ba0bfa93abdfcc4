// Reading and writing tensors for the CLI: raw little-endian .bin, NumPy .npy, ONNX .pb, and
// deterministic random data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onepool/model.h"
#include "planner/core/graph.h"

namespace onepool::cli {

/// Reads a raw little-endian file holding exactly one tensor of `info`'s dtype and shape.
Expected<HostTensor> read_raw_tensor(const std::string& path, const TensorInfo& info);
/// Reads a .npy file (version 1–3, little-endian, C order).
Expected<HostTensor> read_npy_tensor(const std::string& path);
/// Reads .npy by extension, otherwise raw; checks dtype and shape against `info`.
Expected<HostTensor> read_input_file(const std::string& path, const TensorInfo& info);
/// Reads dir/input_0.pb, input_1.pb, ... (or output_*.pb with prefix "output_").
Expected<std::vector<HostTensor>> read_pb_directory(const std::string& dir,
                                                    const std::string& prefix);

/// Uniform random data in [low, high) (integers: [low, high) truncated; bool: 0/1).
HostTensor random_tensor(const TensorInfo& info, uint64_t seed, double low, double high);
/// A zeroed tensor of `info`'s dtype and shape.
HostTensor empty_tensor(const TensorInfo& info);

/// The .npy dtype of `dtype` ("<f4", "|u1", "|b1"); "" where NumPy has none (bfloat16).
std::string npy_descr(DType dtype);

enum class OutputFileFormat {
  kNpy,  ///< .npy version 1.0, little-endian, C order: np.load reads it
  kBin,  ///< raw little-endian bytes; outputs.json gives dtype and shape
};

/// Writes dir/<index>_<name>.npy (or .bin) per output plus dir/outputs.json
/// [{name, dtype, shape, file}]. .npy of a dtype NumPy lacks is kInvalidArgument naming the
/// output. (The shape sweep's --sweep-io keeps .bin, which its peer scripts read.)
Status save_outputs(const std::string& dir, const std::vector<TensorInfo>& infos,
                    const std::vector<HostTensor>& tensors,
                    OutputFileFormat format = OutputFileFormat::kBin);

}  // namespace onepool::cli
