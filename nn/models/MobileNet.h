// nn::models::mobilenetV2: torchvision's MobileNetV2 (Sandler et al., "MobileNetV2: Inverted
// Residuals and Linear Bottlenecks"; width 1.0) from Torch7's modules with the parameter names of
// torchvision's state_dict() ("features.0.0.weight", "features.2.conv.1.1.running_var",
// "classifier.1.weight"), so that its weights, saved by safetensors.torch.save_file, load with
// nn::loadStateInto as they are. An inverted residual block that keeps its planes and size is a
// Sequential of a ConcatTable (its layers, named "conv", and the input) and a CAddTable, the
// ConcatTable's names lifted into the block's, as resnet's (nn/models/ResNet.h).
#pragma once

#include <cstdint>

#include "nn/core/Module.h"

namespace nn::models {

/// torchvision.models.mobilenet_v2(num_classes=numClasses): 17 inverted residual blocks of
/// depthwise 3x3 convolutions between 1x1 expansions and projections, ReLU6, dropout 0.2 before
/// the classifier. Input [batch, 3, height, width], 224 x 224 for ImageNet's weights.
ModulePtr mobilenetV2(int64_t numClasses = 1000);

}  // namespace nn::models
