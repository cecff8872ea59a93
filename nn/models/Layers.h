// What the models' layers share: torchvision's convolutions, which a batch normalisation follows
// and so have no bias.
#pragma once

#include <cstdint>

#include "nn/core/Module.h"

namespace nn::models {

/// A square convolution without a bias (PyTorch's Conv2d(..., bias=False)) of `groups` groups.
ModulePtr convolution(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t pad, int64_t groups = 1);

}  // namespace nn::models
