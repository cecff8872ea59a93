// cuDNN tensor descriptors, cached per device and shape.
#include "nn/cuda/CudnnDescriptors.h"

#include <array>
#include <map>
#include <mutex>

#include "nn/cuda/Check.h"
#include "nn/tensor/Error.h"

namespace nn {

cudnnTensorDescriptor_t cudnnTensorDescriptor(int device, int64_t n, int64_t c, int64_t h, int64_t w,
                                              const char* what) {
  NN_CHECK(n > 0 && c > 0 && h > 0 && w > 0 && n * c * h * w < (int64_t{1} << 31),
           what << " on cuda:" << device << ": cuDNN takes a tensor [" << n << ", " << c << ", " << h << ", " << w
                << "] only with positive sizes and fewer than 2^31 elements");
  static std::mutex mutex;
  // Never destroyed: descriptors are handed out until the process ends.
  static auto* cache = new std::map<std::array<int64_t, 5>, cudnnTensorDescriptor_t>();
  const std::array<int64_t, 5> key{device, n, c, h, w};
  std::lock_guard<std::mutex> lock(mutex);
  const auto it = cache->find(key);
  if (it != cache->end()) return it->second;
  cudnnTensorDescriptor_t descriptor = nullptr;
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&descriptor));
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(descriptor, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, static_cast<int>(n),
                                         static_cast<int>(c), static_cast<int>(h), static_cast<int>(w)));
  cache->emplace(key, descriptor);
  return descriptor;
}

}  // namespace nn
