// The CUDA table of nn::ElementwiseKernels: activations and the SGD step as grid-stride
// kernels that only index and call the nn/math formulas the CPU table calls. Each entry
// makes its device current and queues its kernel on the device's stream (Note [One stream
// per device] in CudaBackend.h).
#include "nn/cuda/Check.h"
#include "nn/cuda/CudaBackend.h"
#include "nn/cuda/DeviceGuard.h"
#include "nn/cuda/Launch.h"
#include "nn/cuda/Tables.h"

namespace nn {

namespace {

using cuda::blocksFor;
using cuda::kThreads;

// in and out may be one pointer (in place): each element is read before it is written.
template <typename F>
__global__ void forwardKernel(F f, const float* in, float* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    out[i] = f.forward(in[i]);
}

template <typename F>
__global__ void backwardKernel(F f, const float* in, const float* out, const float* gradOut, float* gradIn, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    gradIn[i] = f.backward(in[i], out[i], gradOut[i]);
}

__global__ void sgdKernel(float* x, const float* gradient, float* velocity, int64_t n, math::SgdStep step) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    x[i] = math::sgdUpdate(x[i], gradient[i], velocity ? velocity + i : nullptr, step);
}

template <typename U>
__global__ void optimizerKernel(float* x, const float* gradient, float* s0, float* s1, int64_t n, U update) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    x[i] = update.update(x[i], gradient[i], s0 + i, s1 ? s1 + i : nullptr);
}

cudaStream_t streamOf(const Device& device) { return CudaBackend::instance().stream(device.index()); }

template <typename F>
void forward(const Device& device, const math::ActivationArgs& args, const float* in, float* out, int64_t n) {
  if (n == 0) return;
  DeviceGuard guard(device);
  forwardKernel<<<blocksFor(static_cast<size_t>(n)), kThreads, 0, streamOf(device)>>>(F(args), in, out, n);
  CUDA_CHECK(cudaGetLastError());
}

template <typename F>
void backward(const Device& device, const math::ActivationArgs& args, const float* in, const float* out,
              const float* gradOut, float* gradIn, int64_t n) {
  if (n == 0) return;
  DeviceGuard guard(device);
  backwardKernel<<<blocksFor(static_cast<size_t>(n)), kThreads, 0, streamOf(device)>>>(F(args), in, out, gradOut,
                                                                                       gradIn, n);
  CUDA_CHECK(cudaGetLastError());
}

// The entry of activation F: its kernels, by field.
template <typename F>
constexpr ActivationKernels activationEntry() {
  ActivationKernels k{};
  k.forward = &forward<F>;
  k.backward = &backward<F>;
  return k;
}

// The table of the activations of `list`, in its order.
template <typename... F>
constexpr std::array<ActivationKernels, sizeof...(F)> activations(math::activation::List<F...>) {
  return {activationEntry<F>()...};
}

void sgdStep(const Device& device, float* x, const float* gradient, float* velocity, int64_t n,
             const math::SgdStep& step) {
  if (n == 0) return;
  DeviceGuard guard(device);
  sgdKernel<<<blocksFor(static_cast<size_t>(n)), kThreads, 0, streamOf(device)>>>(x, gradient, velocity, n, step);
  CUDA_CHECK(cudaGetLastError());
}

template <typename U>
void optimizerStep(const Device& device, float* x, const float* gradient, float* s0, float* s1, int64_t n,
                   const U& update) {
  if (n == 0) return;
  DeviceGuard guard(device);
  optimizerKernel<U><<<blocksFor(static_cast<size_t>(n)), kThreads, 0, streamOf(device)>>>(x, gradient, s0, s1, n,
                                                                                           update);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace

ElementwiseKernels cuda::elementwiseKernels() {
  ElementwiseKernels k{};
  k.activations = activations(math::activation::All{});
  k.sgdStep = &sgdStep;
  k.adamStep = &optimizerStep<math::AdamUpdate>;
  k.adagradStep = &optimizerStep<math::AdagradUpdate>;
  k.rmspropStep = &optimizerStep<math::RmspropUpdate>;
  return k;
}

}  // namespace nn
