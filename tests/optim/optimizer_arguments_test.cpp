// One rule for the arguments of every optimizer and of the random initialisers (Note [Optimizer
// options] in nn/optim/Optimizer.h): what has no meaning is an nn::Error naming the optimizer and the
// option, at construction and at the next step where the option was changed since; a value
// the step can use is accepted.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "nn/optim/Adagrad.h"
#include "nn/optim/Adam.h"
#include "nn/optim/AdamW.h"
#include "nn/optim/RMSprop.h"
#include "nn/optim/SGD.h"
#include "nn/tensor/Random.h"

using nn::Tensor;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::pair<Tensor, Tensor> buffers() { return {Tensor::fromVector({3}, {1, 2, 3}), Tensor::fromVector({3}, {1, 1, 1})}; }

// `make(value)` constructs the optimizer with the option set to value; each value of `bad` is
// refused with a message containing `name`, `good` values are accepted.
void checkOption(const std::string& name, const std::vector<double>& bad, const std::vector<double>& good,
                 const std::function<void(double)>& make) {
  for (double value : bad) {
    CAPTURE(name, value);
    CHECK_THROWS_WITH(make(value), Catch::Contains(name));
  }
  for (double value : good) {
    CAPTURE(name, value);
    CHECK_NOTHROW(make(value));
  }
}

}  // namespace

TEST_CASE("SGD refuses a negative learning rate, momentum outside [0, 1], NaN and a negative decay", "[SGD]") {
  // Two steps with the options `set` gives.
  const auto runSgd = [](const std::function<void(nn::SgdOptions&)>& set) {
    nn::SgdOptions o;
    set(o);
    nn::SGD optimizer(buffers(), o);
    optimizer.step();
    optimizer.step();
  };
  const float nan = std::nanf(""), inf = INFINITY;
  // Each of these was accepted: a learning rate decay of -1 sent the parameters to -inf at step 2.
  for (auto [name, set] : std::vector<std::pair<std::string, std::function<void(nn::SgdOptions&)>>>{
           {"nn.SGD: expected a learning rate >= 0, got -0.1", [](nn::SgdOptions& o) { o.learningRate = -0.1f; }},
           {"nn.SGD: expected a learning rate >= 0, got nan", [&](nn::SgdOptions& o) { o.learningRate = nan; }},
           {"nn.SGD: expected a learning rate >= 0, got inf", [&](nn::SgdOptions& o) { o.learningRate = inf; }},
           {"nn.SGD: expected a momentum in [0, 1], got -1", [](nn::SgdOptions& o) { o.momentum = -1.f; }},
           {"nn.SGD: expected a momentum in [0, 1], got 1.5", [](nn::SgdOptions& o) { o.momentum = 1.5f; }},
           {"nn.SGD: expected a momentum in [0, 1], got nan", [&](nn::SgdOptions& o) { o.momentum = nan; }},
           {"nn.SGD: expected a weight decay >= 0, got nan", [&](nn::SgdOptions& o) { o.weightDecay = nan; }},
           {"nn.SGD: expected a weight decay >= 0, got -0.5", [](nn::SgdOptions& o) { o.weightDecay = -0.5f; }},
           {"nn.SGD: expected a learning rate decay >= 0, got -1",
            [](nn::SgdOptions& o) { o.learningRateDecay = -1.f; }},
           {"nn.SGD: expected a dampening in [0, 1], got 2", [](nn::SgdOptions& o) { o.dampening = 2.f; }}}) {
    CAPTURE(name);
    CHECK_THROWS_WITH(runSgd(set), Catch::Contains(name));
  }
  // The bounds themselves have a meaning.
  CHECK_NOTHROW(runSgd([](nn::SgdOptions& o) {
    o.learningRate = 0;
    o.momentum = 1;
    o.dampening = 0;
    o.nesterov = true;
  }));
  // Changed between steps: refused at the next step, which leaves the parameters as they were.
  auto [x, g] = buffers();
  nn::SGD optimizer({x, g});
  optimizer.options().learningRateDecay = -1.f;
  CHECK_THROWS_WITH(optimizer.step(), Catch::Contains("learning rate decay >= 0, got -1"));
  CHECK(x.toVector() == std::vector<float>{1, 2, 3});
  CHECK(optimizer.stepCount() == 0);
}

