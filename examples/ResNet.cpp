// A small residual network in fb.resnet's manner.
#include "examples/ResNet.h"

#include <cmath>

#include "nn/nn.h"

namespace examples {

namespace {

// fb.resnet's initialisation: weight normal with deviation sqrt(2 / (k k nOutputPlane)) (He
// et al. for ReLU networks), bias zero (batch normalisation follows every convolution).
std::shared_ptr<nn::SpatialConvolution> convolution(int64_t nIn, int64_t nOut, int64_t k, int64_t stride) {
  const int64_t pad = (k - 1) / 2;
  auto conv = std::make_shared<nn::SpatialConvolution>(nIn, nOut, k, k, stride, stride, pad, pad);
  conv->weight.normal_(nn::defaultGenerator(), 0.f, std::sqrt(2.f / static_cast<float>(k * k * nOut)));
  conv->bias.zero_();
  return conv;
}

// Weight 1 and bias 0, as fb.resnet sets them.
std::shared_ptr<nn::SpatialBatchNormalization> batchNorm(int64_t planes) {
  auto bn = std::make_shared<nn::SpatialBatchNormalization>(planes);
  bn->weight.fill_(1.f);
  bn->bias.zero_();
  return bn;
}

}  // namespace

std::shared_ptr<nn::Sequential> basicBlock(int64_t nInputPlane, int64_t nOutputPlane, int64_t stride) {
  auto residual = std::make_shared<nn::Sequential>();
  residual->add(convolution(nInputPlane, nOutputPlane, 3, stride));
  residual->add(batchNorm(nOutputPlane));
  residual->add(std::make_shared<nn::ReLU>(true));
  residual->add(convolution(nOutputPlane, nOutputPlane, 3, 1));
  residual->add(batchNorm(nOutputPlane));

  nn::ModulePtr shortcut;
  if (nInputPlane == nOutputPlane && stride == 1) {
    shortcut = std::make_shared<nn::Identity>();
  } else {
    auto projection = std::make_shared<nn::Sequential>();
    projection->add(convolution(nInputPlane, nOutputPlane, 1, stride));
    projection->add(batchNorm(nOutputPlane));
    shortcut = projection;
  }

  auto branches = std::make_shared<nn::ConcatTable>();
  branches->add(residual).add(shortcut);
  auto block = std::make_shared<nn::Sequential>();
  block->add(branches);
  block->add(std::make_shared<nn::CAddTable>(true));  // fb.resnet's, in place
  block->add(std::make_shared<nn::ReLU>(true));
  return block;
}

std::shared_ptr<nn::Sequential> resnet() {
  auto net = std::make_shared<nn::Sequential>();
  net->add(convolution(1, 16, 3, 1));
  net->add(batchNorm(16));
  net->add(std::make_shared<nn::ReLU>(true));
  net->add(basicBlock(16, 32, 2));
  net->add(basicBlock(32, 64, 2));
  net->add(basicBlock(64, 64, 1));
  net->add(std::make_shared<nn::SpatialAdaptiveAveragePooling>(1, 1));
  net->add(std::make_shared<nn::View>(std::vector<int64_t>{-1, 64}));
  net->add(std::make_shared<nn::Linear>(64, 10));
  net->add(std::make_shared<nn::LogSoftMax>());
  return net;
}

}  // namespace examples
