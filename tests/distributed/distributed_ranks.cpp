// DistributedDataParallelTable and ProcessGroup, run by tests/distributed/distributed_test.sh in 2 and 3
// processes under mpirun: every rank runs every test case, the collectives pairing up. Rank r
// seeds its model with r, so that only the construction's broadcast makes the ranks agree.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cunn/cunn.h"
#include "nn/distributed/DistributedDataParallelTable.h"
#include "nn/distributed/ProcessGroup.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/Skip.h"

using nn::Tensor;

namespace {

nn::ProcessGroup& world() {
  static const std::shared_ptr<nn::ProcessGroup> group = nn::ProcessGroup::world();
  return *group;
}

std::shared_ptr<nn::Sequential> mlp(uint64_t seed, int64_t hidden = 8) {
  nn::manualSeed(seed);
  return std::make_shared<nn::Sequential>(
      std::vector<nn::ModulePtr>{nn::make<nn::Linear>(6, hidden), nn::make<nn::Tanh>(), nn::make<nn::Linear>(hidden, 3),
                                 nn::make<nn::LogSoftMax>()});
}

// 23 samples of 6 features and 3 classes: batches of 4 per rank leave an uneven last one.
struct Data {
  Data() : inputs(Tensor::empty({23, 6})), targets(Tensor::empty({23})) {
    nn::Generator g(3);
    inputs.uniform_(g, -1, 1);
    for (int64_t i = 0; i < 23; ++i) targets.data()[i] = static_cast<float>(i % 3);
  }
  Tensor inputs, targets;
};

// Trains `model` (on `device`) for 2 epochs with SGD on `batches`; returns its flat parameters.
std::vector<float> train(nn::Module& model, nn::BatchIterator& batches, const nn::Device& device = nn::Device()) {
  nn::ClassNLLCriterion criterion;
  nn::SgdOptions options;
  options.learningRate = 0.1f;
  options.momentum = 0.9f;
  nn::SGD sgd(model.getParameters(), options);
  for (int epoch = 0; epoch < 2; ++epoch)
    while (batches.next()) {
      model.zeroGradParameters();
      const Tensor x = batches.input.to(device), y = batches.target.to(device);
      const Tensor& out = model.forward(x);
      criterion.forward(out, y);
      model.backward(x, criterion.backward(out, y));
      sgd.step();
    }
  return model.getParameters().first.toVector();
}

// The bytes of `values`, to compare the ranks' floats exactly through allGather.
std::string bytesOf(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

double maxDifference(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double most = 0;
  for (size_t i = 0; i < a.size(); ++i) most = std::max(most, static_cast<double>(std::abs(a[i] - b[i])));
  return most;
}

nn::BatchOptions shardOptions() {
  nn::BatchOptions options{true, false, 11};
  options.shard = world().rank();
  options.shards = world().size();
  return options;
}

}  // namespace

TEST_CASE("every rank ends with the parameters of one process trained on the global batch", "[distributed]") {
  REQUIRE(world().size() >= 2);
  const Data data;
  // One process on the global batch, on every rank alike, from rank 0's initial parameters.
  auto single = mlp(0);
  nn::BatchIterator global(data.inputs, data.targets, 4 * world().size(), nn::BatchOptions{true, false, 11});
  const std::vector<float> expected = train(*single, global);

  SECTION("around a plain module") {
    auto model = std::make_shared<nn::DistributedDataParallelTable>(mlp(world().rank()), nn::ProcessGroup::world());
    nn::BatchIterator shard(data.inputs, data.targets, 4, shardOptions());
    const std::vector<float> trained = train(*model, shard);
    CHECK(maxDifference(trained, expected) < 2e-6);
    for (const std::string& other : world().allGather(bytesOf(trained))) CHECK(other == bytesOf(trained));
  }
  SECTION("around a plain module, in buckets of 10 gradients that start during backward") {
    nn::DistributedDataParallelTable::Options options;
    options.bucketMegabytes = 10.0 * sizeof(float) / (1 << 20);
    auto model =
        std::make_shared<nn::DistributedDataParallelTable>(mlp(world().rank()), nn::ProcessGroup::world(), options);
    nn::BatchIterator shard(data.inputs, data.targets, 4, shardOptions());
    const std::vector<float> trained = train(*model, shard);
    CHECK(maxDifference(trained, expected) < 2e-6);
    for (const std::string& other : world().allGather(bytesOf(trained))) CHECK(other == bytesOf(trained));
  }
  SECTION("around a DataParallelTable on cpu:0 and cpu:1 (hybrid)") {
    auto table = std::make_shared<nn::DataParallelTable>(0, true, false);
    table->add(mlp(world().rank()), {nn::Device::cpu(0), nn::Device::cpu(1)});
    auto model = std::make_shared<nn::DistributedDataParallelTable>(table, nn::ProcessGroup::world());
    nn::BatchIterator shard(data.inputs, data.targets, 4, shardOptions());
    const std::vector<float> trained = train(*model, shard);
    CHECK(maxDifference(trained, expected) < 2e-6);
    for (const std::string& other : world().allGather(bytesOf(trained))) CHECK(other == bytesOf(trained));
  }
  SECTION("the gradients sent as bfloat16: the same parameters on every rank, near the float32 run's") {
    nn::DistributedDataParallelTable::Options options;
    options.reduceType = nn::DType::BFloat16;
    auto model =
        std::make_shared<nn::DistributedDataParallelTable>(mlp(world().rank()), nn::ProcessGroup::world(), options);
    nn::BatchIterator shard(data.inputs, data.targets, 4, shardOptions());
    const std::vector<float> trained = train(*model, shard);
    // Each gradient rounded to bfloat16's 8 bits once or more a step, over 12 steps of SGD.
    const double difference = maxDifference(trained, expected);
    CHECK(difference < 2e-2);
    CHECK(difference > 2e-6);  // the floats show the rounding: the bfloat16 route ran
    for (const std::string& other : world().allGather(bytesOf(trained))) CHECK(other == bytesOf(trained));
  }
  SECTION("summed instead of averaged: the gradient of the global batch times the ranks' count") {
    nn::DistributedDataParallelTable::Options options;
    options.average = false;
    auto model =
        std::make_shared<nn::DistributedDataParallelTable>(mlp(world().rank()), nn::ProcessGroup::world(), options);
    nn::Generator g(5);
    const Tensor x = Tensor::rand({4, 6}, g);  // the same batch on every rank
    const Tensor y = Tensor::fromVector({4}, {0, 1, 2, 0});
    nn::ClassNLLCriterion criterion;
    model->zeroGradParameters();
    criterion.forward(model->forward(x), y);
    model->backward(x, criterion.backward(model->output, y));
    auto plain = mlp(0);
    plain->zeroGradParameters();
    criterion.forward(plain->forward(x), y);
    plain->backward(x, criterion.backward(plain->output, y));
    Tensor expectedSum = plain->getParameters().second.clone();
    expectedSum.mul_(static_cast<float>(world().size()));
    CHECK(maxDifference(model->getParameters().second.toVector(), expectedSum.toVector()) < 1e-6);
  }
}

TEST_CASE("synchronised batch normalisation over the ranks trains as one process on the global batch",
          "[distributed]") {
  REQUIRE(world().size() >= 2);
  const Data data;
  const auto bnNet = [](uint64_t seed, bool sync) {
    nn::manualSeed(seed);
    auto net = std::make_shared<nn::Sequential>(std::vector<nn::ModulePtr>{
        nn::make<nn::Linear>(6, 8), nn::make<nn::BatchNormalization>(8), nn::make<nn::Tanh>(),
        nn::make<nn::Linear>(8, 3), nn::make<nn::LogSoftMax>()});
    nn::setSyncBatchNorm(*net, sync);
    return net;
  };
  // Batch normalisation of the global batch, on every rank alike, from rank 0's parameters.
  auto single = bnNet(0, false);
  nn::BatchIterator global(data.inputs, data.targets, 4 * world().size(), nn::BatchOptions{true, false, 11});
  const std::vector<float> expected = train(*single, global);
  std::vector<float> runningExpected;
  for (const Tensor& b : single->buffers())
    for (float v : b.toVector()) runningExpected.push_back(v);
  const auto running = [](nn::Module& m) {
    std::vector<float> values;
    for (const Tensor& b : m.buffers())
      for (float v : b.toVector()) values.push_back(v);
    return values;
  };

  SECTION("around a plain module") {
    auto model = std::make_shared<nn::DistributedDataParallelTable>(bnNet(world().rank(), true),
                                                                    nn::ProcessGroup::world());
    nn::BatchIterator shard(data.inputs, data.targets, 4, shardOptions());
    const std::vector<float> trained = train(*model, shard);
    CHECK(maxDifference(trained, expected) < 2e-6);
    CHECK(maxDifference(running(*model), runningExpected) < 2e-6);
    for (const std::string& other : world().allGather(bytesOf(trained))) CHECK(other == bytesOf(trained));
  }
  SECTION("around a DataParallelTable on cpu:0 and cpu:1: the replicas, then the ranks") {
    auto table = std::make_shared<nn::DataParallelTable>(0, true, false);
    table->add(bnNet(world().rank(), true), {nn::Device::cpu(0), nn::Device::cpu(1)});
    auto model = std::make_shared<nn::DistributedDataParallelTable>(table, nn::ProcessGroup::world());
    nn::BatchIterator shard(data.inputs, data.targets, 4, shardOptions());
    const std::vector<float> trained = train(*model, shard);
    CHECK(maxDifference(trained, expected) < 2e-6);
    CHECK(maxDifference(running(*model), runningExpected) < 2e-6);
  }
  SECTION("without sync, each rank's own statistics: another training") {
    auto model = std::make_shared<nn::DistributedDataParallelTable>(bnNet(world().rank(), false),
                                                                    nn::ProcessGroup::world());
    nn::BatchIterator shard(data.inputs, data.targets, 4, shardOptions());
    CHECK(maxDifference(train(*model, shard), expected) > 1e-3);
  }
}

// On CUDA devices the sums run on NCCL, whose communicator is set up over MPI.
NN_DEVICE_TEST_CASE("each rank on a device of its own trains as one process on the global batch", "[distributed]") {
  if (kind.available() < world().size()) NN_SKIP("needs a " << kind.name() << " device for each rank");
  const nn::Device device = kind.device(world().rank());
  const Data data;
  auto single = mlp(0);
  nn::BatchIterator global(data.inputs, data.targets, 4 * world().size(), nn::BatchOptions{true, false, 11});
  const std::vector<float> expected = train(*single, global);
  nn::DistributedDataParallelTable::Options options;
  options.bucketMegabytes = 10.0 * sizeof(float) / (1 << 20);
  auto net = mlp(world().rank());
  net->to(device);
  auto model = std::make_shared<nn::DistributedDataParallelTable>(net, nn::ProcessGroup::world(), options);
  nn::BatchIterator shard(data.inputs, data.targets, 4, shardOptions());
  const std::vector<float> trained = train(*model, shard, device);
  // CUDA: sums and the tanh in other orders and forms than the CPU's.
  CHECK(maxDifference(trained, expected) < 2e-6 + kind.tolerance(1e-4));
  for (const std::string& other : world().allGather(bytesOf(trained))) CHECK(other == bytesOf(trained));
}

NN_DEVICE_TEST_CASE("buffers: rank 0's at construction, and averaged after backward where asked", "[distributed]") {
  if (kind.available() < world().size()) NN_SKIP("needs a " << kind.name() << " device for each rank");
  const nn::Device device = kind.device(world().rank());
  auto net = [&] {
    auto made = std::make_shared<nn::Sequential>(
        std::vector<nn::ModulePtr>{nn::make<nn::Linear>(6, 4), nn::make<nn::BatchNormalization>(4)});
    made->to(device);
    return made;
  };
  auto first = net();
  first->buffers()[0].fill_(static_cast<float>(world().rank() + 1));  // running mean: rank + 1
  nn::DistributedDataParallelTable broadcast(first, nn::ProcessGroup::world());
  CHECK(first->buffers()[0].toVector() == std::vector<float>(4, 1.f));

  nn::DistributedDataParallelTable::Options options;
  options.buffers = nn::BufferPolicy::Average;
  auto second = net();
  nn::DistributedDataParallelTable averaged(second, nn::ProcessGroup::world(), options);
  nn::Generator g(static_cast<uint64_t>(world().rank()));
  const Tensor x = Tensor::rand({5, 6}, g).to(device);  // each rank its own batch
  averaged.forward(x);
  const std::vector<float> local = second->buffers()[0].toVector();
  averaged.backward(x, Tensor::zeros({5, 4}, device));
  // The average of every rank's running mean after its own forward.
  std::vector<double> mean(4, 0);
  for (const std::string& bytes : world().allGather(bytesOf(local)))
    for (size_t i = 0; i < 4; ++i) mean[i] += reinterpret_cast<const float*>(bytes.data())[i] / world().size();
  const std::vector<float> after = second->buffers()[0].toVector();
  for (size_t i = 0; i < 4; ++i) CHECK(after[i] == Approx(mean[i]).margin(1e-6));
}

TEST_CASE("a model that differs between ranks is refused on every rank", "[distributed]") {
  // Rank 1's hidden layer is wider.
  auto model = mlp(0, world().rank() == 1 ? 9 : 8);
  REQUIRE_THROWS_WITH(nn::DistributedDataParallelTable(model, nn::ProcessGroup::world()),
                      Catch::Contains("nn.DistributedDataParallelTable: rank 1's model differs from rank 0's") &&
                          Catch::Contains("nn.Linear(6 -> 9)"));
}

TEST_CASE("a rank a training step ahead is an nn::Error, not a wrong sum", "[distributed]") {
  auto model = std::make_shared<nn::DistributedDataParallelTable>(mlp(0), nn::ProcessGroup::world());
  const Tensor x = Tensor::zeros({2, 6});
  nn::ClassNLLCriterion criterion;
  const Tensor y = Tensor::fromVector({2}, {0, 1});
  if (world().rank() == 1) model->forward(x);  // a forward without backward: one step ahead
  model->forward(x);
  criterion.forward(model->output, y);
  REQUIRE_THROWS_WITH(model->backward(x, criterion.backward(model->output, y)),
                      Catch::Contains("is at training step") && Catch::Contains("every rank must call forward"));
}

TEST_CASE("an empty batch on every rank is an nn::Error on every rank, and the parameters stay finite",
          "[distributed]") {
  auto model = std::make_shared<nn::DistributedDataParallelTable>(mlp(0), nn::ProcessGroup::world());
  nn::SGD sgd(model->getParameters(), nn::SgdOptions());
  const std::vector<float> before = model->getParameters().first.toVector();
  // 0 / 0 in the ranks' shares wrote NaN into every gradient, and the step into the parameters.
  const Tensor none = Tensor::zeros({0, 6});
  model->zeroGradParameters();
  model->forward(none);
  REQUIRE_THROWS_WITH(model->backward(none, Tensor::zeros({0, 3})),
                      Catch::Contains("nn.DistributedDataParallelTable: the batch of every rank is empty") &&
                          Catch::Contains("over " + std::to_string(world().size()) + " ranks"));
  sgd.step();
  CHECK(model->getParameters().first.toVector() == before);
  // The ranks are still at one step: the next, where one rank has samples, goes on.
  const Tensor some = Tensor::zeros({world().rank() == 0 ? 2 : 0, 6});
  model->zeroGradParameters();
  model->forward(some);
  model->backward(some, Tensor::full({some.size(0), 3}, 0.5f));
  for (float g : model->getParameters().second.toVector()) CHECK(std::isfinite(g));
}

TEST_CASE("ProcessGroup: a sum sent as bfloat16 is summed in float32, rounded alike on every rank", "[distributed]") {
  nn::ProcessGroup& group = world();
  const auto n = static_cast<float>(group.size());
  const auto r = static_cast<float>(group.rank());
  const float ranks = n * (n - 1) / 2;  // 0 + 1 + ... + (n - 1)
  // Values whose sums bfloat16 holds: the float32 sums exactly.
  Tensor exact = Tensor::fromVector({4}, {r, 1, -2 * r, 0.5f});
  group.startAllReduceSumBfloat16(exact);
  group.wait();
  CHECK(exact.toVector() == std::vector<float>{ranks, n, -2 * ranks, 0.5f * n});
  // 1 + 2^-10 on every rank, in a chunk for each: bfloat16's 8 bits of mantissa make it 1, and
  // the sum n, where float32's would be n + n 2^-10.
  Tensor rounded = Tensor::full({1001}, 1.f + 1.f / 1024);
  group.allReduceSum(rounded);
  CHECK(rounded.toVector()[0] == n + n / 1024);  // float32's
  rounded.fill_(1.f + 1.f / 1024);
  group.startAllReduceSumBfloat16(rounded);
  group.wait();
  CHECK(rounded.toVector() == std::vector<float>(1001, n));
  // Other values: within bfloat16's rounding of the float32 sum at each of the n - 1 additions
  // and at the end, the same bits on every rank.
  nn::Generator g(static_cast<uint64_t>(group.rank()) + 7);
  Tensor values = Tensor::empty({5003});
  values.uniform_(g, -1, 1);
  std::vector<float> absolute = values.toVector();
  for (float& v : absolute) v = std::abs(v);
  Tensor sum32 = values.clone(), magnitude = Tensor::fromVector({5003}, absolute);
  group.allReduceSum(sum32);
  group.allReduceSum(magnitude);
  group.startAllReduceSumBfloat16(values);
  group.wait();
  const std::vector<float> got = values.toVector(), want = sum32.toVector(), size = magnitude.toVector();
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(got[i]) - want[i]) / (size[i] * n * std::ldexp(1.0, -8)));
  CHECK(worst <= 1);
  for (const std::string& other : group.allGather(bytesOf(got))) CHECK(other == bytesOf(got));
}

