// The CPU table of ElementwiseKernels.
#include "nn/ElementwiseKernels.h"

#include "nn/KernelTable.h"
#include "nn/math/Activation.h"

namespace nn {

namespace {

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

void cpuActivationForward(const Device&, Activation activation, const float* in, float* out, int64_t n) {
  switch (activation) {
    case Activation::ReLU:
      return map(in, out, n, [](float x) { return math::reluForward(x); });
    case Activation::Tanh:
      return map(in, out, n, [](float x) { return math::tanhForward(x); });
    case Activation::Sigmoid:
      return map(in, out, n, [](float x) { return math::sigmoidForward(x); });
  }
}

void cpuActivationBackward(const Device&, Activation activation, const float* in, const float* out,
                           const float* gradOut, float* gradIn, int64_t n) {
  switch (activation) {
    case Activation::ReLU:
      return map2(in, gradOut, gradIn, n, [](float x, float g) { return math::reluBackward(x, g); });
    case Activation::Tanh:
      return map2(out, gradOut, gradIn, n, [](float y, float g) { return math::tanhBackward(y, g); });
    case Activation::Sigmoid:
      return map2(out, gradOut, gradIn, n, [](float y, float g) { return math::sigmoidBackward(y, g); });
  }
}

void cpuSgdStep(const Device&, float* x, const float* gradient, float* velocity, int64_t n,
                const math::SgdStep& constants) {
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