TEST_CASE("Adam, Adagrad and RMSprop follow the same rule, and Adam refuses a step beyond a float's range",
          "[Adam][Adagrad][RMSprop]") {
  const double floatMax = std::numeric_limits<float>::max();
  checkOption("nn.Adam: expected a learning rate", {-1e-3, kNaN, kInf, 1e300}, {0, 1e-3, 1e30}, [](double v) {
    nn::AdamOptions o;
    o.learningRate = v;
    nn::Adam(buffers(), o).step();
  });
  checkOption("nn.Adam: expected a learning rate decay >= 0", {-1, kNaN}, {0, 1}, [](double v) {
    nn::AdamOptions o;
    o.learningRateDecay = v;
    nn::Adam(buffers(), o);
  });
  checkOption("nn.Adam: expected beta1 in [0, 1)", {-0.1, 1, kNaN}, {0, 0.9}, [](double v) {
    nn::AdamOptions o;
    o.beta1 = v;
    nn::Adam(buffers(), o);
  });
  checkOption("nn.Adam: expected a weight decay", {-1, kNaN, 2 * floatMax}, {0, 0.5}, [](double v) {
    nn::AdamOptions o;
    o.weightDecay = v;
    nn::Adam(buffers(), o);
  });
  // lr = 1e300 was accepted and its step size became infinity; a learning rate a float holds
  // whose first step size does not (PyTorch's form divides it by 1 - beta1 = 0.1) is refused
  // at the step.
  nn::AdamOptions big;
  big.learningRate = 1e300;
  CHECK_THROWS_WITH(nn::Adam(buffers(), big), Catch::Contains("got 1e+300") && Catch::Contains("float"));
  big.learningRate = 1e38;
  big.pytorchEpsilon = true;
  auto [x, g] = buffers();
  nn::Adam adam({x, g}, big);
  CHECK_THROWS_WITH(adam.step(),
                    Catch::Contains("nn.Adam: the step size at step 1") && Catch::Contains("beyond a float's range"));
  CHECK(x.toVector() == std::vector<float>{1, 2, 3});

  checkOption("nn.Adagrad: expected a learning rate", {-1, kNaN, 1e300}, {0, 1e-2}, [](double v) {
    nn::AdagradOptions o;
    o.learningRate = v;
    nn::Adagrad(buffers(), o).step();
  });
  checkOption("nn.Adagrad: expected a learning rate decay >= 0", {-1, kNaN}, {0, 1}, [](double v) {
    nn::AdagradOptions o;
    o.learningRateDecay = v;
    nn::Adagrad(buffers(), o);
  });
  checkOption("nn.RMSprop: expected a learning rate", {-1, kNaN, 1e300}, {0, 1e-2}, [](double v) {
    nn::RmspropOptions o;
    o.learningRate = v;
    nn::RMSprop(buffers(), o).step();
  });
  checkOption("nn.RMSprop: expected alpha in [0, 1]", {-0.5, 1.5, kNaN}, {0, 0.99, 1}, [](double v) {
    nn::RmspropOptions o;
    o.alpha = v;
    nn::RMSprop(buffers(), o);
  });
  checkOption("nn.RMSprop: expected an epsilon >= 0", {-1e-8, kNaN, kInf}, {0, 1e-8}, [](double v) {
    nn::RmspropOptions o;
    o.epsilon = v;
    nn::RMSprop(buffers(), o);
  });
}

