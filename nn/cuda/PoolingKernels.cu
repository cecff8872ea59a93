// The CUDA table of nn::PoolingKernels: forward, one thread per output cell scanning its window;
// backward, one thread per input cell gathering from the windows that cover it, in the order in
// which the CPU table adds them (row-major over the windows), so no atomics and the same sums.
// The window math is nn/math/Pooling.h, as on the CPU: CUDA and the CPU agree bit for bit. Each
// entry makes its device current and queues its kernel on the device's stream (Note [One stream
// per device] in CudaBackend.h). Part of CudaBackend (nn/cuda/Tables.h).
#include "nn/cuda/Check.h"
#include "nn/cuda/CudaBackend.h"
#include "nn/cuda/DeviceGuard.h"
#include "nn/cuda/Launch.h"
#include "nn/cuda/Tables.h"
#include "nn/math/Pooling.h"

namespace nn {

namespace {

using cuda::blocksFor;
using cuda::kThreads;

// Output cell e: its plane and its window.
struct OutputCell {
  int64_t plane;
  math::PoolWindow window;
};

__device__ OutputCell outputCell(const PoolingShape& s, int64_t e) {
  const int64_t outPlane = s.outHeight * s.outWidth, o = e % outPlane;
  return OutputCell{e / outPlane, poolWindowOf(s, o / s.outWidth, o % s.outWidth)};
}

__global__ void maxOutputKernel(PoolingShape s, const float* input, float* output, float* indices) {
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < s.planes * s.outHeight * s.outWidth;
       e += int64_t{gridDim.x} * blockDim.x) {
    const OutputCell c = outputCell(s, e);
    const math::PoolWindow& w = c.window;
    // every window holds an input cell (math::poolOutputSize)
    math::maxPoolWindow(input + c.plane * s.height * s.width + w.y0 * s.width + w.x0, s.width, w.y1 - w.y0, w.x1 - w.x0,
                        static_cast<int32_t>(w.y0 * s.width + w.x0), output[e], indices[e]);
  }
}

__global__ void averageOutputKernel(PoolingShape s, bool countIncludePad, const float* input, float* output) {
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < s.planes * s.outHeight * s.outWidth;
       e += int64_t{gridDim.x} * blockDim.x) {
    const OutputCell c = outputCell(s, e);
    const math::PoolWindow& w = c.window;
    output[e] = math::avgPoolWindow(input + c.plane * s.height * s.width, s.width, w.y0, w.y1, w.x0, w.x1,
                                    avgPoolDivisorOf(s, w, countIncludePad));
  }
}

// The gradient of input cell e: over the windows (oy, ox) that cover it, row-major, as the CPU
// table adds them, `Gather` gives each window's term and adds it to the sum.
template <typename Gather>
__device__ void gatherGradient(const PoolingShape& s, int64_t e, float* gradInput, Gather gather) {
  const int64_t inPlane = s.height * s.width;
  const int64_t y = e % inPlane / s.width, x = e % s.width;
  const int64_t oy0 = math::poolFirstWindowOver(y, s.kH, s.dH, s.padH);
  const int64_t oy1 = math::poolEndWindowOver(y, s.dH, s.padH, s.outHeight);
  const int64_t ox0 = math::poolFirstWindowOver(x, s.kW, s.dW, s.padW);
  const int64_t ox1 = math::poolEndWindowOver(x, s.dW, s.padW, s.outWidth);
  const int64_t outBase = e / inPlane * s.outHeight * s.outWidth;
  float sum = 0.f;
  for (int64_t oy = oy0; oy < oy1; ++oy)
    for (int64_t ox = ox0; ox < ox1; ++ox) sum = gather(sum, oy, ox, outBase + oy * s.outWidth + ox);
  gradInput[e] = sum;
}

__global__ void maxGradInputKernel(PoolingShape s, bool disjoint, const float* gradOutput, const float* indices,
                                   float* gradInput) {
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < s.planes * s.height * s.width;
       e += int64_t{gridDim.x} * blockDim.x) {
    const float cell = static_cast<float>(e % (s.height * s.width));  // its plane index, as indices hold it
    gatherGradient(s, e, gradInput, [&](float sum, int64_t, int64_t, int64_t o) {
      // Where windows are disjoint the CPU writes the one window's term instead of adding it to
      // 0; the two differ for a gradient of -0.
      if (disjoint) return math::maxPoolCellGradient(cell, indices[o], gradOutput[o]);
      return indices[o] == cell ? sum + gradOutput[o] : sum;
    });
  }
}

__global__ void averageGradInputKernel(PoolingShape s, bool countIncludePad, const float* gradOutput,
                                       float* gradInput) {
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < s.planes * s.height * s.width;
       e += int64_t{gridDim.x} * blockDim.x) {
    gatherGradient(s, e, gradInput, [&](float sum, int64_t oy, int64_t ox, int64_t o) {
      return sum + math::avgPoolMean(gradOutput[o], avgPoolDivisorOf(s, poolWindowOf(s, oy, ox), countIncludePad));
    });
  }
}

