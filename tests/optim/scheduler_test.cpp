// The learning-rate schedules (nn/optim/LrScheduler.h) against PyTorch's own schedulers, step by
// step (tests/reference/SchedulerReference.h, written by tests/reference/make_scheduler_reference.py), their refusals,
// and their state: a schedule restored from state() at any step goes on with the same rates.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nn/optim/Adam.h"
#include "nn/optim/LrScheduler.h"
#include "nn/optim/SGD.h"
#include "nn/tensor/Error.h"
#include "tests/reference/SchedulerReference.h"

using nn::Tensor;

namespace {

constexpr int kSteps = 40;

// A schedule's maker over an optimizer, as the reference's were made.
using Make = std::function<std::shared_ptr<nn::LrScheduler>(nn::Optimizer&)>;

struct Schedule {
  const char* name;
  Make make;
  const std::vector<double>& reference;
};

// Adam keeps its learning rate a double, as PyTorch's param groups do.
std::unique_ptr<nn::Adam> adam(double rate) {
  nn::AdamOptions options;
  options.learningRate = rate;
  return std::make_unique<nn::Adam>(std::make_pair(Tensor::zeros({2}), Tensor::zeros({2})), options);
}

std::vector<Schedule> schedules() {
  return {
      {"StepLR", [](nn::Optimizer& o) { return std::make_shared<nn::StepLR>(o, 7, 0.5); }, nn::test::kStepLR},
      {"MultiStepLR",
       [](nn::Optimizer& o) {
         return std::make_shared<nn::MultiStepLR>(o, std::vector<int64_t>{25, 3, 10, 10}, 0.3);
       },
       nn::test::kMultiStepLR},
      {"ExponentialLR", [](nn::Optimizer& o) { return std::make_shared<nn::ExponentialLR>(o, 0.93); },
       nn::test::kExponentialLR},
      {"LinearLR", [](nn::Optimizer& o) { return std::make_shared<nn::LinearLR>(o, 0.25, 0.75, 12); },
       nn::test::kLinearLR},
      {"CosineAnnealingLR", [](nn::Optimizer& o) { return std::make_shared<nn::CosineAnnealingLR>(o, 16, 0.002); },
       nn::test::kCosineAnnealingLR},
      {"LinearLR then CosineAnnealingLR",
       [](nn::Optimizer& o) {
         auto warmup = std::make_shared<nn::LinearLR>(o, 0.1, 1.0, 5);
         auto cosine = std::make_shared<nn::CosineAnnealingLR>(o, 30, 1e-3);
         return std::make_shared<nn::SequentialLR>(o, std::vector<std::shared_ptr<nn::LrScheduler>>{warmup, cosine},
                                                   std::vector<int64_t>{5});
       },
       nn::test::kWarmupCosine},
      {"OneCycleLR", [](nn::Optimizer& o) { return std::make_shared<nn::OneCycleLR>(o, 0.8, kSteps, 0.25); },
       nn::test::kOneCycleLR},
  };
}

void requireRate(double got, double expected) { CHECK(std::fabs(got - expected) <= 1e-12 * std::fabs(expected)); }

}  // namespace

TEST_CASE("Each schedule sets PyTorch's rates, step by step", "[LrScheduler]") {
  for (const Schedule& s : schedules()) {
    INFO(s.name);
    REQUIRE(s.reference.size() == kSteps + 1);
    auto optimizer = adam(0.1);
    auto schedule = s.make(*optimizer);
    for (int t = 0; t <= kSteps; ++t) {
      INFO("step " << t);
      if (t > 0) schedule->step();
      CHECK(schedule->stepCount() == t);
      requireRate(optimizer->learningRate(), s.reference[t]);
      requireRate(schedule->rateAt(t), s.reference[t]);
    }
  }
}

TEST_CASE("ReduceLROnPlateau lowers the rate as PyTorch's does for the same metrics", "[LrScheduler]") {
  auto optimizer = adam(0.1);
  nn::ReduceLROnPlateau plateau(*optimizer, 0.5, 3, 1e-4, 2, 0.01);
  requireRate(optimizer->learningRate(), nn::test::kReduceLROnPlateau[0]);
  int lowered = 0;
  for (int t = 1; t <= kSteps; ++t) {
    INFO("step " << t);
    const double before = optimizer->learningRate();
    plateau.step(nn::test::kPlateauMetrics[t - 1]);
    requireRate(optimizer->learningRate(), nn::test::kReduceLROnPlateau[t]);
    lowered += optimizer->learningRate() < before;
  }
  CHECK(lowered >= 2);  // the metrics stall twice long enough
  CHECK_THROWS_WITH(plateau.step(std::nan("")), Catch::Contains("nn.ReduceLROnPlateau: expected a metric, got NaN"));
  nn::LrScheduler& asBase = plateau;
  CHECK_THROWS_WITH(asBase.step(), Catch::Contains("step() needs the metric"));
}

