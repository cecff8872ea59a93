// CudaAllocator: the caching allocator of one CUDA device. Freed blocks are kept, by size,
// and handed out again, so that a steady training step, which frees and allocates the same
// sizes each time, makes no cudaMalloc (a call that synchronises the device).
//
// Reuse is safe without events because every operation on a device runs on that device's
// one stream (Note [One stream per device] in CudaBackend.h): work queued on a block before
// it was freed comes before work queued by its next owner.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>

namespace nn {

class CudaAllocator {
 public:
  /// The allocator of cuda:`device`; allocates nothing yet.
  explicit CudaAllocator(int device);
  ~CudaAllocator();
  CudaAllocator(const CudaAllocator&) = delete;
  CudaAllocator& operator=(const CudaAllocator&) = delete;

  /// At least `bytes` of device memory, 256-byte aligned: a cached block of a fitting size,
  /// else a new one. When the device is out of memory the cache is released and the
  /// allocation tried once more before an nn::Error.
  void* allocate(size_t bytes);
  /// Keeps the block for reuse. Never throws (it runs in Storage's destructor).
  void deallocate(void* ptr) noexcept;
  /// Returns every cached block to the driver.
  void releaseCache();

  /// cudaMalloc calls made so far.
  int64_t mallocCount() const;
  /// Bytes of the blocks in use (as allocated, rounded up).
  size_t bytesInUse() const;
  /// Bytes of the blocks kept for reuse.
  size_t bytesCached() const;

  /// The size a request of `bytes` is served with: whole 512-byte units, so that requests
  /// differing by a few bytes share blocks.
  static size_t roundedSize(size_t bytes);

 private:
  void releaseCacheLocked();

  const int device_;
  mutable std::mutex mutex_;
  std::multimap<size_t, void*> free_;
  std::unordered_map<void*, size_t> used_;
  int64_t mallocs_ = 0;
  size_t bytesInUse_ = 0;
  size_t bytesCached_ = 0;
};

}  // namespace nn
