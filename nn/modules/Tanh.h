// nn::Tanh: y = tanh(x), element-wise; the backward reads the output, as Torch7's.
#pragma once

#include "nn/modules/ActivationModule.h"

namespace nn {

/// The hyperbolic tangent element-wise (Torch7's nn.Tanh, PyTorch's Tanh); never in place.
class Tanh : public ActivationModule {
 public:
  Tanh() : ActivationModule(Entry::of<math::activation::Tanh>(), math::ActivationArgs{}, false) {}
  std::string typeName() const override { return "nn.Tanh"; }
};

}  // namespace nn
