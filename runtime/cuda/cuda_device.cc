#include "runtime/cuda/cuda_device.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <string>
#include <utility>

#include "runtime/cuda/cuda_check.h"

namespace onepool::cuda {

namespace {

// "13.0" from 13000.
std::string version_text(int version) {
  return str_cat(version / 1000, ".", (version % 1000) / 10);
}

// What the driver said, for the message: its version (or that none answered) and the error.
std::string driver_text(int driver_version, cudaError_t error) {
  std::string text = driver_version > 0 ? str_cat("driver ", version_text(driver_version), ": ")
                                        : std::string("driver: ");
  return text + cudaGetErrorName(error) + " (" + cudaGetErrorString(error) + ")";
}

}  // namespace

Status check_cuda_device(const Device& device) {
  int runtime_version = 0;
  int driver_version = 0;
  int count = 0;
  (void)cudaRuntimeGetVersion(&runtime_version);
  const cudaError_t driver_error = cudaDriverGetVersion(&driver_version);
  const cudaError_t count_error = cudaGetDeviceCount(&count);
  (void)cudaGetLastError();  // a failed query must not poison later calls on this thread
  const std::string prefix = str_cat(device.to_string(), " requested, but ");
  const std::string runtime = str_cat("CUDA runtime ", version_text(runtime_version));
  if (driver_error != cudaSuccess || count_error != cudaSuccess) {
    const cudaError_t error = count_error != cudaSuccess ? count_error : driver_error;
    return make_status(StatusCode::kDeviceError, prefix, "no CUDA device is usable: ", runtime,
                       ", ", driver_text(driver_version, error));
  }
  if (count == 0) {
    return make_status(StatusCode::kDeviceError, prefix, "no CUDA device is usable: ", runtime,
                       ", driver ", version_text(driver_version), ": 0 devices");
  }
  if (device.index < 0 || device.index >= count) {
    return make_status(StatusCode::kDeviceError, prefix, "only ", count, " CUDA device",
                       count == 1 ? "" : "s", " present (cuda:0",
                       count == 1 ? std::string() : str_cat("..cuda:", count - 1), ")");
  }
  return Status::ok();
}

namespace {

// cuDevicePrimaryCtxGetState through the runtime's driver entry point (no link to libcuda).
using PrimaryCtxGetState = decltype(&cuDevicePrimaryCtxGetState);

// Whether device `index` has an active primary context; true when the driver cannot say, so
// that the caller's device is restored rather than left changed.
bool primary_context_active(int index) {
  void* function = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion("cuDevicePrimaryCtxGetState", &function, 12000,
                                       cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess || function == nullptr) {
    (void)cudaGetLastError();
    return true;
  }
  unsigned int flags = 0;
  int active = 0;
  // The driver's CUdevice for ordinal i is i (cuDeviceGet), and both APIs number the same
  // visible devices.
  const CUdevice device = index;
  if (reinterpret_cast<PrimaryCtxGetState>(function)(device, &flags, &active) != CUDA_SUCCESS) {
    return true;
  }
  return active != 0;
}

}  // namespace

Status ScopedDevice::enter(int index) {
  int current = 0;
  ONEPOOL_CUDA_RETURN_IF_ERROR(cudaGetDevice(&current));
  if (current == index) return Status::ok();
  ONEPOOL_CUDA_RETURN_IF_ERROR(cudaSetDevice(index));
  if (primary_context_active(current)) previous_ = current;
  return Status::ok();
}

ScopedDevice::~ScopedDevice() {
  // A destructor cannot report; a failed restore leaves `index` current, as before this class.
  if (previous_ >= 0 && cudaSetDevice(previous_) != cudaSuccess) (void)cudaGetLastError();
}

Expected<DeviceBuffer> DeviceBuffer::allocate(int index, size_t bytes, const char* what) {
  ScopedDevice scoped;
  ONEPOOL_RETURN_IF_ERROR(scoped.enter(index));
  DeviceBuffer buffer;
  buffer.device_ = index;
  buffer.bytes_ = bytes < 256 ? 256 : bytes;
  void* data = nullptr;
  const cudaError_t error = cudaMalloc(&data, buffer.bytes_);
  if (error != cudaSuccess) {
    (void)cudaGetLastError();
    return make_status(error == cudaErrorMemoryAllocation ? StatusCode::kResourceExhausted
                                                          : StatusCode::kDeviceError,
                       "cannot allocate ", what, " of ", buffer.bytes_, " bytes on cuda:", index,
                       ": ", cudaGetErrorName(error), " (", cudaGetErrorString(error), ")");
  }
  buffer.data_ = static_cast<std::byte*>(data);
  return buffer;
}

DeviceBuffer::~DeviceBuffer() {
  if (data_ == nullptr) return;
  // Errors here cannot be reported (destructor); a failed free leaks device memory only.
  ScopedDevice scoped;
  if (!scoped.enter(device_).is_ok() || cudaFree(data_) != cudaSuccess) (void)cudaGetLastError();
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      device_(other.device_) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this == &other) return *this;
  DeviceBuffer old(std::move(*this));
  data_ = std::exchange(other.data_, nullptr);
  bytes_ = std::exchange(other.bytes_, 0);
  device_ = other.device_;
  return *this;
}

Expected<std::shared_ptr<const DeviceWeights>> upload_weights(const Model& model, int index,
                                                              cudaStream_t stream) {
  ScopedDevice scoped;
  ONEPOOL_RETURN_IF_ERROR(scoped.enter(index));
  auto weights = std::make_shared<DeviceWeights>();
  weights->device = index;
  ONEPOOL_ASSIGN_OR_RETURN(weights->buffer,
                           DeviceBuffer::allocate(index, model.weights_bytes(), "the weights"));
  if (model.weights_bytes() > 0) {
    // Always wait, even after an error: the copy may still read the Model's memory.
    const Status copied =
        ONEPOOL_CUDA_STATUS(cudaMemcpyAsync(weights->buffer.data(), model.weights_base(),
                                            model.weights_bytes(), cudaMemcpyHostToDevice, stream));
    const Status synced = ONEPOOL_CUDA_STATUS(cudaStreamSynchronize(stream));
    ONEPOOL_RETURN_IF_ERROR(copied);
    ONEPOOL_RETURN_IF_ERROR(synced);
  }
  return std::shared_ptr<const DeviceWeights>(std::move(weights));
}

}  // namespace onepool::cuda
