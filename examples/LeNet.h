// The LeNet of Torch7's tutorials, for 28x28 single-channel images and 10 classes.
#pragma once

#include <memory>

#include "nn/modules/Sequential.h"

namespace examples {

/// conv 1->20 5x5, ReLU, max-pool 2, conv 20->50 5x5, ReLU, max-pool 2, View(-1, 800),
/// Linear 800->500, ReLU, Linear 500->10, LogSoftMax; initialised from nn::defaultGenerator().
/// The ReLUs work in place (Torch7's nn.ReLU(true)): the same numbers with less memory.
std::shared_ptr<nn::Sequential> lenet();

}  // namespace examples
