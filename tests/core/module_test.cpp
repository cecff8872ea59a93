// The module contract shared by every module: parameters, getParameters, clone, to, apply.
// to() and a module used in two places run on every device type (tests/support/DeviceTest.h).
#include <catch2/catch.hpp>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "nn/modules/BatchNormalization.h"
#include "nn/modules/Linear.h"
#include "nn/modules/MulConstant.h"
#include "nn/modules/ReLU.h"
#include "nn/modules/Sequential.h"
#include "nn/modules/Sigmoid.h"
#include "nn/modules/Tanh.h"
#include "nn/tensor/Random.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Tensor;

namespace {

std::shared_ptr<nn::Sequential> smallNet() {
  nn::manualSeed(5);
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::Linear>(4, 3));
  net->add(std::make_shared<nn::ReLU>());
  net->add(std::make_shared<nn::Linear>(3, 2));
  return net;
}

}  // namespace

TEST_CASE("parameters come in module order, weight before bias, sharing memory", "[Module]") {
  auto net = smallNet();
  auto [params, grads] = net->parameters();
  REQUIRE(params.size() == 4);
  REQUIRE(grads.size() == 4);
  auto first = std::dynamic_pointer_cast<nn::Linear>(net->get(0));
  auto last = std::dynamic_pointer_cast<nn::Linear>(net->get(2));
  REQUIRE(params[0].is(first->weight));
  REQUIRE(params[1].is(first->bias));
  REQUIRE(params[2].is(last->weight));
  REQUIRE(params[3].is(last->bias));
  REQUIRE(grads[3].is(last->gradBias));
  params[3].fill_(7);  // writing through a parameter sets the module's weights
  REQUIRE(last->bias.toVector() == std::vector<float>{7, 7});
}

TEST_CASE("getParameters flattens into two buffers with identical offsets, once", "[Module]") {
  auto net = smallNet();
  const auto before = net->parameters().first;
  std::vector<float> values;
  for (const Tensor& p : before)
    for (float v : p.toVector()) values.push_back(v);

  auto [flat, flatGrad] = net->getParameters();
  REQUIRE(flat.numel() == 4 * 3 + 3 + 3 * 2 + 2);
  REQUIRE(flatGrad.numel() == flat.numel());
  REQUIRE(flat.toVector() == values);  // values survive flattening, in module order

  auto [params, grads] = net->parameters();
  int64_t offset = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    REQUIRE(params[i].storage() == flat.storage());
    REQUIRE(grads[i].storage() == flatGrad.storage());
    REQUIRE(params[i].storageOffset() == offset);
    REQUIRE(grads[i].storageOffset() == offset);
    offset += params[i].numel();
  }
  // Writing the flat buffer writes the layers.
  flat.fill_(0.25f);
  REQUIRE(std::dynamic_pointer_cast<nn::Linear>(net->get(2))->bias.toVector() == std::vector<float>{0.25f, 0.25f});

  auto [again, againGrad] = net->getParameters();
  REQUIRE(again.is(flat));
  REQUIRE(againGrad.is(flatGrad));
}

TEST_CASE("getParameters of a module used in two places holds its tensors once, and again the same", "[Module]") {
  nn::manualSeed(6);
  auto twice = std::make_shared<nn::Linear>(3, 3);
  auto last = std::make_shared<nn::Linear>(3, 2);
  nn::Sequential net{twice, std::make_shared<nn::ReLU>(), twice, last};
  const std::vector<float> weight = twice->weight.toVector(), bias = last->bias.toVector();
  auto [flat, flatGrad] = net.getParameters();
  CHECK(flat.numel() == 9 + 3 + 6 + 2);
  CHECK(flatGrad.numel() == flat.numel());
  CHECK(twice->weight.storage() == flat.storage());
  CHECK(twice->weight.toVector() == weight);
  CHECK(last->bias.toVector() == bias);
  CHECK(last->gradBias.storage() == flatGrad.storage());
  // Asked again (an optimizer made from the first answer keeps training the layers).
  auto [again, againGrad] = net.getParameters();
  CHECK(again.is(flat));
  CHECK(againGrad.is(flatGrad));
  flat.fill_(0.5f);
  CHECK(twice->weight.toVector() == std::vector<float>(9, 0.5f));
  CHECK(last->bias.toVector() == std::vector<float>(2, 0.5f));
}

