// nn::Sigmoid: y = 1 / (1 + exp(-x)), element-wise; the backward reads the output, as Torch7's.
#pragma once

#include "nn/modules/ActivationModule.h"

namespace nn {

/// The logistic function element-wise (Torch7's nn.Sigmoid, PyTorch's Sigmoid); never in place.
class Sigmoid : public ActivationModule {
 public:
  Sigmoid() : ActivationModule(Entry::of<math::activation::Sigmoid>(), math::ActivationArgs{}, false) {}
  std::string typeName() const override { return "nn.Sigmoid"; }
};

}  // namespace nn
