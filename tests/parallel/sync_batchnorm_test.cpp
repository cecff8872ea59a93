// Synchronised batch normalisation (BatchNormalizationOptions::sync): a DataParallelTable whose
// replicas normalise by the whole batch's statistics computes what one device computes on the
// whole batch (output, gradInput, parameter gradients, running statistics, a few SGD steps),
// where without sync it does not; the replicas' StatisticsGroup adds in replica order and ends
// the others' waits where one replica fails. The ranks' case is in tests/distributed/distributed_ranks.cpp.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "nn/modules/BatchNormalization.h"
#include "nn/modules/Linear.h"
#include "nn/modules/ReLU.h"
#include "nn/modules/Sequential.h"
#include "nn/modules/SpatialBatchNormalization.h"
#include "nn/modules/SpatialConvolution.h"
#include "nn/modules/View.h"
#include "nn/optim/SGD.h"
#include "nn/parallel/DataParallelTable.h"
#include "nn/parallel/ReplicaStatistics.h"
#include "nn/tensor/Random.h"
#include "tests/support/DeviceTest.h"

using nn::Device;
using nn::Tensor;

namespace {

// Convolution, batch normalisation (an in-place ReLU after it, taken into its passes), linear,
// batch normalisation: the statistics of 4 planes over the batch and positions, and of 5 features.
nn::ModulePtr net(bool sync) {
  nn::manualSeed(5);
  auto seq = std::make_shared<nn::Sequential>();
  seq->add(std::make_shared<nn::SpatialConvolution>(2, 4, 3, 3));
  seq->add(std::make_shared<nn::SpatialBatchNormalization>(4));
  seq->add(std::make_shared<nn::ReLU>(true));
  seq->add(std::make_shared<nn::View>(std::vector<int64_t>{-1, 64}));
  seq->add(std::make_shared<nn::Linear>(64, 5));
  seq->add(std::make_shared<nn::BatchNormalization>(5));
  // Weights and biases away from reset()'s [0, 1) and 0, so that every term counts.
  for (nn::NamedTensor& t : seq->stateDict())
    if (t.name == "1.bias" || t.name == "5.bias") t.value.uniform_(nn::defaultGenerator(), -0.5f, 0.5f);
  nn::setSyncBatchNorm(*seq, sync);
  return seq;
}

nn::ModulePtr table(bool sync, const std::vector<Device>& devices) {
  auto t = std::make_shared<nn::DataParallelTable>(0);
  t->add(net(sync), devices);
  return t;
}

double maxDifference(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]));
  return worst;
}

// maxDifference relative to the largest of `want`'s magnitudes, or absolute below 1: gradients
// summed over a batch grow with it, and so do the rounding differences of other summation orders
// (the GEMMs of each instruction set's level among them).
double relativeDifference(const std::vector<float>& got, const std::vector<float>& want) {
  double largest = 1;
  for (float w : want) largest = std::max(largest, std::fabs(static_cast<double>(w)));
  return maxDifference(got, want) / largest;
}

// What one training step gives: the output, gradInput, the parameters' gradients and the buffers.
struct Step {
  std::vector<float> output, gradInput, gradients, buffers;
};

Step step(nn::Module& model, const Tensor& x, const Tensor& gradOutput) {
  model.training();
  model.zeroGradParameters();
  Step s;
  s.output = model.forward(x).toVector();
  s.gradInput = model.backward(x, gradOutput).toVector();
  s.gradients = model.getParameters().second.toVector();
  for (const Tensor& b : model.buffers()) {
    const std::vector<float> v = b.toVector();
    s.buffers.insert(s.buffers.end(), v.begin(), v.end());
  }
  return s;
}

void checkClose(const Step& got, const Step& want, double tolerance) {
  CHECK(relativeDifference(got.output, want.output) < tolerance);
  CHECK(relativeDifference(got.gradInput, want.gradInput) < tolerance);
  CHECK(relativeDifference(got.gradients, want.gradients) < tolerance);
  CHECK(relativeDifference(got.buffers, want.buffers) < tolerance);
}

}  // namespace