__global__ void adaptiveAverageOutputKernel(PoolingShape s, const float* input, float* output) {
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < s.planes * s.outHeight * s.outWidth;
       e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t outPlane = s.outHeight * s.outWidth, o = e % outPlane;
    output[e] = math::adaptiveAvgPoolOutput(input + e / outPlane * s.height * s.width, s.height, s.width,
                                            s.outHeight, s.outWidth, o / s.outWidth, o % s.outWidth);
  }
}

__global__ void adaptiveAverageGradInputKernel(PoolingShape s, const float* gradOutput, float* gradInput) {
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < s.planes * s.height * s.width;
       e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t inPlane = s.height * s.width, i = e % inPlane;
    gradInput[e] = math::adaptiveAvgPoolGradient(gradOutput + e / inPlane * s.outHeight * s.outWidth, s.height,
                                                 s.width, s.outHeight, s.outWidth, i / s.width, i % s.width);
  }
}

__global__ void upSamplingNearestOutputKernel(PoolingShape s, const float* input, float* output) {
  const int64_t scale = s.outHeight / s.height;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < s.planes * s.outHeight * s.outWidth;
       e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t outPlane = s.outHeight * s.outWidth, o = e % outPlane;
    output[e] = math::upSamplingNearestOutput(input + e / outPlane * s.height * s.width, s.width, scale,
                                              o / s.outWidth, o % s.outWidth);
  }
}

__global__ void upSamplingNearestGradInputKernel(PoolingShape s, const float* gradOutput, float* gradInput) {
  const int64_t scale = s.outHeight / s.height;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < s.planes * s.height * s.width;
       e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t inPlane = s.height * s.width, i = e % inPlane;
    gradInput[e] = math::upSamplingNearestGradient(gradOutput + e / inPlane * s.outHeight * s.outWidth, s.outWidth,
                                                   scale, i / s.width, i % s.width);
  }
}

cudaStream_t streamOf(const Device& device) { return CudaBackend::instance().stream(device.index()); }

// Launches `kernel` over `count` cells on the device's stream.
template <typename Kernel, typename... Args>
void launch(const Device& device, int64_t count, Kernel kernel, Args... args) {
  if (count == 0) return;
  DeviceGuard guard(device);
  kernel<<<blocksFor(static_cast<size_t>(count)), kThreads, 0, streamOf(device)>>>(args...);
  CUDA_CHECK(cudaGetLastError());
}

int64_t outputCells(const PoolingShape& s) { return s.planes * s.outHeight * s.outWidth; }
int64_t inputCells(const PoolingShape& s) { return s.planes * s.height * s.width; }

void maxUpdateOutput(const Device& device, const PoolingShape& s, const float* input, float* output, float* indices) {
  launch(device, outputCells(s), maxOutputKernel, s, input, output, indices);
}

// Indices that name no cell of their window pass their gradient to no cell; checking them would
// mean waiting for the device (nn/backend/PoolingKernels.h).
bool maxUpdateGradInput(const Device& device, const PoolingShape& s, const float* gradOutput, const float* indices,
                        float* gradInput) {
  launch(device, inputCells(s), maxGradInputKernel, s, disjointWindows(s), gradOutput, indices, gradInput);
  return true;
}

void averageUpdateOutput(const Device& device, const PoolingShape& s, bool countIncludePad, const float* input,
                         float* output) {
  launch(device, outputCells(s), averageOutputKernel, s, countIncludePad, input, output);
}

void averageUpdateGradInput(const Device& device, const PoolingShape& s, bool countIncludePad, const float* gradOutput,
                            float* gradInput) {
  launch(device, inputCells(s), averageGradInputKernel, s, countIncludePad, gradOutput, gradInput);
}

void adaptiveAverageOutput(const Device& device, const PoolingShape& s, const float* input, float* output) {
  launch(device, outputCells(s), adaptiveAverageOutputKernel, s, input, output);
}

void adaptiveAverageGradInput(const Device& device, const PoolingShape& s, const float* gradOutput, float* gradInput) {
  launch(device, inputCells(s), adaptiveAverageGradInputKernel, s, gradOutput, gradInput);
}

void upSamplingNearestOutput(const Device& device, const PoolingShape& s, const float* input, float* output) {
  launch(device, outputCells(s), upSamplingNearestOutputKernel, s, input, output);
}

void upSamplingNearestGradInput(const Device& device, const PoolingShape& s, const float* gradOutput,
                                float* gradInput) {
  launch(device, inputCells(s), upSamplingNearestGradInputKernel, s, gradOutput, gradInput);
}

}  // namespace

PoolingKernels cuda::poolingKernels() {
  PoolingKernels k{};
  k.maxUpdateOutput = &maxUpdateOutput;
  k.maxUpdateGradInput = &maxUpdateGradInput;
  k.averageUpdateOutput = &averageUpdateOutput;
  k.averageUpdateGradInput = &averageUpdateGradInput;
  k.adaptiveAverage.forward = &adaptiveAverageOutput;
  k.adaptiveAverage.backward = &adaptiveAverageGradInput;
  k.upSamplingNearest.forward = &upSamplingNearestOutput;
  k.upSamplingNearest.backward = &upSamplingNearestGradInput;
  return k;
}

}  // namespace nn
