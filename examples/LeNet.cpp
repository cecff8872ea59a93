// The LeNet of Torch7's tutorials.
#include "examples/LeNet.h"

#include "nn/nn.h"

namespace examples {

std::shared_ptr<nn::Sequential> lenet() {
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::SpatialConvolution>(1, 20, 5, 5));
  net->add(std::make_shared<nn::ReLU>(true));
  net->add(std::make_shared<nn::SpatialMaxPooling>(2, 2, 2, 2));
  net->add(std::make_shared<nn::SpatialConvolution>(20, 50, 5, 5));
  net->add(std::make_shared<nn::ReLU>(true));
  net->add(std::make_shared<nn::SpatialMaxPooling>(2, 2, 2, 2));
  net->add(std::make_shared<nn::View>(std::vector<int64_t>{-1, 800}));
  net->add(std::make_shared<nn::Linear>(800, 500));
  net->add(std::make_shared<nn::ReLU>(true));
  net->add(std::make_shared<nn::Linear>(500, 10));
  net->add(std::make_shared<nn::LogSoftMax>());
  return net;
}

}  // namespace examples
