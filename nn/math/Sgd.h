// One element of a step of Torch7's optim.sgd, shared by the CPU loop and the CUDA kernel:
//   d = gradient + weightDecay * x
//   if momentum != 0:  v = d on the first step, else momentum * v + (1 - dampening) * d
//                      d = nesterov ? d + momentum * v : v
//   x = x - learningRate * d      (learningRate already decayed for this step)
#pragma once

#include "nn/math/HostDevice.h"

namespace nn::math {

/// The constants of one step, for every element.
struct SgdStep {
  /// The learning rate of this step, already decayed (SgdOptions::learningRateDecay).
  float learningRate;
  /// The L2 penalty added to the gradient: d = gradient + weightDecay * x; 0 for none.
  float weightDecay;
  /// The velocity's decay; 0: no velocity, and sgdUpdate reads no buffer.
  float momentum;
  /// The share of d held back from the velocity: v = momentum * v + (1 - dampening) * d.
  float dampening;
  /// Nesterov's momentum: the step takes d + momentum * v instead of v.
  bool nesterov;
  /// The velocity is not yet set: it becomes a copy of d.
  bool firstMomentumStep;
};

/// Returns the new x. velocity points to the element's momentum buffer entry; it is read and
/// written only when momentum != 0 (and may be null otherwise).
NN_HD inline float sgdUpdate(float x, float gradient, float* velocity, const SgdStep& s) {
  float d = s.weightDecay != 0.f ? gradient + s.weightDecay * x : gradient;
  if (s.momentum != 0.f) {
    // Read even on the first step (the buffer then holds zeros) so that the loop over
    // elements has no branch inside and vectorises.
    const float previous = *velocity;
    const float v = s.firstMomentumStep ? d : previous * s.momentum + (1.f - s.dampening) * d;
    *velocity = v;
    d = s.nesterov ? d + s.momentum * v : v;
  }
  return x - s.learningRate * d;
}

}  // namespace nn::math