TEST_CASE("a module used in two places: one copy in two places after clone, one step of updateParameters",
          "[Module]") {
  nn::manualSeed(8);
  auto twice = std::make_shared<nn::Linear>(3, 3);
  // A Tanh between the places, which reads its own output in backward: the gradient is the true
  // one (README, "A module in two places"; checked against finite differences below).
  auto net = std::make_shared<nn::Sequential>(
      std::vector<nn::ModulePtr>{twice, std::make_shared<nn::Tanh>(), twice, std::make_shared<nn::Linear>(3, 2)});
  auto copy = std::dynamic_pointer_cast<nn::Sequential>(net->clone());
  REQUIRE(copy != nullptr);
  CHECK(copy->get(0) == copy->get(2));
  CHECK(copy->get(0) != twice);
  CHECK(copy->get(0)->parameters().first[0].storage() != twice->weight.storage());  // a deep copy
  // The copy computes the original's output and gradients, the shared layer's summed over
  // both places.
  const Tensor x = nn::test::randomTensor({4, 3}, 3), g = nn::test::randomTensor({4, 2}, 4);
  net->zeroGradParameters();
  copy->zeroGradParameters();
  CHECK(copy->forward(x).toVector() == net->forward(x).toVector());
  net->backward(x, g);
  copy->backward(x, g);
  const auto [values, gradients] = net->parameters();
  const auto [copyValues, copyGradients] = copy->parameters();
  REQUIRE(copyGradients.size() == gradients.size());
  for (size_t i = 0; i < gradients.size(); ++i) CHECK(copyGradients[i].toVector() == gradients[i].toVector());
  // updateParameters steps the shared weight once, by its summed gradient.
  std::vector<float> expected = twice->weight.toVector();
  const std::vector<float> gradient = twice->gradWeight.toVector();
  for (size_t i = 0; i < expected.size(); ++i) expected[i] -= 0.5f * gradient[i];
  net->updateParameters(0.5f);
  CHECK(twice->weight.toVector() == expected);
}

NN_DEVICE_TEST_CASE("a module used in two places has the true gradient where its neighbours read none of its state",
                    "[Module]") {
  // Such a module keeps the output and gradInput of its last call only (README, "A module in two
  // places"). These layouts give the true gradient: a shared Linear, which reads only its input
  // and gradOutput, and between its places modules without parameters that read their own output
  // (Tanh, Sigmoid) or nothing (MulConstant) in backward. parameters() lists the shared layer's
  // tensors once per place; each is checked, the numeric gradient moving both places at once.
  // A: the shared Linear(3, 3).
  struct Layout {
    const char* name;
    std::function<std::vector<nn::ModulePtr>(const nn::ModulePtr&)> modules;
    size_t parameters;
  };
  const std::vector<Layout> layouts{
      {"A, Tanh, A, Linear",
       [](const nn::ModulePtr& a) {
         return std::vector<nn::ModulePtr>{a, std::make_shared<nn::Tanh>(), a, std::make_shared<nn::Linear>(3, 2)};
       },
       6},
      {"Linear, A, MulConstant, A, Sigmoid, A",
       [](const nn::ModulePtr& a) {
         auto first = std::make_shared<nn::Linear>(3, 3);
         auto times = std::make_shared<nn::MulConstant>(-2.f);
         return std::vector<nn::ModulePtr>{first, a, times, a, std::make_shared<nn::Sigmoid>(), a};
       },
       8},
  };
  for (const Layout& layout : layouts) {
    CAPTURE(layout.name);
    nn::manualSeed(9);
    auto shared = std::make_shared<nn::Linear>(3, 3);
    nn::Sequential net(layout.modules(shared));
    net.to(kind.device());
    const Tensor x = kind.on(nn::test::randomTensor({4, 3}, 10, -2.f, 2.f));
    REQUIRE_THAT(nn::test::checkInputGradient(net, x), nn::test::AgreesWithin(1e-3));
    REQUIRE_THAT(nn::test::checkParameterGradients(net, x), nn::test::EachAgreesWithin(1e-3, layout.parameters));
  }
}

