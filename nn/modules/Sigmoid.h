// nn::Sigmoid: y = 1 / (1 + exp(-x)), element-wise; the backward reads the output, as Torch7's.
#pragma once

#include "nn/modules/ActivationModule.h"

namespace nn {

class Sigmoid : public ActivationModule {
 public:
  Sigmoid() : ActivationModule(Entry::of<math::activation::Sigmoid>(), math::ActivationArgs{}, false) {}
  std::string typeName() const override { return "nn.Sigmoid"; }
};

}  // namespace nn
