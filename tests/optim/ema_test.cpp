// nn::ExponentialMovingAverage (nn/optim/ExponentialMovingAverage.h): the average by hand over
// two updates for a parameter and a buffer, swapped in and out for evaluation, restored from its
// parts, and refused where a decay or a restore has no meaning; on every device type, and for a
// DataParallelTable, whose replicas evaluate on the average once it is swapped in.
#include <catch2/catch.hpp>
#include <vector>

#include "nn/nn.h"
#include "nn/optim/ExponentialMovingAverage.h"
#include "nn/parallel/DataParallelTable.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Tensor;

NN_DEVICE_TEST_CASE("ExponentialMovingAverage: two updates by hand, swapped in and back",
                    "[ExponentialMovingAverage]") {
  // A batch normalisation: 2 weights, 2 biases, running mean and variance as buffers.
  nn::SpatialBatchNormalization bn(2);
  bn.to(kind.device());
  auto [values, gradients] = bn.getParameters();
  values.copy_(kind.on(Tensor::fromVector({4}, {1.f, 2.f, 3.f, 4.f})));
  nn::ExponentialMovingAverage average(bn, 0.5);
  // Update 1 after the values become [3, 2, 1, 0]: 0.5 * [1, 2, 3, 4] + 0.5 * [3, 2, 1, 0] = [2, 2, 2, 2].
  values.copy_(kind.on(Tensor::fromVector({4}, {3.f, 2.f, 1.f, 0.f})));
  average.update();
  CHECK(average.parameters().toVector() == std::vector<float>{2.f, 2.f, 2.f, 2.f});
  // Update 2 after [6, 6, 6, 6]: [4, 4, 4, 4]; the running mean, 0 until now and 1 here, averages
  // to 0.5 * 0 + 0.5 * 1.
  values.fill_(6.f);
  bn.runningMean.fill_(1.f);
  average.update();
  CHECK(average.parameters().toVector() == std::vector<float>{4.f, 4.f, 4.f, 4.f});
  CHECK(average.buffers()[0].toVector() == std::vector<float>{0.5f, 0.5f});
  CHECK(average.updates() == 2);
  {
    const nn::AveragedWeights averaged(average);
    CHECK(values.toVector() == std::vector<float>{4.f, 4.f, 4.f, 4.f});
    CHECK(bn.runningMean.toVector() == std::vector<float>{0.5f, 0.5f});
  }
  CHECK(values.toVector() == std::vector<float>{6.f, 6.f, 6.f, 6.f});
  CHECK(bn.runningMean.toVector() == std::vector<float>{1.f, 1.f});

  // Restored into another average of the same module: the same parts.
  nn::ExponentialMovingAverage restored(bn, 0.5);
  restored.restore(average.parameters(), average.buffers(), average.updates());
  CHECK(restored.parameters().toVector() == average.parameters().toVector());
  CHECK(restored.updates() == 2);
  CHECK_THROWS_WITH(restored.restore(Tensor::zeros({3}), average.buffers(), 2),
                    Catch::Contains("an average of 3 parameters for a module of 4"));
  CHECK_THROWS_WITH(nn::ExponentialMovingAverage(bn, 1.0), Catch::Contains("expected a decay in [0, 1), got 1"));
}

NN_MULTI_DEVICE_TEST_CASE("ExponentialMovingAverage: a DataParallelTable evaluates on the average swapped in",
                          "[ExponentialMovingAverage]") {
  nn::manualSeed(4);
  auto linear = nn::make<nn::Linear>(3, 2);
  auto table = std::make_shared<nn::DataParallelTable>(0, true, false);
  table->add(linear, kind.devices(2));
  const Tensor x = kind.on(nn::test::randomTensor({6, 3}, 9));
  table->evaluate();
  const Tensor before = table->forward(x).clone();
  nn::ExponentialMovingAverage average(*table, 0.0);  // decay 0: the average is the last values
  auto [values, gradients] = table->getParameters();
  values.mul_(2.f);
  table->syncParameters();
  const Tensor doubled = table->forward(x).clone();
  {
    // The average holds the values before the doubling: every replica's output is as before.
    const nn::AveragedWeights averaged(average);
    CHECK(nn::test::maxAbsDiff(table->forward(x), before) == 0);
  }
  CHECK(nn::test::maxAbsDiff(table->forward(x), doubled) == 0);
}
