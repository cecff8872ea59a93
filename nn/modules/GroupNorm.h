// nn::GroupNorm: PyTorch's group normalisation. The channels of an input [N, C, *] are cut into
// groups, and each sample's group is normalised by the mean and biased variance of its channels'
// values at every position, then scaled and shifted per channel; there are no running
// statistics, so training and evaluation agree.
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/RowNormalization.h"

namespace nn {

/// The arguments of GroupNorm, as PyTorch's nn.GroupNorm names them.
struct GroupNormOptions {
  /// The groups the channels are cut into, in order; positive, and a divisor of numChannels.
  int64_t numGroups = 0;
  /// The input's channels, its dimension 1; positive.
  int64_t numChannels = 0;
  /// Added to the variance before its inverse square root; at least 0. Default 1e-5.
  float eps = 1e-5f;
  /// Learns a weight and a bias per channel (y = normalised x * weight + bias); without them the
  /// output is the normalised input. Default true.
  bool affine = true;

  template <typename F>
  void visit(F&& field) {
    field("numGroups", numGroups);
    field("numChannels", numChannels);
    field("eps", eps);
    field("affine", affine);
  }
};

/// PyTorch's nn.GroupNorm, for an input [N, numChannels, *] (any number of positions' dimensions).
class GroupNorm : public WithOptions<GroupNormOptions, RowNormalization> {
 public:
  /// GroupNorm(2, 6) as PyTorch's nn.GroupNorm(2, 6); the other arguments are those of GroupNormOptions.
  GroupNorm(int64_t numGroups, int64_t numChannels, float eps = 1e-5f, bool affine = true)
      : GroupNorm(Options{numGroups, numChannels, eps, affine}) {}
  /// The module of `options`, weight one and bias zero; an nn::Error unless numGroups and
  /// numChannels are positive, numGroups divides numChannels and eps is at least 0.
  explicit GroupNorm(const Options& options);

  std::string typeName() const override { return "nn.GroupNorm"; }
  /// "nn.GroupNorm(2, 6)", with ", eps=..." and ", affine=false" where they differ from the defaults.
  std::string toString() const override;

  /// The number of groups (GroupNormOptions::numGroups).
  int64_t numGroups() const { return options_.numGroups; }
  /// The number of channels (GroupNormOptions::numChannels).
  int64_t numChannels() const { return options_.numChannels; }
  /// The number added to the variance (GroupNormOptions::eps).
  float eps() const { return options_.eps; }
  /// Whether the module has a weight and a bias (GroupNormOptions::affine).
  bool affine() const { return options_.affine; }

  // weight and bias (RowNormalization) are [numChannels]: a scale and a shift per channel.

 protected:
  void checkInput(const Tensor& input) const override;
  /// N * numGroups rows of a group's channels' positions, a channel's values sharing its parameters.
  NormalizationShape shapeOf(const Tensor& input) const override;
  float epsilon() const override { return options_.eps; }
};

}  // namespace nn
