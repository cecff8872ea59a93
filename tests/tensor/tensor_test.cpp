// nn::Tensor: views, resizing and arithmetic on every device type; copies between logical CPU
// devices and device names. The transfers, fills and copies of every backend are in
// backend_test.cpp.
#include "nn/tensor/Tensor.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "nn/backend/Backend.h"
#include "nn/runtime/ComputeThreads.h"
#include "nn/tensor/Error.h"
#include "nn/tensor/Random.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Device;
using nn::Tensor;

NN_DEVICE_TEST_CASE("narrow, select, transpose and view share storage", "[Tensor]") {
  Tensor t = kind.on(Tensor::fromVector({2, 3}, {0, 1, 2, 3, 4, 5}));
  Tensor row = t.select(0, 1);
  REQUIRE(row.toVector() == std::vector<float>{3, 4, 5});
  Tensor col = t.narrow(1, 1, 2);
  REQUIRE(col.toVector() == std::vector<float>{1, 2, 4, 5});
  REQUIRE_FALSE(col.isContiguous());
  col.fill_(9);
  REQUIRE(t.toVector() == std::vector<float>{0, 9, 9, 3, 9, 9});
  Tensor tt = t.transpose(0, 1);
  REQUIRE(tt.sizes() == std::vector<int64_t>{3, 2});
  REQUIRE(tt.toVector() == std::vector<float>{0, 3, 9, 9, 9, 9});
  REQUIRE(t.view({3, -1}).sizes() == std::vector<int64_t>{3, 2});
  REQUIRE_THROWS_AS(tt.view({6}), nn::Error);
  REQUIRE_THROWS_WITH(t.view({4, -1}), Catch::Contains("[2, 3]") && Catch::Contains("[4, -1]"));
}

TEST_CASE("copies between logical CPU devices keep values and change the device", "[Tensor]") {
  Tensor a = Tensor::fromVector({2, 2}, {1, 2, 3, 4});
  Tensor b = a.to(Device::cpu(1));
  REQUIRE(b.device() == Device::cpu(1));
  REQUIRE(b.storage() != a.storage());
  REQUIRE(b.toVector() == a.toVector());
  REQUIRE(a.to(Device::cpu(0)).is(a));
  Tensor c = Tensor::zeros({2, 2}, Device::cpu(2));
  c.copy_(a.transpose(0, 1));
  REQUIRE(c.toVector() == std::vector<float>{1, 3, 2, 4});
}

NN_DEVICE_TEST_CASE("resize_ keeps storage that fits and handles alias", "[Tensor]") {
  Tensor t = Tensor::zeros({4, 4}, kind.device());
  const auto storage = t.storage();
  t.resize_({2, 8}, kind.device());
  REQUIRE(t.storage() == storage);
  Tensor alias = t;
  alias.resize_({100}, kind.device());
  REQUIRE(t.numel() == 100);
  REQUIRE(t.storage() != storage);
}

TEST_CASE("Device::parse accepts cpu devices and rejects malformed ones", "[Device]") {
  REQUIRE(Device::parse("cpu:3") == Device::cpu(3));
  REQUIRE(Device::parse("cpu") == Device::cpu(0));
  REQUIRE(Device::parse("cpu:1").str() == "cpu:1");
  REQUIRE_THROWS_WITH(Device::parse("gpu:0"), Catch::Contains("gpu:0"));
  REQUIRE_THROWS_WITH(Device::parse("cpu:x"), Catch::Contains("cpu:x"));
  REQUIRE_THROWS_WITH(Device::parse("cpu:64"), Catch::Contains("does not exist"));
}

