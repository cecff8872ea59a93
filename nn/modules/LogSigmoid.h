// nn::LogSigmoid: y = log(1 / (1 + exp(-x))), element-wise (Torch7's nn.LogSigmoid), computed
// without overflow for inputs of any size; the backward reads the input.
#pragma once

#include "nn/modules/ActivationModule.h"

namespace nn {

/// Torch7's nn.LogSigmoid: log(1 / (1 + exp(-x))), element-wise.
class LogSigmoid : public ActivationModule {
 public:
  LogSigmoid() : ActivationModule(Entry::of<math::activation::LogSigmoid>(), math::ActivationArgs{}, false) {}
  std::string typeName() const override { return "nn.LogSigmoid"; }
};

}  // namespace nn