TEST_CASE("backward accumulates gradients until zeroGradParameters", "[Module]") {
  auto net = smallNet();
  const Tensor x = nn::test::randomTensor({5, 4}, 2);
  const Tensor g = nn::test::randomTensor({5, 2}, 3);
  net->zeroGradParameters();
  net->forward(x);
  net->backward(x, g);
  const std::vector<float> once = net->getParameters().second.toVector();
  net->forward(x);
  net->backward(x, g);
  const std::vector<float> twice = net->getParameters().second.toVector();
  for (size_t i = 0; i < once.size(); ++i) REQUIRE(twice[i] == Approx(2 * once[i]).epsilon(1e-6).margin(1e-7));
  net->zeroGradParameters();
  for (float v : net->getParameters().second.toVector()) REQUIRE(v == 0);
}

TEST_CASE("clone is a deep, independent copy", "[Module]") {
  auto net = smallNet();
  const Tensor x = nn::test::randomTensor({3, 4}, 9);
  const std::vector<float> out = net->forward(x).toVector();
  nn::ModulePtr copy = net->clone();
  REQUIRE(copy->toString() == net->toString());
  REQUIRE(copy->forward(x).toVector() == out);
  copy->getParameters().first.fill_(0);
  REQUIRE(net->forward(x).toVector() == out);  // the original is untouched
  REQUIRE(copy->forward(x).toVector() != out);
}

TEST_CASE("updateParameters subtracts lr times the gradient", "[Module]") {
  auto net = smallNet();
  auto [flat, flatGrad] = net->getParameters();
  const std::vector<float> before = flat.toVector();
  for (int64_t i = 0; i < flatGrad.numel(); ++i) flatGrad.data()[i] = static_cast<float>(i);
  net->updateParameters(0.5f);
  const std::vector<float> after = flat.toVector();
  for (size_t i = 0; i < before.size(); ++i) REQUIRE(after[i] == before[i] - 0.5f * static_cast<float>(i));
}

NN_DEVICE_TEST_CASE("to() moves the whole tree and keeps flattened parameters flat", "[Module]") {
  // From the host's cpu:0 to cpu:1, or to cuda:0.
  const nn::Device device = kind.compared();
  auto net = smallNet();
  const Tensor x = nn::test::randomTensor({3, 4}, 9);
  const Tensor out = net->forward(x).clone();
  auto [flat, flatGrad] = net->getParameters();
  net->to(device);
  REQUIRE(net->device() == device);
  // Still flat: the moved parameters and gradients are views into one storage each, which
  // getParameters gives rather than flattening again.
  auto [values, gradients] = net->parameters();
  const auto valueStorage = values[0].storage(), gradientStorage = gradients[0].storage();
  for (const Tensor& p : values) REQUIRE(p.storage() == valueStorage);
  for (const Tensor& g : gradients) REQUIRE(g.storage() == gradientStorage);
  auto [moved, movedGrad] = net->getParameters();
  REQUIRE(moved.device() == device);
  REQUIRE(moved.storage() == valueStorage);
  REQUIRE(movedGrad.storage() == gradientStorage);
  REQUIRE(moved.toVector() == flat.toVector());  // copies keep every bit
  for (const Tensor& p : net->parameters().first) REQUIRE(p.storage() == moved.storage());
  // cuBLAS adds Linear's 4 and 3 products in another order than OpenBLAS: a few ulp of outputs
  // below 5, under 1e-5. On cpu:1 the same kernels as on cpu:0: the same bits.
  REQUIRE(nn::test::maxAbsDiff(net->forward(x.to(device)), out) <= kind.tolerance(1e-5));
  // Input on the wrong device is an error that names the module and both devices.
  REQUIRE_THROWS_WITH(net->forward(x), Catch::Contains("nn.Linear(4 -> 3)") && Catch::Contains(device.str()) &&
                                           Catch::Contains("cpu:0"));
}

