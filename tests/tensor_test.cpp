// nn::Tensor: views, resizing and arithmetic on every device type; copies between logical CPU
// devices and device names. The transfers, fills and copies of every backend are in
// backend_test.cpp.
#include "nn/Tensor.h"

#include <catch2/catch.hpp>
#include <string>

#include "nn/Error.h"
#include "nn/backend/Backend.h"
#include "tests/DeviceTest.h"
#include "tests/GradCheck.h"

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
