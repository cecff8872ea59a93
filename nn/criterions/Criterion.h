// nn::Criterion: a loss. forward(input, target) returns the loss, backward(input, target)
// its gradient with respect to input. sizeAverage (default true) divides by the batch. The
// criterions' kernels are in CriterionKernels, for CPU and CUDA tensors.
#pragma once

#include <string>

#include "nn/core/Activity.h"
#include "nn/core/Error.h"
#include "nn/core/Tensor.h"

namespace nn {

class Criterion {
 public:
  explicit Criterion(bool sizeAverage = true) : sizeAverage(sizeAverage) {}
  Criterion(const Criterion&) = delete;
  Criterion& operator=(const Criterion&) = delete;
  virtual ~Criterion() = default;

  float forward(const Tensor& input, const Tensor& target) { return updateOutput(input, target); }
  const Tensor& backward(const Tensor& input, const Tensor& target) { return updateGradInput(input, target); }

  virtual float updateOutput(const Tensor& input, const Tensor& target) = 0;
  virtual const Tensor& updateGradInput(const Tensor& input, const Tensor& target) = 0;

  /// The same for an input and a target that are tensors or tables (ParallelCriterion). The
  /// defaults serve criterions of tensors: they call the passes above.
  float forward(const Activity& input, const Activity& target) { return updateOutputActivity(input, target); }
  const Activity& backward(const Activity& input, const Activity& target) {
    return updateGradInputActivity(input, target);
  }
  virtual float updateOutputActivity(const Activity& input, const Activity& target);
  virtual const Activity& updateGradInputActivity(const Activity& input, const Activity& target);
  /// "nn.ClassNLLCriterion"
  virtual std::string toString() const = 0;

  bool sizeAverage;
  float output = 0.f;
  Tensor gradInput;

 protected:
  /// The gradient updateGradInputActivity returns; for a criterion of tensors, gradInput.
  Activity gradInputActivity_{gradInput};

  /// For criterions over class scores: checks input [classes] or [batch, classes] and targets
  /// [batch] of class indices from 0 (as floats) on the input's device; returns the batch size.
  /// The targets are checked where they are (Backend::checkValues): on a CUDA device by a
  /// kernel, whose failure is thrown at the device's next host wait, at the latest when
  /// forward reads the loss (Note [Host synchronisations]).
  int64_t checkClassTargets(const Tensor& input, const Tensor& target);
  /// One float on `device` for a kernel to write the loss to.
  float* lossOn(const Device& device);
  /// The loss written there, read on the host; sets `output` to it.
  float readLoss();
  /// A criterion's weights (kept on the host, shared with the tensor the user gave) on
  /// `device`, contiguous: copied at every call, so that changes to the weights take effect.
  const float* weightsOn(const Tensor& weights, const Device& device);

 private:
  Tensor deviceWeights_;
  Tensor contiguousTargets_;
  Tensor loss_;
  Tensor hostLoss_;
};

}  // namespace nn
