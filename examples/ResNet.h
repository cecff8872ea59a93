// A small residual network for 28x28 single-channel images and 10 classes, built as Torch7's
// fb.resnet builds its CIFAR networks: basic blocks of two 3x3 convolutions with batch
// normalisation, their shortcut added by a ConcatTable and a CAddTable.
#pragma once

#include <cstdint>
#include <memory>

#include "nn/modules/Sequential.h"

namespace examples {

/// fb.resnet's basic block: ConcatTable(conv 3x3 stride s, BN, ReLU, conv 3x3, BN | shortcut),
/// CAddTable(true), ReLU. The shortcut is the identity where the shapes agree, else a 1x1 convolution
/// of stride s with batch normalisation (fb.resnet's shortcutType 'B').
std::shared_ptr<nn::Sequential> basicBlock(int64_t nInputPlane, int64_t nOutputPlane, int64_t stride);

/// conv 1->16 3x3, BN, ReLU (28x28); a block 16->32 of stride 2 (14x14); a block 32->64 of
/// stride 2 (7x7); a block 64->64; SpatialAdaptiveAveragePooling(1, 1), View(-1, 64),
/// Linear 64->10, LogSoftMax. Convolutions initialised as fb.resnet's (normal, deviation
/// sqrt(2 / (k k nOutputPlane)), no bias), batch normalisation with weight 1 and bias 0, from
/// nn::defaultGenerator().
std::shared_ptr<nn::Sequential> resnet();

}  // namespace examples
