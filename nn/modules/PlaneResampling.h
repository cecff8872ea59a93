// nn::PlaneResampling: what SpatialAdaptiveAveragePooling and SpatialUpSamplingNearest share.
// The input is [batch, planes, height, width] or [planes, height, width]; the output holds the
// same planes resized to the sizes the module gives; each pass is one call to the module's entry
// of the PoolingKernels of the input's device (nn/backend/PoolingKernels.h) over contiguous
// planes, so a steady step allocates nothing. A subclass says only which entry and which sizes.
#pragma once

#include <utility>

#include "nn/backend/PoolingKernels.h"
#include "nn/core/Module.h"

namespace nn {

/// The base of the modules that resize every plane by one PoolingKernels entry.
class PlaneResampling : public Module {
 public:
  const Tensor& updateOutput(const Tensor& input) final;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) final;
  void clearState() override;

 protected:
  /// A member of PoolingKernels that holds the forward and backward of a resampling
  /// (`&PoolingKernels::upSamplingNearest`), taken from the input device's kernels at each pass.
  using Entry = ResamplingKernels PoolingKernels::*;
  /// A module whose passes call `entry`.
  explicit PlaneResampling(Entry entry) : entry_(entry) {}

  /// The output's {height, width} for an input of height x width (both positive); throws,
  /// naming the module, where it cannot give one.
  virtual std::pair<int64_t, int64_t> outputSize(const Tensor& input, int64_t height, int64_t width) const = 0;

 private:
  // The shape of a call on `input`, checked; sizes_ set to the output's sizes.
  PoolingShape shapeOf(const Tensor& input);

  Entry entry_;
  std::vector<int64_t> sizes_;
  Tensor contiguousInput_;
  Tensor contiguousGradOutput_;
};

}  // namespace nn
