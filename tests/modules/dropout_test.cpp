// nn::Dropout: masks, scaling, evaluation mode, seeding, gradient with a fixed mask, on every
// device type; the module on another device compared with the one on the host.
#include "nn/modules/Dropout.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "nn/runtime/ComputeThreads.h"
#include "nn/tensor/Random.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Tensor;

namespace {

// A Dropout whose generator is reseeded before every forward, so that every forward draws the
// same mask and the finite differences see one fixed function of the input.
class FixedMaskDropout : public nn::Module {
 public:
  explicit FixedMaskDropout(float p) : dropout(p) {}
  const Tensor& updateOutput(const Tensor& input) override {
    dropout.generator().seed(17);
    output.set_(dropout.updateOutput(input));
    return output;
  }
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override {
    gradInput.set_(dropout.updateGradInput(input, gradOutput));
    return gradInput;
  }
  std::string typeName() const override { return "FixedMaskDropout"; }

  nn::Dropout dropout;
};

int64_t countOf(const Tensor& t, float value) {
  int64_t n = 0;
  for (float v : t.toVector()) n += v == value;
  return n;
}

}  // namespace

NN_DEVICE_TEST_CASE("Dropout zeroes a fraction p and scales the rest by 1 / (1 - p)", "[Dropout]") {
  nn::manualSeed(1);
  nn::Dropout dropout(0.25f);
  REQUIRE(dropout.toString() == "nn.Dropout(0.25)");
  REQUIRE(nn::Dropout().toString() == "nn.Dropout(0.5)");
  // On ones, every output is a mask value: 0 with probability 1/4, else 1 / (1 - 1/4) = 4/3.
  const Tensor ones = Tensor::full({100, 100}, 1.f, kind.device());
  const Tensor& y = dropout.forward(ones);
  const int64_t zeros = countOf(y, 0.f);
  REQUIRE(zeros + countOf(y, 4.f / 3) == 10000);
  // 10000 draws: the count of zeros is 2500 +- 43 (one standard deviation).
  REQUIRE(zeros > 2300);
  REQUIRE(zeros < 2700);
  REQUIRE(dropout.noise.toVector() == y.toVector());
  // The output is input * noise, element by element.
  const Tensor x = kind.on(nn::test::randomTensor({100, 100}, 2));
  dropout.forward(x);
  const std::vector<float> in = x.toVector(), noise = dropout.noise.toVector(), out = dropout.output.toVector();
  for (size_t i = 0; i < in.size(); ++i) REQUIRE(out[i] == in[i] * noise[i]);
  // gradInput = gradOutput * noise: with gradOutput ones, the noise itself.
  REQUIRE(dropout.backward(x, ones).toVector() == noise);
  // A new forward draws a new mask.
  dropout.forward(x);
  REQUIRE(dropout.noise.toVector() != noise);
}

NN_DEVICE_TEST_CASE("Dropout passes input and gradient through in evaluation, and with p = 0", "[Dropout]") {
  nn::Dropout dropout(0.5f);
  const Tensor x = kind.on(nn::test::randomTensor({3, 7}, 3));
  const Tensor g = kind.on(nn::test::randomTensor({3, 7}, 4));
  dropout.evaluate();
  REQUIRE(nn::test::maxAbsDiff(dropout.forward(x), x) == 0);
  REQUIRE(nn::test::maxAbsDiff(dropout.backward(x, g), g) == 0);
  dropout.training();
  REQUIRE(nn::test::maxAbsDiff(dropout.forward(x), x) > 0);
  nn::Dropout none(0.f);
  REQUIRE(nn::test::maxAbsDiff(none.forward(x), x) == 0);
  REQUIRE(nn::test::maxAbsDiff(none.backward(x, g), g) == 0);
}

NN_DEVICE_TEST_CASE("Dropout masks follow manualSeed, and each Dropout has its own generator", "[Dropout]") {
  const Tensor x = kind.on(nn::test::randomTensor({50}, 5));
  nn::manualSeed(42);
  nn::Dropout a;
  nn::Dropout b;  // seeded by the next number of the default generator
  nn::manualSeed(42);
  nn::Dropout again;
  const std::vector<float> first = a.forward(x).toVector();
  const std::vector<float> second = a.forward(x).toVector();
  REQUIRE(again.forward(x).toVector() == first);
  REQUIRE(again.forward(x).toVector() == second);
  REQUIRE(b.forward(x).toVector() != first);
  // Drawing from the default generator in between does not change a Dropout's masks.
  nn::manualSeed(42);
  nn::Dropout third;
  nn::defaultGenerator().uniform();
  REQUIRE(third.forward(x).toVector() == first);
}

NN_DEVICE_TEST_CASE("Dropout draws the same mask on any number of compute threads, each element its own", "[Dropout]") {
  // More elements than one part takes, so that three threads draw three parts.
  const Tensor x = kind.on(Tensor::full({3, 40000}, 1.f));
  nn::Dropout dropout(0.3f);
  dropout.generator().seed(5);
  const std::vector<float> one = dropout.forward(x).toVector();
  nn::setNumThreads(3);
  dropout.generator().seed(5);
  const std::vector<float> three = dropout.forward(x).toVector();
  nn::setNumThreads(1);
  REQUIRE(three == one);
  // Neighbouring elements, and the same element in the next mask, are drawn independently: of
  // the pairs, about (1 - p)^2 keep both elements.
  const std::vector<float> next = dropout.forward(x).toVector();
  int64_t neighbours = 0, again = 0;
  for (size_t i = 0; i + 1 < one.size(); ++i) {
    neighbours += one[i] != 0 && one[i + 1] != 0;
    again += one[i] != 0 && next[i] != 0;
  }
  const double pairs = static_cast<double>(one.size() - 1);
  CHECK(std::abs(neighbours / pairs - 0.49) < 0.01);
  CHECK(std::abs(again / pairs - 0.49) < 0.01);
}