TEST_CASE("A schedule restored from its state at any step goes on with the same rates", "[LrScheduler]") {
  for (const Schedule& s : schedules()) {
    INFO(s.name);
    for (int stop : {0, 4, 17, 33}) {
      INFO("restored at step " << stop);
      auto first = adam(0.1);
      auto schedule = s.make(*first);
      for (int t = 0; t < stop; ++t) schedule->step();
      // A new run: another rate given at the start, as a resumed run's flags may give it.
      auto second = adam(0.1);
      auto resumed = s.make(*second);
      resumed->setState(schedule->state());
      CHECK(second->learningRate() == first->learningRate());
      for (int t = stop; t < kSteps; ++t) {
        schedule->step();
        resumed->step();
        CHECK(second->learningRate() == first->learningRate());
      }
    }
  }
  // The plateau's own numbers too: its rate, best metric, bad steps and cooldown.
  auto first = adam(0.1), second = adam(0.1);
  nn::ReduceLROnPlateau a(*first, 0.5, 3, 1e-4, 2, 0.01), b(*second, 0.5, 3, 1e-4, 2, 0.01);
  for (int t = 0; t < 14; ++t) a.step(nn::test::kPlateauMetrics[t]);
  b.setState(a.state());
  for (int t = 14; t < kSteps; ++t) {
    a.step(nn::test::kPlateauMetrics[t]);
    b.step(nn::test::kPlateauMetrics[t]);
    CHECK(second->learningRate() == first->learningRate());
  }
  std::map<std::string, double> broken = a.state();
  broken.erase("best");
  CHECK_THROWS_WITH(b.setState(broken), Catch::Contains("nn.ReduceLROnPlateau: the saved state has no 'best'"));
  broken = a.state();
  broken["count"] = -1;
  CHECK_THROWS_WITH(b.setState(broken), Catch::Contains("'count' is -1, not a count"));
}

TEST_CASE("SGD's float rate is the schedule's rate rounded to a float", "[LrScheduler]") {
  nn::SgdOptions options;
  options.learningRate = 0.1f;
  nn::SGD sgd(std::make_pair(Tensor::zeros({2}), Tensor::zeros({2})), options);
  nn::CosineAnnealingLR cosine(sgd, 16, 0.002);
  for (int t = 1; t <= 10; ++t) {
    cosine.step();
    // The schedule scales the float 0.1 (PyTorch's reference scales the double 0.1).
    CHECK(sgd.options().learningRate == static_cast<float>(cosine.rateAt(t)));
  }
}

TEST_CASE("Schedules refuse settings without a meaning, naming them", "[LrScheduler]") {
  auto optimizer = adam(0.1);
  CHECK_THROWS_WITH(nn::StepLR(*optimizer, 0), Catch::Contains("nn.StepLR: expected a positive step size, got 0"));
  CHECK_THROWS_WITH(nn::ExponentialLR(*optimizer, -1), Catch::Contains("nn.ExponentialLR: expected a finite gamma"));
  CHECK_THROWS_WITH(nn::CosineAnnealingLR(*optimizer, 0), Catch::Contains("expected a positive tMax"));
  CHECK_THROWS_WITH(nn::LinearLR(*optimizer, 0), Catch::Contains("expected a start factor in (0, 1]"));
  CHECK_THROWS_WITH(nn::MultiStepLR(*optimizer, {-2}), Catch::Contains("expected milestones >= 0"));
  CHECK_THROWS_WITH(nn::SequentialLR(*optimizer, {}, {}), Catch::Contains("expected at least one schedule"));
  CHECK_THROWS_WITH(nn::OneCycleLR(*optimizer, 0.5, 1), Catch::Contains("expected more than one step"));
  CHECK_THROWS_WITH(nn::ReduceLROnPlateau(*optimizer, 1.5), Catch::Contains("expected a factor in [0, 1)"));
  nn::OneCycleLR cycle(*optimizer, 0.5, 10);
  for (int t = 0; t < 10; ++t) cycle.step();
  CHECK_THROWS_WITH(cycle.step(), Catch::Contains("nn.OneCycleLR: stepped past its 10 steps"));
}
