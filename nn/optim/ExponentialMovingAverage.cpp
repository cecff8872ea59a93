// nn::ExponentialMovingAverage (ExponentialMovingAverage.h).
#include "nn/optim/ExponentialMovingAverage.h"

#include <algorithm>
#include <cmath>

#include "nn/tensor/Error.h"

namespace nn {

ExponentialMovingAverage::ExponentialMovingAverage(Module& module, double decay) : module_(module), decay_(decay) {
  NN_CHECK(std::isfinite(decay) && decay >= 0 && decay < 1,
           "nn.ExponentialMovingAverage: expected a decay in [0, 1), got " << decay);
  current_ = module.getParameters().first;
  parameters_ = current_.clone();
  moduleBuffers_ = module.buffers();
  int64_t largest = current_.numel();
  for (const Tensor& b : moduleBuffers_) {
    buffers_.push_back(b.clone());
    largest = std::max(largest, b.numel());
  }
  spare_ = Tensor::empty({largest}, current_.numel() > 0 ? current_.device() : module.device());
}

void ExponentialMovingAverage::update() {
  const auto keep = static_cast<float>(decay_), take = static_cast<float>(1 - decay_);
  parameters_.mul_(keep).add_(current_, take);
  for (size_t i = 0; i < buffers_.size(); ++i) buffers_[i].mul_(keep).add_(moduleBuffers_[i], take);
  ++updates_;
}

void ExponentialMovingAverage::restore(const Tensor& parameters, const std::vector<Tensor>& buffers, int64_t updates) {
  NN_CHECK(parameters.numel() == parameters_.numel(), "nn.ExponentialMovingAverage: an average of "
                                                          << parameters.numel() << " parameters for a module of "
                                                          << parameters_.numel());
  NN_CHECK(buffers.size() == buffers_.size(), "nn.ExponentialMovingAverage: an average of "
                                                  << buffers.size() << " buffers for a module of " << buffers_.size());
  for (size_t i = 0; i < buffers.size(); ++i)
    NN_CHECK(buffers[i].numel() == buffers_[i].numel(), "nn.ExponentialMovingAverage: buffer "
                                                            << i << " of the average has " << buffers[i].numel()
                                                            << " values, the module's " << buffers_[i].numel());
  NN_CHECK(updates >= 0, "nn.ExponentialMovingAverage: expected an update count >= 0, got " << updates);
  parameters_.copy_(parameters.view({parameters_.numel()}));
  for (size_t i = 0; i < buffers.size(); ++i) buffers_[i].copy_(buffers[i].view(buffers_[i].sizes()));
  updates_ = updates;
}

void ExponentialMovingAverage::swap() {
  auto exchange = [this](Tensor& a, Tensor& b) {
    if (a.numel() == 0) return;
    Tensor spare = spare_.narrow(0, 0, a.numel()).view(a.sizes());
    spare.copy_(a);
    a.copy_(b);
    b.copy_(spare);
  };
  exchange(current_, parameters_);
  for (size_t i = 0; i < buffers_.size(); ++i) exchange(moduleBuffers_[i], buffers_[i]);
  // Handing out the parameters again tells a module that keeps copies of them (a
  // DataParallelTable's replicas) that they changed: its next forward copies them.
  module_.getParameters();
}

}  // namespace nn
