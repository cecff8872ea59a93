// nn::ExponentialMovingAverage: an exponential moving average of a module's parameters and
// buffers, for evaluation (PyTorch's AveragedModel with get_ema_multi_avg_fn and use_buffers, or
// timm's ModelEma): after each optimizer step, update() moves each averaged value a fraction
// 1 - decay of the way to the module's. Evaluation runs on the average inside an
// AveragedWeights scope, which swaps it into the module and back. The average lives on the
// module's device, beside its flat parameter buffer (Module::getParameters()); it is made once,
// so a steady step allocates nothing, and checkpoints save it (nn/io/Checkpoint.h), so that a
// resumed run averages on as an uninterrupted one.
#pragma once

#include <cstdint>
#include <vector>

#include "nn/core/Module.h"

namespace nn {

/// The average of a module's parameters and buffers (see the file comment).
class ExponentialMovingAverage {
 public:
  /// Over `module` (which must outlive it), starting from its values now; decay in [0, 1).
  ExponentialMovingAverage(Module& module, double decay);

  /// average = decay * average + (1 - decay) * current, for the parameters and each buffer.
  void update();
  /// The decay.
  double decay() const { return decay_; }
  /// The updates so far.
  int64_t updates() const { return updates_; }

  /// The averaged parameters (the flat buffer's layout) and buffers (in Module::buffers() order),
  /// for checkpoints.
  const Tensor& parameters() const { return parameters_; }
  const std::vector<Tensor>& buffers() const { return buffers_; }
  /// Restores a saved average: the parameters and buffers copied in (their sizes must be the
  /// module's) and the update count; an nn::Error naming what differs.
  void restore(const Tensor& parameters, const std::vector<Tensor>& buffers, int64_t updates);

  /// Exchanges the module's values with the average (the second call exchanges them back).
  void swap();

 private:
  Module& module_;
  double decay_;
  int64_t updates_ = 0;
  Tensor current_;  // the module's flat parameter buffer
  Tensor parameters_;
  std::vector<Tensor> moduleBuffers_;
  std::vector<Tensor> buffers_;
  Tensor spare_;  // for swap, the size of the largest of the tensors
};

/// Evaluates on the average: swaps it into the module for the scope's life, and back after.
class AveragedWeights {
 public:
  explicit AveragedWeights(ExponentialMovingAverage& average) : average_(average) { average_.swap(); }
  ~AveragedWeights() { average_.swap(); }
  AveragedWeights(const AveragedWeights&) = delete;
  AveragedWeights& operator=(const AveragedWeights&) = delete;

 private:
  ExponentialMovingAverage& average_;
};

}  // namespace nn
