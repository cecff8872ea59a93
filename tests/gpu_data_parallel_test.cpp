// DataParallelTable on CUDA devices: tagged [gpu][multigpu] (two or more).
// Where the machine has fewer, tests/main.cpp leaves them out of the run and counts them
// as skipped, saying why; none of them is reported as passed without a GPU running it.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "cunn/cuda/CudaBackend.h"
#include "cunn/cunn.h"
#include "tests/GradCheck.h"

using Catch::Contains;
using nn::Device;
using nn::Tensor;

namespace {

nn::CudaBackend& backend() { return nn::CudaBackend::instance(); }

// Passes its input through and sets its gradient to scale * (rows of its input), so the
// gradients of replicas over a split batch sum to one module's over the whole batch. It
// computes with fill and copies only: CUDA tensors have nothing more before module kernels
// exist (which is also why it sets the gradient rather than adding to it).
class RowCount : public nn::Module {
 public:
  RowCount() {
    weight = Tensor::zeros({3});
    gradWeight = Tensor::zeros({3});
    registerParameter("weight", &weight, &gradWeight);
  }
  static nn::ModulePtr create(const nn::Config&, std::vector<nn::ModulePtr>) { return std::make_shared<RowCount>(); }
  const Tensor& updateOutput(const Tensor& input) override {
    output.set_(input);
    return output;
  }
  const Tensor& updateGradInput(const Tensor&, const Tensor& gradOutput) override {
    gradInput.set_(gradOutput);
    return gradInput;
  }
  void accGradParameters(const Tensor& input, const Tensor&, float scale) override {
    gradWeight.fill_(scale * static_cast<float>(input.size(0)));
  }
  std::string typeName() const override { return "test.RowCount"; }

  Tensor weight;
  Tensor gradWeight;
};

const nn::ModuleRegistration rowCountRegistration("test.RowCount", &RowCount::create);

}  // namespace

TEST_CASE("DataParallelTable on cuda:0 and cuda:1 scatters, gathers, reduces and broadcasts", "[gpu][multigpu]") {
  for (bool useNCCL : {true, false}) {
    CAPTURE(useNCCL);
    const std::vector<Device> devices = {Device::cuda(0), Device::cuda(1)};
    auto table = std::make_shared<nn::DataParallelTable>(0, true, useNCCL);
    table->add(std::make_shared<RowCount>(), devices);
    REQUIRE(table->communicatorName() == (useNCCL ? "nccl" : "peer copies"));
    REQUIRE(table->get(1)->parameters().first[0].device() == devices[1]);

    // Parameters set on the first replica reach the second at the next forward.
    table->get(0)->parameters().first[0].copy_(Tensor::fromVector({3}, {1, 2, 3}));
    const Tensor x = nn::test::randomTensor({5, 4}, 5);  // rows 0-2 to cuda:0, 3-4 to cuda:1
    const Tensor& y = table->forward(x);
    REQUIRE(y.device() == devices[0]);
    REQUIRE(y.toVector() == x.toVector());
    REQUIRE(table->get(1)->parameters().first[0].toVector() == std::vector<float>{1, 2, 3});

    // Each replica sets its gradient to 0.5 * its rows (3 and 2); the first receives the sum.
    table->zeroGradParameters();
    const Tensor g = nn::test::randomTensor({5, 4}, 6);
    const Tensor& gx = table->backward(x, g, 0.5f);
    REQUIRE(gx.device() == devices[0]);
    REQUIRE(gx.toVector() == g.toVector());
    REQUIRE(table->get(0)->parameters().second[0].toVector() == std::vector<float>{2.5f, 2.5f, 2.5f});
    REQUIRE(table->get(1)->parameters().second[0].toVector() == std::vector<float>{0, 0, 0});
  }
}

namespace {

// The relative difference |a - b| / |b| of two tensors on any devices.
double relativeDifference(const Tensor& a, const Tensor& b) {
  const std::vector<float> x = a.toVector(), y = b.toVector();
  if (x.size() != y.size()) return 1e30;
  double diff = 0, norm = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    diff += (static_cast<double>(x[i]) - y[i]) * (static_cast<double>(x[i]) - y[i]);
    norm += static_cast<double>(y[i]) * y[i];
  }
  return std::sqrt(diff / std::max(norm, 1e-30));
}

// A small LeNet: every kind of layer of the example, on 12 x 12 images.
std::shared_ptr<nn::Sequential> smallLeNet() {
  nn::manualSeed(21);
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::SpatialConvolution>(1, 4, 3, 3));
  net->add(std::make_shared<nn::ReLU>(true));
  net->add(std::make_shared<nn::SpatialMaxPooling>(2, 2, 2, 2));
  net->add(std::make_shared<nn::View>(std::vector<int64_t>{-1, 4 * 5 * 5}));
  net->add(std::make_shared<nn::Linear>(4 * 5 * 5, 10));
  net->add(std::make_shared<nn::LogSoftMax>());
  return net;
}

}  // namespace

TEST_CASE("DataParallelTable on two GPUs trains as a plain CPU module over 10 SGD steps", "[gpu][multigpu]") {
  for (bool useNCCL : {true, false})
    for (int64_t batch : {9, 15}) {
      CAPTURE(useNCCL, batch);
      auto plain = smallLeNet();
      auto table = std::make_shared<nn::DataParallelTable>(0, true, useNCCL);
      table->add(smallLeNet(), {Device::cuda(0), Device::cuda(1)});
      nn::SgdOptions options;
      options.learningRate = 0.1f;
      options.momentum = 0.9f;
      options.weightDecay = 1e-3f;
      nn::SGD plainSgd(plain->getParameters(), options);
      nn::SGD tableSgd(table->getParameters(), options);
      const Tensor initial = plain->getParameters().first.clone();
      nn::ClassNLLCriterion plainCriterion, tableCriterion;
      for (int step = 0; step < 10; ++step) {
        const Tensor x = nn::test::randomTensor({batch, 1, 12, 12}, 2000 + static_cast<uint64_t>(step));
        std::vector<float> labels;
        for (int64_t i = 0; i < batch; ++i) labels.push_back(static_cast<float>((i * 7 + step) % 10));
        const Tensor y = Tensor::fromVector({batch}, labels);
        const Tensor yOnGpu = y.to(Device::cuda(0));

        plain->zeroGradParameters();
        const Tensor& plainOut = plain->forward(x);
        plainCriterion.forward(plainOut, y);
        plain->backward(x, plainCriterion.backward(plainOut, y));
        plainSgd.step();

        table->zeroGradParameters();
        const Tensor& tableOut = table->forward(x);
        REQUIRE(tableOut.device() == Device::cuda(0));
        tableCriterion.forward(tableOut, yOnGpu);
        table->backward(x, tableCriterion.backward(tableOut, yOnGpu));
        tableSgd.step();
      }
      const Tensor trained = plain->getParameters().first;
      REQUIRE(relativeDifference(trained, initial) > 1e-2);  // training moved the parameters
      // cuBLAS and cuDNN sum in other orders than OpenBLAS: float rounding, grown over 10 steps.
      CHECK(relativeDifference(table->getParameters().first, trained) < 1e-4);
      CHECK(relativeDifference(table->get(1)->getParameters().first, table->get(0)->getParameters().first) == 0.0);
    }
}