TEST_CASE("a table of synchronised batch normalisation computes what one device does on the whole batch",
          "[SyncBatchNorm]") {
  const auto devices = GENERATE(std::vector<Device>{Device::cpu(0), Device::cpu(1)},
                                std::vector<Device>{Device::cpu(0), Device::cpu(1), Device::cpu(2)});
  // 7 samples: uneven slices (4 and 3; 3, 2 and 2).
  nn::Generator g(11);
  const Tensor x = Tensor::randn({7, 2, 6, 6}, g);
  const Tensor gradOutput = Tensor::randn({7, 5}, g);
  nn::ModulePtr whole = net(true);  // no table: the statistics of its own batch, the whole
  const Step want = step(*whole, x, gradOutput);

  nn::ModulePtr synced = table(true, devices);
  checkClose(step(*synced, x, gradOutput), want, 1e-5);

  // The route ran: each replica's own statistics give other numbers.
  nn::ModulePtr apart = table(false, devices);
  const Step separate = step(*apart, x, gradOutput);
  CHECK(maxDifference(separate.output, want.output) > 1e-2);
  CHECK(maxDifference(separate.gradInput, want.gradInput) > 1e-3);

  // Evaluation mode normalises by the running statistics, the same on both.
  whole->evaluate();
  synced->evaluate();
  CHECK(maxDifference(synced->forward(x).toVector(), whole->forward(x).toVector()) < 1e-5);
}

TEST_CASE("SGD steps with synchronised batch normalisation on two devices follow one device's", "[SyncBatchNorm]") {
  nn::Generator g(12);
  nn::ModulePtr whole = net(true);
  nn::ModulePtr synced = table(true, {Device::cpu(0), Device::cpu(1)});
  nn::SgdOptions options;
  options.learningRate = 0.05f;
  options.momentum = 0.9f;
  nn::SGD sgdWhole(whole->getParameters(), options), sgdSynced(synced->getParameters(), options);
  for (int k = 0; k < 4; ++k) {
    const Tensor x = Tensor::randn({6, 2, 6, 6}, g);
    const Tensor gradOutput = Tensor::randn({6, 5}, g);
    checkClose(step(*synced, x, gradOutput), step(*whole, x, gradOutput), 2e-5);
    sgdWhole.step();
    sgdSynced.step();
  }
  CHECK(relativeDifference(synced->getParameters().first.toVector(), whole->getParameters().first.toVector()) < 2e-5);
}

TEST_CASE("sync is saved with the module and printed; outside a table it is plain batch normalisation",
          "[SyncBatchNorm]") {
  nn::SpatialBatchNormalization bn(3);
  CHECK_FALSE(bn.sync());
  bn.setSync(true);
  CHECK(bn.toString() == "nn.SpatialBatchNormalization(3, sync)");
  bool saved = false;
  bn.config().read("sync", saved, "test");
  CHECK(saved);
  nn::ModulePtr copy = bn.clone();
  CHECK(std::dynamic_pointer_cast<nn::SpatialBatchNormalization>(copy)->sync());

  nn::ModulePtr plain = net(false), synced = net(true);
  nn::Generator g(13);
  const Tensor x = Tensor::randn({4, 2, 6, 6}, g);
  const Tensor gradOutput = Tensor::randn({4, 5}, g);
  const Step a = step(*plain, x, gradOutput), b = step(*synced, x, gradOutput);
  CHECK(a.output == b.output);
  CHECK(a.gradInput == b.gradInput);
  CHECK(a.gradients == b.gradients);
}