TEST_CASE("AdamW follows the same rule, and refuses a step or a decay beyond a float's range", "[AdamW]") {
  const double floatMax = std::numeric_limits<float>::max();
  checkOption("nn.AdamW: expected a learning rate", {-1e-3, kNaN, kInf, 1e300}, {0, 1e-3, 1e30}, [](double v) {
    nn::AdamWOptions o;
    o.learningRate = v;
    o.weightDecay = 0;
    nn::AdamW(buffers(), o).step();
  });
  checkOption("nn.AdamW: expected a learning rate decay >= 0", {-1, kNaN}, {0, 1}, [](double v) {
    nn::AdamWOptions o;
    o.learningRateDecay = v;
    nn::AdamW(buffers(), o);
  });
  checkOption("nn.AdamW: expected beta1 in [0, 1)", {-0.1, 1, kNaN}, {0, 0.9}, [](double v) {
    nn::AdamWOptions o;
    o.beta1 = v;
    nn::AdamW(buffers(), o);
  });
  checkOption("nn.AdamW: expected beta2 in [0, 1)", {-0.1, 1, kNaN}, {0, 0.999}, [](double v) {
    nn::AdamWOptions o;
    o.beta2 = v;
    nn::AdamW(buffers(), o);
  });
  checkOption("nn.AdamW: expected an epsilon >= 0", {-1e-8, kNaN, kInf}, {0, 1e-8}, [](double v) {
    nn::AdamWOptions o;
    o.epsilon = v;
    nn::AdamW(buffers(), o);
  });
  // A decay above 1 / lr makes 1 - lr weightDecay negative, as PyTorch allows.
  checkOption("nn.AdamW: expected a weight decay", {-1, kNaN, 2 * floatMax}, {0, 0.01, 2000}, [](double v) {
    nn::AdamWOptions o;
    o.weightDecay = v;
    nn::AdamW(buffers(), o).step();
  });
  // Each a float, their product not: 1 - lr weightDecay is refused at the step, which leaves the
  // parameters as they were.
  nn::AdamWOptions big;
  big.learningRate = 1e30;
  big.weightDecay = 1e30;
  auto [x, g] = buffers();
  nn::AdamW adamw({x, g}, big);
  CHECK_THROWS_WITH(adamw.step(), Catch::Contains("nn.AdamW: the step size or the weight decay's factor at step 1") &&
                                      Catch::Contains("beyond a float's range"));
  CHECK(x.toVector() == std::vector<float>{1, 2, 3});
  CHECK(adamw.stepCount() == 0);
}

TEST_CASE("uniform_ and normal_ refuse bounds in the wrong order, NaN, and a negative standard deviation", "[Random]") {
  nn::Generator generator(5);
  Tensor t = Tensor::zeros({4});
  const float nan = std::nanf(""), inf = INFINITY, big = std::numeric_limits<float>::max();
  // uniform_(1, 0) was accepted, and so were normal_'s negative and NaN standard deviations.
  for (auto [low, high] : std::vector<std::pair<float, float>>{{1, 0}, {nan, 1}, {0, nan}, {-inf, 0}, {-big, big}}) {
    CAPTURE(low, high);
    CHECK_THROWS_WITH(t.uniform_(generator, low, high), Catch::Contains("a uniform distribution needs finite bounds"));
  }
  for (auto [mean, stddev] : std::vector<std::pair<float, float>>{{0, -1}, {0, nan}, {0, inf}, {nan, 1}}) {
    CAPTURE(mean, stddev);
    CHECK_THROWS_WITH(t.normal_(generator, mean, stddev),
                      Catch::Contains("a normal distribution needs a finite mean and a finite standard deviation"));
  }
  CHECK(t.toVector() == std::vector<float>(4, 0.f));
  // What has a meaning: an empty range gives its one value, a zero deviation the mean.
  CHECK(t.uniform_(generator, 2, 2).toVector() == std::vector<float>(4, 2.f));
  CHECK(t.normal_(generator, -3, 0).toVector() == std::vector<float>(4, -3.f));
  t.uniform_(generator, -1, 1);
  for (float v : t.toVector()) CHECK((v >= -1 && v < 1));
}
