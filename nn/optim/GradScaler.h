// nn::GradScaler: dynamic loss scaling for float16 mixed precision, as torch.amp.GradScaler.
// float16's smallest normal is 2^-14: a float16 autocast scope (nn/runtime/Autocast.h) rounds the
// small gradients of a backward pass to zero unless the loss gradient is first multiplied by a
// large scale. The scaler multiplies it (scale), divides the gradients by it again before the
// optimizer reads them (unscale), skips the optimizer's step where that finds an inf or a NaN
// (the scale was too large), and adjusts the scale (update): halved after a skipped step, doubled
// after growthInterval steps in a row without one. In this Torch7-style library the loss
// gradient is the criterion's gradInput, scaled before model->backward:
//
//   nn::GradScaler scaler;
//   const Tensor& out = model->forward(x);
//   criterion.forward(out, y);
//   model->backward(x, scaler.scale(criterion.backward(out, y)));
//   scaler.step(optimizer);   // unscales, then steps unless a gradient is inf or NaN
//   scaler.update();
//
// The gradients unscaled are the optimizer's flat buffer (Module::getParameters().second) on its
// device: under a DataParallelTable the replicas' gradients are summed onto the first device's
// in backward, before the scaler sees them. Its state (the scale and the good steps in a row) goes
// into checkpoints (nn/io/Checkpoint.h). bfloat16 has float32's range and needs no scaling.
#pragma once

#include <cstdint>

#include "nn/optim/Optimizer.h"
#include "nn/tensor/Tensor.h"

namespace nn {

/// torch.amp.GradScaler's options and defaults.
struct GradScalerOptions {
  /// The first scale: finite, > 0, at most a float's largest value.
  double initScale = 65536.0;
  /// The scale's factor after growthInterval good steps in a row: > 1.
  double growthFactor = 2.0;
  /// The scale's factor after a skipped step: in (0, 1).
  double backoffFactor = 0.5;
  /// Good steps in a row before the scale grows: >= 1.
  int64_t growthInterval = 2000;
  /// False keeps the scale as it is (a static loss scale, --loss-scale <number>); steps with an
  /// inf or a NaN are still skipped.
  bool dynamic = true;
};

/// Dynamic loss scaling (see the top of this file).
class GradScaler {
 public:
  /// Options out of range are an nn::Error naming nn.GradScaler, the option and its value.
  explicit GradScaler(GradScalerOptions options = {});

  /// Multiplies `gradient` (the criterion's gradInput) by the scale, in place, and returns it
  /// (a handle to the same storage) for model->backward. Contiguous, else an nn::Error.
  Tensor scale(Tensor gradient) const;
  /// Divides the optimizer's gradients by the scale (multiplies them by its inverse, exact for
  /// powers of two, as PyTorch does) and finds whether any is inf or NaN, element by element (the
  /// greatest of them and of their negations, on their device): finite gradients whose sum would
  /// overflow are finite. Once per step: a second call before update() is an nn::Error, as PyTorch's.
  void unscale(Optimizer& optimizer);
  /// unscale(optimizer) unless called already this step; then optimizer.step() where every
  /// gradient was finite. Returns whether the step was taken.
  bool step(Optimizer& optimizer);
  /// Adjusts the scale after a step (see the top of this file) and starts the next step.
  void update();

  /// The scale in force (PyTorch's get_scale()).
  float getScale() const { return scale_; }
  /// The good steps in a row since the scale last changed.
  int64_t growthTracker() const { return growthTracker_; }
  /// Whether this step's unscale found an inf or a NaN.
  bool foundInf() const { return foundInf_; }
  /// The options given at construction.
  const GradScalerOptions& options() const { return options_; }
  /// Restores a saved state (a checkpoint's): a scale finite and > 0, a tracker from 0 to below
  /// growthInterval, else an nn::Error naming the value. The step in progress starts again.
  void setState(double scale, int64_t growthTracker);

 private:
  GradScalerOptions options_;
  float scale_;
  int64_t growthTracker_ = 0;
  bool unscaled_ = false;  // unscale ran this step
  bool foundInf_ = false;
  Tensor extremes_;        // two elements on the gradients' device: the greatest of -g and of g
  Tensor host_;            // extremes_ copied to the CPU where they lie on another device
};

}  // namespace nn
