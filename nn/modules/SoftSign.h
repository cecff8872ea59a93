// nn::SoftSign: y = x / (1 + |x|), element-wise (Torch7's nn.SoftSign); the backward reads the
// input.
#pragma once

#include "nn/modules/ActivationModule.h"

namespace nn {

/// x / (1 + |x|) element-wise (Torch7's nn.SoftSign, PyTorch's Softsign); never in place.
class SoftSign : public ActivationModule {
 public:
  SoftSign() : ActivationModule(Entry::of<math::activation::SoftSign>(), math::ActivationArgs{}, false) {}
  std::string typeName() const override { return "nn.SoftSign"; }
};

}  // namespace nn
