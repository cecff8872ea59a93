// nn::Reshape: Torch7's Reshape. The input's elements under new sizes, keeping the first
// dimension as a batch when the input holds more than one sample: [N, ...] -> [N, sizes...].
// The output shares the input's storage; nothing is copied.
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/ReshapingModule.h"

namespace nn {

/// The constructor arguments of nn::Reshape.
struct ReshapeOptions {
  /// Positive sizes of one sample.
  std::vector<int64_t> sizes;
  /// Without it, the first dimension is the batch unless the input has exactly the product of
  /// `sizes` elements and a first size other than 1 (Torch7's rule, so [1, 16] -> [1, 2, 8] for
  /// Reshape({2, 8})); with it, the first dimension always is.
  bool batchMode = false;

  template <typename F>
  void visit(F&& field) {
    field("sizes", sizes);
    field("batchMode", batchMode);
  }
};

/// Torch7's nn.Reshape: one sample's elements under `sizes`, a leading batch dimension kept.
class Reshape : public WithOptions<ReshapeOptions, ReshapingModule> {
 public:
  /// Reshape({2, 8}) as Torch7's nn.Reshape(2, 8), Reshape({2, 8}, true) as nn.Reshape(2, 8, true);
  /// throws unless the sizes are positive and there is at least one.
  explicit Reshape(std::vector<int64_t> sizes, bool batchMode = false)
      : Reshape(Options{std::move(sizes), batchMode}) {}
  /// The same from options (what nn::load rebuilds from).
  explicit Reshape(const Options& options);

  std::string typeName() const override { return "nn.Reshape"; }
  /// "nn.Reshape(2x8)", as Torch7 prints it.
  std::string toString() const override;

  /// The sizes of one sample, as given.
  const std::vector<int64_t>& sizes() const { return options_.sizes; }
  /// Whether the first dimension is always the batch (ReshapeOptions::batchMode).
  bool batchMode() const { return options_.batchMode; }

 protected:
  /// sizes(), or [N, sizes()...] for a batch of N (kept in resolved_).
  const std::vector<int64_t>& outputSizes(const Tensor& input) override;

 private:
  int64_t count_ = 1;  // product of the sizes: the elements of one sample
  std::vector<int64_t> resolved_;
};

}  // namespace nn
