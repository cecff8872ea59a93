// nn::Reshape: Torch7's Reshape. The input's elements under new sizes, keeping the first
// dimension as a batch when the input holds more than one sample: [N, ...] -> [N, sizes...].
// The output shares the input's storage; nothing is copied.
#pragma once

#include "nn/ReshapingModule.h"

namespace nn {

class Reshape : public ReshapingModule {
 public:
  /// Positive sizes of one sample. Without batchMode, the first dimension is the batch unless
  /// the input has exactly the product of `sizes` elements and a first size other than 1
  /// (Torch7's rule, so [1, 16] -> [1, 2, 8] for Reshape({2, 8})); with batchMode it always is.
  explicit Reshape(std::vector<int64_t> sizes, bool batchMode = false);
  static ModulePtr create(const Config& config, std::vector<ModulePtr> children);

  std::string typeName() const override { return "nn.Reshape"; }
  /// "nn.Reshape(2x8)", as Torch7 prints it.
  std::string toString() const override;
  Config config() const override;

  const std::vector<int64_t>& sizes() const { return sizes_; }
  bool batchMode() const { return batchMode_; }

 protected:
  /// sizes_, or [N, sizes_...] for a batch of N (kept in resolved_).
  const std::vector<int64_t>& outputSizes(const Tensor& input) override;

 private:
  std::vector<int64_t> sizes_;
  bool batchMode_;
  int64_t count_ = 1;  // product of sizes_: the elements of one sample
  std::vector<int64_t> resolved_;
};

}  // namespace nn
