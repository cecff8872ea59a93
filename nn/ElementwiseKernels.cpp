// The CPU table of ElementwiseKernels.
#include "nn/ElementwiseKernels.h"

#include "nn/KernelTable.h"
#include "nn/Parallel.h"
#include "nn/math/Activation.h"

namespace nn {

namespace {

// Element-wise loops are cut into parts of at least this many elements, one part per compute
// thread of the device (nn/Parallel.h): a smaller part costs less than handing it to a thread.
constexpr int64_t kGrain = 16384;

// body(begin, end) over the parts of [0, n).
template <typename Body>
void forParts(const Device& device, int64_t n, Body body) {
  const int parts = parallelParts(device, n / kGrain);
  parallelFor(device, parts, [&](int p) {
    const Range r = partRange(n, parts, p);
    body(r.begin, r.end);
  });
}

// out[i] = f(in[i]). In place, the loop reads and writes through one pointer, so that the
// compiler vectorises it without a run-time overlap check that would send it to the
// scalar loop.
template <typename F>
void map(const float* in, float* out, int64_t n, F f) {
  if (in == out) {
    for (int64_t i = 0; i < n; ++i) out[i] = f(out[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = f(in[i]);
  }
}

// gradIn[i] = g(a[i], gradOut[i]), in place the same way.
template <typename G>
void map2(const float* a, const float* gradOut, float* gradIn, int64_t n, G g) {
  if (gradOut == gradIn) {
    for (int64_t i = 0; i < n; ++i) gradIn[i] = g(a[i], gradIn[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) gradIn[i] = g(a[i], gradOut[i]);
  }
}

void activationForward(Activation activation, const float* in, float* out, int64_t n) {
  switch (activation) {
    case Activation::ReLU:
      return map(in, out, n, [](float x) { return math::reluForward(x); });
    case Activation::Tanh:
      return map(in, out, n, [](float x) { return math::tanhForward(x); });
    case Activation::Sigmoid:
      return map(in, out, n, [](float x) { return math::sigmoidForward(x); });
  }
}

void activationBackward(Activation activation, const float* in, const float* out, const float* gradOut, float* gradIn,
                        int64_t n) {
  switch (activation) {
    case Activation::ReLU:
      return map2(in, gradOut, gradIn, n, [](float x, float g) { return math::reluBackward(x, g); });
    case Activation::Tanh:
      return map2(out, gradOut, gradIn, n, [](float y, float g) { return math::tanhBackward(y, g); });
    case Activation::Sigmoid:
      return map2(out, gradOut, gradIn, n, [](float y, float g) { return math::sigmoidBackward(y, g); });
  }
}

void sgdStep(float* x, const float* gradient, float* velocity, int64_t n, const math::SgdStep& constants) {
  // A local copy, which no store to x can change: the compiler then takes the branches on
  // it out of the loops, and both loops vectorise.
  const math::SgdStep step = constants;
  if (velocity) {
    for (int64_t i = 0; i < n; ++i) x[i] = math::sgdUpdate(x[i], gradient[i], velocity + i, step);
  } else {
    math::SgdStep plain = step;
    plain.momentum = 0.f;  // as it is without a velocity; said again so that the compiler sees it
    for (int64_t i = 0; i < n; ++i) x[i] = math::sgdUpdate(x[i], gradient[i], nullptr, plain);
  }
}

void cpuActivationForward(const Device& device, Activation activation, const float* in, float* out, int64_t n) {
  forParts(device, n, [&](int64_t b, int64_t e) { activationForward(activation, in + b, out + b, e - b); });
}

void cpuActivationBackward(const Device& device, Activation activation, const float* in, const float* out,
                           const float* gradOut, float* gradIn, int64_t n) {
  forParts(device, n, [&](int64_t b, int64_t e) {
    activationBackward(activation, in + b, out + b, gradOut + b, gradIn + b, e - b);
  });
}

void cpuSgdStep(const Device& device, float* x, const float* gradient, float* velocity, int64_t n,
                const math::SgdStep& step) {
  forParts(device, n,
           [&](int64_t b, int64_t e) { sgdStep(x + b, gradient + b, velocity ? velocity + b : nullptr, e - b, step); });
}

constexpr ElementwiseKernels kCpuKernels{&cpuActivationForward, &cpuActivationBackward, &cpuSgdStep};

}  // namespace

const ElementwiseKernels& elementwiseKernels(const Device& device) {
  // The CPU table needs no installing, so it is there even during static initialisation.
  return device.isCpu() ? kCpuKernels : KernelTable<ElementwiseKernels>::of(device, "element-wise");
}

void registerElementwiseKernels(DeviceType type, const ElementwiseKernels& kernels) {
  KernelTable<ElementwiseKernels>::install(type, kernels);
}

}  // namespace nn