// On CUDA devices the sums and the broadcast run on NCCL.
NN_DEVICE_TEST_CASE("ProcessGroup: sums, broadcasts and gathers over the ranks", "[distributed]") {
  if (kind.available() < world().size()) NN_SKIP("needs a " << kind.name() << " device for each rank");
  const nn::Device device = kind.device(world().rank());
  nn::ProcessGroup& group = world();
  const auto r = static_cast<float>(group.rank());
  Tensor t = Tensor::fromVector({3}, {r, 1, 2 * r}).to(device);
  group.allReduceSum(t);
  const auto n = static_cast<float>(group.size());
  const float ranks = n * (n - 1) / 2;  // 0 + 1 + ... + (n - 1)
  CHECK(t.toVector() == std::vector<float>{ranks, n, 2 * ranks});
  Tensor b = Tensor::full({2}, r).to(device);
  group.broadcast(b, static_cast<int>(n) - 1);  // from the last rank, not rank 0
  CHECK(b.toVector() == std::vector<float>{n - 1, n - 1});
  const std::vector<std::string> texts = group.allGather(std::string(static_cast<size_t>(group.rank()), 'x'));
  REQUIRE(texts.size() == static_cast<size_t>(group.size()));
  for (size_t i = 0; i < texts.size(); ++i) CHECK(texts[i] == std::string(i, 'x'));
  group.barrier();
  // Several sums started before one wait, as the buckets of a backward.
  std::vector<Tensor> parts;
  for (int i = 0; i < 4; ++i) parts.push_back(Tensor::full({i + 1}, r + static_cast<float>(i)).to(device));
  for (Tensor& part : parts) group.startAllReduceSum(part);
  group.progress();
  group.wait();
  for (int i = 0; i < 4; ++i)
    CHECK(parts[static_cast<size_t>(i)].toVector() ==
          std::vector<float>(static_cast<size_t>(i + 1), ranks + n * static_cast<float>(i)));
  Tensor strided = Tensor::zeros({4, 4}, device).transpose(0, 1);
  CHECK_THROWS_WITH(group.allReduceSum(strided),
                    Catch::Contains("nn.ProcessGroup.allReduceSum: expected a contiguous tensor"));
}
