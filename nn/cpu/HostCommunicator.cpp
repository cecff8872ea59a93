// HostCommunicator: rank-ordered sums and copies in host memory.
#include "nn/cpu/HostCommunicator.h"

#include <algorithm>

#include "nn/tensor/Error.h"

namespace nn {

namespace {

// Chunks start on a multiple of 16 floats (64 bytes, a cache line where the buffer is
// aligned), so two threads never write one line.
constexpr int64_t kChunkAlignment = 16;
// Below this many elements a call is not worth waking other threads for.
constexpr int64_t kParallelThreshold = 1 << 14;

void sumInto(float* root, const std::vector<Tensor>& tensors, int64_t begin, int64_t end) {
  for (size_t r = 1; r < tensors.size(); ++r) {
    const float* other = tensors[r].data();
    for (int64_t i = begin; i < end; ++i) root[i] += other[i];
  }
}

void copyFrom(const float* root, const std::vector<Tensor>& tensors, int64_t begin, int64_t end) {
  for (size_t r = 1; r < tensors.size(); ++r) std::copy(root + begin, root + end, tensors[r].data() + begin);
}

}  // namespace

HostCommunicator::HostCommunicator(std::vector<Device> devices, Backend::ParallelFor parallel)
    : devices_(std::move(devices)), parallel_(std::move(parallel)) {
  for (const Device& d : devices_)
    NN_CHECK(d.isCpu(), "HostCommunicator: expected CPU devices, got " << d.str() << "; host copies need host memory");
}

void HostCommunicator::forChunks(int64_t n, FunctionRef<void(int64_t, int64_t)> work) {
  const size_t parts = devices_.size();
  if (!parallel_ || parts == 1 || n < kParallelThreshold) {
    work(0, n);
    return;
  }
  const int64_t chunk = (n / static_cast<int64_t>(parts) + kChunkAlignment - 1) / kChunkAlignment * kChunkAlignment;
  parallel_(parts, [&](size_t part) {
    const int64_t begin = std::min(n, static_cast<int64_t>(part) * chunk);
    const int64_t end = part + 1 == parts ? n : std::min(n, begin + chunk);
    if (begin < end) work(begin, end);
  });
}

void HostCommunicator::reduce(const std::vector<Tensor>& tensors) {
  checkCollectiveTensors(tensors, devices_, "HostCommunicator.reduce");
  if (tensors.size() == 1) return;
  float* root = tensors[0].data();
  forChunks(tensors[0].numel(), [&](int64_t begin, int64_t end) { sumInto(root, tensors, begin, end); });
}

void HostCommunicator::broadcast(const std::vector<Tensor>& tensors) {
  checkCollectiveTensors(tensors, devices_, "HostCommunicator.broadcast");
  if (tensors.size() == 1) return;
  const float* root = tensors[0].data();
  forChunks(tensors[0].numel(), [&](int64_t begin, int64_t end) { copyFrom(root, tensors, begin, end); });
}

void HostCommunicator::allReduce(const std::vector<Tensor>& tensors) {
  checkCollectiveTensors(tensors, devices_, "HostCommunicator.allReduce");
  if (tensors.size() == 1) return;
  float* root = tensors[0].data();
  // Each chunk is summed and then copied back while it is still in the cache.
  forChunks(tensors[0].numel(), [&](int64_t begin, int64_t end) {
    sumInto(root, tensors, begin, end);
    copyFrom(root, tensors, begin, end);
  });
}

void HostCommunicator::scatter(const Tensor& source, const std::vector<Tensor>& parts) {
  checkScatterTensors(source, parts, devices_, "HostCommunicator.scatter");
  const float* from = source.data();
  for (const Tensor& part : parts) {
    std::copy(from, from + part.numel(), part.data());
    from += part.numel();
  }
}

}  // namespace nn
