// nn::PointwiseCriterion: what the point-wise criterions share (MSE, Abs, SmoothL1, DistKLDiv,
// BCE): input and target of one size, any number of dimensions, on one device; optional
// weights over the input's last dimension; one call each way to the loss's entry of the
// CriterionKernels of the input's device (nn/math/PointwiseLoss.h). A criterion says only
// which entry, and checks its own input where it must (BCE's range).
#pragma once

#include "nn/backend/CriterionKernels.h"
#include "nn/criterions/Criterion.h"

namespace nn {

/// The base of the element-wise losses: checks, weights and one kernel call each way; see the file comment.
class PointwiseCriterion : public Criterion {
 public:
  float updateOutput(const Tensor& input, const Tensor& target) final;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& target) final;

  /// The weights given at construction (empty without them).
  const Tensor& weights() const { return weights_; }

 protected:
  /// The loss's entry in CriterionKernels::pointwise, by its formula's type:
  /// Entry::of<math::loss::Mse>().
  struct Entry {
    /// The loss's position in math::loss::All, which indexes CriterionKernels::pointwise.
    int index;
    /// The entry of the loss formula L, a struct listed in math::loss::All (a compile error otherwise).
    template <typename L>
    static constexpr Entry of() {
      return Entry{math::loss::indexOf<L>()};
    }
  };
  /// weights, where given: a 1-D tensor with a weight for each index of the input's last
  /// dimension, broadcast over the others (Torch7's and PyTorch's BCE weights).
  PointwiseCriterion(Entry entry, bool sizeAverage, Tensor weights = Tensor());

  /// Checks of the input beyond its size, naming the criterion (none by default).
  virtual void checkInput(const Tensor& input);

 private:
  // Checks input, target and weights; returns the weights on the input's device, or null.
  const float* check(const Tensor& input, const Tensor& target);

  Entry entry_;
  Tensor weights_;
  Tensor contiguousInput_, contiguousTarget_;
};

}  // namespace nn
