// A steady training step allocates no memory: the test binary counts every operator new, the
// aligned ones too, and every tensor storage (which comes from the backend, not from new).
// The replacement operator new clashes with a sanitizer's allocator, so these test cases are
// tagged [nosanitizer] and reported as skipped in sanitizer builds (tests/support/main.cpp). LeNet and
// the residual block of table modules, on one device and in a DataParallelTable on two, run on
// every device type (tests/support/DeviceTest.h); on CUDA devices they count tensor storage alone.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <memory>
#include <new>

#include "bench/Networks.h"
#include "cunn/cunn.h"
#include "examples/LeNet.h"
#include "examples/ResNet.h"
#include "nn/distributed/DistributedDataParallelTable.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"
#include "tests/support/Profiling.h"

namespace {
std::atomic<int64_t> gAllocations{0};
}  // namespace

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
void* operator new(std::size_t size) {
  gAllocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void* operator new(std::size_t size, std::align_val_t alignment) {
  gAllocations.fetch_add(1, std::memory_order_relaxed);
  const auto a = static_cast<std::size_t>(alignment);
  if (void* p = std::aligned_alloc(a, (size + a - 1) / a * a + (size == 0 ? a : 0))) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size, std::align_val_t alignment) { return operator new(size, alignment); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
#endif

using nn::Tensor;

namespace {

// Every allocation so far: operator new of any kind, and tensor storage.
int64_t allocations() { return gAllocations.load() + nn::storageAllocationCount(); }

// What a step on `device` must not allocate: on CPU devices anything; on CUDA devices tensor
// storage, not operator new, which also counts what cuDNN (C++, linked to the same operator new)
// allocates inside its calls, as often as NVIDIA's code chooses.
int64_t allocationsOn(const nn::Device& device) {
  return device.isCpu() ? allocations() : nn::storageAllocationCount();
}

std::shared_ptr<nn::Sequential> lenet() {
  nn::manualSeed(1);
  return examples::lenet();
}

// Allocations (allocationsOn) made by `steps` training steps after `warmup` steps, on `model` on
// `device`, of samples of `sampleSizes`. The batches are on the host's cpu:0 (BatchIterator's);
// on another device each is copied into tensors made there before the first step, as a training
// program does.
int64_t allocationsOfSteps(nn::Module& model, const nn::Device& device, int warmup, int steps,
                           const std::vector<int64_t>& sampleSizes = {1, 28, 28},
                           nn::BatchOptions batchOptions = nn::BatchOptions{true, false, 3}) {
  std::vector<int64_t> sizes{64};
  sizes.insert(sizes.end(), sampleSizes.begin(), sampleSizes.end());
  const Tensor images = nn::test::randomTensor(sizes, 1);
  std::vector<float> labels(64);
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<float>(i % 10);
  const Tensor targets = Tensor::fromVector({64}, labels);
  nn::ClassNLLCriterion criterion;
  nn::SgdOptions options;
  options.learningRate = 0.01f;
  options.momentum = 0.9f;
  nn::SGD sgd(model.getParameters(), options);
  nn::BatchIterator batches(images, targets, 16, batchOptions);
  const bool copied = device != images.device();
  sizes[0] = 16;  // every batch: 64 samples in batches of 16
  Tensor input = copied ? Tensor::empty(sizes, device) : Tensor();
  Tensor target = copied ? Tensor::empty({16}, device) : Tensor();
  int64_t before = 0;
  for (int step = 0; step < warmup + steps; ++step) {
    if (step == warmup) before = allocationsOn(device);
    if (!batches.next()) batches.next();
    if (copied) {
      input.copy_(batches.input);
      target.copy_(batches.target);
    }
    const Tensor& x = copied ? input : batches.input;
    const Tensor& y = copied ? target : batches.target;
    model.zeroGradParameters();
    const Tensor& out = model.forward(x);
    criterion.forward(out, y);
    model.backward(x, criterion.backward(out, y));
    sgd.step();
  }
  return allocationsOn(device) - before;
}

// As above, on the host's cpu:0.
int64_t allocationsOfSteps(nn::Module& model, int warmup, int steps,
                           const std::vector<int64_t>& sampleSizes = {1, 28, 28},
                           nn::BatchOptions batchOptions = nn::BatchOptions{true, false, 3}) {
  return allocationsOfSteps(model, nn::Device::cpu(0), warmup, steps, sampleSizes, batchOptions);
}

}  // namespace

NN_DEVICE_TEST_CASE("a steady LeNet training step on one device allocates nothing", "[allocation][nosanitizer]") {
  auto net = lenet();
  net->to(kind.device());
  REQUIRE(allocationsOfSteps(*net, kind.device(), 3, 8) == 0);
}

TEST_CASE("a steady LeNet training step with batches transformed on a background thread allocates nothing",
          "[allocation][nosanitizer]") {
  auto net = lenet();
  nn::BatchOptions options{true, false, 3};
  options.background = true;
  options.transform = [](Tensor& images, Tensor&, int64_t, int64_t batch) { images.mul_(batch % 2 ? -1.f : 1.f); };
  REQUIRE(allocationsOfSteps(*net, 3, 8, {1, 28, 28}, options) == 0);
}

NN_MULTI_DEVICE_TEST_CASE("a steady LeNet training step on two devices allocates nothing",
                          "[allocation][nosanitizer]") {
  auto table = std::make_shared<nn::DataParallelTable>(0, true, false);
  table->add(lenet(), kind.devices(2));
  REQUIRE(allocationsOfSteps(*table, kind.device(), 3, 8) == 0);
}

// A group of one process, without MPI: the table's own bookkeeping is what the test counts.
class LoneGroup : public nn::ProcessGroup {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void startAllReduceSum(Tensor&) override {}
  void progress() override {}
  void wait() override {}
  void broadcast(Tensor&, int) override {}
  std::vector<std::string> allGather(const std::string& text) override { return {text}; }
  void barrier() override {}
};

TEST_CASE("a steady LeNet training step of a DistributedDataParallelTable allocates nothing",
          "[allocation][nosanitizer]") {
  // Buckets of 0.25 MB: 7 for LeNet's gradients, most started during backward.
  nn::DistributedDataParallelTable::Options options;
  options.bucketMegabytes = 0.25;
  nn::DistributedDataParallelTable model(lenet(), std::make_shared<LoneGroup>(), options);
  REQUIRE(allocationsOfSteps(model, 3, 8) == 0);
}

TEST_CASE("a steady LeNet training step on two compute threads allocates nothing", "[allocation][nosanitizer]") {
  auto net = lenet();
  nn::setNumThreads(2);
  const int64_t allocations = allocationsOfSteps(*net, 3, 8);
  nn::setNumThreads(1);
  REQUIRE(allocations == 0);
}

TEST_CASE("a steady LeNet training step with profiling on allocates nothing", "[allocation][nosanitizer]") {
  auto net = lenet();
  int64_t allocations = 0;
  {
    nn::test::ProfilingOn on;
    allocations = allocationsOfSteps(*net, 3, 8);
  }
  REQUIRE(net->get(0)->profile.forward.calls == 11);
  REQUIRE(allocations == 0);
}

TEST_CASE(
    "a steady training step through padding, Select, Narrow, Transpose, MulConstant and AddConstant "
    "allocates nothing",
    "[allocation][nosanitizer]") {
  nn::manualSeed(1);
  nn::Sequential net;
  net.add(std::make_shared<nn::SpatialZeroPadding>(2, 2, 1, 3));  // [N, 1, 32, 32]
  net.add(std::make_shared<nn::Select>(1, 0));                    // [N, 32, 32]
  net.add(std::make_shared<nn::Narrow>(1, 4, 24));                // [N, 24, 32]
  net.add(std::make_shared<nn::Narrow>(2, -28, 24));              // [N, 24, 24]
  net.add(std::make_shared<nn::Transpose>(std::initializer_list<std::pair<int, int>>{{1, 2}}));
  net.add(std::make_shared<nn::MulConstant>(2.f));
  net.add(std::make_shared<nn::AddConstant>(-1.f));
  net.add(std::make_shared<nn::View>(std::vector<int64_t>{-1, 576}));
  net.add(std::make_shared<nn::Linear>(576, 10));
  net.add(std::make_shared<nn::LogSoftMax>());
  REQUIRE(allocationsOfSteps(net, 3, 8) == 0);
}

TEST_CASE(
    "a steady training step through SpatialUpSamplingNearest and SpatialAdaptiveAveragePooling allocates "
    "nothing",
    "[allocation][nosanitizer]") {
  nn::manualSeed(1);
  nn::Sequential net;
  net.add(std::make_shared<nn::SpatialUpSamplingNearest>(2));          // [N, 1, 56, 56]
  net.add(std::make_shared<nn::SpatialAdaptiveAveragePooling>(5, 4));  // [N, 1, 4, 5]
  net.add(std::make_shared<nn::View>(std::vector<int64_t>{-1, 20}));
  net.add(std::make_shared<nn::Linear>(20, 10));
  net.add(std::make_shared<nn::LogSoftMax>());
  REQUIRE(allocationsOfSteps(net, 3, 8) == 0);
}

TEST_CASE("a steady training step through CMul, Add, Mul, Sum and SpatialDropout allocates nothing",
          "[allocation][nosanitizer]") {
  nn::manualSeed(1);
  nn::Sequential net;
  net.add(std::make_shared<nn::CMul>(1, 1, 28, 1));  // [N, 1, 28, 28], a weight per row
  net.add(std::make_shared<nn::Add>(784));           // one sample's elements
  net.add(std::make_shared<nn::Mul>());
  net.add(std::make_shared<nn::SpatialDropout>(0.2f));
  net.add(std::make_shared<nn::Sum>(2));  // [N, 1, 28]
  net.add(std::make_shared<nn::View>(std::vector<int64_t>{-1, 28}));
  net.add(std::make_shared<nn::Linear>(28, 10));
  net.add(std::make_shared<nn::LogSoftMax>());
  REQUIRE(allocationsOfSteps(net, 3, 8) == 0);
}

// The rows of the images split apart and joined again (SplitTable, JoinTable), then a residual
// block on vectors: ConcatTable(Linear, ReLU, Linear | Identity), CAddTable, ReLU.
std::shared_ptr<nn::Sequential> residualMlp() {
  nn::manualSeed(1);
  auto branch = std::make_shared<nn::Sequential>();
  branch->add(std::make_shared<nn::Linear>(32, 32)).add(std::make_shared<nn::ReLU>());
  branch->add(std::make_shared<nn::Linear>(32, 32));
  auto split = std::make_shared<nn::ConcatTable>();
  split->add(branch).add(std::make_shared<nn::Identity>());
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::View>(std::vector<int64_t>{-1, 28, 28}));
  net->add(std::make_shared<nn::SplitTable>(1)).add(std::make_shared<nn::JoinTable>(1));  // rows apart, back
  net->add(std::make_shared<nn::Linear>(784, 32)).add(std::make_shared<nn::ReLU>());
  net->add(split).add(std::make_shared<nn::CAddTable>()).add(std::make_shared<nn::ReLU>());
  net->add(std::make_shared<nn::Linear>(32, 10)).add(std::make_shared<nn::LogSoftMax>());
  return net;
}

NN_DEVICE_TEST_CASE("a steady training step through a residual block of table modules allocates nothing",
                    "[allocation][nosanitizer]") {
  auto net = residualMlp();
  net->to(kind.device());
  REQUIRE(allocationsOfSteps(*net, kind.device(), 3, 8) == 0);
}

NN_MULTI_DEVICE_TEST_CASE(
    "a steady training step through a residual block of table modules on two devices allocates nothing",
    "[allocation][nosanitizer]") {
  auto table = std::make_shared<nn::DataParallelTable>(0, true, false);
  table->add(residualMlp(), kind.devices(2));
  REQUIRE(allocationsOfSteps(*table, kind.device(), 3, 8) == 0);
}

TEST_CASE("a steady training step of the residual network example allocates nothing", "[allocation][nosanitizer]") {
  nn::manualSeed(1);
  auto net = examples::resnet();
  REQUIRE(allocationsOfSteps(*net, 3, 4) == 0);
}

TEST_CASE("a steady training step of each network of the benchmark suite allocates nothing, on 1 and 2 threads",
          "[allocation][nosanitizer]") {
  // LeNet and the residual network are above; the MLP (a leading View) and the VGG-style CNN
  // (padded convolutions, batch normalisation, Dropout) here.
  for (const char* name : {"mlp", "vgg"})
    for (const int threads : {1, 2}) {
      nn::manualSeed(1);
      bench::Network network = bench::makeNetwork(name);
      network.model->setGradInputNeeded(false);
      nn::setNumThreads(threads);
      const int64_t allocations = allocationsOfSteps(*network.model, 3, 4, network.sampleSizes);
      nn::setNumThreads(1);
      INFO(name << " on " << threads << " thread(s)");
      CHECK(allocations == 0);
    }
}

TEST_CASE("steps of Adam, AdamW, Adagrad and RMSprop after the first allocate nothing", "[allocation][nosanitizer]") {
  const std::shared_ptr<nn::Sequential> net = lenet();
  std::pair<Tensor, Tensor> parameters = net->getParameters();
  parameters.second.copy_(nn::test::randomTensor(parameters.second.sizes(), 2));
  nn::AdamOptions adamOptions;
  adamOptions.weightDecay = 1e-4;
  nn::Adam adam(parameters, adamOptions);
  nn::AdamW adamw(parameters);
  nn::Adagrad adagrad(parameters);
  nn::RMSprop rmsprop(parameters);
  for (nn::Optimizer* optimizer : std::initializer_list<nn::Optimizer*>{&adam, &adamw, &adagrad, &rmsprop}) {
    CAPTURE(optimizer->typeName());
    optimizer->step();
    const int64_t before = allocations();
    for (int step = 0; step < 5; ++step) optimizer->step();
    REQUIRE(allocations() - before == 0);
  }
}

TEST_CASE("the counter sees allocations of every kind", "[allocation][nosanitizer]") {
  // The checks above could not fail if an allocation went uncounted.
  int64_t before = allocations();
  auto plain = std::make_unique<int>(3);
  CHECK(allocations() - before == 1);
  struct alignas(64) Line {
    float values[16];
  };
  before = allocations();
  auto aligned = std::make_unique<Line>();
  CHECK(allocations() - before == 1);
  before = nn::storageAllocationCount();
  Tensor t;
  t.resize_({10});
  CHECK(nn::storageAllocationCount() - before == 1);
  t.resize_({5});  // fits the storage it has
  CHECK(nn::storageAllocationCount() - before == 1);
}
