// nn::SiLU: y = x sigmoid(x), element-wise (PyTorch's nn.SiLU, the swish); the backward reads the
// input.
#pragma once

#include "nn/modules/ActivationModule.h"

namespace nn {

/// x / (1 + exp(-x)) element-wise (PyTorch's nn.SiLU); never in place, as its backward reads x.
class SiLU : public ActivationModule {
 public:
  SiLU() : ActivationModule(Entry::of<math::activation::SiLU>(), math::ActivationArgs{}, false) {}
  std::string typeName() const override { return "nn.SiLU"; }
};

}  // namespace nn
