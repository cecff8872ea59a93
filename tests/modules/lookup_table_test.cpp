// nn::LookupTable (Torch7's, indices from 0): rows picked by hand-derived indices and gradients
// summed over repeated indices, PyTorch's embedding committed (tests/reference/LookupReference.h, from
// tests/reference/make_lookup_reference.py; exact values, so every device meets them to the bit), finite
// differences of the weight, strided indices on another device, save/load, clone and errors.
// On CPU devices and, where found, CUDA devices.
#include <catch2/catch.hpp>
#include <memory>

#include "nn/modules/LookupTable.h"
#include "nn/tensor/Random.h"
#include "tests/support/ActivationChecks.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"
#include "tests/reference/LookupReference.h"

using nn::Tensor;

NN_DEVICE_TEST_CASE("LookupTable picks the weight's rows and sums the gradients of repeated indices", "[LookupTable]") {
  nn::LookupTable lookup(3, 2);
  lookup.to(kind.device());
  lookup.weight.copy_(Tensor::fromVector({3, 2}, {1, 2, 3, 4, 5, 6}));
  const Tensor index = kind.on(Tensor::fromVector({2, 2}, {2, 0, 2, 1}));
  REQUIRE(lookup.forward(index).sizes() == std::vector<int64_t>{2, 2, 2});
  REQUIRE(lookup.output.toVector() == std::vector<float>{5, 6, 1, 2, 5, 6, 3, 4});
  lookup.zeroGradParameters();
  const Tensor g = kind.on(Tensor::fromVector({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}));
  // The indices get no gradient; row 2 gets gradOutput rows 0 and 2, row 1 none but row 3's.
  REQUIRE(lookup.backward(index, g).toVector() == std::vector<float>{0, 0, 0, 0});
  REQUIRE(lookup.gradWeight.toVector() == std::vector<float>{3, 4, 7, 8, 6, 8});
  lookup.accGradParameters(index, g, 0.5f);
  REQUIRE(lookup.gradWeight.toVector() == std::vector<float>{4.5f, 6, 10.5f, 12, 9, 12});
  // One-dimensional indices give one row each.
  REQUIRE(lookup.forward(kind.on(Tensor::fromVector({1}, {1}))).toVector() == std::vector<float>{3, 4});
}

NN_DEVICE_TEST_CASE("LookupTable matches PyTorch 1.13's embedding to the bit", "[LookupTable]") {
  nn::LookupTable lookup(6, 3);
  lookup.to(kind.device());
  lookup.weight.copy_(nn::test::exactValues({6, 3}, 3, 7, 3, 4));
  lookup.zeroGradParameters();
  const Tensor index = kind.on(Tensor::fromVector({2, 5}, nn::test::kLookupIndices));
  CHECK(lookup.forward(index).toVector() == nn::test::kTorchLookup);
  lookup.backward(index, kind.on(nn::test::exactValues({2, 5, 3}, 7, 13, 6, 4)));
  CHECK(lookup.gradWeight.toVector() == nn::test::kTorchLookupGradWeight);
}

NN_DEVICE_TEST_CASE("LookupTable's weight gradient agrees with finite differences", "[LookupTable]") {
  nn::manualSeed(24);
  nn::LookupTable lookup(5, 4);
  lookup.to(kind.device());
  const Tensor index = kind.on(Tensor::fromVector({3, 4}, {0, 3, 3, 1, 4, 0, 2, 3, 1, 1, 0, 4}));
  REQUIRE_THAT(nn::test::checkParameterGradients(lookup, index), nn::test::EachAgreesWithin(1e-3, 1));
}

NN_DEVICE_TEST_CASE("LookupTable on another device gives the host's results for strided indices", "[LookupTable]") {
  nn::manualSeed(25);
  nn::LookupTable reference(7, 5);
  const nn::ModulePtr tested = reference.clone();
  const Tensor index = Tensor::fromVector({2, 6}, {6, 0, 3, 3, 1, 2, 5, 6, 0, 4, 4, 4});
  const Tensor g = nn::test::randomTensor({2, 6, 5}, 26);
  const std::vector<float> y = reference.forward(index).toVector();
  reference.zeroGradParameters();
  reference.backward(index, g);
  tested->to(kind.compared());
  tested->zeroGradParameters();
  const Tensor strided = nn::test::stridedOn(index, kind.compared());
  REQUIRE_FALSE(strided.isContiguous());
  REQUIRE(tested->forward(strided).toVector() == y);
  tested->backward(strided, nn::test::stridedOn(g, kind.compared()));
  REQUIRE(tested->getParameters().second.toVector() == reference.gradWeight.toVector());
}

NN_DEVICE_TEST_CASE("LookupTable saves, loads and clones with its weight", "[LookupTable]") {
  nn::manualSeed(27);
  nn::LookupTable lookup(4, 3);
  REQUIRE(lookup.toString() == "nn.LookupTable(nIndex=4, nOutput=3)");
  lookup.to(kind.device());
  const Tensor index = kind.on(Tensor::fromVector({3}, {3, 0, 2}));
  const std::vector<float> y = lookup.forward(index).toVector();
  for (const nn::ModulePtr& copy : {nn::test::savedAndLoaded(lookup), lookup.clone()}) {
    CHECK(copy->toString() == lookup.toString());
    copy->to(kind.device());
    CHECK(copy->forward(index).toVector() == y);
  }
}

NN_DEVICE_TEST_CASE("LookupTable rejects indices out of range or not whole, naming itself and the index",
                    "[LookupTable]") {
  REQUIRE_THROWS_WITH(nn::LookupTable(0, 3), Catch::Contains("nn.LookupTable") && Catch::Contains("0 x 3"));
  nn::LookupTable lookup(4, 3);
  lookup.to(kind.device());
  for (float bad : {4.f, -1.f, 1.5f, NAN}) {
    CAPTURE(bad);
    // Checked on the host at once, on a CUDA device when the host next waits for it.
    REQUIRE_THROWS_WITH(
        lookup.forward(kind.on(Tensor::fromVector({3}, {0, bad, 2}))).toVector(),
        Catch::Contains("nn.LookupTable") && Catch::Contains("from 0 to 3") && Catch::Contains("position 1"));
  }
  REQUIRE_THROWS_WITH(lookup.forward(Tensor::zeros({2, 2, 2}, kind.device())),
                      Catch::Contains("nn.LookupTable") && Catch::Contains("[2, 2, 2]"));
  REQUIRE_THROWS_WITH(lookup.forward(Tensor::zeros({2}, kind.other())),
                      Catch::Contains("nn.LookupTable") && Catch::Contains(kind.other().str()));
  const Tensor index = Tensor::zeros({2}, kind.device());
  lookup.forward(index);
  REQUIRE_THROWS_WITH(lookup.backward(index, Tensor::zeros({2, 4}, kind.device())),
                      Catch::Contains("nn.LookupTable") && Catch::Contains("[2, 3]") && Catch::Contains("[2, 4]"));
}
