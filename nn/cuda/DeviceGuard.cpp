// DeviceGuard: the current CUDA device for one scope.
#include "nn/cuda/DeviceGuard.h"

#include <cstdio>

#include "nn/cuda/Check.h"
#include "nn/tensor/Error.h"

namespace nn {

namespace {

int cudaIndex(const Device& device) {
  NN_CHECK(device.type() == DeviceType::CUDA, "DeviceGuard: expected a CUDA device, got " << device.str());
  return device.index();
}

}  // namespace

DeviceGuard::DeviceGuard(int index) : current_(index) {
  CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != current_) CUDA_CHECK(cudaSetDevice(current_));
}

DeviceGuard::DeviceGuard(const Device& device) : DeviceGuard(cudaIndex(device)) {}

DeviceGuard::~DeviceGuard() {
  if (previous_ == current_) return;
  // A destructor cannot throw; restoring a device that was current a moment ago fails only
  // when the runtime itself is broken, and then the next checked call reports it too.
  const cudaError_t status = cudaSetDevice(previous_);
  if (status != cudaSuccess)
    std::fprintf(stderr, "DeviceGuard: cudaSetDevice(%d) failed restoring the current device: %s\n", previous_,
                 cudaGetErrorString(status));
}

}  // namespace nn