TEST_CASE("apply, listModules, training and evaluate reach every module", "[Module]") {
  auto net = smallNet();
  int visited = 0;
  net->apply([&](nn::Module&) { ++visited; });
  REQUIRE(visited == 4);
  const auto modules = net->listModules();
  REQUIRE(modules.size() == 4);
  REQUIRE(modules[0] == net);
  REQUIRE(modules[3] == net->get(2));
  net->evaluate();
  for (const auto& m : modules) REQUIRE_FALSE(m->isTraining());
  net->training();
  for (const auto& m : modules) REQUIRE(m->isTraining());
}

TEST_CASE("stateDict uses PyTorch's names", "[Module]") {
  auto net = smallNet();
  std::vector<std::string> names;
  for (const nn::NamedTensor& t : net->stateDict()) names.push_back(t.name);
  REQUIRE(names == std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"});
}

TEST_CASE("clearState releases outputs and they come back on the next forward", "[Module]") {
  auto net = smallNet();
  const Tensor x = nn::test::randomTensor({3, 4}, 9);
  const std::vector<float> out = net->forward(x).toVector();
  net->clearState();
  REQUIRE(net->output.numel() == 0);
  REQUIRE(net->get(0)->output.numel() == 0);
  REQUIRE(net->forward(x).toVector() == out);
}

TEST_CASE("namedParameters and namedBuffers name each tensor as stateDict does, with its gradient", "[Module]") {
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::Linear>(4, 3));
  net->add(std::make_shared<nn::BatchNormalization>(3));
  net->add(std::make_shared<nn::Linear>(3, 2, false));
  const std::vector<nn::NamedParameter> parameters = net->namedParameters();
  std::vector<std::string> names;
  for (const nn::NamedParameter& p : parameters) names.push_back(p.name);
  REQUIRE(names == std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias", "2.weight"});
  auto& first = dynamic_cast<nn::Linear&>(*net->get(0));
  CHECK(parameters[0].value.data() == first.weight.data());
  CHECK(parameters[0].gradient.data() == first.gradWeight.data());
  CHECK(parameters[1].gradient.data() == first.gradBias.data());
  names.clear();
  for (const nn::NamedTensor& b : net->namedBuffers()) names.push_back(b.name);
  REQUIRE(names == std::vector<std::string>{"1.running_mean", "1.running_var"});
  // Flattened parameters are views of one buffer: still told apart.
  net->getParameters();
  REQUIRE(net->namedParameters().size() == 5);
  CHECK(net->namedParameters()[4].gradient.data() == dynamic_cast<nn::Linear&>(*net->get(2)).gradWeight.data());
  REQUIRE(net->namedBuffers().size() == 2);
}

TEST_CASE("a module and a tensor print to a std::ostream", "[Module]") {
  std::ostringstream module;
  module << *smallNet();
  CHECK(module.str() == smallNet()->toString());
  std::ostringstream small, large, empty;
  small << Tensor::fromVector({2, 3}, {1, 2, 3, 4, 5, 6.5f});
  CHECK(small.str() == "nn.Tensor [2, 3] on cpu:0 {1, 2, 3, 4, 5, 6.5}");
  std::vector<float> values(20);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  large << Tensor::fromVector({4, 5}, values);
  CHECK(large.str() == "nn.Tensor [4, 5] on cpu:0 {0, 1, 2, 3, 4, 5, ..., 19}");
  empty << Tensor::empty({0, 3});
  CHECK(empty.str() == "nn.Tensor [0, 3] on cpu:0 {}");
}
