// nn::ReshapingModule: what View and Reshape share. The output is the input's elements, in
// order, under other sizes, and gradInput is gradOutput's under the input's sizes; both share
// the storage they come from (a strided tensor is first copied into a contiguous buffer), as
// Torch7's view does. A subclass says only which sizes an input gets.
#pragma once

#include <vector>

#include "nn/core/Module.h"

namespace nn {

/// The base of View and Reshape: output and gradInput are views under other sizes.
class ReshapingModule : public Module {
 public:
  const Tensor& updateOutput(const Tensor& input) final;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) final;
  void clearState() override;

 protected:
  /// The output sizes for `input`, which must hold as many elements; throws, naming the
  /// module, where the input cannot take them.
  virtual const std::vector<int64_t>& outputSizes(const Tensor& input) = 0;

 private:
  // Contiguous copies of a strided input or gradOutput, which output and gradInput then view.
  Tensor contiguousInput_;
  Tensor contiguousGradOutput_;
};

}  // namespace nn
