// nn::models::resnet18, resnet34, resnet50: torchvision's ResNets (He et al., "Deep Residual
// Learning for Image Recognition"; the bottleneck's stride on its 3x3 convolution, as torchvision's
// "v1.5"), built from Torch7's modules with the parameter names of torchvision's state_dict()
// ("conv1.weight", "layer1.0.bn1.running_mean", "layer2.0.downsample.0.weight", "fc.bias"), so
// that its weights, saved by safetensors.torch.save_file, load with nn::loadStateInto as they are.
//
// Each residual block is a Sequential of a ConcatTable (the block's layers, and the shortcut) whose
// names are lifted into the block's (Container::add with an empty name), a CAddTable and a ReLU:
//   layer1.0 = Sequential { ConcatTable { Sequential { conv1 bn1 relu conv2 bn2 }, downsample or
//              Identity }, add, relu }
// The input is [batch, 3, height, width] (224 x 224 for ImageNet's weights; 32 and more work:
// the average pooling adapts to what is left).
#pragma once

#include <cstdint>

#include "nn/core/Module.h"

namespace nn::models {

/// torchvision.models.resnet18(num_classes=numClasses): basic blocks [2, 2, 2, 2].
ModulePtr resnet18(int64_t numClasses = 1000);
/// torchvision.models.resnet34: basic blocks [3, 4, 6, 3].
ModulePtr resnet34(int64_t numClasses = 1000);
/// torchvision.models.resnet50: bottleneck blocks [3, 4, 6, 3], four times as wide at their ends.
ModulePtr resnet50(int64_t numClasses = 1000);

}  // namespace nn::models
