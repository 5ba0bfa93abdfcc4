#include "tools/onepool/tensor_files.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "planner/import/tensor_proto.h"
#include "tools/onepool/npy_header.h"

namespace onepool::cli {

namespace {

Expected<std::string> read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_status(StatusCode::kNotFound, "cannot open '", path, "'");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// NumPy's type codes (after the byte-order character) of the dtypes .npy files can hold.
struct NpyCode {
  DType dtype;
  const char* code;
};
constexpr NpyCode kNpyCodes[] = {
    {DType::kFloat32, "f4"}, {DType::kFloat64, "f8"}, {DType::kFloat16, "f2"},
    {DType::kInt8, "i1"},    {DType::kUInt8, "u1"},   {DType::kInt16, "i2"},
    {DType::kUInt16, "u2"},  {DType::kInt32, "i4"},   {DType::kUInt32, "u4"},
    {DType::kInt64, "i8"},   {DType::kUInt64, "u8"},  {DType::kBool, "b1"},
};

DType dtype_from_npy_descr(const std::string& descr) {
  if (descr.size() < 3 || descr[0] == '>') return DType::kUndefined;
  for (const NpyCode& entry : kNpyCodes) {
    if (descr.compare(1, std::string::npos, entry.code) == 0) return entry.dtype;
  }
  return DType::kUndefined;
}

Expected<Shape> npy_shape(const std::vector<int64_t>& dims, const std::string& path) {
  Expected<Shape> shape = Shape::from_dims(dims);
  if (!shape) return shape.status().with_context(str_cat("'", path, "': .npy shape"));
  return shape;
}

std::string safe_file_name(const std::string& name) {
  std::string safe;
  for (char c : name) safe += (std::isalnum(static_cast<unsigned char>(c)) || c == '-') ? c : '_';
  return safe;
}

}  // namespace

Expected<HostTensor> read_raw_tensor(const std::string& path, const TensorInfo& info) {
  ONEPOOL_ASSIGN_OR_RETURN(std::string bytes, read_file_bytes(path));
  ONEPOOL_ASSIGN_OR_RETURN(size_t expected, tensor_bytes(info.shape, info.dtype));
  if (bytes.size() != expected) {
    return make_status(StatusCode::kInvalidArgument, "input '", info.name, "' from '", path,
                       "': expected ", expected, " bytes (", dtype_name(info.dtype), " ",
                       info.shape.to_string(), "), the file has ", bytes.size());
  }
  HostTensor tensor;
  tensor.dtype = info.dtype;
  tensor.shape = info.shape;
  tensor.data.resize(bytes.size());
  std::memcpy(tensor.data.data(), bytes.data(), bytes.size());
  return tensor;
}

Expected<HostTensor> read_npy_tensor(const std::string& path) {
  ONEPOOL_ASSIGN_OR_RETURN(std::string bytes, read_file_bytes(path));
  const auto bad = [&](const std::string& why) {
    return make_status(StatusCode::kInvalidArgument, "'", path,
                       "' is not a readable .npy file: ", why);
  };
  Expected<NpyLayout> layout = parse_npy_start(bytes);
  if (!layout) return bad(layout.status().message());
  const NpyHeader& header = layout->header;
  if (header.fortran_order) return bad("Fortran order is not supported (save with C order)");
  HostTensor tensor;
  tensor.dtype = dtype_from_npy_descr(header.descr);
  if (tensor.dtype == DType::kUndefined) {
    return bad(str_cat("unsupported dtype '", header.descr, "'"));
  }
  ONEPOOL_ASSIGN_OR_RETURN(tensor.shape, npy_shape(header.shape, path));
  ONEPOOL_ASSIGN_OR_RETURN(size_t expected, tensor_bytes(tensor.shape, tensor.dtype));
  const size_t data_start = layout->data_offset;
  if (bytes.size() - data_start != expected) {
    return bad(str_cat("expected ", expected, " data bytes for ", tensor.shape.to_string(),
                       ", found ", bytes.size() - data_start));
  }
  tensor.data.resize(expected);
  if (expected > 0) std::memcpy(tensor.data.data(), bytes.data() + data_start, expected);
  return tensor;
}

Expected<HostTensor> read_input_file(const std::string& path, const TensorInfo& info) {
  const bool is_npy = path.size() > 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
  if (!is_npy) return read_raw_tensor(path, info);
  ONEPOOL_ASSIGN_OR_RETURN(HostTensor tensor, read_npy_tensor(path));
  if (tensor.dtype != info.dtype || !(tensor.shape == info.shape)) {
    return make_status(StatusCode::kInvalidArgument, "input '", info.name, "' from '", path,
                       "': expected ", dtype_name(info.dtype), " ", info.shape.to_string(),
                       ", the file holds ", dtype_name(tensor.dtype), " ",
                       tensor.shape.to_string());
  }
  return tensor;
}

Expected<std::vector<HostTensor>> read_pb_directory(const std::string& dir,
                                                    const std::string& prefix) {
  std::vector<HostTensor> tensors;
  for (int index = 0;; ++index) {
    const std::string path = str_cat(dir, "/", prefix, index, ".pb");
    if (!std::filesystem::exists(path)) break;
    ONEPOOL_ASSIGN_OR_RETURN(auto named, read_tensor_proto_file(path));
    tensors.push_back(std::move(named.second));
  }
  return tensors;
}

HostTensor empty_tensor(const TensorInfo& info) {
  HostTensor tensor;
  tensor.dtype = info.dtype;
  tensor.shape = info.shape;
  tensor.data.assign(static_cast<size_t>(info.shape.element_count()) * dtype_size(info.dtype),
                     std::byte{0});
  return tensor;
}

namespace {
template <class T>
void fill_uniform(HostTensor& tensor, std::mt19937_64& rng, double low, double high) {
  std::uniform_real_distribution<double> dist(low, high);
  T* data = tensor.as_mutable<T>();
  for (int64_t i = 0; i < tensor.element_count(); ++i) data[i] = static_cast<T>(dist(rng));
}
}  // namespace

HostTensor random_tensor(const TensorInfo& info, uint64_t seed, double low, double high) {
  HostTensor tensor = empty_tensor(info);
  std::mt19937_64 rng(seed);
  switch (info.dtype) {
    case DType::kFloat32:
      fill_uniform<float>(tensor, rng, low, high);
      break;
    case DType::kFloat64:
      fill_uniform<double>(tensor, rng, low, high);
      break;
    case DType::kInt64:
      fill_uniform<int64_t>(tensor, rng, low, high);
      break;
    case DType::kInt32:
      fill_uniform<int32_t>(tensor, rng, low, high);
      break;
    case DType::kInt16:
      fill_uniform<int16_t>(tensor, rng, low, high);
      break;
    case DType::kInt8:
      fill_uniform<int8_t>(tensor, rng, low, high);
      break;
    case DType::kUInt8:
      fill_uniform<uint8_t>(tensor, rng, low, high);
      break;
    case DType::kUInt16:
      fill_uniform<uint16_t>(tensor, rng, low, high);
      break;
    case DType::kUInt32:
      fill_uniform<uint32_t>(tensor, rng, low, high);
      break;
    case DType::kUInt64:
      fill_uniform<uint64_t>(tensor, rng, low, high);
      break;
    case DType::kBool:
      fill_uniform<uint8_t>(tensor, rng, 0.0, 2.0);
      break;
    default:
      break;  // float16 / bfloat16 stay zero
  }
  return tensor;
}

std::string npy_descr(DType dtype) {
  for (const NpyCode& entry : kNpyCodes) {
    if (entry.dtype != dtype) continue;
    return std::string(dtype_size(dtype) == 1 ? "|" : "<") + entry.code;
  }
  return "";
}

namespace {

// Writes one output as dir/file; kInvalidArgument when .npy cannot hold its dtype.
Status write_output_file(const std::string& path, const TensorInfo& info, const HostTensor& tensor,
                         OutputFileFormat format) {
  std::ofstream out(path, std::ios::binary);
  if (format == OutputFileFormat::kNpy) {
    const std::string descr = npy_descr(tensor.dtype);
    if (descr.empty()) {
      return make_status(StatusCode::kInvalidArgument, "output '", info.name,
                         "': ", dtype_name(tensor.dtype),
                         " has no .npy dtype; use --save-format bin");
    }
    out << make_npy_header(descr, std::vector<int64_t>(tensor.shape.begin(), tensor.shape.end()));
  }
  out.write(reinterpret_cast<const char*>(tensor.data.data()),
            static_cast<std::streamsize>(tensor.data.size()));
  if (!out) return make_status(StatusCode::kNotFound, "cannot write '", path, "'");
  return Status::ok();
}

}  // namespace

Status save_outputs(const std::string& dir, const std::vector<TensorInfo>& infos,
                    const std::vector<HostTensor>& tensors, OutputFileFormat format) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return make_status(StatusCode::kNotFound, "cannot create '", dir, "': ", error.message());
  }
  const char* extension = format == OutputFileFormat::kNpy ? ".npy" : ".bin";
  nlohmann::json listing = nlohmann::json::array();
  for (size_t i = 0; i < infos.size(); ++i) {
    const std::string file = str_cat(i, "_", safe_file_name(infos[i].name), extension);
    ONEPOOL_RETURN_IF_ERROR(write_output_file(dir + "/" + file, infos[i], tensors[i], format));
    std::vector<int64_t> dims(tensors[i].shape.begin(), tensors[i].shape.end());
    listing.push_back({{"name", infos[i].name},
                       {"dtype", dtype_name(tensors[i].dtype)},
                       {"shape", dims},
                       {"file", file}});
  }
  std::ofstream manifest(dir + "/outputs.json");
  manifest << listing.dump(2) << "\n";
  if (!manifest) return make_status(StatusCode::kNotFound, "cannot write '", dir, "/outputs.json'");
  return Status::ok();
}

}  // namespace onepool::cli
