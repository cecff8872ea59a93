// DeviceBackend: memory and tensor operations of a non-CPU device type. nn knows only this
// interface; the CUDA implementation lives in cunn and registers itself, so nn never
// includes a CUDA header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "nn/Device.h"

namespace nn {

/// The elements of a strided tensor in row-major order of their indices: element e lies at
/// offset sum_d index_d(e) * strides[d] from the tensor's first element. Dimensions of size 1
/// are left out and dimensions that follow one another in memory are merged, so that a
/// contiguous tensor has one dimension, however many it had.
struct StridedView {
  static constexpr int kMaxDims = 16;
  int dims = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  /// Number of devices of this type; 0 when none can be used.
  virtual int deviceCount() = 0;
  /// Why deviceCount() is 0, as the runtime said it.
  virtual std::string unavailableReason() = 0;
  /// At least `bytes` of memory on `device`; throws nn::Error when there is none.
  virtual void* allocate(const Device& device, size_t bytes) = 0;
  /// Gives back memory from allocate(). Must not throw: Storage's destructor calls it.
  virtual void deallocate(const Device& device, void* ptr) = 0;
  /// Copies `bytes` between any two devices; either side may be a CPU device (host memory).
  /// Returns when host memory on either side may be used again and later operations on
  /// either device see the copied bytes.
  virtual void copy(void* dst, const Device& dstDevice, const void* src, const Device& srcDevice, size_t bytes) = 0;
  /// Sets `count` floats at `ptr` on `device` to `value` (before any later operation there).
  virtual void fill(const Device& device, float* ptr, size_t count, float value) = 0;
  /// Copies `count` elements within one device, element e of `src` (seen as srcView) to
  /// element e of `dst` (seen as dstView). Queued like fill.
  virtual void copyStrided(const Device& device, float* dst, const StridedView& dstView, const float* src,
                           const StridedView& srcView, size_t count) = 0;
  /// dst[i] = math::addScaled(dst[i], alpha, src[i]) for i < count (Tensor::add_). Queued like fill.
  virtual void addScaled(const Device& device, float* dst, const float* src, size_t count, float alpha) = 0;
  /// ptr[i] = math::multiply(ptr[i], value) for i < count (Tensor::mul_). Queued like fill.
  virtual void scale(const Device& device, float* ptr, size_t count, float value) = 0;
  /// dst[i] = math::multiply(dst[i], src[i]) for i < count (Tensor::cmul_). Queued like fill.
  virtual void multiply(const Device& device, float* dst, const float* src, size_t count) = 0;
};

/// cunn calls this once when it is linked in; before that, CUDA devices do not exist.
void registerCudaBackend(DeviceBackend* backend);
/// The registered CUDA backend, or nullptr.
DeviceBackend* cudaBackend();

}  // namespace nn
