// The benchmark suite's networks.
#include "bench/Networks.h"

#include <memory>
#include <stdexcept>

#include "examples/LeNet.h"
#include "examples/ResNet.h"
#include "nn/nn.h"

namespace bench {

namespace {

using nn::Sequential;

std::shared_ptr<Sequential> mlp() {
  auto net = std::make_shared<Sequential>();
  net->add(std::make_shared<nn::View>(std::vector<int64_t>{-1, 784}));
  net->add(std::make_shared<nn::Linear>(784, 1024));
  net->add(std::make_shared<nn::ReLU>(true));
  net->add(std::make_shared<nn::Linear>(1024, 1024));
  net->add(std::make_shared<nn::ReLU>(true));
  net->add(std::make_shared<nn::Linear>(1024, 10));
  net->add(std::make_shared<nn::LogSoftMax>());
  return net;
}

// conv 3x3 padded, batch normalisation, ReLU.
void convBnRelu(Sequential& net, int64_t in, int64_t out) {
  net.add(std::make_shared<nn::SpatialConvolution>(in, out, 3, 3, 1, 1, 1, 1));
  net.add(std::make_shared<nn::SpatialBatchNormalization>(out));
  net.add(std::make_shared<nn::ReLU>(true));
}

std::shared_ptr<Sequential> vgg() {
  auto net = std::make_shared<Sequential>();
  convBnRelu(*net, 3, 32);
  convBnRelu(*net, 32, 32);
  net->add(std::make_shared<nn::SpatialMaxPooling>(2, 2, 2, 2));
  convBnRelu(*net, 32, 64);
  convBnRelu(*net, 64, 64);
  net->add(std::make_shared<nn::SpatialMaxPooling>(2, 2, 2, 2));
  net->add(std::make_shared<nn::View>(std::vector<int64_t>{-1, 64 * 8 * 8}));
  net->add(std::make_shared<nn::Dropout>(0.5));
  net->add(std::make_shared<nn::Linear>(64 * 8 * 8, 256));
  net->add(std::make_shared<nn::ReLU>(true));
  net->add(std::make_shared<nn::Linear>(256, 10));
  net->add(std::make_shared<nn::LogSoftMax>());
  return net;
}

}  // namespace

const std::vector<std::string>& networkNames() {
  static const std::vector<std::string> names{"lenet", "mlp", "vgg", "resnet"};
  return names;
}

Network makeNetwork(const std::string& name) {
  if (name == "lenet") return {name, {1, 28, 28}, 10, examples::lenet()};
  if (name == "mlp") return {name, {1, 28, 28}, 10, mlp()};
  if (name == "vgg") return {name, {3, 32, 32}, 10, vgg()};
  if (name == "resnet") return {name, {1, 28, 28}, 10, examples::resnet()};
  std::string known;
  for (const std::string& n : networkNames()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown network '" + name + "'; expected one of " + known);
}

ForwardWork forwardWork(nn::Module& model) {
  ForwardWork work;
  for (const nn::ModulePtr& m : model.listModules()) {
    double macs = 0;
    if (auto* conv = dynamic_cast<nn::SpatialConvolution*>(m.get())) {
      const auto& o = conv->options();
      macs = static_cast<double>(conv->output.numel()) / conv->output.size(0) * o.nInputPlane * o.kH * o.kW;
    } else if (auto* linear = dynamic_cast<nn::Linear*>(m.get())) {
      macs = static_cast<double>(linear->options().inputSize) * linear->options().outputSize;
    } else {
      continue;
    }
    if (work.multiplyAdds == 0) work.firstLayer = macs;
    work.multiplyAdds += macs;
  }
  return work;
}

}  // namespace bench