TEST_CASE("a CUDA device that cannot be used is one clear nn::Error in either build", "[Device]") {
  // Without a GPU, or in a build without the CUDA backend: every way to reach cuda:N names
  // the device and says why. With GPUs, the first device past the last one.
  nn::Backend* cuda = nn::findBackend(nn::DeviceType::CUDA);
  const int count = cuda != nullptr ? cuda->deviceCount() : 0;
  const Device missing = Device::cuda(count);
  const std::string expected =
      count == 0 ? "no CUDA device available for " + missing.str() + ": " : missing.str() + " does not exist";
  REQUIRE_THROWS_AS(Device::parse(missing.str()), nn::Error);
  REQUIRE_THROWS_WITH(Device::parse(missing.str()), Catch::Contains(expected));
  REQUIRE_THROWS_WITH(Tensor::zeros({2}, missing), Catch::Contains(expected));
  REQUIRE_THROWS_WITH(Tensor::fromVector({2}, {1, 2}).to(missing), Catch::Contains(expected));
  if (cuda == nullptr) REQUIRE_THROWS_WITH(Device::parse("cuda:0"), Catch::Contains("this build has no CUDA backend"));
}

TEST_CASE("strided copies and fills on CPU devices, within one device and between two", "[Tensor]") {
  // A [3, 4] tensor, its transpose, and a column of it: strides other than the row-major ones.
  const Tensor a = Tensor::fromVector({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  REQUIRE(a.transpose(0, 1).contiguous().toVector() == std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  Tensor onOther = Tensor::zeros({4, 3}, Device::cpu(1)).transpose(0, 1);  // strided on cpu:1
  onOther.copy_(a);
  REQUIRE(onOther.device() == Device::cpu(1));
  REQUIRE(onOther.toVector() == a.toVector());
  Tensor column = Tensor::zeros({3, 4}, Device::cpu(2));
  column.select(1, 2).copy_(a.select(1, 1));  // strided to strided, between devices
  REQUIRE(column.toVector() == std::vector<float>{0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 9, 0});
  column.narrow(1, 0, 2).fill_(-1.f);
  REQUIRE(column.toVector() == std::vector<float>{-1, -1, 1, 0, -1, -1, 5, 0, -1, -1, 9, 0});
}

TEST_CASE("fromVector checks the number of values", "[Tensor]") {
  REQUIRE_THROWS_WITH(Tensor::fromVector({2, 2}, {1, 2, 3}), Catch::Contains("[2, 2]") && Catch::Contains("3"));
}

NN_DEVICE_TEST_CASE("add_, mul_ and cmul_ work element by element on contiguous tensors", "[Tensor]") {
  Tensor a = kind.on(Tensor::fromVector({2, 2}, {1, 2, 3, 4}));
  const Tensor b = kind.on(Tensor::fromVector({2, 2}, {0.5f, -1, 2, 0}));
  a.add_(b, 2.f);  // 1 + 2 * 0.5, 2 + 2 * -1, 3 + 2 * 2, 4 + 0
  REQUIRE(a.toVector() == std::vector<float>{2, 0, 7, 4});
  a.mul_(0.5f);
  REQUIRE(a.toVector() == std::vector<float>{1, 0, 3.5f, 2});
  a.cmul_(b);
  REQUIRE(a.toVector() == std::vector<float>{0.5f, 0, 7, 0});
  REQUIRE_THROWS_WITH(a.cmul_(b.transpose(0, 1)), Catch::Contains("nn.Tensor.cmul_: needs contiguous tensors"));
  REQUIRE_THROWS_WITH(a.cmul_(Tensor::zeros({4}, kind.device())), Catch::Contains("expected sizes [2, 2], got [4]"));
}

NN_DEVICE_TEST_CASE("cmul_(a, b) sets a tensor to a product, resized to a's sizes", "[Tensor]") {
  const Tensor a = kind.on(Tensor::fromVector({2, 2}, {1, 2, 3, 4}));
  const Tensor b = kind.on(Tensor::fromVector({2, 2}, {0.5f, -1, 2, 0}));
  Tensor z = Tensor::zeros({3}, kind.device());
  z.cmul_(a, b);  // 1 * 0.5, 2 * -1, 3 * 2, 4 * 0
  REQUIRE(z.sizes() == std::vector<int64_t>{2, 2});
  REQUIRE(z.toVector() == std::vector<float>{0.5f, -2, 6, 0});
  REQUIRE(a.toVector() == std::vector<float>{1, 2, 3, 4});  // the factors stay
  // More than one part of 16384 elements on two compute threads: every element its own product.
  nn::setNumThreads(2);
  const Tensor x = kind.on(nn::test::randomTensor({40000}, 3)), y = kind.on(nn::test::randomTensor({40000}, 4));
  Tensor xy;
  xy.cmul_(x, y);
  nn::setNumThreads(1);
  const std::vector<float> xs = x.toVector(), ys = y.toVector(), products = xy.toVector();
  for (size_t i = 0; i < xs.size(); i += 997) REQUIRE(products[i] == xs[i] * ys[i]);
  REQUIRE(products.back() == xs.back() * ys.back());
  REQUIRE_THROWS_WITH(z.cmul_(a, b.transpose(0, 1)), Catch::Contains("nn.Tensor.cmul_: needs contiguous tensors"));
}

NN_DEVICE_TEST_CASE("add_(a, b) sets a tensor to a sum, resized to a's sizes, the floats of a copy and add_",
                    "[Tensor]") {
  const Tensor a = kind.on(Tensor::fromVector({2, 2}, {1, 2, 3, 4}));
  const Tensor b = kind.on(Tensor::fromVector({2, 2}, {0.5f, -1, 2, 0}));
  Tensor z = Tensor::zeros({3}, kind.device());
  z.add_(a, b);
  REQUIRE(z.sizes() == std::vector<int64_t>{2, 2});
  REQUIRE(z.toVector() == std::vector<float>{1.5f, 1, 5, 4});
  REQUIRE(a.toVector() == std::vector<float>{1, 2, 3, 4});  // the terms stay
  // On two compute threads, parts of 16384 elements: each element as a copy and add_ give it.
  nn::setNumThreads(2);
  const Tensor x = kind.on(nn::test::randomTensor({40000}, 5)), y = kind.on(nn::test::randomTensor({40000}, 6));
  Tensor sum;
  sum.add_(x, y);
  Tensor copied = x.clone();
  copied.add_(y);
  nn::setNumThreads(1);
  REQUIRE(sum.toVector() == copied.toVector());
  REQUIRE(sum.toVector() != x.toVector());
  REQUIRE_THROWS_WITH(z.add_(a, b.transpose(0, 1)), Catch::Contains("nn.Tensor.add_: needs contiguous tensors"));
  REQUIRE_THROWS_WITH(z.add_(a, Tensor::zeros({4}, kind.device())), Catch::Contains("expected sizes [2, 2], got [4]"));
}

NN_DEVICE_TEST_CASE("fill_, copies and add_ of large tensors on two compute threads touch every element once",
                    "[Tensor]") {
  // 200,000 floats, each its own value: parts of 65,536 (fill, copy) and 16,384 (add) elements
  // and more on each thread.
  std::vector<float> xv(200000), yv(200000);
  for (size_t i = 0; i < xv.size(); ++i) {
    xv[i] = static_cast<float>(i);
    yv[i] = 0.5f * static_cast<float>(i % 1000 + 1);
  }
  nn::setNumThreads(2);
  const Tensor x = kind.on(Tensor::fromVector({200000}, xv)), y = kind.on(Tensor::fromVector({200000}, yv));
  Tensor filled = Tensor::zeros({200000}, kind.device());
  filled.fill_(2.5f);
  Tensor copied = x.to(kind.compared());  // between two memory domains
  Tensor sum = x.clone();
  sum.add_(y);
  nn::setNumThreads(1);
  const std::vector<float> xs = x.toVector(), fs = filled.toVector(), cs = copied.toVector(), ss = sum.toVector();
  for (size_t i = 0; i < xv.size(); ++i) {
    REQUIRE(xs[i] == xv[i]);
    REQUIRE(fs[i] == 2.5f);
    REQUIRE(cs[i] == xv[i]);
    REQUIRE(ss[i] == xv[i] + yv[i]);
  }
}

NN_DEVICE_TEST_CASE("sum, mean, max and argmax along a dimension, as torch's", "[Tensor]") {
  const Tensor t = kind.on(Tensor::fromVector({2, 3}, {1, 5, 3, 4, 2, 6}));
  REQUIRE(t.sum(0).toVector() == std::vector<float>{5, 7, 9});
  REQUIRE(t.sum(1).toVector() == std::vector<float>{9, 12});
  REQUIRE(t.sum(-1).sizes() == std::vector<int64_t>{2});
  REQUIRE(t.sum(1, true).sizes() == std::vector<int64_t>{2, 1});
  REQUIRE(t.sum(1).device() == kind.device());
  REQUIRE(t.mean(0).toVector() == std::vector<float>{2.5f, 3.5f, 4.5f});
  REQUIRE(t.mean(1).toVector() == std::vector<float>{3, 4});
  REQUIRE(t.max(1).toVector() == std::vector<float>{5, 6});
  REQUIRE(t.argmax(1).toVector() == std::vector<float>{1, 2});
  REQUIRE(t.max(0).toVector() == std::vector<float>{4, 5, 6});
  REQUIRE(t.argmax(0, true).sizes() == std::vector<int64_t>{1, 3});
  REQUIRE(t.argmax(0).toVector() == std::vector<float>{1, 0, 1});
  // A middle dimension: [2, 2, 2] holding 0..7, summed along dimension 1.
  const Tensor cube = kind.on(Tensor::fromVector({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}));
  REQUIRE(cube.sum(1).toVector() == std::vector<float>{2, 4, 10, 12});
  REQUIRE(cube.argmax(1).toVector() == std::vector<float>{1, 1, 1, 1});
  // A strided input: the transpose [[1, 4], [5, 2], [3, 6]].
  REQUIRE(t.transpose(0, 1).sum(1).toVector() == std::vector<float>{5, 7, 9});
  REQUIRE(t.transpose(0, 1).argmax(1).toVector() == std::vector<float>{1, 0, 1});
  // Sums in double: in float, 1e8 + 1 rounds to 1e8 and the row would sum to 0.
  REQUIRE(kind.on(Tensor::fromVector({1, 3}, {1e8f, 1, -1e8f})).sum(1).toVector() == std::vector<float>{1});
  // Ties give the first index; a NaN is the maximum, as torch.max propagates it.
  REQUIRE(kind.on(Tensor::fromVector({1, 3}, {2, 7, 7})).argmax(1).toVector() == std::vector<float>{1});
  const Tensor withNan = kind.on(Tensor::fromVector({1, 3}, {1, NAN, 3}));
  REQUIRE(std::isnan(withNan.max(1).item()));
  REQUIRE(withNan.argmax(1).item() == 1);
  // An empty dimension sums to 0 and has no maximum.
  const Tensor empty = Tensor::zeros({2, 0}, kind.device());
  REQUIRE(empty.sum(1).toVector() == std::vector<float>{0, 0});
  REQUIRE_THROWS_WITH(empty.max(1), Catch::Contains("nn.Tensor.max: dimension 1 of sizes [2, 0] is empty"));
  REQUIRE_THROWS_WITH(t.sum(2),
                      Catch::Contains("nn.Tensor.sum: dimension 2 out of range for a tensor of sizes [2, 3]"));
  REQUIRE_THROWS_WITH(t.argmax(-3), Catch::Contains("nn.Tensor.argmax: dimension -3 out of range"));
}

NN_DEVICE_TEST_CASE("eq, ne, lt, le, gt and ge give 1 where they hold and 0 where not", "[Tensor]") {
  const Tensor a = kind.on(Tensor::fromVector({2, 2}, {1, 2, 3, NAN}));
  const Tensor b = kind.on(Tensor::fromVector({2, 2}, {1, 3, 2, NAN}));
  REQUIRE(a.eq(b).toVector() == std::vector<float>{1, 0, 0, 0});
  REQUIRE(a.ne(b).toVector() == std::vector<float>{0, 1, 1, 1});
  REQUIRE(a.lt(b).toVector() == std::vector<float>{0, 1, 0, 0});
  REQUIRE(a.le(b).toVector() == std::vector<float>{1, 1, 0, 0});
  REQUIRE(a.gt(b).toVector() == std::vector<float>{0, 0, 1, 0});
  REQUIRE(a.ge(b).toVector() == std::vector<float>{1, 0, 1, 0});
  REQUIRE(a.eq(2).toVector() == std::vector<float>{0, 1, 0, 0});
  REQUIRE(a.ne(2).toVector() == std::vector<float>{1, 0, 1, 1});
  REQUIRE(a.lt(2).toVector() == std::vector<float>{1, 0, 0, 0});
  REQUIRE(a.le(2).toVector() == std::vector<float>{1, 1, 0, 0});
  REQUIRE(a.gt(2).toVector() == std::vector<float>{0, 0, 1, 0});
  REQUIRE(a.ge(2).toVector() == std::vector<float>{0, 1, 1, 0});
  REQUIRE(a.eq(b).device() == kind.device());
  REQUIRE(a.transpose(0, 1).eq(b).toVector() == std::vector<float>{1, 1, 1, 0});  // a^T = {1, 3, 2, NaN}
  REQUIRE_THROWS_WITH(a.eq(Tensor::zeros({4}, kind.device())),
                      Catch::Contains("nn.Tensor.eq: expected sizes [2, 2], got [4]"));
  REQUIRE_THROWS_WITH(a.lt(Tensor::zeros({2, 2}, kind.other())),
                      Catch::Contains("nn.Tensor.lt: expected a tensor on " + kind.device().str()));
}

NN_DEVICE_TEST_CASE("an accuracy from argmax, eq and mean; item() of one element", "[Tensor]") {
  // Predicted classes 1, 0 and 2 against targets 1, 0 and 0: two of three right.
  const Tensor output = kind.on(Tensor::fromVector({3, 3}, {0.1f, 2, 0.3f, 5, 1, 1, 0, 0, 1}));
  const Tensor target = kind.on(Tensor::fromVector({3}, {1, 0, 0}));
  REQUIRE(output.argmax(1).eq(target).mean() == Approx(2.0 / 3.0).epsilon(1e-12));
  REQUIRE(output.argmax(1).eq(target).sum(0).item() == 2);
  REQUIRE(kind.on(Tensor::full({1, 1}, 3.5f)).item() == 3.5f);
  REQUIRE_THROWS_WITH(target.item(),
                      Catch::Contains("nn.Tensor.item: expected a tensor of one element, got sizes [3]"));
  REQUIRE(std::isnan(Tensor::zeros({0}, kind.device()).mean()));
}

NN_DEVICE_TEST_CASE("rand and randn draw from the generator the same values on every device", "[Tensor]") {
  nn::Generator g(7), same(7);
  const Tensor u = Tensor::rand({10000}, g, kind.device());
  REQUIRE(u.device() == kind.device());
  REQUIRE(u.toVector() == Tensor::rand({10000}, same).toVector());
  REQUIRE(u.ge(0).mean() == 1);
  REQUIRE(u.lt(1).mean() == 1);
  REQUIRE(u.mean() == Approx(0.5).margin(0.01));  // the standard error is 0.003
  const Tensor n = Tensor::randn({100, 100}, g, kind.device());
  REQUIRE(n.toVector() == Tensor::randn({100, 100}, same).toVector());
  REQUIRE(n.mean() == Approx(0).margin(0.04));  // the standard error is 0.01
  Tensor squares = n.clone();
  squares.cmul_(n);
  REQUIRE(squares.mean() == Approx(1).margin(0.06));  // the standard error is 0.014
}
