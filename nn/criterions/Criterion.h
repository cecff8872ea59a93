// nn::Criterion: a loss. forward(input, target) returns the loss, backward(input, target)
// its gradient with respect to input. sizeAverage (default true) divides by the batch (the
// criterions over class scores) or by the number of elements (the point-wise criterions). The
// criterions' kernels are in CriterionKernels, for CPU and CUDA tensors.
#pragma once

#include <string>

#include "nn/core/Activity.h"
#include "nn/tensor/Error.h"
#include "nn/tensor/Tensor.h"

namespace nn {

/// The base of the losses (Torch7's nn.Criterion): forward gives the loss, backward its gradient.
///
/// A subclass implements updateOutput and updateGradInput for tensors; a criterion over tables
/// (ParallelCriterion) overrides updateOutputActivity and updateGradInputActivity as well.
/// Criterions are not copyable: they own their result buffers, which they refill at each call.
class Criterion {
 public:
  /// sizeAverage: whether the loss and its gradient are divided by the batch or the number of elements.
  explicit Criterion(bool sizeAverage = true) : sizeAverage(sizeAverage) {}
  Criterion(const Criterion&) = delete;
  Criterion& operator=(const Criterion&) = delete;
  virtual ~Criterion() = default;

  /// The loss of input against target (calls updateOutput); also kept in `output`.
  float forward(const Tensor& input, const Tensor& target) { return updateOutput(input, target); }
  /// The gradient of the loss with respect to input, input's size (calls updateGradInput); also `gradInput`.
  const Tensor& backward(const Tensor& input, const Tensor& target) { return updateGradInput(input, target); }

  /// Computes the loss of input against target, sets `output` to it and returns it.
  ///
  /// The loss is computed on the input's device and read back to the host, so this waits for the device.
  /// Sizes that do not fit, or a target on another device, are an nn::Error naming the criterion.
  virtual float updateOutput(const Tensor& input, const Tensor& target) = 0;
  /// Computes the gradient of the loss with respect to input into `gradInput` (input's size and device)
  /// and returns it.
  ///
  /// The returned tensor is this criterion's buffer, overwritten by the next call: copy it to keep it.
  virtual const Tensor& updateGradInput(const Tensor& input, const Tensor& target) = 0;

  /// The same for an input and a target that are tensors or tables (ParallelCriterion). The
  /// defaults serve criterions of tensors: they call the passes above.
  float forward(const Activity& input, const Activity& target) { return updateOutputActivity(input, target); }
  /// The gradient for an input and a target that are tensors or tables (calls updateGradInputActivity).
  const Activity& backward(const Activity& input, const Activity& target) {
    return updateGradInputActivity(input, target);
  }
  /// The loss for activities; by default, updateOutput of the two tensors (a table is an nn::Error).
  virtual float updateOutputActivity(const Activity& input, const Activity& target);
  /// The gradient for activities, shaped as input; by default updateGradInput of the two tensors, returned
  /// as an activity that shares `gradInput` (a table is an nn::Error).
  virtual const Activity& updateGradInputActivity(const Activity& input, const Activity& target);
  /// "nn.ClassNLLCriterion"
  virtual std::string toString() const = 0;

  /// Whether the loss and the gradient are divided by the batch or by the number of elements (which one
  /// depends on the criterion); read at every call, so it may be changed between calls. Torch7's sizeAverage.
  bool sizeAverage;
  /// The loss the last forward (updateOutput) computed; 0 before any.
  float output = 0.f;
  /// The gradient the last backward (updateGradInput) computed, input's size, on input's device; a criterion
  /// over tables (ParallelCriterion) leaves it empty and returns a table instead.
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
  /// Checks a criterion's weights as its constructor gets them: empty (none), or 1-D and finite;
  /// an nn::Error naming `who` ("nn.BCECriterion") otherwise.
  static void checkWeights(const Tensor& weights, const char* who);
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
