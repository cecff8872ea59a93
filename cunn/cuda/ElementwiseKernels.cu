// The CUDA table of nn::ElementwiseKernels: activations and the SGD step as grid-stride
// kernels that only index and call the nn/math formulas the CPU table calls. Each entry
// makes its device current and queues its kernel on the device's stream (Note [One stream
// per device] in CudaBackend.h). Registered with nn when //cunn is linked.
#include "cunn/cuda/Check.h"
#include "cunn/cuda/CudaBackend.h"
#include "cunn/cuda/DeviceGuard.h"
#include "cunn/cuda/Launch.h"
#include "nn/ElementwiseKernels.h"
#include "nn/math/Activation.h"
#include "nn/math/Sgd.h"

namespace nn {

namespace {

using cuda::blocksFor;
using cuda::kThreads;

struct ReluForward {
  __device__ float operator()(float x) const { return math::reluForward(x); }
};
struct TanhForward {
  __device__ float operator()(float x) const { return math::tanhForward(x); }
};
struct SigmoidForward {
  __device__ float operator()(float x) const { return math::sigmoidForward(x); }
};
struct ReluBackward {
  __device__ float operator()(float x, float g) const { return math::reluBackward(x, g); }
};
struct TanhBackward {
  __device__ float operator()(float y, float g) const { return math::tanhBackward(y, g); }
};
struct SigmoidBackward {
  __device__ float operator()(float y, float g) const { return math::sigmoidBackward(y, g); }
};

// in and out may be one pointer (in place): each element is read before it is written.
template <typename F>
__global__ void mapKernel(const float* in, float* out, int64_t n, F f) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    out[i] = f(in[i]);
}

template <typename G>
__global__ void map2Kernel(const float* a, const float* gradOut, float* gradIn, int64_t n, G g) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    gradIn[i] = g(a[i], gradOut[i]);
}

__global__ void sgdKernel(float* x, const float* gradient, float* velocity, int64_t n, math::SgdStep step) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    x[i] = math::sgdUpdate(x[i], gradient[i], velocity ? velocity + i : nullptr, step);
}

cudaStream_t streamOf(const Device& device) { return CudaBackend::instance().stream(device.index()); }

template <typename F>
void launchMap(const Device& device, const float* in, float* out, int64_t n, F f) {
  if (n == 0) return;
  DeviceGuard guard(device);
  mapKernel<<<blocksFor(static_cast<size_t>(n)), kThreads, 0, streamOf(device)>>>(in, out, n, f);
  CUDA_CHECK(cudaGetLastError());
}

template <typename G>
void launchMap2(const Device& device, const float* a, const float* gradOut, float* gradIn, int64_t n, G g) {
  if (n == 0) return;
  DeviceGuard guard(device);
  map2Kernel<<<blocksFor(static_cast<size_t>(n)), kThreads, 0, streamOf(device)>>>(a, gradOut, gradIn, n, g);
  CUDA_CHECK(cudaGetLastError());
}

void activationForward(const Device& device, Activation activation, const float* in, float* out, int64_t n) {
  switch (activation) {
    case Activation::ReLU:
      return launchMap(device, in, out, n, ReluForward{});
    case Activation::Tanh:
      return launchMap(device, in, out, n, TanhForward{});
    case Activation::Sigmoid:
      return launchMap(device, in, out, n, SigmoidForward{});
  }
}

void activationBackward(const Device& device, Activation activation, const float* in, const float* out,
                        const float* gradOut, float* gradIn, int64_t n) {
  switch (activation) {
    case Activation::ReLU:
      return launchMap2(device, in, gradOut, gradIn, n, ReluBackward{});
    case Activation::Tanh:
      return launchMap2(device, out, gradOut, gradIn, n, TanhBackward{});
    case Activation::Sigmoid:
      return launchMap2(device, out, gradOut, gradIn, n, SigmoidBackward{});
  }
}

void sgdStep(const Device& device, float* x, const float* gradient, float* velocity, int64_t n,
             const math::SgdStep& step) {
  if (n == 0) return;
  DeviceGuard guard(device);
  sgdKernel<<<blocksFor(static_cast<size_t>(n)), kThreads, 0, streamOf(device)>>>(x, gradient, velocity, n, step);
  CUDA_CHECK(cudaGetLastError());
}

constexpr ElementwiseKernels kCudaKernels{&activationForward, &activationBackward, &sgdStep};

const bool kRegistered = (registerElementwiseKernels(DeviceType::CUDA, kCudaKernels), true);

}  // namespace

}  // namespace nn
