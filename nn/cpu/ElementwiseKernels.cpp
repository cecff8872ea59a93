// The CPU table of ElementwiseKernels: loops over the nn/math formulas, cut into one part per
// compute thread of the device (nn/runtime/ComputeThreads.h).
#include "nn/cpu/Multiversion.h"
#include "nn/cpu/Tables.h"
#include "nn/runtime/ComputeThreads.h"

namespace nn::cpu {

namespace {

// Element-wise loops are cut into parts of at least this many elements, one part per compute
// thread of the device: a smaller part costs less than handing it to a thread.
constexpr int64_t kGrain = 16384;

// body(begin, end) over the parts of [0, n).
template <typename Body>
void forParts(const Device& device, int64_t n, Body body) {
  parallelRanges(device, n, kGrain, body);
}

// out[i] = f(in[i]). In place, the loop reads and writes through one pointer, so that the
// compiler vectorises it without a run-time overlap check that would send it to the scalar loop.
template <typename F>
void forwardLoop(const F& f, const float* in, float* out, int64_t n) {
  widest([&]() NN_CPU_INLINE {
    if (in == out) {
      for (int64_t i = 0; i < n; ++i) out[i] = f.forward(out[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) out[i] = f.forward(in[i]);
    }
  });
}

// gradIn[i] = f.backward(in[i], out[i], gradOut[i]), in place the same way.
template <typename F>
void backwardLoop(const F& f, const float* in, const float* out, const float* gradOut, float* gradIn, int64_t n) {
  widest([&]() NN_CPU_INLINE {
    if (gradOut == gradIn) {
      for (int64_t i = 0; i < n; ++i) gradIn[i] = f.backward(in[i], out[i], gradIn[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) gradIn[i] = f.backward(in[i], out[i], gradOut[i]);
    }
  });
}

template <typename F>
void forward(const Device& device, const math::ActivationArgs& args, const float* in, float* out, int64_t n) {
  const F f(args);
  forParts(device, n, [&](int64_t b, int64_t e) { forwardLoop(f, in + b, out + b, e - b); });
}

template <typename F>
void backward(const Device& device, const math::ActivationArgs& args, const float* in, const float* out,
              const float* gradOut, float* gradIn, int64_t n) {
  const F f(args);
  forParts(device, n, [&](int64_t b, int64_t e) { backwardLoop(f, in + b, out + b, gradOut + b, gradIn + b, e - b); });
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

void sgdLoop(float* x, const float* gradient, float* velocity, int64_t n, const math::SgdStep& constants) {
  widest([&]() NN_CPU_INLINE {
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
  });
}

void sgdStep(const Device& device, float* x, const float* gradient, float* velocity, int64_t n,
             const math::SgdStep& step) {
  forParts(device, n,
           [&](int64_t b, int64_t e) { sgdLoop(x + b, gradient + b, velocity ? velocity + b : nullptr, e - b, step); });
}

template <typename U>
void optimizerStep(const Device& device, float* x, const float* gradient, float* s0, float* s1, int64_t n,
                   const U& constants) {
  forParts(device, n, [&](int64_t b, int64_t e) {
    const U update = constants;  // a local copy, which no store to x can change
    float* first = s0 + b;
    float* second = s1 ? s1 + b : nullptr;
    for (int64_t i = 0; i < e - b; ++i)
      x[b + i] = update.update(x[b + i], gradient[b + i], first + i, second ? second + i : nullptr);
  });
}

}  // namespace

ElementwiseKernels elementwiseKernels() {
  ElementwiseKernels k{};
  k.activations = activations(math::activation::All{});
  k.sgdStep = &sgdStep;
  k.adamStep = &optimizerStep<math::AdamUpdate>;
  k.adagradStep = &optimizerStep<math::AdagradUpdate>;
  k.rmspropStep = &optimizerStep<math::RmspropUpdate>;
  return k;
}

}  // namespace nn::cpu
