// CudaAllocator: cached device memory of one CUDA device.
#include "nn/cuda/CudaAllocator.h"

#include <cstdio>

#include "nn/cuda/Check.h"
#include "nn/cuda/DeviceGuard.h"
#include "nn/cuda/HostWait.h"
#include "nn/tensor/Error.h"

namespace nn {

namespace {
constexpr size_t kUnit = 512;
}

CudaAllocator::CudaAllocator(int device) : device_(device) {}

CudaAllocator::~CudaAllocator() {
  // The backend that owns the allocators lives until the process ends (see
  // CudaBackend::instance), so this runs only for allocators of tests; the driver frees
  // whatever is left at exit in any case.
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    releaseCacheLocked();
  } catch (const Error& e) {
    std::fprintf(stderr, "CudaAllocator: releasing the cache of cuda:%d failed: %s\n", device_, e.what());
  }
}

size_t CudaAllocator::roundedSize(size_t bytes) { return bytes == 0 ? kUnit : (bytes + kUnit - 1) / kUnit * kUnit; }

void* CudaAllocator::allocate(size_t bytes) {
  const size_t size = roundedSize(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  // The smallest cached block that fits, unless it is twice the size or more: a large block
  // serving a small request would be held out of reach of the large requests it fits.
  const auto it = free_.lower_bound(size);
  if (it != free_.end() && it->first < 2 * size) {
    void* ptr = it->second;
    const size_t blockSize = it->first;
    free_.erase(it);
    bytesCached_ -= blockSize;
    used_.emplace(ptr, blockSize);
    bytesInUse_ += blockSize;
    return ptr;
  }
  DeviceGuard guard(device_);
  void* ptr = nullptr;
  cudaError_t status = cudaMalloc(&ptr, size);
  if (status == cudaErrorMemoryAllocation && !free_.empty()) {
    // Out of memory is not a sticky error: clear it, give the cache back and try again.
    cudaGetLastError();
    releaseCacheLocked();
    status = cudaMalloc(&ptr, size);
  }
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    NN_CHECK(false, "CudaAllocator: out of memory on cuda:" << device_ << " allocating " << size << " bytes ("
                                                            << bytesInUse_ << " bytes in use by tensors)");
  }
  CUDA_CHECK(status);
  ++mallocs_;
  used_.emplace(ptr, size);
  bytesInUse_ += size;
  return ptr;
}

void CudaAllocator::deallocate(void* ptr) noexcept {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = used_.find(ptr);
  if (it == used_.end()) {
    // Only a bug in the library gets here; a destructor cannot throw, so say it and keep going.
    std::fprintf(stderr, "CudaAllocator: cuda:%d was asked to free %p, which it did not allocate\n", device_, ptr);
    return;
  }
  const size_t size = it->second;
  used_.erase(it);
  bytesInUse_ -= size;
  free_.emplace(size, ptr);
  bytesCached_ += size;
}

void CudaAllocator::releaseCache() {
  std::lock_guard<std::mutex> lock(mutex_);
  releaseCacheLocked();
}

void CudaAllocator::releaseCacheLocked() {
  if (free_.empty()) return;
  DeviceGuard guard(device_);
  // Blocks just freed may still be read or written by queued work: wait for it first.
  cuda::waitForDevice();
  while (!free_.empty()) {
    const auto it = free_.begin();
    CUDA_CHECK(cudaFree(it->second));
    bytesCached_ -= it->first;
    free_.erase(it);
  }
}

int64_t CudaAllocator::mallocCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return mallocs_;
}

size_t CudaAllocator::bytesInUse() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytesInUse_;
}

size_t CudaAllocator::bytesCached() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytesCached_;
}

}  // namespace nn
