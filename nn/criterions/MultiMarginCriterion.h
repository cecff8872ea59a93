// nn::MultiMarginCriterion: the multi-class hinge loss over class scores [classes] or
// [batch, classes] with class targets from 0: each row's loss is
// sum_{j != y} w_y max(0, margin - x_y + x_j)^p / classes, and the rows' losses are summed,
// divided by the batch when sizeAverage (Torch7's MultiMarginCriterion(p, weights, margin),
// PyTorch's multi_margin_loss); the formula is nn/math/MultiMargin.h.
#pragma once

#include "nn/criterions/Criterion.h"

namespace nn {

/// Torch7's nn.MultiMarginCriterion (PyTorch's MultiMarginLoss): the multi-class hinge loss.
class MultiMarginCriterion : public Criterion {
 public:
  /// p: 1 or 2 (the hinge's power). weights: empty, or a 1-D tensor of one weight per class, shared (changes
  /// to it take effect). margin: finite. sizeAverage: divide by the batch size (the default) or not. A value
  /// out of range is an nn::Error.
  explicit MultiMarginCriterion(int p = 1, Tensor weights = Tensor(), float margin = 1.f, bool sizeAverage = true);

  float updateOutput(const Tensor& input, const Tensor& target) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& target) override;
  /// "nn.MultiMarginCriterion(p=1, margin=1)"
  std::string toString() const override;

  /// The hinge's power, 1 or 2.
  int p() const { return p_; }
  /// The margin the target's score must exceed the others' by (default 1).
  float margin() const { return margin_; }
  /// The class weights given at construction (empty without them).
  const Tensor& weights() const { return weights_; }

 private:
  // Checks input, target and weights; returns the weights on the input's device, or null.
  const float* check(const Tensor& input, const Tensor& target);

  int p_;
  float margin_;
  Tensor weights_;
  Tensor contiguousInput_, contiguousTarget_;
};

}  // namespace nn
