// nn::GradientClipper (nn/optim/GradientClipper.h): the norm and the clips by hand, against the
// norm summed in double on the host for a large buffer, on every device type; the same norm for a
// model on one device and in a DataParallelTable; the refusals; no allocation once made.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "nn/nn.h"
#include "nn/optim/GradientClipper.h"
#include "nn/parallel/DataParallelTable.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Tensor;

NN_DEVICE_TEST_CASE("GradientClipper: the norm and the clips as PyTorch's, by hand", "[GradientClipper]") {
  // [3, 4, 0, -12]: norm sqrt(9 + 16 + 144) = 13.
  Tensor g = kind.on(Tensor::fromVector({4}, {3.f, 4.f, 0.f, -12.f}));
  nn::GradientClipper clipper(g);
  CHECK(clipper.norm() == 13.0);
  // Below the norm nothing changes; above, each gradient times maxNorm / (13 + 1e-6).
  CHECK(clipper.clipNorm(20) == 13.0);
  CHECK(g.toVector() == std::vector<float>{3.f, 4.f, 0.f, -12.f});
  CHECK(clipper.clipNorm(6.5) == 13.0);
  const double coefficient = 6.5 / (13 + 1e-6);
  const std::vector<float> clipped = g.toVector();
  CHECK(clipped[0] == static_cast<float>(3.f * static_cast<float>(coefficient)));
  CHECK(clipped[3] == static_cast<float>(-12.f * static_cast<float>(coefficient)));
  CHECK(clipper.norm() == Approx(6.5).epsilon(1e-6));
  // By value: clamped into [-2, 2].
  g.copy_(kind.on(Tensor::fromVector({4}, {3.f, 1.5f, 0.f, -12.f})));
  clipper.clipValue(2);
  CHECK(g.toVector() == std::vector<float>{2.f, 1.5f, 0.f, -2.f});
}

NN_DEVICE_TEST_CASE("GradientClipper: the norm of a large buffer is its sum of squares in double",
                    "[GradientClipper]") {
  // 100,003 values: 256 parts of 390 and 163 left over, each summed in double.
  const Tensor host = nn::test::randomTensor({100003}, 7);
  double sum = 0;
  for (float v : host.toVector()) sum += static_cast<double>(v) * v;
  nn::GradientClipper clipper(kind.on(host));
  CHECK(clipper.norm() == Approx(std::sqrt(sum)).epsilon(1e-7));
  // Fewer values than parts, and none.
  nn::GradientClipper small(kind.on(Tensor::fromVector({3}, {1.f, 2.f, 2.f})));
  CHECK(small.norm() == 3.0);
  nn::GradientClipper empty(kind.on(Tensor::empty({0})));
  CHECK(empty.norm() == 0.0);
}

NN_DEVICE_TEST_CASE("GradientClipper refuses what has no meaning and leaves non-finite gradients as they were",
                    "[GradientClipper]") {
  Tensor g = kind.on(Tensor::fromVector({3}, {1.f, INFINITY, 2.f}));
  nn::GradientClipper clipper(g);
  CHECK_THROWS_WITH(clipper.clipNorm(1), Catch::Contains("the gradients' norm is inf"));
  CHECK(g.toVector()[0] == 1.f);
  CHECK_THROWS_WITH(clipper.clipNorm(0), Catch::Contains("expected a positive, finite maximum norm, got 0"));
  CHECK_THROWS_WITH(clipper.clipValue(-1), Catch::Contains("expected a positive, finite value, got -1"));
  const Tensor strided = kind.on(Tensor::zeros({4, 4})).narrow(1, 0, 2);
  CHECK_THROWS_WITH(nn::GradientClipper(strided), Catch::Contains("expected a contiguous gradient buffer"));
}

NN_MULTI_DEVICE_TEST_CASE("GradientClipper: a DataParallelTable's gradient has the norm of one device's",
                          "[GradientClipper]") {
  auto makeNet = [] {
    nn::manualSeed(5);
    return std::make_shared<nn::Sequential>(std::vector<nn::ModulePtr>{
        nn::make<nn::Linear>(6, 16), nn::make<nn::Tanh>(), nn::make<nn::Linear>(16, 3), nn::make<nn::LogSoftMax>()});
  };
  const Tensor x = nn::test::randomTensor({9, 6}, 8);
  Tensor y = Tensor::fromVector({9}, {0, 1, 2, 0, 1, 2, 0, 1, 2});
  nn::ClassNLLCriterion criterion;
  auto one = makeNet();
  one->to(kind.device());
  auto table = std::make_shared<nn::DataParallelTable>(0, true, false);
  table->add(makeNet(), kind.devices(2));
  double norms[2];
  int i = 0;
  for (const nn::ModulePtr& m : std::vector<nn::ModulePtr>{one, table}) {
    auto [values, gradients] = m->getParameters();
    nn::GradientClipper clipper(gradients);
    m->zeroGradParameters();
    const Tensor& out = m->forward(kind.on(x));
    criterion.forward(out, kind.on(y));
    m->backward(kind.on(x), criterion.backward(out, kind.on(y)));
    norms[i++] = clipper.norm();
  }
  CHECK(norms[0] > 0);
  CHECK(norms[1] == Approx(norms[0]).epsilon(1e-5));
}
