// Device detection and owned device memory for the CUDA backend.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>

#include "onepool/model.h"
#include "onepool/status.h"
#include "onepool/tensor.h"

namespace onepool::cuda {

/// Checks that `device` (cuda:N) is usable: a CUDA driver new enough for this runtime and a
/// device N. kDeviceError otherwise, naming the runtime version, what the driver answered and
/// the device requested; never a fallback.
Status check_cuda_device(const Device& device);

/// Makes a device current for one scope and gives the calling thread its own current device
/// back at the end, so that OnePool never changes which device the caller's CUDA code uses.
/// Nothing happens when the device already is current (the common single-GPU case), and the
/// caller's device is restored only when its primary context exists (restoring would otherwise
/// create a context, and its memory, on a device the caller never used). Not copyable.
///
///   ScopedDevice scoped;
///   ONEPOOL_RETURN_IF_ERROR(scoped.enter(index_));
class ScopedDevice {
 public:
  ScopedDevice() = default;
  ~ScopedDevice();
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

  /// Makes device `index` current; kDeviceError when CUDA refuses.
  Status enter(int index);

 private:
  int previous_ = -1;  // the caller's device, or -1 when nothing needs restoring
};

/// One cudaMalloc, freed (on its device) when destroyed. Move-only.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  /// Allocates `bytes` (at least 256) on device `index`; the pointer is 256-byte aligned.
  static Expected<DeviceBuffer> allocate(int index, size_t bytes, const char* what);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  std::byte* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  std::byte* data_ = nullptr;
  size_t bytes_ = 0;
  int device_ = 0;
};

/// A Model's packed weights resident on one device (same offsets as Model::weight_offset).
/// Uploaded once per Model and device and shared by its Sessions through the Model's
/// DeviceResourceCache (runtime/device_resource_cache.h).
struct DeviceWeights {
  DeviceBuffer buffer;
  int device = 0;
};

/// Uploads model.weights_base()[0, weights_bytes) to device `index`, ordered on `stream` (a
/// non-blocking stream of that device), and waits for it: once this returns, kernels on any
/// stream may read the weights. (A plain cudaMemcpy from pageable memory runs on the legacy
/// default stream, which does not order work on non-blocking streams, and may return before the
/// DMA has finished.)
Expected<std::shared_ptr<const DeviceWeights>> upload_weights(const Model& model, int index,
                                                              cudaStream_t stream);

}  // namespace onepool::cuda
