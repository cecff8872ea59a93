// nn::Identity, nn::View and nn::Reshape: the modules that change how the same elements are
// seen, on every device type, and on another device with non-contiguous inputs.
#include "nn/modules/View.h"

#include <catch2/catch.hpp>

#include "nn/modules/Identity.h"
#include "nn/modules/Reshape.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Tensor;

namespace {

const std::vector<float> kCounting{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

}  // namespace

NN_DEVICE_TEST_CASE("Identity passes input and gradOutput through, sharing them", "[Identity]") {
  nn::Identity identity;
  const Tensor x = kind.on(Tensor::fromVector({2, 3}, {1, 2, 3, 4, 5, 6}));
  const Tensor& y = identity.forward(x);
  REQUIRE(y.storage() == x.storage());
  REQUIRE(y.toVector() == x.toVector());
  const Tensor g = kind.on(Tensor::fromVector({2, 3}, {6, 5, 4, 3, 2, 1}));
  REQUIRE(identity.backward(x, g).storage() == g.storage());
  REQUIRE(identity.gradInput.toVector() == g.toVector());
  REQUIRE_THAT(nn::test::checkInputGradient(identity, kind.on(nn::test::randomTensor({3, 2}, 1))),
               nn::test::AgreesWithin(1e-3));
  REQUIRE_THROWS_WITH(identity.backward(x, Tensor::zeros({3, 2}, kind.device())),
                      Catch::Contains("nn.Identity") && Catch::Contains("[2, 3]") && Catch::Contains("[3, 2]"));
}

NN_DEVICE_TEST_CASE("Identity keeps a strided input as it is; its clone computes the same", "[Identity]") {
  const Tensor strided = kind.on(nn::test::randomTensor({3, 2}, 2)).transpose(0, 1);
  nn::Identity identity;
  REQUIRE(identity.forward(strided).strides() == strided.strides());
  REQUIRE(nn::test::maxAbsDiff(identity.output, strided.contiguous()) == 0);
  nn::ModulePtr copy = identity.clone();
  REQUIRE(copy->typeName() == "nn.Identity");
  REQUIRE(nn::test::maxAbsDiff(copy->forward(strided), identity.output) == 0);
  copy->forward(Tensor::zeros({4}, kind.device()));
  REQUIRE(identity.output.sizes() == std::vector<int64_t>{2, 3});
}

NN_DEVICE_TEST_CASE("View shows the input under new sizes, inferring -1, without copying", "[View]") {
  nn::View view({-1, 4});
  REQUIRE(view.toString() == "nn.View(-1, 4)");
  Tensor x = kind.on(Tensor::fromVector({2, 2, 4}, kCounting));
  const Tensor& y = view.forward(x);
  // 16 elements, 4 per row: -1 becomes 4, and the elements keep their row-major order.
  REQUIRE(y.sizes() == std::vector<int64_t>{4, 4});
  REQUIRE(y.toVector() == kCounting);
  REQUIRE(y.storage() == x.storage());
  x.view({16}).narrow(0, 5, 1).fill_(-1);  // the output is a view of the input
  REQUIRE(y.toVector()[5] == -1);

  const Tensor g = kind.on(nn::test::randomTensor({4, 4}, 3));
  const Tensor& gi = view.backward(x, g);
  REQUIRE(gi.sizes() == std::vector<int64_t>{2, 2, 4});
  REQUIRE(gi.storage() == g.storage());
  REQUIRE(gi.toVector() == g.toVector());

  REQUIRE(nn::View({2, 8}).forward(x).sizes() == std::vector<int64_t>{2, 8});
  REQUIRE(nn::View({4, -1, 2}).forward(x).sizes() == std::vector<int64_t>{4, 2, 2});
  REQUIRE_THAT(nn::test::checkInputGradient(view, kind.on(nn::test::randomTensor({2, 8}, 4))),
               nn::test::AgreesWithin(1e-3));
}

NN_DEVICE_TEST_CASE("View rejects sizes that do not fit the input, naming itself, the input and the sizes", "[View]") {
  nn::View view({-1, 800});
  REQUIRE_THROWS_WITH(view.forward(Tensor::zeros({4, 50, 5, 5}, kind.device())), Catch::Contains("nn.View(-1, 800)") &&
                                                                                     Catch::Contains("[4, 50, 5, 5]") &&
                                                                                     Catch::Contains("[-1, 800]"));
  REQUIRE_THROWS_WITH(nn::View({3, 4}).forward(Tensor::zeros({2, 5}, kind.device())),
                      Catch::Contains("nn.View(3, 4)") && Catch::Contains("[2, 5]") && Catch::Contains("[3, 4]"));
  view.forward(Tensor::zeros({2, 50, 4, 4}, kind.device()));
  REQUIRE_THROWS_WITH(
      view.backward(Tensor::zeros({2, 50, 4, 4}, kind.device()), Tensor::zeros({800, 2}, kind.device())),
      Catch::Contains("nn.View(-1, 800)") && Catch::Contains("[2, 800]") && Catch::Contains("[800, 2]"));
  REQUIRE_THROWS_WITH(nn::View({-1, -1}), Catch::Contains("nn.View(-1, -1)") && Catch::Contains("at most one"));
  REQUIRE_THROWS_WITH(nn::View({0, 4}), Catch::Contains("nn.View(0, 4)"));
  REQUIRE_THROWS_AS(nn::View(std::vector<int64_t>{}), nn::Error);
}

NN_DEVICE_TEST_CASE("View of a strided input copies it once into its own buffer", "[View]") {
  const Tensor strided = kind.on(nn::test::randomTensor({4, 2, 2}, 5)).transpose(0, 2);
  REQUIRE_FALSE(strided.isContiguous());
  const Tensor stridedG = kind.on(nn::test::randomTensor({8, 2}, 6)).transpose(0, 1);
  nn::View a({2, -1});
  nn::View b({2, -1});
  a.forward(strided);
  REQUIRE(a.output.storage() != strided.storage());
  REQUIRE(nn::test::maxAbsDiff(a.output, b.forward(strided.contiguous())) == 0);
  REQUIRE(nn::test::maxAbsDiff(a.backward(strided, stridedG),
                               b.backward(strided.contiguous(), stridedG.contiguous())) == 0);
  // Later steps reuse the buffers.
  const int64_t allocations = nn::storageAllocationCount();
  a.forward(strided);
  a.backward(strided, stridedG);
  REQUIRE(nn::storageAllocationCount() == allocations);
}

NN_DEVICE_TEST_CASE("View clones keep the sizes and compute the same", "[View]") {
  nn::View view({-1, 3});
  const Tensor x = kind.on(nn::test::randomTensor({2, 6}, 7));
  nn::ModulePtr copy = view.clone();
  REQUIRE(copy->toString() == "nn.View(-1, 3)");
  REQUIRE(nn::test::maxAbsDiff(copy->forward(x), view.forward(x)) == 0);
  copy->forward(Tensor::zeros({9}, kind.device()));
  REQUIRE(view.output.sizes() == std::vector<int64_t>{4, 3});
}

NN_DEVICE_TEST_CASE("Reshape keeps the first dimension as a batch, as Torch7's does", "[Reshape]") {
  nn::Reshape reshape({2, 8});
  REQUIRE(reshape.toString() == "nn.Reshape(2x8)");
  // One sample: exactly 2 x 8 elements, first size not 1.
  const Tensor single = kind.on(Tensor::fromVector({16}, kCounting));
  REQUIRE(reshape.forward(single).sizes() == std::vector<int64_t>{2, 8});
  REQUIRE(reshape.output.toVector() == kCounting);
  REQUIRE(reshape.output.storage() == single.storage());
  REQUIRE(reshape.forward(Tensor::zeros({4, 4}, kind.device())).sizes() == std::vector<int64_t>{2, 8});
  // More elements than one sample: [N, ...] -> [N, 2, 8].
  REQUIRE(reshape.forward(Tensor::zeros({3, 16}, kind.device())).sizes() == std::vector<int64_t>{3, 2, 8});
  REQUIRE(reshape.forward(Tensor::zeros({3, 4, 4}, kind.device())).sizes() == std::vector<int64_t>{3, 2, 8});
  // Torch7 reads a first size of 1 as a batch of one.
  REQUIRE(reshape.forward(Tensor::zeros({1, 16}, kind.device())).sizes() == std::vector<int64_t>{1, 2, 8});
  // batchMode: the first dimension is always the batch.
  nn::Reshape batched({2, 8}, true);
  REQUIRE(batched.forward(Tensor::zeros({2, 16}, kind.device())).sizes() == std::vector<int64_t>{2, 2, 8});
  REQUIRE_THROWS_WITH(batched.forward(Tensor::zeros({2, 8}, kind.device())),
                      Catch::Contains("nn.Reshape(2x8)") && Catch::Contains("[2, 8]"));

  const Tensor x = kind.on(nn::test::randomTensor({3, 4, 4}, 8));
  const Tensor g = kind.on(nn::test::randomTensor({3, 2, 8}, 9));
  reshape.forward(x);
  const Tensor& gi = reshape.backward(x, g);
  REQUIRE(gi.sizes() == std::vector<int64_t>{3, 4, 4});
  REQUIRE(gi.toVector() == g.toVector());
  REQUIRE_THAT(nn::test::checkInputGradient(reshape, x), nn::test::AgreesWithin(1e-3));
}

NN_DEVICE_TEST_CASE("Reshape rejects inputs that hold no whole number of samples, naming itself and the input",
                    "[Reshape]") {
  nn::Reshape reshape({2, 8});
  REQUIRE_THROWS_WITH(reshape.forward(Tensor::zeros({3, 5}, kind.device())),
                      Catch::Contains("nn.Reshape(2x8)") && Catch::Contains("[3, 5]") && Catch::Contains("16"));
  const Tensor x = Tensor::zeros({3, 16}, kind.device());
  reshape.forward(x);
  REQUIRE_THROWS_WITH(reshape.backward(x, Tensor::zeros({3, 16}, kind.device())),
                      Catch::Contains("nn.Reshape(2x8)") && Catch::Contains("[3, 2, 8]") && Catch::Contains("[3, 16]"));
  REQUIRE_THROWS_WITH(nn::Reshape({2, -1}), Catch::Contains("nn.Reshape(2x-1)"));
}

NN_DEVICE_TEST_CASE("Reshape of a strided input equals that of its contiguous copy; clones keep batchMode",
                    "[Reshape]") {
  const Tensor strided = kind.on(nn::test::randomTensor({16, 3}, 10)).transpose(0, 1);
  nn::Reshape a({4, 4}, true);
  nn::Reshape b({4, 4}, true);
  REQUIRE(nn::test::maxAbsDiff(a.forward(strided), b.forward(strided.contiguous())) == 0);
  REQUIRE(a.output.sizes() == std::vector<int64_t>{3, 4, 4});
  const Tensor stridedG = kind.on(nn::test::randomTensor({4, 4, 3}, 11)).transpose(0, 2).transpose(1, 2);
  REQUIRE(stridedG.sizes() == std::vector<int64_t>{3, 4, 4});
  REQUIRE(nn::test::maxAbsDiff(a.backward(strided, stridedG),
                               b.backward(strided.contiguous(), stridedG.contiguous())) == 0);

  nn::ModulePtr copy = a.clone();
  REQUIRE(std::dynamic_pointer_cast<nn::Reshape>(copy)->batchMode());
  REQUIRE(copy->toString() == "nn.Reshape(4x4)");
  REQUIRE(nn::test::maxAbsDiff(copy->forward(strided), a.output) == 0);
  copy->forward(Tensor::zeros({1, 16}, kind.device()));
  REQUIRE(a.output.sizes() == std::vector<int64_t>{3, 4, 4});
}

NN_DEVICE_TEST_CASE("View, Reshape and Identity pass tensors through on another device, also non-contiguous ones",
                    "[View][Reshape][Identity]") {
  const nn::Device device = kind.compared();
  const Tensor x = nn::test::randomTensor({5, 7, 3}, 111);
  const Tensor g = nn::test::randomTensor({5, 21}, 112);
  nn::View view({-1, 21});
  nn::Reshape reshape({21});
  for (nn::Module* module : {static_cast<nn::Module*>(&view), static_cast<nn::Module*>(&reshape)}) {
    CAPTURE(module->toString());
    const Tensor& y = module->forward(nn::test::stridedOn(x, device));
    REQUIRE(y.device() == device);
    REQUIRE(y.sizes() == std::vector<int64_t>{5, 21});
    REQUIRE(y.toVector() == x.toVector());
    const Tensor& gi = module->backward(nn::test::stridedOn(x, device), nn::test::stridedOn(g, device));
    REQUIRE(gi.device() == device);
    REQUIRE(gi.sizes() == x.sizes());
    REQUIRE(gi.toVector() == g.toVector());
  }
  nn::Identity identity;
  const Tensor xOn = nn::test::stridedOn(x, device);
  REQUIRE(identity.forward(xOn).storage() == xOn.storage());
  REQUIRE(identity.forward(xOn).toVector() == x.toVector());
  REQUIRE(identity.backward(xOn, xOn).toVector() == x.toVector());
}
