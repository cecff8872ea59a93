// nn::DistKLDivCriterion: the Kullback-Leibler divergence of target from the distribution whose
// log-probabilities are the input: sum target (log target - input) over the elements with
// target > 0, divided by the number of elements when sizeAverage (Torch7's DistKLDivCriterion,
// PyTorch's kl_div with reduction 'mean', which averages over elements too); the formula is
// math::loss::DistKLDiv.
#pragma once

#include "nn/criterions/PointwiseCriterion.h"

namespace nn {

/// Torch7's nn.DistKLDivCriterion (PyTorch's KLDivLoss): input log-probabilities, target probabilities.
class DistKLDivCriterion : public PointwiseCriterion {
 public:
  /// sizeAverage: divide the sum by the number of elements (the default) or not.
  explicit DistKLDivCriterion(bool sizeAverage = true)
      : PointwiseCriterion(Entry::of<math::loss::DistKLDiv>(), sizeAverage) {}
  std::string toString() const override { return "nn.DistKLDivCriterion"; }
};

}  // namespace nn
