// One element of a step of the adaptive optimizers (Torch7's optim.adam, optim.adagrad and
// optim.rmsprop; PyTorch's Adam, AdamW, Adagrad and RMSprop), shared by the CPU loop and the CUDA
// kernel. Each is a struct of the step's constants, computed on the host in double and
// rounded to float once (as Torch7's Lua numbers and PyTorch's Python floats are), with
//   float update(float x, float gradient, float* s0, float* s1) const
// that returns the new x and updates the element's state s0 (and s1). In all three the
// gradient first gets the weight decay: d = gradient + weightDecay * x (AdamW's, decoupled from
// the gradient, is AdamUpdate::shrink instead).
#pragma once

#include <math.h>  // sqrtf: the float function of both the host and nvcc device code

#include "nn/math/HostDevice.h"

namespace nn::math {

/// d = gradient + weightDecay * x: the gradient with the weight decay (an L2 penalty) added; the gradient itself
/// where weightDecay is 0.
NN_HD inline float decayed(float x, float gradient, float weightDecay) {
  return weightDecay != 0.f ? gradient + weightDecay * x : gradient;
}

/// Adam: m = beta1 m + (1 - beta1) d, v = beta2 v + (1 - beta2) d^2,
/// x = shrink x - stepSize m / (sqrt(v) / divisor + epsilon). Torch7 puts the bias corrections in
/// stepSize = lr sqrt(1 - beta2^t) / (1 - beta1^t) with divisor 1; PyTorch divides sqrt(v) by
/// divisor = sqrt(1 - beta2^t) and uses stepSize = lr / (1 - beta1^t), so that its epsilon
/// meets the bias-corrected sqrt(v). AdamW (PyTorch's) is the latter with its weight decay
/// decoupled from the gradient: shrink = 1 - lr weightDecay, and weightDecay here 0.
struct AdamUpdate {
  /// The learning rate of this step (decayed) with the bias corrections in it, as above.
  float stepSize;
  /// The decay of the first moment m.
  float beta1;
  /// 1 - beta1, computed in double.
  float oneMinusBeta1;
  /// The decay of the second moment v.
  float beta2;
  /// 1 - beta2, computed in double.
  float oneMinusBeta2;
  /// Added to the denominator, against a division by 0.
  float epsilon;
  /// 1 (Torch7), or sqrt(1 - beta2^t) (PyTorch's, AdamOptions::pytorchEpsilon).
  float divisor;
  /// The L2 penalty added to the gradient (decayed); 0 for none.
  float weightDecay;
  /// What x is multiplied by before the update: AdamW's decoupled weight decay 1 - lr weightDecay
  /// (PyTorch's param.mul_ first); 1 for Adam, where x * 1 is x to the bit.
  float shrink = 1.f;

  /// Returns the new x; updates the element's first moment *m and second moment *v.
  NN_HD float update(float x, float gradient, float* m, float* v) const {
    const float d = decayed(x, gradient, weightDecay);
    const float mean = *m * beta1 + oneMinusBeta1 * d;
    const float square = *v * beta2 + oneMinusBeta2 * d * d;
    *m = mean;
    *v = square;
    return x * shrink - stepSize * (mean / (sqrtf(square) / divisor + epsilon));
  }
};

/// Adagrad: s = s + d^2, x = x - learningRate d / (sqrt(s) + epsilon), learningRate already
/// decayed for this step.
struct AdagradUpdate {
  /// learningRate / (1 + k * learningRateDecay) at step k, counted from 0.
  float learningRate;
  /// Added to the denominator, against a division by 0.
  float epsilon;
  /// The L2 penalty added to the gradient (decayed); 0 for none.
  float weightDecay;

  /// Returns the new x; adds d^2 to the element's sum of squares *sum. The second state is unused (null).
  NN_HD float update(float x, float gradient, float* sum, float*) const {
    const float d = decayed(x, gradient, weightDecay);
    const float s = *sum + d * d;
    *sum = s;
    return x - learningRate * (d / (sqrtf(s) + epsilon));
  }
};

/// RMSprop: m = alpha m + (1 - alpha) d^2, x = x - learningRate d / (sqrt(m) + epsilon).
struct RmspropUpdate {
  /// The learning rate, the same at every step.
  float learningRate;
  /// The decay of the mean square m.
  float alpha;
  /// 1 - alpha, computed in double.
  float oneMinusAlpha;
  /// Added to the denominator, against a division by 0.
  float epsilon;
  /// The L2 penalty added to the gradient (decayed); 0 for none.
  float weightDecay;

  /// Returns the new x; updates the element's mean square *square (RmspropOptions::initialMean before the first
  /// step). The second state is unused (null).
  NN_HD float update(float x, float gradient, float* square, float*) const {
    const float d = decayed(x, gradient, weightDecay);
    const float m = *square * alpha + oneMinusAlpha * d * d;
    *square = m;
    return x - learningRate * (d / (sqrtf(m) + epsilon));
  }
};

}  // namespace nn::math
