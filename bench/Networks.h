// The networks of the benchmark suite (tools/bench-suite.sh), each built as a user would build
// it, with its input shape: bench/networks_torch.py builds the same ones in PyTorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/core/Module.h"

namespace bench {

struct Network {
  std::string name;
  /// One sample's sizes; a batch is [batch, ...] of these.
  std::vector<int64_t> sampleSizes;
  int64_t classes = 10;
  nn::ModulePtr model;
};

/// "lenet": examples/LeNet on 1x28x28. "mlp": View(-1, 784), Linear 784->1024, ReLU,
/// Linear 1024->1024, ReLU, Linear 1024->10, LogSoftMax on 1x28x28. "vgg": two VGG stages on
/// 3x32x32, each two 3x3 padded convolutions (32, then 64 planes) with SpatialBatchNormalization
/// and ReLU, then 2x2 max pooling; View(-1, 4096), Dropout(0.5), Linear 4096->256, ReLU,
/// Linear 256->10, LogSoftMax. "resnet": examples/ResNet on 1x28x28. Initialised from
/// nn::defaultGenerator(); throws std::invalid_argument naming the networks for another name.
Network makeNetwork(const std::string& name);

/// The names makeNetwork knows, in the suite's order.
const std::vector<std::string>& networkNames();

/// Multiply-adds of one sample's forward pass through the convolutions and Linear layers of
/// `model`, after a forward of a batch (the convolutions' outputs give their positions), and
/// those of the first such layer, whose gradInput training with setGradInputNeeded(false) skips.
struct ForwardWork {
  double multiplyAdds = 0, firstLayer = 0;
};
ForwardWork forwardWork(nn::Module& model);

}  // namespace bench