TEST_CASE("the replicas' statistics add in replica order, whatever order they arrive in", "[SyncBatchNorm]") {
  nn::ReplicaStatistics group(3);
  // Values whose sum depends on the order: 1e16 + 1 - 1e16 is 0 or 1 as they are added.
  const std::vector<double> parts{1e16, 1.0, -1e16};
  for (int order = 0; order < 3; ++order) {
    group.begin(3, nullptr);
    std::vector<double> got(3, -1);
    std::vector<std::thread> threads;
    for (int k = 0; k < 3; ++k) {
      const int i = (k + order) % 3;
      threads.emplace_back([&, i] {
        double v = parts[static_cast<size_t>(i)];
        group.replica(static_cast<size_t>(i))->allReduceSum(&v, 1);
        got[static_cast<size_t>(i)] = v;
      });
    }
    for (std::thread& t : threads) t.join();
    const double inOrder = (1e16 + 1.0) + -1e16;
    CHECK(got == std::vector<double>(3, inOrder));
  }
}

TEST_CASE("a replica that fails ends the others' waits for the batch statistics with its error",
          "[SyncBatchNorm]") {
  nn::ReplicaStatistics group(2);
  group.begin(2, nullptr);
  std::string error;
  std::thread waiting([&] {
    double v = 1;
    try {
      group.replica(0)->allReduceSum(&v, 1);
    } catch (const nn::Error& e) {
      error = e.what();
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  group.abort(1, "nn.Linear: expected input of size [batch, 3], got [2, 4]");
  waiting.join();
  CHECK_THAT(error, Catch::Contains("replica 1 failed before the batch statistics were summed") &&
                        Catch::Contains("expected input of size [batch, 3]"));
  // The next round starts afresh.
  group.begin(1, nullptr);
  double v = 2;
  group.replica(0)->allReduceSum(&v, 1);
  CHECK(v == 2);
}

NN_DEVICE_TEST_CASE("the kernels' phases on each device type give the whole pass's numbers", "[SyncBatchNorm]") {
  // Two halves of a batch on one device, each a replica of a group of two on a thread of its own,
  // against the module on the whole batch: the phases of the device's kernels, summed between.
  const Device device = kind.device();
  nn::Generator g(14);
  const Tensor x = Tensor::randn({6, 3, 4, 4}, g).to(device);
  const Tensor gradOutput = Tensor::randn({6, 3, 4, 4}, g).to(device);
  nn::manualSeed(3);
  nn::SpatialBatchNormalization whole(3);
  whole.setSync(true);
  whole.to(device);
  whole.bias.uniform_(nn::defaultGenerator(), -0.5f, 0.5f);
  const Step want = step(whole, x, gradOutput);

  std::vector<nn::ModulePtr> halves{whole.clone(), whole.clone()};
  nn::ReplicaStatistics group(2);
  std::vector<Step> got(2);
  for (auto& h : halves) {  // the state before the step
    auto* bn = dynamic_cast<nn::SpatialBatchNormalization*>(h.get());
    bn->runningMean.zero_();
    bn->runningVar.fill_(1.f);
  }
  group.begin(2, nullptr);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < 2; ++i)
    threads.emplace_back([&, i] {
      nn::ScopedStatisticsGroup scope(group.replica(i));
      const Tensor xi = x.narrow(0, static_cast<int64_t>(3 * i), 3).contiguous();
      const Tensor gi = gradOutput.narrow(0, static_cast<int64_t>(3 * i), 3).contiguous();
      got[i] = step(*halves[i], xi, gi);
    });
  for (std::thread& t : threads) t.join();
  std::vector<float> output = got[0].output, gradInput = got[0].gradInput;
  output.insert(output.end(), got[1].output.begin(), got[1].output.end());
  gradInput.insert(gradInput.end(), got[1].gradInput.begin(), got[1].gradInput.end());
  CHECK(maxDifference(output, want.output) < 1e-5);
  CHECK(maxDifference(gradInput, want.gradInput) < 1e-5);
  // Each half's parameter gradients are its part; their sum is the whole batch's.
  std::vector<float> summed = got[0].gradients;
  for (size_t k = 0; k < summed.size(); ++k) summed[k] += got[1].gradients[k];
  CHECK(maxDifference(summed, want.gradients) < 1e-5);
  CHECK(maxDifference(got[0].buffers, want.buffers) < 1e-6);
  CHECK(got[0].buffers == got[1].buffers);
}
