// The CUDA table of nn::SoftMaxKernels: cuDNN's softmax (CUDNN_SOFTMAX_ACCURATE, which
// subtracts each column's max as the CPU loops do) and log-softmax (CUDNN_SOFTMAX_LOG).
//
// The input [outer, classes, inner] is the cuDNN tensor [outer, classes, inner, 1] in channel
// mode: one softmax over C at each (n, h, w), which is Torch7's choice for every rank. For a
// [C] or [N, C] input inner is 1, and channel mode is then instance mode (one softmax over
// C x 1 x 1 per n). Descriptors are cached per device and shape (CudnnDescriptors.h); cuDNN
// needs no scratch, so the modules' columns go unused here. Part of CudaBackend.
#include "nn/cuda/Check.h"
#include "nn/cuda/CudaBackend.h"
#include "nn/cuda/CudnnDescriptors.h"
#include "nn/cuda/DeviceGuard.h"
#include "nn/cuda/Tables.h"

namespace nn {

namespace {

// Calls call(handle, algorithm, descriptor) with the device current, for a non-empty input.
template <typename Call>
void withCudnn(const Device& device, bool log, const math::SoftMaxShape& s, Call call) {
  if (s.outer * s.classes * s.inner == 0) return;
  DeviceGuard guard(device);
  call(CudaBackend::instance().cudnn(device.index()), log ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE,
       cudnnTensorDescriptor(device.index(), s.outer, s.classes, s.inner, 1, log ? "nn.LogSoftMax" : "nn.SoftMax"));
}

const float kOne = 1.f, kZero = 0.f;

void updateOutput(const Device& device, bool log, const float* x, float* y, const math::SoftMaxShape& s, float*) {
  withCudnn(device, log, s, [&](cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algorithm, cudnnTensorDescriptor_t d) {
    CUDNN_CHECK(cudnnSoftmaxForward(handle, algorithm, CUDNN_SOFTMAX_MODE_CHANNEL, &kOne, d, x, &kZero, d, y));
  });
}

void updateGradInput(const Device& device, bool log, const float* y, const float* gradOut, float* gradIn,
                     const math::SoftMaxShape& s, float*) {
  withCudnn(device, log, s, [&](cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algorithm, cudnnTensorDescriptor_t d) {
    CUDNN_CHECK(cudnnSoftmaxBackward(handle, algorithm, CUDNN_SOFTMAX_MODE_CHANNEL, &kOne, d, y, d, gradOut, &kZero, d,
                                     gradIn));
  });
}

}  // namespace

SoftMaxKernels cuda::softMaxKernels() {
  SoftMaxKernels k{};
  k.updateOutput = &updateOutput;
  k.updateGradInput = &updateGradInput;
  return k;
}

}  // namespace nn
