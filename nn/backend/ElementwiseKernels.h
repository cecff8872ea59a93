// ElementwiseKernels: the element-wise work of the library on one device type: an entry per
// activation (each the loops of one nn/math/Activation.h formula over contiguous floats, with
// the module's parameter block) and the optimizers' steps (nn/math/Sgd.h, nn/math/Optimizers.h).
#pragma once

#include <array>
#include <cstdint>

#include "nn/math/Activation.h"
#include "nn/math/Optimizers.h"
#include "nn/math/Sgd.h"
#include "nn/tensor/Device.h"

namespace nn {

/// The two passes of one activation over n contiguous elements on `device`.
struct ActivationKernels {
  /// out[i] = forward(in[i]); out may be in (in place).
  void (*forward)(const Device& device, const math::ActivationArgs& args, const float* in, float* out, int64_t n);
  /// gradIn[i] = backward(in[i], out[i], gradOut[i]); in may be out where the formula allows
  /// it (kInPlace), gradIn may be gradOut.
  void (*backward)(const Device& device, const math::ActivationArgs& args, const float* in, const float* out,
                   const float* gradOut, float* gradIn, int64_t n);
};

/// One step of an adaptive optimizer (nn/math/Optimizers.h) over n elements: x[i] =
/// update.update(x[i], gradient[i], s0 + i, s1 + i); s1 is null where the update has one state.
template <typename U>
using OptimizerStep = void (*)(const Device& device, float* x, const float* gradient, float* s0, float* s1, int64_t n,
                               const U& update);

/// The element-wise passes on one device type: the activations and the optimizers' steps, over n contiguous
/// floats each, the parameters x and their gradient updated in place.
struct ElementwiseKernels {
  /// The passes of each activation of math::activation::All, in its order: a backend builds the
  /// list from All, and activation F's entry is activations[math::activation::indexOf<F>()].
  std::array<ActivationKernels, math::activation::All::kCount> activations;
  /// One SGD step over n elements; velocity is null without momentum.
  void (*sgdStep)(const Device& device, float* x, const float* gradient, float* velocity, int64_t n,
                  const math::SgdStep& step);
  /// One Adam step: s0 is the first moment m, s1 the second moment v.
  OptimizerStep<math::AdamUpdate> adamStep;
  /// One Adagrad step: s0 is the sum of squared gradients, s1 null.
  OptimizerStep<math::AdagradUpdate> adagradStep;
  /// One RMSprop step: s0 is the mean square, s1 null.
  OptimizerStep<math::RmspropUpdate> rmspropStep;
};

}  // namespace nn