NN_DEVICE_TEST_CASE("Dropout's gradient agrees with finite differences for a fixed mask", "[Dropout]") {
  FixedMaskDropout fixed(0.4f);
  const Tensor x = kind.on(nn::test::randomTensor({4, 6}, 6));
  fixed.forward(x);
  REQUIRE(countOf(fixed.dropout.noise, 0.f) > 0);
  REQUIRE(countOf(fixed.dropout.noise, 0.f) < 24);
  REQUIRE_THAT(nn::test::checkInputGradient(fixed, x), nn::test::AgreesWithin(1e-3));
}

NN_DEVICE_TEST_CASE("Dropout rejects a bad p and mismatched gradients, naming itself and the shapes", "[Dropout]") {
  REQUIRE_THROWS_WITH(nn::Dropout(1.f), Catch::Contains("nn.Dropout") && Catch::Contains("[0, 1)"));
  REQUIRE_THROWS_WITH(nn::Dropout(-0.1f), Catch::Contains("nn.Dropout") && Catch::Contains("-0.1"));
  nn::Dropout dropout(0.5f);
  const Tensor x = Tensor::zeros({2, 3}, kind.device());
  dropout.forward(x);
  REQUIRE_THROWS_WITH(dropout.backward(x, Tensor::zeros({3, 2}, kind.device())),
                      Catch::Contains("nn.Dropout(0.5)") && Catch::Contains("[2, 3]") && Catch::Contains("[3, 2]"));
  // A training backward needs the mask of a training forward on an input of this size.
  REQUIRE_THROWS_WITH(dropout.backward(Tensor::zeros({4}, kind.device()), Tensor::zeros({4}, kind.device())),
                      Catch::Contains("nn.Dropout(0.5)") && Catch::Contains("[4]") && Catch::Contains("[2, 3]"));
}

NN_DEVICE_TEST_CASE("Dropout of a strided input equals that of its contiguous copy under the same mask", "[Dropout]") {
  const Tensor strided = kind.on(nn::test::randomTensor({5, 4}, 7)).transpose(0, 1);
  const Tensor stridedG = kind.on(nn::test::randomTensor({5, 4}, 8)).transpose(0, 1);
  nn::manualSeed(9);
  nn::Dropout a;
  nn::manualSeed(9);
  nn::Dropout b;
  REQUIRE(nn::test::maxAbsDiff(a.forward(strided), b.forward(strided.contiguous())) == 0);
  REQUIRE(nn::test::maxAbsDiff(a.backward(strided, stridedG),
                               b.backward(strided.contiguous(), stridedG.contiguous())) == 0);
}

NN_DEVICE_TEST_CASE("Dropout clones keep p and the mode, draw their own masks and leave the original alone",
                    "[Dropout]") {
  nn::Dropout dropout(0.3f);
  const Tensor x = kind.on(nn::test::randomTensor({200}, 10));
  dropout.evaluate();
  const std::vector<float> out = dropout.forward(x).toVector();
  nn::ModulePtr copy = dropout.clone();
  REQUIRE(copy->toString() == "nn.Dropout(0.3)");
  REQUIRE_FALSE(copy->isTraining());
  REQUIRE(copy->forward(x).toVector() == out);
  copy->training();
  dropout.training();
  dropout.forward(x);
  const std::vector<float> mask = dropout.noise.toVector();
  copy->forward(x);
  REQUIRE(std::dynamic_pointer_cast<nn::Dropout>(copy)->noise.toVector() != mask);
  REQUIRE(dropout.noise.toVector() == mask);
}

NN_DEVICE_TEST_CASE("Dropout on another device draws the host's mask from the same seed and gives its floats",
                    "[Dropout]") {
  const nn::Device device = kind.compared();
  const Tensor x = nn::test::randomTensor({7, 13, 3}, 101);
  const Tensor g = nn::test::randomTensor({7, 13, 3}, 102);
  nn::Dropout reference(0.3f), tested(0.3f);
  reference.generator().seed(7);
  tested.generator().seed(7);
  // Two steps: the second mask follows the first from the generator on both.
  for (int step = 0; step < 2; ++step) {
    const std::vector<float> y = reference.forward(x).toVector();
    const Tensor& yOn = tested.forward(nn::test::stridedOn(x, device));
    REQUIRE(yOn.device() == device);
    // The same mask, multiplied in by one IEEE product per element: equal bit for bit.
    REQUIRE(tested.noise.toVector() == reference.noise.toVector());
    REQUIRE(yOn.toVector() == y);
    REQUIRE(tested.backward(nn::test::stridedOn(x, device), nn::test::stridedOn(g, device)).toVector() ==
            reference.backward(x, g).toVector());
  }
  tested.evaluate();
  REQUIRE(tested.forward(nn::test::stridedOn(x, device)).toVector() == x.toVector());
  REQUIRE(tested.backward(nn::test::stridedOn(x, device), nn::test::stridedOn(g, device)).toVector() == g.toVector());
}
