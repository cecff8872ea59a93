// A user's program, built as users build theirs: without Bazel against the installed library
// (tools/install_test.sh, with g++ and with CMake) and from another Bazel workspace
// (tests/external_workspace). An MLP trained for a few steps on cpu:0,cpu:1 through a DataParallelTable on a fixed batch,
// whose loss must halve; prints the first and last loss and "ok".
#include <cstdio>
#include <iostream>
#include <memory>
#include <vector>

#include "cunn/cunn.h"

int main() {
  nn::manualSeed(1);
  nn::Generator data(2);
  nn::Tensor x = nn::Tensor::empty({32, 8});
  x.normal_(data, 0.f, 1.f);
  std::vector<float> labels(32);
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<float>(i % 4);
  const nn::Tensor y = nn::Tensor::fromVector({32}, labels);

  auto net = std::make_shared<nn::Sequential>(std::vector<nn::ModulePtr>{
      std::make_shared<nn::Linear>(8, 32), std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(32, 4),
      std::make_shared<nn::LogSoftMax>()});
  auto model = std::make_shared<nn::DataParallelTable>(0, true, true);
  model->add(net, {nn::Device::cpu(0), nn::Device::cpu(1)});
  std::cout << *model << "\n";
  nn::ClassNLLCriterion criterion;
  nn::SgdOptions options;
  options.learningRate = 0.1f;
  options.momentum = 0.9f;
  nn::SGD sgd(model->getParameters(), options);
  float first = 0, loss = 0;
  for (int step = 0; step < 200; ++step) {
    model->zeroGradParameters();
    const nn::Tensor& out = model->forward(x);
    loss = criterion.forward(out, y);
    if (step == 0) first = loss;
    model->backward(x, criterion.backward(out, y));
    sgd.step();
  }
  std::printf("loss %.4f -> %.4f\n", first, loss);
  if (!(loss < 0.5f * first)) {
    std::printf("not fitted\n");
    return 1;
  }
  std::printf("ok\n");
  return 0;
}
