// nn::BroadcastParameterModule: what CMul, Mul and Add share: one parameter broadcast against the
// input (nn/modules/BroadcastShape.h) and multiplied into it (CMul, Mul) or added to it (Add); its
// gradient is summed back over the dimensions it was broadcast along. Each pass is one call to
// the BroadcastKernels of the input's device, so a steady step allocates nothing. A subclass
// gives the operation, the parameter's sizes and names, and its own toString.
#pragma once

#include <vector>

#include "nn/core/Module.h"
#include "nn/math/Broadcast.h"
#include "nn/modules/BroadcastShape.h"

namespace nn {

/// The base of CMul, Mul and Add: one learned parameter broadcast against the input.
class BroadcastParameterModule : public Module {
 public:
  const Tensor& updateOutput(const Tensor& input) final;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) final;
  void accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) final;
  void clearState() override;

  /// Uniform in +-1/sqrt(number of parameter elements), from the default generator (Torch7's
  /// reset of CMul, Mul and Add).
  void reset();

 protected:
  /// op: multiply or add; sizes: the parameter's; name: its stateDict name, "weight" or "bias".
  BroadcastParameterModule(math::BroadcastOp op, const std::vector<int64_t>& sizes, const char* name);

  /// The parameter, of the sizes given to the constructor: CMul's and Mul's weight, Add's bias.
  Tensor parameter_;
  /// Its gradient, of its sizes: gradOutput (times the input, for a product) summed over the dimensions the
  /// parameter is broadcast along, accumulated (times scale) by accGradParameters.
  Tensor gradParameter_;

 private:
  // The broadcasting of the parameter against `input`, checked, naming the module.
  const BroadcastShape& broadcastingFor(const Tensor& input);

  math::BroadcastOp op_;
  BroadcastShape broadcasting_;
  Tensor contiguousInput_;
  Tensor contiguousGradOutput_;
};

}  // namespace nn
