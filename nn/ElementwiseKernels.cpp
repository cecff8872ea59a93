// The CPU table of ElementwiseKernels and the registry of tables by device type.
#include "nn/ElementwiseKernels.h"

#include "nn/Error.h"
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

const ElementwiseKernels*& slot(DeviceType type) {
  static const ElementwiseKernels* tables[2] = {&kCpuKernels, nullptr};
  return tables[type == DeviceType::CPU ? 0 : 1];
}

}  // namespace

const ElementwiseKernels& elementwiseKernels(const Device& device) {
  const ElementwiseKernels* table = slot(device.type());
  NN_CHECK(table != nullptr, "no element-wise kernels for " << device.str() << ": the CUDA backend (//cunn) is not linked");
  return *table;
}

void registerElementwiseKernels(DeviceType type, const ElementwiseKernels& kernels) { slot(type) = &kernels; }

}  // namespace nn
